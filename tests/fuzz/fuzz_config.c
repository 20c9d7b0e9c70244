// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libFuzzer target for the configuration loader: any input is loaded with
 * sl_config_load_buffer(), the result (when there is one) is checked for
 * the invariants the rest of sluice relies on, and everything is freed.
 *
 *   make fuzz FUZZ_TARGETS=config FUZZ_SECONDS=60
 *
 * (New inputs go to build/fuzz-corpus-config: the seeds in tests/fuzz/corpus
 * stay clean.)  Add any input that crashes as
 * tests/fuzz/corpus/regress-<what>.yaml so it keeps being replayed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "config/diag.h"
#include "lib/labels.h"

#define CHECK(x)                                                              \
	do {                                                                  \
		if (!(x)) {                                                   \
			fprintf(stderr, "invariant failed: %s (%s:%d)\n", #x, \
				__FILE__, __LINE__);                          \
			abort();                                              \
		}                                                             \
	} while (0)

static void check_cidrs(const struct sl_cidr *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		CHECK(c[i].prefix_len <= 128);
		for (unsigned b = c[i].prefix_len; b < 128; b++)
			CHECK(!(c[i].addr[b / 8] & (0x80 >> (b % 8))));
	}
}

static void check_ports(const struct sl_port_range *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		CHECK(p[i].lo >= 1 && p[i].lo <= p[i].hi);
}

static void check_expr(const struct sl_lm_expr *e)
{
	switch (e->kind) {
	case SL_LE_ALL:
	case SL_LE_ANY:
		break;
	case SL_LE_NOT:
		CHECK(e->n_children == 1);
		break;
	case SL_LE_EQUALS:
		CHECK(e->label && e->value);
		break;
	case SL_LE_EXISTS:
		CHECK(e->label);
		break;
	case SL_LE_MATCHES:
		CHECK(e->label && e->regex && e->re);
		break;
	}
	for (size_t i = 0; i < e->n_children; i++)
		check_expr(&e->children[i]);
}

static void check_matcher(const struct sl_label_matcher *m)
{
	char buf[256];

	for (size_t i = 0; i < m->n_reqs; i++) {
		CHECK(m->reqs[i].key);
		if (m->reqs[i].op == SL_LM_IN || m->reqs[i].op == SL_LM_NOT_IN)
			CHECK(m->reqs[i].n_values > 0);
		else
			CHECK(m->reqs[i].n_values == 0);
	}
	if (m->expr)
		check_expr(m->expr);
	sl_label_matcher_format(m, buf, sizeof(buf));
}

static void check_config(const struct sl_config *cfg)
{
	CHECK(cfg->n_levels >= 2 && cfg->n_levels <= SL_MAX_LEVELS);
	CHECK(!strcmp(cfg->levels[0].name, SL_EXEMPT_NAME) && cfg->levels[0].mandatory);
	CHECK(!strcmp(cfg->levels[1].name, SL_CATCH_ALL_NAME) && cfg->levels[1].mandatory);
	for (size_t i = 0; i < cfg->n_levels; i++) {
		const struct sl_level_cfg *l = &cfg->levels[i];

		CHECK(l->type == SL_LEVEL_EXEMPT || l->type == SL_LEVEL_LIMITED);
		if (l->limit_response == SL_RESP_QUEUE)
			CHECK(l->queues >= 1 && l->hand_size >= 1 && l->hand_size <= l->queues);
	}
	CHECK(cfg->n_schemas >= 2);
	for (size_t i = 0; i < cfg->n_schemas; i++) {
		const struct sl_flow_schema *fs = &cfg->schemas[i];

		CHECK(fs->level < cfg->n_levels);
		CHECK(!strcmp(cfg->levels[fs->level].name, fs->level_name));
		CHECK(fs->precedence >= 1 && fs->precedence <= 10000);
		CHECK(fs->seats_per_conn >= 1 && fs->seats_per_conn <= 100);
		if (i)
			CHECK(cfg->schemas[i - 1].precedence < fs->precedence ||
			      (cfg->schemas[i - 1].precedence == fs->precedence &&
			       strcmp(cfg->schemas[i - 1].name, fs->name) < 0));
		for (size_t r = 0; r < fs->n_rules; r++) {
			const struct sl_fs_rule *rule = &fs->rules[r];

			CHECK(rule->n_subjects > 0 && rule->n_destinations > 0);
			for (size_t s = 0; s < rule->n_subjects; s++) {
				const struct sl_subject *sub = &rule->subjects[s];

				if (sub->kind == SL_SUBJECT_NETWORK) {
					CHECK(sub->n_cidrs > 0);
					check_cidrs(sub->cidrs, sub->n_cidrs);
				} else {
					CHECK(sub->kind == SL_SUBJECT_LABELS);
					check_matcher(&sub->labels);
				}
			}
			for (size_t d = 0; d < rule->n_destinations; d++) {
				check_ports(rule->destinations[d].ports, rule->destinations[d].n_ports);
				check_cidrs(rule->destinations[d].addresses,
					    rule->destinations[d].n_addresses);
			}
		}
	}
	CHECK(sl_config_find_schema(cfg, SL_EXEMPT_NAME) == &cfg->schemas[0]);
	CHECK(sl_config_find_schema(cfg, SL_CATCH_ALL_NAME));
	for (size_t o = 0; o < cfg->n_label_objects; o++)
		for (size_t r = 0; r < cfg->label_objects[o].n_rules; r++) {
			const struct sl_label_rule *rule = &cfg->label_objects[o].rules[r];

			CHECK(rule->labels.count > 0);
			check_cidrs(rule->sources, rule->n_sources);
			check_cidrs(rule->destinations, rule->n_destinations);
			check_ports(rule->ports, rule->n_ports);
		}
	for (size_t p = 0; p < cfg->n_policies; p++) {
		const struct sl_policy_cfg *pol = &cfg->policies[p];

		CHECK(pol->n_selectors > 0);
		CHECK(pol->slope != 0 && pol->min_gradient <= pol->max_gradient);
		CHECK(pol->max_load_multiplier > 0 && pol->min_load_multiplier < pol->max_load_multiplier);
		CHECK(pol->default_params.priority > 0);
		for (size_t s = 0; s < pol->n_selectors; s++) {
			CHECK(!strcmp(pol->selectors[s].control_point, "ingress"));
			CHECK(pol->selectors[s].service && pol->selectors[s].service[0]);
			check_matcher(&pol->selectors[s].matcher);
		}
		for (size_t w = 0; w < pol->n_workloads; w++) {
			CHECK(pol->workloads[w].params.priority > 0);
			check_matcher(&pol->workloads[w].matcher);
		}
		CHECK((pol->signal == SL_SIGNAL_EXTERNAL) == (pol->external_path != NULL));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;
	int rc;

	rc = sl_config_load_buffer("fuzz.yaml", (const char *)data, size, &cfg, &d);
	CHECK((rc == 0) == (cfg != NULL));
	CHECK(rc != 0 || d.n_errors == 0);
	CHECK(rc == 0 || d.n_errors > 0);
	if (cfg)
		check_config(cfg);
	for (size_t i = 0; i < d.count && i < 4; i++) {
		char line[512];

		sl_diag_format(&d.items[i], line, sizeof(line));
	}
	sl_config_free(cfg);
	sl_diags_free(&d);
	return 0;
}
