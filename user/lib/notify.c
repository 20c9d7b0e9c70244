// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "lib/notify.h"

#include <errno.h>
#include <stdlib.h>

void sl_notes_free(struct sl_notes *q)
{
	free(q->v);
	q->v = NULL;
	q->len = q->delivered = q->cap = 0;
}

int sl_notes_reserve(struct sl_notes *q, size_t room)
{
	size_t cap;
	struct sl_note *v;

	if (room <= q->cap)
		return 0;
	cap = q->cap ? q->cap : 16;
	while (cap < room)
		cap *= 2;
	v = realloc(q->v, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	q->v = v;
	q->cap = cap;
	return 0;
}

void sl_notes_push(struct sl_notes *q, uint64_t id, uint64_t now, int kind)
{
	q->v[q->len++] = (struct sl_note){.id = id, .now = now, .kind = kind};
}

void sl_notes_deliver(struct sl_notes *q, sl_note_fn fn, void *ctx)
{
	if (q->delivering)
		return;
	q->delivering = true;
	while (q->delivered < q->len) {
		struct sl_note n = q->v[q->delivered++];

		fn(ctx, &n);
	}
	q->len = q->delivered = 0;
	q->delivering = false;
}
