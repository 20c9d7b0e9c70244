// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The client SYN retransmit model (lib/syn_retransmit.h): the doubling
 * schedule 1, 3, 7, 15 ... s after the first SYN, and its 63 s window. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lib/syn_retransmit.h"

#define S SL_NS_PER_SEC

static void test_schedule(void **state)
{
	const uint64_t t0 = 1000 * S;

	(void)state;
	assert_int_equal(sl_syn_next_retransmit(t0, t0), t0 + 1 * S);
	assert_int_equal(sl_syn_next_retransmit(t0, t0 + S / 2), t0 + 1 * S);
	assert_int_equal(sl_syn_next_retransmit(t0, t0 + 1 * S), t0 + 3 * S); /* due now: the next */
	assert_int_equal(sl_syn_next_retransmit(t0, t0 + 2 * S), t0 + 3 * S);
	assert_int_equal(sl_syn_next_retransmit(t0, t0 + 5 * S), t0 + 7 * S);
	assert_int_equal(sl_syn_next_retransmit(t0, t0 + 40 * S), t0 + 63 * S);
	/* the sixth and last retransmit ends the window */
	assert_int_equal(sl_syn_next_retransmit(t0, t0) - t0 + 2 * S + 4 * S + 8 * S + 16 * S + 32 * S,
			 SL_SYN_RETRY_WINDOW_NS);
	/* past the schedule: a moment later, never in the past */
	assert_true(sl_syn_next_retransmit(t0, t0 + 1000 * S) > t0 + 1000 * S);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_schedule),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
