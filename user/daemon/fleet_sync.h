/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * One sync of one host in one fleet level against etcd, in two halves
 * (blocking: the fleet's thread calls them, never the loop):
 *
 *   sl_fleet_sync_read   read the level's keys and plan the step
 *                        (fleet_step.h): what the host holds now, and
 *                        what it would hold after
 *   sl_fleet_sync_write  write the step, guarded by the revision read,
 *                        and put the host's want on its lease
 *
 * Between them the order of a grant's change is the caller's: a raise is
 * written first and used once etcd took it; a cut is applied to the data
 * path first and written after.
 */
#ifndef SLUICE_DAEMON_FLEET_SYNC_H
#define SLUICE_DAEMON_FLEET_SYNC_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/etcd_http.h"
#include "daemon/fleet_step.h"

struct sl_fleet_sync {
	const char *fleet, *level;
	struct sl_fleet_self self;
	int64_t revision;             /* of the read: the write's guard */
	size_t members;               /* members read */
	struct sl_fleet_plan plan;
	uint32_t held;                /* floor + claim as etcd has them (0: not a member) */
	uint32_t after;               /* floor + claim once the step is written */
	bool written;                 /* the step's transaction went through (false: another
				       * host wrote first; the next sync reads again) */
};

/* Read and plan; s->fleet, s->level and s->self set by the caller.  0, or
 * -errno from etcd's transport or answers. */
int sl_fleet_sync_read(struct sl_etcd_http *h, struct sl_fleet_sync *s);
/* Write the planned step (if any) and the want, on lease.  0 or -errno. */
int sl_fleet_sync_write(struct sl_etcd_http *h, struct sl_fleet_sync *s, int64_t lease);

#endif
