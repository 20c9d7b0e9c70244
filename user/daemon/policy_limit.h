/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * sluice's own adaptive mode of an AverageLatencySchedulingPolicy, the
 * daemon's side (adapter): the gradient on a limit of connections in
 * flight (engine/seat_gradient.h) and the fair queue of the connections
 * the limit holds back (engine/slot_sched.h), over the data path's gate in
 * LIMIT mode (sluice_abi.h "load-scheduler gate"):
 *
 *   every tick   the count in flight (the gate's slots_held, counted by
 *                the holders) and the waiting flows go to the controller;
 *                a decision writes the gate's slot_limit; time-outs are
 *                rejected and free slots go to waiting flows in fair
 *                order.
 *   a deferral   a SYN the data path held back (no free slot, or flows
 *                waiting) takes a slot at once if nobody waits, else waits.
 *   a close      the controller gets its duration (with its admission
 *                time, so only connections admitted since the last move
 *                are judged), and a freed slot goes to the next in line.
 *   a cut        below what is in flight: the limit's admissions that
 *                still wait downstream for a seat (a priority level's
 *                queue) come back to its queue (hooks.recall), youngest
 *                first, where priorities and flows order them again: a
 *                cut does not leave the excess of the last limit in front
 *                of a light client until a level drains it.
 */
#ifndef SLUICE_POLICY_LIMIT_H
#define SLUICE_POLICY_LIMIT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "config/config.h"
#include "sluice_abi.h"
#include "engine/seat_gradient.h"
#include "engine/slot_sched.h"

struct sl_dataplane;
struct json_out;

/* The limit the gate holds in pass-through: one no load reaches, so the
 * count in flight stays exact while nothing is limited. */
#define SL_PLIMIT_PASS ((uint64_t)SLUICE_SLOT_LIMIT_PASS)
/* Flows a policy may hold waiting (then the next is refused). */
#define SL_PLIMIT_MAX_WAITING 16384

/* What the caller does for the limit (ctx is theirs):
 *   admit   a waiting flow got a slot; false when it is gone (the slot
 *           goes back);
 *   reject  a waiting flow is refused, and why;
 *   recall  the limit fell n below what the gate holds: give back up to
 *           n slots of flows still waiting downstream (each through
 *           sl_plimit_requeue); how many came back.  May be NULL. */
struct sl_plimit_hooks {
	bool (*admit)(void *ctx, uint64_t id, uint64_t now);
	sl_ss_reject_fn reject;
	size_t (*recall)(void *ctx, unsigned index, size_t n, uint64_t now);
	void *ctx;
};

struct sl_plimit {
	char name[SL_LEVEL_NAME_SIZE];
	struct sl_dataplane *dp;
	unsigned index;            /* the data path's gate */
	struct sl_sg sg;
	struct sl_ss *ss;
	uint64_t decisions[SL_SG_PASS_THROUGH + 1]; /* by reason */
	/* By scheduler workload: deferred by the data path, and a slot free
	 * with nobody waiting when the daemon met it (never queued). */
	uint64_t admitted_on_arrival[SLUICE_WL_SLOTS];
	struct sl_plimit_hooks hooks;
	uint64_t recalled;         /* slots given back by flows waiting downstream */
	bool releasing;            /* admitting all without slots (the policy goes away) */
	struct sl_sg_decision last;
	bool have_last;
};

/* The policy's parameters for the controller and the scheduler. */
void sl_plimit_params(const struct sl_policy_cfg *pc, struct sl_sg_params *sg,
		      struct sl_ss_workload *w, size_t *n_w);
/* 0, or a negative errno (logged).  The gate is set up by sl_plimit_start. */
int sl_plimit_create(struct sl_plimit **out, const struct sl_policy_cfg *pc, struct sl_dataplane *dp,
		     const struct sl_plimit_hooks *hooks, uint64_t now);
/* Whether a record made for old can run pc (same controller and workload
 * parameters). */
bool sl_plimit_same(const struct sl_plimit *pl, const struct sl_policy_cfg *pc);
/* Take the gate at index and write its limit.  What the gate counts held
 * is its holders' (the connections in flight through it, whichever record
 * ran it before), so a kept gate, a re-created record and an adopted gate
 * all start from the true count. */
void sl_plimit_start(struct sl_plimit *pl, unsigned index);
/* Frees what waits without a callback (the caller admitted it first with
 * sl_plimit_release_all if it wants). */
void sl_plimit_free(struct sl_plimit *pl);
/* Admit every waiting flow (fail-open when the policy goes away). */
void sl_plimit_release_all(struct sl_plimit *pl, uint64_t now);

/* SL_LS_ADMITTED (a slot taken), SL_LS_QUEUED or SL_LS_REJECTED (the
 * queue is full); a negative errno. */
/* flow: the connection's flow (APF's flow hash): flows of a workload wait
 * in turn. */
int sl_plimit_arrive(struct sl_plimit *pl, uint64_t now, uint64_t id, unsigned workload, uint64_t flow);
/* A connection holding a slot closed (the gate has its slot back) after
 * waiting queued_ns for its seat and holding it duration_ns; served (it
 * established), it is a sample of the controller. */
/* A flow this limit admitted comes back (hooks.recall), its slot already
 * given back: it waits again in its place by arrival_ns (its first
 * arrival, so its queue_timeout keeps running from it).  SL_LS_QUEUED, or
 * SL_LS_REJECTED when the queue is full; a negative errno. */
int sl_plimit_requeue(struct sl_plimit *pl, uint64_t now, uint64_t id, unsigned workload,
		      uint64_t flow, uint64_t arrival_ns);
/* Whether such a flow would still be within its workload's queue_timeout. */
bool sl_plimit_can_requeue(const struct sl_plimit *pl, unsigned workload, uint64_t arrival_ns, uint64_t now);
void sl_plimit_complete(struct sl_plimit *pl, uint64_t now, uint64_t duration_ns, uint64_t queued_ns,
			bool served);
void sl_plimit_tick(struct sl_plimit *pl, uint64_t now);
/* The count in flight now (from the gate). */
uint64_t sl_plimit_in_flight(const struct sl_plimit *pl);
/* The limit enforced now, UINT32_MAX in pass-through. */
uint32_t sl_plimit_limit(const struct sl_plimit *pl);

/* dp_stats: the data path's counters of each workload (the default last),
 * as many as the policy has workloads plus one. */
void sl_plimit_dump(const struct sl_plimit *pl, const struct sl_policy_cfg *pc,
		    const struct sluice_wl_stats *dp_stats, struct json_out *jo);

#endif
