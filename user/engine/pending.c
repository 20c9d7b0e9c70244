// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "engine/pending.h"

#include <stdlib.h>
#include <string.h>

#include "lib/flowhash.h"

/* Open addressing over slot indices; EMPTY / TOMBSTONE markers. */
#define EMPTY     UINT32_MAX
#define TOMBSTONE (UINT32_MAX - 1)

struct sl_pending_table {
	struct sl_pending *slab;
	uint32_t *gen;       /* generation per slab slot */
	uint32_t *free_list; /* stack of free slab slots */
	size_t n_free, cap, count;
	/* The slots in use, densely (count of them), and each slot's place
	 * there: a walk visits the records, not the capacity (65,536 slots
	 * every tick, most of them empty on a normal day). */
	uint32_t *live, *live_pos;
	uint32_t *index;     /* hash index: slab slot or EMPTY/TOMBSTONE */
	size_t index_cap;    /* power of two, >= 2 * cap */
	size_t tombstones;
	uint64_t probes;     /* index slots looked at, in all (sl_pending_probes) */
	uint8_t hash_key[16];
};

static uint64_t key_hash(const struct sl_pending_table *t, const struct sluice_conn_key *k)
{
	return sl_siphash24(t->hash_key, k, sizeof(*k));
}

struct sl_pending_table *sl_pending_new(size_t capacity, const uint8_t key[16])
{
	struct sl_pending_table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->cap = capacity ? capacity : 1;
	t->index_cap = 1;
	while (t->index_cap < 2 * t->cap)
		t->index_cap <<= 1;
	t->slab = calloc(t->cap, sizeof(*t->slab));
	t->gen = calloc(t->cap, sizeof(*t->gen));
	t->free_list = calloc(t->cap, sizeof(*t->free_list));
	t->live = calloc(t->cap, sizeof(*t->live));
	t->live_pos = calloc(t->cap, sizeof(*t->live_pos));
	t->index = malloc(t->index_cap * sizeof(*t->index));
	if (!t->slab || !t->gen || !t->free_list || !t->live || !t->live_pos || !t->index) {
		sl_pending_free(t);
		return NULL;
	}
	for (size_t i = 0; i < t->index_cap; i++)
		t->index[i] = EMPTY;
	for (size_t i = 0; i < t->cap; i++)
		t->free_list[i] = (uint32_t)(t->cap - 1 - i);
	t->n_free = t->cap;
	/* The 4-tuple is the client's to choose: under a key it could know, a
	 * client could choose 4-tuples that all land in one probe run (issue
	 * 26: 65,536 of them in one IPv6 /64 took 0.27 s to find, and then an
	 * insert cost 46 us instead of 0.2).  The caller's secret key makes
	 * that a guess. */
	memcpy(t->hash_key, key, 16);
	return t;
}

void sl_pending_free(struct sl_pending_table *t)
{
	if (!t)
		return;
	free(t->slab);
	free(t->gen);
	free(t->free_list);
	free(t->live);
	free(t->live_pos);
	free(t->index);
	free(t);
}

/* Index position holding key, or where it would go (first tombstone or
 * empty); *found says which. */
static size_t probe(const struct sl_pending_table *t, const struct sluice_conn_key *k, bool *found)
{
	size_t mask = t->index_cap - 1, pos = (size_t)key_hash(t, k) & mask, first_free = SIZE_MAX;

	for (size_t n = 0; n < t->index_cap; n++, pos = (pos + 1) & mask) {
		uint32_t s = t->index[pos];

		((struct sl_pending_table *)t)->probes++;
		if (s == EMPTY) {
			*found = false;
			return first_free != SIZE_MAX ? first_free : pos;
		}
		if (s == TOMBSTONE) {
			if (first_free == SIZE_MAX)
				first_free = pos;
			continue;
		}
		if (!memcmp(&t->slab[s].key, k, sizeof(*k))) {
			*found = true;
			return pos;
		}
	}
	*found = false;
	return first_free;
}

struct sl_pending *sl_pending_add(struct sl_pending_table *t, const struct sluice_conn_key *key,
				  bool *exists)
{
	struct sl_pending *p;
	bool found;
	size_t pos = probe(t, key, &found);
	uint32_t slot;

	*exists = found;
	if (found || !t->n_free || pos == SIZE_MAX)
		return NULL;
	slot = t->free_list[--t->n_free];
	t->gen[slot]++;
	p = &t->slab[slot];
	memset(p, 0, sizeof(*p));
	p->id = ((uint64_t)t->gen[slot] << 32) | slot;
	p->key = *key;
	p->state = SL_PENDING_QUEUED;
	if (t->index[pos] == TOMBSTONE)
		t->tombstones--;
	t->index[pos] = slot;
	t->live_pos[slot] = (uint32_t)t->count;
	t->live[t->count++] = slot;
	return p;
}

struct sl_pending *sl_pending_by_key(struct sl_pending_table *t, const struct sluice_conn_key *key)
{
	bool found;
	size_t pos = probe(t, key, &found);

	return found ? &t->slab[t->index[pos]] : NULL;
}

struct sl_pending *sl_pending_by_id(struct sl_pending_table *t, uint64_t id)
{
	uint32_t slot = (uint32_t)id;

	if (slot >= t->cap || t->gen[slot] != (uint32_t)(id >> 32) || t->slab[slot].id != id ||
	    !t->slab[slot].state)
		return NULL;
	return &t->slab[slot];
}

/* Rebuild the index from the slab: drops every tombstone. */
static void rehash(struct sl_pending_table *t)
{
	for (size_t i = 0; i < t->index_cap; i++)
		t->index[i] = EMPTY;
	t->tombstones = 0;
	for (size_t s = 0; s < t->cap; s++) {
		bool found;
		size_t pos;

		if (!t->slab[s].state)
			continue;
		pos = probe(t, &t->slab[s].key, &found);
		t->index[pos] = (uint32_t)s;
	}
}

void sl_pending_remove(struct sl_pending_table *t, struct sl_pending *p)
{
	bool found;
	size_t pos = probe(t, &p->key, &found);
	uint32_t slot = (uint32_t)(p - t->slab);

	if (!found || t->index[pos] != slot)
		return;
	t->index[pos] = TOMBSTONE;
	t->tombstones++;
	p->state = 0;
	p->id = 0;
	t->free_list[t->n_free++] = slot;
	/* The last live slot takes its place. */
	t->count--;
	t->live[t->live_pos[slot]] = t->live[t->count];
	t->live_pos[t->live[t->count]] = t->live_pos[slot];
	/* Tombstones lengthen every probe: rebuild before they dominate. */
	if (t->tombstones > t->index_cap / 4)
		rehash(t);
}

uint64_t sl_pending_probes(const struct sl_pending_table *t)
{
	return t->probes;
}

size_t sl_pending_count(const struct sl_pending_table *t)
{
	return t->count;
}

void sl_pending_each(struct sl_pending_table *t, void (*fn)(struct sl_pending *p, void *ctx), void *ctx)
{
	/* Backwards: a record removed by its callback is replaced by the last
	 * live one, which this walk has visited already. */
	for (size_t i = t->count; i-- > 0;)
		fn(&t->slab[t->live[i]], ctx);
}
