// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Configuration loader tests: kind ConnectionLabels and references to labels.
 *
 * Every rule has a good and a bad example; the bad ones are rows of
 * bad_cases[] (one test each).  Run from the repository root, or point
 * SLUICE_TEST_DATA at tests/unit/configs.
 */
#include "config_helpers.h"

static const struct bad_case bad_cases[] = {
	/* kind: ConnectionLabels */
	{ "bad_cl_builtin_key", CL "  - labels: {src.ip: x}\n", 6, 14, CL_OBJ, "spec.rules[0].labels.src.ip",
	  "'src.ip' is a built-in label, set from the connection itself (src.ip, src.port, dst.ip, dst.port, proto, ip.version, iface); choose another key" },
	{ "bad_cl_builtin_iface", CL "  - labels: {iface: x}\n", 6, 14, CL_OBJ, "spec.rules[0].labels.iface",
	  "'iface' is a built-in label" },
	{ "bad_cl_key_chars", CL "  - labels: {\"a b\": x}\n", 6, 14, CL_OBJ, "spec.rules[0].labels.a b",
	  "label key 'a b' may contain only letters, digits, '-', '_' and '.' (after an optional 'prefix/')" },
	{ "bad_cl_key_long", CL "  - labels: {" LONG64 ": x}\n", 6, 14, CL_OBJ, "spec.rules[0].labels.a23456789012345678901234567890123456789012345678901234567890...",
	  "must have a name of 1..63 characters (after an optional 'prefix/')" },
	{ "bad_cl_key_prefix", CL "  - labels: {Example.com/team: x}\n", 6, 14, CL_OBJ,
	  "spec.rules[0].labels.Example.com/team", "has an invalid prefix" },
	{ "bad_cl_key_two_slashes", CL "  - labels: {a/b/c: x}\n", 6, 14, CL_OBJ,
	  "spec.rules[0].labels.a/b/c", "may contain at most one '/' (prefix/name)" },
	{ "bad_cl_empty_labels", CL "  - labels: {}\n", 6, 13, CL_OBJ, "spec.rules[0].labels",
	  "must not be empty: a rule gives connections at least one label" },
	{ "bad_cl_missing_labels", CL "  - sources: [10.0.0.0/8]\n", 6, 5, CL_OBJ, "spec.rules[0].labels",
	  "missing required field 'labels'" },
	{ "bad_cl_sources_empty", CL "  - sources: []\n    labels: {a: b}\n", 6, 14, CL_OBJ, "spec.rules[0].sources",
	  "must not be empty; leave the field out to match any source" },
	{ "bad_cl_destination_bits", CL "  - destinations: [10.0.0.1/8]\n    labels: {a: b}\n", 6, 20, CL_OBJ,
	  "spec.rules[0].destinations[0]", "has host bits set; did you mean 10.0.0.0/8" },
	{ "bad_cl_port", CL "  - ports: [0]\n    labels: {a: b}\n", 6, 13, CL_OBJ, "spec.rules[0].ports[0]",
	  "port 0 is out of range; ports are 1..65535" },
	{ "bad_cl_value_type", CL "  - labels: {a: [x]}\n", 6, 17, CL_OBJ, "spec.rules[0].labels.a",
	  "expected a string, got a list" },
	{ "bad_cl_value_bool", CL "  - labels: {a: true}\n", 6, 17, CL_OBJ, "spec.rules[0].labels.a",
	  "expected a string, got boolean true (quote it to use it as a string)" },
	{ "bad_cl_dup_key", CL "  - labels: {a: x, a: y}\n", 6, 20, CL_OBJ, "spec.rules[0].labels.a",
	  "duplicate key 'a'; also defined at t.yaml:6:14" },
	{ "bad_cl_missing_rules", API "kind: ConnectionLabels\nmetadata: {name: tiers}\nspec: {}\n", 4, 7, CL_OBJ,
	  "spec.rules", "missing required field 'rules'" },
	{ "bad_cl_unknown", CL "  - labels: {a: b}\n    source: [10.0.0.0/8]\n", 7, 5, CL_OBJ, "spec.rules[0].source",
	  "unknown field 'source'; did you mean 'sources'?" },

};

static void test_connection_labels(void **state)
{
	struct sl_config *cfg;
	const struct sl_label_object *lo;

	(void)state;
	cfg = load_ok(CL "  - labels: {user_tier: gold, n: 7, e: \"\"}\n"
		      "  - sources: [198.18.7.0/24]\n    ports: [\"*\"]\n    labels: {user_tier: silver}\n"
		      "---\n" CLN("more") "  - destinations: [\"fd53::/16\"]\n    labels: {a.b/c-d_e.f: x}\n");
	assert_int_equal(cfg->n_label_objects, 2);
	lo = &cfg->label_objects[0];
	assert_string_equal(lo->name, "tiers");
	assert_int_equal(lo->n_rules, 2);
	assert_int_equal(lo->rules[0].n_sources, 0);
	assert_int_equal(lo->rules[0].line, 6);
	assert_int_equal(lo->rules[0].column, 5);
	assert_string_equal(sl_labels_get(&lo->rules[0].labels, "n"), "7");
	assert_string_equal(sl_labels_get(&lo->rules[0].labels, "e"), "");
	assert_int_equal(lo->rules[1].n_ports, 0);
	assert_string_equal(sl_labels_get(&lo->rules[1].labels, "user_tier"), "silver");
	assert_string_equal(cfg->label_objects[1].name, "more");
	assert_string_equal(sl_labels_get(&cfg->label_objects[1].rules[0].labels, "a.b/c-d_e.f"), "x");
	sl_config_free(cfg);

	/* an object without rules labels nothing */
	expect_one(API "kind: ConnectionLabels\nmetadata: {name: tiers}\nspec:\n  rules: []\n",
		   SL_SEV_WARNING, 5, 10, CL_OBJ, "spec.rules",
		   "no rules: this object labels no connection");
	/* label keys: 63 characters after a prefix of up to 253 */
	sl_config_free(load_ok(CL "  - labels: {a234567890123456789012345678901234567890123456789012345678901: x}\n"));
	sl_config_free(load_ok(CL "  - labels: {sluice.example.org/tier: x, A.b_C: y, \"9\": z}\n"));
}

/* Label matchers refer to labels; one nothing sets is never present. */
static void test_label_refs(void **state)
{
	struct sl_config *cfg;

	(void)state;
	expect_one(CL "  - labels: {user_tier: gold}\n---\n"
		   SUBJ("{kind: Labels, labels: {matchLabels: {user_teir: gold}}}"),
		   SL_SEV_WARNING, 14, 54, FS_OBJ, RULE0 "subjects[0].labels.matchLabels.user_teir",
		   "label 'user_teir' is not built-in (src.ip, src.port, dst.ip, dst.port, proto, ip.version, iface) and no ConnectionLabels object sets it, so no connection has it; did you mean 'user_tier'?");
	/* built-ins and labels set anywhere in the file (even later) are fine */
	cfg = load_ok(SUBJ("{kind: Labels, labels: {matchLabels: {user_tier: gold, src.ip: 10.0.0.1, iface: eth0}}}")
		      "---\n" CL "  - labels: {user_tier: gold}\n");
	sl_config_free(cfg);
	/* one warning per label, at its first use */
	cfg = load_warned(SUBJ("{kind: Labels, labels: {matchLabels: {x: a}, matchExpressions: [{key: x, operator: Exists}]}}"), 1);
	sl_config_free(cfg);
}

int main(void)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(test_connection_labels),
		cmocka_unit_test(test_label_refs),
	};

	return run_config_suite("config_connection_labels", fixed, N_OF(fixed), bad_cases, N_OF(bad_cases));
}
