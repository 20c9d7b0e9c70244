/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The four dimensions of a compiled classification (pure): client
 * address, local address, client port, local port, each cut into classes
 * inside which every predicate of the configuration is constant
 * (docs/ARCHITECTURE.md "Compiled classification").
 *
 * An address dimension is a set of prefixes; the class of an address is
 * its longest matching prefix (0: none), as the data path's LPM trie
 * finds it.  Sorted by (address, length), the prefixes inside a prefix
 * follow it contiguously, so the classes inside a CIDR are one range of
 * ids.  A port dimension is cut at range boundaries; its classes are
 * intervals, and the classes of a port range are one range too.
 * Everything here is O(n log n) in the number of prefixes.
 */
#ifndef SLUICE_CLASS_DIMS_H
#define SLUICE_CLASS_DIMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"

struct sl_prefix_class {
	uint8_t addr[16];
	uint8_t prefix_len; /* 0..128 (v4-mapped) */
	uint16_t cls;       /* >= 1; class 0 is "no prefix matched" */
};

/* A range of class ids, inclusive. */
struct sl_cls_range {
	uint16_t lo, hi;
};

struct sl_addr_dim {
	struct sl_prefix_class *v; /* sorted by (addr, len), unique; v[i].cls = i + 1 */
	size_t n, cap;
	size_t *end;               /* end[i]: one past the last prefix inside v[i] */
	uint8_t (*rep)[16];        /* rep[cls] (n + 1): an address whose class is cls */
	bool *live;                /* live[cls]: some address has that class */
	size_t n_live;
};

struct sl_port_dim {
	uint8_t *cut;   /* [65537] while collecting: a class starts at port p */
	uint16_t *cls;  /* [65536] class of each port */
	uint16_t *rep;  /* [n] first port of each class */
	uint16_t n;     /* classes (all live) */
};

/* Dimension indexes; 1 << SL_D_x is SLUICE_DIM_x of the map ABI. */
enum sl_dim_index { SL_D_SRC = 0, SL_D_DST = 1, SL_D_SPORT = 2, SL_D_DPORT = 3, SL_DIMS = 4 };

/* All four, and the live classes of each, listed and positioned. */
struct sl_dims {
	struct sl_addr_dim src, dst;
	struct sl_port_dim sport, dport;
	uint16_t *live[SL_DIMS];  /* live class ids, ascending */
	size_t n_live[SL_DIMS];
	uint32_t *pos[SL_DIMS];   /* pos[d][id]: index in live[d], UINT32_MAX if dead */
	size_t n_cls[SL_DIMS];    /* class ids 0 .. n_cls - 1 */
};

/* Collecting: add a prefix (host bits cleared; duplicates allowed until
 * sl_addr_dim_finish).  0 or -ENOMEM. */
int sl_addr_dim_add(struct sl_addr_dim *d, const uint8_t addr[16], unsigned prefix_len);
int sl_addr_dim_add_cidrs(struct sl_addr_dim *d, const struct sl_cidr *c, size_t n);
/* Sort, drop duplicates, number the classes, find their representatives. */
int sl_addr_dim_finish(struct sl_addr_dim *d);
/* The classes inside any of these CIDRs (each was added), appended to
 * *out (a growing array of *n ranges, sorted and merged).  0 or -ENOMEM. */
int sl_addr_dim_ranges(const struct sl_addr_dim *d, const struct sl_cidr *c, size_t n,
		       struct sl_cls_range **out, size_t *n_out);
void sl_addr_dim_free(struct sl_addr_dim *d);

int sl_port_dim_init(struct sl_port_dim *d);
void sl_port_dim_cut_ranges(struct sl_port_dim *d, const struct sl_port_range *r, size_t n);
void sl_port_dim_cut_port(struct sl_port_dim *d, unsigned port);
void sl_port_dim_finish(struct sl_port_dim *d);
int sl_port_dim_ranges(const struct sl_port_dim *d, const struct sl_port_range *r, size_t n,
		       struct sl_cls_range **out, size_t *n_out);
void sl_port_dim_free(struct sl_port_dim *d);

int sl_dims_init(struct sl_dims *d);
/* After every cut: finish the four dimensions and list their live classes. */
int sl_dims_finish(struct sl_dims *d);
/* The live ids of ranges in dimension `dim`, appended to *ids.  0 or -ENOMEM. */
int sl_dims_live_in(const struct sl_dims *d, unsigned dim, const struct sl_cls_range *r, size_t n,
		    uint16_t **ids, size_t *n_ids);
void sl_dims_free(struct sl_dims *d);

#endif
