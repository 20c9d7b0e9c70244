// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A priority level's seat demand over time (Kubernetes apf_controller.go updateBorrowing).
 */
#include "engine/demand.h"

#include <math.h>
#include <stddef.h>

/* ---- Kubernetes apf_controller.go updateBorrowing seat-demand measurement ---------------------------------- */

void sl_demand_init(struct sl_demand *d, uint64_t now_ns, double x)
{
	*d = (struct sl_demand){.last_ns = now_ns, .x = x, .min = x, .max = x};
}

/* Integrate the current x up to now.  Time never runs backwards here: an
 * earlier now adds nothing and keeps last_ns, so no span counts twice. */
static void demand_update(struct sl_demand *d, uint64_t now_ns)
{
	double dt;

	if (now_ns <= d->last_ns)
		return;
	dt = (double)(now_ns - d->last_ns) / 1e9;
	d->last_ns = now_ns;
	d->t += dt;
	d->x_t += d->x * dt;
	d->xx_t += d->x * d->x * dt;
}

void sl_demand_set(struct sl_demand *d, uint64_t now_ns, double x)
{
	demand_update(d, now_ns);
	d->x = x;
	if (x < d->min)
		d->min = x;
	if (x > d->max)
		d->max = x;
}

void sl_demand_add(struct sl_demand *d, uint64_t now_ns, double delta)
{
	sl_demand_set(d, now_ns, d->x + delta);
}

void sl_demand_period_end(struct sl_demand *d, uint64_t now_ns, struct sl_demand_stats *out)
{
	double duration;

	demand_update(d, now_ns);
	duration = d->t;
	d->hwm = round(d->max);
	if (duration > 0) {
		double avg = d->x_t / duration;
		double stddev = sqrt(d->xx_t / duration - avg * avg);
		double env;

		/* Rounding can make the variance slightly negative: NaN -> 0. */
		if (isnan(stddev))
			stddev = 0;
		d->avg = avg;
		d->stddev = stddev;
		env = avg + stddev;
		d->smoothed = fmax(env, SL_DEMAND_SMOOTHING * d->smoothed +
						(1 - SL_DEMAND_SMOOTHING) * env);
	}
	if (out)
		*out = (struct sl_demand_stats){
			.duration = duration,
			.avg = d->avg,
			.stddev = d->stddev,
			.min = d->min,
			.max = d->max,
			.hwm = d->hwm,
			.smoothed = d->smoothed,
		};
	d->t = d->x_t = d->xx_t = 0;
	d->min = d->max = d->x;
}
