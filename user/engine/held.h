/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Held SYN frames (pure): the frame of each deferred connection the
 * daemon holds, by the connection's pending id, within byte budgets (one
 * for every level, one in total).  A frame that does not fit is not held:
 * its connection still queues, and its client's retransmit claims a
 * ticket when its turn comes.  A retransmit of a queued SYN replaces the
 * held copy.
 */
#ifndef SLUICE_HELD_H
#define SLUICE_HELD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sluice_abi.h"

struct sl_held_frame {
	uint64_t id;       /* the pending record's */
	unsigned level;
	uint32_t ifindex;  /* where it came in */
	uint16_t len;
	uint8_t frame[];   /* len bytes */
};

struct sl_held_limits {
	uint64_t max_bytes;           /* every held frame */
	uint64_t max_bytes_per_level;
};

struct sl_held_stats {
	uint64_t frames, bytes;       /* held now */
	uint64_t level_bytes[SLUICE_MAX_LEVELS];
	uint64_t level_frames[SLUICE_MAX_LEVELS];
	uint64_t held, replaced;      /* puts that held a frame (new, or a retransmit's) */
	uint64_t over_budget;         /* puts refused: a budget was full */
};

struct sl_held;

int sl_held_create(struct sl_held **out, const struct sl_held_limits *lim);
void sl_held_free(struct sl_held *h);
/* New budgets (a reload): what is held stays; they apply to what comes. */
void sl_held_set_limits(struct sl_held *h, const struct sl_held_limits *lim);

/* Hold frame (len bytes, at most SLUICE_FRAME_MAX) for id on level,
 * replacing what id held before.  0, -ENOSPC (a budget is full: nothing
 * held for id any more), -EINVAL, -ENOMEM. */
int sl_held_put(struct sl_held *h, uint64_t id, unsigned level, uint32_t ifindex,
		const uint8_t *frame, size_t len);
/* Take id's frame out (the caller frees it with free()), or NULL. */
struct sl_held_frame *sl_held_take(struct sl_held *h, uint64_t id);
bool sl_held_has(const struct sl_held *h, uint64_t id);
/* Forget id's frame, if any. */
void sl_held_drop(struct sl_held *h, uint64_t id);
void sl_held_get_stats(const struct sl_held *h, struct sl_held_stats *out);
/* What one level holds (frames, bytes). */
void sl_held_level(const struct sl_held *h, unsigned level, uint64_t *frames, uint64_t *bytes);

#endif
