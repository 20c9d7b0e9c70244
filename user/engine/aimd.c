// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The AIMD load-scheduler controller (Aperture gradient-controller.go, aimd-load-scheduler.go).  See aimd.h.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/aimd.h"
#include "config/config.h"

#define NS_PER_MS 1e6

void sl_aimd_params_default(struct sl_aimd_params *p)
{
	memset(p, 0, sizeof(*p));
	p->slope = -1.0;
	p->min_gradient = 0.1;
	p->max_gradient = 1.0;
	p->linear_increment = 0.025;
	p->max_load_multiplier = 2.0;
	p->min_load_multiplier = 0.0;
	p->period_ns = 10000000000ull;
	p->signal_window_ns = 30000000000ull;
	p->baseline_window_ns = 1800000000000ull;
	p->baseline_period_ns = 30000000000ull;
	p->tolerance = 1.25;
	p->baseline_excludes_overload = false;
}

void sl_aimd_params_from_policy(struct sl_aimd_params *p, const struct sl_policy_cfg *pol)
{
	sl_aimd_params_default(p);
	p->slope = pol->slope;
	p->min_gradient = pol->min_gradient;
	p->max_gradient = pol->max_gradient;
	p->linear_increment = pol->load_multiplier_linear_increment;
	p->max_load_multiplier = pol->max_load_multiplier;
	p->min_load_multiplier = pol->min_load_multiplier;
	p->period_ns = pol->period_ns;
	p->signal_window_ns = pol->signal_window_ns;
	p->baseline_window_ns = pol->baseline_window_ns;
	p->baseline_period_ns = pol->baseline_period_ns;
	p->tolerance = pol->tolerance;
	/* sluice's fix of the blueprint's setpoint ratchet (see aimd.h),
	 * unless the policy asks for Aperture's own baseline. */
	p->baseline_excludes_overload = !pol->baseline_includes_overload;
}

int sl_aimd_params_check(const struct sl_aimd_params *p, char *why, size_t len)
{
	const char *msg = NULL;

	if (!(p->slope != 0) || isnan(p->slope))
		msg = "slope must be a non-zero number";
	else if (isnan(p->min_gradient) || isnan(p->max_gradient) ||
		 p->max_gradient < p->min_gradient)
		msg = "max_gradient must not be below min_gradient";
	else if (!(p->linear_increment > 0) || !isfinite(p->linear_increment))
		msg = "load_multiplier_linear_increment must be > 0";
	else if (!(p->max_load_multiplier > 0) || !isfinite(p->max_load_multiplier))
		msg = "max_load_multiplier must be > 0";
	else if (!(p->min_load_multiplier >= 0) ||
		 p->min_load_multiplier >= p->max_load_multiplier)
		msg = "min_load_multiplier must be >= 0 and below max_load_multiplier";
	else if (!p->period_ns)
		msg = "the control period must be > 0";
	else if (!p->signal_window_ns || !p->baseline_window_ns || !p->baseline_period_ns)
		msg = "windows and the baseline refresh period must be > 0";
	else if (!(p->tolerance > 0) || !isfinite(p->tolerance))
		msg = "latency_tolerance_multiplier must be > 0";
	if (msg) {
		if (why && len)
			snprintf(why, len, "%s", msg);
		return -EINVAL;
	}
	return 0;
}

/* ---- Aperture gradient-controller.go gradient controller ---------------------------------------------- */

double sl_gradient(const struct sl_aimd_params *p, double signal, double setpoint,
		   double control_variable, double *gradient)
{
	double g = NAN;

	if (!isnan(signal) && !isnan(setpoint) && setpoint != 0) {
		/* IEEE pow: 0^-1 = +inf (clamped to max), neg^frac = NaN.
		 * fmin/fmax would drop a NaN, so compare explicitly: NaN
		 * survives the clamp as in Aperture. */
		g = pow(signal / setpoint, p->slope);
		if (!isnan(g)) {
			if (g < p->min_gradient)
				g = p->min_gradient;
			if (g > p->max_gradient)
				g = p->max_gradient;
		}
	}
	if (gradient)
		*gradient = g;
	if (isnan(g) || isnan(control_variable))
		return NAN;
	return control_variable * g;
}

/* ---- Aperture aimd-load-scheduler.go one period ----------------------------------------------------- */

void sl_aimd_step(struct sl_aimd *st, double signal, double setpoint, double observed,
		  struct sl_aimd_out *out)
{
	const struct sl_aimd_params *p = &st->p;
	double lm;
	bool overload;

	/* The decider: strict comparison following the slope's sign; an
	 * invalid input yields false (not invalid). */
	overload = !isnan(signal) && !isnan(setpoint) &&
		   (p->slope > 0 ? signal < setpoint : signal > setpoint);

	/* Integrator: reset by any overloaded period, else +increment capped
	 * at max; the new value is used in the same period. */
	if (overload)
		st->integrator = 0;
	else
		st->integrator = fmin(st->integrator + p->linear_increment,
				      p->max_load_multiplier);

	memset(out, 0, sizeof(*out));
	out->signal = signal;
	out->setpoint = setpoint;
	out->observed = observed;
	out->overload = overload;
	out->integrator = st->integrator;
	out->lm_overload = sl_gradient(p, signal, setpoint, observed, &out->gradient);
	out->lm_normal = isnan(observed) ? NAN : observed + st->integrator;
	lm = overload ? out->lm_overload : out->lm_normal;

	if (isnan(lm) || lm >= p->max_load_multiplier) {
		/* pass-through, or fail-open on an invalid multiplier */
		out->desired = NAN;
		out->load_multiplier = 0;
		out->pass_through = true;
	} else {
		out->desired = lm;
		out->load_multiplier = fmax(lm, 0);
		/* sluice option: a floor (0 = none, Aperture's AIMD) */
		if (p->min_load_multiplier > 0 && out->load_multiplier < p->min_load_multiplier)
			out->load_multiplier = p->min_load_multiplier;
		out->pass_through = false;
	}
}

/* ---- rings --------------------------------------------------------------- */

static int ring_init(struct sl_aimd_ring *r, uint64_t window_ns, uint64_t period_ns)
{
	uint64_t n = window_ns / period_ns + (window_ns % period_ns != 0);

	if (n < 1)
		n = 1;
	if (n > SL_AIMD_MAX_SLOTS)
		n = SL_AIMD_MAX_SLOTS;
	memset(r, 0, sizeof(*r));
	r->sum = calloc(n, sizeof(double));
	r->cnt = calloc(n, sizeof(double));
	if (!r->sum || !r->cnt) {
		free(r->sum);
		free(r->cnt);
		r->sum = r->cnt = NULL;
		return -ENOMEM;
	}
	r->n = n;
	return 0;
}

static void ring_clear(struct sl_aimd_ring *r)
{
	if (r->n) {
		memset(r->sum, 0, r->n * sizeof(double));
		memset(r->cnt, 0, r->n * sizeof(double));
	}
	r->head = 0;
	r->tot_sum = r->tot_cnt = 0;
}

static void ring_free(struct sl_aimd_ring *r)
{
	free(r->sum);
	free(r->cnt);
	memset(r, 0, sizeof(*r));
}

static void ring_total(struct sl_aimd_ring *r)
{
	r->tot_sum = r->tot_cnt = 0;
	for (size_t i = 0; i < r->n; i++) {
		r->tot_sum += r->sum[i];
		r->tot_cnt += r->cnt[i];
	}
}

/* Push one completed period, dropping the oldest.  Totals are kept
 * incrementally and recomputed once per revolution (no drift from
 * floating-point cancellation) or whenever a value is not finite (an
 * infinite signal must age out, and inf - inf is NaN). */
static void ring_push(struct sl_aimd_ring *r, double sum, double cnt)
{
	double os = r->sum[r->head], oc = r->cnt[r->head];

	r->sum[r->head] = sum;
	r->cnt[r->head] = cnt;
	r->head = (r->head + 1) % r->n;
	if (r->head == 0 || !isfinite(os) || !isfinite(sum) || !isfinite(r->tot_sum)) {
		ring_total(r);
	} else {
		r->tot_sum += sum - os;
		r->tot_cnt += cnt - oc;
	}
}

/* Age the ring by k empty periods. */
static void ring_skip(struct sl_aimd_ring *r, uint64_t k)
{
	if (k >= r->n) {
		ring_clear(r);
		return;
	}
	while (k--)
		ring_push(r, 0, 0);
}

/* sum / count over the window, NaN when empty (0/0: invalid). */
static double ring_mean(const struct sl_aimd_ring *r)
{
	return r->tot_cnt > 0 ? r->tot_sum / r->tot_cnt : NAN;
}

/* ---- state --------------------------------------------------------------- */

int sl_aimd_init(struct sl_aimd *st, const struct sl_aimd_params *p)
{
	uint64_t every;
	int err;

	memset(st, 0, sizeof(*st));
	err = sl_aimd_params_check(p, NULL, 0);
	if (err)
		return err;
	st->p = *p;
	if (ring_init(&st->sig, p->signal_window_ns, p->period_ns) ||
	    ring_init(&st->tok, p->signal_window_ns, p->period_ns) ||
	    ring_init(&st->base, p->baseline_window_ns, p->period_ns)) {
		sl_aimd_free(st);
		return -ENOMEM;
	}
	/* Baseline refresh in whole periods, rounded to nearest, >= 1. */
	every = (p->baseline_period_ns + p->period_ns / 2) / p->period_ns;
	st->refresh_every = every < 1 ? 1 : every > 1000000 ? 1000000 : (unsigned)every;
	sl_aimd_reset(st);
	return 0;
}

void sl_aimd_reset(struct sl_aimd *st)
{
	/* Aperture aimd-load-scheduler.go: the integrator starts at max, so a fresh policy is in
	 * pass-through (OBSERVED + I >= max), no ramp. */
	st->integrator = st->p.max_load_multiplier;
	st->setpoint = NAN;
	st->since_refresh = 0;
	st->cur_lat_sum_ms = 0;
	st->cur_lat_cnt = 0;
	st->cur_acc = st->cur_rej = 0;
	ring_clear(&st->sig);
	ring_clear(&st->tok);
	ring_clear(&st->base);
	st->last_period_ns = 0;
	st->started = false;
	st->periods = 0;
}

void sl_aimd_free(struct sl_aimd *st)
{
	ring_free(&st->sig);
	ring_free(&st->tok);
	ring_free(&st->base);
}

void sl_aimd_observe_latency(struct sl_aimd *st, uint64_t now_ns, uint64_t latency_ns)
{
	(void)now_ns;
	st->cur_lat_sum_ms += (double)latency_ns / NS_PER_MS;
	st->cur_lat_cnt++;
}

void sl_aimd_observe_tokens(struct sl_aimd *st, double accepted, double rejected)
{
	if (accepted > 0)
		st->cur_acc += accepted;
	if (rejected > 0)
		st->cur_rej += rejected;
}

/*
 * Baseline and setpoint around one step.  Aperture mode: the period's data
 * enters the baseline first (the 30 min mean includes the latest data),
 * then the setpoint is refreshed if due.  Excluding mode: the setpoint
 * comes from earlier periods and this period enters the baseline only if it
 * was not overloaded.  The setpoint is refreshed every refresh_every
 * periods, and every period while it is invalid (so a fresh policy gets one
 * as soon as there is data).
 */
static void period_core(struct sl_aimd *st, double signal, double base_sum, double base_cnt,
			double observed, struct sl_aimd_out *out)
{
	bool excl = st->p.baseline_excludes_overload;

	if (!excl)
		ring_push(&st->base, base_sum, base_cnt);
	if (st->since_refresh == 0 || isnan(st->setpoint)) {
		st->setpoint = ring_mean(&st->base) * st->p.tolerance;
		st->since_refresh = 0;
	}
	if (++st->since_refresh >= st->refresh_every)
		st->since_refresh = 0;
	sl_aimd_step(st, signal, st->setpoint, observed, out);
	if (excl) {
		if (out->overload)
			ring_push(&st->base, 0, 0);
		else
			ring_push(&st->base, base_sum, base_cnt);
	}
	st->periods++;
}

void sl_aimd_period(struct sl_aimd *st, uint64_t now_ns, struct sl_aimd_out *out)
{
	double signal, observed;
	double sum = st->cur_lat_sum_ms, cnt = (double)st->cur_lat_cnt;

	/* Missed periods age the windows as empty periods (bounded by the
	 * longest ring: beyond it everything is empty anyway). */
	if (st->started && now_ns > st->last_period_ns) {
		uint64_t gap = now_ns - st->last_period_ns;
		uint64_t missed = 0;

		if (gap >= st->p.period_ns + st->p.period_ns / 2)
			missed = (gap + st->p.period_ns / 2) / st->p.period_ns - 1;
		ring_skip(&st->sig, missed);
		ring_skip(&st->tok, missed);
		ring_skip(&st->base, missed);
	}
	st->started = true;
	st->last_period_ns = now_ns;

	ring_push(&st->sig, sum, cnt);
	ring_push(&st->tok, st->cur_acc, st->cur_acc + st->cur_rej);
	st->cur_lat_sum_ms = 0;
	st->cur_lat_cnt = 0;
	st->cur_acc = st->cur_rej = 0;

	signal = ring_mean(&st->sig);
	observed = ring_mean(&st->tok); /* 0/0 with no traffic: invalid */
	period_core(st, signal, sum, cnt, observed, out);
}

void sl_aimd_period_external(struct sl_aimd *st, double signal, struct sl_aimd_out *out)
{
	double observed;

	ring_push(&st->tok, st->cur_acc, st->cur_acc + st->cur_rej);
	st->cur_acc = st->cur_rej = 0;
	observed = ring_mean(&st->tok);
	sl_aimd_period_signal(st, signal, observed, out);
}

void sl_aimd_period_signal(struct sl_aimd *st, double signal, double observed,
			   struct sl_aimd_out *out)
{
	bool valid = !isnan(signal);

	period_core(st, signal, valid ? signal : 0, valid ? 1 : 0, observed, out);
}
