/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The workload scheduler of sluice's own adaptive mode (pure): weighted
 * fair queuing of deferred connections over the slots of an in-flight
 * limit (engine/seat_gradient.h decides the limit).
 *
 * Aperture's scheduler orders requests by priority and meters them with a
 * token bucket (a rate); here a connection needs one slot, and a slot
 * frees when a connection closes.  Between workloads, start-time fair
 * queuing: a backlogged workload's next dispatch starts at max(virtual
 * time, where its last finished) and finishes 1 / priority later, the
 * lowest start goes; so while the limit binds each workload with
 * connections waiting gets slots in proportion to its priority: gold still
 * gets its share while throttled.  Inside a workload, round robin over its
 * flows (the caller's flow key: APF's flow hash, so per client by
 * default): one heavy client's backlog does not stand in front of a light
 * client's single connection, as it would not in the priority level's
 * fair queues that come after.  A flow waits at most its
 * workload's queue_timeout (then it is rejected), and at most max_waiting
 * flows wait in all (the next is refused at once): memory is bounded
 * whatever arrives.  No I/O, no clock reads.
 *
 * Controlled delay, the priority levels' rule (engine/queueset.h,
 * sl_qs_shed) for the policy's queues (issue 23): a flow whose backlog has
 * stood for the workload's delay_interval loses whoever of it waited past
 * delay_target, oldest first, all but its newest.  A burst that drains
 * within the interval waits; a light client's flow never stands, so it is
 * never shed; a heavy one's standing backlog is refused at once instead of
 * waiting out its clients.
 */
#ifndef SLUICE_SLOT_SCHED_H
#define SLUICE_SLOT_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sl_ss_workload {
	double priority;           /* > 0 */
	uint64_t queue_timeout_ns; /* UINT64_MAX: until the caller cancels */
	uint64_t delay_target_ns;  /* controlled delay; 0: none */
	uint64_t delay_interval_ns;
};

/* Why a waiting connection was rejected. */
enum sl_ss_why {
	SL_SS_TIME_OUT, /* its queue_timeout passed */
	SL_SS_SHED,     /* controlled delay: its flow's backlog stood, it waited past the target */
};

/* An admitted flow, with the time of the decision. */
typedef void (*sl_ss_fn)(void *ctx, uint64_t id, uint64_t now);
/* A rejected one, and why. */
typedef void (*sl_ss_reject_fn)(void *ctx, uint64_t id, uint64_t now, enum sl_ss_why why);
/* Take a slot for the next flow: true when one was free (and is taken). */
typedef bool (*sl_ss_take_fn)(void *ctx);

struct sl_ss;

/* n workloads (the policy's, then its default one).  0, -EINVAL (no
 * workload, a priority not > 0) or -ENOMEM. */
int sl_ss_create(struct sl_ss **out, const struct sl_ss_workload *w, size_t n, size_t max_waiting,
		 sl_ss_fn on_admit, sl_ss_reject_fn on_reject, void *ctx);
void sl_ss_free(struct sl_ss *ss);
/* Queue a connection of workload w and flow `flow`.  0; -ENOSPC when
 * max_waiting wait (the caller refuses it); -EINVAL for a bad workload;
 * -ENOMEM. */
int sl_ss_enqueue(struct sl_ss *ss, uint64_t now, uint64_t id, unsigned w, uint64_t flow);
/* The same for a connection that waited here before, since arrival_ns
 * (<= now), and was admitted, then given back (its limit fell while it
 * still waited for a seat downstream): it takes its place by that
 * arrival, in its workload and in its flow, and its queue_timeout still
 * runs from it. */
int sl_ss_requeue(struct sl_ss *ss, uint64_t now, uint64_t id, unsigned w, uint64_t flow,
		  uint64_t arrival_ns);
/* Whether a connection of workload w that arrived at arrival_ns would
 * still be within its queue_timeout at now (one that would not is better
 * left where it waits: coming back would refuse it at once). */
bool sl_ss_within_timeout(const struct sl_ss *ss, unsigned w, uint64_t arrival_ns, uint64_t now);
/* Drop a waiting flow without a callback.  0 or -ENOENT. */
int sl_ss_cancel(struct sl_ss *ss, uint64_t id);
/* Reject the flows whose queue_timeout passed and those controlled delay
 * sheds (on_reject), then admit in fair order while take() gives slots
 * (on_admit).  Returns how many were admitted. */
size_t sl_ss_run(struct sl_ss *ss, uint64_t now, sl_ss_take_fn take, void *take_ctx);
size_t sl_ss_waiting(const struct sl_ss *ss);
size_t sl_ss_workloads(const struct sl_ss *ss);
/* Whether it was made with these workloads. */
bool sl_ss_same(const struct sl_ss *ss, const struct sl_ss_workload *w, size_t n);
size_t sl_ss_waiting_in(const struct sl_ss *ss, unsigned w);

struct sl_ss_stats {
	uint64_t admitted, rejected, refused; /* cumulative: dispatched, timed out, full */
	uint64_t shed;                        /* cumulative: controlled delay */
};
void sl_ss_stats(const struct sl_ss *ss, unsigned w, struct sl_ss_stats *out);

#endif
