/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The agent-side load scheduler of an AverageLatencySchedulingPolicy
 * (Aperture workload-scheduler/scheduler.go): Aperture's load-multiplier token bucket, its
 * incoming-rate ring, the one-flow admission algorithm with queue_timeout,
 * weighted fair queuing over workloads by priority and the
 * workload_latency_based_tokens estimate, applied to connections.
 *
 * A flow (Aperture's "request") is a connection.  Its tokens are 1, the
 * workload's `tokens`, the workload's latency-based estimate (mean duration
 * of its completed connections in ms over 30 min, Aperture workload_latency_based_tokens) or a per-arrival
 * override, in Aperture's precedence order (override > estimate > tokens > 1).
 *
 * Aperture's head-of-queue "sleep" is modelled with time: the head reserves
 * its tokens and gets an admission time; sl_ls_tick() (or any later call)
 * admits it when that time has come and makes the next flow the head.
 * Events are processed in their own time order, so the result does not
 * depend on how often the caller ticks; callbacks report the event time.
 *
 * Controlled delay (sluice's, not Aperture's: issue 23), the priority
 * levels' rule (engine/queueset.h, sl_qs_shed) for the workloads' queues:
 * once a workload's queue has not been empty for its delay_interval, its
 * flows that waited past delay_target are rejected, oldest first, all but
 * its newest (the head that holds a reservation is not in the queue).  A
 * burst that drains within the interval waits; a standing backlog is
 * refused at once instead of waiting out its clients.  A workload is
 * Aperture's flow, there are no clients inside it: the priority level's
 * fair queues that come after keep a light client apart from a heavy one.
 * delay_target 0 is Aperture's scheduler exactly.
 *
 * Pure code: time is CLOCK_MONOTONIC nanoseconds passed in by the caller
 * (a `now` older than the last one seen is treated as the last one), no
 * clock reads, no I/O, no threads, no locking (the caller serialises all
 * calls on one scheduler).
 */
#ifndef SLUICE_LOADSCHED_H
#define SLUICE_LOADSCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sl_policy_cfg;
struct sl_workload_params;

#define SL_LS_NS_PER_S        UINT64_C(1000000000)
#define SL_LS_NO_TIMEOUT      UINT64_MAX                    /* == SL_QUEUE_TIMEOUT_UNSET */
#define SL_LS_TOKENS_AUTO     (-1.0)                        /* arrive: no override */
#define SL_LS_DEADLINE_MARGIN_NS (10 * UINT64_C(1000000))   /* decision_deadline_margin */
#define SL_LS_DECISION_PERIODS 5                            /* Aperture: a decision lives 5 periods */
#define SL_LS_DECISION_TTL_NS (SL_LS_DECISION_PERIODS * 10 * SL_LS_NS_PER_S) /* ... of the default 10 s */

/* How long a throttle decision holds for a control period: 5 periods
 * (SL_LS_DECISION_TTL_NS for 0). */
uint64_t sl_ls_decision_ttl_ns(uint64_t control_period_ns);

/* ---- incoming-rate ring (Aperture load-multiplier-token-bucket.go) ---------------------------------------------- */

#define SL_LS_RING_SLOTS    30                     /* completed slots in the window */
#define SL_LS_RING_SLOT_NS  SL_LS_NS_PER_S

/*
 * 30 completed one-second slots plus the current one.  Every arriving flow
 * with tokens > 0 adds its tokens to the current slot; slots advance lazily
 * on arrival.  rate = Σ completed slots / 30 s (the current slot is ignored).
 * Bootstrapping until the ring has rotated once (30 s after creation or
 * after a reset); an arrival that finds every slot stale (more than 30
 * slots passed since the current slot began) resets the ring and
 * re-enters bootstrap (fail-open after idle).
 */
struct sl_ls_ring {
	double slot[SL_LS_RING_SLOTS + 1];
	unsigned cur;          /* index of the current slot */
	uint64_t cur_start;    /* start time of the current slot */
	uint64_t boot_until;   /* bootstrapping while now < boot_until */
};
void sl_ls_ring_init(struct sl_ls_ring *r, uint64_t now);
/* Advances, resets after idle, adds tokens (> 0) to the current slot.
 * Returns whether the ring is bootstrapping at `now` (after a reset too). */
bool sl_ls_ring_add(struct sl_ls_ring *r, uint64_t now, double tokens);
/* Tokens per second over the completed slots as of `now` (read-only:
 * accounts for slots that would have rotated out). */
double sl_ls_ring_rate(const struct sl_ls_ring *r, uint64_t now);
bool sl_ls_ring_bootstrapping(const struct sl_ls_ring *r, uint64_t now);

/* ---- token bucket (Aperture load-multiplier-token-bucket.go, workload-scheduler/scheduler.go) ------------------------------------ */

/*
 * fill tokens/s, capacity = fill (one second of burst).  available accrues
 * continuously (Δt × fill, capped at capacity) and may go negative
 * (reservations by the queue head).
 */
struct sl_ls_bucket {
	double fill, capacity, available;
	uint64_t last_ns;
};
void sl_ls_bucket_init(struct sl_ls_bucket *b, uint64_t now);
void sl_ls_bucket_advance(struct sl_ls_bucket *b, uint64_t now);
/* Credit elapsed time at the old rate, then fill = capacity = max(fill, 0);
 * available is capped at the new capacity (so a zero rate empties it). */
void sl_ls_bucket_set_fill(struct sl_ls_bucket *b, uint64_t now, double fill);
/* Aperture workload-scheduler/scheduler.go: takes and returns true iff available > tokens (strict). */
bool sl_ls_bucket_take_if_available(struct sl_ls_bucket *b, uint64_t now, double tokens);

enum sl_ls_reserve {
	SL_LS_RESERVE_NOW = 0,    /* reserved, wait 0: admit now */
	SL_LS_RESERVE_WAIT = 1,   /* reserved, admit after *wait_ns */
	SL_LS_RESERVE_REJECT = 2, /* fill 0, or the wait exceeds the timeout: nothing taken */
};
/*
 * Aperture workload-scheduler/scheduler.go, the queue head: available −= tokens; wait = −available / fill;
 * fill == 0 ⇒ reject; timeout_ns (SL_LS_NO_TIMEOUT = unbounded) < wait ⇒
 * refund and reject.  *wait_ns (may be NULL) gets the wait, rounded up to
 * the ns (also on reject when fill > 0; saturates near UINT64_MAX / 2).
 */
enum sl_ls_reserve sl_ls_bucket_reserve(struct sl_ls_bucket *b, uint64_t now, double tokens,
					uint64_t timeout_ns, uint64_t *wait_ns);
/* Give back a reservation (a cancelled head). */
void sl_ls_bucket_refund(struct sl_ls_bucket *b, double tokens);

/* ---- workload latency estimate (Aperture workload_latency_based_tokens) --------------------------------------- */

#define SL_LS_LAT_SLOTS    30
#define SL_LS_LAT_SLOT_NS  (60 * SL_LS_NS_PER_S)   /* 30 × 1 min = 30 min window */

/* ---- configuration ------------------------------------------------------------ */

struct sl_ls_workload {
	double priority;           /* > 0 (default 1) */
	double tokens;             /* > 0, or 0 = unset (then 1) */
	uint64_t queue_timeout_ns; /* SL_LS_NO_TIMEOUT = unset (unbounded); 0 = only if available now */
	uint64_t delay_target_ns;  /* controlled delay; 0: none (Aperture) */
	uint64_t delay_interval_ns;
};

struct sl_ls_params {
	const struct sl_ls_workload *workloads; /* index order = match order; copied by create */
	size_t n_workloads;
	struct sl_ls_workload default_workload; /* default_workload_parameters */
	bool latency_based_tokens;              /* workload_latency_based_tokens */
	uint64_t decision_ttl_ns;               /* 0: decisions never go stale; else
						   SL_LS_DECISION_TTL_NS in Aperture */
};

struct sl_ls_workload sl_ls_workload_from_cfg(const struct sl_workload_params *p);
/* 0, or -EINVAL with the reason in why (priority <= 0 or not finite,
 * tokens < 0 or not finite, a delay target without an interval or beyond
 * it, too many workloads). */
int sl_ls_params_validate(const struct sl_ls_params *p, char *why, size_t why_len);

/* ---- life cycle ------------------------------------------------------------------ */

struct sl_ls;

/*
 * on_admit: a QUEUED flow is admitted (its tokens are taken).  on_reject: a
 * QUEUED flow is rejected (its deadline passed, or its reserved wait would
 * exceed it, or controlled delay shed it: why says which).  Flows decided by sl_ls_arrive() itself are reported only by
 * its return value.  Callbacks run after the state is consistent, in event
 * order, with the event time (<= the call's now); they may call back into
 * the scheduler (nested notifications are delivered by the outermost loop,
 * still in order).  Either may be NULL.
 */
enum sl_ls_why {
	SL_LS_TIME_OUT, /* its deadline passed, or its reserved wait would pass it */
	SL_LS_SHED,     /* controlled delay: its workload's queue stood, it waited past the target */
};
typedef void (*sl_ls_admit_fn)(void *ctx, uint64_t id, uint64_t now);
typedef void (*sl_ls_reject_fn)(void *ctx, uint64_t id, uint64_t now, enum sl_ls_why why);

/* Starts in pass-through and bootstrapping (Aperture aimd-load-scheduler.go, load-multiplier-token-bucket.go).
 * 0, -EINVAL (why says what) or -ENOMEM. */
int sl_ls_create(struct sl_ls **out, const struct sl_ls_params *p, uint64_t now,
		 sl_ls_admit_fn on_admit, sl_ls_reject_fn on_reject, void *ctx,
		 char *why, size_t why_len);
/* The same from the policy's configuration (workloads, default parameters,
 * workload_latency_based_tokens; decisions go stale after
 * SL_LS_DECISION_TTL_NS). */
int sl_ls_create_for_policy(struct sl_ls **out, const struct sl_policy_cfg *cfg, uint64_t now,
			    sl_ls_admit_fn on_admit, sl_ls_reject_fn on_reject, void *ctx,
			    char *why, size_t why_len);
/* Frees every waiting flow without reporting it.  NULL is fine.  Not from a callback. */
void sl_ls_free(struct sl_ls *ls);

/*
 * A decision from the controller (Aperture aimd-load-scheduler.go, load-multiplier-token-bucket.go).  pass_through, or lm NaN
 * (invalid) ⇒ pass-through: arrivals are admitted without tokens and the
 * waiting flows are admitted at once, in WFQ order; the bucket's rate is 0
 * (a later throttle starts with an empty bucket).  Otherwise the bucket is
 * credited at its old rate, then fill = capacity = max(lm, 0) × incoming
 * rate (snapshotted now).  With decision_ttl_ns, a throttle decision older
 * than that reverts to pass-through (fail open).
 */
void sl_ls_set_multiplier(struct sl_ls *ls, uint64_t now, double lm, bool pass_through);

/* ---- flows ---------------------------------------------------------------------- */

enum sl_ls_outcome {
	SL_LS_ADMITTED = 0, /* now (bootstrap, pass-through, tokens 0, available, or wait 0) */
	SL_LS_QUEUED = 1,   /* waiting; on_admit or on_reject reports the outcome */
	SL_LS_REJECTED = 2, /* fill 0 or the wait exceeds the timeout */
};

/*
 * Aperture workload-scheduler/scheduler.go arrival.  id: the caller's cookie, unique among waiting flows (not
 * checked).  workload: 0..n_workloads-1, or -1 for the default workload.
 * tokens: SL_LS_TOKENS_AUTO, or >= 0 to override (Aperture's tokens label).
 * client_timeout_ns: the client's remaining deadline, SL_LS_NO_TIMEOUT if
 * none; the timeout is min(workload queue_timeout, client − 10 ms margin).
 * Returns an sl_ls_outcome (>= 0), or -EINVAL (workload, tokens) / -ENOMEM
 * with nothing changed.
 */
int sl_ls_arrive(struct sl_ls *ls, uint64_t now, uint64_t id, int workload, double tokens,
		 uint64_t client_timeout_ns);

/* A waiting flow leaves (client gone): rejected without a callback, its
 * reservation refunded if it was the head.  0 or -ENOENT.  O(1) expected
 * (an id index) plus O(log waiting) to unlink it.  With duplicate ids the
 * head goes first, then the earliest in workload, then arrival order. */
int sl_ls_cancel(struct sl_ls *ls, uint64_t now, uint64_t id);

/* An admitted connection of `workload` (-1 default) finished after
 * duration_ns (excluding the admission wait): feeds the latency estimate
 * (Aperture workload_latency_based_tokens).  0 or -EINVAL. */
int sl_ls_complete(struct sl_ls *ls, uint64_t now, int workload, uint64_t duration_ns);

/* Admits due heads (in WFQ order), rejects expired flows (an index by
 * deadline: O(log waiting) per expired flow, nothing for the others) and
 * those controlled delay sheds (O(workloads) to find the next),
 * applies decision staleness and the end of bootstrap.  Returns the next
 * time something is due (UINT64_MAX when nothing is). */
uint64_t sl_ls_tick(struct sl_ls *ls, uint64_t now);
/* The next due time without doing anything (UINT64_MAX: none). */
uint64_t sl_ls_next_due(const struct sl_ls *ls);

/* ---- inline admission by the data path ------------------------------------------ */

/*
 * The data path admits connections inline from a credit of tokens the
 * daemon grants it each tick; this scheduler's bucket stays the only
 * bucket.  Each tick: sl_ls_observe_inline() for what the data path
 * admitted, sl_ls_ungrant() for what it left of the last grant, then a new
 * sl_ls_grant().  Flows the data path deferred (their tokens did not fit in
 * the credit left) go through sl_ls_arrive() as usual, also while a grant
 * is outstanding: they see the bucket as it is (near 0), so they queue and
 * the head reserves; the caller then ungrants the leftover credit.
 */

/* Tokens the data path may admit inline until the next grant (Aperture workload-scheduler/scheduler.go
 * done by the data path): INFINITY in pass-through or while bootstrapping
 * (admit without tokens); 0 while any flow waits or when the bucket is
 * empty or negative; otherwise everything available (advanced to now),
 * which is taken out of the bucket (available becomes 0). */
double sl_ls_grant(struct sl_ls *ls, uint64_t now);
/* Unused granted tokens come back: available += tokens, capped at capacity.
 * tokens <= 0 or not finite: no-op.  A waiting head's admission time comes
 * forward to what the smaller deficit needs (now if none is left), as if
 * the tokens had never been granted. */
void sl_ls_ungrant(struct sl_ls *ls, uint64_t now, double tokens);
/* Flows of `workload` (-1 default) the data path admitted inline since the
 * last call, with their tokens: recorded in the incoming-rate ring like
 * arrivals (Aperture load-multiplier-token-bucket.go: this is how the rate is known in pass-through; an idle
 * window re-enters bootstrap as an arrival would), counted as admitted
 * flows, inline_admitted flows and accepted tokens (cumulative stats,
 * per-workload stats and the period counters of sl_ls_take_period).  Does
 * not touch the bucket (the tokens came out of a grant).  0 or -EINVAL (bad
 * workload, negative or non-finite tokens). */
int sl_ls_observe_inline(struct sl_ls *ls, uint64_t now, int workload, uint64_t flows,
			 double tokens);
/* A flow this scheduler admitted was then refused by another limiter (its
 * priority level): its tokens go back to the bucket (capped at capacity,
 * bringing a waiting head forward like sl_ls_ungrant) and move from
 * accepted to rejected in the period counters and stats (Aperture workload-scheduler/scheduler.go;
 * accepted does not go below 0; flow counts are unchanged).  0 or -EINVAL
 * (bad workload, negative or non-finite tokens). */
int sl_ls_return(struct sl_ls *ls, uint64_t now, int workload, double tokens);
/* The tokens an arrival of `workload` (-1 default) without override would
 * take now (as of the last time seen): the value sl_ls_workload_stats.tokens
 * reports.  NaN for a bad index. */
double sl_ls_workload_tokens(const struct sl_ls *ls, int workload);

/* ---- introspection ------------------------------------------------------------- */

/* Tokens accepted / rejected since the previous call (or creation); resets
 * them.  The controller's OBSERVED = accepted / (accepted + rejected). */
void sl_ls_take_period(struct sl_ls *ls, double *accepted, double *rejected);

struct sl_ls_stats {
	bool pass_through;
	bool bootstrapping;
	double load_multiplier;     /* last throttle multiplier (NaN in pass-through) */
	double fill_rate, capacity, available;
	double incoming_rate;       /* tokens/s over the last 30 completed slots */
	uint64_t waiting;           /* queued flows, the head included */
	bool head;                  /* a head holds a reservation */
	uint64_t head_id, head_admit_at;
	double head_vft;            /* the head's virtual finish time (NaN: it
				       entered an idle queue, outside the heap) */
	double vt;                  /* scheduler virtual time */
	uint64_t generation;        /* WFQ generation (idle periods) */
	double accepted_tokens, rejected_tokens, incoming_tokens; /* cumulative */
	uint64_t admitted, deferred, rejected;                    /* flows, cumulative */
	uint64_t inline_admitted;   /* of admitted: by the data path (sl_ls_observe_inline) */
	uint64_t shed;              /* of rejected: by controlled delay */
};
void sl_ls_get_stats(const struct sl_ls *ls, uint64_t now, struct sl_ls_stats *st);

/* Workloads 0..n_workloads-1, then the default workload. */
size_t sl_ls_workload_count(const struct sl_ls *ls);

struct sl_ls_workload_stats {
	double priority;
	double configured_tokens;   /* 0 = unset */
	uint64_t queue_timeout_ns;
	double token_estimate;      /* mean duration in ms over 30 min; NaN without data */
	double tokens;              /* what an arrival without override takes now */
	uint64_t admitted;          /* flows admitted (at once or after waiting) */
	uint64_t deferred;          /* flows that had to wait (QUEUED) */
	uint64_t rejected;          /* flows rejected (at once, time-out, shed, cancel) */
	uint64_t inline_admitted;   /* of admitted: by the data path (sl_ls_observe_inline) */
	uint64_t shed;              /* of rejected: by controlled delay */
	uint64_t waiting;           /* flows waiting now (the head included) */
	double accepted_tokens, rejected_tokens;
	double flow_vt;             /* WFQ virtual time of the workload's flow */
	double flow_head_vft;       /* vft of its first waiting flow in the heap, or NaN */
	uint64_t completions;       /* sl_ls_complete calls */
};
/* index: 0..sl_ls_workload_count()-1 (the last is the default).  0 or -ENOENT. */
int sl_ls_get_workload_stats(const struct sl_ls *ls, uint64_t now, size_t index,
			     struct sl_ls_workload_stats *st);

/* Verifies internal invariants.  0, or -EPROTO with the first violation in why. */
int sl_ls_check(const struct sl_ls *ls, char *why, size_t why_len);

#endif
