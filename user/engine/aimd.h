/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The adaptive controller of an AverageLatencySchedulingPolicy: Aperture's
 * gradient controller and AIMD load-scheduler circuit (Aperture gradient-controller.go, aimd-load-scheduler.go),
 * as a pure engine.  No I/O and no clock reads: the caller passes time in.
 *
 * Three layers, each usable alone:
 *
 *   sl_gradient()      Aperture gradient-controller.go: one gradient-controller evaluation.
 *   sl_aimd_step()     Aperture aimd-load-scheduler.go: one control period from its (SIGNAL, SETPOINT,
 *                      OBSERVED) triple; updates the integrator.  This is
 *                      what the vectors and `sluicectl replay` drive.
 *   sl_aimd_period()   Aperture average-latency blueprint, aimd-load-scheduler.go: the daemon's entry.  Closes the current
 *                      period of latency and token observations, derives
 *                      SIGNAL (mean latency over the signal window), SETPOINT
 *                      (baseline mean over the long-term window x tolerance,
 *                      refreshed every baseline period) and OBSERVED
 *                      (accepted / (accepted + rejected) tokens over the
 *                      signal window), then steps.
 *   sl_aimd_period_signal() is the same with SIGNAL given directly (an
 *                      external signal, or a trace): the baseline then
 *                      averages the per-period signal values.
 *
 * Validity is "not NaN" (±Inf is valid), as in Aperture.  Every invalid
 * input fails open: an invalid published multiplier means pass-through.
 *
 * Deliberate departures from Aperture (both documented in the spec as
 * worth fixing), selectable so the Aperture behaviour stays reproducible:
 *
 *   - baseline_excludes_overload (default ON for policies, see
 *     sl_aimd_params_from_policy): a period judged overloaded does not
 *     enter the long-term baseline, so sustained or repeated overload cannot
 *     ratchet the setpoint up (Aperture average-latency blueprint: 62.5 ms -> 194 ms in the
 *     closed-loop reference).  Escape hatch built in: if overload lasts a
 *     whole baseline window, every healthy period has aged out, the baseline
 *     is empty, the setpoint becomes invalid, overload turns false and the
 *     baseline relearns the new normal (a permanently slower service is thus
 *     throttled for at most one baseline window, then accepted).
 *   - min_load_multiplier > 0: a floor under a throttled multiplier (AIMD
 *     has none; repeated overload otherwise drives it towards 0, Aperture aimd-load-scheduler.go).
 *     0 (the default) keeps Aperture's behaviour and the vectors.
 *
 * Caller duties (the daemon):
 *   - sl_aimd_observe_latency() for each completed connection of the
 *     policy's selection (workload duration, excluding admission wait).
 *   - sl_aimd_observe_tokens() with every admission decision, counting
 *     connections admitted in pass-through as accepted: otherwise OBSERVED
 *     is 0/0 (invalid) while in pass-through and the first overloaded
 *     period would fail open instead of throttling.
 *   - sl_aimd_period() once per params.period_ns.
 */
#ifndef SLUICE_AIMD_H
#define SLUICE_AIMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sl_policy_cfg;

/* Rings are capped: a window longer than this many periods is shortened to
 * it (sl_aimd_init reports the effective lengths in the state). */
#define SL_AIMD_MAX_SLOTS 65536u

struct sl_aimd_params {
	/* Aperture gradient-controller.go gradient controller */
	double slope;        /* != 0; < 0: overload when signal > setpoint */
	double min_gradient; /* <= max_gradient */
	double max_gradient;
	/* Aperture aimd-load-scheduler.go circuit */
	double linear_increment;    /* per period, > 0 */
	double max_load_multiplier; /* > 0; >= it => pass-through; integrator start */
	double min_load_multiplier; /* floor of a throttled multiplier; 0 = none */
	/* Aperture average-latency blueprint signals and timing */
	uint64_t period_ns;          /* control period, 10 s */
	uint64_t signal_window_ns;   /* SIGNAL and OBSERVED window, 30 s */
	uint64_t baseline_window_ns; /* SETPOINT baseline window, 30 min */
	uint64_t baseline_period_ns; /* SETPOINT refresh, 30 s */
	double tolerance;            /* SETPOINT = baseline x tolerance, 1.25 */
	bool baseline_excludes_overload;
};

/* Defaults of Aperture's average-latency blueprint, with its baseline. */
void sl_aimd_params_default(struct sl_aimd_params *p);
/* From a loaded policy; baseline_excludes_overload = true (sluice's fix). */
void sl_aimd_params_from_policy(struct sl_aimd_params *p,
				const struct sl_policy_cfg *pol);

/*
 * Aperture gradient-controller.go.  Returns control_variable x clamp(pow(signal/setpoint, slope),
 * min_gradient, max_gradient), or NaN when signal, setpoint or
 * control_variable is NaN, setpoint == 0, or the power is NaN.  *gradient
 * (may be NULL) gets the clamped gradient (NaN when it is not defined: an
 * invalid signal/setpoint or setpoint == 0), even when control_variable is
 * invalid.
 */
double sl_gradient(const struct sl_aimd_params *p, double signal, double setpoint,
		   double control_variable, double *gradient);

/* One period's result.  NaN = invalid. */
struct sl_aimd_out {
	double signal;          /* SIGNAL (ms for sl_aimd_period) */
	double setpoint;        /* SETPOINT, same unit */
	double observed;        /* OBSERVED load multiplier */
	bool overload;
	double gradient;        /* clamped gradient (Aperture gradient-controller.go), NaN if undefined */
	double integrator;      /* after this period's update */
	double lm_overload;     /* OBSERVED x gradient */
	double lm_normal;       /* OBSERVED + integrator */
	double desired;         /* the selected branch, before publishing (NaN if invalid) */
	double load_multiplier; /* published: 0 in pass-through, else max(desired, floor) */
	bool pass_through;
};

/* Per-period ring of (sum, count) pairs. */
struct sl_aimd_ring {
	double *sum;
	double *cnt;
	size_t n, head; /* head = next slot to overwrite */
	double tot_sum, tot_cnt;
};

struct sl_aimd {
	struct sl_aimd_params p;
	double integrator;       /* I, starts at max_load_multiplier */
	double setpoint;         /* held between baseline refreshes (NaN = none) */
	unsigned refresh_every;  /* baseline refresh, in periods (>= 1) */
	unsigned since_refresh;  /* periods since the last refresh */
	/* current (open) period */
	double cur_lat_sum_ms;
	uint64_t cur_lat_cnt;
	double cur_acc, cur_rej;
	/* completed periods */
	struct sl_aimd_ring sig;      /* latency, signal window */
	struct sl_aimd_ring tok;      /* sum = accepted, cnt = accepted + rejected */
	struct sl_aimd_ring base;     /* latency, baseline window */
	uint64_t last_period_ns;      /* now of the last sl_aimd_period (0 before) */
	bool started;
	uint64_t periods;             /* completed periods */
};

/* 0, -EINVAL (bad params) or -ENOMEM.  A fresh state is in pass-through. */
int sl_aimd_init(struct sl_aimd *st, const struct sl_aimd_params *p);
void sl_aimd_free(struct sl_aimd *st);
/* Forget all history and restart (integrator back at max). */
void sl_aimd_reset(struct sl_aimd *st);

/* Check params; on error writes why (if why != NULL) and returns -EINVAL. */
int sl_aimd_params_check(const struct sl_aimd_params *p, char *why, size_t len);

/* A completed connection's duration (ns).  now is accepted for symmetry and
 * future use; observations land in the open period. */
void sl_aimd_observe_latency(struct sl_aimd *st, uint64_t now_ns, uint64_t latency_ns);
/* Tokens admitted (including pass-through) and rejected since the last call. */
void sl_aimd_observe_tokens(struct sl_aimd *st, double accepted, double rejected);

/*
 * Close the open period at now_ns and run one control period (Aperture aimd-load-scheduler.go).  If
 * whole periods were missed (now - previous call >= 1.5 x period), the
 * windows age by the missed periods first (as empty periods); the integrator
 * still steps once per call.
 */
void sl_aimd_period(struct sl_aimd *st, uint64_t now_ns, struct sl_aimd_out *out);

/*
 * One period with SIGNAL given (NaN = no valid value) and OBSERVED given
 * (NaN = invalid).  The baseline averages per-period signal values (each
 * valid period weighs 1) over the baseline window; the token ring and the
 * open period are not used.
 */
void sl_aimd_period_signal(struct sl_aimd *st, double signal, double observed,
			   struct sl_aimd_out *out);

/*
 * sl_aimd_period_signal() with OBSERVED from the token window, as
 * sl_aimd_period() computes it: the daemon's entry for an external signal.
 */
void sl_aimd_period_external(struct sl_aimd *st, double signal, struct sl_aimd_out *out);
/*
 * Aperture aimd-load-scheduler.go alone: one period from SIGNAL, SETPOINT and OBSERVED (NaN =
 * invalid).  Updates st->integrator; nothing else in st changes.
 */
void sl_aimd_step(struct sl_aimd *st, double signal, double setpoint, double observed,
		  struct sl_aimd_out *out);

#endif
