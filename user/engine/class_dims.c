// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "engine/class_dims.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"

typedef unsigned __int128 u128;

static u128 addr_to_u128(const uint8_t a[16])
{
	u128 v = 0;

	for (int i = 0; i < 16; i++)
		v = (v << 8) | a[i];
	return v;
}

static void u128_to_addr(u128 v, uint8_t a[16])
{
	for (int i = 15; i >= 0; i--) {
		a[i] = (uint8_t)v;
		v >>= 8;
	}
}

static u128 prefix_first(const struct sl_prefix_class *p)
{
	return addr_to_u128(p->addr);
}

static u128 prefix_last(const struct sl_prefix_class *p)
{
	u128 host = p->prefix_len >= 128 ? 0 :
		    p->prefix_len == 0 ? ~(u128)0 : (((u128)1 << (128 - p->prefix_len)) - 1);

	return addr_to_u128(p->addr) | host;
}

static void clear_host_bits(uint8_t addr[16], unsigned len)
{
	for (unsigned b = len; b < 128; b++)
		addr[b / 8] &= (uint8_t)~(0x80 >> (b % 8));
}

/* ---- address dimensions -------------------------------------------------- */

int sl_addr_dim_add(struct sl_addr_dim *d, const uint8_t addr[16], unsigned prefix_len)
{
	struct sl_prefix_class p = {.prefix_len = (uint8_t)prefix_len};

	memcpy(p.addr, addr, 16);
	clear_host_bits(p.addr, prefix_len);
	if (sl_grow((void **)&d->v, &d->cap, d->n + 1, sizeof(*d->v)))
		return -ENOMEM;
	d->v[d->n++] = p;
	return 0;
}

int sl_addr_dim_add_cidrs(struct sl_addr_dim *d, const struct sl_cidr *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int err = sl_addr_dim_add(d, c[i].addr, c[i].prefix_len);

		if (err)
			return err;
	}
	return 0;
}

static int cmp_prefix(const void *a, const void *b)
{
	const struct sl_prefix_class *x = a, *y = b;
	int c = memcmp(x->addr, y->addr, 16);

	if (c)
		return c;
	return (int)x->prefix_len - (int)y->prefix_len;
}

/* The first address of [lo, hi] outside the subtrees of the prefixes
 * v[first_child], v[end[first_child]], ... (the prefixes directly inside
 * the range, in address order), if any. */
static bool first_uncovered(const struct sl_addr_dim *d, size_t child, size_t stop, u128 lo,
			    u128 hi, u128 *out)
{
	u128 next = lo;

	for (; child < stop; child = d->end[child]) {
		u128 f = prefix_first(&d->v[child]), l = prefix_last(&d->v[child]);

		if (f > next)
			break;
		if (l >= hi)
			return false;
		next = l + 1;
	}
	*out = next;
	return true;
}

static void set_rep(struct sl_addr_dim *d, size_t cls, bool live, u128 rep)
{
	d->live[cls] = live;
	if (live) {
		u128_to_addr(rep, d->rep[cls]);
		d->n_live++;
	}
}

int sl_addr_dim_finish(struct sl_addr_dim *d)
{
	size_t *stack = NULL, depth = 0, n = 0;
	u128 rep = 0;
	bool live;

	if (d->n)
		qsort(d->v, d->n, sizeof(*d->v), cmp_prefix);
	for (size_t i = 0; i < d->n; i++) /* unique */
		if (!n || cmp_prefix(&d->v[n - 1], &d->v[i]))
			d->v[n++] = d->v[i];
	d->n = n;
	d->end = calloc(n + 1, sizeof(*d->end));
	d->rep = calloc(n + 1, sizeof(*d->rep));
	d->live = calloc(n + 1, sizeof(*d->live));
	stack = calloc(n + 1, sizeof(*stack));
	if (!d->end || !d->rep || !d->live || !stack) {
		free(stack);
		return -ENOMEM;
	}
	/* Subtrees: a prefix's subtree ends where the first prefix outside
	 * it starts (sorted order visits a tree depth first). */
	for (size_t i = 0; i < n; i++) {
		d->v[i].cls = (uint16_t)(i + 1);
		while (depth && prefix_last(&d->v[stack[depth - 1]]) < prefix_first(&d->v[i]))
			d->end[stack[--depth]] = i;
		stack[depth++] = i;
	}
	while (depth)
		d->end[stack[--depth]] = n;
	free(stack);

	/* Class 0 is what no prefix covers; class i + 1 what v[i] covers
	 * outside its sub-prefixes. */
	d->n_live = 0;
	live = first_uncovered(d, 0, n, 0, ~(u128)0, &rep);
	set_rep(d, 0, live, rep);
	for (size_t i = 0; i < n; i++) {
		live = first_uncovered(d, i + 1, d->end[i], prefix_first(&d->v[i]),
				       prefix_last(&d->v[i]), &rep);
		set_rep(d, i + 1, live, rep);
	}
	return 0;
}

/* Index of the prefix equal to p, or (size_t)-1. */
static size_t find_prefix(const struct sl_addr_dim *d, const struct sl_prefix_class *p)
{
	size_t lo = 0, hi = d->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = cmp_prefix(&d->v[mid], p);

		if (!c)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (size_t)-1;
}

static int cmp_range(const void *a, const void *b)
{
	const struct sl_cls_range *x = a, *y = b;

	return (int)x->lo - (int)y->lo;
}

static int push_range(struct sl_cls_range **v, size_t *n, uint16_t lo, uint16_t hi)
{
	/* Capacity 4, then doubled whenever n reaches a power of two. */
	if (*n == 0 || (*n >= 4 && !(*n & (*n - 1)))) {
		size_t cap = *n ? *n * 2 : 4;
		void *nv = realloc(*v, cap * sizeof(**v));

		if (!nv)
			return -ENOMEM;
		*v = nv;
	}
	(*v)[(*n)++] = (struct sl_cls_range){lo, hi};
	return 0;
}

/* Sort, then merge the ranges that overlap or touch. */
static void merge_ranges(struct sl_cls_range *v, size_t *n)
{
	size_t m = 0;

	if (!*n)
		return;
	qsort(v, *n, sizeof(*v), cmp_range);
	for (size_t i = 1; i < *n; i++) {
		if ((unsigned)v[i].lo <= (unsigned)v[m].hi + 1) {
			if (v[i].hi > v[m].hi)
				v[m].hi = v[i].hi;
		} else {
			v[++m] = v[i];
		}
	}
	*n = m + 1;
}

int sl_addr_dim_ranges(const struct sl_addr_dim *d, const struct sl_cidr *c, size_t n,
		       struct sl_cls_range **out, size_t *n_out)
{
	for (size_t i = 0; i < n; i++) {
		struct sl_prefix_class p = {.prefix_len = c[i].prefix_len};
		size_t at;
		int err;

		memcpy(p.addr, c[i].addr, 16);
		clear_host_bits(p.addr, p.prefix_len);
		at = find_prefix(d, &p);
		if (at == (size_t)-1)
			return -ENOENT; /* not collected: a compiler bug */
		/* Ids at + 1 .. end[at]: the prefix and everything inside it. */
		if ((err = push_range(out, n_out, (uint16_t)(at + 1), (uint16_t)d->end[at])))
			return err;
	}
	merge_ranges(*out, n_out);
	return 0;
}

void sl_addr_dim_free(struct sl_addr_dim *d)
{
	free(d->v);
	free(d->end);
	free(d->rep);
	free(d->live);
	memset(d, 0, sizeof(*d));
}

/* ---- port dimensions ----------------------------------------------------- */

int sl_port_dim_init(struct sl_port_dim *d)
{
	memset(d, 0, sizeof(*d));
	d->cut = calloc(65537, 1);
	d->cls = calloc(65536, sizeof(*d->cls));
	d->rep = calloc(65536, sizeof(*d->rep));
	return d->cut && d->cls && d->rep ? 0 : -ENOMEM;
}

void sl_port_dim_cut_ranges(struct sl_port_dim *d, const struct sl_port_range *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		d->cut[r[i].lo] = 1;
		d->cut[(unsigned)r[i].hi + 1] = 1;
	}
}

void sl_port_dim_cut_port(struct sl_port_dim *d, unsigned port)
{
	d->cut[port] = 1;
	d->cut[port + 1] = 1;
}

void sl_port_dim_finish(struct sl_port_dim *d)
{
	uint16_t cls = 0;

	d->rep[0] = 0;
	for (unsigned p = 0; p <= 65535; p++) {
		if (p > 0 && d->cut[p]) {
			cls++;
			d->rep[cls] = (uint16_t)p;
		}
		d->cls[p] = cls;
	}
	d->n = (uint16_t)(cls + 1);
}

int sl_port_dim_ranges(const struct sl_port_dim *d, const struct sl_port_range *r, size_t n,
		       struct sl_cls_range **out, size_t *n_out)
{
	for (size_t i = 0; i < n; i++) {
		int err = push_range(out, n_out, d->cls[r[i].lo], d->cls[r[i].hi]);

		if (err)
			return err;
	}
	merge_ranges(*out, n_out);
	return 0;
}

void sl_port_dim_free(struct sl_port_dim *d)
{
	free(d->cut);
	free(d->cls);
	free(d->rep);
	memset(d, 0, sizeof(*d));
}

/* ---- the four together --------------------------------------------------- */

int sl_dims_init(struct sl_dims *d)
{
	int err;

	memset(d, 0, sizeof(*d));
	if ((err = sl_port_dim_init(&d->sport)) || (err = sl_port_dim_init(&d->dport)))
		return err;
	return 0;
}

static int list_live(struct sl_dims *d, unsigned dim, const bool *live, size_t n_cls)
{
	d->n_cls[dim] = n_cls;
	d->live[dim] = calloc(n_cls ? n_cls : 1, sizeof(*d->live[dim]));
	d->pos[dim] = calloc(n_cls ? n_cls : 1, sizeof(*d->pos[dim]));
	if (!d->live[dim] || !d->pos[dim])
		return -ENOMEM;
	for (size_t c = 0; c < n_cls; c++) {
		d->pos[dim][c] = UINT32_MAX;
		if (live && !live[c])
			continue;
		d->pos[dim][c] = (uint32_t)d->n_live[dim];
		d->live[dim][d->n_live[dim]++] = (uint16_t)c;
	}
	return 0;
}

int sl_dims_finish(struct sl_dims *d)
{
	int err;

	if ((err = sl_addr_dim_finish(&d->src)) || (err = sl_addr_dim_finish(&d->dst)))
		return err;
	sl_port_dim_finish(&d->sport);
	sl_port_dim_finish(&d->dport);
	if ((err = list_live(d, SL_D_SRC, d->src.live, d->src.n + 1)) ||
	    (err = list_live(d, SL_D_DST, d->dst.live, d->dst.n + 1)) ||
	    (err = list_live(d, SL_D_SPORT, NULL, d->sport.n)) ||
	    (err = list_live(d, SL_D_DPORT, NULL, d->dport.n)))
		return err;
	return 0;
}

int sl_dims_live_in(const struct sl_dims *d, unsigned dim, const struct sl_cls_range *r, size_t n,
		    uint16_t **ids, size_t *n_ids)
{
	size_t add = 0, at;
	void *v;

	for (size_t i = 0; i < n; i++)
		add += (size_t)r[i].hi - r[i].lo + 1;
	v = realloc(*ids, (*n_ids + add + 1) * sizeof(**ids));
	if (!v)
		return -ENOMEM;
	*ids = v;
	at = *n_ids;
	for (size_t i = 0; i < n; i++)
		for (unsigned c = r[i].lo; c <= r[i].hi && c < d->n_cls[dim]; c++)
			if (d->pos[dim][c] != UINT32_MAX)
				(*ids)[at++] = (uint16_t)c;
	*n_ids = at;
	return 0;
}

void sl_dims_free(struct sl_dims *d)
{
	sl_addr_dim_free(&d->src);
	sl_addr_dim_free(&d->dst);
	sl_port_dim_free(&d->sport);
	sl_port_dim_free(&d->dport);
	for (unsigned i = 0; i < SL_DIMS; i++) {
		free(d->live[i]);
		free(d->pos[i]);
	}
	memset(d, 0, sizeof(*d));
}
