// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "engine/level_slots.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

int sl_assign_level_slots(const char old_names[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN],
			  const char *const *new_names, size_t n, unsigned *slot_of)
{
	bool taken[SLUICE_MAX_LEVELS] = {false};
	size_t i;
	unsigned s;

	if (n > SLUICE_MAX_LEVELS)
		return -ENOSPC;
	/* First pass: keep every surviving level in its old slot. */
	for (i = 0; i < n; i++) {
		slot_of[i] = SLUICE_MAX_LEVELS;
		for (s = 0; s < SLUICE_MAX_LEVELS; s++) {
			if (!taken[s] && old_names[s][0] &&
			    !strncmp(old_names[s], new_names[i], SLUICE_LEVEL_NAME_LEN)) {
				slot_of[i] = s;
				taken[s] = true;
				break;
			}
		}
	}
	/* Second pass: new levels take the lowest slot nobody else keeps,
	 * preferring slots that held no level (their counters are clean). */
	for (i = 0; i < n; i++) {
		if (slot_of[i] != SLUICE_MAX_LEVELS)
			continue;
		for (int pass = 0; pass < 2 && slot_of[i] == SLUICE_MAX_LEVELS; pass++) {
			for (s = 0; s < SLUICE_MAX_LEVELS; s++) {
				if (taken[s] || (pass == 0 && old_names[s][0]))
					continue;
				slot_of[i] = s;
				taken[s] = true;
				break;
			}
		}
		if (slot_of[i] == SLUICE_MAX_LEVELS)
			return -ENOSPC;
	}
	return 0;
}
