// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Unit tests for the processor-sharing service model (user/engine/ps_model.c)
 * on its own: under capacity a connection takes its work; over it with no
 * limit, the cores stay busy but the crowd grows and ever fewer complete
 * (processor sharing's collapse); behind the controller's limit, who
 * waits past their patience gives up.  The closed loop with the controller is
 * test_seat_gradient's.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "engine/ps_model.h"

#define MSEC 1000000ULL
#define SEC  1000000000ULL

struct seen {
	uint64_t n;
	double sum_ms, max_ms;
};

static void on_done(void *ctx, uint64_t admitted, uint64_t duration)
{
	struct seen *s = ctx;
	double ms = (double)duration / MSEC;

	(void)admitted;
	s->n++;
	s->sum_ms += ms;
	if (ms > s->max_ms)
		s->max_ms = ms;
}

/* Run rate/s on `cores` for `secs`; the model and what completed. */
static struct sl_psm *run(double rate, double cores, double secs, struct sl_sg *sg, struct seen *s)
{
	struct sl_psm_params p = {.work_ms = 50, .patience_ns = 1 * SEC, .seed = 7, .decide_ns = 100 * MSEC};
	struct sl_psm *m;

	assert_int_equal(sl_psm_create(&m, &p, sg), 0);
	for (uint64_t now = MSEC; now <= (uint64_t)(secs * SEC); now += MSEC)
		assert_int_equal(sl_psm_step(m, now, rate, cores, on_done, s), 0);
	return m;
}

static void test_under_capacity(void **state)
{
	struct seen s = {0};
	struct sl_psm *m = run(40, 8, 30, NULL, &s); /* a quarter of the 160/s */

	(void)state;
	/* Poisson arrivals: about 1,200, and all but the last few served. */
	assert_in_range(sl_psm_arrived(m), 1050, 1350);
	assert_true(sl_psm_completed(m) + sl_psm_in_flight(m) == sl_psm_arrived(m));
	assert_true(sl_psm_in_flight(m) < 20);
	/* Rarely more than 8 at once: a connection takes its 50 ms. */
	assert_true(s.sum_ms / (double)s.n < 52);
	assert_int_equal(sl_psm_refused(m), 0);
	sl_psm_free(m);
}

static void test_over_capacity_collapses(void **state)
{
	struct seen s = {0};
	struct sl_psm *m = run(320, 8, 20, NULL, &s); /* twice the capacity */

	(void)state;
	/* Every core stays busy, but shared among an ever larger crowd each
	 * connection's 50 ms of work takes ever longer: far fewer than the
	 * 3,200 of capacity complete (the collapse the lab measured without
	 * sluice), nobody waits outside, nobody is refused. */
	assert_true(sl_psm_completed(m) < 1600);
	assert_true(sl_psm_in_flight(m) > 4800);
	assert_true(sl_psm_completed(m) + sl_psm_in_flight(m) == sl_psm_arrived(m));
	assert_int_equal(sl_psm_waiting(m), 0);
	assert_int_equal(sl_psm_refused(m), 0);
	sl_psm_free(m);
}

static void test_patience_with_a_limit(void **state)
{
	struct sl_psm_params mp = {.work_ms = 50, .patience_ns = 1 * SEC, .seed = 7, .decide_ns = 100 * MSEC};
	struct sl_sg_params p;
	struct sl_sg sg;
	struct seen s = {0};
	struct sl_psm *m;
	size_t most = 0;

	(void)state;
	/* 20 s at half the capacity, then 10x for 10 s: the controller cuts,
	 * who waits longer than 1 s gives up. */
	sl_sg_params_default(&p, 1000);
	sl_sg_init(&sg, &p, 0);
	assert_int_equal(sl_psm_create(&m, &mp, &sg), 0);
	for (uint64_t now = MSEC; now <= 30 * SEC; now += MSEC) {
		assert_int_equal(sl_psm_step(m, now, now < 20 * SEC ? 80 : 1600, 8, on_done, &s), 0);
		if (now > 25 * SEC && sl_psm_in_flight(m) > most)
			most = sl_psm_in_flight(m);
	}
	assert_true(sl_sg_limit(&sg) != UINT32_MAX); /* limited */
	assert_true(most <= 40);                     /* at the limit, not the crowd */
	assert_true(sl_psm_refused(m) > 5000);
	assert_true(sl_psm_waiting(m) <= 1800);      /* at most about 1 s of arrivals */
	assert_true(sl_psm_completed(m) + sl_psm_in_flight(m) + sl_psm_waiting(m) + sl_psm_refused(m) ==
		    sl_psm_arrived(m));
	sl_psm_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_under_capacity),
		cmocka_unit_test(test_over_capacity_collapses),
		cmocka_unit_test(test_patience_with_a_limit),
	};

	return cmocka_run_group_tests_name("ps_model", tests, NULL, NULL);
}
