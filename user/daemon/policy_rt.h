/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The AverageLatencySchedulingPolicy gate, the daemon's side (adapter).
 *
 * Per policy: the gradient controller and AIMD circuit (aimd.c) on the
 * policy's latency signal, and the load scheduler (loadsched.c: token
 * bucket, incoming-rate ring, weighted fair queuing over workloads).  The
 * scheduler's bucket is the only bucket; the data path admits inline from
 * a credit granted out of it (sluice_abi.h "load-scheduler gate"):
 *
 *   every tick   take back what is left of the credit, feed the data
 *                path's inline admissions into the rate ring and the
 *                accepted tokens, run the scheduler (admissions of waiting
 *                flows, time-outs), run the controller when its period
 *                is due (decision: load multiplier or pass-through), write
 *                each workload's token cost, then grant again: PASS mode in
 *                pass-through, otherwise THROTTLE with everything the
 *                bucket holds as credit, or nothing while flows wait.
 *   a deferral   a SYN the data path held back (no credit, flows waiting,
 *                or its level refused) arrives here as a flow of its
 *                workload: admitted at once, queued (the hooks report the
 *                outcome later), or rejected.
 *
 * Latency signal: each completed connection's duration (admission to
 * close, so without the admission wait), or its srtt, or an external
 * number the application writes to a file each period.
 */
#ifndef SLUICE_POLICY_RT_H
#define SLUICE_POLICY_RT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "config/config.h"
#include "engine/slot_sched.h"

struct sl_dataplane;
struct sl_policies;

/* Deferred flows decided after waiting (admit: go on to the priority
 * level; reject: RST).  Called from sl_policies_tick, _arrive and
 * _configure, with the id given to sl_policies_arrive.  admit returns
 * false when the flow is gone meanwhile: a slot taken for it goes back. */
struct sl_policy_hooks {
	bool (*admit)(void *ctx, uint64_t id, uint64_t now);
	/* why: its wait's bound passed, or (mode sluice) controlled delay
	 * shed it (engine/slot_sched.h). */
	void (*reject)(void *ctx, uint64_t id, uint64_t now, enum sl_ss_why why);
	/* (mode sluice) the limit of `policy` fell n below what it holds:
	 * up to n of its admissions still waiting downstream for a seat come
	 * back (sl_policies_requeue); how many did.  May be NULL. */
	size_t (*recall)(void *ctx, unsigned policy, size_t n, uint64_t now);
	void *ctx;
};

/* dp may be NULL (no data path: nothing is read or written). */
int sl_policies_create(struct sl_policies **out, struct sl_dataplane *dp,
		       const struct sl_policy_hooks *hooks);
void sl_policies_free(struct sl_policies *ps);
/*
 * (Re)configure.  A policy whose name survives keeps its controller
 * history (same controller parameters) and its scheduler (same workload
 * parameters); a replaced scheduler first admits everything waiting in it
 * (fail-open), through the hooks.  The configuration must outlive the next
 * call.  0 or a negative errno, with nothing changed.
 */
int sl_policies_configure(struct sl_policies *ps, const struct sl_config *cfg, uint64_t now);
/* The same in two steps, so a caller can make several parts all or
 * nothing: prepare does everything that can fail (new controllers and
 * schedulers, external signal sockets) and changes nothing running;
 * commit switches (cannot fail); abort drops a prepared configuration. */
int sl_policies_prepare(struct sl_policies *ps, const struct sl_config *cfg, uint64_t now);
void sl_policies_commit(struct sl_policies *ps, uint64_t now);
void sl_policies_abort(struct sl_policies *ps);
/* How many policies the current configuration has. */
size_t sl_policies_count(const struct sl_policies *ps);

/*
 * A deferred SYN of policy `policy`, workload `workload` (SLUICE_NONE16 =
 * default) meets the load scheduler.  Returns SL_LS_ADMITTED, SL_LS_QUEUED
 * (a hook reports the outcome), SL_LS_REJECTED, or a negative errno.
 */
int sl_policies_arrive(struct sl_policies *ps, unsigned policy, unsigned workload, uint64_t id,
		       uint64_t now);
/* The same with the connection's flow (APF's flow hash): in mode sluice
 * the flows of a workload wait in turn (sl_policies_arrive: each
 * connection its own flow).  Aperture's mode has no flows. */
int sl_policies_arrive_flow(struct sl_policies *ps, unsigned policy, unsigned workload, uint64_t id,
			    uint64_t flow, uint64_t now);
/* (mode sluice) A flow the policy admitted, recalled (hooks.recall) with
 * its slot given back, waits again in its place by arrival_ns.
 * SL_LS_QUEUED or SL_LS_REJECTED (the queue is full); -ENOENT (no such
 * policy in mode sluice) or another negative errno. */
int sl_policies_requeue(struct sl_policies *ps, unsigned policy, unsigned workload, uint64_t id,
			uint64_t flow, uint64_t arrival_ns, uint64_t now);
/* Whether a flow that first arrived at arrival_ns may come back: within
 * its workload's queue_timeout still (else it stays in the level's queue,
 * under the level's own bound). */
bool sl_policies_can_requeue(const struct sl_policies *ps, unsigned policy, unsigned workload,
			     uint64_t arrival_ns, uint64_t now);
/* The priority level refused a flow this policy admitted: its tokens go
 * back (Aperture workload-scheduler/scheduler.go), or with slot its slot of
 * the in-flight limit. */
void sl_policies_return(struct sl_policies *ps, unsigned policy, unsigned workload, bool slot,
			uint64_t now);
/* Whether the policy admits by slots of an in-flight limit (sluice's own
 * mode): a flow it admits holds one until its connection is gone. */
bool sl_policies_take_slots(const struct sl_policies *ps, unsigned policy);
/* A connection of the policy closed after holding its seat duration_ns,
 * having waited queued_ns for the seat after the policy admitted it, with
 * its last smoothed RTT.  Served (it established: lib/conn_end.h), it is
 * a sample of the latency signal (mode sluice: queued and held, the time
 * its slot was taken, with the seat's part for the baseline; mode
 * aperture: held, Aperture's latency of the service) and of the
 * workload's token estimate; one that never established only frees its
 * slot (mode sluice dispatches on it). */
void sl_policies_on_close(struct sl_policies *ps, unsigned policy, unsigned workload,
			  uint64_t duration_ns, uint64_t queued_ns, uint32_t srtt_us, bool served,
			  uint64_t now);
void sl_policies_tick(struct sl_policies *ps, uint64_t now);
/* Prometheus text: per policy and per workload. */
void sl_policies_metrics(struct sl_policies *ps, FILE *f, uint64_t now);
/* {"policies": [...]} for `sluicectl controller`. */
void sl_policies_dump(struct sl_policies *ps, FILE *f, uint64_t now);

#endif
