/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Stable level slots.  Each priority level owns one index into the
 * per-level BPF arrays.  Across a daemon restart or a reload, a level keeps
 * its slot (matched by name) so seats in use and counters stay with it;
 * new levels take free slots, and vanished levels free theirs.
 */
#ifndef SLUICE_LEVEL_SLOTS_H
#define SLUICE_LEVEL_SLOTS_H

#include <stddef.h>

#include "sluice_abi.h"

/* old_names[SLUICE_MAX_LEVELS]: names currently in the slots ("" = free).
 * new_names[n]: the levels wanted.  Fills slot_of[n].  Returns 0, or
 * -ENOSPC when more than SLUICE_MAX_LEVELS levels are wanted. */
int sl_assign_level_slots(const char old_names[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN],
			  const char *const *new_names, size_t n, unsigned *slot_of);

#endif
