// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Half-open connections: the measured time-out and where a level seats. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine/halfopen.h"

#define MS 1000000ull
#define S  1000000000ull

/* Add n handshakes of `us` microseconds to a cumulative histogram the way
 * sock_ops buckets them (floor(log2(us))), computed here by counting. */
static void add(uint64_t cum[SLUICE_HS_BUCKETS], uint64_t us, uint64_t n)
{
	unsigned b = 0;

	while (b + 1 < SLUICE_HS_BUCKETS && (us >> (b + 1)))
		b++;
	cum[b] += n;
}

static void test_p99_from_window(void **state)
{
	static struct sl_hs_meter m;
	uint64_t cum[SLUICE_HS_BUCKETS] = {0}, samples, p99;

	(void)state;
	memset(&m, 0, sizeof(m));
	sl_hs_meter_push(&m, cum);
	assert_int_equal(sl_hs_meter_p99_ns(&m, &samples), 0); /* one snapshot: no window */

	/* 19 handshakes: too few to measure. */
	add(cum, 300, 19);
	sl_hs_meter_push(&m, cum);
	assert_int_equal(sl_hs_meter_p99_ns(&m, &samples), 0);
	assert_int_equal(samples, 19);

	/* 990 at 300 us and 10 at 40 ms: 99 % are done within 300 us's bucket
	 * [256, 512) us, so the p99 is its upper bound. */
	add(cum, 300, 990 - 19);
	add(cum, 40000, 10);
	sl_hs_meter_push(&m, cum);
	p99 = sl_hs_meter_p99_ns(&m, &samples);
	assert_int_equal(samples, 1000);
	assert_int_equal(p99, 512 * 1000ull);

	/* One more slow one tips 99 % into the slow bucket [32768, 65536) us. */
	add(cum, 40000, 1);
	sl_hs_meter_push(&m, cum);
	assert_int_equal(sl_hs_meter_p99_ns(&m, &samples), 65536 * 1000ull);

	/* The window forgets: after SL_HS_WINDOW quiet steps nothing is left. */
	for (int i = 0; i < SL_HS_WINDOW; i++)
		sl_hs_meter_push(&m, cum);
	assert_int_equal(sl_hs_meter_p99_ns(&m, &samples), 0);
	assert_int_equal(samples, 0);

	/* Counters that went back (maps recreated) count from zero. */
	memset(cum, 0, sizeof(cum));
	add(cum, 1, 25);
	sl_hs_meter_push(&m, cum);
	assert_int_equal(sl_hs_meter_p99_ns(&m, &samples), 2 * 1000ull);
	assert_int_equal(samples, 25);
}

static void test_timeout_clamped(void **state)
{
	(void)state;
	assert_int_equal(sl_halfopen_timeout_ns(0, 200 * MS, 10 * S), 10 * S);
	assert_int_equal(sl_halfopen_timeout_ns(1 * MS, 200 * MS, 10 * S), 200 * MS);
	assert_int_equal(sl_halfopen_timeout_ns(100 * MS, 200 * MS, 10 * S), 400 * MS);
	assert_int_equal(sl_halfopen_timeout_ns(3 * S, 200 * MS, 10 * S), 10 * S);
	/* No overflow for an absurd p99. */
	assert_int_equal(sl_halfopen_timeout_ns(UINT64_MAX / 2, 200 * MS, 10 * S), 10 * S);
	/* A floor above the ceiling: the ceiling wins (handshakeTimeout). */
	assert_int_equal(sl_halfopen_timeout_ns(1 * MS, 20 * S, 10 * S), 10 * S);
}

static uint32_t step(struct sl_seat_mode *s, const struct sl_seat_policy *p, uint64_t t,
		     struct sl_seat_counters *c, uint64_t expired, uint64_t unseated, uint64_t proved)
{
	c->expired += expired;
	c->unseated += unseated;
	c->proved += proved;
	return sl_seat_mode_step(s, p, t, c);
}

static void test_auto_engages_and_returns(void **state)
{
	struct sl_seat_policy p = {.seat_at = SL_SEAT_AT_AUTO, .engage_after = 4, .hold_ns = 30 * S};
	struct sl_seat_mode s;
	struct sl_seat_counters c = {.expired = 100, .unseated = 50, .proved = 50}; /* history */
	const uint32_t both = SLUICE_LVL_SEAT_AT_ACK | SLUICE_LVL_ACK_WATCH;
	uint64_t t = 1000 * S;

	(void)state;
	memset(&s, 0, sizeof(s));
	/* The first reading only primes: old expiries are not pressure. */
	assert_int_equal(step(&s, &p, t, &c, 0, 0, 0), 0);
	/* Three expiries in the window: below engage_after. */
	assert_int_equal(step(&s, &p, t += S, &c, 2, 0, 0), 0);
	assert_int_equal(step(&s, &p, t += S, &c, 1, 0, 0), 0);
	assert_int_equal(sl_seat_mode_pressure(&s), 3);
	/* The fourth: seats move to the ACK. */
	assert_int_equal(step(&s, &p, t += S, &c, 1, 0, 0), both);
	assert_int_equal(s.engaged, 1);
	/* At the ACK, unseated SYNs no ACK proved keep the pressure up;
	 * handshakes that finish (unseated = proved) add none. */
	for (int i = 0; i < 100; i++)
		assert_int_equal(step(&s, &p, t += S, &c, 0, 50, 49), both);
	assert_int_equal(sl_seat_mode_pressure(&s), 10);
	/* The flood stops: the window empties, then the hold runs out, 30 s
	 * after the last step that saw pressure. */
	for (int i = 0; i < 10; i++)
		assert_int_equal(step(&s, &p, t += S, &c, 0, 20, 20), both);
	assert_int_equal(sl_seat_mode_pressure(&s), 0);
	while (step(&s, &p, t += S, &c, 0, 20, 20) == both)
		;
	/* Back at the SYN, ACKs still watched for the grace. */
	assert_int_equal(s.hold_until_ns <= t, 1);
	assert_int_equal(sl_seat_mode_step(&s, &p, t + SL_WATCH_GRACE_NS - 1, &c), SLUICE_LVL_ACK_WATCH);
	assert_int_equal(sl_seat_mode_step(&s, &p, t + SL_WATCH_GRACE_NS, &c), 0);
	assert_int_equal(s.engaged, 1);
	/* More proofs than unseated SYNs (a deferred ACK's duplicates) make
	 * no negative pressure. */
	assert_int_equal(step(&s, &p, t + SL_WATCH_GRACE_NS + S, &c, 0, 0, 40), 0);
	assert_int_equal(sl_seat_mode_pressure(&s), 0);
}

static void test_fixed_modes(void **state)
{
	struct sl_seat_policy syn = {.seat_at = SL_SEAT_AT_SYN, .engage_after = 1, .hold_ns = S};
	struct sl_seat_policy ack = {.seat_at = SL_SEAT_AT_ACK, .engage_after = 1, .hold_ns = S};
	struct sl_seat_policy off = {.seat_at = SL_SEAT_AT_AUTO, .engage_after = 0, .hold_ns = S};
	struct sl_seat_counters c = {0};
	struct sl_seat_mode s;

	(void)state;
	memset(&s, 0, sizeof(s));
	step(&s, &syn, S, &c, 0, 0, 0);
	assert_int_equal(step(&s, &syn, 2 * S, &c, 1000, 0, 0), 0);
	memset(&s, 0, sizeof(s));
	assert_int_equal(step(&s, &ack, S, &c, 0, 0, 0), SLUICE_LVL_SEAT_AT_ACK | SLUICE_LVL_ACK_WATCH);
	/* engage_after 0 in auto never engages (0 would mean "always"). */
	memset(&s, 0, sizeof(s));
	step(&s, &off, S, &c, 0, 0, 0);
	assert_int_equal(step(&s, &off, 2 * S, &c, 1000, 0, 0), 0);
	/* Counters that went back (slot reused, maps recreated) are a fresh
	 * start, not a wrap. */
	{
		struct sl_seat_policy p = {.seat_at = SL_SEAT_AT_AUTO, .engage_after = 5, .hold_ns = S};
		struct sl_seat_counters big = {.expired = 1000000}, small = {.expired = 2};

		memset(&s, 0, sizeof(s));
		sl_seat_mode_step(&s, &p, S, &big);
		assert_int_equal(sl_seat_mode_step(&s, &p, 2 * S, &small), 0);
		assert_int_equal(sl_seat_mode_pressure(&s), 2);
	}
}

/* Half-open seats older than minTimeout count while they linger: a level
 * moves to the ACK before any of them times out. */
static void test_lingering_engages(void **state)
{
	struct sl_seat_policy p = {.seat_at = SL_SEAT_AT_AUTO, .engage_after = 4, .hold_ns = 30 * S};
	struct sl_seat_counters c = {0};
	struct sl_seat_mode s;

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(sl_seat_mode_step(&s, &p, S, &c), 0);
	c.lingering = 3;
	assert_int_equal(sl_seat_mode_step(&s, &p, 2 * S, &c), 0);
	c.lingering = 4;
	assert_int_equal(sl_seat_mode_step(&s, &p, 3 * S, &c),
			 SLUICE_LVL_SEAT_AT_ACK | SLUICE_LVL_ACK_WATCH);
	/* A gauge, not a count: the same four next second add nothing to the
	 * window, and when they expire they count once, as expiries. */
	c.lingering = 0;
	c.expired = 4;
	sl_seat_mode_step(&s, &p, 4 * S, &c);
	assert_int_equal(sl_seat_mode_pressure(&s), 4);
}

/* step n seconds of the same per-second deltas; returns the last change. */
static enum sl_sight_change sight_run(struct sl_sight *s, struct sl_sight_counters *c, int n,
				      uint64_t est, uint64_t exp, uint64_t proved)
{
	enum sl_sight_change r = SL_SIGHT_SAME;

	for (int i = 0; i < n; i++) {
		c->established += est;
		c->expired += exp;
		c->proved += proved;
		r = sl_sight_step(s, c);
		if (r != SL_SIGHT_SAME)
			return r;
	}
	return r;
}

/* Handshakes expire while none is seen established: blind once the window
 * is full, said once; the first connection seen established again ends it. */
static void test_sight_lost_and_regained(void **state)
{
	struct sl_sight s;
	struct sl_sight_counters c = {.established = 500, .expired = 7};

	(void)state;
	memset(&s, 0, sizeof(s));
	/* Not before a whole window: nine seconds of 5 expiries, none seen. */
	assert_int_equal(sight_run(&s, &c, SL_SIGHT_WINDOW, 0, 5, 0), SL_SIGHT_SAME);
	assert_false(s.blind);
	assert_int_equal(sl_sight_step(&s, &c), SL_SIGHT_LOST);
	assert_true(s.blind);
	assert_int_equal(s.window.expired, 45);
	assert_int_equal(s.window.established, 0);
	/* Said once. */
	assert_int_equal(sight_run(&s, &c, 30, 0, 5, 0), SL_SIGHT_SAME);
	assert_true(s.blind);
	assert_int_equal(sight_run(&s, &c, 1, 1, 5, 0), SL_SIGHT_REGAINED);
	assert_false(s.blind);
}

/* Proved final ACKs count as unseen handshakes too; a window with any
 * connection established, or with too few handshakes, is not blind. */
static void test_sight_needs_evidence(void **state)
{
	struct sl_sight s;
	struct sl_sight_counters c = {0};

	(void)state;
	memset(&s, 0, sizeof(s));
	/* Busy and seen: 100 established a second, some expire (a flood beside). */
	assert_int_equal(sight_run(&s, &c, 60, 100, 50, 0), SL_SIGHT_SAME);
	/* Idle: 1 expiry a second is below SL_SIGHT_MIN_UNSEEN in the window. */
	assert_int_equal(sight_run(&s, &c, 60, 0, 1, 0), SL_SIGHT_SAME);
	assert_false(s.blind);
	/* One established connection in a window of 3 proved ACKs a second. */
	c.established++;
	assert_int_equal(sight_run(&s, &c, SL_SIGHT_WINDOW - 1, 0, 0, 3), SL_SIGHT_SAME);
	assert_int_equal(sight_run(&s, &c, 5, 0, 0, 3), SL_SIGHT_LOST);
	assert_int_equal(s.window.established, 0);
	assert_true(s.window.proved >= SL_SIGHT_MIN_UNSEEN);
}

/* Counters that go back (the maps were recreated) start a new window:
 * their drop is neither evidence nor a connection seen. */
static void test_sight_counters_reset(void **state)
{
	struct sl_sight s;
	struct sl_sight_counters c = {.established = 1000, .expired = 1000};

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(sight_run(&s, &c, SL_SIGHT_WINDOW + 1, 0, 5, 0), SL_SIGHT_LOST);
	c = (struct sl_sight_counters){0};
	assert_int_equal(sl_sight_step(&s, &c), SL_SIGHT_SAME);
	assert_true(s.blind);
	assert_int_equal(s.window.expired, 0);
	assert_int_equal(sight_run(&s, &c, 1, 2, 0, 0), SL_SIGHT_REGAINED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_p99_from_window),
		cmocka_unit_test(test_timeout_clamped),
		cmocka_unit_test(test_auto_engages_and_returns),
		cmocka_unit_test(test_fixed_modes),
		cmocka_unit_test(test_lingering_engages),
		cmocka_unit_test(test_sight_lost_and_regained),
		cmocka_unit_test(test_sight_needs_evidence),
		cmocka_unit_test(test_sight_counters_reset),
	};

	return cmocka_run_group_tests_name("halfopen", tests, NULL, NULL);
}
