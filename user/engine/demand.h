/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A priority level's seat demand over time (Kubernetes apf_controller.go
 * updateBorrowing's seatDemandIntegrator and its smoothed statistics): what
 * borrowing (engine/borrowing.h) reads once a period.
 *
 * Pure: no I/O, no clock.  Time is passed in as nanoseconds on any
 * monotonic clock.
 *
 * Usage per level: keep one struct sl_demand, call sl_demand_set() (or
 * sl_demand_add()) whenever the level's seat demand changes, and every
 * borrowing period call sl_demand_period_end().
 */
#ifndef SLUICE_DEMAND_H
#define SLUICE_DEMAND_H

#include <stdint.h>

#define SL_DEMAND_SMOOTHING   0.977                   /* A; half-life ~29.8 periods */

/* ---- Kubernetes apf_controller.go updateBorrowing seat-demand measurement ---------------------------------- */

/*
 * Time integrator of the instantaneous seat demand x(t) (seats in use plus,
 * for non-exempt levels, the MaxSeats of waiting requests), plus the
 * statistics kept across periods.  A new level starts with every statistic
 * at 0 (sl_demand_init).  All fields are readable; change them only
 * through the functions below.
 */
struct sl_demand {
	/* Integrator of the current period. */
	uint64_t last_ns; /* time of the last update */
	double x;         /* current value */
	double t;         /* ∫dt, seconds */
	double x_t;       /* ∫x dt */
	double xx_t;      /* ∫x² dt */
	double min, max;  /* extremes of x in this period */
	/* Statistics as of the last period end. */
	double avg, stddev; /* of the last period with a duration > 0 */
	double hwm;         /* round(max) of the last period */
	double smoothed;    /* max(env, A*smoothed + (1-A)*env), env = avg + stddev */
};

/* What one period end reports. */
struct sl_demand_stats {
	double duration; /* seconds; 0 leaves avg, stddev and smoothed unchanged */
	double avg;      /* ∫x/∫dt */
	double stddev;   /* sqrt(∫x²/∫dt - avg²), NaN treated as 0 */
	double min, max; /* over the period */
	double hwm;      /* round(max) */
	double smoothed; /* after this period's update */
};

/* Start integrating at now_ns with value x; all statistics 0. */
void sl_demand_init(struct sl_demand *d, uint64_t now_ns, double x);

/* x changes: integrate the old value over [last, now], then take the new
 * one (and widen min/max).  A now_ns before the last update counts as no
 * elapsed time. */
void sl_demand_set(struct sl_demand *d, uint64_t now_ns, double x);

/* Same with x + delta. */
void sl_demand_add(struct sl_demand *d, uint64_t now_ns, double delta);

/* Period end at now_ns: integrate up to now, compute the statistics,
 * update hwm and (if the duration is > 0) avg, stddev and smoothed, then
 * reset the integrator with min and max restarting from the current x.
 * out may be NULL. */
void sl_demand_period_end(struct sl_demand *d, uint64_t now_ns, struct sl_demand_stats *out);

#endif
