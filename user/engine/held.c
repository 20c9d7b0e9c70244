// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "engine/held.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/id_index.h"

struct sl_held {
	struct sl_held_limits lim;
	struct sl_idx ids;
	struct sl_held_stats st;
};

/* What a frame costs against the budgets: its bytes and its record. */
static uint64_t cost(size_t len)
{
	return sizeof(struct sl_held_frame) + len;
}

int sl_held_create(struct sl_held **out, const struct sl_held_limits *lim)
{
	struct sl_held *h = calloc(1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	h->lim = *lim;
	sl_idx_init(&h->ids, offsetof(struct sl_held_frame, id));
	*out = h;
	return 0;
}

void sl_held_free(struct sl_held *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->ids.cap; i++)
		free(h->ids.slots[i]);
	sl_idx_free(&h->ids);
	free(h);
}

void sl_held_set_limits(struct sl_held *h, const struct sl_held_limits *lim)
{
	h->lim = *lim;
}

static void account(struct sl_held *h, const struct sl_held_frame *f, int sign)
{
	uint64_t c = cost(f->len);

	if (sign > 0) {
		h->st.frames++;
		h->st.bytes += c;
		h->st.level_frames[f->level]++;
		h->st.level_bytes[f->level] += c;
	} else {
		h->st.frames--;
		h->st.bytes -= c;
		h->st.level_frames[f->level]--;
		h->st.level_bytes[f->level] -= c;
	}
}

struct sl_held_frame *sl_held_take(struct sl_held *h, uint64_t id)
{
	struct sl_held_frame *f = sl_idx_find(&h->ids, id);

	if (!f)
		return NULL;
	sl_idx_del(&h->ids, f);
	account(h, f, -1);
	return f;
}

void sl_held_drop(struct sl_held *h, uint64_t id)
{
	free(sl_held_take(h, id));
}

int sl_held_put(struct sl_held *h, uint64_t id, unsigned level, uint32_t ifindex,
		const uint8_t *frame, size_t len)
{
	struct sl_held_frame *f, *old;
	uint64_t c = cost(len);

	if (level >= SLUICE_MAX_LEVELS || !len || len > SLUICE_FRAME_MAX)
		return -EINVAL;
	old = sl_held_take(h, id); /* its bytes do not count against its successor */
	if (h->st.bytes + c > h->lim.max_bytes ||
	    h->st.level_bytes[level] + c > h->lim.max_bytes_per_level) {
		free(old);
		h->st.over_budget++;
		return -ENOSPC;
	}
	f = malloc(c);
	if (!f || sl_idx_reserve(&h->ids, 1)) {
		free(f);
		free(old);
		return -ENOMEM;
	}
	f->id = id;
	f->level = level;
	f->ifindex = ifindex;
	f->len = (uint16_t)len;
	memcpy(f->frame, frame, len);
	sl_idx_put(&h->ids, f);
	account(h, f, +1);
	if (old)
		h->st.replaced++;
	else
		h->st.held++;
	free(old);
	return 0;
}

bool sl_held_has(const struct sl_held *h, uint64_t id)
{
	return sl_idx_find(&h->ids, id) != NULL;
}

void sl_held_get_stats(const struct sl_held *h, struct sl_held_stats *out)
{
	*out = h->st;
}

void sl_held_level(const struct sl_held *h, unsigned level, uint64_t *frames, uint64_t *bytes)
{
	*frames = level < SLUICE_MAX_LEVELS ? h->st.level_frames[level] : 0;
	*bytes = level < SLUICE_MAX_LEVELS ? h->st.level_bytes[level] : 0;
}
