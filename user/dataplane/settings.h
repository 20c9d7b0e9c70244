/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The data path's settings (adapter): the one writer of sl_config and
 * sl_levels (and sl_heartbeat): a whole plan, a generation at a time, and
 * the runtimes' single fields (a level's limit, its seating, shadow). */
#ifndef SLUICE_SETTINGS_H
#define SLUICE_SETTINGS_H

#include <stdbool.h>

#include "dataplane/dataplane.h"
#include "dataplane/pinned_maps.h"
#include "engine/plan.h"

/*
 * Atomic for the data path: the classification goes into the idle
 * generation, the levels it needs are written, and one update of
 * sl_config flips to the new generation.  Anything that fails before the
 * flip leaves the running configuration untouched.  After the flip slots
 * of vanished levels are freed (the old generation stays until the next
 * stage).  When the running tables were compiled from the same inputs
 * (sluice_settings.class_digest), nothing is staged and the generation
 * stays: only levels and settings change.
 * Returns 0 or a negative errno (logged).
 */
int sl_apply_plan(const struct sl_maps *m, const struct sl_plan *plan);
/* The same in two steps, so that the slow one may run off the event loop:
 * stage writes the classification into the idle generation (nothing the
 * data path reads), commit writes the levels and flips to it; commit
 * returns -ESTALE when another commit flipped since the stage.  A stage
 * that keeps the running tables says so with SL_STAGE_KEPT in *gen_out
 * (and *kept, when not NULL). */
#include <stdbool.h>
#include <stdint.h>
#define SL_STAGE_KEPT 0x80
int sl_apply_stage(const struct sl_maps *m, const struct sl_plan *plan, uint8_t *gen_out);
bool sl_apply_stage_kept(uint8_t gen);
int sl_apply_commit(const struct sl_maps *m, const struct sl_plan *plan, uint8_t gen);

/* Shadow mode on or off in the running settings (sl_config), nothing
 * else changed: `sluicectl shadow`.  0 or a negative errno. */
int sl_apply_shadow(const struct sl_maps *m, bool on);
/* Write the heartbeat (CLOCK_MONOTONIC now). */
int sl_write_heartbeat(const struct sl_maps *m, unsigned long long seq);

/* The level's current limit in sl_levels (Limited levels only). */
int sl_level_write_limit(struct sl_dataplane *dp, unsigned level, uint32_t limit);
/* Where a level seats (enum sluice_level_flags), and how many levels have
 * their ACKs watched (sluice_settings.ack_watch_levels): read, change, write. */
int sl_level_write_flags(struct sl_dataplane *dp, unsigned level, uint32_t flags);
int sl_settings_write_ack_watch(struct sl_dataplane *dp, uint32_t levels);

#endif
