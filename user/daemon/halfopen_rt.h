/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Half-open connections at run time (daemon): once a second, the measured
 * half-open time-out from the data path's handshake histogram, and each
 * limited level's seating (SYN or ACK) from its counters, written to the
 * maps when it changes (engine/halfopen.h decides).
 */
#ifndef SLUICE_DAEMON_HALFOPEN_RT_H
#define SLUICE_DAEMON_HALFOPEN_RT_H

#include <stdint.h>
#include <stdio.h>

#include "config/config.h"
#include "dataplane/dataplane.h"
#include "engine/halfopen.h"

struct sl_halfopen_rt {
	struct sl_hs_meter meter;
	struct sl_seat_mode mode[SLUICE_MAX_LEVELS];
	uint32_t flags[SLUICE_MAX_LEVELS]; /* as written to sl_levels */
	char name[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN];
	uint64_t p99_ns, samples;
	uint64_t timeout_ns;               /* measured half-open time-out */
	/* The sweep's, per level: a watched level re-seats a late ACK, so its
	 * half-open seats need not wait beyond minTimeout. */
	uint64_t level_timeout_ns[SLUICE_MAX_LEVELS];
	uint32_t lingering[SLUICE_MAX_LEVELS]; /* from the last sweep */
	/* Whether sock_ops sees the admitted connections: judged only where
	 * it is attached to a cgroup given (scope), not the whole host's. */
	struct sl_sight sight;
	const char *scope;
};

void sl_halfopen_rt_init(struct sl_halfopen_rt *rt, const struct sl_server_cfg *srv);
/* One step (timeout_ns, level_timeout_ns: what the sweep applies to each
 * level); returns how many levels moved their seats to the ACK in it. */
int sl_halfopen_rt_step(struct sl_halfopen_rt *rt, struct sl_dataplane *dp,
			const struct sl_server_cfg *srv, uint64_t now_ns);
/* The flags a new plan carries for a slot: a reload keeps where levels
 * seat. */
uint32_t sl_halfopen_rt_flags(const struct sl_halfopen_rt *rt, unsigned slot);
/* Judge from now on whether sock_ops, attached to the cgroup at path
 * (kept, not copied), sees the connections admitted. */
void sl_halfopen_rt_watch_sight(struct sl_halfopen_rt *rt, const char *path);
void sl_halfopen_rt_metrics(const struct sl_halfopen_rt *rt, FILE *f);

#endif
