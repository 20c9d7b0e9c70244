// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The AIMD controller (user/aimd.c): every controller vector of
 * tests/vectors/aimd.json (gradient sweep, fresh start, 2x overload and
 * recovery), the spec's slope table, the Aperture aimd-load-scheduler.go edge cases, the signals of
 * Aperture average-latency blueprint (windows, baseline, setpoint refresh, OBSERVED) and sluice's
 * improvements (baseline without overloaded periods, min_load_multiplier).
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vectors.h"
#include <jansson.h>

#include "engine/aimd.h"
#include "config/config.h"

#define SEC 1000000000ull
#define MSEC 1000000ull

static void assert_near(double got, double want, double tol, const char *what, long k)
{
	if (!(fabs(got - want) <= tol))
		fail_msg("%s (step %ld): got %.17g, want %.17g (tolerance %g)", what, k, got, want, tol);
}

/* A JSON number or null (NaN). */
static double jnum(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	if (!v)
		fail_msg("vector lacks '%s'", key);
	return json_is_null(v) ? NAN : json_number_value(v);
}

static void params_from_json(struct sl_aimd_params *p, json_t *j)
{
	sl_aimd_params_default(p);
	if (!j)
		return;
	p->slope = jnum(j, "slope");
	p->min_gradient = jnum(j, "min_gradient");
	p->max_gradient = jnum(j, "max_gradient");
	p->linear_increment = jnum(j, "load_multiplier_linear_increment");
	p->max_load_multiplier = jnum(j, "max_load_multiplier");
	p->period_ns = (uint64_t)(jnum(j, "period_s") * SEC);
}

static void init_default(struct sl_aimd *st)
{
	struct sl_aimd_params p;

	sl_aimd_params_default(&p);
	assert_int_equal(sl_aimd_init(st, &p), 0);
}

/* ---- vectors --------------------------------------------------------------- */

static void test_vector_defaults(void **state)
{
	json_t *root = load_vectors("aimd.json"), *d = json_object_get(root, "defaults");
	struct sl_aimd_params p;

	(void)state;
	sl_aimd_params_default(&p);
	assert_true(d != NULL);
	assert_true(p.slope == jnum(d, "slope"));
	assert_true(p.min_gradient == jnum(d, "min_gradient"));
	assert_true(p.max_gradient == jnum(d, "max_gradient"));
	assert_true(p.linear_increment == jnum(d, "load_multiplier_linear_increment"));
	assert_true(p.max_load_multiplier == jnum(d, "max_load_multiplier"));
	assert_true((double)p.period_ns == jnum(d, "period_s") * SEC);
	json_decref(root);
}

static json_t *scenario(json_t *root, const char *name)
{
	json_t *sc = json_object_get(root, "scenarios"), *s;
	size_t i;

	json_array_foreach(sc, i, s)
		if (!strcmp(json_string_value(json_object_get(s, "name")), name))
			return s;
	fail_msg("no scenario %s", name);
	return NULL;
}

static void test_vector_gradient_sweep(void **state)
{
	json_t *root = load_vectors("aimd.json");
	json_t *rows = json_object_get(scenario(root, "gradient_sweep_from_passthrough"), "rows"), *r;
	size_t i;

	(void)state;
	assert_int_equal(json_array_size(rows), 10);
	json_array_foreach(rows, i, r) {
		struct sl_aimd st;
		struct sl_aimd_out o;
		json_t *pub = json_object_get(r, "published");
		double ratio = jnum(r, "signal_over_setpoint");

		init_default(&st);
		/* One step from pass-through: OBSERVED = 1, setpoint 100. */
		sl_aimd_step(&st, ratio * 100, 100, 1.0, &o);
		assert_int_equal(o.overload, json_is_true(json_object_get(r, "is_overload")));
		/* the vector rounds to 6 decimals */
		assert_near(o.gradient, jnum(r, "gradient"), 1e-6, "gradient", (long)i);
		assert_int_equal(o.pass_through, json_is_true(json_object_get(pub, "pass_through")));
		assert_near(o.load_multiplier, jnum(pub, "load_multiplier"), 1e-6, "published", (long)i);
		sl_aimd_free(&st);
	}
	json_decref(root);
}

/*
 * Run a steps scenario.  With use_vector_observed the OBSERVED column is
 * fed as given; otherwise the 'ideal' model is computed here from the
 * previous published decision (and must agree with the column).
 */
static void run_steps(const char *name, bool use_vector_observed)
{
	json_t *root = load_vectors("aimd.json"), *s = scenario(root, name);
	json_t *steps = json_object_get(s, "steps"), *summ = json_object_get(s, "summary"), *r;
	struct sl_aimd_params p;
	struct sl_aimd st;
	double applied_prev = 1.0, min_pub = NAN;
	long overload_steps = 0, first_thr = -1, last_over = -1, pt_again = -1;
	size_t i;

	assert_string_equal(json_string_value(json_object_get(s, "observed_model")), "ideal");
	params_from_json(&p, json_object_get(s, "params"));
	assert_int_equal(sl_aimd_init(&st, &p), 0);
	assert_true(json_array_size(steps) > 0);
	json_array_foreach(steps, i, r) {
		struct sl_aimd_out o;
		json_t *pub = json_object_get(r, "published");
		double obs_ideal = fmin(1.0, applied_prev), obs = jnum(r, "observed");
		long k = (long)json_integer_value(json_object_get(r, "k"));

		assert_int_equal(k, (long)i);
		assert_near(obs_ideal, obs, 1e-12, "ideal observed", k);
		sl_aimd_step(&st, jnum(r, "signal"), jnum(r, "setpoint"),
			     use_vector_observed ? obs : obs_ideal, &o);

		assert_int_equal(o.overload, json_is_true(json_object_get(r, "is_overload")));
		assert_near(o.gradient, jnum(r, "gradient"), 1e-12, "gradient", k);
		assert_near(o.integrator, jnum(r, "integrator"), 1e-9, "integrator", k);
		assert_near(o.lm_overload, jnum(r, "lm_if_overload"), 1e-9, "lm_if_overload", k);
		assert_near(o.lm_normal, jnum(r, "lm_if_normal"), 1e-9, "lm_if_normal", k);
		assert_near(o.overload ? o.lm_overload : o.lm_normal, jnum(r, "lm_from_strategy"),
			    1e-9, "lm_from_strategy", k);
		if (isnan(jnum(r, "desired_load_multiplier")))
			assert_true(isnan(o.desired));
		else
			assert_near(o.desired, jnum(r, "desired_load_multiplier"), 1e-9, "desired", k);
		assert_int_equal(o.pass_through, json_is_true(json_object_get(pub, "pass_through")));
		assert_near(o.load_multiplier, jnum(pub, "load_multiplier"), 1e-9, "published", k);

		if (o.overload) {
			overload_steps++;
			last_over = k;
		}
		if (!o.pass_through) {
			if (first_thr < 0)
				first_thr = k;
			if (isnan(min_pub) || o.load_multiplier < min_pub)
				min_pub = o.load_multiplier;
		} else if (first_thr >= 0 && pt_again < 0) {
			pt_again = k;
		}
		applied_prev = o.pass_through ? 1.0 : o.load_multiplier;
	}
	assert_int_equal(overload_steps, json_integer_value(json_object_get(summ, "overload_steps")));
	if (json_is_null(json_object_get(summ, "min_published_lm")))
		assert_true(isnan(min_pub));
	else
		assert_near(min_pub, jnum(summ, "min_published_lm"), 1e-12, "min_published_lm", -1);
	if (json_is_null(json_object_get(summ, "first_throttled_step")))
		assert_int_equal(first_thr, -1);
	else
		assert_int_equal(first_thr, json_integer_value(json_object_get(summ, "first_throttled_step")));
	if (json_object_get(summ, "last_overload_step"))
		assert_int_equal(last_over, json_integer_value(json_object_get(summ, "last_overload_step")));
	if (json_object_get(summ, "pass_through_again_at_step"))
		assert_int_equal(pt_again,
				 json_integer_value(json_object_get(summ, "pass_through_again_at_step")));
	if (json_object_get(summ, "recovery_time_s"))
		assert_near((double)(pt_again - last_over) * (double)p.period_ns / SEC,
			    jnum(summ, "recovery_time_s"), 1e-9, "recovery_time_s", -1);
	sl_aimd_free(&st);
	json_decref(root);
}

static void test_vector_fresh_start(void **state)
{
	(void)state;
	run_steps("fresh_start_no_overload", true);
	run_steps("fresh_start_no_overload", false);
}

static void test_vector_overload_recovery(void **state)
{
	(void)state;
	run_steps("overload_2x_then_recovery_ideal", true);
	run_steps("overload_2x_then_recovery_ideal", false);
}

/* Every scenario in the file is one we know how to run. */
static void test_vector_all_scenarios_known(void **state)
{
	json_t *root = load_vectors("aimd.json"), *sc = json_object_get(root, "scenarios"), *s;
	size_t i;

	(void)state;
	json_array_foreach(sc, i, s) {
		const char *n = json_string_value(json_object_get(s, "name"));

		assert_true(!strcmp(n, "fresh_start_no_overload") ||
			    !strcmp(n, "overload_2x_then_recovery_ideal") ||
			    !strcmp(n, "gradient_sweep_from_passthrough"));
	}
	json_decref(root);
}

/* The slope table of Aperture's gradient-controller documentation at S/SP = 1.25, 2, 4. */
static void test_slope_table(void **state)
{
	static const struct {
		double slope, g[3];
	} t[] = {
		{-1, {0.8, 0.5, 0.25}},
		{-0.5, {0.894427191, 0.7071067812, 0.5}},
		{-2, {0.64, 0.25, 0.1}},
	};
	static const double ratio[3] = {1.25, 2, 4};

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		struct sl_aimd_params p;

		sl_aimd_params_default(&p);
		p.slope = t[i].slope;
		for (size_t j = 0; j < 3; j++) {
			double g, out = sl_gradient(&p, ratio[j] * 100, 100, 1.0, &g);

			assert_near(g, t[i].g[j], 1e-9, "gradient", (long)(i * 3 + j));
			assert_near(out, t[i].g[j], 1e-9, "output", (long)(i * 3 + j));
		}
	}
}

/* ---- Aperture gradient-controller.go, aimd-load-scheduler.go edge cases ---------------------------------------------------- */

static void test_gradient_invalid_inputs(void **state)
{
	struct sl_aimd_params p;
	double g;

	(void)state;
	sl_aimd_params_default(&p);
	assert_true(isnan(sl_gradient(&p, NAN, 100, 1, &g)));
	assert_true(isnan(g));
	assert_true(isnan(sl_gradient(&p, 100, NAN, 1, &g)));
	assert_true(isnan(g));
	assert_true(isnan(sl_gradient(&p, 100, 0, 1, &g))); /* setpoint 0 */
	assert_true(isnan(g));
	assert_true(isnan(sl_gradient(&p, 200, 100, NAN, &g))); /* cv invalid */
	assert_near(g, 0.5, 0, "gradient with invalid cv", 0);
	/* 0^-1 = +inf, clamped to max; inf signal -> 0 -> min */
	assert_near(sl_gradient(&p, 0, 100, 1, &g), 1.0, 0, "zero signal", 0);
	assert_near(sl_gradient(&p, INFINITY, 100, 1, &g), 0.1, 0, "inf signal", 0);
	/* neg^frac = NaN survives the clamp */
	p.slope = -0.5;
	assert_true(isnan(sl_gradient(&p, -10, 100, 1, &g)));
	assert_true(isnan(g));
	/* raw proto defaults: no clamps */
	p.slope = -1;
	p.min_gradient = -INFINITY;
	p.max_gradient = INFINITY;
	assert_near(sl_gradient(&p, 50, 100, 1, &g), 2.0, 0, "unclamped", 0);
	assert_near(sl_gradient(&p, 1000, 100, 3, &g), 0.3, 1e-15, "unclamped cv", 0);
}

static void test_fresh_state_pass_through(void **state)
{
	struct sl_aimd st;
	struct sl_aimd_out o;

	(void)state;
	init_default(&st);
	assert_true(st.integrator == 2.0);
	/* OBSERVED still invalid (no metrics yet): pass-through */
	sl_aimd_step(&st, 50, 100, NAN, &o);
	assert_true(o.pass_through);
	assert_true(o.load_multiplier == 0);
	/* valid, low OBSERVED: OBSERVED + 2 >= 2 at once, no ramp */
	sl_aimd_step(&st, 50, 100, 0.01, &o);
	assert_true(o.pass_through);
	/* and through the daemon entry with nothing observed at all */
	sl_aimd_period(&st, 10 * SEC, &o);
	assert_true(o.pass_through);
	assert_false(o.overload);
	assert_true(isnan(o.signal) && isnan(o.observed));
	sl_aimd_free(&st);
}

static void test_invalid_signal_no_overload(void **state)
{
	struct sl_aimd st;
	struct sl_aimd_out o;

	(void)state;
	init_default(&st);
	st.integrator = 0.5;
	sl_aimd_step(&st, NAN, 100, 0.5, &o);
	assert_false(o.overload);
	assert_near(o.integrator, 0.525, 1e-15, "integrator grows", 0);
	assert_near(o.load_multiplier, 1.025, 1e-15, "normal branch", 0);
	assert_false(o.pass_through);
	sl_aimd_step(&st, 500, NAN, 0.5, &o); /* invalid setpoint */
	assert_false(o.overload);
	assert_near(o.integrator, 0.55, 1e-15, "integrator grows", 1);
	sl_aimd_free(&st);
}

static void test_invalid_multiplier_fails_open(void **state)
{
	struct sl_aimd st;
	struct sl_aimd_out o;

	(void)state;
	init_default(&st);
	/* overloaded with no OBSERVED: the multiplier is invalid -> pass-through,
	 * but the integrator still resets */
	sl_aimd_step(&st, 300, 100, NAN, &o);
	assert_true(o.overload);
	assert_true(o.pass_through);
	assert_true(o.load_multiplier == 0);
	assert_true(o.integrator == 0);
	assert_true(isnan(o.desired));
	/* setpoint 0: signal > 0 is overload, but the gradient is undefined */
	sl_aimd_step(&st, 5, 0, 1.0, &o);
	assert_true(o.overload);
	assert_true(isnan(o.gradient));
	assert_true(o.pass_through);
	/* negative signal with a fractional slope: NaN gradient, not overload,
	 * normal branch used */
	st.p.slope = -0.5;
	st.integrator = 0;
	sl_aimd_step(&st, -5, 100, 0.5, &o);
	assert_false(o.overload);
	assert_true(isnan(o.gradient));
	assert_false(o.pass_through);
	assert_near(o.load_multiplier, 0.525, 1e-15, "normal branch", 0);
	sl_aimd_free(&st);
}

static void test_negative_multiplier_clamped(void **state)
{
	struct sl_aimd st;
	struct sl_aimd_out o;

	(void)state;
	init_default(&st);
	sl_aimd_step(&st, 200, 100, -1.0, &o);
	assert_true(o.overload);
	assert_near(o.desired, -0.5, 0, "desired", 0);
	assert_false(o.pass_through);
	assert_true(o.load_multiplier == 0);
	sl_aimd_free(&st);
}

static void test_positive_slope_polarity(void **state)
{
	struct sl_aimd_params p;
	struct sl_aimd st;
	struct sl_aimd_out o;

	(void)state;
	sl_aimd_params_default(&p);
	p.slope = 1; /* e.g. throughput: overload when it falls below the setpoint */
	assert_int_equal(sl_aimd_init(&st, &p), 0);
	sl_aimd_step(&st, 200, 100, 1.0, &o);
	assert_false(o.overload);
	assert_true(o.pass_through);
	sl_aimd_step(&st, 100, 100, 1.0, &o); /* equal: strict, not overload */
	assert_false(o.overload);
	sl_aimd_step(&st, 50, 100, 1.0, &o);
	assert_true(o.overload);
	assert_near(o.gradient, 0.5, 0, "gradient", 0);
	assert_near(o.load_multiplier, 0.5, 0, "published", 0);
	assert_true(o.integrator == 0);
	sl_aimd_free(&st);
}

static void test_pass_through_entry_exit_exact(void **state)
{
	struct sl_aimd st;
	struct sl_aimd_out o;
	int k;

	(void)state;
	init_default(&st);
	sl_aimd_step(&st, 110, 100, 1.0, &o);
	assert_true(o.overload && !o.pass_through);
	assert_near(o.load_multiplier, 100.0 / 110, 1e-15, "cut", 0);
	/* Aperture aimd-load-scheduler.go: 40 double additions of 0.025 reach 1.0000000000000004: the
	 * 40th period after the last overload is pass-through, the 39th not */
	for (k = 1; k <= 40; k++) {
		sl_aimd_step(&st, 90, 100, 1.0, &o);
		if (k < 40)
			assert_false(o.pass_through);
	}
	assert_true(o.pass_through);
	assert_true(o.integrator >= 1.0);
	/* the integrator is capped at max */
	for (k = 0; k < 100; k++)
		sl_aimd_step(&st, 90, 100, 1.0, &o);
	assert_true(o.integrator == 2.0);
	/* alternating overload: every overloaded period resets the ramp */
	for (k = 0; k < 10; k++) {
		sl_aimd_step(&st, k % 2 ? 90 : 150, 100, 0.5, &o);
		if (k % 2) {
			assert_near(o.integrator, 0.025, 1e-15, "reset", k);
			assert_false(o.pass_through);
		} else {
			assert_true(o.integrator == 0);
		}
	}
	sl_aimd_free(&st);
}

static void test_min_floor(void **state)
{
	struct sl_aimd_params p;
	struct sl_aimd st;
	struct sl_aimd_out o;
	double obs = 1;

	(void)state;
	sl_aimd_params_default(&p);
	p.min_load_multiplier = 0.2;
	assert_int_equal(sl_aimd_init(&st, &p), 0);
	for (int k = 0; k < 5; k++) {
		sl_aimd_step(&st, 1000, 100, obs, &o);
		assert_true(o.load_multiplier >= 0.2);
		obs = o.load_multiplier;
	}
	assert_near(o.load_multiplier, 0.2, 0, "floored", 0);
	assert_near(o.desired, 0.02, 1e-15, "desired below the floor", 0);
	/* pass-through is not affected by the floor */
	sl_aimd_step(&st, 50, 100, NAN, &o);
	assert_true(o.pass_through && o.load_multiplier == 0);
	/* without the floor (Aperture) it compounds towards 0 */
	p.min_load_multiplier = 0;
	sl_aimd_free(&st);
	assert_int_equal(sl_aimd_init(&st, &p), 0);
	obs = 1;
	for (int k = 0; k < 5; k++) {
		sl_aimd_step(&st, 1000, 100, obs, &o);
		obs = o.load_multiplier;
	}
	assert_near(o.load_multiplier, 1e-5, 1e-18, "compounded", 0);
	sl_aimd_free(&st);
}

static void test_params_check(void **state)
{
	struct sl_aimd_params p;
	struct sl_aimd st;
	char why[128];

	(void)state;
	sl_aimd_params_default(&p);
	assert_int_equal(sl_aimd_params_check(&p, why, sizeof(why)), 0);
	p.slope = 0;
	assert_int_equal(sl_aimd_params_check(&p, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "slope"));
	assert_int_equal(sl_aimd_init(&st, &p), -EINVAL);
	sl_aimd_params_default(&p);
	p.max_gradient = 0.05;
	assert_int_equal(sl_aimd_params_check(&p, why, sizeof(why)), -EINVAL);
	sl_aimd_params_default(&p);
	p.min_load_multiplier = 2;
	assert_int_equal(sl_aimd_params_check(&p, why, sizeof(why)), -EINVAL);
	sl_aimd_params_default(&p);
	p.period_ns = 0;
	assert_int_equal(sl_aimd_params_check(&p, NULL, 0), -EINVAL);
}

/* ---- Aperture average-latency blueprint signals through sl_aimd_period ------------------------------------ */

/* Scaled-down timing: period 1 s, signal window 3 s, baseline 20 s
 * refreshed every 3 s. */
static void scaled_params(struct sl_aimd_params *p, bool excl)
{
	sl_aimd_params_default(p);
	p->period_ns = 1 * SEC;
	p->signal_window_ns = 3 * SEC;
	p->baseline_window_ns = 20 * SEC;
	p->baseline_period_ns = 3 * SEC;
	p->baseline_excludes_overload = excl;
}

/* One period: n connections of lat_ms each, acc/rej tokens. */
static void feed(struct sl_aimd *st, uint64_t t, int n, double lat_ms, double acc, double rej,
		 struct sl_aimd_out *o)
{
	for (int i = 0; i < n; i++)
		sl_aimd_observe_latency(st, t, (uint64_t)(lat_ms * MSEC));
	sl_aimd_observe_tokens(st, acc, rej);
	sl_aimd_period(st, t, o);
}

static void test_signal_window_and_observed(void **state)
{
	struct sl_aimd_params p;
	struct sl_aimd st;
	struct sl_aimd_out o;

	(void)state;
	scaled_params(&p, false);
	assert_int_equal(sl_aimd_init(&st, &p), 0);
	assert_int_equal(st.sig.n, 3);
	assert_int_equal(st.base.n, 20);
	feed(&st, 1 * SEC, 10, 100, 10, 0, &o);
	assert_near(o.signal, 100, 1e-9, "signal", 1);
	assert_near(o.observed, 1, 0, "observed", 1);
	/* Aperture baseline includes this period: setpoint = 125 at once */
	assert_near(o.setpoint, 125, 1e-9, "setpoint", 1);
	assert_false(o.overload);
	feed(&st, 2 * SEC, 30, 200, 5, 15, &o);
	/* (10 x 100 + 30 x 200) / 40 = 175: count-weighted */
	assert_near(o.signal, 175, 1e-9, "signal weighted", 2);
	assert_near(o.observed, 15.0 / 30, 1e-12, "observed", 2);
	/* setpoint held until the next refresh (every 3 periods) */
	assert_near(o.setpoint, 125, 1e-9, "setpoint held", 2);
	assert_true(o.overload);
	feed(&st, 3 * SEC, 0, 0, 0, 10, &o); /* no completed connections */
	assert_near(o.signal, 175, 1e-9, "signal", 3);
	assert_near(o.observed, 15.0 / 40, 1e-12, "observed", 3);
	feed(&st, 4 * SEC, 0, 0, 0, 0, &o); /* period 1 leaves the window; refresh */
	assert_near(o.signal, 200, 1e-9, "signal", 4);
	assert_near(o.setpoint, 175 * 1.25, 1e-9, "setpoint refreshed", 4);
	feed(&st, 5 * SEC, 0, 0, 0, 0, &o);
	feed(&st, 6 * SEC, 0, 0, 0, 0, &o);
	/* empty windows: no valid signal, no valid OBSERVED -> pass-through */
	assert_true(isnan(o.signal));
	assert_true(isnan(o.observed));
	assert_false(o.overload);
	assert_true(o.pass_through);
	sl_aimd_free(&st);
}

static void test_missed_periods_age_windows(void **state)
{
	struct sl_aimd_params p;
	struct sl_aimd st;
	struct sl_aimd_out o;

	(void)state;
	scaled_params(&p, false);
	assert_int_equal(sl_aimd_init(&st, &p), 0);
	feed(&st, 1 * SEC, 10, 100, 10, 0, &o);
	/* the daemon stalls for 5 periods: the old data leaves the 3 s window */
	feed(&st, 6 * SEC, 1, 300, 1, 0, &o);
	assert_near(o.signal, 300, 1e-9, "signal after a gap", 0);
	/* a small jitter is not a missed period */
	feed(&st, 7 * SEC + 300 * MSEC, 1, 100, 1, 0, &o);
	assert_near(o.signal, 200, 1e-9, "signal with jitter", 0);
	sl_aimd_free(&st);
}

/*
 * 30 healthy periods at 100 ms, then latency at 150 ms for 40 periods
 * (a service under sustained overload that shedding cannot fix).
 * Aperture's baseline absorbs the overloaded periods: the setpoint climbs
 * and overload is declared over while latency is still 1.5x the healthy
 * level.  With the overloaded periods excluded the setpoint stays near
 * 125 ms.
 */
static int ratchet(bool excl, double *last_setpoint)
{
	struct sl_aimd_params p;
	struct sl_aimd st;
	struct sl_aimd_out o;
	int over = 0;
	uint64_t t = 0;

	scaled_params(&p, excl);
	p.baseline_window_ns = 60 * SEC;
	assert_int_equal(sl_aimd_init(&st, &p), 0);
	for (int k = 0; k < 30; k++)
		feed(&st, t += SEC, 10, 100, 10, 0, &o);
	assert_near(o.setpoint, 125, 1e-9, "healthy setpoint", 0);
	for (int k = 0; k < 40; k++) {
		feed(&st, t += SEC, 10, 150, 10, 0, &o);
		over += o.overload;
	}
	*last_setpoint = o.setpoint;
	sl_aimd_free(&st);
	return over;
}

static void test_baseline_excludes_overload(void **state)
{
	double sp_aperture, sp_sluice;
	int over_aperture, over_sluice;

	(void)state;
	over_aperture = ratchet(false, &sp_aperture);
	over_sluice = ratchet(true, &sp_sluice);
	assert_true(sp_aperture > 150); /* ratcheted above the overloaded latency */
	assert_true(over_aperture < 40);
	/* Only the onset period leaks in (the 3-period signal window is still
	 * below the setpoint when its raw latency already is 150 ms). */
	assert_true(sp_sluice < 130);
	assert_true(over_sluice >= 39);
}

/* Overload for a whole baseline window: every healthy period ages out, the
 * setpoint becomes invalid, overload ends and the new level is learnt. */
static void test_baseline_exclusion_escape(void **state)
{
	struct sl_aimd_params p;
	struct sl_aimd st;
	struct sl_aimd_out o;
	uint64_t t = 0;
	int k, first_free = -1;

	(void)state;
	scaled_params(&p, true);
	assert_int_equal(sl_aimd_init(&st, &p), 0); /* baseline 20 periods */
	for (k = 0; k < 20; k++)
		feed(&st, t += SEC, 10, 100, 10, 0, &o);
	/* fresh excluding policy: the first period has no baseline yet */
	for (k = 0; k < 40; k++) {
		feed(&st, t += SEC, 10, 200, 10, 0, &o);
		if (!o.overload && first_free < 0)
			first_free = k;
	}
	assert_true(first_free >= 19 && first_free <= 21);
	assert_false(o.overload);
	assert_near(o.setpoint, 250, 1e-9, "relearnt", 0);
	sl_aimd_free(&st);
}

static void test_period_signal_baseline(void **state)
{
	struct sl_aimd_params p;
	struct sl_aimd st;
	struct sl_aimd_out o;

	(void)state;
	scaled_params(&p, true);
	assert_int_equal(sl_aimd_init(&st, &p), 0);
	sl_aimd_period_signal(&st, 100, 1, &o);
	assert_true(isnan(o.setpoint)); /* excluding mode: no earlier data */
	assert_false(o.overload);
	sl_aimd_period_signal(&st, 80, 1, &o); /* setpoint invalid -> refreshed */
	assert_near(o.setpoint, 125, 1e-9, "setpoint", 1);
	sl_aimd_period_signal(&st, NAN, 1, &o); /* a missing value does not count */
	assert_near(o.setpoint, 125, 1e-9, "held", 2);
	sl_aimd_period_signal(&st, 300, 1, &o); /* overloaded: not in the baseline */
	assert_near(o.setpoint, 125, 1e-9, "held", 3);
	assert_true(o.overload);
	assert_near(o.load_multiplier, 125.0 / 300, 1e-12, "cut", 3);
	sl_aimd_period_signal(&st, 300, 1, &o); /* refreshed: 3 periods after */
	assert_near(o.setpoint, 90 * 1.25, 1e-9, "mean of valid, healthy periods", 4);
	assert_true(o.overload);
	assert_near(o.load_multiplier, 112.5 / 300, 1e-12, "cut (OBSERVED given as 1)", 4);
	sl_aimd_free(&st);
}

static void test_params_from_policy(void **state)
{
	struct sl_config *cfg = NULL;
	struct sl_aimd_params p;
	const struct sl_policy_cfg *pol;

	(void)state;
	assert_int_equal(sl_config_load_file("tests/unit/configs/good-full.yaml", &cfg, NULL), 0);
	pol = sl_config_find_policy(cfg, "web-latency");
	assert_non_null(pol);
	sl_aimd_params_from_policy(&p, pol);
	assert_true(p.slope == -2 && p.min_gradient == 0.2 && p.max_gradient == 0.9);
	assert_true(p.linear_increment == 0.05 && p.max_load_multiplier == 3);
	assert_true(p.min_load_multiplier == 0.1);
	assert_true(p.period_ns == 500 * MSEC && p.signal_window_ns == 20 * SEC);
	assert_true(p.baseline_window_ns == 3600 * SEC && p.baseline_period_ns == 60 * SEC);
	assert_true(p.tolerance == 1.5);
	assert_true(p.baseline_excludes_overload);
	assert_int_equal(sl_aimd_params_check(&p, NULL, 0), 0);
	sl_config_free(cfg);

	/* Aperture's own baseline, overloaded periods included, from the
	 * policy (not only from `replay -B`). */
	{
		static const char yaml[] =
			"apiVersion: sluice/v1\nkind: AverageLatencySchedulingPolicy\nmetadata: {name: p}\n"
			"spec:\n  latency_baseliner: {include_overloaded_periods: true}\n"
			"  load_scheduling_core:\n    aimd_load_scheduler:\n"
			"      load_scheduler:\n        selectors: [{}]\n";

		assert_int_equal(sl_config_load_buffer("t.yaml", yaml, sizeof(yaml) - 1, &cfg, NULL), 0);
		sl_aimd_params_from_policy(&p, &cfg->policies[0]);
		assert_false(p.baseline_excludes_overload);
		sl_config_free(cfg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vector_defaults),
		cmocka_unit_test(test_vector_gradient_sweep),
		cmocka_unit_test(test_vector_fresh_start),
		cmocka_unit_test(test_vector_overload_recovery),
		cmocka_unit_test(test_vector_all_scenarios_known),
		cmocka_unit_test(test_slope_table),
		cmocka_unit_test(test_gradient_invalid_inputs),
		cmocka_unit_test(test_fresh_state_pass_through),
		cmocka_unit_test(test_invalid_signal_no_overload),
		cmocka_unit_test(test_invalid_multiplier_fails_open),
		cmocka_unit_test(test_negative_multiplier_clamped),
		cmocka_unit_test(test_positive_slope_polarity),
		cmocka_unit_test(test_pass_through_entry_exit_exact),
		cmocka_unit_test(test_min_floor),
		cmocka_unit_test(test_params_check),
		cmocka_unit_test(test_signal_window_and_observed),
		cmocka_unit_test(test_missed_periods_age_windows),
		cmocka_unit_test(test_baseline_excludes_overload),
		cmocka_unit_test(test_baseline_exclusion_escape),
		cmocka_unit_test(test_period_signal_baseline),
		cmocka_unit_test(test_params_from_policy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
