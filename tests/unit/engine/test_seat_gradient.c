// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Unit tests for sluice's adaptive mode (user/engine/seat_gradient.c): the
 * decisions one by one, then the control law in closed loop with a
 * processor-sharing service (engine/ps_model.c: 8 cores, 50 ms of work per
 * connection: 160 connections/s of capacity), as the surge issue measured
 * it: step surges of 2x, 3x and 10x after 40 s at half capacity, and a
 * slow loss of half the cores.  Bounds asserted: throughput in surge at
 * least 70 % of capacity, median time in service within 3x the unloaded
 * 50 ms, the pile-up of the first window bounded, pass-through again within
 * 60 s of the surge's end.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine/ps_model.h"
#include "engine/seat_gradient.h"

#define MSEC 1000000ULL
#define SEC  1000000000ULL

static struct sl_sg_params params(uint32_t max_limit)
{
	struct sl_sg_params p;

	sl_sg_params_default(&p, max_limit);
	return p;
}

/* n completions of `ms` each, admitted at `admitted`. */
static void complete(struct sl_sg *sg, int n, uint64_t admitted, double ms)
{
	for (int i = 0; i < n; i++)
		sl_sg_complete(sg, admitted, 0, (uint64_t)(ms * MSEC));
}

/* A controller started at *t that has learnt a 50 ms baseline (target
 * 62.5 ms) from one healthy window; *t moves to the window's end. */
static void with_baseline(struct sl_sg *sg, const struct sl_sg_params *p, uint64_t *t)
{
	struct sl_sg_decision d;

	sl_sg_init(sg, p, *t);
	complete(sg, 20, *t, 50);
	assert_true(sl_sg_step(sg, *t += 250 * MSEC, 4, 0, &d));
	assert_true(fabs(d.baseline_ms - 50) < 1e-9);
}

/* The variables every decision test uses, the baseline learnt. */
#define FIXTURE(max_limit)                                     \
	struct sl_sg_params p = params(max_limit);             \
	struct sl_sg_decision d;                               \
	struct sl_sg sg;                                       \
	uint64_t t = 10 * SEC;                                 \
	with_baseline(&sg, &p, &t)

static void test_params_are_checked(void **state)
{
	struct sl_sg_params p = params(100);
	char why[128];

	(void)state;
	assert_int_equal(sl_sg_params_check(&p, why, sizeof(why)), 0);
	p.tolerance = 0.9;
	assert_int_not_equal(sl_sg_params_check(&p, why, sizeof(why)), 0);
	p = params(1);
	assert_int_not_equal(sl_sg_params_check(&p, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "min_limit < max_limit"));
	p = params(100);
	p.min_gradient = 1;
	assert_int_not_equal(sl_sg_params_check(&p, why, sizeof(why)), 0);
}

/* Without history nothing is limited; a healthy window makes the baseline. */
static void test_baseline_first(void **state)
{
	struct sl_sg_params p = params(100);
	struct sl_sg_decision d;
	struct sl_sg sg;
	uint64_t t = 10 * SEC;

	(void)state;
	sl_sg_init(&sg, &p, t);
	assert_int_equal(sl_sg_limit(&sg), UINT32_MAX);
	complete(&sg, 9, t, 50);
	assert_false(sl_sg_step(&sg, t + 200 * MSEC, 4, 0, &d)); /* 9 < min_samples */
	complete(&sg, 11, t, 50);
	assert_true(sl_sg_step(&sg, t + 250 * MSEC, 4, 0, &d));
	assert_int_equal(d.reason, SL_SG_PASS_THROUGH);
	assert_true(fabs(d.baseline_ms - 50) < 1e-9);
	assert_true(fabs(d.target_ms - 62.5) < 1e-9);
	assert_int_equal(sl_sg_limit(&sg), UINT32_MAX);
}

/* Issue 23: the baseline resists a burst of bad samples.  A minute of
 * healthy 50 ms windows, then five windows of connections that end at once
 * (0.5 ms): B stays 50 ms (a minimum fell to 0.5 ms, and the target with
 * it); only when a tenth of the minute's windows agree does it move. */
static void test_baseline_resists_a_burst(void **state)
{
	FIXTURE(100);
	int w;

	(void)state;
	for (w = 0; w < 240; w++) { /* a minute of 250 ms windows */
		complete(&sg, 20, t, 50);
		assert_true(sl_sg_step(&sg, t += 250 * MSEC, 4, 0, &d));
	}
	for (w = 0; w < 5; w++) {
		complete(&sg, 20, t, 0.5);
		assert_true(sl_sg_step(&sg, t += 250 * MSEC, 4, 0, &d));
		assert_true(fabs(d.baseline_ms - 50) < 1e-9);
		assert_true(fabs(d.target_ms - 62.5) < 1e-9);
	}
	/* A quarter of the minute bad: that is the service now. */
	for (w = 0; w < 60; w++) {
		complete(&sg, 20, t, 0.5);
		assert_true(sl_sg_step(&sg, t += 250 * MSEC, 4, 0, &d));
	}
	assert_true(d.baseline_ms < 1);
}

/* Under a lasting limit the baseline neither creeps up to the target the
 * limit holds (its windows are no evidence of the unloaded latency; the
 * probes are) nor expires: ten minutes of windows at the target, a probe
 * at 50 ms every 30 s, and B stays 50 ms, the limit in force. */
static void test_baseline_under_a_lasting_limit(void **state)
{
	FIXTURE(100);

	(void)state;
	complete(&sg, 20, t, 200); /* overload: a limit */
	assert_true(sl_sg_step(&sg, t += 250 * MSEC, 40, 5, &d));
	assert_int_equal(d.reason, SL_SG_OVERLOAD);
	for (uint64_t end = t + 600 * SEC; t < end;) {
		uint32_t lim = sl_sg_limit(&sg);

		assert_true(lim < UINT32_MAX);
		/* the limit holds the service at its target, or a probe's half
		 * of it at the unloaded latency */
		complete(&sg, 20, t, sg.probing ? 50 : 62);
		assert_true(sl_sg_step(&sg, t += 250 * MSEC, lim, 5, &d));
		assert_true(fabs(d.baseline_ms - 50) < 1e-9);
	}
}

/* A wait for a seat downstream (a priority level's queue, after the limit
 * admitted the connection) is part of the signal, not of the baseline: in
 * pass-through a level that queues shows load, not the service's
 * unloaded latency; under the limit that wait is what the limit's excess
 * costs, and it cuts. */
static void test_downstream_wait_is_signal_not_baseline(void **state)
{
	struct sl_sg_params p = params(100);
	struct sl_sg_decision d;
	struct sl_sg sg;
	uint64_t t = 10 * SEC;

	(void)state;
	sl_sg_init(&sg, &p, t);
	/* pass-through: 50 ms of service after 100 ms in a level's queue */
	for (int i = 0; i < 20; i++)
		sl_sg_complete(&sg, t, 100 * MSEC, 50 * MSEC);
	assert_true(sl_sg_step(&sg, t += 250 * MSEC, 4, 0, &d));
	assert_true(fabs(d.baseline_ms - 50) < 1e-9);
	assert_true(fabs(d.fresh_ms - 150) < 1e-9);
	assert_int_equal(d.reason, SL_SG_OVERLOAD);
	assert_true(sl_sg_limit(&sg) < UINT32_MAX);
	/* under the limit, the same service without the wait: healthy */
	for (int i = 0; i < 20; i++)
		sl_sg_complete(&sg, t, 0, 50 * MSEC);
	assert_true(sl_sg_step(&sg, t += 250 * MSEC, sl_sg_limit(&sg), 3, &d));
	assert_true(fabs(d.signal_ms - 50) < 1e-9);
	assert_int_equal(d.reason, SL_SG_INCREASE);
}

/* Overload from pass-through: the cut starts from what is in flight and
 * lands on throughput x target; connections admitted before it do not
 * count as fresh afterwards. */
static void test_cut_from_in_flight_and_dead_time(void **state)
{
	FIXTURE(1000);

	(void)state;
	/* A window of 160 completions/s with 40 in flight: 250 ms by Little. */
	complete(&sg, 16, t, 250);
	assert_true(sl_sg_step(&sg, t + 100 * MSEC, 40, 0, &d));
	assert_int_equal(d.reason, SL_SG_OVERLOAD);
	assert_true(fabs(d.little_ms - 250) < 1);
	assert_true(fabs(d.gradient - 0.5) < 1e-9); /* 62.5 / 250 = 0.25, floored at 0.5 */
	assert_int_equal(d.limit_after, 20);
	assert_int_equal(sl_sg_limit(&sg), 20);
	t += 100 * MSEC;
	/* The pile-up drains: long durations, but of connections admitted before
	 * the cut.  Not fresh: only Little's estimate judges the window, and at
	 * 20 in flight and 320/s that is 62.5 ms: no second cut. */
	complete(&sg, 32, t - 50 * MSEC, 900);
	assert_true(sl_sg_step(&sg, t + 100 * MSEC, 20, 5, &d));
	assert_true(isnan(d.fresh_ms));
	assert_true(fabs(d.little_ms - 62.5) < 1);
	assert_int_not_equal(d.reason, SL_SG_OVERLOAD);
}

/* Near the baseline: growth while the limit binds, none while it does
 * not (anti-windup), pass-through at the maximum. */
static void test_increase_hold_pass_through(void **state)
{
	FIXTURE(30);

	(void)state;
	complete(&sg, 20, t, 300);
	assert_true(sl_sg_step(&sg, t += 100 * MSEC, 40, 0, &d));
	assert_int_equal(d.reason, SL_SG_OVERLOAD);
	assert_int_equal(sl_sg_limit(&sg), 20);
	/* Healthy, but only 5 in flight of 20 (100/s of 50 ms): hold. */
	complete(&sg, 20, t, 50);
	assert_true(sl_sg_step(&sg, t += 200 * MSEC, 5, 0, &d));
	assert_int_equal(d.reason, SL_SG_HOLD);
	assert_int_equal(sl_sg_limit(&sg), 20);
	/* Healthy and binding (20 in flight, 400/s of 50 ms): +25 %. */
	complete(&sg, 20, t, 50);
	assert_true(sl_sg_step(&sg, t += 100 * MSEC, 20, 3, &d));
	assert_int_equal(d.reason, SL_SG_INCREASE);
	assert_int_equal(sl_sg_limit(&sg), 25);
	complete(&sg, 50, t, 50);
	assert_true(sl_sg_step(&sg, t += 100 * MSEC, 25, 3, &d));
	assert_int_equal(d.reason, SL_SG_PASS_THROUGH); /* 25 + 6 reaches the maximum */
	assert_int_equal(sl_sg_limit(&sg), UINT32_MAX);
}

/* A limit left unused while healthy is released after release_ns. */
static void test_unused_limit_is_released(void **state)
{
	FIXTURE(1000);
	uint64_t until;

	(void)state;
	complete(&sg, 20, t, 300);
	sl_sg_step(&sg, t += 100 * MSEC, 40, 0, &d);
	assert_int_equal(d.reason, SL_SG_OVERLOAD);
	until = t + p.release_ns;
	while (t < until) {
		complete(&sg, 10, t, 50); /* 2 in flight, 100/s */
		assert_true(sl_sg_step(&sg, t += 100 * MSEC, 2, 0, &d));
		if (t < until)
			assert_int_equal(d.reason, SL_SG_HOLD);
	}
	complete(&sg, 10, t, 50);
	assert_true(sl_sg_step(&sg, t += 100 * MSEC, 2, 0, &d));
	assert_int_equal(d.reason, SL_SG_PASS_THROUGH);
	assert_int_equal(sl_sg_limit(&sg), UINT32_MAX);
}

/* A stalled service (nothing completes) is overload after four times the
 * target latency, without waiting for a completion. */
static void test_stall_is_overload(void **state)
{
	FIXTURE(1000);

	(void)state;
	assert_false(sl_sg_step(&sg, t + 50 * MSEC, 6, 0, &d)); /* before window_min */
	assert_false(sl_sg_step(&sg, t + 200 * MSEC, 6, 0, &d)); /* not yet 4 x 62.5 ms */
	assert_true(sl_sg_step(&sg, t + 260 * MSEC, 6, 0, &d));
	assert_int_equal(d.reason, SL_SG_OVERLOAD);
	assert_true(isinf(d.little_ms));
	assert_int_equal(d.limit_after, 3); /* the deepest cut, from the 6 in flight */
}

/* A pile-up forming (80 in flight where the last window's 80/s carries 5
 * at the target) is judged at the window's minimum length, by Little's
 * law, before its completions: they would take a second. */
static void test_pile_up_is_judged_early(void **state)
{
	FIXTURE(1000);

	(void)state;
	complete(&sg, 2, t - 40 * MSEC, 50);
	assert_false(sl_sg_step(&sg, t + 50 * MSEC, 80, 0, &d));
	assert_true(sl_sg_step(&sg, t + 100 * MSEC, 80, 0, &d));
	assert_int_equal(d.reason, SL_SG_OVERLOAD);
	assert_true(d.little_ms > 1000); /* 80 in flight at 20 completions/s: 4 s */
	assert_int_equal(d.limit_after, 40);
	/* Until what was admitted drains under the new limit, no second cut. */
	complete(&sg, 5, t, 900);
	assert_false(sl_sg_step(&sg, t + 400 * MSEC, 75, 0, &d));
	assert_false(sl_sg_step(&sg, t + 900 * MSEC, 41, 0, &d));
	assert_int_equal(sl_sg_limit(&sg), 40);
}

/* ---- closed loop: a processor-sharing service (engine/ps_model.c) -------------- */

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Completions in [from, to): their time in service, ms. */
struct durations {
	uint64_t from, to;
	double *v;
	size_t n, cap;
};

static void on_done(void *ctx, uint64_t admitted, uint64_t duration)
{
	struct durations *d = ctx;
	uint64_t now = admitted + duration;

	if (now < d->from || now >= d->to)
		return;
	if (d->n == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 4096;
		d->v = realloc(d->v, d->cap * sizeof(double));
		assert_non_null(d->v);
	}
	d->v[d->n++] = (double)duration / MSEC;
}

struct outcome {
	double throughput, median_ms;
	size_t max_in_flight;
	double recovered_s; /* from the surge's end to pass-through; -1: never */
	bool unlimited_before; /* the surge met pass-through */
};

/* 40 s at base_rate (half the capacity: 80/s), `surge_s` at `factor` x
 * capacity, 60 s at base_rate: measured over the surge less its first
 * 10 s; the pile-up over all of it.  A waiting connection gives up after
 * 10 s; the controller steps every 10 ms. */
static struct outcome run_surge_from(double base_rate, double factor, double surge_s,
				     double cores_after)
{
	struct sl_sg_params p = params(2000);
	struct sl_psm_params mp = {.work_ms = 50, .patience_ns = 10 * SEC, .seed = 42,
				   .decide_ns = 10 * MSEC};
	uint64_t t0 = 40 * SEC, t1 = t0 + (uint64_t)(surge_s * SEC), end = t1 + 60 * SEC;
	struct durations d = {.from = t0 + 10 * SEC, .to = t1};
	uint64_t passed_through_at = 0;
	struct outcome o = {0};
	struct sl_psm *m;
	struct sl_sg sg;

	sl_sg_init(&sg, &p, 0);
	assert_int_equal(sl_psm_create(&m, &mp, &sg), 0);
	for (uint64_t now = MSEC; now < end; now += MSEC) {
		double rate = now < t0 || now >= t1 ? base_rate : factor * 160, cores = 8;

		if (now == t0)
			o.unlimited_before = sl_sg_limit(&sg) == UINT32_MAX;
		if (cores_after && now >= t0)
			cores = 8 - (8 - cores_after) * fmin(1, (double)(now - t0) / (double)(t1 - t0));
		assert_int_equal(sl_psm_step(m, now, rate, cores, on_done, &d), 0);
		if (now >= t0 && now < t1 && sl_psm_in_flight(m) > o.max_in_flight)
			o.max_in_flight = sl_psm_in_flight(m);
		if (!passed_through_at && now >= t1 && sl_sg_limit(&sg) == UINT32_MAX)
			passed_through_at = now;
	}
	qsort(d.v, d.n, sizeof(double), cmp_d);
	o.throughput = (double)d.n / ((double)(d.to - d.from) / SEC);
	o.median_ms = d.n ? d.v[d.n / 2] : NAN;
	o.recovered_s = passed_through_at ? (double)(passed_through_at - t1) / SEC : -1;
	print_message("surge %.0fx%s: %.1f completions/s, median %.1f ms in service, most in flight %zu, "
		      "pass-through %.1f s after\n", factor, cores_after ? " with cores lost" : "",
		      o.throughput, o.median_ms, o.max_in_flight, o.recovered_s);
	sl_psm_free(m);
	free(d.v);
	return o;
}

static struct outcome run_surge(double factor, double surge_s, double cores_after)
{
	return run_surge_from(80, factor, surge_s, cores_after);
}

/* The pile-up when the surge hits the service in pass-through: what
 * arrives in the first windows (about 250 ms) over the limit the
 * controller then sets (X x T, about 10): a rate limit deciding every 10 s
 * would let in 10 s of it. */
static void check_surge(double factor)
{
	struct outcome o = run_surge(factor, 60, 0);
	size_t pile_up = (size_t)(0.25 * factor * 160) + 20;

	assert_true(o.throughput >= 0.7 * 160);
	assert_true(o.median_ms <= 3 * 50);
	assert_true(o.max_in_flight <= pile_up);
	assert_true(o.recovered_s >= 0 && o.recovered_s <= 60);
}

/* A quiet service (40/s) in pass-through when 10x arrives: the first
 * windows cut at once; what piles up is a quarter second of arrivals. */
static void test_surge_into_pass_through(void **state)
{
	struct outcome o = run_surge_from(40, 10, 30, 0);

	(void)state;
	assert_true(o.unlimited_before);
	assert_true(o.max_in_flight > 20); /* it did pile up for a moment... */
	assert_true(o.max_in_flight <= (size_t)(0.25 * 10 * 160) + 20); /* ...a bounded one */
	assert_true(o.throughput >= 0.7 * 160);
	assert_true(o.median_ms <= 3 * 50);
}

static void test_surge_2x(void **state) { (void)state; check_surge(2); }
static void test_surge_3x(void **state) { (void)state; check_surge(3); }
static void test_surge_10x(void **state) { (void)state; check_surge(10); }

/* Half the cores go, slowly, over a 120 s surge of 1.5x: the limit follows
 * the capacity that is left (4 cores at the end: 80/s). */
static void test_slow_loss_of_capacity(void **state)
{
	struct outcome o;

	(void)state;
	o = run_surge(1.5, 120, 4);
	/* Over the last 110 s the capacity falls from about 147/s to 80/s:
	 * its mean is about 113/s. */
	assert_true(o.throughput >= 0.7 * 113);
	assert_true(o.median_ms <= 3 * 50);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_params_are_checked),
		cmocka_unit_test(test_baseline_first),
		cmocka_unit_test(test_baseline_resists_a_burst),
		cmocka_unit_test(test_baseline_under_a_lasting_limit),
		cmocka_unit_test(test_downstream_wait_is_signal_not_baseline),
		cmocka_unit_test(test_cut_from_in_flight_and_dead_time),
		cmocka_unit_test(test_increase_hold_pass_through),
		cmocka_unit_test(test_stall_is_overload),
		cmocka_unit_test(test_pile_up_is_judged_early),
		cmocka_unit_test(test_unused_limit_is_released),
		cmocka_unit_test(test_surge_into_pass_through),
		cmocka_unit_test(test_surge_2x),
		cmocka_unit_test(test_surge_3x),
		cmocka_unit_test(test_surge_10x),
		cmocka_unit_test(test_slow_loss_of_capacity),
	};

	return cmocka_run_group_tests_name("seat_gradient", tests, NULL, NULL);
}
