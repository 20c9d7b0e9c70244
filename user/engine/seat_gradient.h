/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Sluice's own adaptive mode (pure): a gradient on a limit of connections
 * in flight, where Aperture's AIMD puts a multiplier on an admission rate.
 * No I/O, no clock reads: the caller passes time, completions and the
 * count in flight in.
 *
 * Why a limit of connections and not a rate: a rate admits, during one
 * control period, whatever arrives at it; a limit bounds what is in the
 * service at every moment, so a surge piles up at most to the limit, and
 * the excess waits (deferred, fair-queued) or is refused before it enters.
 *
 * The control law, every decision window:
 *
 *   X  = completions per second in the window (the service's throughput),
 *   I  = the mean count in flight over the window,
 *   S  = the latency the window shows: the median time from admission
 *        (past the limit) to close of the connections admitted since the
 *        limit last moved, their wait for a seat downstream included (a
 *        priority level's queue: what the limit admits waits there, and
 *        counts in flight while it does, so Little's law and S agree;
 *        without it a level that queues hides the limit's own excess), ("fresh": no
 *        cutting again on the pile-up of an earlier limit); or, while a
 *        pile-up forms (at least 8 and four times more in flight than the
 *        throughput carries at T) or nothing fresh completed, the larger of
 *        that and I / X (Little's law: what the load in flight will take,
 *        known before its slow completions arrive, which is what stops a
 *        pile-up within a window instead of a control period),
 *   B  = the baseline: the lower decile of the fresh medians of the last
 *        baseline window's unloaded windows (below), of the service's own
 *        time only (seat to close: a queue downstream in pass-through is
 *        load, not the service's unloaded latency),
 *   T  = B x tolerance, the latency the service may take.
 *
 *   S > T (overload):   limit <- max(min, min(limit, I) x max(min_gradient, T / S))
 *                       For a processor-sharing service at saturation S = I / X, so
 *                       the new limit is X x T: the throughput times the target
 *                       latency (a bandwidth-delay product), reached in one step.
 *   S <= T, and the limit binds (I >= 0.9 limit, or connections wait):
 *                       limit <- limit + max(1, limit x max_increase) (multiplicative
 *                       growth while latency stays near the baseline: from 1 to 100 in
 *                       about 25 windows, not Aperture's 400 s of additive steps)
 *   S <= T, not binding: hold (anti-windup: an unused limit does not grow);
 *                       after release_ns of that, pass-through
 *   limit at max and S <= T: pass-through (no limit) until the next overload,
 *                       which starts from what is in flight, not from max.
 *
 * The baseline is the lower decile of the fresh medians of the last
 * baseline window, not their minimum: a burst of bad samples (connections
 * that close at once) must fill a tenth of the windows to move it (issue 23:
 * a minimum fell from 58 ms to 0.6 ms in 13 s of them, and the limit sat at
 * 1).  While the limit holds the service near T its windows show T, not B:
 * they are not the baseline's evidence, and every probe_ns one window runs
 * at half the limit, which shows the unloaded latency again (Envoy
 * recalculates its minimum RTT the same way); a service that became slower
 * for good shows it there, and the baseline follows within one baseline
 * window (SL_SG_BASELINE_KEEP probes, five minutes, under a lasting limit:
 * B always keeps that many windows, so it never expires under a limit).
 *
 * Decisions wait for evidence: a window closes after min_samples fresh
 * completions, or window_max_ns with at least one, or (nothing completing
 * while connections are in flight) after 4 T with I / X infinite.  Without a
 * baseline (too few fresh samples yet) nothing is limited.
 */
#ifndef SLUICE_SEAT_GRADIENT_H
#define SLUICE_SEAT_GRADIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SL_SG_MAX_SAMPLES    512  /* fresh durations kept per window (a reservoir past it) */
#define SL_SG_BASELINE_SLOTS 256  /* window medians the baseline remembers */
#define SL_SG_BASELINE_DECILE_OF 10 /* B is the (n / 10)-th lowest of n: the lower decile */
#define SL_SG_BASELINE_KEEP  10   /* window medians B keeps however old */

struct sl_sg_params {
	double tolerance;         /* T = B x tolerance; 1.25 */
	uint32_t min_limit;       /* the floor of a cut; 1 */
	uint32_t max_limit;       /* at it, pass-through; > min_limit */
	double min_gradient;      /* the deepest cut of one decision; 0.5 */
	double max_increase;      /* growth per decision, a fraction of the limit; 0.25 */
	uint32_t min_samples;     /* fresh completions that close a window; 10 */
	uint64_t window_min_ns;   /* a window lasts at least this; 100 ms */
	uint64_t window_max_ns;   /* and closes after this with any fresh sample; 2 s */
	uint64_t baseline_ns;     /* how long a window median counts for B; 60 s */
	uint64_t probe_ns;        /* while limiting, one window at half the limit this often,
				   * to re-measure B; 30 s */
	uint64_t release_ns;      /* healthy with the limit unused this long: pass-through; 10 s */
};

/* Defaults as in the comments above; max_limit must be set by the caller. */
void sl_sg_params_default(struct sl_sg_params *p, uint32_t max_limit);
struct sl_policy_cfg;
/* The parameters a policy in mode sluice runs with (spec.adaptive and
 * its latency_tolerance_multiplier, within [1, 10]): the daemon's, and
 * those of sluicectl replay and simulate. */
void sl_sg_params_from_policy(struct sl_sg_params *p, const struct sl_policy_cfg *pc);
struct sl_workload_params;
/* 0, or -EINVAL with why. */
int sl_sg_params_check(const struct sl_sg_params *p, char *why, size_t why_len);

enum sl_sg_reason {
	SL_SG_NO_BASELINE = 0, /* not enough history: pass-through */
	SL_SG_OVERLOAD,        /* S > T: cut */
	SL_SG_INCREASE,        /* S <= T and the limit binds: grow */
	SL_SG_HOLD,            /* S <= T, limit unused: hold */
	SL_SG_PASS_THROUGH,    /* S <= T at max_limit: unlimited */
};
extern const char *const sl_sg_reason_names[];

/* What one decision saw and did (for sluicectl controller and metrics). */
struct sl_sg_decision {
	uint64_t at_ns;
	enum sl_sg_reason reason;
	double signal_ms;     /* S (NaN without) */
	double fresh_ms;      /* the fresh median (NaN without) */
	double little_ms;     /* I / X (+Inf when nothing completed) */
	double baseline_ms;   /* B (NaN without) */
	double target_ms;     /* T */
	double throughput;    /* X, completions per second */
	double in_flight;     /* I */
	double gradient;      /* T / S, clamped (1 when not cutting) */
	uint32_t limit_before, limit_after;
	bool pass_through;
};

struct sl_sg {
	struct sl_sg_params p;
	double limit;
	bool pass_through;
	uint64_t epoch_ns;        /* the limit last moved: samples admitted before are stale */
	/* The window in progress. */
	uint64_t window_start_ns, last_step_ns;
	double samples[SL_SG_MAX_SAMPLES];  /* admission to close, ms (S) */
	double service[SL_SG_MAX_SAMPLES];  /* seat to close, ms, the same connections (B) */
	uint32_t n_samples;       /* fresh samples seen (a reservoir keeps SL_SG_MAX_SAMPLES) */
	uint64_t completions;     /* all completions in the window (fresh or not) */
	double in_flight_integral;/* sum of in_flight x dt, seconds */
	double in_flight_time;
	uint32_t waiting;         /* connections the caller holds back now */
	uint64_t rng;
	/* Window medians with their times, for B. */
	double base_ms[SL_SG_BASELINE_SLOTS];
	uint64_t base_at[SL_SG_BASELINE_SLOTS];
	unsigned base_head, base_n;
	uint64_t unused_since_ns; /* healthy with the limit unused since (0: not) */
	/* Re-measuring the baseline. */
	uint64_t last_probe_ns;
	bool probing;
	double probe_saved;       /* the limit the probe interrupted */
	struct sl_sg_decision last;
	bool have_last;
};

/* Start at now in pass-through, the limit at max_limit. */
void sl_sg_init(struct sl_sg *sg, const struct sl_sg_params *p, uint64_t now_ns);
/* One completed connection: when the limit admitted it, how long it then
 * waited for its seat downstream (queued_ns; 0 when it got one at once)
 * and how long it held the seat (served_ns). */
void sl_sg_complete(struct sl_sg *sg, uint64_t admitted_ns, uint64_t queued_ns, uint64_t served_ns);
/* Every tick: the count in flight now (and how many the caller holds back).
 * Returns true when a decision was taken (*out filled). */
bool sl_sg_step(struct sl_sg *sg, uint64_t now_ns, uint32_t in_flight, uint32_t waiting,
		struct sl_sg_decision *out);
/* The limit to enforce now; UINT32_MAX in pass-through. */
uint32_t sl_sg_limit(const struct sl_sg *sg);

#endif
