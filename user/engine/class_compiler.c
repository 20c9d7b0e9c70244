// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "engine/class_compiler.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/class_labels.h"
#include "engine/class_terms.h"
#include "engine/classifier.h"
#include "lib/fmt.h"
#include "lib/grow.h"
#include "lib/id_index.h"

/* ---- collecting the cuts ------------------------------------------------- */

struct collect {
	const struct sl_config *cfg;
	struct sl_dims *dims;
	struct sl_diags *diags;
	const char *where; /* object being visited, for diagnostics */
	const char *file;  /* and where it is: the subject's or selector's line */
	unsigned line, column;
	int err;
};

/* Literal values of address and port labels become cuts; a regex over
 * them cannot be compiled into classes. */
static void visit_ref(const struct sl_lm_ref *ref, void *ctx)
{
	struct collect *c = ctx;
	bool is_src_ip = !strcmp(ref->key, SL_LABEL_SRC_IP), is_dst_ip = !strcmp(ref->key, SL_LABEL_DST_IP);
	bool is_sport = !strcmp(ref->key, SL_LABEL_SRC_PORT), is_dport = !strcmp(ref->key, SL_LABEL_DST_PORT);

	if (!is_src_ip && !is_dst_ip && !is_sport && !is_dport)
		return;
	if (ref->regex) {
		sl_diags_add(c->diags, SL_SEV_ERROR, c->file ? c->file : c->cfg->source_file, c->line,
			     c->column, c->where, NULL,
			     "label_matches on '%s' cannot be compiled into the data path; "
			     "match addresses with CIDRs (a ConnectionLabels object or a Network "
			     "subject) and ports with port lists", ref->key);
		c->err = -EINVAL;
		return;
	}
	for (size_t i = 0; i < ref->n_values && !c->err; i++) {
		const char *v = ref->values[i];

		if (is_src_ip || is_dst_ip) {
			uint8_t a[16];

			/* A value that is not an address can never be equal
			 * to the label: no cut needed. */
			if (sl_parse_addr(v, a) > 0)
				c->err = sl_addr_dim_add(is_src_ip ? &c->dims->src : &c->dims->dst, a, 128);
		} else {
			char *end;
			unsigned long p = strtoul(v, &end, 10);

			if (*v && !*end && p <= 65535)
				sl_port_dim_cut_port(is_sport ? &c->dims->sport : &c->dims->dport, (unsigned)p);
		}
	}
}

static void visit_matcher(struct collect *c, const struct sl_label_matcher *m, const char *where,
			  const char *file, unsigned line, unsigned column)
{
	c->where = where;
	c->file = file;
	c->line = line;
	c->column = column;
	sl_label_matcher_visit(m, visit_ref, c);
}

static int collect_cuts(struct collect *c)
{
	const struct sl_config *cfg = c->cfg;
	struct sl_dims *dims = c->dims;
	static const uint8_t v4_mapped[16] = {[10] = 0xff, [11] = 0xff};
	char where[128];
	int err = 0;

	/* ip.version must be constant per class: split the families. */
	if ((err = sl_addr_dim_add(&dims->src, v4_mapped, 96)) ||
	    (err = sl_addr_dim_add(&dims->dst, v4_mapped, 96)))
		return err;

	for (size_t i = 0; i < cfg->n_schemas; i++) {
		const struct sl_flow_schema *fs = &cfg->schemas[i];

		snprintf(where, sizeof(where), "FlowSchema/%s", fs->name);
		for (size_t r = 0; r < fs->n_rules; r++) {
			const struct sl_fs_rule *rule = &fs->rules[r];

			for (size_t s = 0; s < rule->n_subjects; s++) {
				const struct sl_subject *sub = &rule->subjects[s];

				if (sub->kind == SL_SUBJECT_NETWORK) {
					err = sl_addr_dim_add_cidrs(&dims->src, sub->cidrs, sub->n_cidrs);
				} else {
					visit_matcher(c, &sub->labels, where, fs->file, sub->line, sub->column);
					err = c->err;
				}
				if (err)
					return err;
			}
			for (size_t d = 0; d < rule->n_destinations; d++) {
				const struct sl_destination *dst = &rule->destinations[d];

				sl_port_dim_cut_ranges(&dims->dport, dst->ports, dst->n_ports);
				if ((err = sl_addr_dim_add_cidrs(&dims->dst, dst->addresses, dst->n_addresses)))
					return err;
			}
		}
	}
	for (size_t o = 0; o < cfg->n_label_objects; o++) {
		const struct sl_label_object *obj = &cfg->label_objects[o];

		for (size_t r = 0; r < obj->n_rules; r++) {
			const struct sl_label_rule *rule = &obj->rules[r];

			if ((err = sl_addr_dim_add_cidrs(&dims->src, rule->sources, rule->n_sources)) ||
			    (err = sl_addr_dim_add_cidrs(&dims->dst, rule->destinations, rule->n_destinations)))
				return err;
			sl_port_dim_cut_ranges(&dims->dport, rule->ports, rule->n_ports);
		}
	}
	for (size_t p = 0; p < cfg->n_policies; p++) {
		const struct sl_policy_cfg *pol = &cfg->policies[p];

		snprintf(where, sizeof(where), "AverageLatencySchedulingPolicy/%s", pol->name);
		for (size_t s = 0; s < pol->n_selectors; s++)
			visit_matcher(c, &pol->selectors[s].matcher, where, pol->file,
				      pol->selectors[s].line, pol->selectors[s].column);
		for (size_t w = 0; w < pol->n_workloads; w++)
			visit_matcher(c, &pol->workloads[w].matcher, where, pol->file,
				      pol->workloads[w].line, pol->workloads[w].column);
	}
	return c->err;
}

/* Where a policy's selectors are, as a diagnostic's path. */
#define SL_POLICY_SELECTORS_PATH "spec.load_scheduling_core.aimd_load_scheduler.load_scheduler.selectors"

/* ---- the table under construction ---------------------------------------- */

/* The compiler builds each half of the class (sluice_abi.h) as its own
 * table, where shadowing is decided; finish() merges the two into one
 * entry per key, so the data path looks each key up once. */
enum half { HALF_SCHEMA, HALF_POLICY, HALVES };

struct slot {
	uint64_t id; /* hash of the key and half */
	uint8_t half;
	struct sl_class_entry e;
};

struct build {
	const struct sl_config *cfg;
	const struct sl_class_inputs *in;
	const unsigned *level_slot;
	struct sl_dims dims;
	struct sl_label_eval *labels;
	struct sl_diags *diags;
	size_t max_entries;
	struct slot *slots; /* max_entries, stable: the index points into it */
	size_t n_slots;
	struct sl_idx idx;
	bool have_default[HALVES];
	struct sluice_class dflt[HALVES];
	uint16_t masks;
	size_t n_terms, n_shadowed;
	/* the term being expanded */
	uint8_t half;
	const struct sluice_class *val;
	const char *object; /* "FlowSchema/x", for diagnostics */
	const char *file;
	unsigned line, column;
};

static uint64_t key_id(uint8_t half, uint8_t mask, const uint16_t ids[SL_DIMS])
{
	uint64_t packed = (uint64_t)ids[0] | (uint64_t)ids[1] << 16 | (uint64_t)ids[2] << 32 |
			  (uint64_t)ids[3] << 48;

	return packed ^ ((uint64_t)(half * SLUICE_MASKS + mask) * 0x9e3779b97f4a7c15ULL);
}

static void make_key(uint8_t mask, const uint16_t ids[SL_DIMS], struct sluice_class_key *k)
{
	memset(k, 0, sizeof(*k));
	k->mask = mask;
	k->src = (mask & SLUICE_DIM_SRC) ? ids[SL_D_SRC] : 0;
	k->dst = (mask & SLUICE_DIM_DST) ? ids[SL_D_DST] : 0;
	k->sport = (mask & SLUICE_DIM_SPORT) ? ids[SL_D_SPORT] : 0;
	k->dport = (mask & SLUICE_DIM_DPORT) ? ids[SL_D_DPORT] : 0;
}

static bool have_entry(const struct build *b, uint8_t half, uint8_t mask, const uint16_t ids[SL_DIMS])
{
	struct sluice_class_key k;
	size_t pos = 0;
	struct slot *s;

	make_key(mask, ids, &k);
	while ((s = sl_idx_next(&b->idx, key_id(half, mask, (const uint16_t[]){k.src, k.dst, k.sport, k.dport}), &pos)))
		if (s->half == half && !memcmp(&s->e.key, &k, sizeof(k)))
			return true;
	return false;
}

/* One combination of the current term: an entry unless an entry under a
 * sub-mask (an earlier term: lower or equal rank) already decides it. */
static int put_combination(const uint16_t ids[SL_DIMS], uint8_t mask, void *ctx)
{
	struct build *b = ctx;
	uint16_t masked[SL_DIMS];
	struct slot *s;

	if (b->have_default[b->half]) {
		b->n_shadowed++;
		return 0;
	}
	for (uint8_t sub = mask; sub; sub = (uint8_t)((sub - 1) & mask)) {
		if (have_entry(b, b->half, sub, ids)) {
			b->n_shadowed++;
			return 0;
		}
	}
	if (!mask) {
		b->have_default[b->half] = true;
		b->dflt[b->half] = *b->val;
		return 0;
	}
	if (b->n_slots == b->max_entries) {
		sl_diags_add(b->diags, SL_SEV_ERROR, b->file ? b->file : b->cfg->source_file, b->line,
			     b->column, b->object, NULL,
			     "classification needs more than %zu class-table entries (full at this "
			     "object); raise Server spec.tableSizes.classes, or use fewer distinct "
			     "CIDRs and ports inside one rule", b->max_entries);
		return -ENOSPC;
	}
	s = &b->slots[b->n_slots++];
	make_key(mask, ids, &s->e.key);
	s->half = b->half;
	s->e.val = *b->val;
	for (unsigned d = 0; d < SL_DIMS; d++)
		masked[d] = (mask & (1u << d)) ? ids[d] : 0;
	s->id = key_id(b->half, mask, masked);
	sl_idx_put(&b->idx, s);
	b->masks |= (uint16_t)(1u << mask);
	return 0;
}

static int put_term(struct build *b, const struct sl_term *t)
{
	size_t size = sl_term_size(t);

	if (t->none)
		return 0;
	b->n_terms++;
	/* Shadowed combinations take no entry but cost time: bound them too. */
	if (size > 16 * b->max_entries + 16) {
		sl_diags_add(b->diags, SL_SEV_ERROR, b->file ? b->file : b->cfg->source_file, b->line,
			     b->column, b->object, NULL,
			     "one of its rules covers %zu class combinations; the class table holds %zu: "
			     "raise Server spec.tableSizes.classes, or split the rule", size, b->max_entries);
		return -ENOSPC;
	}
	return sl_term_expand(t, put_combination, b);
}

/* ---- terms of the configuration ------------------------------------------ */

static int ids_term(struct build *b, unsigned dim, const struct sl_cls_range *r, size_t n,
		    struct sl_term *t)
{
	uint16_t *ids = NULL;
	size_t n_ids = 0;
	struct sl_factor f;
	int err;

	if ((err = sl_dims_live_in(&b->dims, dim, r, n, &ids, &n_ids)))
		goto out;
	if (n_ids == b->dims.n_live[dim])
		goto out; /* every class: no constraint */
	if (!(err = sl_factor_of_ids(&f, dim, ids, n_ids)))
		err = sl_term_and(t, &f);
out:
	free(ids);
	return err;
}

static int cidr_term(struct build *b, unsigned dim, const struct sl_cidr *c, size_t n,
		     struct sl_term *t)
{
	struct sl_cls_range *r = NULL;
	size_t n_r = 0;
	int err = sl_addr_dim_ranges(dim == SL_D_SRC ? &b->dims.src : &b->dims.dst, c, n, &r, &n_r);

	if (!err)
		err = ids_term(b, dim, r, n_r, t);
	free(r);
	return err;
}

/* A Network subject's client addresses.  The XDP program passes a
 * loopback source before it classifies (bpf/sluice.bpf.c loopback_source:
 * XDP never runs on lo), so a CIDR of loopback addresses only can never
 * match there; kept, it would put the source trie on every SYN for
 * nothing, and the built-in exempt FlowSchema's rule (127.0.0.0/8, ::1) is
 * one in every configuration (issue 25). */
static int source_term(struct build *b, const struct sl_subject *sub, struct sl_term *t)
{
	struct sl_cidr *kept = calloc(sub->n_cidrs, sizeof(*kept));
	size_t n = 0;
	int err = 0;

	if (!kept)
		return -ENOMEM;
	for (size_t i = 0; i < sub->n_cidrs; i++)
		if (!sl_cidr_is_loopback(&sub->cidrs[i]))
			kept[n++] = sub->cidrs[i];
	if (n)
		err = cidr_term(b, SL_D_SRC, kept, n, t);
	else
		t->none = true;
	free(kept);
	return err;
}

static int port_term(struct build *b, const struct sl_port_range *p, size_t n, struct sl_term *t)
{
	struct sl_cls_range *r = NULL;
	size_t n_r = 0;
	int err = sl_port_dim_ranges(&b->dims.dport, p, n, &r, &n_r);

	if (!err)
		err = ids_term(b, SL_D_DPORT, r, n_r, t);
	free(r);
	return err;
}

static int matcher_term(struct build *b, const struct sl_label_matcher *m, struct sl_term *t)
{
	size_t space = 0;
	int err = sl_label_eval_term(b->labels, m, t, &space);

	if (err == -E2BIG)
		sl_diags_add(b->diags, SL_SEV_ERROR, b->file ? b->file : b->cfg->source_file, b->line,
			     b->column, b->object, NULL,
			     "a label selector whose labels depend on several of the client address, "
			     "local address and ports together covers %zu class combinations; at most "
			     "%u can be evaluated: select on labels of one dimension each", space,
			     SL_LABEL_SPACE_MAX);
	return err;
}

static void schema_value(const struct build *b, size_t i, struct sluice_class *out)
{
	const struct sl_flow_schema *fs = &b->cfg->schemas[i];

	memset(out, 0, sizeof(*out));
	out->policy = SLUICE_NONE16;
	out->workload = SLUICE_NONE16;
	out->schema = (uint16_t)i;
	out->level = b->level_slot[fs->level];
	out->seats = (uint16_t)sl_class_seats(b->in, fs);
	out->distinguisher = fs->distinguisher == SL_DIST_BY_SOURCE ? SLUICE_DIST_SOURCE :
			     fs->distinguisher == SL_DIST_BY_DESTINATION ? SLUICE_DIST_DEST :
									   SLUICE_DIST_NONE;
	out->prefix_v4 = fs->prefix_len_v4;
	out->prefix_v6 = fs->prefix_len_v6;
}

static void set_object(struct build *b, const char *kind, const char *name, const char *file,
		       unsigned line, unsigned column, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", kind, name);
	b->object = buf;
	b->file = file;
	b->line = line;
	b->column = column;
}

static int schema_terms(struct build *b)
{
	char object[SL_LEVEL_NAME_SIZE + 16];
	struct sluice_class val;
	int err = 0;

	b->half = HALF_SCHEMA;
	b->val = &val;
	for (size_t i = 0; i < b->cfg->n_schemas && !err; i++) {
		const struct sl_flow_schema *fs = &b->cfg->schemas[i];

		set_object(b, "FlowSchema", fs->name, fs->file, fs->line, fs->column, object,
			   sizeof(object));
		schema_value(b, i, &val);
		for (size_t r = 0; r < fs->n_rules && !err; r++) {
			const struct sl_fs_rule *rule = &fs->rules[r];

			for (size_t s = 0; s < rule->n_subjects && !err; s++) {
				const struct sl_subject *sub = &rule->subjects[s];
				struct sl_term subject = {0};

				/* Diagnostics name the subject (what a label selector
				 * error is about), inside the rule they cover. */
				b->line = sub->line ? sub->line : rule->line;
				b->column = sub->line ? sub->column : rule->column;
				if (sub->kind == SL_SUBJECT_NETWORK)
					err = source_term(b, sub, &subject);
				else
					err = matcher_term(b, &sub->labels, &subject);
				for (size_t d = 0; d < rule->n_destinations && !err && !subject.none; d++) {
					const struct sl_destination *dst = &rule->destinations[d];
					struct sl_term t;

					if ((err = sl_term_copy(&t, &subject)))
						break;
					if (dst->n_ports && !t.none)
						err = port_term(b, dst->ports, dst->n_ports, &t);
					if (!err && dst->n_addresses && !t.none)
						err = cidr_term(b, SL_D_DST, dst->addresses, dst->n_addresses, &t);
					if (!err)
						err = put_term(b, &t);
					sl_term_free(&t);
				}
				sl_term_free(&subject);
			}
		}
	}
	return err;
}

/* ---- policies ------------------------------------------------------------ */

struct sel_combos {
	uint8_t mask;
	uint16_t ids[SL_DIMS];
};

struct combo_list {
	struct sel_combos *v;
	size_t n, cap, limit;
};

static int collect_combo(const uint16_t ids[SL_DIMS], uint8_t mask, void *ctx)
{
	struct combo_list *l = ctx;

	if (l->n == l->limit)
		return -ENOSPC;
	if (sl_grow((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v)))
		return -ENOMEM;
	l->v[l->n].mask = mask;
	memcpy(l->v[l->n].ids, ids, sizeof(l->v[l->n].ids));
	l->n++;
	return 0;
}

struct proj {
	uint64_t id;
	const struct sel_combos *c;
};

static uint64_t proj_id(const uint16_t ids[SL_DIMS], uint8_t common)
{
	uint16_t m[SL_DIMS];

	for (unsigned d = 0; d < SL_DIMS; d++)
		m[d] = (common & (1u << d)) ? ids[d] : 0;
	return key_id(0, common, m);
}

static bool agree_on(const uint16_t a[SL_DIMS], const uint16_t b[SL_DIMS], uint8_t common)
{
	for (unsigned d = 0; d < SL_DIMS; d++)
		if ((common & (1u << d)) && a[d] != b[d])
			return false;
	return true;
}

/* A combination both selector sets match, or false.  For each pair of
 * masks, one set's combinations are indexed by their projection on the
 * dimensions the two share, and the other's probe it. */
static int find_overlap(const struct combo_list *a, const struct combo_list *b, uint16_t out[SL_DIMS],
			bool *found)
{
	struct proj *p = malloc((a->n + 1) * sizeof(*p));
	int err = 0;

	*found = false;
	if (!p)
		return -ENOMEM;
	for (unsigned ma = 0; ma < SLUICE_MASKS && !*found && !err; ma++) {
		for (unsigned mb = 0; mb < SLUICE_MASKS && !*found && !err; mb++) {
			uint8_t common = (uint8_t)(ma & mb);
			struct sl_idx idx;
			size_t n = 0;

			sl_idx_init(&idx, offsetof(struct proj, id));
			for (size_t i = 0; i < a->n; i++)
				if (a->v[i].mask == ma)
					p[n++] = (struct proj){proj_id(a->v[i].ids, common), &a->v[i]};
			if (!n || (err = sl_idx_reserve(&idx, n))) {
				sl_idx_free(&idx);
				continue;
			}
			for (size_t i = 0; i < n; i++)
				sl_idx_put(&idx, &p[i]);
			for (size_t j = 0; j < b->n && !*found; j++) {
				struct proj *hit;
				size_t pos = 0;

				if (b->v[j].mask != mb)
					continue;
				while ((hit = sl_idx_next(&idx, proj_id(b->v[j].ids, common), &pos))) {
					if (!agree_on(hit->c->ids, b->v[j].ids, common))
						continue;
					for (unsigned d = 0; d < SL_DIMS; d++)
						out[d] = (ma & (1u << d)) ? hit->c->ids[d] : b->v[j].ids[d];
					*found = true;
					break;
				}
			}
			sl_idx_free(&idx);
		}
	}
	free(p);
	return err;
}

static void example_tuple(const struct build *b, const uint16_t ids[SL_DIMS], uint8_t mask,
			  struct sl_conn_tuple *t)
{
	uint16_t c[SL_DIMS];

	for (unsigned d = 0; d < SL_DIMS; d++)
		c[d] = (mask & (1u << d)) ? ids[d] : b->dims.live[d][0];
	memset(t, 0, sizeof(*t));
	memcpy(t->saddr, b->dims.src.rep[c[SL_D_SRC]], 16);
	memcpy(t->daddr, b->dims.dst.rep[c[SL_D_DST]], 16);
	t->sport = b->dims.sport.rep[c[SL_D_SPORT]];
	t->dport = b->dims.dport.rep[c[SL_D_DPORT]];
}

/* Two policies select the same connections: Aperture would run both load
 * schedulers on them, the data path has one gate per connection.  Refused
 * with both names and an example, at the second policy. */
static void refuse_overlap(const struct build *b, size_t first, size_t second,
			   const struct sl_conn_tuple *t)
{
	const struct sl_policy_cfg *a = &b->cfg->policies[first], *p = &b->cfg->policies[second];
	char object[SL_LEVEL_NAME_SIZE + 40], src[64], dst[64];

	snprintf(object, sizeof(object), "AverageLatencySchedulingPolicy/%s", p->name);
	sl_fmt_endpoint(t->saddr, htons(t->sport), src, sizeof(src));
	sl_fmt_endpoint(t->daddr, htons(t->dport), dst, sizeof(dst));
	/* At its selectors (the object's line when they have none). */
	bool at_sel = p->n_selectors && p->selectors[0].line;

	sl_diags_add(b->diags, SL_SEV_ERROR, p->file, at_sel ? p->selectors[0].line : p->line,
		     at_sel ? p->selectors[0].column : p->column, object,
		     at_sel ? SL_POLICY_SELECTORS_PATH : "spec",
		     "its selectors and those of AverageLatencySchedulingPolicy/%s (%s:%u) both select "
		     "connections such as %s -> %s; Aperture would run both load schedulers on them, sluice "
		     "runs one per connection: make the selectors disjoint",
		     a->name, a->file ? a->file : "", a->line, src, dst);
}

static void free_terms(struct sl_term *t, size_t n)
{
	for (size_t i = 0; t && i < n; i++)
		sl_term_free(&t[i]);
	free(t);
}

static int policy_terms(struct build *b)
{
	size_t n_pol = b->cfg->n_policies;
	struct sl_term **sel = calloc(n_pol + 1, sizeof(*sel));
	struct combo_list *sets = calloc(n_pol + 1, sizeof(*sets));
	char object[SL_LEVEL_NAME_SIZE + 40];
	struct sluice_class val;
	int err = 0;

	if (!sel || !sets) {
		err = -ENOMEM;
		goto out;
	}
	/* Each policy's selectors (OR-ed), and the combinations they cover. */
	for (size_t p = 0; p < n_pol && !err; p++) {
		const struct sl_policy_cfg *pol = &b->cfg->policies[p];

		set_object(b, "AverageLatencySchedulingPolicy", pol->name, pol->file, pol->line,
			   pol->column, object, sizeof(object));
		sel[p] = calloc(pol->n_selectors + 1, sizeof(**sel));
		if (!sel[p]) {
			err = -ENOMEM;
			break;
		}
		sets[p].limit = 16 * b->max_entries + 16;
		for (size_t s = 0; s < pol->n_selectors && !err; s++) {
			if (pol->selectors[s].line) {
				b->line = pol->selectors[s].line;
				b->column = pol->selectors[s].column;
			}
			err = matcher_term(b, &pol->selectors[s].matcher, &sel[p][s]);
			if (!err)
				err = sl_term_expand(&sel[p][s], collect_combo, &sets[p]);
		}
		if (err == -ENOSPC)
			sl_diags_add(b->diags, SL_SEV_ERROR, pol->file, b->line, b->column, object,
				     SL_POLICY_SELECTORS_PATH, "its selectors cover more than %zu class combinations; raise "
				     "Server spec.tableSizes.classes", sets[p].limit);
	}
	for (size_t p = 0; p < n_pol && !err; p++) {
		for (size_t q = p + 1; q < n_pol && !err; q++) {
			uint16_t ids[SL_DIMS];
			bool found;

			if ((err = find_overlap(&sets[p], &sets[q], ids, &found)) || !found)
				continue;
			{
				struct sl_conn_tuple t;

				example_tuple(b, ids, 0xf, &t);
				refuse_overlap(b, p, q, &t);
			}
			err = -EINVAL;
		}
	}
	/* Rank order: policy by policy, its workloads in order, then its
	 * default workload (the selectors alone). */
	b->half = HALF_POLICY;
	b->val = &val;
	for (size_t p = 0; p < n_pol && !err; p++) {
		const struct sl_policy_cfg *pol = &b->cfg->policies[p];

		set_object(b, "AverageLatencySchedulingPolicy", pol->name, pol->file, pol->line,
			   pol->column, object, sizeof(object));
		for (size_t w = 0; w <= pol->n_workloads && !err; w++) {
			struct sl_term wl = {0};

			memset(&val, 0, sizeof(val));
			val.level = SLUICE_MAX_LEVELS; /* the schema part decides the level */
			val.schema = SLUICE_NONE16;
			val.policy = (uint16_t)p;
			val.workload = w < pol->n_workloads ? (uint16_t)w : SLUICE_NONE16;
			if (w < pol->n_workloads && pol->workloads[w].line) {
				b->line = pol->workloads[w].line;
				b->column = pol->workloads[w].column;
			}
			if (w < pol->n_workloads && (err = matcher_term(b, &pol->workloads[w].matcher, &wl)))
				break;
			for (size_t s = 0; s < pol->n_selectors && !err && !wl.none; s++) {
				struct sl_term t;

				if ((err = sl_term_copy(&t, &sel[p][s])))
					break;
				if (!(err = sl_term_and_term(&t, &wl)))
					err = put_term(b, &t);
				sl_term_free(&t);
			}
			sl_term_free(&wl);
		}
	}
out:
	for (size_t p = 0; sel && p < n_pol; p++)
		free_terms(sel[p], b->cfg->policies[p].n_selectors);
	for (size_t p = 0; sets && p < n_pol; p++)
		free(sets[p].v);
	free(sel);
	free(sets);
	return err;
}

/* ---- output -------------------------------------------------------------- */

static int cmp_entry(const void *a, const void *b)
{
	const struct sluice_class_key *x = &((const struct sl_class_entry *)a)->key;
	const struct sluice_class_key *y = &((const struct sl_class_entry *)b)->key;
	uint64_t kx[2] = {x->mask,
			  (uint64_t)x->src << 48 | (uint64_t)x->dst << 32 | (uint64_t)x->sport << 16 | x->dport};
	uint64_t ky[2] = {y->mask,
			  (uint64_t)y->src << 48 | (uint64_t)y->dst << 32 | (uint64_t)y->sport << 16 | y->dport};

	if (kx[0] != ky[0])
		return kx[0] < ky[0] ? -1 : 1;
	return kx[1] < ky[1] ? -1 : kx[1] > ky[1];
}

/* The slots in key order, the schema half first. */
static int cmp_slot(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;
	int c = cmp_entry(&x->e, &y->e);

	return c ? c : (int)x->half - (int)y->half;
}

/* The two halves' tables as one: an entry per key, carrying the half (or
 * both) the key decides; a half it does not carry ranks last. */
static int merge_halves(struct build *b, struct sl_compiled *out)
{
	const struct sluice_class none = {
		.level = SLUICE_MAX_LEVELS, /* no such slot: passes as unprotected */
		.schema = SLUICE_NONE16, .seats = 1,
		.policy = SLUICE_NONE16, .workload = SLUICE_NONE16,
	};
	struct slot *sorted = malloc((b->n_slots + 1) * sizeof(*sorted));
	size_t n = 0;

	out->entries = calloc(b->n_slots + 1, sizeof(*out->entries));
	if (!sorted || !out->entries) {
		free(sorted);
		return -ENOMEM;
	}
	memcpy(sorted, b->slots, b->n_slots * sizeof(*sorted));
	qsort(sorted, b->n_slots, sizeof(*sorted), cmp_slot);
	for (size_t i = 0; i < b->n_slots; i++) {
		struct sl_class_entry *e = &out->entries[n];

		if (!n || cmp_entry(&out->entries[n - 1], &sorted[i].e)) {
			e->key = sorted[i].e.key;
			e->val = none;
			n++;
		} else {
			e = &out->entries[n - 1]; /* the same key's other half */
		}
		if (sorted[i].half == HALF_SCHEMA)
			sluice_class_take_schema(&e->val, &sorted[i].e.val);
		else
			sluice_class_take_policy(&e->val, &sorted[i].e.val);
	}
	out->n_entries = n;
	free(sorted);
	/* Cannot lack a schema half with the mandatory catch-all; be explicit. */
	out->default_class = none;
	if (b->have_default[HALF_SCHEMA])
		sluice_class_take_schema(&out->default_class, &b->dflt[HALF_SCHEMA]);
	if (b->have_default[HALF_POLICY])
		sluice_class_take_policy(&out->default_class, &b->dflt[HALF_POLICY]);
	return 0;
}

static int finish(struct build *b, struct sl_compiled *out)
{
	int err = merge_halves(b, out);

	if (err)
		return err;
	out->masks = b->masks;
	out->n_terms = b->n_terms;
	out->n_shadowed = b->n_shadowed;

	/* The dimensions the data path looks up. */
	out->src = b->dims.src.v;
	out->n_src = b->dims.src.n;
	out->dst = b->dims.dst.v;
	out->n_dst = b->dims.dst.n;
	b->dims.src.v = b->dims.dst.v = NULL;
	out->sport_cls = b->dims.sport.cls;
	out->dport_cls = b->dims.dport.cls;
	out->n_sport_cls = b->dims.sport.n;
	out->n_dport_cls = b->dims.dport.n;
	b->dims.sport.cls = b->dims.dport.cls = NULL;
	return 0;
}

int sl_compile_classes(const struct sl_class_inputs *in, struct sl_compiled *out,
		       struct sl_diags *diags)
{
	const struct sl_config *cfg = in->cfg;
	size_t max_entries = in->max_entries;
	struct build b = {.cfg = cfg, .in = in, .level_slot = in->level_slot, .diags = diags,
			  .max_entries = max_entries};
	struct collect c = {.cfg = cfg, .dims = &b.dims, .diags = diags};
	int err;

	memset(out, 0, sizeof(*out));
	sl_idx_init(&b.idx, offsetof(struct slot, id));
	if ((err = sl_dims_init(&b.dims)) || (err = collect_cuts(&c)) || (err = sl_dims_finish(&b.dims)))
		goto out;
	if (b.dims.src.n >= SLUICE_LPM_ENTRIES / 2 || b.dims.dst.n >= SLUICE_LPM_ENTRIES / 2) {
		sl_diags_add(diags, SL_SEV_ERROR, cfg->source_file, 0, 0, NULL, NULL,
			     "%zu source and %zu destination prefixes; the data path holds at most %d each",
			     b.dims.src.n, b.dims.dst.n, SLUICE_LPM_ENTRIES / 2 - 1);
		err = -ENOSPC;
		goto out;
	}
	b.slots = calloc(max_entries + 1, sizeof(*b.slots));
	if (!b.slots || (err = sl_idx_reserve(&b.idx, max_entries + 1)) ||
	    (err = sl_label_eval_new(cfg, &b.dims, in->iface, &b.labels))) {
		err = err ? err : -ENOMEM;
		goto out;
	}
	if ((err = schema_terms(&b)) || (err = policy_terms(&b)))
		goto out;
	err = finish(&b, out);
	out->digest = sl_class_digest(in);
out:
	sl_label_eval_free(b.labels);
	sl_idx_free(&b.idx);
	free(b.slots);
	sl_dims_free(&b.dims);
	if (err)
		sl_compiled_free(out);
	return err;
}

void sl_compiled_free(struct sl_compiled *c)
{
	free(c->src);
	free(c->dst);
	free(c->sport_cls);
	free(c->dport_cls);
	free(c->entries);
	memset(c, 0, sizeof(*c));
}

static void *dup_array(const void *src, size_t n, size_t elem, int *err)
{
	void *p;

	if (!src)
		return NULL;
	p = malloc(n ? n * elem : 1);
	if (!p) {
		*err = -ENOMEM;
		return NULL;
	}
	memcpy(p, src, n * elem);
	return p;
}

int sl_compiled_copy(struct sl_compiled *dst, const struct sl_compiled *src)
{
	int err = 0;

	*dst = *src;
	dst->src = dup_array(src->src, src->n_src, sizeof(*src->src), &err);
	dst->dst = dup_array(src->dst, src->n_dst, sizeof(*src->dst), &err);
	dst->sport_cls = dup_array(src->sport_cls, 65536, sizeof(*src->sport_cls), &err);
	dst->dport_cls = dup_array(src->dport_cls, 65536, sizeof(*src->dport_cls), &err);
	dst->entries = dup_array(src->entries, src->n_entries, sizeof(*src->entries), &err);
	if (err)
		sl_compiled_free(dst);
	return err;
}

static bool prefixes_equal(const struct sl_prefix_class *a, const struct sl_prefix_class *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (memcmp(a[i].addr, b[i].addr, sizeof(a[i].addr)) || a[i].prefix_len != b[i].prefix_len ||
		    a[i].cls != b[i].cls)
			return false;
	return true;
}

bool sl_compiled_equal(const struct sl_compiled *a, const struct sl_compiled *b)
{
	return a->n_src == b->n_src && a->n_dst == b->n_dst && a->n_sport_cls == b->n_sport_cls &&
	       a->n_dport_cls == b->n_dport_cls && a->n_entries == b->n_entries &&
	       prefixes_equal(a->src, b->src, a->n_src) && prefixes_equal(a->dst, b->dst, a->n_dst) &&
	       !memcmp(a->sport_cls, b->sport_cls, 65536 * sizeof(*a->sport_cls)) &&
	       !memcmp(a->dport_cls, b->dport_cls, 65536 * sizeof(*a->dport_cls)) &&
	       !memcmp(a->entries, b->entries, a->n_entries * sizeof(*a->entries)) &&
	       a->masks == b->masks &&
	       !memcmp(&a->default_class, &b->default_class, sizeof(a->default_class));
}

static const struct sluice_class *find_entry(const struct sl_compiled *c, uint8_t mask,
					     const uint16_t ids[SL_DIMS])
{
	struct sl_class_entry probe;
	const struct sl_class_entry *e;

	make_key(mask, ids, &probe.key);
	e = bsearch(&probe, c->entries, c->n_entries, sizeof(*c->entries), cmp_entry);
	return e ? &e->val : NULL;
}

void sl_compiled_lookup(const struct sl_compiled *c, const uint16_t ids[SL_DIMS],
			struct sluice_class *out)
{
	struct sluice_class_best best;

	sluice_class_begin(out, &c->default_class, &best);
	for (uint8_t m = 1; m < SLUICE_MASKS; m++) {
		const struct sluice_class *e;

		if ((c->masks & (1u << m)) && (e = find_entry(c, m, ids)))
			sluice_class_consider(out, e, &best);
	}
}
