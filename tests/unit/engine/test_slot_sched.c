// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* engine/slot_sched.c: fair shares by priority over slots, time-outs, the bound. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "engine/slot_sched.h"

struct log {
	uint64_t admitted[256], rejected[256];
	size_t n_admitted, n_rejected, n_shed;
	int slots; /* free slots take() hands out */
};

static void on_admit(void *ctx, uint64_t id, uint64_t now)
{
	struct log *l = ctx;

	(void)now;
	l->admitted[l->n_admitted++ % 256] = id;
}

static void on_reject(void *ctx, uint64_t id, uint64_t now, enum sl_ss_why why)
{
	struct log *l = ctx;

	(void)now;
	l->rejected[l->n_rejected++ % 256] = id;
	l->n_shed += why == SL_SS_SHED;
}

static bool take(void *ctx)
{
	struct log *l = ctx;

	if (l->slots <= 0)
		return false;
	l->slots--;
	return true;
}

/* Two backlogged workloads, priorities 4 and 1: of 50 slots, 40 and 10. */
static void test_shares_follow_priority(void **state)
{
	struct sl_ss_workload w[2] = {{4, UINT64_MAX, 0, 0}, {1, UINT64_MAX, 0, 0}};
	struct log l = {0};
	struct sl_ss *ss;
	unsigned gold = 0;

	(void)state;
	assert_int_equal(sl_ss_create(&ss, w, 2, 1000, on_admit, on_reject, &l), 0);
	for (uint64_t i = 0; i < 100; i++) {
		assert_int_equal(sl_ss_enqueue(ss, 0, i, 0, i), 0);        /* ids 0..99: gold */
		assert_int_equal(sl_ss_enqueue(ss, 0, 1000 + i, 1, 1000 + i), 0); /* 1000..: bulk */
	}
	l.slots = 50;
	assert_int_equal(sl_ss_run(ss, 1, take, &l), 50);
	for (size_t i = 0; i < l.n_admitted; i++)
		gold += l.admitted[i] < 1000;
	assert_int_equal(gold, 40);
	assert_int_equal(sl_ss_waiting(ss), 150);
	/* FIFO within a workload. */
	assert_int_equal(l.admitted[0], 0);
	assert_int_equal(sl_ss_waiting_in(ss, 0), 60);
	sl_ss_free(ss);
}

/* A workload that was idle does not get credit for its idleness: it
 * starts at the virtual time, not at 0. */
static void test_idle_workload_no_burst(void **state)
{
	struct sl_ss_workload w[2] = {{1, UINT64_MAX, 0, 0}, {1, UINT64_MAX, 0, 0}};
	struct log l = {0};
	struct sl_ss *ss;
	unsigned late = 0;

	(void)state;
	assert_int_equal(sl_ss_create(&ss, w, 2, 1000, on_admit, on_reject, &l), 0);
	for (uint64_t i = 0; i < 100; i++)
		assert_int_equal(sl_ss_enqueue(ss, 0, i, 0, i), 0);
	l.slots = 60;
	assert_int_equal(sl_ss_run(ss, 1, take, &l), 60);
	for (uint64_t i = 0; i < 40; i++)
		assert_int_equal(sl_ss_enqueue(ss, 2, 1000 + i, 1, 1000 + i), 0);
	l.n_admitted = 0;
	l.slots = 20;
	assert_int_equal(sl_ss_run(ss, 3, take, &l), 20);
	for (size_t i = 0; i < l.n_admitted; i++)
		late += l.admitted[i] >= 1000;
	assert_int_equal(late, 10); /* half, not all 20 */
	sl_ss_free(ss);
}

/* Inside a workload, round robin over flows: a light client's one
 * connection is not queued behind a heavy client's backlog. */
static void test_flows_take_turns(void **state)
{
	struct sl_ss_workload w[1] = {{1, UINT64_MAX, 0, 0}};
	struct log l = {0};
	struct sl_ss *ss;

	(void)state;
	assert_int_equal(sl_ss_create(&ss, w, 1, 1000, on_admit, on_reject, &l), 0);
	for (uint64_t i = 0; i < 50; i++)
		assert_int_equal(sl_ss_enqueue(ss, 0, i, 0, 0xe1e), 0); /* the elephant */
	assert_int_equal(sl_ss_enqueue(ss, 1, 500, 0, 0x111), 0);   /* a mouse, last */
	assert_int_equal(sl_ss_enqueue(ss, 2, 501, 0, 0x222), 0);   /* another */
	l.slots = 4;
	assert_int_equal(sl_ss_run(ss, 3, take, &l), 4);
	/* elephant, mouse, mouse, elephant: each flow in turn */
	assert_int_equal(l.admitted[0], 0);
	assert_int_equal(l.admitted[1], 500);
	assert_int_equal(l.admitted[2], 501);
	assert_int_equal(l.admitted[3], 1);
	/* the elephant's own stay in their order */
	l.slots = 2;
	assert_int_equal(sl_ss_run(ss, 4, take, &l), 2);
	assert_int_equal(l.admitted[4], 2);
	assert_int_equal(l.admitted[5], 3);
	assert_int_equal(sl_ss_waiting(ss), 46);
	assert_int_equal(sl_ss_cancel(ss, 10), 0);
	assert_int_equal(sl_ss_waiting_in(ss, 0), 45);
	sl_ss_free(ss);
}

static void test_timeouts_and_bound(void **state)
{
	struct sl_ss_workload w[2] = {{1, 100, 0, 0}, {1, UINT64_MAX, 0, 0}};
	struct log l = {0};
	struct sl_ss *ss;

	(void)state;
	assert_int_equal(sl_ss_create(&ss, w, 2, 3, on_admit, on_reject, &l), 0);
	assert_int_equal(sl_ss_enqueue(ss, 0, 1, 0, 1), 0);
	assert_int_equal(sl_ss_enqueue(ss, 50, 2, 0, 2), 0);
	assert_int_equal(sl_ss_enqueue(ss, 50, 3, 1, 3), 0);
	assert_int_equal(sl_ss_enqueue(ss, 50, 4, 1, 4), -ENOSPC); /* the bound */
	{
		struct sl_ss_stats st;

		sl_ss_stats(ss, 1, &st);
		assert_int_equal(st.refused, 1);
	}
	assert_int_equal(sl_ss_run(ss, 120, take, &l), 0); /* no slot */
	assert_int_equal(l.n_rejected, 1);
	assert_int_equal(l.rejected[0], 1);                  /* 0 + 100 <= 120 */
	assert_int_equal(sl_ss_cancel(ss, 3), 0);
	assert_int_equal(sl_ss_cancel(ss, 3), -ENOENT);
	l.slots = 5;
	assert_int_equal(sl_ss_run(ss, 140, take, &l), 1);
	assert_int_equal(l.admitted[0], 2);
	assert_int_equal(sl_ss_waiting(ss), 0);
	assert_int_equal(l.slots, 4);                        /* only what it used */
	sl_ss_free(ss);
}

#define MSEC 1000000ull

/* Controlled delay (issue 23): a burst that drains within the interval
 * waits; a flow whose backlog stood for the interval loses whoever waited
 * past the target, oldest first, all but its newest, counted as shed. */
static void test_delay_burst_then_standing(void **state)
{
	struct sl_ss_workload w[1] = {{1, 2000 * MSEC, 100 * MSEC, 1000 * MSEC}};
	struct sl_ss_stats st;
	struct log l = {0};
	struct sl_ss *ss;

	(void)state;
	assert_int_equal(sl_ss_create(&ss, w, 1, 1000, on_admit, on_reject, &l), 0);
	for (uint64_t i = 0; i < 20; i++)
		assert_int_equal(sl_ss_enqueue(ss, i * MSEC, i, 0, 7), 0); /* one heavy flow */
	/* a burst: half a second in, nothing shed; 5 served */
	l.slots = 5;
	assert_int_equal(sl_ss_run(ss, 500 * MSEC, take, &l), 5);
	assert_int_equal(l.n_rejected, 0);
	assert_int_equal(sl_ss_waiting(ss), 15);
	/* a second after its backlog started: it stood; all but its newest go
	 * (at the next look: the controlled delay looks every 10 ms) */
	assert_int_equal(sl_ss_run(ss, 999 * MSEC, take, &l), 0);
	assert_int_equal(l.n_rejected, 0);
	assert_int_equal(sl_ss_run(ss, 1000 * MSEC, take, &l), 0);
	assert_int_equal(l.n_rejected, 0);
	assert_int_equal(sl_ss_run(ss, 1009 * MSEC, take, &l), 0);
	assert_int_equal(l.n_shed, 14);
	assert_int_equal(l.rejected[0], 5); /* oldest first */
	assert_int_equal(sl_ss_waiting(ss), 1);
	sl_ss_stats(ss, 0, &st);
	assert_int_equal(st.shed, 14);
	assert_int_equal(st.rejected, 0);
	/* its newest waits until the time-out, which is no shedding */
	assert_int_equal(sl_ss_run(ss, 2019 * MSEC, take, &l), 0);
	assert_int_equal(l.n_rejected, 15);
	assert_int_equal(l.n_shed, 14);
	sl_ss_free(ss);

	/* target 0: no controlled delay, only the time-out */
	w[0].delay_target_ns = 0;
	l = (struct log){0};
	assert_int_equal(sl_ss_create(&ss, w, 1, 1000, on_admit, on_reject, &l), 0);
	for (uint64_t i = 0; i < 20; i++)
		assert_int_equal(sl_ss_enqueue(ss, 0, i, 0, 7), 0);
	assert_int_equal(sl_ss_run(ss, 1500 * MSEC, take, &l), 0);
	assert_int_equal(l.n_rejected, 0);
	sl_ss_free(ss);
}

/* A run whose clock was read before the requests it looks at were
 * stamped (the daemon's loop reads it, then drains its events): they are
 * young, not 2^64 ns old, and nothing is shed or timed out. */
static void test_clock_older_than_arrivals(void **state)
{
	struct sl_ss_workload w[1] = {{1, 2000 * MSEC, 100 * MSEC, 1000 * MSEC}};
	struct log l = {0};
	struct sl_ss *ss;

	(void)state;
	assert_int_equal(sl_ss_create(&ss, w, 1, 1000, on_admit, on_reject, &l), 0);
	for (uint64_t i = 0; i < 3; i++)
		assert_int_equal(sl_ss_enqueue(ss, 5000 * MSEC + i, i, 0, 7), 0);
	assert_int_equal(sl_ss_run(ss, 4990 * MSEC, take, &l), 0);
	assert_int_equal(l.n_rejected, 0);
	assert_int_equal(sl_ss_waiting(ss), 3);
	/* and a second after the backlog began, it stood: shed as ever */
	assert_int_equal(sl_ss_run(ss, 6010 * MSEC, take, &l), 0);
	assert_int_equal(l.n_shed, 2);
	sl_ss_free(ss);
}

/* 60 s of an elephant at twice the slots beside mice (a connection each,
 * a new client 0.2 to 1 s apart), with random service: no mouse is ever
 * shed, the elephant's standing backlog is, and nobody but a flow's newest
 * waits past the interval and the target. */
static void test_delay_mice_never_shed(void **state)
{
	struct sl_ss_workload w[1] = {{1, 2000 * MSEC, 100 * MSEC, 1000 * MSEC}};
	enum { MOUSE = 1u << 30 };
	struct log l = {0};
	uint64_t next_mouse = 0, mice = 0, rng = 42, t;
	size_t seen = 0, seen_admitted = 0, el_shed = 0;
	struct sl_ss *ss;

	(void)state;
	assert_int_equal(sl_ss_create(&ss, w, 1, 100000, on_admit, on_reject, &l), 0);
	for (t = 0; t < 60000 * MSEC; t += 10 * MSEC) {
		uint64_t id = t / (10 * MSEC);

		assert_int_equal(sl_ss_enqueue(ss, t, id, 0, 1), 0); /* 100/s */
		if (t >= next_mouse) {
			assert_int_equal(sl_ss_enqueue(ss, t, MOUSE + mice, 0, 1000 + mice), 0);
			mice++;
			rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
			next_mouse = t + (200 + (rng >> 33) % 800) * MSEC;
		}
		rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
		l.slots = (int)((rng >> 33) % 2); /* 50/s on average */
		sl_ss_run(ss, t, take, &l);
		for (; seen < l.n_rejected; seen++) {
			uint64_t r = l.rejected[seen % 256];

			assert_true(r < MOUSE); /* never a mouse */
			el_shed++;
			/* the elephant's shed waited the target at least, and no
			 * more than the interval plus a tick */
			assert_true(t - r * 10 * MSEC >= 100 * MSEC);
			assert_true(t - r * 10 * MSEC <= 1010 * MSEC);
		}
		for (; seen_admitted < l.n_admitted; seen_admitted++) {
			uint64_t a = l.admitted[seen_admitted % 256];

			/* admitted: nobody of the elephant waited past the
			 * interval plus a tick either */
			if (a < MOUSE)
				assert_true(t - a * 10 * MSEC <= 1010 * MSEC);
		}
	}
	assert_true(mice > 50);
	assert_true(el_shed > 1000);
	assert_int_equal(l.n_shed, el_shed);
	sl_ss_free(ss);
}

/* A connection that comes back (its limit fell while it waited for a
 * seat downstream) takes its place by its first arrival, in its workload
 * and in its flow, and its queue_timeout runs from that arrival: a
 * recall never extends a wait. */
static void test_requeue_takes_its_place(void **state)
{
	struct sl_ss_workload w[1] = {{1, 1000, 0, 0}};
	struct log l = {0};
	struct sl_ss *ss;

	(void)state;
	assert_int_equal(sl_ss_create(&ss, w, 1, 1000, on_admit, on_reject, &l), 0);
	/* flow 7 waits with ids 1 (t 100) and 3 (t 300); id 2 comes back,
	 * first arrived at 200 */
	assert_int_equal(sl_ss_enqueue(ss, 100, 1, 0, 7), 0);
	assert_int_equal(sl_ss_enqueue(ss, 300, 3, 0, 7), 0);
	assert_int_equal(sl_ss_requeue(ss, 400, 2, 0, 7, 200), 0);
	/* a requeue "from the future" is clamped to now */
	assert_int_equal(sl_ss_requeue(ss, 400, 4, 0, 7, 900), 0);
	l.slots = 2;
	assert_int_equal(sl_ss_run(ss, 400, take, &l), 2);
	assert_int_equal(l.admitted[0], 1);
	assert_int_equal(l.admitted[1], 2);
	/* id 3's deadline is 1300, id 4's 1400: at 1350 only 3 is late */
	assert_int_equal(sl_ss_run(ss, 1350, take, &l), 0);
	assert_int_equal(l.n_rejected, 1);
	assert_int_equal(l.rejected[0], 3);
	/* the caller asks first: past its bound it would go at once */
	assert_true(sl_ss_within_timeout(ss, 0, 200, 1199));
	assert_false(sl_ss_within_timeout(ss, 0, 200, 1200));
	assert_false(sl_ss_within_timeout(ss, 1, 200, 300)); /* no such workload */
	/* one that waited past its bound before it came back goes at once */
	assert_int_equal(sl_ss_requeue(ss, 1350, 5, 0, 8, 200), 0);
	assert_int_equal(sl_ss_run(ss, 1351, take, &l), 0);
	assert_int_equal(l.n_rejected, 2);
	assert_int_equal(l.rejected[1], 5);
	assert_int_equal(sl_ss_waiting(ss), 1);
	sl_ss_free(ss);
}

static void test_rejects_bad_parameters(void **state)
{
	struct sl_ss_workload w[1] = {{0, UINT64_MAX, 0, 0}};
	struct sl_ss *ss;

	(void)state;
	assert_int_equal(sl_ss_create(&ss, w, 1, 10, NULL, NULL, NULL), -EINVAL);
	assert_int_equal(sl_ss_create(&ss, w, 0, 10, NULL, NULL, NULL), -EINVAL);
	w[0].priority = 1;
	assert_int_equal(sl_ss_create(&ss, w, 1, 10, NULL, NULL, NULL), 0);
	assert_int_equal(sl_ss_enqueue(ss, 0, 1, 1, 1), -EINVAL);
	sl_ss_free(ss); /* frees what waits */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shares_follow_priority),
		cmocka_unit_test(test_idle_workload_no_burst),
		cmocka_unit_test(test_flows_take_turns),
		cmocka_unit_test(test_timeouts_and_bound),
		cmocka_unit_test(test_rejects_bad_parameters),
		cmocka_unit_test(test_requeue_takes_its_place),
		cmocka_unit_test(test_delay_burst_then_standing),
		cmocka_unit_test(test_clock_older_than_arrivals),
		cmocka_unit_test(test_delay_mice_never_shed),
	};

	return cmocka_run_group_tests_name("slot_sched", tests, NULL, NULL);
}
