/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * From a validated configuration to the exact contents of the data path's
 * maps.  Pure: the plan is computed in full before anything is written, so
 * a configuration that cannot be applied changes nothing.
 */
#ifndef SLUICE_PLAN_H
#define SLUICE_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/class_compiler.h"
#include "config/config.h"
#include "config/diag.h"
#include "engine/limits.h"
#include "sluice_abi.h"

struct sl_plan {
	struct sluice_settings config;
	struct sluice_level levels[SLUICE_MAX_LEVELS]; /* by slot; type UNUSED if free */
	struct sl_level_limits limits[SLUICE_MAX_LEVELS]; /* by slot */
	unsigned slot_of[SLUICE_MAX_LEVELS];           /* config level i -> slot */
	uint32_t seat_cap[SLUICE_MAX_LEVELS];          /* by slot: most seats one connection takes */
	size_t n_levels;
	struct sl_compiled classes;                    /* classification tables */
	bool classes_reused;                           /* copied from `reuse`, not compiled */
};

/* old_names: level names currently in the slots (all "" on a fresh start).
 * iface: the value of the `iface` label.  Returns 0 or a negative errno
 * with a diagnostic in diags. */
int sl_plan_build(const struct sl_config *cfg,
		  const char old_names[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN],
		  const char *iface, struct sl_plan *plan, struct sl_diags *diags);
/* The same, with the shares of removed levels that still hold connections
 * kept in the share sum (Kubernetes keeps a quiescing level's), and with
 * the running tables to reuse (NULL: none): when the classification's
 * inputs are those `reuse` was compiled from (its digest), the plan takes
 * a copy instead of compiling (classes_reused). */
int sl_plan_build_quiescing(const struct sl_config *cfg,
			    const char old_names[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN],
			    const char *iface, uint32_t quiescing_shares,
			    const struct sl_compiled *reuse, struct sl_plan *plan,
			    struct sl_diags *diags);
void sl_plan_free(struct sl_plan *plan);

/* The shares of levels cfg removes (or an earlier one removed) that still
 * hold or queue connections (busy_slots: bit s for slot s): they stay in
 * the share sum while they drain, as a quiescing APF level's do.  *slots
 * gets the slots counted. */
uint32_t sl_plan_quiescing_shares(const struct sl_config *cfg,
				  const char names[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN],
				  uint64_t busy_slots, const uint32_t slot_shares[SLUICE_MAX_LEVELS],
				  uint64_t *slots);

/* Several interfaces share one set of tables, built for ifaces[0]: fine
 * unless the classification depends on the `iface` label.  0 when the
 * tables for every other interface come out the same, else -EINVAL with a
 * diagnostic at Server spec.interfaces. */
int sl_plan_check_interfaces(const struct sl_config *cfg, const struct sl_plan *plan,
			     const char *const *ifaces, size_t n_ifaces, struct sl_diags *diags);

/* The most seats one connection of level l takes (Kubernetes
 * max_seats.go, Queue levels), 0 = no cap. */
uint32_t sl_level_max_seats(const struct sl_level_cfg *l, uint32_t nominal);

/* How old the heartbeat may get before the data path stops deferring to
 * the daemon (sluice_config.dispatch_timeout_ns): three ticks, at least
 * SL_DISPATCH_TIMEOUT_MIN_NS (a loop busy with a burst of events is not a
 * dead one), at most the failsafe's heartbeat timeout. */
#define SL_DISPATCH_TIMEOUT_MIN_NS 50000000ULL
uint64_t sl_dispatch_timeout_ns(uint64_t tick_ns, uint64_t heartbeat_timeout_ns);

#endif
