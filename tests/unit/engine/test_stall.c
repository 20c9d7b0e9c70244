// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The stalled-level rule (engine/stall.c): a level full with waiters and no
 * close for several typical lifetimes is stalled; the typical lifetime is
 * the served connections' geometric mean; without one, no verdict. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/stall.h"

#define MS 1000000ull
#define SEC 1000000000ull

/* A close as the daemon sees it: progress when it hears of it, and (if it
 * was served) its lifetime among the samples the data path counted. */
static void close_one(struct sl_stall *s, uint64_t now, bool served, uint64_t lifetime_ns)
{
	sl_stall_closed(s, now);
	if (served)
		sl_stall_lifetimes(s, 1, log((double)(lifetime_ns ? lifetime_ns : 1)));
}

/* n samples of one mean taken at once move the lifetime as n taken one by
 * one: the tick's batch is the same rule. */
static void test_lifetimes_in_a_batch(void **state)
{
	struct sl_stall one, batch;

	(void)state;
	sl_stall_init(&one, 0);
	sl_stall_init(&batch, 0);
	close_one(&one, 0, true, 100 * MS);
	close_one(&batch, 0, true, 100 * MS);
	for (int i = 0; i < 20; i++)
		close_one(&one, 0, true, 3 * MS);
	sl_stall_lifetimes(&batch, 20, log(3.0 * MS));
	sl_stall_lifetimes(&batch, 0, 99); /* nothing closed: nothing moves */
	assert_true(fabs(one.log_lifetime - batch.log_lifetime) < 1e-9);
	assert_true(one.log_lifetime < log(100.0 * MS) && one.log_lifetime > log(3.0 * MS));
}

static void test_no_lifetime_no_verdict(void **state)
{
	struct sl_stall s;

	(void)state;
	sl_stall_init(&s, 0);
	sl_stall_observe(&s, 0, true, true);
	assert_int_equal(sl_stall_after_ns(&s), 0);
	assert_false(sl_stall_due(&s, 100 * SEC));
	/* a close that never established is progress, not a lifetime */
	close_one(&s, 100 * SEC, false, 1 * MS);
	assert_int_equal(sl_stall_after_ns(&s), 0);
}

/* pgbench's case: 3 ms connections, then every seat held by clients
 * blocked on a connect: stalled after 4 lifetimes (20 ms at least). */
static void test_short_lifetimes(void **state)
{
	struct sl_stall s;
	uint64_t now = 0;

	(void)state;
	sl_stall_init(&s, now);
	for (int i = 0; i < 100; i++) {
		now += MS;
		close_one(&s, now, true, 3 * MS);
	}
	assert_int_equal(sl_stall_after_ns(&s), 20 * MS); /* 4 x 3 ms is under the floor */
	/* busy, not blocked: no verdict however long */
	assert_int_equal(sl_stall_due_ns(&s), UINT64_MAX);
	assert_false(sl_stall_due(&s, now + SEC));
	/* blocked at t: a close long before does not count against it */
	now += SEC;
	sl_stall_observe(&s, now, true, true);
	assert_int_equal(sl_stall_due_ns(&s), now + 20 * MS);
	assert_false(sl_stall_due(&s, now + 19 * MS));
	/* a close resets the clock */
	close_one(&s, now + 15 * MS, true, 3 * MS);
	assert_false(sl_stall_due(&s, now + 34 * MS));
	assert_true(sl_stall_due(&s, now + 35 * MS));
	/* the verdict restarts the clock, and the level stays stalled until
	 * something closes */
	assert_true(sl_stall_stalled(&s));
	assert_false(sl_stall_due(&s, now + 40 * MS));
	assert_true(sl_stall_due(&s, now + 55 * MS));
	close_one(&s, now + 60 * MS, true, 3 * MS);
	assert_false(sl_stall_stalled(&s));
	assert_true(sl_stall_due(&s, now + 80 * MS));
	/* its waiters refused, still full and nothing closed: still stalled
	 * (whoever holds the seats is what was blocked), and no new verdict
	 * without waiters */
	sl_stall_observe(&s, now + 81 * MS, true, false);
	assert_true(sl_stall_stalled(&s));
	assert_int_equal(sl_stall_due_ns(&s), UINT64_MAX);
	assert_false(sl_stall_due(&s, now + 200 * MS));
	/* a waiter again: the clock starts then, not at the verdict */
	sl_stall_observe(&s, now + 300 * MS, true, true);
	assert_false(sl_stall_due(&s, now + 319 * MS));
	assert_true(sl_stall_due(&s, now + 320 * MS));
	sl_stall_observe(&s, now + 330 * MS, false, true); /* not full any more */
	assert_false(sl_stall_stalled(&s));
	/* no longer blocked: no verdict */
	sl_stall_observe(&s, now + 350 * MS, false, false);
	assert_false(sl_stall_stalled(&s));
	assert_false(sl_stall_due(&s, now + 10 * SEC));
}

/* Long connections (2 s): a full level with no close for 5 s is busy, not
 * stalled; for 8 s it is.  One very long connection among short ones barely
 * moves the typical lifetime (a geometric mean). */
/* Seating at the ACK: 100 ms connections whose requests were dropped
 * behind their held ACKs wait on their clients' retransmits (200 ms, then
 * 400 ms more) and close nothing for 600 ms.  Four lifetimes (400 ms)
 * would call that stalled; nobody is deadlocked.  The same level seating
 * at the SYN is judged after four lifetimes, and a level that moves back
 * to the SYN is judged so again. */
static void test_retransmit_gap_is_no_stall(void **state)
{
	struct sl_stall s;
	uint64_t now = 0;

	(void)state;
	for (int at_ack = 0; at_ack <= 1; at_ack++) {
		now = 0;
		sl_stall_init(&s, now);
		sl_stall_set_retransmit_waits(&s, at_ack);
		for (int i = 0; i < 100; i++)
			close_one(&s, now += 12 * MS, true, 100 * MS);
		sl_stall_observe(&s, now, true, true);
		assert_false(sl_stall_due(&s, now + 390 * MS));
		if (!at_ack) {
			assert_true(sl_stall_due(&s, now + 400 * MS));
			continue;
		}
		assert_int_equal(sl_stall_after_ns(&s), SL_STALL_RETRANSMIT_NS);
		assert_false(sl_stall_due(&s, now + 700 * MS));
		close_one(&s, now + 700 * MS, true, 800 * MS); /* the retransmits came */
		assert_false(sl_stall_due(&s, now + 1500 * MS));
		/* nothing for a second: no retransmit is that late twice over */
		assert_true(sl_stall_due(&s, now + 1700 * MS));
		/* stalled: the released clients' next waiters after the noise floor */
		assert_int_equal(sl_stall_after_ns(&s), SL_STALL_MIN_NS);
		/* back at the SYN: four lifetimes again once something closed */
		sl_stall_set_retransmit_waits(&s, false);
		close_one(&s, now + 1800 * MS, true, 100 * MS);
		assert_true(sl_stall_after_ns(&s) < SL_STALL_RETRANSMIT_NS);
	}
}

static void test_long_lifetimes_and_outliers(void **state)
{
	struct sl_stall s;
	uint64_t now = 0, after;

	(void)state;
	sl_stall_init(&s, now);
	for (int i = 0; i < 64; i++)
		close_one(&s, now += MS, true, 2 * SEC);
	after = sl_stall_after_ns(&s);
	assert_true(after > 7 * SEC && after < 9 * SEC);
	sl_stall_observe(&s, now, true, true);
	assert_false(sl_stall_due(&s, now + 5 * SEC));
	assert_true(sl_stall_due(&s, now + 9 * SEC));
	/* still full, nothing closed: the next waiter of the released
	 * client is judged after the floor, not 8 s */
	now += 9 * SEC;
	sl_stall_observe(&s, now, true, false);
	sl_stall_observe(&s, now + 5 * MS, true, true);
	assert_int_equal(sl_stall_after_ns(&s), SL_STALL_MIN_NS);
	assert_false(sl_stall_due(&s, now + 5 * MS + SL_STALL_MIN_NS - 1));
	assert_true(sl_stall_due(&s, now + 5 * MS + SL_STALL_MIN_NS));
	/* a close: busy again, judged by its lifetimes */
	close_one(&s, now + SEC, true, 2 * SEC);
	assert_true(sl_stall_after_ns(&s) > 7 * SEC);

	sl_stall_init(&s, 0);
	for (int i = 0; i < 64; i++)
		close_one(&s, (uint64_t)i * MS, true, 20 * MS);
	close_one(&s, 65 * MS, true, 3600 * SEC); /* one connection of an hour */
	after = sl_stall_after_ns(&s);
	assert_true(after < 300 * MS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_lifetime_no_verdict),
		cmocka_unit_test(test_lifetimes_in_a_batch),
		cmocka_unit_test(test_short_lifetimes),
		cmocka_unit_test(test_retransmit_gap_is_no_stall),
		cmocka_unit_test(test_long_lifetimes_and_outliers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
