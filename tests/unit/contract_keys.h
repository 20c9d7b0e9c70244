/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The control protocol's contract (daemon/control.h), checked on what a
 * writer wrote: one reply object has exactly the keys of its list.
 * For cmocka tests (include after cmocka.h and jansson.h).
 */
#ifndef SLUICE_TEST_CONTRACT_KEYS_H
#define SLUICE_TEST_CONTRACT_KEYS_H

#include <string.h>

/* o has exactly these keys: none missing, none more.  what names o in
 * the failure. */
static inline void assert_contract_keys(json_t *o, const char *const *keys, size_t n, const char *what)
{
	const char *k;
	json_t *v;

	if (!json_is_object(o))
		fail_msg("%s: not a JSON object", what);
	for (size_t i = 0; i < n; i++)
		if (!json_object_get(o, keys[i]))
			fail_msg("%s: the contract's key \"%s\" is not written", what, keys[i]);
	json_object_foreach(o, k, v) {
		size_t i = 0;

		while (i < n && strcmp(keys[i], k))
			i++;
		if (i == n)
			fail_msg("%s: key \"%s\" is written but not in the contract (daemon/control.h)",
				 what, k);
	}
}

#endif
