// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "engine/class_labels.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/classifier.h"
#include "lib/flowhash.h"
#include "lib/grow.h"
#include "lib/id_index.h"

struct derived_key {
	const char *key;
	uint8_t mask; /* dimensions the rules setting it test */
};

struct idx_item {
	uint64_t id; /* hash of the value */
	uint32_t combo;
};

struct key_index {
	const char *key;
	struct idx_item *items;
	struct sl_idx idx;
	struct key_index *next;
};

/* The class combinations of some dimensions, and the derived labels of
 * each (combo = sum of pos[dim] * stride[dim]). */
struct space {
	uint8_t mask;
	unsigned n_dims, dim[SL_DIMS];
	size_t stride[SL_DIMS];
	size_t size;
	size_t n_keys;
	const char **keys;      /* derived keys whose dimensions are inside mask */
	const char **val;       /* [size][n_keys], NULL = not set */
	struct sl_label *items; /* scratch for labels_at: built-ins + n_keys */
	struct key_index *indexes;
};

struct sl_label_eval {
	const struct sl_config *cfg;
	const struct sl_dims *dims;
	const char *iface;
	struct derived_key *keys;
	size_t n_keys;
	struct space *space[1u << SL_DIMS];
};

static const uint8_t hash_key[16];

static uint64_t value_hash(const char *v)
{
	return sl_siphash24(hash_key, v, strlen(v));
}

static uint8_t rule_mask(const struct sl_label_rule *r)
{
	return (uint8_t)((r->n_sources ? 1u << SL_D_SRC : 0) |
			 (r->n_destinations ? 1u << SL_D_DST : 0) |
			 (r->n_ports ? 1u << SL_D_DPORT : 0));
}

static struct derived_key *find_key(const struct sl_label_eval *e, const char *key)
{
	for (size_t i = 0; i < e->n_keys; i++)
		if (!strcmp(e->keys[i].key, key))
			return &e->keys[i];
	return NULL;
}

static uint8_t key_mask(const struct sl_label_eval *e, const char *key)
{
	const struct derived_key *k;

	if (!strcmp(key, SL_LABEL_SRC_IP) || !strcmp(key, SL_LABEL_IP_VERSION))
		return 1u << SL_D_SRC;
	if (!strcmp(key, SL_LABEL_DST_IP))
		return 1u << SL_D_DST;
	if (!strcmp(key, SL_LABEL_SRC_PORT))
		return 1u << SL_D_SPORT;
	if (!strcmp(key, SL_LABEL_DST_PORT))
		return 1u << SL_D_DPORT;
	k = find_key(e, key);
	return k ? k->mask : 0; /* proto, iface, or a label nobody sets */
}

int sl_label_eval_new(const struct sl_config *cfg, const struct sl_dims *dims, const char *iface,
		      struct sl_label_eval **out)
{
	struct sl_label_eval *e = calloc(1, sizeof(*e));
	size_t cap = 0;

	if (!e)
		return -ENOMEM;
	e->cfg = cfg;
	e->dims = dims;
	e->iface = iface ? iface : "";
	for (size_t o = 0; o < cfg->n_label_objects; o++) {
		const struct sl_label_object *obj = &cfg->label_objects[o];

		for (size_t r = 0; r < obj->n_rules; r++) {
			const struct sl_label_rule *rule = &obj->rules[r];

			for (size_t l = 0; l < rule->labels.count; l++) {
				struct derived_key *k = find_key(e, rule->labels.items[l].key);

				if (!k) {
					if (sl_grow((void **)&e->keys, &cap, e->n_keys + 1, sizeof(*e->keys))) {
						sl_label_eval_free(e);
						return -ENOMEM;
					}
					k = &e->keys[e->n_keys++];
					k->key = rule->labels.items[l].key;
					k->mask = 0;
				}
				k->mask |= rule_mask(rule);
			}
		}
	}
	*out = e;
	return 0;
}

/* ---- spaces -------------------------------------------------------------- */

static void space_free(struct space *s)
{
	if (!s)
		return;
	for (struct key_index *k = s->indexes, *next; k; k = next) {
		next = k->next;
		sl_idx_free(&k->idx);
		free(k->items);
		free(k);
	}
	free(s->keys);
	free(s->val);
	free(s->items);
	free(s);
}

static int space_ids(const struct sl_label_eval *e, const struct sl_label_rule *r,
		     unsigned dim, uint16_t **ids, size_t *n)
{
	struct sl_cls_range *ranges = NULL;
	size_t n_ranges = 0;
	int err;

	*n = 0;
	if (!r || !(rule_mask(r) & (1u << dim))) { /* every live class */
		*ids = malloc((e->dims->n_live[dim] + 1) * sizeof(**ids));
		if (!*ids)
			return -ENOMEM;
		memcpy(*ids, e->dims->live[dim], e->dims->n_live[dim] * sizeof(**ids));
		*n = e->dims->n_live[dim];
		return 0;
	}
	*ids = NULL;
	if (dim == SL_D_SRC)
		err = sl_addr_dim_ranges(&e->dims->src, r->sources, r->n_sources, &ranges, &n_ranges);
	else if (dim == SL_D_DST)
		err = sl_addr_dim_ranges(&e->dims->dst, r->destinations, r->n_destinations, &ranges,
					 &n_ranges);
	else
		err = sl_port_dim_ranges(&e->dims->dport, r->ports, r->n_ports, &ranges, &n_ranges);
	if (!err)
		err = sl_dims_live_in(e->dims, dim, ranges, n_ranges, ids, n);
	free(ranges);
	return err;
}

/* Give the rule's labels to every combination of the space it matches. */
static int apply_rule(const struct sl_label_eval *e, struct space *s, const struct sl_label_rule *r)
{
	uint16_t *ids[SL_DIMS] = {0};
	size_t n[SL_DIMS] = {0}, at[SL_DIMS] = {0}, slot[8], n_slot = 0;
	int err = 0;

	for (size_t l = 0; l < r->labels.count && n_slot < 8; l++)
		for (size_t k = 0; k < s->n_keys; k++)
			if (!strcmp(s->keys[k], r->labels.items[l].key))
				slot[n_slot++] = k * 64 + l;
	if (!n_slot)
		return 0;
	for (unsigned i = 0; i < s->n_dims && !err; i++)
		err = space_ids(e, r, s->dim[i], &ids[i], &n[i]);
	for (unsigned i = 0; i < s->n_dims && !err; i++)
		if (!n[i])
			goto out; /* matches no class of this space */
	while (!err) {
		size_t combo = 0;
		unsigned i;

		for (i = 0; i < s->n_dims; i++)
			combo += e->dims->pos[s->dim[i]][ids[i][at[i]]] * s->stride[i];
		for (size_t j = 0; j < n_slot; j++)
			s->val[combo * s->n_keys + slot[j] / 64] = r->labels.items[slot[j] % 64].value;
		for (i = 0; i < s->n_dims; i++) {
			if (++at[i] < n[i])
				break;
			at[i] = 0;
		}
		if (i == s->n_dims)
			break;
	}
out:
	for (unsigned i = 0; i < SL_DIMS; i++)
		free(ids[i]);
	return err;
}

static int space_get(struct sl_label_eval *e, uint8_t mask, struct space **out, size_t *size)
{
	struct space *s = e->space[mask];
	int err = 0;

	if (s) {
		*out = s;
		return 0;
	}
	*size = 1;
	for (unsigned d = 0; d < SL_DIMS; d++) {
		if (!(mask & (1u << d)))
			continue;
		if (*size > SL_LABEL_SPACE_MAX || e->dims->n_live[d] > SL_LABEL_SPACE_MAX)
			*size = SIZE_MAX / 2;
		else
			*size *= e->dims->n_live[d] ? e->dims->n_live[d] : 1;
	}
	if (*size > SL_LABEL_SPACE_MAX)
		return -E2BIG;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->mask = mask;
	s->size = *size;
	for (unsigned d = 0, stride = 1; d < SL_DIMS; d++) {
		if (!(mask & (1u << d)))
			continue;
		s->dim[s->n_dims] = d;
		s->stride[s->n_dims++] = stride;
		stride *= (unsigned)(e->dims->n_live[d] ? e->dims->n_live[d] : 1);
	}
	s->keys = calloc(e->n_keys + 1, sizeof(*s->keys));
	if (!s->keys)
		goto nomem;
	for (size_t k = 0; k < e->n_keys; k++)
		if (!(e->keys[k].mask & ~mask))
			s->keys[s->n_keys++] = e->keys[k].key;
	s->val = calloc(s->size * (s->n_keys ? s->n_keys : 1), sizeof(*s->val));
	s->items = calloc(8 + s->n_keys, sizeof(*s->items));
	if (!s->val || !s->items)
		goto nomem;
	/* Rules in order: a later one overrides an earlier for its keys. */
	for (size_t o = 0; o < e->cfg->n_label_objects && !err; o++) {
		const struct sl_label_object *obj = &e->cfg->label_objects[o];

		for (size_t r = 0; r < obj->n_rules && !err; r++)
			if (!(rule_mask(&obj->rules[r]) & ~mask))
				err = apply_rule(e, s, &obj->rules[r]);
	}
	if (err) {
		space_free(s);
		return err;
	}
	e->space[mask] = s;
	*out = s;
	return 0;
nomem:
	space_free(s);
	return -ENOMEM;
}

static uint16_t combo_id(const struct sl_label_eval *e, const struct space *s, size_t combo,
			 unsigned i)
{
	unsigned d = s->dim[i];

	return e->dims->live[d][(combo / s->stride[i]) % e->dims->n_live[d]];
}

struct builtin_bufs {
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN], sport[8], dport[8];
};

static void addr_string(const uint8_t a[16], char *buf, size_t len)
{
	if (sl_addr_is_v4(a))
		inet_ntop(AF_INET, a + 12, buf, (socklen_t)len);
	else
		inet_ntop(AF_INET6, a, buf, (socklen_t)len);
}

static void put_item(struct sl_labels *l, const char *key, const char *value)
{
	l->items[l->count].key = (char *)key;
	l->items[l->count++].value = (char *)value;
}

/* The labels of a combination, as the reference classifier gives them
 * to a connection of those classes (only those of the space's
 * dimensions; a matcher evaluated here reads no other).  Borrowed
 * strings: valid until the next call. */
static void labels_at(const struct sl_label_eval *e, const struct space *s, size_t combo,
		      struct builtin_bufs *b, struct sl_labels *l)
{
	l->items = s->items;
	l->count = 0;
	l->cap = 8 + s->n_keys;
	for (unsigned i = 0; i < s->n_dims; i++) {
		uint16_t id = combo_id(e, s, combo, i);

		switch (s->dim[i]) {
		case SL_D_SRC:
			addr_string(e->dims->src.rep[id], b->src, sizeof(b->src));
			put_item(l, SL_LABEL_SRC_IP, b->src);
			put_item(l, SL_LABEL_IP_VERSION, sl_addr_is_v4(e->dims->src.rep[id]) ? "4" : "6");
			break;
		case SL_D_DST:
			addr_string(e->dims->dst.rep[id], b->dst, sizeof(b->dst));
			put_item(l, SL_LABEL_DST_IP, b->dst);
			break;
		case SL_D_SPORT:
			snprintf(b->sport, sizeof(b->sport), "%u", e->dims->sport.rep[id]);
			put_item(l, SL_LABEL_SRC_PORT, b->sport);
			break;
		default:
			snprintf(b->dport, sizeof(b->dport), "%u", e->dims->dport.rep[id]);
			put_item(l, SL_LABEL_DST_PORT, b->dport);
			break;
		}
	}
	put_item(l, SL_LABEL_PROTO, "tcp");
	put_item(l, SL_LABEL_IFACE, e->iface);
	for (size_t k = 0; k < s->n_keys; k++)
		if (s->val[combo * s->n_keys + k])
			put_item(l, s->keys[k], s->val[combo * s->n_keys + k]);
}

static const char *value_at(const struct sl_label_eval *e, const struct space *s, size_t combo,
			    const char *key, struct builtin_bufs *b)
{
	struct sl_labels l;

	labels_at(e, s, combo, b, &l);
	return sl_labels_get(&l, key);
}

static struct key_index *index_of(const struct sl_label_eval *e, struct space *s, const char *key)
{
	struct builtin_bufs b;
	struct key_index *k;
	size_t n = 0;

	for (k = s->indexes; k; k = k->next)
		if (!strcmp(k->key, key))
			return k;
	k = calloc(1, sizeof(*k));
	if (!k)
		return NULL;
	k->key = key;
	sl_idx_init(&k->idx, offsetof(struct idx_item, id));
	k->items = calloc(s->size, sizeof(*k->items));
	if (!k->items || sl_idx_reserve(&k->idx, s->size)) {
		free(k->items);
		sl_idx_free(&k->idx);
		free(k);
		return NULL;
	}
	for (size_t c = 0; c < s->size; c++) {
		const char *v = value_at(e, s, c, key, &b);

		if (!v)
			continue;
		k->items[n] = (struct idx_item){.id = value_hash(v), .combo = (uint32_t)c};
		sl_idx_put(&k->idx, &k->items[n++]);
	}
	k->next = s->indexes;
	s->indexes = k;
	return k;
}

/* ---- groups -------------------------------------------------------------- */

struct group {
	uint8_t mask;
	bool has_expr;
	size_t n_reqs;
	struct sl_lm_requirement *reqs; /* shallow copies */
};

static void mask_visit(const struct sl_lm_ref *ref, void *ctx)
{
	void **c = ctx;
	const struct sl_label_eval *e = c[0];
	uint8_t *m = c[1];

	*m |= key_mask(e, ref->key);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The combinations of the group's space where it holds, ANDed into t. */
static int eval_group(struct sl_label_eval *e, const struct group *g,
		      const struct sl_label_matcher *m, struct sl_term *t, size_t *space_size)
{
	struct sl_label_matcher sub = {.reqs = g->reqs, .n_reqs = g->n_reqs,
				       .expr = g->has_expr ? m->expr : NULL};
	struct sl_factor f = {.mask = g->mask};
	const struct sl_lm_requirement *seed = NULL;
	uint32_t *cand = NULL;
	size_t n_cand = 0, cap_cand = 0, held = 0;
	struct builtin_bufs b;
	struct space *s;
	int err;

	if ((err = space_get(e, g->mask, &s, space_size)))
		return err;
	for (size_t i = 0; i < g->n_reqs && !seed; i++)
		if (g->reqs[i].op == SL_LM_IN && g->reqs[i].n_values && g->mask)
			seed = &g->reqs[i];
	if (seed) {
		struct key_index *k = index_of(e, s, seed->key);

		if (!k)
			return -ENOMEM;
		for (size_t v = 0; v < seed->n_values; v++) {
			uint64_t h = value_hash(seed->values[v]);
			size_t pos = 0;
			struct idx_item *it;

			while ((it = sl_idx_next(&k->idx, h, &pos))) {
				const char *val = value_at(e, s, it->combo, seed->key, &b);

				if (!val || strcmp(val, seed->values[v]))
					continue;
				if (sl_grow((void **)&cand, &cap_cand, n_cand + 1, sizeof(*cand))) {
					free(cand);
					return -ENOMEM;
				}
				cand[n_cand++] = it->combo;
			}
		}
		if (n_cand)
			qsort(cand, n_cand, sizeof(*cand), cmp_u32);
	} else {
		n_cand = s->size;
	}
	for (size_t i = 0; i < n_cand; i++) {
		size_t combo = seed ? cand[i] : i;
		uint16_t ids[SL_DIMS] = {0};
		struct sl_labels l;

		if (seed && i && cand[i] == cand[i - 1])
			continue;
		labels_at(e, s, combo, &b, &l);
		if (!sl_label_matcher_eval(&sub, &l))
			continue;
		held++;
		if (!g->mask)
			continue;
		for (unsigned d = 0; d < s->n_dims; d++)
			ids[s->dim[d]] = combo_id(e, s, combo, d);
		if ((err = sl_factor_push(&f, ids))) {
			free(cand);
			sl_factor_free(&f);
			return err;
		}
	}
	free(cand);
	if (held == s->size) { /* every class combination: no constraint */
		sl_factor_free(&f);
		return 0;
	}
	return sl_term_and(t, &f); /* empty: t matches nothing */
}

static size_t find_root(size_t *parent, size_t i)
{
	while (parent[i] != i)
		i = parent[i] = parent[parent[i]];
	return i;
}

int sl_label_eval_term(struct sl_label_eval *e, const struct sl_label_matcher *m,
		       struct sl_term *out, size_t *space_size)
{
	size_t n_items = m->n_reqs + (m->expr ? 1 : 0), n_groups = 0;
	uint8_t *mask = calloc(n_items + 1, sizeof(*mask));
	size_t *parent = calloc(n_items + 1, sizeof(*parent)), *group_of = calloc(n_items + 1, sizeof(*group_of));
	struct group *g = calloc(n_items + 1, sizeof(*g));
	int err = 0;

	memset(out, 0, sizeof(*out));
	*space_size = 0;
	if (!mask || !parent || !group_of || !g) {
		err = -ENOMEM;
		goto out;
	}
	/* Items: each requirement, then the expression tree; those sharing a
	 * dimension (or, with none, the constants) form one group. */
	for (size_t i = 0; i < n_items; i++) {
		parent[i] = i;
		if (i < m->n_reqs) {
			mask[i] = key_mask(e, m->reqs[i].key);
		} else {
			struct sl_label_matcher only = {.expr = m->expr};
			void *ctx[2] = {e, &mask[i]};

			sl_label_matcher_visit(&only, mask_visit, ctx);
		}
	}
	for (size_t i = 0; i < n_items; i++)
		for (size_t j = i + 1; j < n_items; j++)
			if ((mask[i] & mask[j]) || (!mask[i] && !mask[j]))
				parent[find_root(parent, j)] = find_root(parent, i);
	for (size_t i = 0; i < n_items; i++) {
		size_t r = find_root(parent, i);

		if (r == i)
			group_of[i] = n_groups++;
	}
	for (size_t i = 0; i < n_items; i++) {
		struct group *gr = &g[group_of[find_root(parent, i)]];

		gr->mask |= mask[i];
		if (i >= m->n_reqs) {
			gr->has_expr = true;
			continue;
		}
		if (!gr->reqs && !(gr->reqs = calloc(m->n_reqs, sizeof(*gr->reqs)))) {
			err = -ENOMEM;
			goto out;
		}
		gr->reqs[gr->n_reqs++] = m->reqs[i];
	}
	for (size_t i = 0; i < n_groups && !err && !out->none; i++)
		err = eval_group(e, &g[i], m, out, space_size);
out:
	if (g)
		for (size_t i = 0; i < n_groups; i++)
			free(g[i].reqs);
	free(g);
	free(mask);
	free(parent);
	free(group_of);
	if (err)
		sl_term_free(out);
	return err;
}

void sl_label_eval_free(struct sl_label_eval *e)
{
	if (!e)
		return;
	for (unsigned i = 0; i < (1u << SL_DIMS); i++)
		space_free(e->space[i]);
	free(e->keys);
	free(e);
}
