/* Write a plan into the data path's maps (adapter). */
#ifndef SLUICE_APPLY_H
#define SLUICE_APPLY_H

#include "pinned_maps.h"
#include "plan.h"

/* Order matters so the data path never sees a port pointing at a level
 * that is not set up: levels first, then ports (stale ones removed), then
 * freed slots, then the config flags.  Returns 0 or a negative errno. */
int sl_apply_plan(const struct sl_maps *m, const struct sl_plan *plan);

/* Write the heartbeat (CLOCK_MONOTONIC now). */
int sl_write_heartbeat(const struct sl_maps *m, unsigned long long seq);

#endif
