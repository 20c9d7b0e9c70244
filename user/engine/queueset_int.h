/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The QueueSet's records (queueset.c), shared with its invariant checker
 * and test hooks (queueset_check.c) only.
 */
#ifndef SLUICE_QUEUESET_INT_H
#define SLUICE_QUEUESET_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/queueset.h"
#include "lib/id_index.h"
#include "lib/list.h"
#include "lib/notify.h"

typedef unsigned __int128 u128;
typedef __int128 i128;

#define MAX_QUEUES     10000000u         /* API validation: queues <= 10^7 (Kubernetes shufflesharding.go ValidateParameters) */
#define MAX_INCR_R     (UINT64_C(1) << 62) /* one sync never advances R further */
/* One request's work is at most SL_QS_MAX_SEATS × SL_QS_MAX_GUESS_NS / 10
 * ≈ 6.3e16 < 2^56.  Readings (nextDispatchR) are kept <= READING_CAP so that
 * adding one request's work never wraps. */
#define MAX_WORK       (UINT64_C(1) << 56)
#define READING_CAP    (UINT64_MAX - MAX_WORK)
_Static_assert((uint64_t)SL_QS_MAX_SEATS * (SL_QS_MAX_GUESS_NS / 10 + 1) < MAX_WORK,
	       "work bound");

struct req {
	uint64_t id;
	uint64_t flow_hash;
	uint64_t arrival_ns;
	uint64_t start_ns;
	uint64_t guess_ns;  /* G at arrival */
	uint64_t work;      /* totalWork = seats × G (no final phase) */
	uint64_t arrival_r;
	uint32_t seats;     /* InitialSeats = FinalSeats = MaxSeats */
	bool executing;
	struct queue *q;    /* NULL: queue-less */
	struct sl_link link;  /* queue FIFO, or an executing list */
	struct sl_link glink; /* global waiting list */
};

struct queue {
	uint32_t index;
	struct sl_list waiting;
	struct sl_list executing;
	uint64_t seats_in_use;
	uint64_t next_r;           /* nextDispatchR */
	uint64_t sum_initial;      /* Σ InitialSeats of waiting */
	uint64_t sum_max;          /* Σ MaxSeats of waiting */
	uint64_t sum_work;         /* Σ totalWork of waiting */
	uint64_t backlog_since_ns; /* its FIFO last went from empty to not (while waiting.n) */
};

struct sl_qs {
	struct sl_qs_config cfg;
	uint32_t cl;

	struct queue **queues;
	uint32_t nq, cap_q;

	uint64_t r, last_ns;
	int64_t robin;
	uint64_t enqueues;

	uint64_t tot_waiting, tot_executing;
	uint64_t seats_in_use;     /* all executing requests */
	uint64_t seats_waiting;    /* Σ MaxSeats waiting (all in queues) */
	uint64_t q_seats_in_use;   /* Σ over queues of seatsInUse */
	uint32_t active;           /* NEQ */

	struct sl_list qless;      /* queue-less executing */
	struct sl_list arrivals;   /* every waiting request, arrival order (glink) */
	struct sl_idx ids;         /* id -> request */
	struct sl_notes notes;     /* dispatches the caller has not taken yet */

	uint64_t dispatched, rej_qf, rej_cl, rej_to, rej_shed, rej_stall, epochs, epoch_fail, no_accom;
};

static inline struct req *req_at(const struct sl_link *l)
{
	return sl_list_entry(l, struct req, link);
}

static inline struct req *arrival_at(const struct sl_link *l)
{
	return sl_list_entry(l, struct req, glink);
}

static inline struct req *first_waiting(const struct queue *q)
{
	return req_at(q->waiting.head);
}

static inline bool q_active(const struct queue *q)
{
	return q->waiting.n || q->executing.n;
}

static inline bool is_exempt(const struct sl_qs *qs)
{
	return qs->cfg.queues == SL_QS_EXEMPT;
}

/* Whether a request of these seats may start now (an oversized one
 * only alone: Kubernetes queueset.go canAccommodateSeatsLocked). */
static inline bool fits(const struct sl_qs *qs, uint64_t seats)
{
	if (is_exempt(qs))
		return true;
	if (seats > qs->cl)
		return qs->tot_executing == 0;
	return qs->seats_in_use + seats <= qs->cl;
}

/* Kubernetes queueset.go dispatchLocked: the queue whose head has the
 * least virtual finish time, round-robin from robinIndex + 1 (queueset.c). */
struct queue *qs_choose_queue(const struct sl_qs *qs);

static inline struct req *find(const struct sl_qs *qs, uint64_t id)
{
	return sl_idx_find(&qs->ids, id);
}

#endif
