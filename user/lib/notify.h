/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A queue of notifications for a caller (lib).  An engine that decides in
 * the middle of a state change (a dispatch, a time-out) records what it
 * decided, finishes the change, and only then delivers: a callback that
 * calls back into the engine sees it consistent.  A delivery started from
 * inside a callback leaves the work to the outermost one.  Room is
 * reserved ahead (one per request that may be decided), so recording never
 * allocates.
 */
#ifndef SLUICE_NOTIFY_H
#define SLUICE_NOTIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sl_note {
	uint64_t id, now;
	int kind; /* the engine's own meaning (admitted, rejected, ...) */
};

typedef void (*sl_note_fn)(void *ctx, const struct sl_note *n);

struct sl_notes {
	struct sl_note *v;
	size_t len, delivered, cap;
	bool delivering;
};

void sl_notes_free(struct sl_notes *q);
/* Room for `room` notes in all (those pending included).  0 or -ENOMEM. */
int sl_notes_reserve(struct sl_notes *q, size_t room);
/* Record one (room reserved). */
void sl_notes_push(struct sl_notes *q, uint64_t id, uint64_t now, int kind);
/* Deliver every pending note, in order, unless a delivery is running. */
void sl_notes_deliver(struct sl_notes *q, sl_note_fn fn, void *ctx);
/* Take back the most recent pending note (the engine reports that
 * decision to its caller by return value instead). */
static inline struct sl_note sl_notes_pop(struct sl_notes *q)
{
	return q->v[--q->len];
}

/* Take the oldest pending note, for a caller that pulls them instead of
 * being called: false when none is left (the queue starts over then). */
static inline bool sl_notes_next(struct sl_notes *q, struct sl_note *out)
{
	if (q->delivered >= q->len) {
		q->len = q->delivered = 0;
		return false;
	}
	*out = q->v[q->delivered++];
	return true;
}

static inline size_t sl_notes_pending(const struct sl_notes *q)
{
	return q->len - q->delivered;
}

#endif
