// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "lib/id_index.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static uint64_t id_of(const struct sl_idx *x, const void *item)
{
	uint64_t id;

	memcpy(&id, (const char *)item + x->id_offset, sizeof(id));
	return id;
}

static size_t home(const struct sl_idx *x, uint64_t id)
{
	/* splitmix64 finaliser */
	id ^= id >> 30;
	id *= UINT64_C(0xbf58476d1ce4e5b9);
	id ^= id >> 27;
	id *= UINT64_C(0x94d049bb133111eb);
	id ^= id >> 31;
	return (size_t)id & (x->cap - 1);
}

void sl_idx_init(struct sl_idx *x, size_t id_offset)
{
	memset(x, 0, sizeof(*x));
	x->id_offset = id_offset;
}

void sl_idx_free(struct sl_idx *x)
{
	free(x->slots);
	x->slots = NULL;
	x->cap = x->count = 0;
}

void sl_idx_put(struct sl_idx *x, void *item)
{
	size_t mask = x->cap - 1, i = home(x, id_of(x, item));

	while (x->slots[i])
		i = (i + 1) & mask;
	x->slots[i] = item;
	x->count++;
}

int sl_idx_reserve(struct sl_idx *x, size_t extra)
{
	size_t need = 2 * (x->count + extra), cap, old_cap = x->cap;
	void **old = x->slots, **t;

	if (need <= x->cap)
		return 0;
	cap = x->cap ? x->cap : 16;
	while (cap < need)
		cap *= 2;
	t = calloc(cap, sizeof(*t));
	if (!t)
		return -ENOMEM;
	x->slots = t;
	x->cap = cap;
	x->count = 0;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i])
			sl_idx_put(x, old[i]);
	free(old);
	return 0;
}

void sl_idx_del(struct sl_idx *x, const void *item)
{
	size_t mask = x->cap - 1, i = home(x, id_of(x, item)), j;

	while (x->slots[i] != item)
		i = (i + 1) & mask;
	/* Shift back the entries of the probe run that could live at i: an
	 * entry at j may move to i unless its home lies cyclically in (i, j]. */
	for (j = i;;) {
		size_t k;
		bool stays;

		j = (j + 1) & mask;
		if (!x->slots[j])
			break;
		k = home(x, id_of(x, x->slots[j]));
		stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
		if (!stays) {
			x->slots[i] = x->slots[j];
			i = j;
		}
	}
	x->slots[i] = NULL;
	x->count--;
}

void *sl_idx_next(const struct sl_idx *x, uint64_t id, size_t *pos)
{
	size_t mask, i;

	if (!x->cap)
		return NULL;
	mask = x->cap - 1;
	/* *pos counts the probes already made from the home slot. */
	for (i = (home(x, id) + *pos) & mask; x->slots[i] && *pos <= mask; i = (i + 1) & mask) {
		void *item = x->slots[i];

		(*pos)++;
		if (id_of(x, item) == id)
			return item;
	}
	return NULL;
}

void *sl_idx_find(const struct sl_idx *x, uint64_t id)
{
	size_t pos = 0;

	return sl_idx_next(x, id, &pos);
}
