// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "engine/class_terms.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"
#include "lib/id_index.h"

int sl_factor_push(struct sl_factor *f, const uint16_t ids[SL_DIMS])
{
	if (sl_grow((void **)&f->ids, &f->cap, f->n + 1, sizeof(*f->ids)))
		return -ENOMEM;
	for (unsigned d = 0; d < SL_DIMS; d++)
		f->ids[f->n][d] = (f->mask & (1u << d)) ? ids[d] : 0;
	f->n++;
	return 0;
}

int sl_factor_of_ids(struct sl_factor *f, unsigned dim, const uint16_t *ids, size_t n)
{
	uint16_t c[SL_DIMS] = {0};

	memset(f, 0, sizeof(*f));
	f->mask = (uint8_t)(1u << dim);
	for (size_t i = 0; i < n; i++) {
		int err;

		c[dim] = ids[i];
		if ((err = sl_factor_push(f, c)))
			return err;
	}
	return 0;
}

void sl_factor_free(struct sl_factor *f)
{
	free(f->ids);
	memset(f, 0, sizeof(*f));
}

static bool agree(const uint16_t a[SL_DIMS], const uint16_t b[SL_DIMS], uint8_t common)
{
	for (unsigned d = 0; d < SL_DIMS; d++)
		if ((common & (1u << d)) && a[d] != b[d])
			return false;
	return true;
}

static uint64_t projection(const uint16_t ids[SL_DIMS], uint8_t common)
{
	uint64_t v = 0;

	for (unsigned d = 0; d < SL_DIMS; d++)
		v = v << 16 | ((common & (1u << d)) ? ids[d] : 0);
	return v;
}

struct join_item {
	uint64_t id; /* projection on the shared dimensions */
	size_t at;
};

/* The join of two factors: the combinations over both masks that agree
 * where they overlap.  A hash join (b indexed by its projection on the
 * shared dimensions), so a selector over 20,000 classes ANDed with a
 * workload over 10,000 costs 30,000 steps, not 200 million. */
static int join(const struct sl_factor *a, const struct sl_factor *b, struct sl_factor *out)
{
	uint8_t common = a->mask & b->mask;
	struct join_item *items = calloc(b->n + 1, sizeof(*items));
	struct sl_idx idx;
	int err = 0;

	memset(out, 0, sizeof(*out));
	out->mask = a->mask | b->mask;
	sl_idx_init(&idx, offsetof(struct join_item, id));
	if (!items || sl_idx_reserve(&idx, b->n + 1)) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t j = 0; j < b->n; j++) {
		items[j] = (struct join_item){projection(b->ids[j], common), j};
		sl_idx_put(&idx, &items[j]);
	}
	for (size_t i = 0; i < a->n && !err; i++) {
		struct join_item *hit;
		size_t pos = 0;

		while (!err && (hit = sl_idx_next(&idx, projection(a->ids[i], common), &pos))) {
			uint16_t c[SL_DIMS];
			const uint16_t *bj = b->ids[hit->at];

			if (!agree(a->ids[i], bj, common))
				continue;
			for (unsigned d = 0; d < SL_DIMS; d++)
				c[d] = (a->mask & (1u << d)) ? a->ids[i][d] : bj[d];
			err = sl_factor_push(out, c);
		}
	}
out:
	sl_idx_free(&idx);
	free(items);
	if (err)
		sl_factor_free(out);
	return err;
}

int sl_term_and(struct sl_term *t, struct sl_factor *f)
{
	struct sl_factor cur = *f;

	memset(f, 0, sizeof(*f));
	if (t->none || !cur.n) {
		sl_factor_free(&cur);
		t->none = true;
		return 0;
	}
	/* Join with every factor it overlaps, until it overlaps none. */
	for (unsigned i = 0; i < t->n;) {
		struct sl_factor j;
		int err;

		if (!(t->f[i].mask & cur.mask)) {
			i++;
			continue;
		}
		err = join(&t->f[i], &cur, &j);
		sl_factor_free(&cur);
		if (err)
			return err;
		cur = j;
		sl_factor_free(&t->f[i]);
		t->f[i] = t->f[--t->n];
		memset(&t->f[t->n], 0, sizeof(t->f[t->n]));
		i = 0;
	}
	if (!cur.n) {
		sl_factor_free(&cur);
		t->none = true;
		return 0;
	}
	t->f[t->n++] = cur;
	return 0;
}

static int factor_copy(struct sl_factor *dst, const struct sl_factor *src)
{
	*dst = *src;
	dst->ids = NULL;
	dst->cap = src->n;
	if (!src->n)
		return 0;
	dst->ids = malloc(src->n * sizeof(*dst->ids));
	if (!dst->ids)
		return -ENOMEM;
	memcpy(dst->ids, src->ids, src->n * sizeof(*dst->ids));
	return 0;
}

int sl_term_and_term(struct sl_term *t, const struct sl_term *other)
{
	if (other->none) {
		sl_term_free(t);
		t->none = true;
		return 0;
	}
	for (unsigned i = 0; i < other->n && !t->none; i++) {
		struct sl_factor f;
		int err;

		if ((err = factor_copy(&f, &other->f[i])) || (err = sl_term_and(t, &f)))
			return err;
	}
	return 0;
}

int sl_term_copy(struct sl_term *dst, const struct sl_term *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->none = src->none;
	for (unsigned i = 0; i < src->n; i++) {
		int err = factor_copy(&dst->f[i], &src->f[i]);

		dst->n = i + 1;
		if (err) {
			sl_term_free(dst);
			return err;
		}
	}
	return 0;
}

void sl_term_free(struct sl_term *t)
{
	for (unsigned i = 0; i < t->n; i++)
		sl_factor_free(&t->f[i]);
	memset(t, 0, sizeof(*t));
}

uint8_t sl_term_mask(const struct sl_term *t)
{
	uint8_t m = 0;

	for (unsigned i = 0; i < t->n; i++)
		m |= t->f[i].mask;
	return m;
}

size_t sl_term_size(const struct sl_term *t)
{
	size_t n = 1;

	if (t->none)
		return 0;
	for (unsigned i = 0; i < t->n; i++) {
		if (t->f[i].n && n > SIZE_MAX / t->f[i].n)
			return SIZE_MAX;
		n *= t->f[i].n;
	}
	return n;
}

int sl_term_expand(const struct sl_term *t, sl_term_fn fn, void *ctx)
{
	size_t at[SL_DIMS] = {0};
	uint8_t mask = sl_term_mask(t);

	if (t->none)
		return 0;
	for (;;) {
		uint16_t ids[SL_DIMS] = {0};
		unsigned i;
		int err;

		for (i = 0; i < t->n; i++)
			for (unsigned d = 0; d < SL_DIMS; d++)
				if (t->f[i].mask & (1u << d))
					ids[d] = t->f[i].ids[at[i]][d];
		if ((err = fn(ids, mask, ctx)))
			return err;
		/* Odometer over the factors. */
		for (i = 0; i < t->n; i++) {
			if (++at[i] < t->f[i].n)
				break;
			at[i] = 0;
		}
		if (i == t->n)
			return 0;
	}
}
