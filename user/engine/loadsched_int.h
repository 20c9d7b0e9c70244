/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The load scheduler's records (loadsched.c), shared with its inline
 * admissions (loadsched_inline.c), its windows (loadsched_windows.c) and
 * its reports and invariant checker (loadsched_report.c) only.
 */
#ifndef SLUICE_LOADSCHED_INT_H
#define SLUICE_LOADSCHED_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/loadsched.h"
#include "lib/id_index.h"
#include "lib/list.h"
#include "lib/notify.h"

#define MAX_WORKLOADS 65536u
#define NONE UINT64_MAX
#define NOPOS SIZE_MAX
#define WAIT_CAP (UINT64_MAX / 4)

struct req {
	uint64_t id;
	double tokens;
	uint64_t deadline; /* NONE: unbounded */
	uint64_t seq;      /* arrival order (FIFO order within a workload) */
	uint64_t arrival;  /* when it began to wait */
	size_t hpos;       /* index in the deadline heap, NOPOS when not in it */
	uint32_t wl;
	struct sl_link link; /* its workload's FIFO */
};

struct lat_win {
	double sum[SL_LS_LAT_SLOTS];
	double cnt[SL_LS_LAT_SLOTS];
	unsigned cur;
	uint64_t cur_start;
};

struct flow {
	struct sl_ls_workload cfg;
	struct sl_list fifo;      /* waiting flows (not the global head), link */
	uint64_t backlog_since;   /* the FIFO has not been empty since (valid when it is not) */
	uint64_t gen;             /* generation vt belongs to */
	double vt;
	double head_vft;          /* valid when in_heap */
	bool in_heap;             /* the FIFO's first has a vft and competes for the head */
	bool serving;             /* this flow's popped head is the global head */
	struct lat_win lat;
	uint64_t completions;
	uint64_t admitted, deferred, rejected, inline_admitted, shed;
	double accepted_tokens, rejected_tokens;
};

struct sl_ls {
	struct flow *flows;       /* n_workloads + 1: the default last */
	size_t n_flows;
	size_t n_delayed;         /* of them with controlled delay (none: Aperture's, no scan) */
	bool latency_based;
	uint64_t ttl_ns;
	sl_ls_admit_fn on_admit;
	sl_ls_reject_fn on_reject;
	void *ctx;

	uint64_t last_now;
	struct sl_ls_ring ring;
	struct sl_ls_bucket bucket;
	bool booting;             /* ring bootstrapping, as last processed */
	bool pass_through;
	double lm;                /* throttle multiplier (NaN in pass-through) */
	uint64_t valid_until;

	struct req *head;         /* global head holding a reservation, or NULL */
	uint64_t head_admit_at;
	bool head_popped;         /* head came from its flow's FIFO (flow.serving) */
	double head_vft;          /* its vft when popped (NaN: idle-queue head) */
	double vt;
	uint64_t gen;
	uint64_t waiting;         /* every waiting flow, the head included */
	uint64_t next_seq;        /* arrival sequence of the next waiting flow */

	struct req **dheap;       /* FIFO members with a deadline, min-heap */
	size_t dheap_n, dheap_cap;
	struct sl_idx ids;        /* id index of every waiting flow */
	struct sl_notes notes;    /* decisions not yet delivered (kind: admitted) */

	double acc_tokens, rej_tokens, inc_tokens;
	double period_acc, period_rej;
	uint64_t admitted, deferred, rejected, inline_admitted, shed;
};

static inline uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static inline uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* (deadline, workload, arrival): equal deadlines come out in the order the
 * old sweep visited them (workload index, then FIFO order). */
static inline bool dl_before(const struct req *a, const struct req *b)
{
	if (a->deadline != b->deadline)
		return a->deadline < b->deadline;
	if (a->wl != b->wl)
		return a->wl < b->wl;
	return a->seq < b->seq;
}

/* The earliest deadline of a non-head waiting flow (NONE: none). */
static inline uint64_t next_deadline(const struct sl_ls *ls)
{
	return ls->dheap_n ? ls->dheap[0]->deadline : NONE;
}

/* The queue's steps (loadsched.c) that the inline admissions
 * (loadsched_inline.c) take too: process events up to now, a time not
 * before the last one, whether the scheduler lets everything through, hand
 * the notifications out, admit what the bucket allows, and a workload's
 * index (-EINVAL for an unknown one). */
void ls_run_until(struct sl_ls *ls, uint64_t now);
uint64_t ls_clamp_now(struct sl_ls *ls, uint64_t now);
bool ls_bypass(const struct sl_ls *ls);
void ls_deliver(struct sl_ls *ls);
void ls_drain(struct sl_ls *ls, uint64_t t);
int ls_wl_index(const struct sl_ls *ls, int workload, uint32_t *out);

/* A workload's latency window (loadsched_windows.c): started empty at
 * now, a completion's milliseconds added, and its mean (ms; NaN when
 * empty). */
void ls_lat_init(struct lat_win *w, uint64_t now);
void ls_lat_add(struct lat_win *w, uint64_t now, double ms);
double ls_lat_mean(const struct lat_win *w, uint64_t now);
/* A flow's token cost: its latency estimate when latency-based, else its
 * configured tokens (1 without). */
double ls_flow_tokens(const struct sl_ls *ls, const struct flow *f, uint64_t now);

#endif
