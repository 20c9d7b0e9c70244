#include "engine/class_compiler.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "engine/classifier.h"
#include "lib/fmt.h"

typedef unsigned __int128 u128;

#define MAX_COMBINATIONS (1u << 22)

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

/* ---- collecting the cuts ------------------------------------------------- */

struct prefix_set {
	struct sl_prefix_class *v;
	size_t n, cap;
};

static int prefix_add(struct prefix_set *s, const uint8_t addr[16], unsigned len)
{
	struct sl_prefix_class p = {.prefix_len = (uint8_t)len};

	memcpy(p.addr, addr, 16);
	for (unsigned b = len; b < 128; b++) /* host bits off */
		p.addr[b / 8] &= (uint8_t)~(0x80 >> (b % 8));
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].prefix_len == p.prefix_len && !memcmp(s->v[i].addr, p.addr, 16))
			return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		void *v = realloc(s->v, cap * sizeof(*s->v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = p;
	return 0;
}

static int prefix_add_cidrs(struct prefix_set *s, const struct sl_cidr *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int err = prefix_add(s, c[i].addr, c[i].prefix_len);

		if (err)
			return err;
	}
	return 0;
}

struct port_cuts {
	uint8_t cut[65537]; /* cut[p]: a new class starts at port p */
};

static void port_cut_ranges(struct port_cuts *pc, const struct sl_port_range *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		pc->cut[r[i].lo] = 1;
		pc->cut[(unsigned)r[i].hi + 1] = 1;
	}
}

struct collect {
	const struct sl_config *cfg;
	struct prefix_set src, dst;
	struct port_cuts *sport, *dport;
	struct sl_diags *diags;
	const char *where; /* object being visited, for diagnostics */
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
		sl_diags_add(c->diags, SL_SEV_ERROR, c->cfg->source_file, 0, 0, c->where, NULL,
			     "label_matches on '%s' cannot be compiled into the data path; "
			     "match addresses with CIDRs (a ConnectionLabels object or a Network "
			     "subject) and ports with port lists", ref->key);
		c->err = -EINVAL;
		return;
	}
	for (size_t i = 0; i < ref->n_values; i++) {
		const char *v = ref->values[i];

		if (is_src_ip || is_dst_ip) {
			uint8_t a[16];

			/* A value that is not an address can never be equal
			 * to the label: no cut needed. */
			if (sl_parse_addr(v, a) > 0)
				prefix_add(is_src_ip ? &c->src : &c->dst, a, 128);
		} else {
			char *end;
			unsigned long p = strtoul(v, &end, 10);

			if (*v && !*end && p <= 65535) {
				struct port_cuts *pc = is_sport ? c->sport : c->dport;

				pc->cut[p] = 1;
				pc->cut[p + 1] = 1;
			}
		}
	}
}

static void visit_matcher(struct collect *c, const struct sl_label_matcher *m, const char *where)
{
	c->where = where;
	sl_label_matcher_visit(m, visit_ref, c);
}

static int collect_cuts(struct collect *c)
{
	const struct sl_config *cfg = c->cfg;
	static const uint8_t v4_mapped[16] = {[10] = 0xff, [11] = 0xff};
	char where[128];
	int err = 0;

	/* ip.version must be constant per class: split the families. */
	if ((err = prefix_add(&c->src, v4_mapped, 96)) || (err = prefix_add(&c->dst, v4_mapped, 96)))
		return err;

	for (size_t i = 0; i < cfg->n_schemas; i++) {
		const struct sl_flow_schema *fs = &cfg->schemas[i];

		snprintf(where, sizeof(where), "FlowSchema/%s", fs->name);
		for (size_t r = 0; r < fs->n_rules; r++) {
			const struct sl_fs_rule *rule = &fs->rules[r];

			for (size_t s = 0; s < rule->n_subjects; s++) {
				const struct sl_subject *sub = &rule->subjects[s];

				if (sub->kind == SL_SUBJECT_NETWORK) {
					err = prefix_add_cidrs(&c->src, sub->cidrs, sub->n_cidrs);
				} else {
					visit_matcher(c, &sub->labels, where);
					err = c->err;
				}
				if (err)
					return err;
			}
			for (size_t d = 0; d < rule->n_destinations; d++) {
				const struct sl_destination *dst = &rule->destinations[d];

				port_cut_ranges(c->dport, dst->ports, dst->n_ports);
				if ((err = prefix_add_cidrs(&c->dst, dst->addresses, dst->n_addresses)))
					return err;
			}
		}
	}
	for (size_t o = 0; o < cfg->n_label_objects; o++) {
		const struct sl_label_object *obj = &cfg->label_objects[o];

		for (size_t r = 0; r < obj->n_rules; r++) {
			const struct sl_label_rule *rule = &obj->rules[r];

			if ((err = prefix_add_cidrs(&c->src, rule->sources, rule->n_sources)) ||
			    (err = prefix_add_cidrs(&c->dst, rule->destinations, rule->n_destinations)))
				return err;
			port_cut_ranges(c->dport, rule->ports, rule->n_ports);
		}
	}
	for (size_t p = 0; p < cfg->n_policies; p++) {
		const struct sl_policy_cfg *pol = &cfg->policies[p];

		snprintf(where, sizeof(where), "AverageLatencySchedulingPolicy/%s", pol->name);
		for (size_t s = 0; s < pol->n_selectors; s++)
			visit_matcher(c, &pol->selectors[s].matcher, where);
		for (size_t w = 0; w < pol->n_workloads; w++)
			visit_matcher(c, &pol->workloads[w].matcher, where);
	}
	return c->err;
}

/* ---- classes and representatives ---------------------------------------- */

static int cmp_prefix(const void *a, const void *b)
{
	const struct sl_prefix_class *x = a, *y = b;
	int c = memcmp(x->addr, y->addr, 16);

	if (c)
		return c;
	return (int)x->prefix_len - (int)y->prefix_len;
}

/* The first address in [lo, hi] not covered by any prefix strictly more
 * specific than `len` inside it.  Prefixes are sorted by (addr, len), so
 * the candidates come in address order.  false when fully covered. */
static bool first_uncovered(const struct prefix_set *s, u128 lo, u128 hi, int len, u128 *out)
{
	u128 next = lo;

	for (size_t i = 0; i < s->n; i++) {
		u128 f = prefix_first(&s->v[i]), l = prefix_last(&s->v[i]);

		if ((int)s->v[i].prefix_len <= len || f < lo || l > hi)
			continue; /* not a strict sub-prefix of this range */
		if (f > next) {
			*out = next;
			return true;
		}
		if (l >= next) {
			if (l == hi)
				return false;
			next = l + 1;
		}
	}
	*out = next;
	return next <= hi;
}

struct dim_class {
	uint8_t rep[16]; /* representative address */
	bool empty;      /* fully covered by more specific prefixes */
};

/* Class ids: 0 = no prefix, i + 1 = prefix i (sorted).  Representatives
 * are addresses whose longest match is exactly that prefix. */
static int addr_classes(struct prefix_set *s, struct dim_class **out)
{
	struct dim_class *dc = calloc(s->n + 1, sizeof(*dc));
	u128 rep;

	if (!dc)
		return -ENOMEM;
	qsort(s->v, s->n, sizeof(*s->v), cmp_prefix);
	dc[0].empty = !first_uncovered(s, 0, ~(u128)0, -1, &rep);
	if (!dc[0].empty)
		u128_to_addr(rep, dc[0].rep);
	for (size_t i = 0; i < s->n; i++) {
		s->v[i].cls = (uint16_t)(i + 1);
		dc[i + 1].empty = !first_uncovered(s, prefix_first(&s->v[i]), prefix_last(&s->v[i]),
						   s->v[i].prefix_len, &rep);
		if (!dc[i + 1].empty)
			u128_to_addr(rep, dc[i + 1].rep);
	}
	*out = dc;
	return 0;
}

/* Port classes: intervals between cuts.  Fills map[65536], returns the
 * representative (first port) of each class in reps. */
static uint16_t port_classes(const struct port_cuts *pc, uint16_t *map, uint16_t *reps)
{
	uint16_t cls = 0;

	reps[0] = 0;
	for (unsigned p = 0; p <= 65535; p++) {
		if (p > 0 && pc->cut[p]) {
			cls++;
			reps[cls] = (uint16_t)p;
		}
		map[p] = cls;
	}
	return (uint16_t)(cls + 1);
}

/* Two policies select the same connections: Aperture would run both load
 * schedulers on them, the data path has one gate per connection.  Refused
 * with both names and an example, at the second policy. */
static void refuse_overlap(const struct sl_config *cfg, const struct sl_class_result *r,
			   const struct sl_conn_tuple *t, struct sl_diags *diags)
{
	const struct sl_policy_cfg *a = &cfg->policies[r->policy], *b = &cfg->policies[r->also_policy];
	char object[SL_LEVEL_NAME_SIZE + 40], src[64], dst[64];

	snprintf(object, sizeof(object), "AverageLatencySchedulingPolicy/%s", b->name);
	sl_fmt_endpoint(t->saddr, htons(t->sport), src, sizeof(src));
	sl_fmt_endpoint(t->daddr, htons(t->dport), dst, sizeof(dst));
	sl_diags_add(diags, SL_SEV_ERROR, b->file, b->line, b->column, object, "spec",
		     "its selectors and those of AverageLatencySchedulingPolicy/%s (%s:%u) both select "
		     "connections such as %s -> %s; Aperture would run both load schedulers on them, sluice "
		     "runs one per connection: make the selectors disjoint",
		     a->name, a->file ? a->file : "", a->line, src, dst);
}

static void result_to_class(const struct sl_config *cfg, const unsigned *level_slot,
			    const struct sl_class_result *r, struct sluice_class *out)
{
	const struct sl_flow_schema *fs;

	memset(out, 0, sizeof(*out));
	out->policy = r->policy == SL_NONE ? SLUICE_NONE16 : (uint16_t)r->policy;
	out->workload = r->workload == SL_NONE ? SLUICE_NONE16 : (uint16_t)r->workload;
	if (r->schema == SL_NONE) {
		/* Cannot happen with the mandatory catch-all; be explicit. */
		out->schema = SLUICE_NONE16;
		out->level = SLUICE_MAX_LEVELS; /* no such slot: passes as unprotected */
		out->seats = 1;
		return;
	}
	fs = &cfg->schemas[r->schema];
	out->schema = (uint16_t)r->schema;
	out->level = level_slot[fs->level];
	out->seats = (uint16_t)(fs->seats_per_conn ? fs->seats_per_conn : 1);
	out->distinguisher = fs->distinguisher == SL_DIST_BY_SOURCE ? SLUICE_DIST_SOURCE :
			     fs->distinguisher == SL_DIST_BY_DESTINATION ? SLUICE_DIST_DEST :
									   SLUICE_DIST_NONE;
	out->prefix_v4 = fs->prefix_len_v4;
	out->prefix_v6 = fs->prefix_len_v6;
}

static size_t class_count(const struct sl_compiled *out, const struct dim_class *sc,
			  const struct dim_class *dc)
{
	size_t ns = 0, nd = 0;

	for (size_t i = 0; i <= out->n_src; i++)
		ns += !sc[i].empty;
	for (size_t i = 0; i <= out->n_dst; i++)
		nd += !dc[i].empty;
	return ns * nd * out->n_sport_cls * out->n_dport_cls;
}

static int enumerate(const struct sl_config *cfg, const unsigned *level_slot, const char *iface,
		     size_t max_entries, const struct dim_class *sc, const struct dim_class *dc,
		     const uint16_t *sport_rep, const uint16_t *dport_rep,
		     struct sl_compiled *out, struct sl_diags *diags)
{
	struct sl_labels labels = SL_LABELS_INIT;
	size_t cap = 0;
	int err = 0;
	bool have_default = false;

	/* The default class (a table miss) is the first combination's
	 * result; only combinations that differ from it take entries. */
	for (size_t s = 0; s <= out->n_src && !err; s++) {
		if (sc[s].empty)
			continue;
		for (size_t d = 0; d <= out->n_dst && !err; d++) {
			if (dc[d].empty)
				continue;
			for (unsigned sp = 0; sp < out->n_sport_cls && !err; sp++) {
				for (unsigned dp = 0; dp < out->n_dport_cls && !err; dp++) {
					struct sl_conn_tuple t = {.sport = sport_rep[sp], .dport = dport_rep[dp], .iface = iface};
					struct sl_class_result r;
					struct sluice_class val;

					memcpy(t.saddr, sc[s].rep, 16);
					memcpy(t.daddr, dc[d].rep, 16);
					if ((err = sl_conn_labels(cfg, &t, &labels)))
						break;
					sl_classify(cfg, &t, &labels, &r);
					if (r.also_policy != SL_NONE) {
						refuse_overlap(cfg, &r, &t, diags);
						err = -EINVAL;
						break;
					}
					result_to_class(cfg, level_slot, &r, &val);
					if (!have_default) {
						out->default_class = val;
						have_default = true;
					}
					if (!memcmp(&val, &out->default_class, sizeof(val)))
						continue;
					if (out->n_entries == max_entries) {
						sl_diags_add(diags, SL_SEV_ERROR, cfg->source_file, 0, 0, NULL, NULL,
							     "classification needs more than %zu class-table entries "
							     "(%zu address/port class combinations); raise Server "
							     "spec.tableSizes.classes or use fewer distinct CIDRs and ports",
							     max_entries, out->n_combinations);
						err = -ENOSPC;
						break;
					}
					if (out->n_entries == cap) {
						size_t nc = cap ? cap * 2 : 256;
						void *v = realloc(out->entries, nc * sizeof(*out->entries));

						if (!v) {
							err = -ENOMEM;
							break;
						}
						out->entries = v;
						cap = nc;
					}
					memset(&out->entries[out->n_entries], 0, sizeof(out->entries[0]));
					out->entries[out->n_entries].key.src = (uint16_t)s;
					out->entries[out->n_entries].key.dst = (uint16_t)d;
					out->entries[out->n_entries].key.sport = (uint16_t)sp;
					out->entries[out->n_entries].key.dport = (uint16_t)dp;
					out->entries[out->n_entries].val = val;
					out->n_entries++;
				}
			}
		}
	}
	sl_labels_free(&labels);
	return err;
}

int sl_compile_classes(const struct sl_config *cfg, const unsigned *level_slot,
		       const char *iface, size_t max_entries,
		       struct sl_compiled *out, struct sl_diags *diags)
{
	struct collect c = {.cfg = cfg, .diags = diags};
	struct dim_class *sc = NULL, *dc = NULL;
	uint16_t *sport_rep = NULL, *dport_rep = NULL;
	int err;

	memset(out, 0, sizeof(*out));
	c.sport = calloc(1, sizeof(*c.sport));
	c.dport = calloc(1, sizeof(*c.dport));
	out->sport_cls = calloc(65536, sizeof(uint16_t));
	out->dport_cls = calloc(65536, sizeof(uint16_t));
	sport_rep = calloc(65536, sizeof(uint16_t));
	dport_rep = calloc(65536, sizeof(uint16_t));
	if (!c.sport || !c.dport || !out->sport_cls || !out->dport_cls || !sport_rep || !dport_rep) {
		err = -ENOMEM;
		goto out;
	}
	err = collect_cuts(&c);
	if (err)
		goto out;
	if (c.src.n >= SLUICE_LPM_ENTRIES / 2 || c.dst.n >= SLUICE_LPM_ENTRIES / 2) {
		sl_diags_add(diags, SL_SEV_ERROR, cfg->source_file, 0, 0, NULL, NULL,
			     "%zu source and %zu destination prefixes; the data path holds at most %d each",
			     c.src.n, c.dst.n, SLUICE_LPM_ENTRIES / 2 - 1);
		err = -ENOSPC;
		goto out;
	}
	if ((err = addr_classes(&c.src, &sc)) || (err = addr_classes(&c.dst, &dc)))
		goto out;
	out->n_sport_cls = port_classes(c.sport, out->sport_cls, sport_rep);
	out->n_dport_cls = port_classes(c.dport, out->dport_cls, dport_rep);
	out->src = c.src.v;
	out->n_src = c.src.n;
	out->dst = c.dst.v;
	out->n_dst = c.dst.n;
	c.src.v = c.dst.v = NULL;
	out->n_combinations = class_count(out, sc, dc);
	if (out->n_combinations > MAX_COMBINATIONS) {
		sl_diags_add(diags, SL_SEV_ERROR, cfg->source_file, 0, 0, NULL, NULL,
			     "classification needs %zu address/port class combinations; at most %u "
			     "can be compiled: use fewer distinct CIDRs and ports",
			     out->n_combinations, MAX_COMBINATIONS);
		err = -E2BIG;
		goto out;
	}
	err = enumerate(cfg, level_slot, iface, max_entries, sc, dc, sport_rep, dport_rep, out, diags);
out:
	free(c.src.v);
	free(c.dst.v);
	free(c.sport);
	free(c.dport);
	free(sc);
	free(dc);
	free(sport_rep);
	free(dport_rep);
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
	       !memcmp(&a->default_class, &b->default_class, sizeof(a->default_class));
}
