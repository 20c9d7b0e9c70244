// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Sluice's adaptive mode: a gradient on a limit in flight.  See seat_gradient.h. */
#include "engine/seat_gradient.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "lib/syn_retransmit.h"

#define MS 1000000.0

const char *const sl_sg_reason_names[] = {
	[SL_SG_NO_BASELINE] = "no-baseline",
	[SL_SG_OVERLOAD] = "overload",
	[SL_SG_INCREASE] = "increase",
	[SL_SG_HOLD] = "hold",
	[SL_SG_PASS_THROUGH] = "pass-through",
};

void sl_sg_params_default(struct sl_sg_params *p, uint32_t max_limit)
{
	*p = (struct sl_sg_params){
		.tolerance = 1.25,
		.min_limit = 1,
		.max_limit = max_limit,
		.min_gradient = 0.5,
		.max_increase = 0.25,
		.min_samples = 10,
		.window_min_ns = 100 * 1000000ULL,
		.window_max_ns = 2000 * 1000000ULL,
		.baseline_ns = 60 * 1000000000ULL,
		.probe_ns = 30 * 1000000000ULL,
		.release_ns = 10 * 1000000000ULL,
	};
}

int sl_sg_params_check(const struct sl_sg_params *p, char *why, size_t why_len)
{
	const char *bad = NULL;

	if (!(p->tolerance >= 1.0 && p->tolerance <= 10.0))
		bad = "tolerance must be within 1..10";
	else if (!p->min_limit || p->max_limit <= p->min_limit)
		bad = "the limits need 1 <= min_limit < max_limit";
	else if (!(p->min_gradient > 0 && p->min_gradient < 1))
		bad = "min_gradient must be within (0, 1)";
	else if (!(p->max_increase > 0 && p->max_increase <= 4))
		bad = "max_increase must be within (0, 4]";
	else if (!p->min_samples || !p->window_min_ns || p->window_max_ns < p->window_min_ns)
		bad = "a window needs min_samples >= 1 and window_min <= window_max";
	else if (p->baseline_ns < p->window_max_ns)
		bad = "the baseline window must be at least window_max";
	if (bad) {
		snprintf(why, why_len, "%s", bad);
		return -EINVAL;
	}
	return 0;
}

void sl_sg_init(struct sl_sg *sg, const struct sl_sg_params *p, uint64_t now_ns)
{
	memset(sg, 0, sizeof(*sg));
	sg->p = *p;
	sg->limit = p->max_limit;
	sg->pass_through = true;
	sg->epoch_ns = now_ns;
	sg->window_start_ns = sg->last_step_ns = now_ns;
	sg->last_probe_ns = now_ns;
	sg->rng = 0x9e3779b97f4a7c15ULL ^ now_ns;
}

static uint64_t next_rand(struct sl_sg *sg)
{
	/* xorshift64*: a reservoir needs no better. */
	sg->rng ^= sg->rng >> 12;
	sg->rng ^= sg->rng << 25;
	sg->rng ^= sg->rng >> 27;
	return sg->rng * 2685821657736338717ULL;
}

void sl_sg_complete(struct sl_sg *sg, uint64_t admitted_ns, uint64_t queued_ns, uint64_t served_ns)
{
	uint64_t j = sg->n_samples;

	sg->completions++;
	if (admitted_ns < sg->epoch_ns)
		return; /* admitted under an earlier limit: it says nothing of this one */
	if (j >= SL_SG_MAX_SAMPLES)
		j = next_rand(sg) % ((uint64_t)sg->n_samples + 1);
	if (j < SL_SG_MAX_SAMPLES) {
		sg->samples[j] = (double)(queued_ns + served_ns) / MS;
		sg->service[j] = (double)served_ns / MS;
	}
	sg->n_samples++;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median_of(double *v, size_t n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* B: the lower decile of the window medians remembered over the last
 * baseline_ns, and at least of the last SL_SG_BASELINE_KEEP remembered
 * however old (NaN: none).  Not their minimum: one window of bad samples
 * (a burst of connections that close at once, a cache's lucky second)
 * would set it, and every target after it, for a whole baseline window;
 * the decile moves only when a tenth of the windows agree.  However old:
 * under a limit only the probes are remembered, two a minute, and a
 * baseline that expired would release the limit in the middle of the
 * overload. */
static double baseline(struct sl_sg *sg, uint64_t now)
{
	double v[SL_SG_BASELINE_SLOTS];
	unsigned n = 0;

	for (unsigned i = 0; i < sg->base_n; i++) {
		unsigned k = (sg->base_head + SL_SG_BASELINE_SLOTS - 1 - i) % SL_SG_BASELINE_SLOTS;

		if (n >= SL_SG_BASELINE_KEEP && now - sg->base_at[k] > sg->p.baseline_ns)
			break; /* older ones are older still */
		v[n++] = sg->base_ms[k];
	}
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / SL_SG_BASELINE_DECILE_OF];
}

static void remember(struct sl_sg *sg, double median_ms, uint64_t now)
{
	sg->base_ms[sg->base_head] = median_ms;
	sg->base_at[sg->base_head] = now;
	sg->base_head = (sg->base_head + 1) % SL_SG_BASELINE_SLOTS;
	if (sg->base_n < SL_SG_BASELINE_SLOTS)
		sg->base_n++;
}

static void new_window(struct sl_sg *sg, uint64_t now, bool limit_moved)
{
	if (limit_moved)
		sg->epoch_ns = now;
	sg->window_start_ns = now;
	sg->n_samples = 0;
	sg->completions = 0;
	sg->in_flight_integral = sg->in_flight_time = 0;
}

bool sl_sg_step(struct sl_sg *sg, uint64_t now, uint32_t in_flight, uint32_t waiting,
		struct sl_sg_decision *out)
{
	const struct sl_sg_params *p = &sg->p;
	double age_s, dt, x, i_avg, fresh, service, little, s, b, t, before = sg->limit;
	struct sl_sg_decision d = {.at_ns = now, .gradient = 1};
	size_t kept;
	bool stuck, pileup;

	dt = now > sg->last_step_ns ? (double)(now - sg->last_step_ns) / 1e9 : 0;
	sg->in_flight_integral += dt * in_flight;
	sg->in_flight_time += dt;
	sg->last_step_ns = now;
	/* Dead time: more in flight than the limit means the last cut has not
	 * acted yet (what it shut out is not admitted, what came before still
	 * drains).  Judging now would cut again on the earlier pile-up: wait,
	 * and start the next window when admissions resume. */
	if (!sg->pass_through && in_flight > sg->limit) {
		new_window(sg, now, false);
		return false;
	}
	if (now < sg->window_start_ns + p->window_min_ns)
		return false;
	age_s = (double)(now - sg->window_start_ns) / 1e9;
	i_avg = sg->in_flight_time > 0 ? sg->in_flight_integral / sg->in_flight_time : in_flight;
	b = baseline(sg, now);
	t = b * p->tolerance;
	/* Nothing completes while connections are in flight, for four times
	 * the latency allowed: that is evidence too (a stalled service).  (One
	 * admitted late in a quiet window is not.) */
	stuck = !sg->completions && i_avg >= 1 && !isnan(t) && age_s * 1e3 > 4 * t;
	/* A pile-up forming: four times more in flight than the throughput
	 * (this window's, at most one completion more than seen, or the last
	 * one's) carries at the target latency.  In a processor-sharing
	 * service nothing completes while it piles up, so waiting for
	 * completions would wait for all of it. */
	{
		double x_ref = fmax((double)(sg->completions + 1) / age_s,
				    sg->have_last ? sg->last.throughput : 0);

		pileup = !isnan(t) && in_flight >= 8 && in_flight > 4.0 * x_ref * (t / 1e3);
	}
	/* Enough completions (fresh or not: any tells the throughput), or a
	 * long window with at least one, or the stall, or the pile-up. */
	if (sg->completions < p->min_samples && !stuck && !pileup &&
	    !(now >= sg->window_start_ns + p->window_max_ns && sg->completions))
		return false;
	if (!sg->completions && i_avg <= 0) {
		new_window(sg, now, false); /* idle: nothing to judge */
		return false;
	}
	kept = sg->n_samples < SL_SG_MAX_SAMPLES ? sg->n_samples : SL_SG_MAX_SAMPLES;
	fresh = median_of(sg->samples, kept);
	service = median_of(sg->service, kept);
	x = (double)sg->completions / age_s;
	/* The load in flight now, as Little's law says it will take: the
	 * window's mean in flight, or now's when more (a pile-up forming). */
	little = x > 0 ? fmax(i_avg, in_flight) / x * 1e3 : INFINITY;
	/* A window under a limit shows what the limit holds the service at
	 * (the target, or the drain of an earlier pile-up), not the unloaded
	 * latency: only windows in pass-through and the probes are the
	 * baseline's evidence (else its decile would creep up to the target,
	 * then to the next target). */
	if (sg->n_samples >= p->min_samples && (sg->pass_through || sg->probing))
		remember(sg, service, now);
	b = baseline(sg, now);
	t = b * p->tolerance;
	/* The fresh median, unless a pile-up (or a stall) is forming, whose
	 * slow completions have not arrived: then what Little's law says the
	 * load in flight will take.  (Without that evidence a small window's
	 * throughput is too noisy to cut on.) */
	s = isnan(fresh) || pileup || stuck ? fmax(isnan(fresh) ? 0 : fresh, little) : fresh;

	d.fresh_ms = fresh;
	d.little_ms = little;
	d.signal_ms = s;
	d.baseline_ms = b;
	d.target_ms = t;
	d.throughput = x;
	d.in_flight = i_avg;
	d.limit_before = sg->pass_through ? UINT32_MAX : (uint32_t)before;

	if (sg->probing) {
		/* The probe window is over: back to the limit it interrupted,
		 * judged from here on like any other. */
		sg->probing = false;
		sg->limit = sg->probe_saved;
	}
	if (isnan(b)) {
		d.reason = SL_SG_NO_BASELINE;
		sg->pass_through = true;
		sg->limit = p->max_limit;
	} else if (s > t) {
		double from = sg->pass_through ? fmax(i_avg, in_flight) : fmin(sg->limit, i_avg);

		d.reason = SL_SG_OVERLOAD;
		d.gradient = fmax(p->min_gradient, t / s);
		sg->limit = fmax(p->min_limit, floor(from * d.gradient));
		sg->pass_through = false;
	} else if (!sg->pass_through && (i_avg >= 0.9 * sg->limit || waiting)) {
		if (i_avg >= 0.9 * sg->limit)
			sg->unused_since_ns = 0; /* saturated: the limit is needed */
		sg->limit = fmin(p->max_limit, sg->limit + fmax(1, floor(sg->limit * p->max_increase)));
		d.reason = SL_SG_INCREASE;
		if (sg->limit >= p->max_limit) {
			sg->pass_through = true;
			d.reason = SL_SG_PASS_THROUGH;
		}
	} else if (!sg->pass_through) {
		/* Healthy and the limit unused: hold it, and after release_ns of
		 * that the limit is not needed at all. */
		d.reason = SL_SG_HOLD;
		if (!sg->unused_since_ns)
			sg->unused_since_ns = now;
		if (now - sg->unused_since_ns >= p->release_ns) {
			sg->pass_through = true;
			sg->limit = p->max_limit;
			d.reason = SL_SG_PASS_THROUGH;
		}
	} else {
		d.reason = SL_SG_PASS_THROUGH;
	}
	if (d.reason == SL_SG_INCREASE && !sg->unused_since_ns && i_avg < 0.9 * before)
		sg->unused_since_ns = now; /* grown on a moment's queue, not saturated */
	if (d.reason == SL_SG_OVERLOAD || d.reason == SL_SG_PASS_THROUGH)
		sg->unused_since_ns = 0;
	/* Limiting for long: re-measure the baseline at half the concurrency
	 * for one window, so that it cannot creep up to the latency the limit
	 * itself holds (Envoy's minRTT recalculation). */
	if (!sg->pass_through && d.reason != SL_SG_OVERLOAD && now - sg->last_probe_ns >= p->probe_ns &&
	    sg->limit > p->min_limit) {
		sg->probing = true;
		sg->probe_saved = sg->limit;
		sg->limit = fmax(p->min_limit, floor(sg->limit / 2));
		sg->last_probe_ns = now;
	}
	if (sg->pass_through)
		sg->last_probe_ns = now;
	d.pass_through = sg->pass_through;
	d.limit_after = sg->pass_through ? UINT32_MAX : (uint32_t)sg->limit;
	new_window(sg, now, sg->limit != before || d.limit_before != d.limit_after);
	sg->last = d;
	sg->have_last = true;
	if (out)
		*out = d;
	return true;
}

uint32_t sl_sg_limit(const struct sl_sg *sg)
{
	return sg->pass_through ? UINT32_MAX : (uint32_t)sg->limit;
}

void sl_sg_params_from_policy(struct sl_sg_params *p, const struct sl_policy_cfg *pc)
{
	sl_sg_params_default(p, pc->max_in_flight);
	p->min_limit = pc->min_in_flight;
	p->tolerance = fmin(10.0, fmax(1.0, pc->tolerance));
}
