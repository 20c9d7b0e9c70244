// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Configuration loader tests: kind FlowSchema (rules, subjects, CIDRs,
 * label selectors, destinations) and the mandatory schemas.
 *
 * Every rule has a good and a bad example; the bad ones are rows of
 * bad_cases[] (one test each).  Run from the repository root, or point
 * SLUICE_TEST_DATA at tests/unit/configs.
 */
#include "config_helpers.h"

static const struct bad_case bad_cases[] = {
	/* kind: FlowSchema */
	{ "bad_fs_missing_plc", FSN("web") RULES_ANY, 5, 3, FS_OBJ, "spec.priorityLevelConfiguration",
	  "missing required field 'priorityLevelConfiguration'" },
	{ "bad_fs_missing_spec", API "kind: FlowSchema\nmetadata: {name: web}\n", 1, 1, FS_OBJ, "spec",
	  "missing required field 'spec'" },
	{ "bad_fs_plc_name_missing", FSN("web") "  priorityLevelConfiguration: {}\n" RULES_ANY, 5, 31, FS_OBJ,
	  "spec.priorityLevelConfiguration.name", "missing required field 'name'" },
	{ "bad_fs_plc_name_type", FSN("web") "  priorityLevelConfiguration: {name: 5}\n" RULES_ANY, 5, 38, FS_OBJ,
	  "spec.priorityLevelConfiguration.name", "expected a string, got integer 5" },
	{ "bad_fs_plc_unknown", FSN("web") "  priorityLevelConfiguration: {name: catch-all, uid: y}\n" RULES_ANY, 5, 49, FS_OBJ,
	  "spec.priorityLevelConfiguration.uid", "unknown field 'uid' (known fields: name)" },
	{ "bad_fs_name", FSN("Web_Tier") "  priorityLevelConfiguration: {name: catch-all}\n" RULES_ANY, 3, 18,
	  "FlowSchema/Web_Tier", "metadata.name", "did you mean 'web-tier'?" },
	{ "bad_fs_precedence_one", FSP "  matchingPrecedence: 1\n" RULES_ANY, 6, 23, FS_OBJ,
	  "spec.matchingPrecedence", "matchingPrecedence 1 is reserved for the mandatory exempt FlowSchema; use 2 or more" },
	{ "bad_fs_precedence_high", FSP "  matchingPrecedence: 10001\n" RULES_ANY, 6, 23, FS_OBJ,
	  "spec.matchingPrecedence", "must be between 1 and 10000, got 10001" },
	{ "bad_fs_precedence_zero", FSP "  matchingPrecedence: 0\n" RULES_ANY, 6, 23, FS_OBJ,
	  "spec.matchingPrecedence", "must be between 1 and 10000, got 0" },
	{ "bad_fs_seats_zero", FSP "  seatsPerConnection: 0\n" RULES_ANY, 6, 23, FS_OBJ,
	  "spec.seatsPerConnection", "must be between 1 and 100, got 0" },
	{ "bad_fs_seats_high", FSP "  seatsPerConnection: 101\n" RULES_ANY, 6, 23, FS_OBJ,
	  "spec.seatsPerConnection", "must be between 1 and 100, got 101" },
	{ "bad_fs_dist_type", FSP "  distinguisherMethod: {type: ByIP}\n" RULES_ANY, 6, 31, FS_OBJ,
	  "spec.distinguisherMethod.type", "invalid value 'ByIP' (allowed: BySource, ByDestination)" },
	{ "bad_fs_dist_type_case", FSP "  distinguisherMethod: {type: bysource}\n" RULES_ANY, 6, 31, FS_OBJ,
	  "spec.distinguisherMethod.type", "invalid value 'bysource'; did you mean 'BySource'?" },
	{ "bad_fs_dist_missing_type", FSP "  distinguisherMethod: {prefixLength: 24}\n" RULES_ANY, 6, 24, FS_OBJ,
	  "spec.distinguisherMethod.type", "missing required field 'type'" },
	{ "bad_fs_dist_prefix", FSP "  distinguisherMethod: {type: BySource, prefixLength: 33}\n" RULES_ANY, 6, 55,
	  FS_OBJ, "spec.distinguisherMethod.prefixLength", "must be between 0 and 32, got 33" },
	{ "bad_fs_dist_prefix6", FSP "  distinguisherMethod: {type: BySource, ipv6PrefixLength: 129}\n" RULES_ANY, 6, 59,
	  FS_OBJ, "spec.distinguisherMethod.ipv6PrefixLength", "must be between 0 and 128, got 129" },
	{ "bad_fs_dist_prefix_bydest", FSP "  distinguisherMethod: {type: ByDestination, prefixLength: 24}\n" RULES_ANY,
	  6, 46, FS_OBJ, "spec.distinguisherMethod.prefixLength",
	  "only allowed with type BySource (type is ByDestination)" },
	{ "bad_fs_rules_not_list", FSP "  rules: {}\n", 6, 10, FS_OBJ, "spec.rules",
	  "expected a list of rules ({subjects, destinations}), got a mapping" },

	/* rules */
	{ "bad_rule_no_subjects", FSR "  - destinations: [{}]\n", 7, 5, FS_OBJ, RULE0 "subjects",
	  "a rule needs at least one subject; without one it can never match" },
	{ "bad_rule_empty_subjects", FSR "  - subjects: []\n    destinations: [{}]\n", 7, 15, FS_OBJ,
	  RULE0 "subjects", "a rule needs at least one subject; without one it can never match" },
	{ "bad_rule_no_destinations", FSR "  - subjects: [{kind: Network, network: {cidrs: [0.0.0.0/0]}}]\n",
	  7, 5, FS_OBJ, RULE0 "destinations",
	  "a rule needs at least one destination ([{}] matches any); without one it can never match" },
	{ "bad_rule_empty_destinations", FSR "  - subjects: [{kind: Network, network: {cidrs: [0.0.0.0/0]}}]\n"
	  "    destinations: []\n", 8, 19, FS_OBJ, RULE0 "destinations",
	  "a rule needs at least one destination" },
	{ "bad_rule_resource_rules", FSR "  - subjects: [{kind: Network, network: {cidrs: [0.0.0.0/0]}}]\n"
	  "    resourceRules: [{verbs: [\"*\"], apiGroups: [\"*\"], resources: [\"*\"]}]\n", 8, 5, FS_OBJ,
	  RULE0 "resourceRules",
	  "resourceRules do not exist at layer 4 (there are no API verbs or resources); match what clients connect to with destinations: [{protocols, ports, addresses}]" },
	{ "bad_rule_nonresource_rules", FSR "  - subjects: [{kind: Network, network: {cidrs: [0.0.0.0/0]}}]\n"
	  "    nonResourceRules: [{verbs: [get], nonResourceURLs: [/healthz]}]\n", 8, 5, FS_OBJ,
	  RULE0 "nonResourceRules",
	  "nonResourceRules do not exist at layer 4 (there are no URLs); match what clients connect to with destinations: [{protocols, ports, addresses}]" },
	{ "bad_rule_unknown", FSR "  - subjects: [{kind: Network, network: {cidrs: [0.0.0.0/0]}}]\n"
	  "    destinations: [{}]\n    destination: [{}]\n", 9, 5, FS_OBJ, RULE0 "destination",
	  "unknown field 'destination'; did you mean 'destinations'?" },

	/* subjects */
	{ "bad_subject_user", SUBJ("{kind: User, user: {name: alice}}"), 7, 23, FS_OBJ, RULE0 "subjects[0].kind",
	  "User subjects do not exist at layer 4; match the client by network (kind: Network, network.cidrs) or by connection labels (kind: Labels)" },
	{ "bad_subject_group", SUBJ("{kind: Group, group: {name: \"system:authenticated\"}}"), 7, 23, FS_OBJ,
	  RULE0 "subjects[0].kind",
	  "Group subjects do not exist at layer 4; match the clients by network (kind: Network, network.cidrs) or by connection labels (kind: Labels)" },
	{ "bad_subject_service_account", SUBJ("{kind: ServiceAccount, serviceAccount: {name: x, namespace: y}}"),
	  7, 23, FS_OBJ, RULE0 "subjects[0].kind",
	  "ServiceAccount subjects do not exist at layer 4; match the workload's source addresses (kind: Network, network.cidrs) or its connection labels (kind: Labels)" },
	{ "bad_subject_user_field", SUBJ("{kind: Network, network: {cidrs: [10.0.0.0/8]}, user: {name: a}}"), 7, 64,
	  FS_OBJ, RULE0 "subjects[0].user", "User subjects do not exist at layer 4" },
	{ "bad_subject_kind", SUBJ("{kind: Netwrk}"), 7, 23, FS_OBJ, RULE0 "subjects[0].kind",
	  "invalid value 'Netwrk'; did you mean 'Network'? (allowed: Network, Labels)" },
	{ "bad_subject_missing_kind", SUBJ("{network: {cidrs: [10.0.0.0/8]}}"), 7, 16, FS_OBJ,
	  RULE0 "subjects[0].kind", "missing required field 'kind'" },
	{ "bad_subject_no_network", SUBJ("{kind: Network}"), 7, 16, FS_OBJ, RULE0 "subjects[0].network",
	  "a Network subject needs network.cidrs (0.0.0.0/0 and ::/0 match every client)" },
	{ "bad_subject_no_cidrs", SUBJ("{kind: Network, network: {}}"), 7, 41, FS_OBJ,
	  RULE0 "subjects[0].network.cidrs", "missing required field 'cidrs'" },
	{ "bad_subject_empty_cidrs", SUBJ("{kind: Network, network: {cidrs: []}}"), 7, 49, FS_OBJ,
	  RULE0 "subjects[0].network.cidrs", "must not be empty; a Network subject needs at least one CIDR" },
	{ "bad_subject_cidrs_not_list", SUBJ("{kind: Network, network: {cidrs: 10.0.0.0/8}}"), 7, 49, FS_OBJ,
	  RULE0 "subjects[0].network.cidrs", "expected a list of CIDRs (e.g. [10.0.0.0/8, \"fd00::/8\"]), got string '10.0.0.0/8'" },
	{ "bad_subject_labels_with_network", SUBJ("{kind: Labels, labels: {}, network: {cidrs: [10.0.0.0/8]}}"),
	  7, 43, FS_OBJ, RULE0 "subjects[0].network", "only allowed when kind is Network (kind is Labels)" },
	{ "bad_subject_network_with_labels", SUBJ("{kind: Network, network: {cidrs: [10.0.0.0/8]}, labels: {}}"),
	  7, 64, FS_OBJ, RULE0 "subjects[0].labels", "only allowed when kind is Labels (kind is Network)" },
	{ "bad_subject_no_labels", SUBJ("{kind: Labels}"), 7, 16, FS_OBJ, RULE0 "subjects[0].labels",
	  "a Labels subject needs labels: {matchLabels: {...}, matchExpressions: [...]}" },

	/* CIDRs */
	{ "bad_cidr_host_bits", SUBJ(NET("198.18.0.1/24")), 7, 50, FS_OBJ, RULE0 "subjects[0].network.cidrs[0]",
	  "CIDR '198.18.0.1/24' has host bits set; did you mean 198.18.0.0/24 (or 198.18.0.1/32 for the one host)?" },
	{ "bad_cidr_host_bits_v6", SUBJ(NET("\"fd53:6c75:6963::1/64\"")), 7, 50, FS_OBJ,
	  RULE0 "subjects[0].network.cidrs[0]",
	  "CIDR 'fd53:6c75:6963::1/64' has host bits set; did you mean fd53:6c75:6963::/64 (or fd53:6c75:6963::1/128 for the one host)?" },
	{ "bad_cidr_syntax", SUBJ(NET("10.0.0/8")), 7, 50, FS_OBJ, RULE0 "subjects[0].network.cidrs[0]",
	  "invalid CIDR '10.0.0/8': expected an IPv4 or IPv6 address with an optional prefix length, e.g. 10.0.0.0/8 or fd00::/8" },
	{ "bad_cidr_prefix_syntax", SUBJ(NET("10.0.0.0/+8")), 7, 50, FS_OBJ, RULE0 "subjects[0].network.cidrs[0]",
	  "invalid CIDR '10.0.0.0/+8'" },
	{ "bad_cidr_prefix_v4", SUBJ(NET("10.0.0.0/33")), 7, 50, FS_OBJ, RULE0 "subjects[0].network.cidrs[0]",
	  "prefix length 33 is out of range for IPv4 (0..32) in '10.0.0.0/33'" },
	{ "bad_cidr_prefix_v6", SUBJ(NET("\"::/129\"")), 7, 50, FS_OBJ, RULE0 "subjects[0].network.cidrs[0]",
	  "prefix length 129 is out of range for IPv6 (0..128) in '::/129'" },
	{ "bad_cidr_zone", SUBJ(NET("\"fe80::1%eth0\"")), 7, 50, FS_OBJ, RULE0 "subjects[0].network.cidrs[0]",
	  "invalid CIDR 'fe80::1%eth0'" },
	{ "bad_cidr_type", SUBJ(NET("5")), 7, 50, FS_OBJ, RULE0 "subjects[0].network.cidrs[0]",
	  "expected a CIDR such as 10.0.0.0/8 or fd00::/8, got integer 5" },

	/* Labels subjects: Kubernetes LabelSelector */
	{ "bad_selector_in_no_values", SUBJ("{kind: Labels, labels: {matchExpressions: [{key: proto, operator: In}]}}"),
	  7, 82, FS_OBJ, RULE0 "subjects[0].labels.matchExpressions[0].values",
	  "operator In needs a non-empty list of values" },
	{ "bad_selector_notin_empty", SUBJ("{kind: Labels, labels: {matchExpressions: [{key: proto, operator: NotIn, values: []}]}}"),
	  7, 97, FS_OBJ, RULE0 "subjects[0].labels.matchExpressions[0].values",
	  "operator NotIn needs a non-empty list of values" },
	{ "bad_selector_exists_values", SUBJ("{kind: Labels, labels: {matchExpressions: [{key: proto, operator: Exists, values: [x]}]}}"),
	  7, 98, FS_OBJ, RULE0 "subjects[0].labels.matchExpressions[0].values",
	  "operator Exists takes no values; remove them" },
	{ "bad_selector_op", SUBJ("{kind: Labels, labels: {matchExpressions: [{key: proto, operator: Equals}]}}"),
	  7, 82, FS_OBJ, RULE0 "subjects[0].labels.matchExpressions[0].operator",
	  "invalid value 'Equals' (allowed: In, NotIn, Exists, DoesNotExist)" },
	{ "bad_selector_op_aperture_spelling", SUBJ("{kind: Labels, labels: {matchExpressions: [{key: proto, operator: DoesNotExists}]}}"),
	  7, 82, FS_OBJ, RULE0 "subjects[0].labels.matchExpressions[0].operator",
	  "invalid value 'DoesNotExists'; did you mean 'DoesNotExist'?" },
	{ "bad_selector_missing_key", SUBJ("{kind: Labels, labels: {matchExpressions: [{operator: Exists}]}}"),
	  7, 59, FS_OBJ, RULE0 "subjects[0].labels.matchExpressions[0].key", "missing required field 'key'" },
	{ "bad_selector_key", SUBJ("{kind: Labels, labels: {matchLabels: {\"-bad\": x}}}"), 7, 54, FS_OBJ,
	  RULE0 "subjects[0].labels.matchLabels.-bad", "label key '-bad' must start and end with a letter or digit" },
	{ "bad_selector_value", SUBJ("{kind: Labels, labels: {matchLabels: {a: [x]}}}"), 7, 57, FS_OBJ,
	  RULE0 "subjects[0].labels.matchLabels.a", "expected a string, got a list" },
	{ "bad_selector_dup", SUBJ("{kind: Labels, labels: {matchLabels: {proto: x, proto: y}}}"), 7, 64, FS_OBJ,
	  RULE0 "subjects[0].labels.matchLabels.proto", "duplicate key 'proto'; also defined at t.yaml:7:54" },
	{ "bad_selector_unknown", SUBJ("{kind: Labels, labels: {matchLabel: {a: b}}}"), 7, 40, FS_OBJ,
	  RULE0 "subjects[0].labels.matchLabel", "unknown field 'matchLabel'; did you mean 'matchLabels'?" },
	{ "bad_selector_aperture_field", SUBJ("{kind: Labels, labels: {match_labels: {a: b}}}"), 7, 40, FS_OBJ,
	  RULE0 "subjects[0].labels.match_labels", "did you mean 'matchLabels'?" },

	/* destinations */
	{ "bad_dest_udp", DEST("{protocols: [UDP]}"), 8, 33, FS_OBJ, RULE0 "destinations[0].protocols[0]",
	  "sluice sees only TCP connections (it admits or refuses the SYN), so protocol 'UDP' can never match; use \"TCP\" or \"*\"" },
	{ "bad_dest_tcp_case", DEST("{protocols: [tcp]}"), 8, 33, FS_OBJ, RULE0 "destinations[0].protocols[0]",
	  "invalid protocol 'tcp'; did you mean 'TCP'?" },
	{ "bad_dest_protocol", DEST("{protocols: [HTTP]}"), 8, 33, FS_OBJ, RULE0 "destinations[0].protocols[0]",
	  "invalid protocol 'HTTP' (allowed: TCP, *)" },
	{ "bad_dest_protocols_empty", DEST("{protocols: []}"), 8, 32, FS_OBJ, RULE0 "destinations[0].protocols",
	  "must not be empty; use [\"*\"] or leave the field out" },
	{ "bad_dest_protocols_star_mixed", DEST("{protocols: [TCP, \"*\"]}"), 8, 38, FS_OBJ,
	  RULE0 "destinations[0].protocols[1]", "'*' matches every protocol and must be the only entry" },
	{ "bad_dest_port_zero", DEST("{ports: [80, 0]}"), 8, 33, FS_OBJ, RULE0 "destinations[0].ports[1]",
	  "port 0 is out of range; ports are 1..65535" },
	{ "bad_dest_port_high", DEST("{ports: [65536]}"), 8, 29, FS_OBJ, RULE0 "destinations[0].ports[0]",
	  "port 65536 is out of range; ports are 1..65535" },
	{ "bad_dest_port_range_high", DEST("{ports: [\"65000-70000\"]}"), 8, 29, FS_OBJ, RULE0 "destinations[0].ports[0]",
	  "port range '65000-70000' is out of range; ports are 1..65535" },
	{ "bad_dest_port_reversed", DEST("{ports: [9100-9000]}"), 8, 29, FS_OBJ, RULE0 "destinations[0].ports[0]",
	  "port range '9100-9000' is reversed; write \"9000-9100\"" },
	{ "bad_dest_port_name", DEST("{ports: [http]}"), 8, 29, FS_OBJ, RULE0 "destinations[0].ports[0]",
	  "expected a port (1..65535), a port range like \"9000-9100\" or \"*\", got string 'http'" },
	{ "bad_dest_port_float", DEST("{ports: [80.5]}"), 8, 29, FS_OBJ, RULE0 "destinations[0].ports[0]",
	  "got float 80.5" },
	{ "bad_dest_port_star_mixed", DEST("{ports: [\"*\", 80]}"), 8, 29, FS_OBJ, RULE0 "destinations[0].ports[0]",
	  "'*' matches every port and must be the only entry" },
	{ "bad_dest_ports_empty", DEST("{ports: []}"), 8, 28, FS_OBJ, RULE0 "destinations[0].ports",
	  "must not be empty; use [\"*\"] for any port, or leave the field out" },
	{ "bad_dest_ports_not_list", DEST("{ports: 80}"), 8, 28, FS_OBJ, RULE0 "destinations[0].ports",
	  "expected a list of ports, port ranges or \"*\" (e.g. [80, \"9000-9100\"]), got integer 80" },
	{ "bad_dest_addresses_empty", DEST("{addresses: []}"), 8, 32, FS_OBJ, RULE0 "destinations[0].addresses",
	  "must not be empty; leave the field out to match any local address" },
	{ "bad_dest_address_host_bits", DEST("{addresses: [10.1.0.0/8]}"), 8, 33, FS_OBJ,
	  RULE0 "destinations[0].addresses[0]", "CIDR '10.1.0.0/8' has host bits set; did you mean 10.0.0.0/8" },
	{ "bad_dest_unknown", DEST("{verbs: [get]}"), 8, 21, FS_OBJ, RULE0 "destinations[0].verbs",
	  "unknown field 'verbs' (known fields: protocols, ports, addresses)" },

	/* mandatory FlowSchemas may be restated, not changed */
	{ "bad_exempt_fs_precedence", EXEMPT_FS("2", "exempt", "127.0.0.0/8, \"::1/128\""), 6, 23,
	  "FlowSchema/exempt", "spec.matchingPrecedence",
	  "the mandatory FlowSchema exempt has matchingPrecedence 1 and a file may not change it (kube-apiserver restores it), got 2" },
	{ "bad_exempt_fs_level", EXEMPT_FS("1", "catch-all", "127.0.0.0/8, \"::1/128\""), 5, 38,
	  "FlowSchema/exempt", "spec.priorityLevelConfiguration.name",
	  "the mandatory FlowSchema exempt uses the priority level exempt and a file may not change it (kube-apiserver restores it), got 'catch-all'" },
	{ "bad_exempt_fs_rules", EXEMPT_FS("1", "exempt", "127.0.0.0/8"), 8, 3,
	  "FlowSchema/exempt", "spec.rules",
	  "the mandatory FlowSchema exempt has fixed rules (one rule: subjects [{kind: Network, network: {cidrs: [127.0.0.0/8, \"::1/128\"]}}], destinations [{}]) and a file may not change them (kube-apiserver restores them)" },
	{ "bad_catch_all_fs_distinguisher", FSN("catch-all") "  priorityLevelConfiguration: {name: catch-all}\n"
	  "  matchingPrecedence: 10000\n  rules:\n  - subjects: [{kind: Network, network: {cidrs: [0.0.0.0/0, \"::/0\"]}}]\n"
	  "    destinations: [{}]\n", 5, 3, "FlowSchema/catch-all", "spec.distinguisherMethod",
	  "the mandatory FlowSchema catch-all has distinguisherMethod {type: BySource} (whole addresses) and a file may not change it (kube-apiserver restores it), got none" },

};

static void test_mandatory_schemas(void **state)
{
	struct sl_config *cfg;

	(void)state;
	/* restated exactly as built in */
	cfg = load_ok(EXEMPT_FS("1", "exempt", "127.0.0.0/8, \"::1/128\"") "---\n"
		      FSN("catch-all") "  priorityLevelConfiguration: {name: catch-all}\n"
		      "  matchingPrecedence: 10000\n  distinguisherMethod: {type: BySource}\n  rules:\n"
		      "  - subjects: [{kind: Network, network: {cidrs: [0.0.0.0/0, \"::/0\"]}}]\n"
		      "    destinations: [{ports: [\"*\"], protocols: [\"*\"]}]\n");
	check_mandatory(cfg);
	assert_int_equal(cfg->n_schemas, 2);
	assert_false(cfg->schemas[0].builtin);
	assert_string_equal(cfg->schemas[0].file, "t.yaml");
	assert_int_equal(cfg->schemas[0].line, 1);
	assert_false(cfg->schemas[1].builtin);
	sl_config_free(cfg);
	/* the CIDRs in any order */
	sl_config_free(load_ok(EXEMPT_FS("1", "exempt", "\"::1/128\", 127.0.0.0/8")));

	/* only exempt may use precedence 1 */
	expect_one(FSP "  matchingPrecedence: 1\n" RULES_ANY, SL_SEV_ERROR, 6, 23, FS_OBJ,
		   "spec.matchingPrecedence", "reserved for the mandatory exempt FlowSchema");
	cfg = load_ok(FSP "  matchingPrecedence: 2\n" RULES_ANY);
	assert_int_equal(cfg->schemas[1].precedence, 2);
	sl_config_free(cfg);
}

static void test_flow_schema_defaults(void **state)
{
	struct sl_config *cfg = load_ok(FSP RULES_ANY);
	const struct sl_flow_schema *fs;

	(void)state;
	assert_int_equal(cfg->n_schemas, 3);
	fs = sl_config_find_schema(cfg, "web");
	assert_ptr_equal(fs, &cfg->schemas[1]);
	assert_string_equal(fs->level_name, "catch-all");
	assert_int_equal(fs->level, 1);
	assert_int_equal(fs->precedence, 1000);
	assert_int_equal(fs->distinguisher, SL_DIST_NONE);
	assert_int_equal(fs->prefix_len_v4, 0);
	assert_int_equal(fs->prefix_len_v6, 0);
	assert_int_equal(fs->seats_per_conn, 1);
	assert_false(fs->mandatory);
	assert_false(fs->builtin);
	assert_string_equal(fs->file, "t.yaml");
	assert_int_equal(fs->line, 1);
	assert_int_equal(fs->n_rules, 1);
	assert_int_equal(fs->rules[0].n_destinations, 1);
	assert_int_equal(fs->rules[0].destinations[0].n_ports, 0);     /* ports default ["*"] */
	assert_int_equal(fs->rules[0].destinations[0].n_addresses, 0); /* any address */
	assert_null(sl_config_find_schema(cfg, "nope"));
	sl_config_free(cfg);

	/* BySource defaults to whole addresses */
	cfg = load_ok(FSP "  distinguisherMethod: {type: BySource}\n" RULES_ANY);
	fs = sl_config_find_schema(cfg, "web");
	assert_int_equal(fs->distinguisher, SL_DIST_BY_SOURCE);
	assert_int_equal(fs->prefix_len_v4, 32);
	assert_int_equal(fs->prefix_len_v6, 128);
	sl_config_free(cfg);

	cfg = load_ok(FSP "  distinguisherMethod: {type: BySource, prefixLength: 0, ipv6PrefixLength: 0}\n"
		      "  seatsPerConnection: 100\n  matchingPrecedence: 9999\n" RULES_ANY);
	fs = sl_config_find_schema(cfg, "web");
	assert_int_equal(fs->prefix_len_v4, 0);
	assert_int_equal(fs->prefix_len_v6, 0);
	assert_int_equal(fs->seats_per_conn, 100);
	assert_int_equal(fs->precedence, 9999);
	sl_config_free(cfg);

	cfg = load_ok(FSP "  distinguisherMethod: {type: ByDestination}\n" RULES_ANY);
	assert_int_equal(sl_config_find_schema(cfg, "web")->distinguisher, SL_DIST_BY_DESTINATION);
	sl_config_free(cfg);

	/* the Kubernetes names are aliases, with a word on what they mean here */
	expect_one(FSP "  distinguisherMethod: {type: ByUser, prefixLength: 24}\n" RULES_ANY, SL_SEV_WARNING,
		   6, 31, FS_OBJ, "spec.distinguisherMethod.type",
		   "ByUser is read as BySource: at layer 4 the client is known by its source address");
	cfg = load_warned(FSP "  distinguisherMethod: {type: ByUser, prefixLength: 24}\n" RULES_ANY, 1);
	fs = sl_config_find_schema(cfg, "web");
	assert_int_equal(fs->distinguisher, SL_DIST_BY_SOURCE);
	assert_int_equal(fs->prefix_len_v4, 24);
	sl_config_free(cfg);
	expect_one(FSP "  distinguisherMethod: {type: ByNamespace}\n" RULES_ANY, SL_SEV_WARNING,
		   6, 31, FS_OBJ, "spec.distinguisherMethod.type",
		   "ByNamespace is read as ByDestination");
	{
		struct sl_diags d = SL_DIAGS_INIT;

		assert_int_equal(load(FSP "  distinguisherMethod: {type: ByNamespace, ipv6PrefixLength: 64}\n" RULES_ANY,
				      &cfg, &d), -EINVAL);
		assert_int_equal(d.count, 2);
		check_diag(&d.items[1], SL_SEV_ERROR, 6, 44, FS_OBJ, "spec.distinguisherMethod.ipv6PrefixLength",
			   "only allowed with type BySource (type is ByNamespace)");
		sl_diags_free(&d);
	}
}

static void test_flow_schema_sorting(void **state)
{
	struct sl_config *cfg;
	static const char *const want[] = {
		"exempt", "a-first", "b", "z", "early", "catch-all", "zz-after", /* by name at 10000 */
	};

	(void)state;
	/* file order: z(500), zz-after(10000), b(500), early(9999), a-first(2) */
	cfg = load_warned(FSN("z") "  priorityLevelConfiguration: {name: catch-all}\n  matchingPrecedence: 500\n" RULES_ANY
			  "---\n" FSN("zz-after") "  priorityLevelConfiguration: {name: catch-all}\n  matchingPrecedence: 10000\n" RULES_ANY
			  "---\n" FSN("b") "  priorityLevelConfiguration: {name: catch-all}\n  matchingPrecedence: 500\n" RULES_ANY
			  "---\n" FSN("early") "  priorityLevelConfiguration: {name: catch-all}\n  matchingPrecedence: 9999\n" RULES_ANY
			  "---\n" FSN("a-first") "  priorityLevelConfiguration: {name: exempt}\n  matchingPrecedence: 2\n" RULES_ANY,
			  1);
	assert_int_equal(cfg->n_schemas, 7);
	for (size_t i = 0; i < 7; i++)
		assert_string_equal(cfg->schemas[i].name, want[i]);
	assert_int_equal(cfg->schemas[1].level, 0);
	sl_config_free(cfg);
	/* ... and the one after catch-all is pointed out */
	expect_one(FSN("zz-after") "  priorityLevelConfiguration: {name: catch-all}\n  matchingPrecedence: 10000\n" RULES_ANY,
		   SL_SEV_WARNING, 6, 23, "FlowSchema/zz-after", "spec.matchingPrecedence",
		   "this FlowSchema sorts after the mandatory catch-all (precedence 10000, then by name), which matches every connection, so it never matches; use a matchingPrecedence below 10000");
	/* a name before catch-all at 10000 is fine */
	sl_config_free(load_ok(FSN("aaa") "  priorityLevelConfiguration: {name: catch-all}\n  matchingPrecedence: 10000\n" RULES_ANY));
}

static void test_dangling_flow_schema(void **state)
{
	struct sl_config *cfg;

	(void)state;
	expect_one(PLN("workload-low") "  type: Exempt\n---\n"
		   FSN("web") "  priorityLevelConfiguration: {name: workload-lo}\n" RULES_ANY,
		   SL_SEV_WARNING, 11, 38, FS_OBJ, "spec.priorityLevelConfiguration.name",
		   "PriorityLevelConfiguration 'workload-lo' does not exist; this FlowSchema is dangling and is skipped (it classifies no connection); did you mean 'workload-low'?");
	/* skipped: only the mandatory schemas remain; the load succeeds */
	cfg = load_warned(FSN("web") "  priorityLevelConfiguration: {name: nothing-like-it}\n" RULES_ANY, 1);
	assert_int_equal(cfg->n_schemas, 2);
	assert_null(sl_config_find_schema(cfg, "web"));
	check_mandatory(cfg);
	sl_config_free(cfg);
	/* a level defined after the schema is found */
	cfg = load_ok(FSN("web") "  priorityLevelConfiguration: {name: web}\n" RULES_ANY
		      "---\n" PLN("web") "  type: Limited\n  limited: {limitResponse: {type: Reject}}\n");
	assert_int_equal(sl_config_find_schema(cfg, "web")->level, 2);
	sl_config_free(cfg);
	/* a schema without rules matches nothing: kept, with a warning */
	expect_one(FSP "  rules: []\n", SL_SEV_WARNING, 6, 10, FS_OBJ, "spec.rules",
		   "no rules: this FlowSchema matches no connection");
	expect_one(FSP, SL_SEV_WARNING, 5, 3, FS_OBJ, "spec.rules",
		   "no rules: this FlowSchema matches no connection");
}

static void test_subjects_and_destinations_good(void **state)
{
	struct sl_config *cfg;
	const struct sl_fs_rule *r;

	(void)state;
	cfg = load_ok(FSR "  - subjects:\n"
		      "    - {kind: Network, network: {cidrs: [0.0.0.0/0, \"::/0\", 10.1.2.3/32, \"2001:db8::/32\", \"::ffff:1.2.3.4\"]}}\n"
		      "    - kind: Labels\n      labels: {}\n"
		      "    - kind: Labels\n      labels:\n        matchLabels: {dst.port: 8080, example.com/team: net}\n"
		      "        matchExpressions:\n        - {key: env, operator: In, values: [a, \"\"]}\n"
		      "        - {key: env, operator: Exists}\n        - {key: x, operator: DoesNotExist, values: []}\n"
		      "    destinations:\n"
		      "    - {protocols: [TCP], ports: [1, 65535, \"8080\", 9000-9100, \"7000 - 7001\", 0x50]}\n"
		      "    - {protocols: [\"*\"], ports: [\"*\"], addresses: [198.18.0.0/24, \"fd53::/16\"]}\n"
		      "    - {}\n"
		      "---\n" CL "  - labels: {env: a, x: b, example.com/team: net}\n");
	r = &cfg->schemas[1].rules[0];
	assert_int_equal(r->line, 7);
	assert_int_equal(r->n_subjects, 3);
	assert_int_equal(r->subjects[0].n_cidrs, 5);
	check_cidr(&r->subjects[0].cidrs[0], "0.0.0.0", 0);
	check_cidr(&r->subjects[0].cidrs[1], "::", 0);
	check_cidr(&r->subjects[0].cidrs[2], "10.1.2.3", 32);
	check_cidr(&r->subjects[0].cidrs[3], "2001:db8::", 32);
	check_cidr(&r->subjects[0].cidrs[4], "1.2.3.4", 32); /* v4-mapped is IPv4 */
	assert_int_equal(r->subjects[1].kind, SL_SUBJECT_LABELS);
	assert_int_equal(r->subjects[1].labels.n_reqs, 0); /* empty selector: matches all */
	assert_int_equal(r->subjects[2].labels.n_reqs, 5);
	assert_string_equal(r->subjects[2].labels.reqs[0].values[0], "8080");
	assert_string_equal(r->subjects[2].labels.reqs[1].key, "example.com/team");
	assert_int_equal(r->subjects[2].labels.reqs[2].n_values, 2);
	assert_string_equal(r->subjects[2].labels.reqs[2].values[1], "");
	assert_int_equal(r->subjects[2].labels.reqs[3].op, SL_LM_EXISTS);
	assert_int_equal(r->subjects[2].labels.reqs[4].op, SL_LM_DOES_NOT_EXIST);
	assert_int_equal(r->subjects[2].labels.reqs[4].n_values, 0);
	assert_int_equal(r->n_destinations, 3);
	assert_int_equal(r->destinations[0].n_ports, 6);
	assert_int_equal(r->destinations[0].ports[0].lo, 1);
	assert_int_equal(r->destinations[0].ports[1].hi, 65535);
	assert_int_equal(r->destinations[0].ports[2].lo, 8080);
	assert_int_equal(r->destinations[0].ports[3].lo, 9000);
	assert_int_equal(r->destinations[0].ports[3].hi, 9100);
	assert_int_equal(r->destinations[0].ports[4].hi, 7001);
	assert_int_equal(r->destinations[0].ports[5].lo, 80);
	assert_int_equal(r->destinations[0].line, 19);
	assert_int_equal(r->destinations[0].column, 7);
	assert_int_equal(r->destinations[1].n_ports, 0);
	assert_int_equal(r->destinations[1].n_addresses, 2);
	check_cidr(&r->destinations[1].addresses[1], "fd53::", 16);
	assert_int_equal(r->destinations[2].n_ports, 0);
	sl_config_free(cfg);

	/* overlapping ports in one list: a warning */
	expect_one(DEST("{ports: [\"80-90\", 85]}"), SL_SEV_WARNING, 8, 38, FS_OBJ,
		   RULE0 "destinations[0].ports[1]", "overlaps the entry at t.yaml:8:29 (ports 85-85)");
	expect_one(DEST("{ports: [443, 443]}"), SL_SEV_WARNING, 8, 34, FS_OBJ,
		   RULE0 "destinations[0].ports[1]", "port 443 is listed twice (also listed at t.yaml:8:29)");
	expect_one(DEST("{ports: [\"100-200\", \"150-300\"]}"), SL_SEV_WARNING, 8, 40, FS_OBJ,
		   RULE0 "destinations[0].ports[1]", "overlaps the entry at t.yaml:8:29 (ports 150-200)");
	/* Kubernetes subject kinds: one error per subject, nothing more */
	{
		struct sl_diags d = SL_DIAGS_INIT;

		assert_int_equal(load(SUBJ("{kind: User, user: {name: a}}, {kind: Group, group: {name: b}}"), &cfg, &d),
				 -EINVAL);
		assert_int_equal(d.count, 2);
		sl_diags_free(&d);
	}
}

int main(void)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(test_mandatory_schemas),
		cmocka_unit_test(test_flow_schema_defaults),
		cmocka_unit_test(test_flow_schema_sorting),
		cmocka_unit_test(test_dangling_flow_schema),
		cmocka_unit_test(test_subjects_and_destinations_good),
	};

	return run_config_suite("config_flowschema", fixed, N_OF(fixed), bad_cases, N_OF(bad_cases));
}
