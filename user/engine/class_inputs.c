// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What a classification compile reads: the seats a schema's connection
 * takes, and the digest of the inputs (class_inputs.h): everything
 * sl_compile_classes reads, in the order it reads it, so that equal
 * digests mean equal tables and a reload that changes only levels or
 * shares keeps the tables it has.  FNV-1a 64 over length-prefixed fields.
 */
#include "engine/class_inputs.h"

#include <string.h>

#include "sluice_abi.h"

struct digest {
	uint64_t h;
};

static void put_bytes(struct digest *d, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++) {
		d->h ^= b[i];
		d->h *= 1099511628211ULL; /* FNV-1a 64 prime */
	}
}

static void put_u64(struct digest *d, uint64_t v)
{
	put_bytes(d, &v, sizeof(v));
}

static void put_str(struct digest *d, const char *s)
{
	size_t n = s ? strlen(s) : (size_t)-1;

	put_u64(d, n);
	if (s)
		put_bytes(d, s, n);
}

static void put_cidrs(struct digest *d, const struct sl_cidr *c, size_t n)
{
	put_u64(d, n);
	for (size_t i = 0; i < n; i++) {
		put_bytes(d, c[i].addr, sizeof(c[i].addr));
		put_u64(d, c[i].prefix_len);
	}
}

static void put_ports(struct digest *d, const struct sl_port_range *p, size_t n)
{
	put_u64(d, n);
	for (size_t i = 0; i < n; i++)
		put_u64(d, (uint64_t)p[i].lo << 16 | p[i].hi);
}

static void put_expr(struct digest *d, const struct sl_lm_expr *e)
{
	put_u64(d, e ? (uint64_t)e->kind + 1 : 0);
	if (!e)
		return;
	put_str(d, e->label);
	put_str(d, e->value);
	put_str(d, e->regex);
	put_u64(d, e->n_children);
	for (size_t i = 0; i < e->n_children; i++)
		put_expr(d, &e->children[i]);
}

static void put_matcher(struct digest *d, const struct sl_label_matcher *m)
{
	put_u64(d, m->n_reqs);
	for (size_t i = 0; i < m->n_reqs; i++) {
		const struct sl_lm_requirement *r = &m->reqs[i];

		put_str(d, r->key);
		put_u64(d, r->op);
		put_u64(d, r->n_values);
		for (size_t v = 0; v < r->n_values; v++)
			put_str(d, r->values[v]);
	}
	put_expr(d, m->expr);
}

static void put_schema(struct digest *d, const struct sl_class_inputs *in, const struct sl_flow_schema *fs)
{
	unsigned slot = in->level_slot[fs->level];

	put_str(d, fs->name);
	put_u64(d, slot);
	put_u64(d, sl_class_seats(in, fs));
	put_u64(d, fs->distinguisher);
	put_u64(d, (uint64_t)fs->prefix_len_v4 << 8 | fs->prefix_len_v6);
	put_u64(d, fs->n_rules);
	for (size_t r = 0; r < fs->n_rules; r++) {
		const struct sl_fs_rule *rule = &fs->rules[r];

		put_u64(d, rule->n_subjects);
		for (size_t s = 0; s < rule->n_subjects; s++) {
			const struct sl_subject *sub = &rule->subjects[s];

			put_u64(d, sub->kind);
			if (sub->kind == SL_SUBJECT_NETWORK)
				put_cidrs(d, sub->cidrs, sub->n_cidrs);
			else
				put_matcher(d, &sub->labels);
		}
		put_u64(d, rule->n_destinations);
		for (size_t i = 0; i < rule->n_destinations; i++) {
			put_ports(d, rule->destinations[i].ports, rule->destinations[i].n_ports);
			put_cidrs(d, rule->destinations[i].addresses, rule->destinations[i].n_addresses);
		}
	}
}

uint64_t sl_class_digest(const struct sl_class_inputs *in)
{
	const struct sl_config *cfg = in->cfg;
	struct digest d = {.h = 14695981039346656037ULL}; /* FNV-1a 64 offset basis */

	put_u64(&d, SLUICE_ABI_VERSION); /* the tables' layout */
	put_str(&d, in->iface ? in->iface : "");
	put_u64(&d, in->max_entries);
	put_u64(&d, cfg->n_schemas);
	for (size_t i = 0; i < cfg->n_schemas; i++)
		put_schema(&d, in, &cfg->schemas[i]);
	put_u64(&d, cfg->n_label_objects);
	for (size_t o = 0; o < cfg->n_label_objects; o++) {
		const struct sl_label_object *obj = &cfg->label_objects[o];

		put_u64(&d, obj->n_rules);
		for (size_t r = 0; r < obj->n_rules; r++) {
			const struct sl_label_rule *rule = &obj->rules[r];

			put_cidrs(&d, rule->sources, rule->n_sources);
			put_cidrs(&d, rule->destinations, rule->n_destinations);
			put_ports(&d, rule->ports, rule->n_ports);
			put_u64(&d, rule->labels.count);
			for (size_t l = 0; l < rule->labels.count; l++) {
				put_str(&d, rule->labels.items[l].key);
				put_str(&d, rule->labels.items[l].value);
			}
		}
	}
	put_u64(&d, cfg->n_policies);
	for (size_t p = 0; p < cfg->n_policies; p++) {
		const struct sl_policy_cfg *pol = &cfg->policies[p];

		put_str(&d, pol->name);
		put_u64(&d, pol->n_selectors);
		for (size_t s = 0; s < pol->n_selectors; s++)
			put_matcher(&d, &pol->selectors[s].matcher);
		put_u64(&d, pol->n_workloads);
		for (size_t w = 0; w < pol->n_workloads; w++)
			put_matcher(&d, &pol->workloads[w].matcher);
	}
	return d.h ? d.h : 1; /* 0 means "no digest" in the data path's settings */
}

uint32_t sl_class_seats(const struct sl_class_inputs *in, const struct sl_flow_schema *fs)
{
	uint32_t seats = fs->seats_per_conn ? fs->seats_per_conn : 1;
	uint32_t cap = in->seat_cap ? in->seat_cap[in->level_slot[fs->level]] : 0;

	return cap && seats > cap ? cap : seats;
}
