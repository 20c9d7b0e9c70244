/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Conjunctions over class ids (pure): the unit the classification
 * compiler expands into tuple-space entries.
 *
 * A factor is a set of combinations of class ids over some dimensions
 * (its mask); a term is the AND of factors over disjoint masks, every
 * other dimension free.  A Network subject is a factor over the client
 * address, a destination's ports one over the local port; a label
 * selector gives one factor per group of dimensions its labels depend on.
 * A term matches the product of its factors, so its size is their
 * product, and ANDing factors that share a dimension joins them.
 */
#ifndef SLUICE_CLASS_TERMS_H
#define SLUICE_CLASS_TERMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/class_dims.h"

struct sl_factor {
	uint8_t mask;              /* 1 << SL_D_x bits */
	size_t n, cap;
	uint16_t (*ids)[SL_DIMS];  /* unique; 0 outside mask */
};

struct sl_term {
	struct sl_factor f[SL_DIMS];
	unsigned n;
	bool none;                 /* matches nothing */
};

int sl_factor_push(struct sl_factor *f, const uint16_t ids[SL_DIMS]);
/* One-dimension factor of these ids. */
int sl_factor_of_ids(struct sl_factor *f, unsigned dim, const uint16_t *ids, size_t n);
void sl_factor_free(struct sl_factor *f);

/* AND a factor into a term; the term takes f's storage (f is left empty).
 * An empty factor makes the term match nothing. */
int sl_term_and(struct sl_term *t, struct sl_factor *f);
int sl_term_and_term(struct sl_term *t, const struct sl_term *other);
int sl_term_copy(struct sl_term *dst, const struct sl_term *src);
void sl_term_free(struct sl_term *t);
uint8_t sl_term_mask(const struct sl_term *t);
/* Combinations it expands to (saturating at SIZE_MAX). */
size_t sl_term_size(const struct sl_term *t);

typedef int (*sl_term_fn)(const uint16_t ids[SL_DIMS], uint8_t mask, void *ctx);
/* fn for every combination; stops at the first non-zero return. */
int sl_term_expand(const struct sl_term *t, sl_term_fn fn, void *ctx);

#endif
