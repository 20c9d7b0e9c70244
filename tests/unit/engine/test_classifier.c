// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The reference classifier, the class compiler and the flow hash. */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine/class_compiler.h"
#include "engine/classifier.h"
#include "config/config.h"
#include "lib/flowhash.h"
#include "lib/fmt.h"
#include "../load_config.h"

static void tuple(struct sl_conn_tuple *t, const char *src, uint16_t sport, const char *dst,
		  uint16_t dport)
{
	memset(t, 0, sizeof(*t));
	assert_true(sl_parse_addr(src, t->saddr) > 0);
	assert_true(sl_parse_addr(dst, t->daddr) > 0);
	t->sport = sport;
	t->dport = dport;
	t->iface = "sl0";
}

static const char *classify_name(const struct sl_config *cfg, const char *src, uint16_t sport,
				 const char *dst, uint16_t dport, struct sl_class_result *r)
{
	struct sl_labels l = SL_LABELS_INIT;
	struct sl_conn_tuple t;

	tuple(&t, src, sport, dst, dport);
	assert_int_equal(sl_conn_labels(cfg, &t, &l), 0);
	sl_classify(cfg, &t, &l, r);
	sl_labels_free(&l);
	assert_true(r->schema != SL_NONE);
	return cfg->schemas[r->schema].name;
}

/* SipHash-2-4 reference vector (Aumasson & Bernstein): key 00..0f,
 * message 00..0e -> a129ca6149be45e5. */
static void test_siphash_vector(void **state)
{
	uint8_t key[16], msg[15];

	(void)state;
	for (int i = 0; i < 16; i++)
		key[i] = (uint8_t)i;
	for (int i = 0; i < 15; i++)
		msg[i] = (uint8_t)i;
	assert_true(sl_siphash24(key, msg, sizeof(msg)) == 0xa129ca6149be45e5ULL);
	assert_true(sl_siphash24(key, msg, 0) == 0x726fdb47dd0e0e31ULL);
	/* Name and distinguisher are separated: ("ab","c") != ("a","bc"). */
	assert_true(sl_flow_hash(key, "ab", "c") != sl_flow_hash(key, "a", "bc"));
}

static void test_cidr_contains(void **state)
{
	struct sl_cidr c = {.prefix_len = 96 + 25};
	uint8_t a[16];

	(void)state;
	assert_int_equal(sl_parse_addr("198.18.7.128", c.addr), 4);
	assert_int_equal(sl_parse_addr("198.18.7.200", a), 4);
	assert_true(sl_cidr_contains(&c, a));
	assert_int_equal(sl_parse_addr("198.18.7.127", a), 4);
	assert_false(sl_cidr_contains(&c, a));
	c.prefix_len = 0;
	assert_true(sl_cidr_contains(&c, a));
}

static void test_networks_first_match(void **state)
{
	struct sl_config *cfg = load_config_file("tests/packet/classify/networks.yaml");
	struct sl_class_result r;
	char buf[64];

	(void)state;
	assert_string_equal(classify_name(cfg, "198.18.255.9", 1000, "198.18.0.1", 8080, &r), "ops");
	assert_string_equal(classify_name(cfg, "198.18.3.9", 1000, "198.18.0.1", 8080, &r), "web");
	assert_string_equal(cfg->levels[r.level].name, "web");
	/* web needs local address 198.18.0.1: elsewhere it falls through */
	assert_string_equal(classify_name(cfg, "198.18.3.9", 1000, "198.18.0.2", 8080, &r), "catch-all");
	assert_string_equal(classify_name(cfg, "198.18.3.9", 1000, "198.18.0.1", 9100, &r), "web");
	assert_string_equal(classify_name(cfg, "198.18.3.9", 1000, "198.18.0.1", 9101, &r), "catch-all");
	/* 198.18.7.x matches web (precedence 500) before batch (800) on 8080 */
	assert_string_equal(classify_name(cfg, "198.18.7.1", 1000, "198.18.0.1", 8080, &r), "web");
	assert_string_equal(classify_name(cfg, "198.18.7.1", 1000, "198.18.0.1", 80, &r), "batch");
	assert_int_equal(r.rule, 0);
	assert_string_equal(classify_name(cfg, "2001:db8::1", 1000, "fd53:6c75:6963::1", 22, &r), "batch");
	assert_int_equal(r.rule, 1);
	assert_string_equal(classify_name(cfg, "127.0.0.1", 1000, "127.0.0.1", 22, &r), "exempt");
	/* web distinguishes by source /24; batch by destination */
	{
		struct sl_conn_tuple t;

		tuple(&t, "198.18.3.9", 1, "198.18.0.1", 8080);
		classify_name(cfg, "198.18.3.9", 1, "198.18.0.1", 8080, &r);
		assert_string_equal(sl_flow_distinguisher(&cfg->schemas[r.schema], &t, buf, sizeof(buf)),
				    "198.18.3.0/24");
		tuple(&t, "10.1.2.3", 1, "198.18.0.5", 80);
		classify_name(cfg, "10.1.2.3", 1, "198.18.0.5", 80, &r);
		assert_string_equal(sl_flow_distinguisher(&cfg->schemas[r.schema], &t, buf, sizeof(buf)),
				    "198.18.0.5");
	}
	sl_config_free(cfg);
}

static void test_labels_and_workloads(void **state)
{
	struct sl_config *cfg = load_config_file("tests/packet/classify/labels.yaml");
	struct sl_labels l = SL_LABELS_INIT;
	struct sl_class_result r;
	struct sl_conn_tuple t;

	(void)state;
	/* later ConnectionLabels rule overrides: .7.200 is silver, not gold */
	tuple(&t, "198.18.7.200", 1000, "198.18.0.1", 8080);
	assert_int_equal(sl_conn_labels(cfg, &t, &l), 0);
	assert_string_equal(sl_labels_get(&l, "user_tier"), "silver");
	assert_string_equal(sl_labels_get(&l, "svc"), "api");
	assert_string_equal(sl_labels_get(&l, SL_LABEL_SRC_IP), "198.18.7.200");
	assert_string_equal(sl_labels_get(&l, SL_LABEL_DST_PORT), "8080");
	assert_string_equal(sl_labels_get(&l, SL_LABEL_IP_VERSION), "4");
	assert_string_equal(sl_labels_get(&l, SL_LABEL_IFACE), "sl0");
	sl_labels_free(&l);

	assert_string_equal(classify_name(cfg, "198.18.7.5", 1000, "198.18.0.1", 8080, &r), "gold-api");
	assert_int_equal(r.policy, 0);
	assert_string_equal(cfg->policies[0].workloads[r.workload].name, "gold");
	assert_string_equal(classify_name(cfg, "198.18.7.200", 1000, "198.18.0.1", 8080, &r), "catch-all");
	assert_string_equal(cfg->policies[0].workloads[r.workload].name, "silver");
	assert_string_equal(classify_name(cfg, "198.18.5.5", 1000, "198.18.0.1", 8080, &r), "untiered-api");
	assert_true(r.workload == SL_NONE); /* default workload */
	assert_string_equal(classify_name(cfg, "198.18.9.9", 1000, "198.18.0.1", 80, &r), "by-ip");
	assert_true(r.policy == SL_NONE);
	assert_string_equal(classify_name(cfg, "198.18.5.5", 1000, "198.18.0.1", 9999, &r), "by-port");
	assert_string_equal(classify_name(cfg, "fd00::5", 1000, "fd00::1", 9999, &r), "catch-all");
	assert_string_equal(classify_name(cfg, "fd00::5", 1234, "fd00::1", 80, &r), "by-port");
	assert_int_equal(r.rule, 1);
	sl_config_free(cfg);
}

/* Exhaustive over ports, sampled over addresses: the compiled classes
 * give the reference classifier's answer for every representative, and
 * the port class map is constant between cuts. */
static void test_compiler_agrees_with_reference(void **state)
{
	struct sl_config *cfg = load_config_file("tests/packet/classify/labels.yaml");
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_labels l = SL_LABELS_INIT;
	unsigned slots[SL_MAX_LEVELS];
	struct sl_compiled c;

	(void)state;
	for (unsigned i = 0; i < SL_MAX_LEVELS; i++)
		slots[i] = i;
	assert_int_equal(sl_compile_classes(&(struct sl_class_inputs){.cfg = cfg, .level_slot = slots, .iface = "sl0", .max_entries = 1 << 16}, &c, &d), 0);
	/* dst.port 9999 and src.port 1234 literals are cuts. */
	assert_true(c.dport_cls[9999] != c.dport_cls[9998]);
	assert_true(c.dport_cls[9999] != c.dport_cls[10000]);
	assert_true(c.sport_cls[1234] != c.sport_cls[1233]);
	assert_true(c.n_sport_cls == 3);
	/* Every dport: classify with a fixed address pair, and check that two
	 * ports in the same class always give the same schema. */
	{
		size_t *schema_of_cls = calloc(c.n_dport_cls, sizeof(size_t));

		for (unsigned i = 0; i < c.n_dport_cls; i++)
			schema_of_cls[i] = SL_NONE;
		for (unsigned p = 1; p < 65536; p++) {
			struct sl_class_result r;

			classify_name(cfg, "198.18.7.5", 1000, "198.18.0.1", (uint16_t)p, &r);
			if (schema_of_cls[c.dport_cls[p]] == SL_NONE)
				schema_of_cls[c.dport_cls[p]] = r.schema;
			else
				assert_int_equal(schema_of_cls[c.dport_cls[p]], r.schema);
		}
		free(schema_of_cls);
	}
	sl_labels_free(&l);
	sl_compiled_free(&c);
	sl_diags_free(&d);
	sl_config_free(cfg);
}

static void test_compiler_rejects_regex_on_addresses(void **state)
{
	static const char yaml[] =
		"apiVersion: sluice/v1\n"
		"kind: AverageLatencySchedulingPolicy\n"
		"metadata: {name: p}\n"
		"spec:\n"
		"  load_scheduling_core:\n"
		"    aimd_load_scheduler:\n"
		"      load_scheduler:\n"
		"        selectors:\n"
		"        - control_point: ingress\n"
		"          label_matcher:\n"
		"            expression:\n"
		"              label_matches: {label: src.ip, regex: \"^198\\\\.18\\\\.\"}\n";
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;
	unsigned slots[SL_MAX_LEVELS] = {0, 1};
	struct sl_compiled c;

	(void)state;
	if (sl_config_load_buffer("p.yaml", yaml, strlen(yaml), &cfg, &d)) {
		sl_diags_print(&d, stderr);
		fail_msg("policy did not load");
	}
	assert_int_equal(sl_compile_classes(&(struct sl_class_inputs){.cfg = cfg, .level_slot = slots, .iface = "sl0", .max_entries = 1 << 16}, &c, &d), -EINVAL);
	assert_true(sl_diags_error_count(&d) == 1);
	assert_non_null(strstr(d.items[d.count - 1].message, "cannot be compiled"));
	sl_diags_free(&d);
	sl_config_free(cfg);
}

static void test_compiler_table_limit(void **state)
{
	struct sl_config *cfg = load_config_file("tests/packet/classify/networks.yaml");
	struct sl_diags d = SL_DIAGS_INIT;
	unsigned slots[SL_MAX_LEVELS];
	struct sl_compiled c;

	(void)state;
	for (unsigned i = 0; i < SL_MAX_LEVELS; i++)
		slots[i] = i;
	assert_int_equal(sl_compile_classes(&(struct sl_class_inputs){.cfg = cfg, .level_slot = slots, .iface = "sl0", .max_entries = 2}, &c, &d), -ENOSPC);
	assert_non_null(strstr(d.items[0].message, "tableSizes.classes"));
	sl_diags_free(&d);
	sl_config_free(cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_siphash_vector),
		cmocka_unit_test(test_cidr_contains),
		cmocka_unit_test(test_networks_first_match),
		cmocka_unit_test(test_labels_and_workloads),
		cmocka_unit_test(test_compiler_agrees_with_reference),
		cmocka_unit_test(test_compiler_rejects_regex_on_addresses),
		cmocka_unit_test(test_compiler_table_limit),
	};

	return cmocka_run_group_tests_name("classifier", tests, NULL, NULL);
}
