/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The fair-queuing engine of one priority level: a Kubernetes APF QueueSet
 * (Kubernetes queueset.go) applied to connections.
 *
 * A request is a connection.  Its width is its seats (InitialSeats =
 * FinalSeats = seats, AdditionalLatency = 0: there is no final phase).  It
 * executes from admission until it closes; its real service time is its
 * duration, reported at completion.
 *
 * Pure code: time is CLOCK_MONOTONIC nanoseconds passed in by the caller
 * (a `now` older than the last one seen is treated as the last one), no
 * clock reads, no I/O, no threads, no locking (the caller serialises all
 * calls on one QueueSet).  Memory is allocated only for requests, queues,
 * the id table and the dispatch-notification buffer.
 *
 * R, nextDispatchR and work are integer SeatSeconds (Kubernetes request/seat_seconds.go):
 * 1 unit = 1e-8 seat-second.
 */
#ifndef SLUICE_QUEUESET_H
#define SLUICE_QUEUESET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- SeatSeconds (Kubernetes request/seat_seconds.go) ------------------------------------------------- */

#define SL_SS_PER_SEAT_SECOND UINT64_C(100000000)         /* units in 1 seat-second */
#define SL_QS_EPOCH_HIGH_R    UINT64_C(0xC000000000000000) /* ¾·2^64: advance the epoch */
#define SL_QS_EPOCH_DECREMENT UINT64_C(0x8000000000000000) /* 2^63: subtracted per epoch */

/* round(seats × ns / 10), half away from zero; saturates at UINT64_MAX. */
uint64_t sl_seatsec_from_seats_ns(uint64_t seats, uint64_t ns);
/* trunc(units / seats × 10): the per-seat duration in ns (seats >= 1;
 * saturates at UINT64_MAX). */
uint64_t sl_seatsec_per_seat_ns(uint64_t units, uint64_t seats);
/* "<int>.<8 digits>ss" as in dump_queues (Kubernetes apf_controller_debug.go).  Returns snprintf's value. */
int sl_seatsec_format(uint64_t units, char *buf, size_t len);

/* ---- configuration -------------------------------------------------------- */

#define SL_QS_EXEMPT      (-1) /* queues: always execute on arrival */
#define SL_QS_REJECT      0    /* queues: concurrency check only (limitResponse Reject) */
#define SL_QS_MAX_SEATS   (1u << 20)           /* widest request accepted */
#define SL_QS_MAX_GUESS_NS (UINT64_C(600) * 1000000000u) /* largest G */

struct sl_qs_config {
	int32_t queues;              /* desiredQueues: -1 exempt, 0 Reject, >= 1 Queue */
	uint32_t hand_size;          /* Queue: 1..15, entropy rule of Kubernetes shufflesharding.go ValidateParameters; 1 when queues = 1 */
	uint32_t queue_length_limit; /* Queue: >= 1 */
	uint64_t guess_ns;           /* G: guessed duration of a connection, 1 ns..600 s */
	/* Controlled delay (sl_qs_shed), sluice's addition: 0 and 0, off;
	 * otherwise 1 ns <= target <= interval. */
	uint64_t delay_target_ns;    /* queueDelayTarget: what a standing queue may make anyone wait */
	uint64_t delay_interval_ns;  /* queueDelayInterval: how long a backlog may stand before it is shed */
};

/* 0, or -EINVAL with the reason in why.  hand_size and queue_length_limit
 * are checked only when queues >= 1 (Kubernetes shufflesharding.go ValidateParameters dealer rules via sl_shuffle_validate). */
int sl_qs_config_validate(const struct sl_qs_config *cfg, char *why, size_t why_len);

/* ---- life cycle ----------------------------------------------------------- */

struct sl_qs;

/* cl: the current concurrency limit in seats.  now: the start of the R
 * meter.  Returns 0, -EINVAL (why says what) or -ENOMEM. */
int sl_qs_create(struct sl_qs **out, const struct sl_qs_config *cfg, uint32_t cl, uint64_t now,
		 char *why, size_t why_len);
/* Frees every request still tracked.  NULL is fine. */
void sl_qs_free(struct sl_qs *qs);

/*
 * Kubernetes queueset.go setConfiguration runtime changes.  R is synced first, then:
 *  - more queues: created at once;
 *  - fewer queues: new arrivals are dealt over the new count; extra queues
 *    drain and are removed when a release leaves one empty (Kubernetes queueset.go finishRequestLocked);
 *  - queues = 0: the previous hand size and queue length limit are kept and
 *    the existing queues keep draining through the dispatch loop;
 *  - queues = -1: arrivals execute at once; anything still queued is
 *    dispatched at once (exempt fits() is always true).
 * A new G applies to requests that arrive afterwards (each request keeps
 * the G it was charged with).  Then the dispatch loop runs.
 * 0, -EINVAL (config unchanged) or -ENOMEM (config unchanged).
 */
int sl_qs_set_config(struct sl_qs *qs, uint64_t now, const struct sl_qs_config *cfg,
		     char *why, size_t why_len);
/* Kubernetes queueset.go setConfiguration: a new CL takes effect at once (R is synced with the old one first);
 * executing requests are never aborted; then the dispatch loop runs. */
void sl_qs_set_cl(struct sl_qs *qs, uint64_t now, uint32_t cl);

/*
 * The requests the dispatch loop (Kubernetes queueset.go dispatchLocked)
 * started from the queues, oldest first: queued requests admitted by an
 * arrival, a completion, a cancel, a withdrawal, an expiry or shed, a CL
 * change or a config change.  The engine calls nobody: each of those
 * operations leaves its dispatches here, in order, and the caller takes
 * them at its call site (`while (sl_qs_next_dispatch(...)) start it;`)
 * before it lets go of the QueueSet.  Taking one may call back into the
 * QueueSet (complete it at once, say); what that dispatches joins the end
 * of the same list.  The request passed to sl_qs_arrive() is never here:
 * its dispatch is the return value SL_QS_DISPATCHED.  at: the time of the
 * operation that started it.  False when none is left.
 */
bool sl_qs_next_dispatch(struct sl_qs *qs, uint64_t *id, uint64_t *at);

/* ---- requests ------------------------------------------------------------- */

enum sl_qs_outcome {
	SL_QS_DISPATCHED = 0,      /* executing now (always, when exempt) */
	SL_QS_QUEUED = 1,          /* waiting; sl_qs_next_dispatch reports its start later */
	SL_QS_REJECT_QUEUE_FULL = 2,  /* Kubernetes queueset.go rejectOrEnqueueToBoundLocked: reason queue-full */
	SL_QS_REJECT_CONCURRENCY = 3, /* Kubernetes queueset.go dispatchSansQueueLocked Reject-type: reason concurrency-limit */
};

/*
 * Arrival (Kubernetes queueset.go rejectOrEnqueueToBoundLocked, dispatchSansQueueLocked).  id: the caller's cookie, unique among live requests.
 * seats: 1..SL_QS_MAX_SEATS.  flow_hash: the flow's 64-bit hash (ignored
 * unless queues > 1).  Returns an sl_qs_outcome (>= 0), or -EEXIST (id
 * already live), -EINVAL (seats) or -ENOMEM, with nothing changed.  A
 * rejected request is not tracked.
 */
int sl_qs_arrive(struct sl_qs *qs, uint64_t now, uint64_t id, uint32_t seats, uint64_t flow_hash);

/* Completion service_ns: take the service time as now − start time. */
#define SL_QS_SERVICE_FROM_CLOCK UINT64_MAX

/*
 * Kubernetes queueset.go finishRequestLocked completion of an executing request.  service_ns is the real service
 * time S (the connection's duration), or SL_QS_SERVICE_FROM_CLOCK.  Syncs R,
 * corrects q.nextDispatchR −= seats × (G − S) (signed, SeatSeconds rounded
 * half away from zero), applies anti-windup, releases the seats, removes the
 * queue if there are more than desired and it is empty, then runs the
 * dispatch loop.  0, -ENOENT (unknown id) or -EBUSY (the request is still
 * waiting: use sl_qs_cancel).
 */
int sl_qs_complete(struct sl_qs *qs, uint64_t now, uint64_t id, uint64_t service_ns);

/*
 * Kubernetes queueset.go removeTimedOutRequestsFromQueueToBoundLocked: a waiting request leaves its queue (deadline or client gone): it is
 * counted as rejected with reason time-out, anti-windup is applied to its
 * queue and the dispatch loop runs (the removed request may have been a wide
 * head that blocked the others).  0, -ENOENT (unknown id) or -EALREADY (it
 * is executing: the dispatch won the race; complete it instead).
 */
int sl_qs_cancel(struct sl_qs *qs, uint64_t now, uint64_t id);
/* The same for a request that goes back to whoever admitted it upstream
 * (its policy's limit fell while it waited here): not a refusal, not
 * counted as one. */
int sl_qs_withdraw(struct sl_qs *qs, uint64_t now, uint64_t id);

/*
 * Time-out sweep: every waiting request with now − arrival > wait_limit_ns
 * is removed exactly like sl_qs_cancel (reason time-out); then the dispatch
 * loop runs.  on_expired (may be NULL) is called for each removed id, oldest
 * first, after the state is consistent.  O(expired): waiting requests are
 * also kept on one list in arrival order.  Returns the number removed.
 */
typedef void (*sl_qs_expired_fn)(void *ctx, uint64_t id);
size_t sl_qs_expire(struct sl_qs *qs, uint64_t now, uint64_t wait_limit_ns,
		    sl_qs_expired_fn on_expired, void *ctx);

/*
 * Controlled delay: a queue that sheds its standing backlog (sluice's own
 * addition to APF; CoDel, RFC 8289, and its fair-queued form FQ-CoDel,
 * RFC 8290, by way of "Fail at Scale", ACM Queue 2015).
 *
 * A queue's backlog starts when a request arrives to an empty FIFO and
 * ends when the FIFO is empty again.  A backlog younger than the interval
 * is a burst: everyone in it may wait (up to the hard wait limit,
 * sl_qs_expire).  A backlog that has stood for the interval is a standing
 * queue: its requests that have waited longer than the target are removed,
 * oldest first (reason shed, on_shed called for each after the state is
 * consistent), except the newest of the queue, which stays so that a seat
 * freed next finds work in it (CoDel likewise never drops a queue's last
 * packet).  So in a standing queue nobody waits past the target but that
 * one request, and nobody anywhere waits past the interval but it.
 *
 * Per queue, not per level: the backlog of a flow that sends more than its
 * share is shed, while a flow that never builds one (a mouse: its request
 * lands on the shortest queue of its hand, usually an empty one, and is
 * the newest of its queue) is never shed.  A mouse whose whole hand is
 * dealt into an elephant's queues is treated as the elephant, as APF
 * itself treats it.  Returns the number shed; 0 when off.
 */
size_t sl_qs_shed(struct sl_qs *qs, uint64_t now, sl_qs_expired_fn on_shed, void *ctx);

/*
 * The waiting requests of the flows `pick` names (every one when pick is
 * NULL) leave at once (reason stalled): the caller found the level
 * stalled, full while nothing closes, and those flows' waiters may be the
 * very clients that hold its seats (a thread blocked in connect() while
 * its other connections wait for it).  on_shed as above.
 */
typedef bool (*sl_qs_flow_pick_fn)(void *ctx, uint64_t flow_hash);
size_t sl_qs_shed_flows(struct sl_qs *qs, uint64_t now, sl_qs_flow_pick_fn pick, void *pick_ctx,
			sl_qs_expired_fn on_shed, void *ctx);

/* ---- introspection -------------------------------------------------------- */

struct sl_qs_stats {
	int32_t desired_queues;      /* config.queues */
	uint32_t queues;             /* queues that exist (>= desired while draining) */
	uint32_t hand_size, queue_length_limit;
	uint64_t guess_ns;
	uint32_t cl;
	uint64_t r;                  /* R, SeatSeconds, as of the last sync */
	uint64_t last_ns;            /* lastRealTime */
	int64_t robin_index;         /* -1 before the first dispatch */
	uint64_t enqueues;           /* shuffle-shard counter (Kubernetes queueset.go shuffleShardLocked) */
	uint64_t waiting;            /* requests waiting */
	uint64_t executing;          /* requests executing (queued and queue-less) */
	uint64_t seats_in_use;       /* all executing requests */
	uint64_t seats_waiting;      /* Σ MaxSeats of waiting requests */
	uint32_t active_queues;      /* NEQ: queues with >= 1 waiting or executing */
	/* counters */
	uint64_t dispatched;         /* every start: immediate, from a queue, exempt */
	uint64_t rejected_queue_full;
	uint64_t rejected_concurrency_limit;
	uint64_t rejected_time_out;  /* cancels and expiries of waiting requests */
	uint64_t rejected_shed;      /* standing backlog shed (sl_qs_shed) */
	uint64_t rejected_stalled;   /* waiters of a stalled level (sl_qs_shed_flows) */
	uint64_t epochs;             /* epoch_advance_total */
	uint64_t epoch_failures;     /* epochs that had to clamp a reading at 0 */
	uint64_t no_accommodation;   /* request_dispatch_no_accommodation_total */
};
void sl_qs_get_stats(const struct sl_qs *qs, struct sl_qs_stats *st);

/* Seat demand x(t) = seats in use + Σ MaxSeats of waiting requests (Kubernetes apf_controller.go updateBorrowing). */
uint64_t sl_qs_demand(const struct sl_qs *qs);
uint64_t sl_qs_seats_in_use(const struct sl_qs *qs);
uint64_t sl_qs_waiting(const struct sl_qs *qs);
uint64_t sl_qs_seats_waiting(const struct sl_qs *qs);
uint32_t sl_qs_queue_count(const struct sl_qs *qs);

/* One row of `sluicectl queues` (dump_queues, Kubernetes apf_controller_debug.go). */
struct sl_qs_queue_info {
	uint32_t index;
	uint32_t waiting;            /* PendingRequests */
	uint32_t executing;          /* ExecutingRequests */
	uint64_t seats_in_use;       /* SeatsInUse */
	uint64_t next_dispatch_r;    /* NextDispatchR */
	uint64_t initial_seats_sum;  /* of waiting requests */
	uint64_t max_seats_sum;      /* of waiting requests */
	uint64_t total_work_sum;     /* of waiting requests, SeatSeconds */
};
/* 0, or -ENOENT when index >= sl_qs_queue_count(). */
int sl_qs_queue_info(const struct sl_qs *qs, uint32_t index, struct sl_qs_queue_info *out);

/* One row of `sluicectl flows` (dump_requests, Kubernetes apf_controller_debug.go). */
struct sl_qs_req_info {
	uint64_t id;
	uint64_t flow_hash;
	uint32_t seats;
	int32_t queue;               /* -1: queue-less (exempt or Reject-type) */
	int32_t position;            /* index in its queue's FIFO; -1 when executing */
	bool executing;
	uint64_t arrival_ns;
	uint64_t start_ns;           /* 0 while waiting */
	uint64_t guess_ns;           /* the G it was charged with */
	uint64_t work;               /* totalWork, SeatSeconds */
};
/* O(1) through the id table; only `position` of a waiting request costs
 * O(position) (a walk to its queue's head).  0 or -ENOENT (out untouched). */
int sl_qs_lookup(const struct sl_qs *qs, uint64_t id, struct sl_qs_req_info *out);

/* Every tracked request: queue by queue in index order (waiting in FIFO
 * order, then executing), then the queue-less executing ones.  fn returns
 * non-zero to stop; that value is returned.  fn must not modify qs. */
typedef int (*sl_qs_req_fn)(void *ctx, const struct sl_qs_req_info *req);
int sl_qs_foreach_request(const struct sl_qs *qs, sl_qs_req_fn fn, void *ctx);

/* Verifies every internal invariant (totals equal the sums over queues and
 * requests, list links, id table, anti-windup bound, the dispatch loop has
 * nothing left to do).  0, or -EPROTO with the first violation in why.
 * O(size); meant for tests and debugging. */
int sl_qs_check(const struct sl_qs *qs, char *why, size_t why_len);

/* ---- test hooks ------------------------------------------------------------ */

/* Set R, e.g. just below the epoch threshold: -EINVAL unless
 * r < SL_QS_EPOCH_HIGH_R; -EBUSY unless every queue is idle (idle queues'
 * nextDispatchR is overwritten with R by their next arrival, so the
 * readings stay consistent). */
int sl_qs_test_set_r(struct sl_qs *qs, uint64_t r);
/* Set the shuffle-shard counter (Kubernetes queueset.go shuffleShardLocked). */
void sl_qs_test_set_enqueues(struct sl_qs *qs, uint64_t enqueues);

#endif
