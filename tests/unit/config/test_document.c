// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Configuration loader tests: documents as a whole (shape, empty and
 * comment-only files, several errors at once, unique names, YAML itself),
 * diagnostics and their formats, files, and the YAML document layer.
 *
 * Every rule has a good and a bad example; the bad ones are rows of
 * bad_cases[] (one test each).  Run from the repository root, or point
 * SLUICE_TEST_DATA at tests/unit/configs.
 */
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config_helpers.h"
#include "lib/syn_retransmit.h"

static const struct bad_case bad_cases[] = {
	/* document shape */
	{ "bad_root_not_mapping", "just a string\n", 1, 1, "document 1", "",
	  "expected an object (a mapping with apiVersion, kind, metadata and spec), got string 'just a string'" },
	{ "bad_root_list", "---\n- a\n- b\n", 2, 1, "document 1", "", "got a list" },
	{ "bad_missing_api_version", "kind: Server\nmetadata: {name: main}\n", 1, 1,
	  SRV_OBJ, "apiVersion", "missing required field 'apiVersion'" },
	{ "bad_api_version", "apiVersion: sluice/v2\nkind: Server\nmetadata: {name: main}\n",
	  1, 13, SRV_OBJ, "apiVersion",
	  "unsupported apiVersion 'sluice/v2'; expected 'sluice/v1' (PriorityLevelConfiguration and FlowSchema also take flowcontrol.apiserver.k8s.io/v1, v1beta3, v1beta2 or v1beta1, AverageLatencySchedulingPolicy istio.alibabacloud.com/v1)" },
	{ "bad_api_version_kind", "apiVersion: flowcontrol.apiserver.k8s.io/v1\nkind: Server\nmetadata: {name: main}\n",
	  1, 13, SRV_OBJ, "apiVersion",
	  "apiVersion 'flowcontrol.apiserver.k8s.io/v1' has no kind Server (it has PriorityLevelConfiguration and FlowSchema); sluice's own kinds take 'sluice/v1'" },
	{ "bad_api_version_type", "apiVersion: 1\nkind: Server\nmetadata: {name: main}\n",
	  1, 13, SRV_OBJ, "apiVersion", "expected 'sluice/v1', got integer 1" },
	{ "bad_missing_kind", API "metadata: {name: main}\n", 1, 1, "document 1",
	  "kind", "missing required field 'kind'" },
	{ "bad_unknown_kind", API "kind: Sever\nmetadata: {name: main}\n", 2, 7,
	  "Sever/main", "kind", "unknown kind 'Sever'; did you mean 'Server'?" },
	{ "bad_unknown_kind_prefix", API "kind: PriorityLevel\nmetadata: {name: x}\n", 2, 7,
	  "PriorityLevel/x", "kind", "did you mean 'PriorityLevelConfiguration'?" },
	{ "bad_unknown_kind_no_hint", API "kind: Deployment\nmetadata: {name: x}\n", 2, 7,
	  "Deployment/x", "kind", "unknown kind 'Deployment' (known kinds: Server, PriorityLevelConfiguration, FlowSchema, ConnectionLabels, AverageLatencySchedulingPolicy)" },
	{ "bad_unknown_kind_labels", API "kind: ConnectionLabel\nmetadata: {name: x}\n", 2, 7,
	  "ConnectionLabel/x", "kind", "did you mean 'ConnectionLabels'?" },
	{ "bad_kind_type", API "kind: [FlowSchema]\nmetadata: {name: x}\n", 2, 7,
	  "document 1", "kind", "expected a kind (Server, PriorityLevelConfiguration, FlowSchema, ConnectionLabels, AverageLatencySchedulingPolicy), got a list" },
	{ "bad_missing_metadata", API "kind: Server\nspec: {}\n", 1, 1,
	  "Server (document 1)", "metadata", "missing required field 'metadata'" },
	{ "bad_missing_name", API "kind: Server\nmetadata:\n  labels: {a: b}\n", 4, 3,
	  "Server (document 1)", "metadata.name", "missing required field 'name'" },
	{ "bad_name_not_string", API "kind: Server\nmetadata: {name: 42}\n", 3, 18,
	  "Server (document 1)", "metadata.name", "expected a string, got integer 42 (quote it" },
	{ "bad_name_empty", API "kind: Server\nmetadata: {name: \"\"}\n", 3, 18,
	  "Server (document 1)", "metadata.name", "must not be empty" },
	{ "bad_metadata_unknown", API "kind: Server\nmetadata: {name: main, labelz: x}\n", 3, 24,
	  SRV_OBJ, "metadata.labelz", "unknown field 'labelz'; did you mean 'labels'?" },
	{ "bad_label_value", API "kind: Server\nmetadata:\n  name: main\n  labels: {tier: 1}\n", 5, 18,
	  SRV_OBJ, "metadata.labels.tier", "expected a string, got integer 1" },
	{ "bad_top_unknown_field", SRV "  tick: 1s\ndata: {}\n", 6, 1, SRV_OBJ,
	  "data", "unknown field 'data' (known fields: apiVersion, kind, metadata, spec, status)" },
	{ "bad_top_unknown_field_hint", API "kind: Server\nmetadata: {name: main}\nSpec: {}\n", 4, 1,
	  SRV_OBJ, "Spec", "unknown field 'Spec'; did you mean 'spec'?" },
	{ "bad_merge_key", SRV "  <<: {tick: 1s}\n", 5, 3, SRV_OBJ, "spec.<<",
	  "merge keys ('<<') are not supported" },
	{ "bad_non_string_key", SRV "  ? [a, b]\n  : 1\n", 5, 5, SRV_OBJ, "spec",
	  "mapping keys must be strings, got a list" },
	{ "bad_duplicate_key", SRV "  tick: 1s\n  failMode: open\n  tick: 2s\n", 7, 3,
	  SRV_OBJ, "spec.tick", "duplicate key 'tick'; also defined at t.yaml:5:3" },
	{ "bad_duplicate_key_flow", PLN("web") "  {type: Exempt, type: Limited}\n", 5, 18,
	  PL_OBJ, "spec.type", "duplicate key 'type'; also defined at t.yaml:5:4" },
	{ "bad_duplicate_label", API "kind: Server\nmetadata:\n  name: main\n  labels: {a: x, a: y}\n",
	  5, 18, SRV_OBJ, "metadata.labels.a", "duplicate key 'a'; also defined at t.yaml:5:12" },

	/* unique names per kind */
	{ "bad_duplicate_schema", FSR "  - subjects: [{kind: Network, network: {cidrs: [0.0.0.0/0]}}]\n    destinations: [{}]\n"
	  "---\n" FSR "  - subjects: [{kind: Network, network: {cidrs: [0.0.0.0/0]}}]\n    destinations: [{}]\n",
	  12, 18, FS_OBJ, "metadata.name", "duplicate FlowSchema name 'web'; also defined at t.yaml:3:18" },
	{ "bad_duplicate_policy", POLSPEC "---\n" POLSPEC, 12, 18, POL_OBJ, "metadata.name",
	  "duplicate AverageLatencySchedulingPolicy name 'p'; also defined at t.yaml:3:18" },
	{ "bad_duplicate_exempt_level", PLN("exempt") "  type: Exempt\n---\n" PLN("exempt") "  type: Exempt\n",
	  9, 18, "PriorityLevelConfiguration/exempt", "metadata.name",
	  "duplicate PriorityLevelConfiguration name 'exempt'; also defined at t.yaml:3:18" },

	/* YAML itself */
	{ "bad_yaml_syntax", SRV "  tick: 1s\n   failMode: open\n", 6, 12, "", "",
	  "YAML syntax error: mapping values are not allowed in this context" },
	{ "bad_yaml_unclosed_flow", SRV "  interfaces: [eth0\n", 6, 1, "", "",
	  "YAML syntax error: did not find expected ',' or ']' (while parsing a flow sequence at line 5, column 15)" },
	{ "bad_yaml_tab", SRV "\ttick: 1s\n", 5, 1, "", "", "YAML syntax error: found character that cannot start any token" },
	{ "bad_yaml_undefined_alias", SRV "  tick: *t\n", 5, 9, "", "", "YAML syntax error: found undefined alias" },
	{ "bad_yaml_encoding", API "kind: Server\nmetadata: {name: \"caf\xe9\"}\n", 3, 22, "", "",
	  "invalid YAML input: invalid trailing UTF-8 octet (byte 0xe9 at offset 56)" },
};

static void test_empty_buffer_defaults(void **state)
{
	struct sl_config *cfg = load_ok("");

	(void)state;
	assert_false(cfg->server.present);
	assert_int_equal(cfg->server.server_concurrency_limit, 600);
	assert_int_equal(cfg->server.fail_mode, SL_FAIL_STATIC);
	assert_int_equal(cfg->server.heartbeat_timeout_ns, 3 * SEC);
	assert_int_equal(cfg->server.tick_ns, 100 * MS);
	assert_int_equal(cfg->server.handshake_timeout_ns, 10 * SEC);
	assert_int_equal(cfg->server.n_interfaces, 0);
	assert_null(cfg->server.interfaces);
	assert_string_equal(cfg->server.pin_dir, "/sys/fs/bpf/sluice");
	assert_int_equal(cfg->server.table_sizes.connections, 65536);
	assert_int_equal(cfg->server.table_sizes.classes, 65536);
	assert_null(cfg->server.metrics_address);
	assert_int_equal(cfg->server.events_per_second, 1000);
	assert_string_equal(cfg->server.control_socket, "/run/sluice/sluiced.sock");
	assert_null(cfg->server.file);
	/* only the mandatory objects, marked built-in, without a position */
	assert_int_equal(cfg->n_levels, 2);
	assert_int_equal(cfg->n_schemas, 2);
	check_mandatory(cfg);
	for (size_t i = 0; i < 2; i++) {
		assert_true(cfg->levels[i].builtin);
		assert_null(cfg->levels[i].file);
		assert_int_equal(cfg->levels[i].line, 0);
		assert_true(cfg->schemas[i].builtin);
		assert_null(cfg->schemas[i].file);
		assert_int_equal(cfg->schemas[i].line, 0);
	}
	assert_int_equal(cfg->levels[0].shares, 0);
	assert_string_equal(cfg->schemas[1].name, "catch-all");
	assert_int_equal(cfg->n_label_objects, 0);
	assert_null(cfg->label_objects);
	assert_int_equal(cfg->n_policies, 0);
	assert_null(cfg->policies);
	assert_string_equal(cfg->source_file, "t.yaml");
	sl_config_free(cfg);
}

/* UTF-16 (with its byte order mark) is no UTF-8 text, whatever libyaml
 * could read: refused with the reason the messages give (issue 26). */
static void test_utf16_refused(void **state)
{
	static const char utf16le[] = "\xff\xfek\0i\0n\0d\0:\0 \0S\0e\0r\0v\0e\0r\0\n\0";
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;

	(void)state;
	assert_int_equal(sl_config_load_buffer("u16.yaml", utf16le, sizeof(utf16le) - 1, &cfg, &d), -EINVAL);
	assert_null(cfg);
	assert_int_equal(d.n_errors, 1);
	assert_non_null(strstr(d.items[0].message, "must be UTF-8"));
	sl_diags_free(&d);
}

/* The daemon takes no configuration from a file others may write
 * (issue 26): refused naming the mode and the fix; a file of another
 * owner is a warning. */
static void test_file_mode_checked(void **state)
{
	char path[] = "/tmp/sluice-mode.XXXXXX";
	struct sl_diags d = SL_DIAGS_INIT;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(sl_config_check_file_mode(path, &d), 0);
	assert_int_equal(d.count, 0);
	assert_int_equal(chmod(path, 0664), 0);
	assert_int_equal(sl_config_check_file_mode(path, &d), -EPERM);
	assert_int_equal(d.n_errors, 1);
	assert_non_null(strstr(d.items[0].message, "writable by its group (mode 0664)"));
	assert_non_null(strstr(d.items[0].message, "chmod go-w"));
	sl_diags_free(&d);
	assert_int_equal(chmod(path, 0646), 0);
	assert_int_equal(sl_config_check_file_mode(path, &d), -EPERM);
	assert_non_null(strstr(d.items[0].message, "writable by anyone (mode 0646)"));
	sl_diags_free(&d);
	if (geteuid() == 0) {
		assert_int_equal(chmod(path, 0644), 0);
		assert_int_equal(chown(path, 4242, 0), 0);
		assert_int_equal(sl_config_check_file_mode(path, &d), 0);
		assert_int_equal(d.count, 1);
		assert_int_equal(d.items[0].severity, SL_SEV_WARNING);
		assert_non_null(strstr(d.items[0].message, "owned by uid 4242"));
		sl_diags_free(&d);
	}
	assert_int_equal(sl_config_check_file_mode("-", &d), 0); /* standard input */
	unlink(path);
}

static void test_null_buffer(void **state)
{
	struct sl_config *cfg = NULL;

	(void)state;
	assert_int_equal(sl_config_load_buffer("none", NULL, 0, &cfg, NULL), 0);
	assert_non_null(cfg);
	assert_int_equal(cfg->n_levels, 2);
	check_mandatory(cfg);
	sl_config_free(cfg);
}

/* A file with no object (empty, comments only: a truncated write) is
 * refused, naming why: it would run the host on the built-in objects. */
static void test_empty_and_comment_files(void **state)
{
	static const char *const names[] = { "empty.yaml", "comments-only.yaml" };

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		struct sl_diags d = SL_DIAGS_INIT;
		struct sl_config *cfg = NULL;
		char path[512];

		fixture(path, sizeof(path), names[i]);
		assert_int_equal(sl_config_load_file(path, &cfg, &d), -EINVAL);
		assert_null(cfg);
		assert_int_equal(d.n_errors, 1);
		assert_string_equal(d.items[0].file, path);
		assert_non_null(strstr(d.items[0].message, "holds no configuration object"));
		sl_diags_free(&d);
	}
}

static void test_empty_documents_skipped(void **state)
{
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;
	char path[512];

	(void)state;
	fixture(path, sizeof(path), "empty-documents.yaml");
	assert_int_equal(sl_config_load_file(path, &cfg, &d), 0);
	assert_int_equal(d.count, 0);
	assert_int_equal(cfg->n_levels, 3);
	assert_string_equal(cfg->levels[2].name, "web");
	assert_int_equal(cfg->levels[2].line, 5);
	sl_config_free(cfg);

	cfg = load_ok("---\n---\n...\n---\n# nothing\n");
	assert_int_equal(cfg->n_levels, 2);
	sl_config_free(cfg);
}

static void test_any_subset_is_valid(void **state)
{
	struct sl_config *cfg;

	(void)state;
	/* one level alone */
	cfg = load_ok(PL "  type: Limited\n  limited: {limitResponse: {type: Reject}}\n");
	assert_int_equal(cfg->n_levels, 3);
	assert_int_equal(cfg->n_schemas, 2);
	sl_config_free(cfg);
	/* one FlowSchema alone (to a mandatory level) */
	cfg = load_ok(FSP RULES_ANY);
	assert_int_equal(cfg->n_schemas, 3);
	assert_string_equal(cfg->schemas[1].name, "web");
	assert_int_equal(cfg->schemas[1].level, 1);
	sl_config_free(cfg);
	/* one ConnectionLabels object alone */
	cfg = load_ok(CL "  - labels: {a: b}\n");
	assert_int_equal(cfg->n_label_objects, 1);
	sl_config_free(cfg);
	/* one policy alone */
	cfg = load_ok(POLICY);
	assert_int_equal(cfg->n_policies, 1);
	sl_config_free(cfg);
}

static void test_good_full_fixture(void **state)
{
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;
	const struct sl_level_cfg *l;
	const struct sl_flow_schema *fs;
	const struct sl_fs_rule *r;
	const struct sl_label_object *lo;
	const struct sl_policy_cfg *p;
	const struct sl_workload_cfg *w;
	const struct sl_lm_expr *e;
	char path[512];

	(void)state;
	fixture(path, sizeof(path), "good-full.yaml");
	assert_int_equal(sl_config_load_file(path, &cfg, &d), 0);
	/* One advisory: gold sets tokens and the policy estimates them. */
	if (d.count != 1)
		sl_diags_print(&d, stderr);
	assert_int_equal(d.count, 1);
	assert_int_equal(d.items[0].severity, SL_SEV_WARNING);
	assert_non_null(strstr(d.items[0].message, "replaces the tokens set for gold"));

	assert_true(cfg->server.present);
	assert_int_equal(cfg->server.server_concurrency_limit, 1200);
	assert_int_equal(cfg->server.fail_mode, SL_FAIL_CLOSED);
	assert_int_equal(cfg->server.heartbeat_timeout_ns, 2 * SEC);
	assert_int_equal(cfg->server.tick_ns, 50 * MS);
	assert_int_equal(cfg->server.handshake_timeout_ns, 90 * SEC);
	assert_int_equal(cfg->server.n_interfaces, 2);
	assert_string_equal(cfg->server.interfaces[0], "eth0");
	assert_string_equal(cfg->server.interfaces[1], "bond0.100");
	assert_string_equal(cfg->server.pin_dir, "/sys/fs/bpf/sluice-test");
	assert_int_equal(cfg->server.table_sizes.connections, 262144);
	assert_int_equal(cfg->server.table_sizes.classes, 131072);
	assert_string_equal(cfg->server.metrics_address, "127.0.0.1:9464");
	assert_false(cfg->server.shadow);
	assert_int_equal(cfg->server.events_per_second, 0);
	assert_string_equal(cfg->server.control_socket, "/run/sluice-test/ctl.sock");
	assert_string_equal(cfg->server.file, path);
	assert_int_equal(cfg->server.line, 2);

	/* levels: exempt (restated), catch-all, then file order */
	check_mandatory(cfg);
	assert_int_equal(cfg->n_levels, 4);
	assert_string_equal(cfg->levels[2].name, "web");
	assert_string_equal(cfg->levels[3].name, "batch.jobs");

	l = &cfg->levels[0];
	assert_int_equal(l->shares, 5);
	assert_int_equal(l->lendable_percent, 10);
	assert_false(l->builtin);
	assert_string_equal(l->file, path);
	assert_int_equal(l->line, 23);
	assert_int_equal(l->column, 1);
	assert_true(cfg->levels[1].builtin);

	l = &cfg->levels[2];
	assert_int_equal(l->type, SL_LEVEL_LIMITED);
	assert_false(l->mandatory);
	assert_int_equal(l->shares, 40);
	assert_int_equal(l->lendable_percent, 25);
	assert_int_equal(l->borrowing_limit_percent, 200);
	assert_int_equal(l->limit_response, SL_RESP_QUEUE);
	assert_int_equal(l->queues, 128);
	assert_int_equal(l->hand_size, 6);
	assert_int_equal(l->queue_length_limit, 20);
	assert_int_equal(l->queue_wait_limit_ns, 2500 * SEC / 1000);
	assert_int_equal(l->line, 33);

	l = &cfg->levels[3];
	assert_int_equal(l->shares, 10);
	assert_int_equal(l->limit_response, SL_RESP_REJECT);
	assert_int_equal(l->queues, 0);
	assert_int_equal(l->queue_wait_limit_ns, 0);

	/* schemas sorted: exempt 1, web 500, batch 1000, catch-all 10000 */
	assert_int_equal(cfg->n_schemas, 4);
	assert_string_equal(cfg->schemas[0].name, "exempt");
	assert_string_equal(cfg->schemas[1].name, "web");
	assert_string_equal(cfg->schemas[2].name, "batch");
	assert_string_equal(cfg->schemas[3].name, "catch-all");

	fs = &cfg->schemas[1];
	assert_string_equal(fs->level_name, "web");
	assert_int_equal(fs->level, 2);
	assert_int_equal(fs->precedence, 500);
	assert_int_equal(fs->distinguisher, SL_DIST_BY_SOURCE);
	assert_int_equal(fs->prefix_len_v4, 24);
	assert_int_equal(fs->prefix_len_v6, 48);
	assert_int_equal(fs->seats_per_conn, 2);
	assert_false(fs->mandatory);
	assert_false(fs->builtin);
	assert_string_equal(fs->file, path);
	assert_int_equal(fs->line, 62);
	assert_int_equal(fs->n_rules, 2);
	r = &fs->rules[0];
	assert_int_equal(r->line, 76);
	assert_int_equal(r->column, 5);
	assert_int_equal(r->n_subjects, 2);
	assert_int_equal(r->subjects[0].kind, SL_SUBJECT_NETWORK);
	assert_int_equal(r->subjects[0].n_cidrs, 3);
	check_cidr(&r->subjects[0].cidrs[0], "198.18.0.0", 15);
	check_cidr(&r->subjects[0].cidrs[1], "fd53:6c75:6963::", 48);
	check_cidr(&r->subjects[0].cidrs[2], "192.0.2.7", 32); /* a bare address is a host */
	assert_int_equal(r->subjects[0].line, 77);
	assert_int_equal(r->subjects[0].column, 7);
	assert_int_equal(r->subjects[1].kind, SL_SUBJECT_LABELS);
	assert_null(r->subjects[1].cidrs);
	assert_int_equal(r->subjects[1].labels.n_reqs, 2);
	assert_string_equal(r->subjects[1].labels.reqs[0].key, "user_tier");
	assert_int_equal(r->subjects[1].labels.reqs[0].op, SL_LM_IN);
	assert_int_equal(r->subjects[1].labels.reqs[0].n_values, 1);
	assert_string_equal(r->subjects[1].labels.reqs[0].values[0], "gold");
	assert_string_equal(r->subjects[1].labels.reqs[1].key, "env");
	assert_int_equal(r->subjects[1].labels.reqs[1].op, SL_LM_NOT_IN);
	assert_int_equal(r->subjects[1].labels.reqs[1].n_values, 2);
	assert_string_equal(r->subjects[1].labels.reqs[1].values[1], "dev");
	assert_null(r->subjects[1].labels.expr);
	assert_int_equal(r->n_destinations, 2);
	assert_int_equal(r->destinations[0].n_ports, 3);
	assert_int_equal(r->destinations[0].ports[0].lo, 80);
	assert_int_equal(r->destinations[0].ports[1].hi, 443);
	assert_int_equal(r->destinations[0].ports[2].lo, 8000);
	assert_int_equal(r->destinations[0].ports[2].hi, 8099);
	assert_int_equal(r->destinations[0].n_addresses, 2);
	check_cidr(&r->destinations[0].addresses[0], "198.18.0.1", 32);
	check_cidr(&r->destinations[0].addresses[1], "fd53:6c75:6963::1", 128);
	assert_int_equal(r->destinations[1].n_ports, 0); /* "*" */
	assert_null(r->destinations[1].ports);
	assert_int_equal(r->destinations[1].n_addresses, 0);
	r = &fs->rules[1];
	assert_int_equal(r->n_destinations, 1);
	assert_int_equal(r->destinations[0].n_ports, 0);

	fs = &cfg->schemas[2];
	assert_int_equal(fs->precedence, 1000);
	assert_int_equal(fs->level, 3);
	assert_int_equal(fs->distinguisher, SL_DIST_BY_DESTINATION);
	assert_int_equal(fs->prefix_len_v4, 0);
	assert_int_equal(fs->seats_per_conn, 1);
	assert_int_equal(fs->rules[0].destinations[0].ports[0].lo, 9000);
	assert_int_equal(fs->rules[0].destinations[0].ports[0].hi, 9010);

	/* connection labels */
	assert_int_equal(cfg->n_label_objects, 1);
	lo = &cfg->label_objects[0];
	assert_ptr_equal(sl_config_find_label_object(cfg, "tiers"), lo);
	assert_string_equal(lo->file, path);
	assert_int_equal(lo->line, 105);
	assert_int_equal(lo->n_rules, 2);
	check_cidr(&lo->rules[0].sources[0], "198.18.7.0", 24);
	assert_int_equal(lo->rules[0].n_destinations, 0);
	assert_int_equal(lo->rules[0].n_ports, 0);
	assert_string_equal(sl_labels_get(&lo->rules[0].labels, "user_tier"), "gold");
	assert_int_equal(lo->rules[1].n_sources, 1);
	check_cidr(&lo->rules[1].destinations[0], "198.18.0.1", 32);
	assert_int_equal(lo->rules[1].n_ports, 2);
	assert_int_equal(lo->rules[1].ports[1].lo, 9000);
	assert_int_equal(lo->rules[1].labels.count, 3);
	assert_string_equal(sl_labels_get(&lo->rules[1].labels, "env"), "prod");
	assert_string_equal(sl_labels_get(&lo->rules[1].labels, "example.com/team"), "net");
	assert_int_equal(lo->rules[1].line, 113);

	/* policy */
	assert_int_equal(cfg->n_policies, 1);
	p = &cfg->policies[0];
	assert_ptr_equal(sl_config_find_policy(cfg, "web-latency"), p);
	assert_null(sl_config_find_policy(cfg, "nope"));
	assert_string_equal(p->name, "web-latency");
	assert_true(p->slope == -2);
	assert_true(p->min_gradient == 0.2);
	assert_true(p->max_gradient == 0.9);
	assert_true(p->load_multiplier_linear_increment == 0.05);
	assert_true(p->max_load_multiplier == 3);
	assert_true(p->min_load_multiplier == 0.1);
	assert_int_equal(p->n_selectors, 2);
	assert_string_equal(p->selectors[0].control_point, "ingress");
	assert_string_equal(p->selectors[0].service, "any");
	assert_string_equal(p->selectors[0].agent_group, "default");
	assert_int_equal(p->selectors[0].matcher.n_reqs, 1);
	assert_string_equal(p->selectors[0].matcher.reqs[0].key, "dst.port");
	assert_string_equal(p->selectors[0].matcher.reqs[0].values[0], "8080"); /* an integer's text */
	assert_string_equal(p->selectors[1].service, "any");
	assert_int_equal(p->selectors[1].matcher.reqs[0].op, SL_LM_EXISTS);
	assert_int_equal(p->selectors[1].matcher.reqs[0].n_values, 0);
	assert_true(p->workload_latency_based_tokens);
	assert_int_equal(p->n_workloads, 2);
	w = &p->workloads[0];
	assert_string_equal(w->name, "gold");
	assert_true(w->params.priority == 200);
	assert_true(w->params.tokens_set);
	assert_true(w->params.tokens == 5);
	assert_true(w->params.queue_timeout_set);
	assert_int_equal(w->params.queue_timeout_ns, 2 * SEC);
	w = &p->workloads[1];
	assert_string_equal(w->name, "safari");
	assert_true(w->params.priority == 0.5);
	assert_false(w->params.tokens_set); /* tokens 0 means unset */
	assert_false(w->params.queue_timeout_set);
	assert_true(w->params.queue_timeout_ns == SL_QUEUE_TIMEOUT_UNSET);
	/* unset: the controlled delay every queue has by default */
	assert_int_equal(w->params.queue_delay_target_ns, SL_DEFERRED_DELAY_TARGET_NS);
	assert_int_equal(w->params.queue_delay_interval_ns, SL_DEFERRED_DELAY_INTERVAL_NS);
	e = w->matcher.expr;
	assert_non_null(e);
	assert_int_equal(e->kind, SL_LE_ALL);
	assert_int_equal(e->n_children, 3);
	assert_int_equal(e->children[0].kind, SL_LE_EXISTS);
	assert_string_equal(e->children[0].label, "user_tier");
	assert_int_equal(e->children[1].kind, SL_LE_NOT);
	assert_int_equal(e->children[1].n_children, 1);
	assert_int_equal(e->children[1].children[0].kind, SL_LE_EQUALS);
	assert_string_equal(e->children[1].children[0].value, "test");
	assert_int_equal(e->children[2].kind, SL_LE_ANY);
	assert_int_equal(e->children[2].children[0].kind, SL_LE_MATCHES);
	assert_string_equal(e->children[2].children[0].regex, "^(?!.*Chrome).*Safari");
	assert_non_null(e->children[2].children[0].re);
	assert_string_equal(e->children[2].children[1].value, ""); /* value defaults to "" */
	assert_true(p->default_params.priority == 50);
	assert_true(p->default_params.queue_timeout_set);
	assert_int_equal(p->default_params.queue_timeout_ns, 0);
	assert_int_equal(p->signal, SL_SIGNAL_EXTERNAL);
	assert_string_equal(p->external_path, "/run/app/latency_ms");
	assert_int_equal(p->signal_window_ns, 20 * SEC);
	assert_true(p->tolerance == 1.5);
	assert_int_equal(p->baseline_window_ns, 3600 * SEC);
	assert_int_equal(p->baseline_period_ns, 60 * SEC);
	assert_int_equal(p->period_ns, 500 * MS);
	assert_string_equal(p->file, path);
	assert_int_equal(p->line, 118);

	sl_config_free(cfg);
	sl_diags_free(&d);
}

static void test_demo_config_loads(void **state)
{
	const char *path = getenv("SLUICE_DEMO_CONFIG");
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;
	const struct sl_level_cfg *l;
	uint64_t sum = 0;

	(void)state;
	if (!path || !*path)
		path = "configs/demo.yaml";
	assert_int_equal(sl_config_load_file(path, &cfg, &d), 0);
	if (d.count)
		sl_diags_print(&d, stderr);
	assert_int_equal(d.count, 0); /* no error, no warning */
	check_mandatory(cfg);
	assert_int_equal(cfg->n_levels, 8);
	assert_true(cfg->n_schemas >= 8);
	assert_int_equal(cfg->n_label_objects, 1);
	assert_int_equal(cfg->n_policies, 1);
	/* the lab client's level (global-default) gets ceil(SCL x 20 / sum) = 8 seats */
	for (size_t i = 0; i < cfg->n_levels; i++)
		sum += (uint64_t)cfg->levels[i].shares;
	l = sl_config_find_level(cfg, "global-default");
	assert_non_null(l);
	assert_int_equal(((uint64_t)cfg->server.server_concurrency_limit * (uint64_t)l->shares + sum - 1) / sum, 8);
	/* Kubernetes' suggested shares and queuing (Kubernetes bootstrap/default.go) */
	l = sl_config_find_level(cfg, "leader-election");
	assert_int_equal(l->shares, 10);
	assert_int_equal(l->queues, 16);
	assert_int_equal(l->hand_size, 4);
	l = sl_config_find_level(cfg, "workload-low");
	assert_int_equal(l->shares, 100);
	assert_int_equal(l->lendable_percent, 90);
	assert_int_equal(l->queues, 128);
	sl_config_free(cfg);
	sl_diags_free(&d);
}

/* The installed configuration enforces nothing until told to: shadow on,
 * no policy, Kubernetes' suggested levels and budget. */
static void test_default_config_is_shadow(void **state)
{
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;
	const struct sl_level_cfg *l;

	(void)state;
	assert_int_equal(sl_config_load_file("configs/default.yaml", &cfg, &d), 0);
	if (d.count)
		sl_diags_print(&d, stderr);
	assert_int_equal(d.count, 0);
	check_mandatory(cfg);
	assert_true(cfg->server.shadow);
	assert_int_equal(cfg->n_policies, 0);
	assert_int_equal(cfg->n_label_objects, 0);
	assert_int_equal(cfg->server.server_concurrency_limit, 600);
	assert_int_equal(cfg->n_levels, 8);
	l = sl_config_find_level(cfg, "global-default");
	assert_non_null(l);
	assert_int_equal(l->shares, 20);
	assert_int_equal(l->lendable_percent, 50);
	assert_int_equal(l->borrowing_limit_percent, -1); /* as Kubernetes: unset */
	sl_config_free(cfg);
	sl_diags_free(&d);
}

static void test_warnings_do_not_fail(void **state)
{
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;
	char path[512], where[600];

	(void)state;
	fixture(path, sizeof(path), "warnings.yaml");
	assert_int_equal(sl_config_load_file(path, &cfg, &d), 0);
	assert_non_null(cfg);
	assert_int_equal(sl_diags_error_count(&d), 0);
	assert_int_equal(sl_diags_warning_count(&d), 6);
	check_diag(&d.items[0], SL_SEV_WARNING, 7, 21, SRV_OBJ, "spec.heartbeatTimeout",
		   "heartbeatTimeout 1.5s is shorter than two ticks (tick 1s)");
	check_diag(&d.items[1], SL_SEV_WARNING, 17, 33, PL_OBJ, QPATH "queueWaitLimit",
		   "2m is at or beyond 3s, a common client connect timeout");
	check_diag(&d.items[2], SL_SEV_WARNING, 17, 59, PL_OBJ, QPATH "handSize",
		   "with 16 queues and handSize 6, 4 elephant flows crush a mouse flow with probability 0.342");
	check_diag(&d.items[3], SL_SEV_WARNING, 24, 31, FS_OBJ, "spec.distinguisherMethod.type",
		   "ByUser is read as BySource");
	snprintf(where, sizeof(where), "also listed at %s:27:29", path);
	check_diag(&d.items[4], SL_SEV_WARNING, 27, 33, FS_OBJ, RULE0 "destinations[0].ports[1]", where);
	check_diag(&d.items[5], SL_SEV_WARNING, 33, 38, "FlowSchema/api", "spec.priorityLevelConfiguration.name",
		   "PriorityLevelConfiguration 'apii' does not exist; this FlowSchema is dangling and is skipped");
	/* the dangling schema is gone, the other one kept */
	assert_int_equal(cfg->n_schemas, 3);
	assert_non_null(sl_config_find_schema(cfg, "web"));
	assert_null(sl_config_find_schema(cfg, "api"));
	assert_int_equal(sl_config_find_schema(cfg, "web")->rules[0].destinations[0].n_ports, 2);
	sl_config_free(cfg);
	sl_diags_free(&d);
}

static void test_warning_rules(void **state)
{
	(void)state;
	expect_one(SRV "  tick: 2s\n", SL_SEV_WARNING, 5, 9, SRV_OBJ, "spec.tick",
		   "heartbeatTimeout 3s is shorter than two ticks (tick 2s)");
	expect_one(SRV "  heartbeatTimeout: 0s\n", SL_SEV_WARNING, 5, 21, SRV_OBJ, "spec.heartbeatTimeout",
		   "0s turns the failsafe off: with the daemon dead");
	{
		/* ... and with failMode closed, that it has no effect either */
		struct sl_config *cfg = NULL;
		struct sl_diags d = SL_DIAGS_INIT;

		assert_int_equal(load(SRV "  failMode: closed\n  heartbeatTimeout: 0s\n", &cfg, &d), 0);
		assert_int_equal(d.count, 2);
		check_diag(&d.items[0], SL_SEV_WARNING, 5, 13, SRV_OBJ, "spec.failMode",
			   "failMode closed has no effect while heartbeatTimeout is 0s");
		check_diag(&d.items[1], SL_SEV_WARNING, 6, 21, SRV_OBJ, "spec.heartbeatTimeout",
			   "0s turns the failsafe off");
		sl_config_free(cfg);
		sl_diags_free(&d);
	}
	/* good counterparts: no warning */
	sl_config_free(load_ok(SRV "  tick: 1s\n  heartbeatTimeout: 2s\n"));
	sl_config_free(load_ok(SRV "  failMode: closed\n"));
	sl_config_free(load_ok(QUEUE "        queueWaitLimit: 2900ms\n"));
	/* the wait bounds: a limit clients outlast, a target within its
	 * interval, an interval the limit leaves room for */
	expect_one(QUEUE "        queueWaitLimit: 3s\n", SL_SEV_WARNING, 10, 25, PL_OBJ, QPATH "queueWaitLimit",
		   "3s is at or beyond 3s, a common client connect timeout");
	expect_one(QUEUE "        queueDelayTarget: 2s\n", SL_SEV_ERROR, 10, 27, PL_OBJ, QPATH "queueDelayTarget",
		   "the delay target 2s must not exceed queueDelayInterval (1s)");
	expect_one(QUEUE "        queueDelayInterval: 2s\n", SL_SEV_WARNING, 10, 29, PL_OBJ, QPATH "queueDelayInterval",
		   "queueDelayInterval 2s is not shorter than queueWaitLimit 2s");
	sl_config_free(load_ok(QUEUE "        queueDelayTarget: 50ms\n        queueDelayInterval: 500ms\n"));
}

/* ---- error reporting --------------------------------------------------------------- */

static void test_all_errors_reported(void **state)
{
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = (struct sl_config *)&cfg; /* must be reset */
	char path[512];

	(void)state;
	fixture(path, sizeof(path), "bad-three-errors.yaml");
	assert_int_equal(sl_config_load_file(path, &cfg, &d), -EINVAL);
	assert_null(cfg);
	assert_int_equal(sl_diags_error_count(&d), 3);
	assert_int_equal(d.count, 3);
	/* sorted by position */
	check_diag(&d.items[0], SL_SEV_ERROR, 6, 27, SRV_OBJ, "spec.serverConcurrencyLimit",
		   "expected an integer, got string 'many'");
	check_diag(&d.items[1], SL_SEV_ERROR, 7, 9, SRV_OBJ, "spec.tick",
		   "must be between 1ms and 10s, got 20s");
	check_diag(&d.items[2], SL_SEV_ERROR, 15, 23, FS_OBJ, "spec.seatsPerConnection",
		   "must be between 1 and 100, got 0");
	assert_string_equal(d.items[0].file, path);
	sl_diags_free(&d);
}

static void test_many_errors_in_one_object(void **state)
{
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;

	(void)state;
	assert_int_equal(load(QUEUE "        queues: 0\n        handSize: x\n        queueLengthLimit: -1\n"
			      "        queueWaitLimit: 5\n        bogus: 1\n  seatsPerConnection: 0\n  ports: [0]\n",
			      &cfg, &d), -EINVAL);
	assert_null(cfg);
	assert_int_equal(sl_diags_error_count(&d), 7);
	for (size_t i = 1; i < d.count; i++)
		assert_true(d.items[i - 1].line < d.items[i].line ||
			    (d.items[i - 1].line == d.items[i].line &&
			     d.items[i - 1].column <= d.items[i].column));
	sl_diags_free(&d);

	/* every kind at once: every error of every object */
	assert_int_equal(load(SUBJ("{kind: User}") "---\n" CL "  - labels: {src.ip: x}\n---\n"
			      AIMD "      gradient: {slope: 0}\n" AIMD_END "---\n" PL "  type: Limted\n",
			      &cfg, &d), -EINVAL);
	assert_int_equal(sl_diags_error_count(&d), 4);
	sl_diags_free(&d);
}

static void test_did_you_mean_fixture(void **state)
{
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;
	char path[512];

	(void)state;
	fixture(path, sizeof(path), "bad-unknown-field.yaml");
	assert_int_equal(sl_config_load_file(path, &cfg, &d), -EINVAL);
	assert_int_equal(d.count, 1);
	check_diag(&d.items[0], SL_SEV_ERROR, 12, 9, PL_OBJ, QPATH "handsize",
		   "unknown field 'handsize'; did you mean 'handSize'?");
	sl_diags_free(&d);
}

static void test_entropy_fixture_line(void **state)
{
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;
	char path[512], line[1024], expect[1024];

	(void)state;
	fixture(path, sizeof(path), "bad-entropy.yaml");
	assert_int_equal(sl_config_load_file(path, &cfg, &d), -EINVAL);
	assert_int_equal(d.count, 1);
	sl_diag_format(&d.items[0], line, sizeof(line));
	snprintf(expect, sizeof(expect),
		 "%s:14:11: error: PriorityLevelConfiguration/web: spec.limited.limitResponse.queuing.handSize: "
		 "9 needs 63 bits of entropy with 128 queues; at most 60 allowed", path);
	assert_string_equal(line, expect);
	sl_diags_free(&d);
}

static void test_syntax_error_fixture(void **state)
{
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;
	char path[512];

	(void)state;
	fixture(path, sizeof(path), "bad-syntax.yaml");
	assert_int_equal(sl_config_load_file(path, &cfg, &d), -EINVAL);
	assert_null(cfg);
	assert_int_equal(d.count, 1);
	check_diag(&d.items[0], SL_SEV_ERROR, 7, 12, "", "",
		   "YAML syntax error: mapping values are not allowed in this context");
	sl_diags_free(&d);
}

static void test_syntax_error_keeps_earlier_documents(void **state)
{
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;

	(void)state;
	/* the first document's own error is reported too */
	assert_int_equal(load(SRV "  tick: 0s\n---\n" SRV "  tick: [\n", &cfg, &d), -EINVAL);
	assert_int_equal(d.count, 2);
	check_diag(&d.items[0], SL_SEV_ERROR, 5, 9, SRV_OBJ, "spec.tick", "must be between 1ms and 10s");
	check_diag(&d.items[1], SL_SEV_ERROR, 12, 1, "", "", "YAML syntax error");
	sl_diags_free(&d);
}

static void test_encoding_error_fixture(void **state)
{
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;
	char path[512];

	(void)state;
	fixture(path, sizeof(path), "bad-encoding.yaml");
	assert_int_equal(sl_config_load_file(path, &cfg, &d), -EINVAL);
	assert_int_equal(d.count, 1);
	check_diag(&d.items[0], SL_SEV_ERROR, 4, 12, "", "", "invalid YAML input: ");
	sl_diags_free(&d);
}

static void test_duplicate_names_fixture(void **state)
{
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;
	char path[512], where[600];

	(void)state;
	fixture(path, sizeof(path), "bad-duplicate-names.yaml");
	assert_int_equal(sl_config_load_file(path, &cfg, &d), -EINVAL);
	assert_int_equal(d.count, 1);
	snprintf(where, sizeof(where), "duplicate PriorityLevelConfiguration name 'web'; also defined at %s:4:9",
		 path);
	check_diag(&d.items[0], SL_SEV_ERROR, 20, 9, PL_OBJ, "metadata.name", where);
	sl_diags_free(&d);

	/* names are unique per kind: a FlowSchema and a level may share one */
	fixture(path, sizeof(path), "bad-duplicate-kinds.yaml");
	assert_int_equal(sl_config_load_file(path, &cfg, &d), -EINVAL);
	assert_int_equal(d.count, 2);
	snprintf(where, sizeof(where), "duplicate FlowSchema name 'web'; also defined at %s:3:18", path);
	check_diag(&d.items[0], SL_SEV_ERROR, 15, 18, FS_OBJ, "metadata.name", where);
	snprintf(where, sizeof(where), "duplicate ConnectionLabels name 'web'; also defined at %s:22:18", path);
	check_diag(&d.items[1], SL_SEV_ERROR, 27, 18, "ConnectionLabels/web", "metadata.name", where);
	sl_diags_free(&d);
}

static void test_too_many_levels(void **state)
{
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(f);
	/* 62 levels fit next to the two mandatory ones; the 63rd does not */
	for (int i = 0; i <= SL_MAX_LEVELS - 2; i++) /* 63 levels, 5 lines each */
		fprintf(f, "%s" API "kind: PriorityLevelConfiguration\nmetadata: {name: l%d}\nspec: {type: Exempt}\n",
			i ? "---\n" : "", i);
	fclose(f);
	assert_int_equal(sl_config_load_buffer("t.yaml", buf, len, &cfg, &d), -EINVAL);
	assert_int_equal(d.count, 1);
	check_diag(&d.items[0], SL_SEV_ERROR, 62 * 5 + 2, 7, "PriorityLevelConfiguration/l62", "kind",
		   "too many PriorityLevelConfiguration objects; at most 64 are supported (the mandatory exempt and catch-all included)");
	sl_diags_free(&d);
	free(buf);

	/* 64 in all is fine */
	f = open_memstream(&buf, &len);
	for (int i = 0; i < SL_MAX_LEVELS - 2; i++)
		fprintf(f, "---\n" API "kind: PriorityLevelConfiguration\nmetadata: {name: l%d}\nspec: {type: Exempt}\n", i);
	fclose(f);
	assert_int_equal(sl_config_load_buffer("t.yaml", buf, len, &cfg, NULL), 0);
	assert_int_equal(cfg->n_levels, SL_MAX_LEVELS);
	assert_string_equal(cfg->levels[63].name, "l61");
	sl_config_free(cfg);
	free(buf);
}

static void test_nesting_limit(void **state)
{
	char buf[512];
	size_t o = 0;

	(void)state;
	o += (size_t)snprintf(buf, sizeof(buf), SRV "  x: ");
	for (int i = 0; i < SL_YAML_MAX_DEPTH; i++)
		buf[o++] = '[';
	for (int i = 0; i < SL_YAML_MAX_DEPTH; i++)
		buf[o++] = ']';
	buf[o++] = '\n';
	buf[o] = '\0';
	/* spec is level 2, so the 63rd '[' is level 65 */
	expect_one(buf, SL_SEV_ERROR, 5, 6 + SL_YAML_MAX_DEPTH - 2, "", "",
		   "YAML nesting is deeper than 64 levels");
}

/* ---- output formats ------------------------------------------------------------------ */

static void test_print_format(void **state)
{
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;
	char *out;

	(void)state;
	assert_int_equal(load(SRV "  serverConcurrencyLimit: 0\n", &cfg, &d), -EINVAL);
	sl_diags_add(&d, SL_SEV_WARNING, "x.yaml", 0, 0, NULL, NULL, "no position");
	sl_diags_add(&d, SL_SEV_ERROR, "x.yaml", 3, 0, "Server/a", NULL, "line only");
	sl_diags_add(&d, SL_SEV_ERROR, NULL, 0, 0, NULL, "spec", "no file");
	out = read_stream(sl_diags_print, &d);
	assert_string_equal(out,
		"t.yaml:5:27: error: Server/main: spec.serverConcurrencyLimit: must be at least 1, got 0\n"
		"x.yaml: warning: no position\n"
		"x.yaml:3: error: Server/a: line only\n"
		"error: spec: no file\n");
	free(out);
	assert_int_equal(sl_diags_error_count(&d), 3);
	assert_int_equal(sl_diags_warning_count(&d), 1);
	sl_diags_free(&d);
	assert_int_equal(d.count, 0);
	assert_int_equal(sl_diags_error_count(&d), 0);
}

static void test_diag_format_truncates(void **state)
{
	struct sl_diags d = SL_DIAGS_INIT;
	char small[16];
	int n;

	(void)state;
	sl_diags_add(&d, SL_SEV_ERROR, "f.yaml", 1, 2, "K/n", "p", "message");
	n = sl_diag_format(&d.items[0], small, sizeof(small));
	assert_int_equal(n, (int)strlen("f.yaml:1:2: error: K/n: p: message"));
	assert_string_equal(small, "f.yaml:1:2: err");
	sl_diags_free(&d);
}

static void test_json_escaping(void **state)
{
	struct sl_diags d = SL_DIAGS_INIT;
	char *out;

	(void)state;
	out = read_stream(sl_diags_json, &d);
	assert_string_equal(out, "[]\n");
	free(out);

	sl_diags_add(&d, SL_SEV_ERROR, "dir/x.yaml", 14, 7, "PriorityLevelConfiguration/web",
		     "spec.ports[0]", "bad \"value\"\nnext\tline \\ end\x01");
	sl_diags_add(&d, SL_SEV_WARNING, "odd\xff.yaml", 0, 0, NULL, NULL,
		     "caf\xc3\xa9 \xe2\x82\xac ok");
	out = read_stream(sl_diags_json, &d);
	assert_string_equal(out,
		"[\n"
		"  {\"file\": \"dir/x.yaml\", \"line\": 14, \"column\": 7, "
		"\"object\": \"PriorityLevelConfiguration/web\", \"path\": \"spec.ports[0]\", "
		"\"severity\": \"error\", "
		"\"message\": \"bad \\\"value\\\"\\nnext\\tline \\\\ end\\u0001\"},\n"
		"  {\"file\": \"odd\\ufffd.yaml\", \"line\": null, \"column\": null, "
		"\"object\": \"\", \"path\": \"\", \"severity\": \"warning\", "
		"\"message\": \"caf\xc3\xa9 \xe2\x82\xac ok\"}\n"
		"]\n");
	free(out);
	sl_diags_free(&d);
}

static void test_json_of_a_load(void **state)
{
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;
	char *out;

	(void)state;
	/* a user value with a quote and a newline ends up escaped twice:
	 * once for the message (\n), once for JSON */
	assert_int_equal(load(SRV "  failMode: \"op\\\"en\\n\"\n", &cfg, &d), -EINVAL);
	out = read_stream(sl_diags_json, &d);
	assert_string_equal(out,
		"[\n"
		"  {\"file\": \"t.yaml\", \"line\": 5, \"column\": 13, \"object\": \"Server/main\", "
		"\"path\": \"spec.failMode\", \"severity\": \"error\", "
		"\"message\": \"invalid value 'op\\\"en\\\\n'; did you mean 'open'? (allowed: open, closed, static)\"}\n"
		"]\n");
	free(out);
	sl_diags_free(&d);
}

/* ---- API behaviour ------------------------------------------------------------------- */

static void test_load_file_matches_load_buffer(void **state)
{
	struct sl_config *a = NULL, *b = NULL;
	char path[512], *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	fixture(path, sizeof(path), "good-full.yaml");
	f = fopen(path, "rb");
	assert_non_null(f);
	buf = malloc(1 << 16);
	len = fread(buf, 1, 1 << 16, f);
	fclose(f);
	assert_int_equal(sl_config_load_file(path, &a, NULL), 0);
	assert_int_equal(sl_config_load_buffer(path, buf, len, &b, NULL), 0);
	assert_string_equal(a->source_file, b->source_file);
	assert_int_equal(a->n_levels, b->n_levels);
	for (size_t i = 0; i < a->n_levels; i++) {
		assert_string_equal(a->levels[i].name, b->levels[i].name);
		assert_int_equal(a->levels[i].shares, b->levels[i].shares);
		assert_int_equal(a->levels[i].line, b->levels[i].line);
	}
	assert_int_equal(a->n_schemas, b->n_schemas);
	for (size_t i = 0; i < a->n_schemas; i++) {
		assert_string_equal(a->schemas[i].name, b->schemas[i].name);
		assert_int_equal(a->schemas[i].n_rules, b->schemas[i].n_rules);
	}
	assert_int_equal(a->n_label_objects, b->n_label_objects);
	assert_int_equal(a->n_policies, b->n_policies);
	assert_int_equal(a->server.tick_ns, b->server.tick_ns);
	assert_string_equal(a->server.pin_dir, b->server.pin_dir);
	sl_config_free(a);
	sl_config_free(b);

	/* the buffer need not be NUL-terminated: only len bytes are read */
	buf[len] = 'x';
	assert_int_equal(sl_config_load_buffer(path, buf, len, &b, NULL), 0);
	sl_config_free(b);
	free(buf);
}

static void test_unreadable_files(void **state)
{
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = (struct sl_config *)&cfg;
	char path[512];

	(void)state;
	fixture(path, sizeof(path), "does-not-exist.yaml");
	assert_int_equal(sl_config_load_file(path, &cfg, &d), -ENOENT);
	assert_null(cfg);
	assert_int_equal(d.count, 1);
	check_diag(&d.items[0], SL_SEV_ERROR, 0, 0, "", "",
		   "cannot open configuration file: No such file or directory");
	assert_string_equal(d.items[0].file, path);
	sl_diags_free(&d);

	assert_int_equal(sl_config_load_file(data_dir(), &cfg, &d), -EISDIR);
	assert_null(cfg);
	check_diag(&d.items[0], SL_SEV_ERROR, 0, 0, "", "", "Is a directory");
	sl_diags_free(&d);

	assert_int_equal(sl_config_load_file(path, &cfg, NULL), -ENOENT);
}

/* Load an unreadable file; returns 0 when the loader said EACCES with a
 * "Permission denied" diagnostic. */
static int load_unreadable(const char *path)
{
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;
	int rc = 0;

	if (sl_config_load_file(path, &cfg, &d) != -EACCES || cfg || d.count != 1 ||
	    !strstr(d.items[0].message, "Permission denied"))
		rc = 1;
	sl_diags_free(&d);
	return rc;
}

static void test_unreadable_permission(void **state)
{
	char path[] = "/tmp/sluice-test-XXXXXX";
	int fd, status;
	pid_t pid;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(chmod(path, 0), 0);
	if (geteuid() != 0) {
		assert_int_equal(load_unreadable(path), 0);
		unlink(path);
		return;
	}
	/* Root reads anything: check it as an unprivileged user instead. */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(2);
		_exit(load_unreadable(path));
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	unlink(path);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_atomic_and_validate_only(void **state)
{
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = (struct sl_config *)&d;

	(void)state;
	/* valid parts do not leak out of an invalid file */
	assert_int_equal(load(SRV "  tick: 1s\n---\n" PL "  type: Limited\n  seatsPerConnection: 0\n",
			      &cfg, &d), -EINVAL);
	assert_null(cfg);
	sl_diags_free(&d);
	/* out may be NULL: validate only */
	assert_int_equal(load(PL "  type: Exempt\n", NULL, &d), 0);
	assert_int_equal(load(PL "  type: Bad\n", NULL, &d), -EINVAL);
	assert_int_equal(sl_diags_error_count(&d), 1);
	sl_diags_free(&d);
}

static void test_diags_accumulate(void **state)
{
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;

	(void)state;
	assert_int_equal(load(SRV "  tick: 0s\n", &cfg, &d), -EINVAL);
	/* a second, valid load with the same collector still succeeds */
	assert_int_equal(load(SRV "  tick: 1s\n", &cfg, &d), 0);
	assert_non_null(cfg);
	assert_int_equal(d.count, 1);
	sl_config_free(cfg);
	sl_diags_free(&d);
}

static void test_find_level(void **state)
{
	struct sl_config *cfg = load_ok(PLN("web") "  type: Limited\n  limited: {limitResponse: {type: Reject}}\n---\n"
					PLN("api") "  type: Exempt\n");

	(void)state;
	assert_ptr_equal(sl_config_find_level(cfg, "api"), &cfg->levels[3]);
	assert_ptr_equal(sl_config_find_level(cfg, "web"), &cfg->levels[2]);
	assert_ptr_equal(sl_config_find_level(cfg, "exempt"), &cfg->levels[0]);
	assert_ptr_equal(sl_config_find_level(cfg, "catch-all"), &cfg->levels[1]);
	assert_null(sl_config_find_level(cfg, "nope"));
	assert_null(sl_config_find_level(cfg, NULL));
	assert_null(sl_config_find_level(NULL, "web"));
	assert_null(sl_config_find_schema(NULL, "web"));
	assert_null(sl_config_find_schema(cfg, NULL));
	assert_null(sl_config_find_label_object(cfg, "web"));
	assert_null(sl_config_find_policy(cfg, NULL));
	assert_int_equal(cfg->levels[3].line, 8);
	assert_string_equal(cfg->levels[3].file, "t.yaml");
	sl_config_free(cfg);
	sl_config_free(NULL);
}

/* ---- durations ------------------------------------------------------------------------ */

static void test_yaml_scalar_resolution(void **state)
{
	static const char doc[] =
		"a: ~\nb: null\nc:\nd: true\ne: False\nf: 42\ng: -7\nh: 0x1F\ni: 0o17\n"
		"j: 1.5\nk: 1e3\nl: .inf\nm: '5'\nn: \"true\"\no: hello\np: [1]\nq: {x: 1}\n"
		"r: -9223372036854775808\ns: 9223372036854775808\nt: |\n  5\n";
	static const struct { const char *key; enum sl_ytype t; } want[] = {
		{ "a", SL_Y_NULL }, { "b", SL_Y_NULL }, { "c", SL_Y_NULL }, { "d", SL_Y_BOOL },
		{ "e", SL_Y_BOOL }, { "f", SL_Y_INT }, { "g", SL_Y_INT }, { "h", SL_Y_INT },
		{ "i", SL_Y_INT }, { "j", SL_Y_FLOAT }, { "k", SL_Y_FLOAT }, { "l", SL_Y_FLOAT },
		{ "m", SL_Y_STR }, { "n", SL_Y_STR }, { "o", SL_Y_STR }, { "p", SL_Y_SEQ },
		{ "q", SL_Y_MAP }, { "r", SL_Y_INT }, { "s", SL_Y_INT }, { "t", SL_Y_STR },
	};
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_ystream ys;
	const struct sl_ynode *root;
	int64_t v;
	bool b;
	char desc[128];

	(void)state;
	assert_int_equal(sl_ystream_load(&ys, "y", doc, strlen(doc), &d), 0);
	assert_int_equal(ys.n_docs, 1);
	root = ys.docs[0].root;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct sl_ynode *n = sl_ymap_get(root, want[i].key);

		assert_non_null(n);
		if (n->type != want[i].t)
			fprintf(stderr, "key %s: type %s\n", want[i].key, sl_ytype_name(n->type));
		assert_int_equal(n->type, want[i].t);
	}
	assert_int_equal(sl_ynode_int(sl_ymap_get(root, "g"), &v), 0);
	assert_int_equal(v, -7);
	assert_int_equal(sl_ynode_int(sl_ymap_get(root, "h"), &v), 0);
	assert_int_equal(v, 31);
	assert_int_equal(sl_ynode_int(sl_ymap_get(root, "i"), &v), 0);
	assert_int_equal(v, 15);
	assert_int_equal(sl_ynode_int(sl_ymap_get(root, "r"), &v), 0);
	assert_true(v == INT64_MIN);
	assert_int_equal(sl_ynode_int(sl_ymap_get(root, "s"), &v), -ERANGE);
	assert_int_equal(sl_ynode_int(sl_ymap_get(root, "o"), &v), -EINVAL);
	assert_int_equal(sl_ynode_bool(sl_ymap_get(root, "e"), &b), 0);
	assert_false(b);
	assert_string_equal(sl_ynode_str(sl_ymap_get(root, "o")), "hello");
	assert_null(sl_ynode_str(sl_ymap_get(root, "f")));
	assert_null(sl_ymap_get(root, "zz"));
	assert_non_null(sl_ymap_get_key(root, "q"));
	assert_int_equal(sl_ymap_get_key(root, "q")->line, 17);
	assert_int_equal(sl_ymap_get(root, "q")->column, 4);
	sl_ynode_describe(sl_ymap_get(root, "m"), desc, sizeof(desc));
	assert_string_equal(desc, "string '5'");
	sl_ynode_describe(sl_ymap_get(root, "q"), desc, sizeof(desc));
	assert_string_equal(desc, "a mapping");
	sl_ynode_describe(sl_ymap_get(root, "a"), desc, sizeof(desc));
	assert_string_equal(desc, "null");
	sl_ystream_free(&ys);
	assert_int_equal(d.count, 0);
}

static void test_yaml_documents_and_quote(void **state)
{
	static const char docs[] = "---\n---\na: 1\n---\n# c\n---\n- x\n";
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_ystream ys;
	char q[SL_YQUOTE_MAX];
	char longs[200];

	(void)state;
	assert_int_equal(sl_ystream_load(&ys, "y", docs, strlen(docs), &d), 0);
	assert_int_equal(ys.n_docs, 2);
	assert_int_equal(ys.docs[0].index, 2);
	assert_int_equal(ys.docs[1].index, 4);
	assert_int_equal(ys.docs[1].root->type, SL_Y_SEQ);
	assert_int_equal(ys.docs[1].root->n_items, 1);
	sl_ystream_free(&ys);

	assert_string_equal(sl_yquote("a'b\n\x01\\", 6, q, sizeof(q)), "a\\'b\\n\\x01\\\\");
	memset(longs, 'x', sizeof(longs));
	sl_yquote(longs, sizeof(longs), q, sizeof(q));
	assert_int_equal(strlen(q), 63);
	assert_string_equal(q + 60, "...");
	sl_yquote("abc", 3, q, 3);
	assert_string_equal(q, "ab");
}

/* ---- main ----------------------------------------------------------------------------------- */

int main(void)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(test_empty_buffer_defaults),
		cmocka_unit_test(test_null_buffer),
		cmocka_unit_test(test_utf16_refused),
		cmocka_unit_test(test_file_mode_checked),
		cmocka_unit_test(test_empty_and_comment_files),
		cmocka_unit_test(test_empty_documents_skipped),
		cmocka_unit_test(test_any_subset_is_valid),
		cmocka_unit_test(test_good_full_fixture),
		cmocka_unit_test(test_demo_config_loads),
		cmocka_unit_test(test_default_config_is_shadow),
		cmocka_unit_test(test_warnings_do_not_fail),
		cmocka_unit_test(test_warning_rules),
		cmocka_unit_test(test_all_errors_reported),
		cmocka_unit_test(test_many_errors_in_one_object),
		cmocka_unit_test(test_did_you_mean_fixture),
		cmocka_unit_test(test_entropy_fixture_line),
		cmocka_unit_test(test_syntax_error_fixture),
		cmocka_unit_test(test_syntax_error_keeps_earlier_documents),
		cmocka_unit_test(test_encoding_error_fixture),
		cmocka_unit_test(test_duplicate_names_fixture),
		cmocka_unit_test(test_too_many_levels),
		cmocka_unit_test(test_nesting_limit),
		cmocka_unit_test(test_print_format),
		cmocka_unit_test(test_diag_format_truncates),
		cmocka_unit_test(test_json_escaping),
		cmocka_unit_test(test_json_of_a_load),
		cmocka_unit_test(test_load_file_matches_load_buffer),
		cmocka_unit_test(test_unreadable_files),
		cmocka_unit_test(test_unreadable_permission),
		cmocka_unit_test(test_atomic_and_validate_only),
		cmocka_unit_test(test_diags_accumulate),
		cmocka_unit_test(test_find_level),
		cmocka_unit_test(test_yaml_scalar_resolution),
		cmocka_unit_test(test_yaml_documents_and_quote),
	};

	return run_config_suite("config_document", fixed, N_OF(fixed), bad_cases, N_OF(bad_cases));
}
