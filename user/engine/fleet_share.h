/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A fleet's seats for one priority level, shared by its hosts through etcd
 * (pure arithmetic, no I/O; the etcd client and the protocol build on it).
 *
 * Each member has a floor (reserved for it, lease or not) and, while its
 * lease lives, an extra claim over it.  The invariant at every etcd
 * revision: the floors of all members and the extras of the live ones sum
 * to at most the budget, the smallest any live member declares.  Every
 * member computes the same targets from the same revision: floors first,
 * the rest water-filled over each live member's wants above its floor,
 * any leftover spread evenly; ties go by the members' order (the caller
 * sorts them by node name).  A member moves its own claim towards its
 * target by sl_fleet_next_claim: a raise only within the room the others
 * leave, a cut never below the seats it has in use.
 */
#ifndef SLUICE_ENGINE_FLEET_SHARE_H
#define SLUICE_ENGINE_FLEET_SHARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Members of one level's fleet at most (hosts in front of one service). */
#define SL_FLEET_MAX_MEMBERS 256

struct sl_fleet_member {
	uint32_t floor;   /* seats/member/<node>: its reserved seats */
	bool live;        /* its lease lives: its claim and want keys exist */
	uint32_t extra;   /* seats/claim/<node>: its claim over the floor (live only) */
	uint32_t in_use;  /* want/<node>: seats it has in use */
	uint32_t wants;   /* want/<node>: in use + waiting (+ refused, on a Reject level) */
	uint32_t budget;  /* want/<node>: the budget it declares, 0: not yet */
};

/* The budget in force: the smallest that own (this host's) and every
 * live member declare (a budget of 0: none declared yet, its want not
 * written). */
uint32_t sl_fleet_budget(const struct sl_fleet_member *m, size_t n, uint32_t own);

/* Each member's target extra (0 for one not live) under budget.  0,
 * -ERANGE when the floors alone exceed the budget (every target 0), or
 * -E2BIG past SL_FLEET_MAX_MEMBERS. */
int sl_fleet_targets(const struct sl_fleet_member *m, size_t n, uint32_t budget, uint32_t *target);

/* The seats nobody holds: budget less the floors and the live extras
 * (0 when they exceed it). */
uint32_t sl_fleet_room(const struct sl_fleet_member *m, size_t n, uint32_t budget);

/* The claim a member moves to from current towards target: a raise by at
 * most room (sl_fleet_room); a cut to the target, but never below the
 * seats it has in use over its floor. */
uint32_t sl_fleet_next_claim(uint32_t current, uint32_t target, uint32_t in_use_over_floor, uint32_t room);

/* How much earlier than its lease's end a member gives its grant up:
 * max(500 ms, ttl / 10), for the clocks' and the network's slack. */
uint64_t sl_fleet_margin_ns(uint64_t lease_ttl_ns);

/* Until when a member may enforce its floor plus its extra: its last
 * keepalive sent, plus the lease's TTL, less the margin and the time a
 * connection may outlive its host's right to it (drainTimeout). */
uint64_t sl_fleet_grant_deadline_ns(uint64_t last_keepalive_sent_ns, uint64_t lease_ttl_ns,
				     uint64_t drain_ns);

#endif
