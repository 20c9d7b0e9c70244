/* The stalled-level rule (engine/stall.c): a level full with waiters and no
 * close for several typical lifetimes is stalled; the typical lifetime is
 * the served connections' geometric mean; without one, no verdict. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/stall.h"

#define MS 1000000ull
#define SEC 1000000000ull

static void test_no_lifetime_no_verdict(void **state)
{
	struct sl_stall s;

	(void)state;
	sl_stall_init(&s, 0);
	sl_stall_observe(&s, 0, true);
	assert_int_equal(sl_stall_after_ns(&s), 0);
	assert_false(sl_stall_due(&s, 100 * SEC));
	/* a close that never established is progress, not a lifetime */
	sl_stall_closed(&s, 100 * SEC, false, 1 * MS);
	assert_int_equal(sl_stall_after_ns(&s), 0);
}

/* pgbench's case: 5 ms connections, then every seat held by clients
 * blocked on a connect: stalled after 4 lifetimes (50 ms at least). */
static void test_short_lifetimes(void **state)
{
	struct sl_stall s;
	uint64_t now = 0;

	(void)state;
	sl_stall_init(&s, now);
	for (int i = 0; i < 100; i++) {
		now += MS;
		sl_stall_closed(&s, now, true, 5 * MS);
	}
	assert_int_equal(sl_stall_after_ns(&s), 50 * MS); /* 4 x 5 ms is under the floor */
	/* busy, not blocked: no verdict however long */
	assert_false(sl_stall_due(&s, now + SEC));
	/* blocked at t: a close long before does not count against it */
	now += SEC;
	sl_stall_observe(&s, now, true);
	assert_false(sl_stall_due(&s, now + 49 * MS));
	/* a close resets the clock */
	sl_stall_closed(&s, now + 40 * MS, true, 5 * MS);
	assert_false(sl_stall_due(&s, now + 80 * MS));
	assert_true(sl_stall_due(&s, now + 90 * MS));
	/* the verdict restarts the clock */
	assert_false(sl_stall_due(&s, now + 100 * MS));
	assert_true(sl_stall_due(&s, now + 140 * MS));
	/* no longer blocked: no verdict */
	sl_stall_observe(&s, now + 150 * MS, false);
	assert_false(sl_stall_due(&s, now + 10 * SEC));
}

/* Long connections (2 s): a full level with no close for 5 s is busy, not
 * stalled; for 8 s it is.  One very long connection among short ones barely
 * moves the typical lifetime (a geometric mean). */
static void test_long_lifetimes_and_outliers(void **state)
{
	struct sl_stall s;
	uint64_t now = 0, after;

	(void)state;
	sl_stall_init(&s, now);
	for (int i = 0; i < 64; i++)
		sl_stall_closed(&s, now += MS, true, 2 * SEC);
	after = sl_stall_after_ns(&s);
	assert_true(after > 7 * SEC && after < 9 * SEC);
	sl_stall_observe(&s, now, true);
	assert_false(sl_stall_due(&s, now + 5 * SEC));
	assert_true(sl_stall_due(&s, now + 9 * SEC));

	sl_stall_init(&s, 0);
	for (int i = 0; i < 64; i++)
		sl_stall_closed(&s, (uint64_t)i * MS, true, 20 * MS);
	sl_stall_closed(&s, 65 * MS, true, 3600 * SEC); /* one connection of an hour */
	after = sl_stall_after_ns(&s);
	assert_true(after < 300 * MS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_lifetime_no_verdict),
		cmocka_unit_test(test_short_lifetimes),
		cmocka_unit_test(test_long_lifetimes_and_outliers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
