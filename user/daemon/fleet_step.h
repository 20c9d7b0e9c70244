/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * One sync of one host in one fleet level: from the members a range read
 * (fleet_keys.h) and what this host has, what it writes next (no I/O; the
 * fleet's thread carries it out, engine/fleet_share.h does the sums).
 *
 *   join    its member key (floor), its claim (0) and its want, in one
 *           transaction guarded by the revision read; refused (no room)
 *           when the floors would pass the budget
 *   raise   its grant (floor + claim) up, the claim by at most what the
 *           others leave: etcd first, then the data path may use it (a
 *           floor a reload moved is written the same way)
 *   cut     its grant down, the claim never below its seats in use over
 *           its floor: the data path first, then etcd
 *   nothing its claim is where it should be
 *
 * Every sync also puts its want (in use, wants, budget) on its lease,
 * unguarded: it moves no seat.
 */
#ifndef SLUICE_DAEMON_FLEET_STEP_H
#define SLUICE_DAEMON_FLEET_STEP_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/fleet_keys.h"

struct sl_fleet_self {
	const char *node;
	uint32_t floor;    /* limited.fleet.floor */
	uint32_t seats;    /* limited.fleet.seats: the budget it declares */
	uint32_t in_use;   /* the level's seats in use on this host */
	uint32_t wants;    /* in use + waiting (+ refused, on a Reject level) */
};

enum sl_fleet_action {
	SL_FLEET_NOTHING,
	SL_FLEET_JOIN,
	SL_FLEET_NO_ROOM,  /* joining, or a floor a reload raised, would pass the
			    * budget: keep what it has, say so */
	SL_FLEET_RAISE,
	SL_FLEET_CUT,
};

struct sl_fleet_plan {
	enum sl_fleet_action action;
	uint32_t budget;       /* the budget in force */
	uint32_t extra;        /* its claim now (0 before it joins) */
	uint32_t next;         /* its claim after this step */
	uint32_t target;       /* where the sums say it should be */
};

/* The step for self, given the members read.  0 or -errno (the sums'). */
int sl_fleet_plan_step(const struct sl_fleet_node *nodes, size_t n, const struct sl_fleet_self *self,
		       struct sl_fleet_plan *plan);

/* The writes of a step: ops[] (at most 3) whose keys and values live in
 * the caller's buf (at least SL_FLEET_STEP_BUF bytes).  The guarded
 * transaction's ops for join, raise and cut; want: the want's put alone.
 * The number of ops, or -E2BIG. */
#define SL_FLEET_STEP_BUF 1024
int sl_fleet_step_ops(const char *fleet, const char *level, const struct sl_fleet_self *self,
		      const struct sl_fleet_plan *plan, int64_t lease, bool want, struct sl_etcd_op *ops,
		      char *buf, size_t size);

#endif
