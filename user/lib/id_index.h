/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * An index of items by a 64-bit id (lib): open addressing with linear
 * probing at load <= 1/2, deletion by backward shift (no tombstones), ids
 * spread by the splitmix64 finaliser so sequential ids do not cluster.
 * It stores pointers to the caller's items and finds their id at a fixed
 * offset inside them; several items may share an id (sl_idx_next walks
 * them).  Growing is the only allocation: reserve before inserting, so an
 * insert never fails.
 */
#ifndef SLUICE_ID_INDEX_H
#define SLUICE_ID_INDEX_H

#include <stddef.h>
#include <stdint.h>

struct sl_idx {
	void **slots;   /* capacity 0 or a power of two */
	size_t cap, count;
	size_t id_offset; /* of the uint64_t id inside an item */
};

/* id_offset: offsetof(struct item, id). */
void sl_idx_init(struct sl_idx *x, size_t id_offset);
void sl_idx_free(struct sl_idx *x);

/* Room for `extra` more items.  0 or -ENOMEM (nothing changed). */
int sl_idx_reserve(struct sl_idx *x, size_t extra);
/* Insert (room reserved). */
void sl_idx_put(struct sl_idx *x, void *item);
/* Remove this item (which is in the index). */
void sl_idx_del(struct sl_idx *x, const void *item);

/* The items with this id: *pos = 0 starts, NULL ends. */
void *sl_idx_next(const struct sl_idx *x, uint64_t id, size_t *pos);
/* The first item with this id, or NULL. */
void *sl_idx_find(const struct sl_idx *x, uint64_t id);

#endif
