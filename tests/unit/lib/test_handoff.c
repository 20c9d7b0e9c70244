// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Hand-off frames (lib/handoff.h): a wrapped frame carries the hand-off
 * EtherType and a trailer with the frame's own EtherType, direction and
 * cookie; unwrapping gives back the frame byte for byte, and refuses a
 * frame of another direction, another cookie, or none at all.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "frames.h"
#include "lib/handoff.h"

static size_t a_syn(uint8_t *f, int family)
{
	struct fr_spec sp;

	fr_default_v4_syn(&sp);
	if (family == 6)
		fr_default_v6_syn(&sp);
	return fr_build(&sp, f, NULL);
}

static void test_round_trip(void **state)
{
	(void)state;
	for (int family = 4; family <= 6; family += 2) {
		uint8_t f[FR_MAX_LEN], w[FR_MAX_LEN + 16];
		size_t len = a_syn(f, family);
		int n = sl_handoff_wrap(f, len, 0xdeadbeef, SLUICE_HANDOFF_IN, w, sizeof(w));
		struct sluice_handoff_trailer t;

		assert_int_equal(n, (int)(len + SLUICE_HANDOFF_TRAILER));
		assert_int_equal(sizeof(t), SLUICE_HANDOFF_TRAILER);
		assert_int_equal(w[12], SLUICE_ETH_P_HANDOFF >> 8);
		assert_int_equal(w[13], SLUICE_ETH_P_HANDOFF & 0xff);
		memcpy(&t, w + len, sizeof(t));
		assert_int_equal(t.cookie, 0xdeadbeef);
		assert_int_equal(t.dir, SLUICE_HANDOFF_IN);
		assert_int_equal(t.magic, SLUICE_HANDOFF_MAGIC);
		assert_memory_equal(&t.proto, f + 12, 2);
		assert_memory_equal(w + 14, f + 14, len - 14); /* the rest untouched */
		assert_int_equal(sl_handoff_unwrap(w, (size_t)n, 0xdeadbeef, SLUICE_HANDOFF_IN), (int)len);
		assert_memory_equal(w, f, len);
	}
}

/* In place, as inject.c may call it. */
static void test_wrap_in_place(void **state)
{
	uint8_t f[FR_MAX_LEN + 16], orig[FR_MAX_LEN];
	size_t len = a_syn(orig, 4);

	(void)state;
	memcpy(f, orig, len);
	assert_int_equal(sl_handoff_wrap(f, len, 7, SLUICE_HANDOFF_OUT, f, sizeof(f)),
			 (int)(len + SLUICE_HANDOFF_TRAILER));
	assert_int_equal(sl_handoff_unwrap(f, len + SLUICE_HANDOFF_TRAILER, 7, SLUICE_HANDOFF_OUT),
			 (int)len);
	assert_memory_equal(f, orig, len);
}

static void test_refusals(void **state)
{
	uint8_t f[FR_MAX_LEN], w[FR_MAX_LEN + 16];
	size_t len = a_syn(f, 4);
	int n;

	(void)state;
	assert_int_equal(sl_handoff_wrap(f, 13, 1, SLUICE_HANDOFF_IN, w, sizeof(w)), -EINVAL);
	assert_int_equal(sl_handoff_wrap(f, len, 1, 3, w, sizeof(w)), -EINVAL);
	assert_int_equal(sl_handoff_wrap(f, len, 1, SLUICE_HANDOFF_IN, w, len + 7), -ENOSPC);
	n = sl_handoff_wrap(f, len, 1, SLUICE_HANDOFF_IN, w, sizeof(w));
	assert_int_equal(sl_handoff_unwrap(w, (size_t)n, 2, SLUICE_HANDOFF_IN), -EINVAL);
	assert_int_equal(sl_handoff_unwrap(w, (size_t)n, 1, SLUICE_HANDOFF_OUT), -EINVAL);
	/* A plain frame is no hand-off frame, even where its tail looks like one. */
	assert_int_equal(sl_handoff_unwrap(f, len, 1, SLUICE_HANDOFF_IN), -EINVAL);
	assert_int_equal(sl_handoff_unwrap(w, 20, 1, SLUICE_HANDOFF_IN), -EINVAL);
	w[n - 1] ^= 0xff; /* its magic */
	assert_int_equal(sl_handoff_unwrap(w, (size_t)n, 1, SLUICE_HANDOFF_IN), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_wrap_in_place),
		cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
