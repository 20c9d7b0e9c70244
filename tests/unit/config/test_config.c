// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Configuration loader tests (cmocka).  Run from the repository root, or
 * point SLUICE_TEST_DATA at the fixture directory (default
 * tests/unit/configs).
 *
 * Every rule has a good and a bad example.  Bad examples are rows of
 * bad_cases[] (one cmocka test each): the YAML, and the exact line, column,
 * object and path of the single error it must produce plus a key part of the
 * message.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <grp.h>
#include <sys/wait.h>

#include "config/config.h"
#include "lib/hostport.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include "config/diag.h"
#include "config/yaml_doc.h"

#define MS  1000000ULL
#define SEC 1000000000ULL

/* ---- helpers ---------------------------------------------------------------- */

static const char *data_dir(void)
{
	const char *d = getenv("SLUICE_TEST_DATA");

	return d && *d ? d : "tests/unit/configs";
}

static void fixture(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", data_dir(), name);
}

static int load(const char *yaml, struct sl_config **cfg, struct sl_diags *d)
{
	return sl_config_load_buffer("t.yaml", yaml, strlen(yaml), cfg, d);
}

/* Loads YAML that must load without any diagnostic. */
static struct sl_config *load_ok(const char *yaml)
{
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;
	int rc = load(yaml, &cfg, &d);

	if (rc || d.count) {
		fprintf(stderr, "unexpected diagnostics for:\n%s\n", yaml);
		sl_diags_print(&d, stderr);
	}
	assert_int_equal(rc, 0);
	assert_int_equal(d.count, 0);
	assert_non_null(cfg);
	sl_diags_free(&d);
	return cfg;
}

static void check_diag(const struct sl_diag *g, enum sl_severity sev,
		       unsigned line, unsigned col, const char *object,
		       const char *path, const char *msg)
{
	if (g->severity != sev || g->line != line || g->column != col ||
	    strcmp(g->object, object) || strcmp(g->path, path) ||
	    !strstr(g->message, msg)) {
		char got[1024];

		sl_diag_format(g, got, sizeof(got));
		fprintf(stderr, "expected: %u:%u: %s: %s: %s: ...%s...\n"
				"got:      %s\n",
			line, col, sl_severity_name(sev), object, path, msg, got);
	}
	assert_int_equal(g->severity, sev);
	assert_int_equal(g->line, line);
	assert_int_equal(g->column, col);
	assert_string_equal(g->object, object);
	assert_string_equal(g->path, path);
	assert_non_null(strstr(g->message, msg));
}

/* The YAML must produce exactly one diagnostic, as described.  An error
 * fails the load (-EINVAL, no config); a warning does not. */
static void expect_one(const char *yaml, enum sl_severity sev, unsigned line,
		       unsigned col, const char *object, const char *path,
		       const char *msg)
{
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;
	int rc = load(yaml, &cfg, &d);

	if (d.count != 1) {
		fprintf(stderr, "expected one diagnostic for:\n%s\ngot %zu:\n",
			yaml, d.count);
		sl_diags_print(&d, stderr);
	}
	assert_int_equal(d.count, 1);
	check_diag(&d.items[0], sev, line, col, object, path, msg);
	if (sev == SL_SEV_ERROR) {
		assert_int_equal(rc, -EINVAL);
		assert_null(cfg);
		assert_int_equal(sl_diags_error_count(&d), 1);
	} else {
		assert_int_equal(rc, 0);
		assert_non_null(cfg);
		assert_int_equal(sl_diags_warning_count(&d), 1);
	}
	sl_config_free(cfg);
	sl_diags_free(&d);
}

static char *read_stream(void (*fn)(const struct sl_diags *, FILE *),
			 const struct sl_diags *d)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);

	assert_non_null(f);
	fn(d, f);
	assert_int_equal(fclose(f), 0);
	return s;
}

/* ---- YAML heads ------------------------------------------------------------- */

#define API "apiVersion: sluice/v1\n"
/* Server/main, spec body from line 5 */
#define SRV API "kind: Server\nmetadata: {name: main}\nspec:\n"
/* PriorityLevelConfiguration/<name>, spec body from line 5 */
#define PLN(name) API "kind: PriorityLevelConfiguration\nmetadata: {name: " name "}\nspec:\n"
#define PL PLN("web")
#define SRV_OBJ "Server/main"
#define PL_OBJ "PriorityLevelConfiguration/web"
/* Limited + Queue level: queuing fields from line 10, values at column
 * 9 + strlen(key) + 2 */
#define QUEUE PL "  type: Limited\n  limited:\n    limitResponse:\n      type: Queue\n      queuing:\n"
#define QPATH "spec.limited.limitResponse.queuing."

/* FlowSchema/<name>, spec body from line 5 */
#define FSN(name) API "kind: FlowSchema\nmetadata: {name: " name "}\nspec:\n"
#define FS_OBJ "FlowSchema/web"
/* FlowSchema/web to catch-all: one more field on line 6 */
#define FSP FSN("web") "  priorityLevelConfiguration: {name: catch-all}\n"
#define RULES_ANY "  rules: [{subjects: [{kind: Network, network: {cidrs: [0.0.0.0/0]}}], destinations: [{}]}]\n"
/* FlowSchema/web to catch-all: rules from line 7 */
#define FSR FSP "  rules:\n"
/* One rule whose subjects list (line 7, column 16) is given; any destination */
#define SUBJ(x) FSR "  - subjects: [" x "]\n    destinations: [{}]\n"
/* A Network subject: its first CIDR is at column 50 in SUBJ */
#define NET(x) "{kind: Network, network: {cidrs: [" x "]}}"
/* One rule, any subject, destinations list (line 8, column 20) given */
#define DEST(x) FSR "  - subjects: [{kind: Network, network: {cidrs: [0.0.0.0/0]}}]\n    destinations: [" x "]\n"
#define RULE0 "spec.rules[0]."
/* The mandatory exempt FlowSchema restated (precedence line 6, rules line 8) */
#define EXEMPT_FS(prec, level, cidrs) FSN("exempt") "  priorityLevelConfiguration: {name: " level "}\n" \
	"  matchingPrecedence: " prec "\n  rules:\n" \
	"  - subjects: [{kind: Network, network: {cidrs: [" cidrs "]}}]\n    destinations: [{}]\n"
/* ConnectionLabels/tiers: rules from line 6 */
#define CLN(name) API "kind: ConnectionLabels\nmetadata: {name: " name "}\nspec:\n  rules:\n"
#define CL CLN("tiers")
#define CL_OBJ "ConnectionLabels/tiers"
/* AverageLatencySchedulingPolicy/<name>, spec body from line 5 */
#define POLN(name) API "kind: AverageLatencySchedulingPolicy\nmetadata: {name: " name "}\nspec:\n"
#define POL_OBJ "AverageLatencySchedulingPolicy/p"
/* aimd_load_scheduler fields from line 7 (indent 6); AIMD_END adds the
 * required load_scheduler with one selector (2 lines) */
#define AIMD POLN("p") "  load_scheduling_core:\n    aimd_load_scheduler:\n"
#define AIMD_END "      load_scheduler:\n        selectors: [{}]\n"
#define AP "spec.load_scheduling_core.aimd_load_scheduler."
/* load_scheduler fields from line 8 (indent 8) */
#define LSCH AIMD "      load_scheduler:\n"
#define LP AP "load_scheduler."
#define SP LP "selectors[0]."
/* selector 0 with more fields from line 10 (indent 10) */
#define SEL LSCH "        selectors:\n        - control_point: ingress\n"
/* one selector; scheduler fields from line 10 (indent 10) */
#define SCHED LSCH "        selectors: [{}]\n        scheduler:\n"
#define SCP LP "scheduler."
/* a minimal policy; spec-level (sluice) fields from line 9 */
#define POLSPEC AIMD AIMD_END
#define POLICY POLSPEC

#define LONG64 "a234567890123456789012345678901234567890123456789012345678901234"
#define LONG107 LONG64 "a234567890123456789012345678901234567890123"

/* ---- table of bad examples -------------------------------------------------- */

struct bad_case {
	const char *name;
	const char *yaml;
	unsigned line, col;
	const char *object, *path, *msg;
};

static const struct bad_case bad_cases[] = {
	/* document shape */
	{ "bad_root_not_mapping", "just a string\n", 1, 1, "document 1", "",
	  "expected an object (a mapping with apiVersion, kind, metadata and spec), got string 'just a string'" },
	{ "bad_root_list", "---\n- a\n- b\n", 2, 1, "document 1", "", "got a list" },
	{ "bad_missing_api_version", "kind: Server\nmetadata: {name: main}\n", 1, 1,
	  SRV_OBJ, "apiVersion", "missing required field 'apiVersion'" },
	{ "bad_api_version", "apiVersion: flowcontrol.apiserver.k8s.io/v1\nkind: Server\nmetadata: {name: main}\n",
	  1, 13, SRV_OBJ, "apiVersion",
	  "unsupported apiVersion 'flowcontrol.apiserver.k8s.io/v1'; expected 'sluice/v1'" },
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
	{ "bad_metadata_unknown", API "kind: Server\nmetadata: {name: main, namespace: x}\n", 3, 24,
	  SRV_OBJ, "metadata.namespace", "unknown field 'namespace'" },
	{ "bad_label_value", API "kind: Server\nmetadata:\n  name: main\n  labels: {tier: 1}\n", 5, 18,
	  SRV_OBJ, "metadata.labels.tier", "expected a string, got integer 1" },
	{ "bad_top_unknown_field", SRV "  tick: 1s\nstatus: {}\n", 6, 1, SRV_OBJ,
	  "status", "unknown field 'status' (known fields: apiVersion, kind, metadata, spec)" },
	{ "bad_top_unknown_field_hint", API "kind: Server\nmetadata: {name: main}\nSpec: {}\n", 4, 1,
	  SRV_OBJ, "Spec", "unknown field 'Spec'; did you mean 'spec'?" },
	{ "bad_merge_key", SRV "  <<: {tick: 1s}\n", 5, 3, SRV_OBJ, "spec.<<",
	  "merge keys ('<<') are not supported" },
	{ "bad_non_string_key", SRV "  ? [a, b]\n  : 1\n", 5, 5, SRV_OBJ, "spec",
	  "mapping keys must be strings, got a list" },
	{ "bad_duplicate_key", SRV "  tick: 1s\n  failMode: open\n  tick: 2s\n", 7, 3,
	  SRV_OBJ, "spec.tick", "duplicate key 'tick'; also defined at t.yaml:5:3" },
	{ "bad_duplicate_key_flow", PLN("web") "  {type: Limited, type: Exempt}\n", 5, 19,
	  PL_OBJ, "spec.type", "duplicate key 'type'; also defined at t.yaml:5:4" },
	{ "bad_duplicate_label", API "kind: Server\nmetadata:\n  name: main\n  labels: {a: x, a: y}\n",
	  5, 18, SRV_OBJ, "metadata.labels.a", "duplicate key 'a'; also defined at t.yaml:5:12" },

	/* kind: Server */
	{ "bad_server_spec_type", API "kind: Server\nmetadata: {name: main}\nspec: 5\n", 4, 7,
	  SRV_OBJ, "spec", "expected a mapping, got integer 5" },
	{ "bad_server_limit_zero", SRV "  serverConcurrencyLimit: 0\n", 5, 27, SRV_OBJ,
	  "spec.serverConcurrencyLimit", "must be at least 1, got 0" },
	{ "bad_server_limit_string", SRV "  serverConcurrencyLimit: abc\n", 5, 27, SRV_OBJ,
	  "spec.serverConcurrencyLimit", "expected an integer, got string 'abc'" },
	{ "bad_server_limit_quoted", SRV "  serverConcurrencyLimit: \"600\"\n", 5, 27, SRV_OBJ,
	  "spec.serverConcurrencyLimit", "expected an integer, got string '600' (remove the quotes)" },
	{ "bad_server_limit_float", SRV "  serverConcurrencyLimit: 1.5\n", 5, 27, SRV_OBJ,
	  "spec.serverConcurrencyLimit", "expected an integer, got float 1.5" },
	{ "bad_server_limit_huge", SRV "  serverConcurrencyLimit: 99999999999999999999\n", 5, 27, SRV_OBJ,
	  "spec.serverConcurrencyLimit", "must be at most 2147483647, got 99999999999999999999" },
	{ "bad_server_limit_above_int32", SRV "  serverConcurrencyLimit: 2147483648\n", 5, 27, SRV_OBJ,
	  "spec.serverConcurrencyLimit", "must be at most 2147483647, got 2147483648" },
	{ "bad_server_fail_mode", SRV "  failMode: shut\n", 5, 13, SRV_OBJ, "spec.failMode",
	  "invalid value 'shut' (allowed: open, closed)" },
	{ "bad_server_fail_mode_case", SRV "  failMode: Closed\n", 5, 13, SRV_OBJ, "spec.failMode",
	  "invalid value 'Closed'; did you mean 'closed'? (allowed: open, closed)" },
	{ "bad_server_fail_mode_bool", SRV "  failMode: true\n", 5, 13, SRV_OBJ, "spec.failMode",
	  "expected one of open, closed, got boolean true" },
	{ "bad_server_heartbeat_bare_int", SRV "  heartbeatTimeout: 3\n", 5, 21, SRV_OBJ,
	  "spec.heartbeatTimeout", "duration 3 needs a unit, e.g. 3s" },
	{ "bad_server_heartbeat_zero_int", SRV "  heartbeatTimeout: 0\n", 5, 21, SRV_OBJ,
	  "spec.heartbeatTimeout", "duration 0 needs a unit, e.g. 0s" },
	{ "bad_server_heartbeat_negative", SRV "  heartbeatTimeout: -1s\n", 5, 21, SRV_OBJ,
	  "spec.heartbeatTimeout", "duration '-1s' must not be negative" },
	{ "bad_server_heartbeat_too_long", SRV "  heartbeatTimeout: 25h\n", 5, 21, SRV_OBJ,
	  "spec.heartbeatTimeout", "must be between 0s and 24h, got 25h" },
	{ "bad_server_tick_low", SRV "  tick: 500us\n", 5, 9, SRV_OBJ, "spec.tick",
	  "must be between 1ms and 10s, got 500us" },
	{ "bad_server_tick_high", SRV "  tick: 10001ms\n", 5, 9, SRV_OBJ, "spec.tick",
	  "must be between 1ms and 10s, got 10001ms" },
	{ "bad_server_tick_list", SRV "  tick: [1s]\n", 5, 9, SRV_OBJ, "spec.tick",
	  "expected a duration such as 5s or 250ms, got a list" },
	{ "bad_server_handshake_zero", SRV "  handshakeTimeout: 0s\n", 5, 21, SRV_OBJ,
	  "spec.handshakeTimeout", "must be between 1ms and 24h, got 0s" },
	{ "bad_server_handshake_unit", SRV "  handshakeTimeout: 10sec\n", 5, 21, SRV_OBJ,
	  "spec.handshakeTimeout", "duration '10sec' has unknown unit 'sec'" },
	{ "bad_server_interfaces_not_list", SRV "  interfaces: eth0\n", 5, 15, SRV_OBJ,
	  "spec.interfaces", "expected a list of interface names, got string 'eth0'" },
	{ "bad_server_interface_too_long", SRV "  interfaces: [eth0, abcdefghijklmnop]\n", 5, 22,
	  SRV_OBJ, "spec.interfaces[1]",
	  "interface name 'abcdefghijklmnop' is 16 characters long; at most 15 allowed" },
	{ "bad_server_interface_empty", SRV "  interfaces: [\"\"]\n", 5, 16, SRV_OBJ,
	  "spec.interfaces[0]", "interface name '' must not be empty" },
	{ "bad_server_interface_slash", SRV "  interfaces: [\"a/b\"]\n", 5, 16, SRV_OBJ,
	  "spec.interfaces[0]", "must not contain '/', ':' or whitespace" },
	{ "bad_server_interface_type", SRV "  interfaces: [0]\n", 5, 16, SRV_OBJ,
	  "spec.interfaces[0]", "expected a string, got integer 0" },
	{ "bad_server_interface_duplicate", SRV "  interfaces: [eth0, eth1, eth0]\n", 5, 28,
	  SRV_OBJ, "spec.interfaces[2]", "duplicate interface 'eth0'; also listed at t.yaml:5:16" },
	{ "bad_server_pin_dir_relative", SRV "  pinDir: sys/fs/bpf/sluice\n", 5, 11, SRV_OBJ,
	  "spec.pinDir", "must be an absolute path, got 'sys/fs/bpf/sluice'" },
	{ "bad_server_pin_dir_nul", SRV "  pinDir: \"/sys/\\0x\"\n", 5, 11, SRV_OBJ,
	  "spec.pinDir", "must not contain NUL characters" },
	{ "bad_server_table_low", SRV "  tableSizes: {connections: 1023}\n", 5, 29, SRV_OBJ,
	  "spec.tableSizes.connections", "must be between 1024 and 16777216, got 1023" },
	{ "bad_server_table_high", SRV "  tableSizes:\n    connections: 16777217\n", 6, 18, SRV_OBJ,
	  "spec.tableSizes.connections", "must be between 1024 and 16777216, got 16777217" },
	{ "bad_server_table_unknown", SRV "  tableSizes: {conns: 2048}\n", 5, 16, SRV_OBJ,
	  "spec.tableSizes.conns", "unknown field 'conns' (known fields: connections, classes)" },
	{ "bad_server_table_typo", SRV "  tableSizes: {conections: 2048}\n", 5, 16, SRV_OBJ,
	  "spec.tableSizes.conections", "unknown field 'conections'; did you mean 'connections'?" },
	{ "bad_server_table_not_map", SRV "  tableSizes: 2048\n", 5, 15, SRV_OBJ,
	  "spec.tableSizes", "expected a mapping, got integer 2048" },
	{ "bad_server_metrics_type", SRV "  metricsAddress: 9464\n", 5, 19, SRV_OBJ,
	  "spec.metricsAddress", "expected a string, got integer 9464" },
	{ "bad_server_metrics_empty", SRV "  metricsAddress: \"\"\n", 5, 19, SRV_OBJ,
	  "spec.metricsAddress", "must not be empty" },
	{ "bad_server_metrics_name", SRV "  metricsAddress: localhost:9464\n", 5, 19, SRV_OBJ,
	  "spec.metricsAddress", "'localhost:9464': not a numeric IPv4 address (names are not resolved)" },
	{ "bad_server_metrics_port", SRV "  metricsAddress: 127.0.0.1:70000\n", 5, 19, SRV_OBJ,
	  "spec.metricsAddress", "the port must be a number from 1 to 65535" },
	{ "bad_server_metrics_v6", SRV "  metricsAddress: \"::1:9464\"\n", 5, 19, SRV_OBJ,
	  "spec.metricsAddress", "an IPv6 address needs brackets: [::1]:9464" },
	{ "bad_server_overbooking", SRV "  ticketOverbooking: 20\n", 5, 22, SRV_OBJ,
	  "spec.ticketOverbooking", "must be at most 16, got 20" },
	{ "bad_server_metrics_noport", SRV "  metricsAddress: 127.0.0.1\n", 5, 19, SRV_OBJ,
	  "spec.metricsAddress", "expected host:port" },
	{ "bad_server_events_negative", SRV "  eventsPerSecond: -5\n", 5, 20, SRV_OBJ,
	  "spec.eventsPerSecond", "must be at least 0, got -5" },
	{ "bad_server_unknown_field_case", SRV "  failmode: open\n", 5, 3, SRV_OBJ,
	  "spec.failmode", "unknown field 'failmode'; did you mean 'failMode'?" },
	{ "bad_server_unknown_field_typo", SRV "  heartbeatTimout: 1s\n", 5, 3, SRV_OBJ,
	  "spec.heartbeatTimout", "did you mean 'heartbeatTimeout'?" },
	{ "bad_server_unknown_field_list", SRV "  colour: blue\n", 5, 3, SRV_OBJ, "spec.colour",
	  "unknown field 'colour' (known fields: serverConcurrencyLimit, failMode, heartbeatTimeout, tick, handshakeTimeout, interfaces, pinDir, tableSizes, metricsAddress, eventsPerSecond, controlSocket, shadow, ticketOverbooking, heldSyns)" },
	{ "bad_server_duplicate", API "kind: Server\nmetadata: {name: a}\n---\n" API "kind: Server\nmetadata: {name: b}\n",
	  6, 7, "Server/b", "kind", "only one Server object is allowed; also defined at t.yaml:2:7" },

	/* kind: PriorityLevelConfiguration: metadata */
	{ "bad_level_name_too_long",
	  PLN("a23456789012345678901234567890123456789012345678") "  type: Exempt\n", 3, 18,
	  "PriorityLevelConfiguration/a23456789012345678901234567890123456789012345678",
	  "metadata.name", "is 48 characters long; at most 47 allowed" },
	{ "bad_level_name_upper", PLN("Web_Tier") "  type: Exempt\n", 3, 18,
	  "PriorityLevelConfiguration/Web_Tier", "metadata.name",
	  "invalid name 'Web_Tier': use lowercase letters, digits, '-' and '.', starting and ending with a letter or digit; did you mean 'web-tier'?" },
	{ "bad_level_name_dash", PLN("-web") "  type: Exempt\n", 3, 18,
	  "PriorityLevelConfiguration/-web", "metadata.name", "invalid name '-web'" },
	{ "bad_level_name_empty_label", PLN("a..b") "  type: Exempt\n", 3, 18,
	  "PriorityLevelConfiguration/a..b", "metadata.name", "invalid name 'a..b'" },
	{ "bad_level_missing_spec", API "kind: PriorityLevelConfiguration\nmetadata: {name: web}\n", 1, 1,
	  PL_OBJ, "spec", "missing required field 'spec'" },
	{ "bad_level_spec_list", API "kind: PriorityLevelConfiguration\nmetadata: {name: web}\nspec: [Limited]\n",
	  4, 7, PL_OBJ, "spec", "expected a mapping, got a list" },

	/* spec.type, exempt, limited */
	{ "bad_level_missing_type", PL "  limited: {}\n", 5, 3, PL_OBJ, "spec.type",
	  "missing required field 'type'" },
	{ "bad_level_null_type", PL "  type:\n", 5, 8, PL_OBJ, "spec.type",
	  "expected one of Exempt, Limited, got null" },
	{ "bad_level_type", PL "  type: Limted\n", 5, 9, PL_OBJ, "spec.type",
	  "invalid value 'Limted'; did you mean 'Limited'? (allowed: Exempt, Limited)" },
	{ "bad_level_type_case", PL "  type: limited\n", 5, 9, PL_OBJ, "spec.type",
	  "did you mean 'Limited'?" },
	{ "bad_level_exempt_with_limited", PL "  type: Limited\n  exempt: {lendablePercent: 5}\n", 6, 3,
	  PL_OBJ, "spec.exempt", "only allowed when type is Exempt (type is Limited)" },
	{ "bad_level_limited_with_exempt", PL "  type: Exempt\n  limited:\n    nominalConcurrencyShares: 5\n",
	  6, 3, PL_OBJ, "spec.limited", "only allowed when type is Limited (type is Exempt)" },
	{ "bad_level_limited_not_map", PL "  type: Limited\n  limited: 30\n", 6, 12, PL_OBJ,
	  "spec.limited", "expected a mapping, got integer 30" },
	{ "bad_exempt_shares", PL "  type: Exempt\n  exempt: {nominalConcurrencyShares: -1}\n", 6, 38,
	  PL_OBJ, "spec.exempt.nominalConcurrencyShares", "must be at least 0, got -1" },
	{ "bad_exempt_lendable", PL "  type: Exempt\n  exempt: {lendablePercent: 101}\n", 6, 29,
	  PL_OBJ, "spec.exempt.lendablePercent", "must be between 0 and 100, got 101" },
	{ "bad_exempt_unknown", PL "  type: Exempt\n  exempt: {borrowingLimitPercent: 5}\n", 6, 12,
	  PL_OBJ, "spec.exempt.borrowingLimitPercent", "unknown field 'borrowingLimitPercent'" },
	{ "bad_limited_shares", PL "  type: Limited\n  limited:\n    nominalConcurrencyShares: -1\n", 7, 31,
	  PL_OBJ, "spec.limited.nominalConcurrencyShares", "must be at least 0, got -1" },
	{ "bad_limited_shares_type", PL "  type: Limited\n  limited:\n    nominalConcurrencyShares: lots\n", 7, 31,
	  PL_OBJ, "spec.limited.nominalConcurrencyShares", "expected an integer, got string 'lots'" },
	{ "bad_limited_lendable_high", PL "  type: Limited\n  limited:\n    lendablePercent: 101\n", 7, 22,
	  PL_OBJ, "spec.limited.lendablePercent", "must be between 0 and 100, got 101" },
	{ "bad_limited_lendable_low", PL "  type: Limited\n  limited:\n    lendablePercent: -1\n", 7, 22,
	  PL_OBJ, "spec.limited.lendablePercent", "must be between 0 and 100, got -1" },
	{ "bad_limited_borrowing", PL "  type: Limited\n  limited:\n    borrowingLimitPercent: -5\n", 7, 28,
	  PL_OBJ, "spec.limited.borrowingLimitPercent", "must be at least 0, got -5" },

	/* limitResponse */
	{ "bad_response_missing_type", PL "  type: Limited\n  limited:\n    limitResponse:\n      queuing: {queues: 16}\n",
	  8, 7, PL_OBJ, "spec.limited.limitResponse.type", "missing required field 'type'" },
	{ "bad_response_type", PL "  type: Limited\n  limited:\n    limitResponse: {type: Queued}\n",
	  7, 27, PL_OBJ, "spec.limited.limitResponse.type",
	  "invalid value 'Queued'; did you mean 'Queue'? (allowed: Queue, Reject)" },
	{ "bad_response_queuing_with_reject",
	  PL "  type: Limited\n  limited:\n    limitResponse:\n      type: Reject\n      queuing: {queues: 8}\n",
	  9, 7, PL_OBJ, "spec.limited.limitResponse.queuing", "only allowed when type is Queue (type is Reject)" },
	{ "bad_response_unknown", PL "  type: Limited\n  limited:\n    limitResponse: {type: Queue, queueing: {}}\n",
	  7, 34, PL_OBJ, "spec.limited.limitResponse.queueing",
	  "unknown field 'queueing'; did you mean 'queuing'?" },

	/* queuing (Kubernetes shuffle-sharding rules) */
	{ "bad_queues_zero", QUEUE "        queues: 0\n", 10, 17, PL_OBJ, QPATH "queues",
	  "must be between 1 and 67108864, got 0; to turn queuing off, use limitResponse.type: Reject" },
	{ "bad_queues_deck", QUEUE "        queues: 67108865\n        handSize: 1\n", 10, 17, PL_OBJ,
	  QPATH "queues", "must be between 1 and 67108864, got 67108865" },
	{ "bad_hand_zero", QUEUE "        handSize: 0\n", 10, 19, PL_OBJ, QPATH "handSize",
	  "must be at least 1, got 0" },
	{ "bad_hand_above_queues", QUEUE "        queues: 4\n        handSize: 5\n", 11, 19, PL_OBJ,
	  QPATH "handSize", "must not exceed queues (4), got 5" },
	{ "bad_default_hand_above_queues", QUEUE "        queues: 4\n", 10, 17, PL_OBJ, QPATH "queues",
	  "4 queues are fewer than the default handSize 8; set handSize to at most 4" },
	{ "bad_entropy", QUEUE "        queues: 128\n        handSize: 9\n", 11, 19, PL_OBJ,
	  QPATH "handSize", "9 needs 63 bits of entropy with 128 queues; at most 60 allowed" },
	{ "bad_entropy_512_8", QUEUE "        queues: 512\n        handSize: 8\n", 11, 19, PL_OBJ,
	  QPATH "handSize", "8 needs 72 bits of entropy with 512 queues; at most 60 allowed" },
	{ "bad_entropy_default_hand", QUEUE "        queues: 1048576\n", 10, 17, PL_OBJ,
	  QPATH "queues", "1048576 queues need 160 bits of entropy with the default handSize 8; at most 60 allowed" },
	{ "bad_queue_length_zero", QUEUE "        queueLengthLimit: 0\n", 10, 27, PL_OBJ,
	  QPATH "queueLengthLimit", "must be at least 1, got 0" },
	{ "bad_queue_wait_bare", QUEUE "        queueWaitLimit: 15\n", 10, 25, PL_OBJ,
	  QPATH "queueWaitLimit", "duration 15 needs a unit, e.g. 15s" },
	{ "bad_queue_wait_zero", QUEUE "        queueWaitLimit: 0s\n", 10, 25, PL_OBJ,
	  QPATH "queueWaitLimit", "must be between 1ms and 1h, got 0s" },
	{ "bad_queuing_unknown_field", QUEUE "        queues: 64\n        handsize: 4\n", 11, 9, PL_OBJ,
	  QPATH "handsize", "unknown field 'handsize'; did you mean 'handSize'?" },

	/* fields that moved from PriorityLevelConfiguration to FlowSchema */
	{ "bad_level_ports_moved", PL "  type: Limited\n  ports: [80]\n", 6, 3, PL_OBJ, "spec.ports",
	  "priority levels no longer own ports: FlowSchemas classify connections now; add a FlowSchema whose priorityLevelConfiguration.name is 'web'" },
	{ "bad_level_seats_moved", PL "  type: Limited\n  seatsPerConnection: 2\n", 6, 3, PL_OBJ,
	  "spec.seatsPerConnection", "seatsPerConnection is set per FlowSchema now (FlowSchema spec.seatsPerConnection)" },

	/* mandatory levels: only exempt's shares and lendablePercent may change */
	{ "bad_exempt_level_type", PLN("exempt") "  type: Limited\n", 5, 9,
	  "PriorityLevelConfiguration/exempt", "spec.type",
	  "the mandatory level exempt has type Exempt; a file may change only its exempt.nominalConcurrencyShares and exempt.lendablePercent (kube-apiserver restores it)" },
	{ "bad_catch_all_shares", PLN("catch-all") "  type: Limited\n  limited: {nominalConcurrencyShares: 10}\n",
	  6, 39, "PriorityLevelConfiguration/catch-all", "spec.limited.nominalConcurrencyShares",
	  "the mandatory level catch-all has nominalConcurrencyShares 5 and a file may not change it (kube-apiserver restores it), got 10" },
	{ "bad_catch_all_default_shares", PLN("catch-all") "  type: Limited\n", 5, 3,
	  "PriorityLevelConfiguration/catch-all", "spec.limited.nominalConcurrencyShares",
	  "has nominalConcurrencyShares 5 and a file may not change it (kube-apiserver restores it), got the default 30" },
	{ "bad_catch_all_queue", PLN("catch-all") "  type: Limited\n  limited:\n    nominalConcurrencyShares: 5\n"
	  "    limitResponse: {type: Queue}\n", 8, 27, "PriorityLevelConfiguration/catch-all",
	  "spec.limited.limitResponse.type", "the mandatory level catch-all has limitResponse.type Reject and a file may not change it (kube-apiserver restores it), got Queue" },
	{ "bad_catch_all_type", PLN("catch-all") "  type: Exempt\n", 5, 9, "PriorityLevelConfiguration/catch-all",
	  "spec.type", "the mandatory level catch-all has type Limited and a file may not change it (kube-apiserver restores it), got Exempt" },
	{ "bad_catch_all_borrowing", PLN("catch-all") "  type: Limited\n  limited:\n    nominalConcurrencyShares: 5\n"
	  "    borrowingLimitPercent: 10\n", 8, 28, "PriorityLevelConfiguration/catch-all",
	  "spec.limited.borrowingLimitPercent", "has borrowingLimitPercent unset and a file may not change it (kube-apiserver restores it), got 10" },

	/* kind: Server, new fields */
	{ "bad_server_classes_low", SRV "  tableSizes: {classes: 1023}\n", 5, 25, SRV_OBJ,
	  "spec.tableSizes.classes", "must be between 1024 and 1048576, got 1023" },
	{ "bad_server_classes_high", SRV "  tableSizes: {classes: 1048577}\n", 5, 25, SRV_OBJ,
	  "spec.tableSizes.classes", "must be between 1024 and 1048576, got 1048577" },
	{ "bad_server_control_relative", SRV "  controlSocket: run/x.sock\n", 5, 18, SRV_OBJ,
	  "spec.controlSocket", "must be an absolute path, got 'run/x.sock'" },
	{ "bad_server_control_long", SRV "  controlSocket: /" LONG107 "\n", 5, 18, SRV_OBJ,
	  "spec.controlSocket", "path is 108 bytes long; a Unix socket path holds at most 107" },
	{ "bad_server_control_type", SRV "  controlSocket: [a]\n", 5, 18, SRV_OBJ,
	  "spec.controlSocket", "expected a string, got a list" },

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

	/* kind: AverageLatencySchedulingPolicy */
	{ "bad_pol_missing_core", POLN("p") "  control_period: 1s\n", 5, 3, POL_OBJ,
	  "spec.load_scheduling_core", "missing required field 'load_scheduling_core'" },
	{ "bad_pol_missing_ls", AIMD "      max_load_multiplier: 2\n", 7, 7, POL_OBJ, AP "load_scheduler",
	  "missing required field 'load_scheduler'" },
	{ "bad_pol_unknown", AIMD "      alerter: {}\n" AIMD_END, 7, 7, POL_OBJ, AP "alerter",
	  "unknown field 'alerter' (known fields: gradient, load_multiplier_linear_increment, max_load_multiplier, min_load_multiplier, load_scheduler)" },
	{ "bad_pol_slope_zero", AIMD "      gradient: {slope: 0}\n" AIMD_END, 7, 25, POL_OBJ, AP "gradient.slope",
	  "must not be 0: the gradient would always be 1 and the controller could never shed load" },
	{ "bad_pol_gradient_order", AIMD "      gradient: {min_gradient: 0.5, max_gradient: 0.2}\n" AIMD_END, 7, 51,
	  POL_OBJ, AP "gradient.max_gradient", "max_gradient 0.2 is below min_gradient 0.5" },
	{ "bad_pol_gradient_default_order", AIMD "      gradient: {min_gradient: 2}\n" AIMD_END, 7, 32,
	  POL_OBJ, AP "gradient.min_gradient", "max_gradient (default) 1 is below min_gradient 2" },
	{ "bad_pol_increment_zero", AIMD "      load_multiplier_linear_increment: 0\n" AIMD_END, 7, 41, POL_OBJ,
	  AP "load_multiplier_linear_increment", "must be greater than 0, got 0" },
	{ "bad_pol_max_lm", AIMD "      max_load_multiplier: -1\n" AIMD_END, 7, 28, POL_OBJ,
	  AP "max_load_multiplier", "must be greater than 0, got -1" },
	{ "bad_pol_min_lm", AIMD "      min_load_multiplier: 2\n" AIMD_END, 7, 28, POL_OBJ,
	  AP "min_load_multiplier", "must be below max_load_multiplier (2), got 2" },
	{ "bad_pol_min_lm_negative", AIMD "      min_load_multiplier: -0.5\n" AIMD_END, 7, 28, POL_OBJ,
	  AP "min_load_multiplier", "must be at least 0, got -0.5" },
	{ "bad_pol_number_type", AIMD "      max_load_multiplier: high\n" AIMD_END, 7, 28, POL_OBJ,
	  AP "max_load_multiplier", "expected a number, got string 'high'" },
	{ "bad_pol_number_quoted", AIMD "      max_load_multiplier: \"2\"\n" AIMD_END, 7, 28, POL_OBJ,
	  AP "max_load_multiplier", "expected a number, got string '2' (remove the quotes)" },
	{ "bad_pol_nan", AIMD "      max_load_multiplier: .nan\n" AIMD_END, 7, 28, POL_OBJ,
	  AP "max_load_multiplier", "expected a finite number, got .nan" },
	{ "bad_pol_selectors_empty", LSCH "        selectors: []\n", 8, 20, POL_OBJ, LP "selectors",
	  "must not be empty: a policy without selectors applies to no connection" },
	{ "bad_pol_selectors_missing", LSCH "        scheduler: {}\n", 8, 9, POL_OBJ, LP "selectors",
	  "missing required field 'selectors'" },
	{ "bad_pol_control_point", LSCH "        selectors:\n        - control_point: egress\n", 9, 26, POL_OBJ,
	  SP "control_point",
	  "sluice acts on connections arriving at this host, so the only control point at layer 4 is 'ingress', got 'egress'" },
	{ "bad_pol_agent_group", LSCH "        selectors:\n        - agent_group: edge\n", 9, 24, POL_OBJ,
	  SP "agent_group", "sluice runs one agent per host, in agent group 'default'; a selector for agent group 'edge' would select nothing" },
	{ "bad_pol_service_empty", LSCH "        selectors:\n        - service: \"\"\n", 9, 20, POL_OBJ,
	  SP "service", "must not be empty (the default is 'any')" },
	{ "bad_pol_regex", LSCH "        selectors:\n        - label_matcher: {expression: {label_matches: {label: src.ip, regex: \"(ab\"}}}\n",
	  9, 78, POL_OBJ, SP "label_matcher.expression.label_matches.regex",
	  "regex '(ab' does not compile: missing closing parenthesis at offset 3" },
	{ "bad_pol_regex_empty", LSCH "        selectors:\n        - label_matcher: {expression: {label_matches: {label: src.ip, regex: \"\"}}}\n",
	  9, 78, POL_OBJ, SP "label_matcher.expression.label_matches.regex",
	  "must not be empty (an empty regex matches every value; use label_exists)" },
	{ "bad_pol_regex_missing", LSCH "        selectors:\n        - label_matcher: {expression: {label_matches: {label: src.ip}}}\n",
	  9, 55, POL_OBJ, SP "label_matcher.expression.label_matches.regex", "missing required field 'regex'" },
	{ "bad_pol_expr_two", LSCH "        selectors:\n        - label_matcher: {expression: {label_exists: src.ip, not: {label_exists: dst.ip}}}\n",
	  9, 62, POL_OBJ, SP "label_matcher.expression.not",
	  "an expression has exactly one of not, all, any, label_exists, label_equals, label_matches; this one also has 'label_exists' (at t.yaml:9:40)" },
	{ "bad_pol_expr_none", LSCH "        selectors:\n        - label_matcher: {expression: {}}\n", 9, 39, POL_OBJ,
	  SP "label_matcher.expression", "an expression needs exactly one of not, all, any, label_exists, label_equals, label_matches" },
	{ "bad_pol_expr_unknown", LSCH "        selectors:\n        - label_matcher: {expression: {label_equal: {label: a}}}\n",
	  9, 40, POL_OBJ, SP "label_matcher.expression.label_equal",
	  "unknown field 'label_equal'; did you mean 'label_equals'?" },
	{ "bad_pol_expr_nested", LSCH "        selectors:\n        - label_matcher: {expression: {all: {of: [{not: ~}]}}}\n",
	  9, 52, POL_OBJ, SP "label_matcher.expression.all.of[0].not", "must not be empty" },
	{ "bad_pol_expr_of_type", LSCH "        selectors:\n        - label_matcher: {expression: {any: {of: {label_exists: a}}}}\n",
	  9, 50, POL_OBJ, SP "label_matcher.expression.any.of", "expected a list of expressions, got a mapping" },
	{ "bad_pol_expr_exists_key", LSCH "        selectors:\n        - label_matcher: {expression: {label_exists: \"a b\"}}\n",
	  9, 54, POL_OBJ, SP "label_matcher.expression.label_exists", "label key 'a b' may contain only" },
	{ "bad_pol_match_list_in", LSCH "        selectors:\n        - label_matcher: {match_list: [{key: src.ip, operator: In}]}\n",
	  9, 64, POL_OBJ, SP "label_matcher.match_list[0].values", "operator In needs a non-empty list of values" },
	{ "bad_pol_match_list_dne_values", LSCH "        selectors:\n        - label_matcher: {match_list: [{key: src.ip, operator: DoesNotExist, values: [a]}]}\n",
	  9, 86, POL_OBJ, SP "label_matcher.match_list[0].values", "operator DoesNotExist takes no values; remove them" },
	{ "bad_pol_matcher_k8s_field", LSCH "        selectors:\n        - label_matcher: {matchLabels: {a: b}}\n",
	  9, 27, POL_OBJ, SP "label_matcher.matchLabels", "did you mean 'match_labels'?" },
	{ "bad_pol_workload_priority_zero", SCHED "          workloads:\n          - label_matcher: {}\n"
	  "            parameters: {priority: 0}\n", 12, 36, POL_OBJ, SCP "workloads[0].parameters.priority",
	  "must be greater than 0, got 0" },
	{ "bad_pol_workload_tokens", SCHED "          workloads:\n          - label_matcher: {}\n"
	  "            parameters: {tokens: -1}\n", 12, 34, POL_OBJ, SCP "workloads[0].parameters.tokens",
	  "must be at least 0, got -1" },
	{ "bad_pol_workload_timeout", SCHED "          workloads:\n          - label_matcher: {}\n"
	  "            parameters: {queue_timeout: 5}\n", 12, 41, POL_OBJ, SCP "workloads[0].parameters.queue_timeout",
	  "duration 5 needs a unit, e.g. 5s" },
	{ "bad_pol_workload_no_matcher", SCHED "          workloads:\n          - name: gold\n", 11, 13, POL_OBJ,
	  SCP "workloads[0].label_matcher", "missing required field 'label_matcher'" },
	{ "bad_pol_workload_dup", SCHED "          workloads:\n"
	  "          - {name: a, label_matcher: {match_labels: {dst.port: \"1\"}}}\n"
	  "          - {name: a, label_matcher: {match_labels: {dst.port: \"2\"}}}\n", 12, 20, POL_OBJ,
	  SCP "workloads[1].name", "duplicate workload name 'a'; also defined at t.yaml:11:20" },
	{ "bad_pol_workload_default_name", SCHED "          workloads:\n"
	  "          - {name: default, label_matcher: {match_labels: {dst.port: \"1\"}}}\n", 11, 20, POL_OBJ,
	  SCP "workloads[0].name", "'default' names the default workload" },
	{ "bad_pol_default_priority", SCHED "          default_workload_parameters: {priority: -1}\n", 10, 51, POL_OBJ,
	  SCP "default_workload_parameters.priority", "must be greater than 0, got -1" },
	{ "bad_pol_scheduler_unknown", SCHED "          fairness_label_key: user\n", 10, 11, POL_OBJ,
	  SCP "fairness_label_key", "unknown field 'fairness_label_key' (known fields: workloads, default_workload_parameters, workload_latency_based_tokens)" },
	{ "bad_pol_wlbt_conflict", LSCH "        selectors: [{}]\n        workload_latency_based_tokens: true\n"
	  "        scheduler: {workload_latency_based_tokens: false}\n", 10, 52, POL_OBJ,
	  SCP "workload_latency_based_tokens",
	  "contradicts load_scheduler.workload_latency_based_tokens (at t.yaml:9:40); set it in one place" },
	{ "bad_pol_wlbt_yes", LSCH "        selectors: [{}]\n        workload_latency_based_tokens: yes\n", 9, 40,
	  POL_OBJ, LP "workload_latency_based_tokens",
	  "expected true or false, got 'yes' (YAML 1.2 booleans are only true and false)" },
	{ "bad_pol_signal_no_path", POLSPEC "  signal: {type: external}\n", 9, 11, POL_OBJ,
	  "spec.signal.external_path", "type external needs external_path (a file the application writes its latency in ms to) or external_socket" },
	{ "bad_pol_signal_path_and_socket", POLSPEC "  signal: {type: external, external_path: /a, external_socket: /b}\n", 9, 47,
	  POL_OBJ, "spec.signal.external_socket", "give external_path or external_socket, not both" },
	{ "bad_pol_signal_socket_relative", POLSPEC "  signal: {type: external, external_socket: run/x.sock}\n", 9, 45,
	  POL_OBJ, "spec.signal.external_socket", "must be an absolute path, got 'run/x.sock'" },
	{ "bad_pol_signal_socket_long", POLSPEC "  signal: {type: external, external_socket: /aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa}\n", 9, 45,
	  POL_OBJ, "spec.signal.external_socket", "too long (117 bytes); at most 107" },
	{ "bad_pol_signal_socket_with_srtt", POLSPEC "  signal: {type: srtt, external_socket: /x}\n", 9, 24, POL_OBJ,
	  "spec.signal.external_socket", "only allowed when type is external (type is srtt)" },
	{ "bad_pol_signal_path_with_duration", POLSPEC "  signal: {external_path: /x}\n", 9, 12, POL_OBJ,
	  "spec.signal.external_path", "only allowed when type is external (type is duration)" },
	{ "bad_pol_signal_path_relative", POLSPEC "  signal: {type: external, external_path: x}\n", 9, 43,
	  POL_OBJ, "spec.signal.external_path", "must be an absolute path, got 'x'" },
	{ "bad_pol_signal_type", POLSPEC "  signal: {type: rtt}\n", 9, 18, POL_OBJ, "spec.signal.type",
	  "invalid value 'rtt'; did you mean 'srtt'? (allowed: duration, srtt, external)" },
	{ "bad_pol_signal_window", POLSPEC "  signal: {window: 0s}\n", 9, 20, POL_OBJ, "spec.signal.window",
	  "must be between 1ms and 24h, got 0s" },
	{ "bad_pol_period", POLSPEC "  control_period: 0s\n", 9, 19, POL_OBJ, "spec.control_period",
	  "must be between 1ms and 1h, got 0s" },
	{ "bad_pol_tolerance", POLSPEC "  latency_baseliner: {latency_tolerance_multiplier: 0}\n", 9, 53, POL_OBJ,
	  "spec.latency_baseliner.latency_tolerance_multiplier", "must be greater than 0, got 0" },
	{ "bad_pol_baseliner_unknown", POLSPEC "  latency_baseliner: {flux_meter: {}}\n", 9, 23, POL_OBJ,
	  "spec.latency_baseliner.flux_meter", "unknown field 'flux_meter'" },
	{ "bad_pol_name", POLN("P") "  load_scheduling_core: {aimd_load_scheduler: {load_scheduler: {selectors: [{}]}}}\n", 3, 18, "AverageLatencySchedulingPolicy/P",
	  "metadata.name", "invalid name 'P'" },

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

static void run_bad_case(void **state)
{
	const struct bad_case *bc = *state;

	expect_one(bc->yaml, SL_SEV_ERROR, bc->line, bc->col, bc->object,
		   bc->path, bc->msg);
}

/* ---- defaults and good values ------------------------------------------------- */

/* Loads YAML that must load with exactly n_warn warnings and no error. */
static struct sl_config *load_warned(const char *yaml, size_t n_warn)
{
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;
	int rc = load(yaml, &cfg, &d);

	if (rc || d.n_errors || d.n_warnings != n_warn) {
		fprintf(stderr, "expected %zu warnings for:\n%s\ngot:\n", n_warn, yaml);
		sl_diags_print(&d, stderr);
	}
	assert_int_equal(rc, 0);
	assert_int_equal(d.n_errors, 0);
	assert_int_equal(d.n_warnings, n_warn);
	assert_non_null(cfg);
	sl_diags_free(&d);
	return cfg;
}

static uint8_t v4[16] = { [10] = 0xff, [11] = 0xff };

/* "a.b.c.d/n" or "x::/n" as stored: v4-mapped, prefix 96 + n for IPv4 */
static void check_cidr(const struct sl_cidr *c, const char *addr, unsigned plen)
{
	uint8_t want[16];

	if (inet_pton(AF_INET, addr, want + 12) == 1) {
		memcpy(want, v4, 12);
		plen += 96;
	} else {
		assert_int_equal(inet_pton(AF_INET6, addr, want), 1);
	}
	assert_memory_equal(c->addr, want, 16);
	assert_int_equal(c->prefix_len, plen);
}

/* The mandatory objects every configuration has (Kubernetes bootstrap/default.go). */
static void check_mandatory(const struct sl_config *cfg)
{
	const struct sl_level_cfg *l;
	const struct sl_flow_schema *fs;

	assert_true(cfg->n_levels >= 2);
	l = &cfg->levels[0];
	assert_string_equal(l->name, "exempt");
	assert_int_equal(l->type, SL_LEVEL_EXEMPT);
	assert_true(l->mandatory);
	assert_int_equal(l->borrowing_limit_percent, -1);
	l = &cfg->levels[1];
	assert_string_equal(l->name, "catch-all");
	assert_int_equal(l->type, SL_LEVEL_LIMITED);
	assert_true(l->mandatory);
	assert_int_equal(l->shares, 5);
	assert_int_equal(l->lendable_percent, 0);
	assert_int_equal(l->borrowing_limit_percent, -1);
	assert_int_equal(l->limit_response, SL_RESP_REJECT);
	assert_int_equal(l->queues, 0);

	fs = sl_config_find_schema(cfg, "exempt");
	assert_non_null(fs);
	assert_ptr_equal(fs, &cfg->schemas[0]); /* precedence 1 sorts first */
	assert_true(fs->mandatory);
	assert_int_equal(fs->precedence, 1);
	assert_string_equal(fs->level_name, "exempt");
	assert_int_equal(fs->level, 0);
	assert_int_equal(fs->distinguisher, SL_DIST_NONE);
	assert_int_equal(fs->seats_per_conn, 1);
	assert_int_equal(fs->n_rules, 1);
	assert_int_equal(fs->rules[0].n_subjects, 1);
	assert_int_equal(fs->rules[0].subjects[0].kind, SL_SUBJECT_NETWORK);
	assert_int_equal(fs->rules[0].subjects[0].n_cidrs, 2);
	check_cidr(&fs->rules[0].subjects[0].cidrs[0], "127.0.0.0", 8);
	check_cidr(&fs->rules[0].subjects[0].cidrs[1], "::1", 128);
	assert_int_equal(fs->rules[0].n_destinations, 1);
	assert_int_equal(fs->rules[0].destinations[0].n_ports, 0);
	assert_int_equal(fs->rules[0].destinations[0].n_addresses, 0);

	fs = sl_config_find_schema(cfg, "catch-all");
	assert_non_null(fs);
	assert_true(fs->mandatory);
	assert_int_equal(fs->precedence, 10000);
	assert_string_equal(fs->level_name, "catch-all");
	assert_int_equal(fs->level, 1);
	assert_int_equal(fs->distinguisher, SL_DIST_BY_SOURCE);
	assert_int_equal(fs->prefix_len_v4, 32);
	assert_int_equal(fs->prefix_len_v6, 128);
	assert_int_equal(fs->n_rules, 1);
	assert_int_equal(fs->rules[0].subjects[0].n_cidrs, 2);
	check_cidr(&fs->rules[0].subjects[0].cidrs[0], "0.0.0.0", 0);
	check_cidr(&fs->rules[0].subjects[0].cidrs[1], "::", 0);
	assert_int_equal(fs->rules[0].destinations[0].n_ports, 0);
}

static void test_empty_buffer_defaults(void **state)
{
	struct sl_config *cfg = load_ok("");

	(void)state;
	assert_false(cfg->server.present);
	assert_int_equal(cfg->server.server_concurrency_limit, 600);
	assert_int_equal(cfg->server.fail_mode, SL_FAIL_OPEN);
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

static void test_empty_and_comment_files(void **state)
{
	static const char *const names[] = { "empty.yaml", "comments-only.yaml" };

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		struct sl_diags d = SL_DIAGS_INIT;
		struct sl_config *cfg = NULL;
		char path[512];

		fixture(path, sizeof(path), names[i]);
		assert_int_equal(sl_config_load_file(path, &cfg, &d), 0);
		assert_int_equal(d.count, 0);
		assert_non_null(cfg);
		assert_false(cfg->server.present);
		assert_int_equal(cfg->server.server_concurrency_limit, 600);
		assert_int_equal(cfg->n_levels, 2);
		assert_int_equal(cfg->n_schemas, 2);
		assert_string_equal(cfg->source_file, path);
		sl_config_free(cfg);
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
	cfg = load_ok(PL "  type: Limited\n");
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

static void test_server_empty_spec_defaults(void **state)
{
	struct sl_config *cfg = load_ok(API "kind: Server\nmetadata: {name: anything goes}\n");

	(void)state;
	assert_true(cfg->server.present);
	assert_int_equal(cfg->server.server_concurrency_limit, 600);
	assert_string_equal(cfg->server.file, "t.yaml");
	assert_int_equal(cfg->server.line, 1);
	sl_config_free(cfg);

	/* spec: null and fields set to null are "absent": defaults */
	cfg = load_ok(SRV "  tick:\n  failMode: ~\n  controlSocket: ~\n");
	assert_true(cfg->server.present);
	assert_int_equal(cfg->server.tick_ns, 100 * MS);
	assert_int_equal(cfg->server.fail_mode, SL_FAIL_OPEN);
	assert_string_equal(cfg->server.control_socket, "/run/sluice/sluiced.sock");
	sl_config_free(cfg);
	cfg = load_ok(API "kind: Server\nmetadata: {name: main}\nspec:\n");
	assert_true(cfg->server.present);
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
	if (d.count)
		sl_diags_print(&d, stderr);
	assert_int_equal(d.count, 0);

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
	assert_int_equal(l->queue_wait_limit_ns, 5 * SEC);
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
	assert_string_equal(p->selectors[0].service, "web.example");
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

static void test_default_config_loads(void **state)
{
	const char *path = getenv("SLUICE_DEFAULT_CONFIG");
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;
	const struct sl_level_cfg *l;
	uint64_t sum = 0;

	(void)state;
	if (!path || !*path)
		path = "configs/default.yaml";
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

static void test_server_boundaries_good(void **state)
{
	struct sl_config *cfg;

	(void)state;
	cfg = load_ok(SRV "  serverConcurrencyLimit: 1\n  tick: 1ms\n  heartbeatTimeout: 0s\n"
		      "  handshakeTimeout: 1ms\n  tableSizes: {connections: 1024, classes: 1024}\n"
		      "  eventsPerSecond: 4294967295\n  interfaces: [abcdefghijklmno]\n"
		      "  controlSocket: /" LONG64 "a23456789012345678901234567890123456789012\n");
	assert_int_equal(cfg->server.server_concurrency_limit, 1);
	assert_int_equal(cfg->server.tick_ns, 1 * MS);
	assert_int_equal(cfg->server.heartbeat_timeout_ns, 0);
	assert_int_equal(cfg->server.handshake_timeout_ns, 1 * MS);
	assert_int_equal(cfg->server.table_sizes.connections, 1024);
	assert_int_equal(cfg->server.table_sizes.classes, 1024);
	assert_int_equal(cfg->server.events_per_second, 4294967295u);
	assert_string_equal(cfg->server.interfaces[0], "abcdefghijklmno");
	assert_int_equal(strlen(cfg->server.control_socket), 107);
	sl_config_free(cfg);

	cfg = load_ok(SRV "  serverConcurrencyLimit: 2147483647\n  tick: 10s\n  heartbeatTimeout: 24h\n"
		      "  handshakeTimeout: 24h\n  tableSizes: {connections: 16777216, classes: 1048576}\n"
		      "  failMode: open\n  interfaces: []\n  pinDir: /\n");
	assert_int_equal(cfg->server.server_concurrency_limit, 2147483647);
	assert_int_equal(cfg->server.tick_ns, 10 * SEC);
	assert_int_equal(cfg->server.heartbeat_timeout_ns, 24 * 3600 * SEC);
	assert_int_equal(cfg->server.table_sizes.connections, 16777216);
	assert_int_equal(cfg->server.table_sizes.classes, 1048576);
	assert_int_equal(cfg->server.n_interfaces, 0);
	assert_string_equal(cfg->server.pin_dir, "/");
	sl_config_free(cfg);

	/* quoted keys, explicit tags, hex integers */
	cfg = load_ok(SRV "  \"serverConcurrencyLimit\": !!int \"800\"\n  eventsPerSecond: 0x10\n");
	assert_int_equal(cfg->server.server_concurrency_limit, 800);
	assert_int_equal(cfg->server.events_per_second, 16);
	sl_config_free(cfg);
}

static void test_level_defaults(void **state)
{
	struct sl_config *cfg;
	const struct sl_level_cfg *l;

	(void)state;
	/* Limited without a limited block: shares 30, Reject */
	cfg = load_ok(PL "  type: Limited\n");
	l = &cfg->levels[2];
	assert_string_equal(l->name, "web");
	assert_int_equal(l->type, SL_LEVEL_LIMITED);
	assert_int_equal(l->shares, 30);
	assert_int_equal(l->lendable_percent, 0);
	assert_int_equal(l->borrowing_limit_percent, -1);
	assert_int_equal(l->limit_response, SL_RESP_REJECT);
	assert_int_equal(l->queues, 0);
	assert_int_equal(l->hand_size, 0);
	assert_int_equal(l->queue_length_limit, 0);
	assert_false(l->mandatory);
	assert_false(l->builtin);
	sl_config_free(cfg);

	/* limited: null and limitResponse: null are absent too */
	cfg = load_ok(PL "  type: Limited\n  limited:\n");
	assert_int_equal(cfg->levels[2].shares, 30);
	sl_config_free(cfg);
	cfg = load_ok(PL "  type: Limited\n  limited: {limitResponse: ~}\n");
	assert_int_equal(cfg->levels[2].limit_response, SL_RESP_REJECT);
	sl_config_free(cfg);

	/* Exempt: shares 0 */
	cfg = load_ok(PL "  type: Exempt\n");
	l = &cfg->levels[2];
	assert_int_equal(l->type, SL_LEVEL_EXEMPT);
	assert_int_equal(l->shares, 0);
	assert_int_equal(l->lendable_percent, 0);
	assert_int_equal(l->borrowing_limit_percent, -1);
	sl_config_free(cfg);

	/* Queue without a queuing block: Kubernetes v1 defaults */
	cfg = load_ok(PL "  type: Limited\n  limited: {limitResponse: {type: Queue}}\n");
	l = &cfg->levels[2];
	assert_int_equal(l->limit_response, SL_RESP_QUEUE);
	assert_int_equal(l->queues, 64);
	assert_int_equal(l->hand_size, 8);
	assert_int_equal(l->queue_length_limit, 50);
	assert_int_equal(l->queue_wait_limit_ns, 15 * SEC);
	sl_config_free(cfg);

	/* partial queuing block: the rest defaults */
	cfg = load_ok(QUEUE "        queues: 32\n");
	l = &cfg->levels[2];
	assert_int_equal(l->queues, 32);
	assert_int_equal(l->hand_size, 8);
	assert_int_equal(l->queue_length_limit, 50);
	sl_config_free(cfg);
}

static void test_level_good_values(void **state)
{
	struct sl_config *cfg;
	const struct sl_level_cfg *l;

	(void)state;
	cfg = load_ok(PL "  type: Exempt\n  exempt: {nominalConcurrencyShares: 0, lendablePercent: 100}\n");
	l = &cfg->levels[2];
	assert_int_equal(l->lendable_percent, 100);
	sl_config_free(cfg);

	cfg = load_ok(PL "  type: Limited\n  limited:\n    nominalConcurrencyShares: 0\n"
		      "    lendablePercent: 0\n    borrowingLimitPercent: 0\n");
	l = &cfg->levels[2];
	assert_int_equal(l->shares, 0);
	assert_int_equal(l->borrowing_limit_percent, 0);
	sl_config_free(cfg);

	/* names: dots, dashes, digits, 47 characters */
	cfg = load_ok(PLN("a.b-c.0") "  type: Exempt\n---\n"
		      PLN("a2345678901234567890123456789012345678901234567") "  type: Exempt\n");
	assert_string_equal(cfg->levels[2].name, "a.b-c.0");
	assert_int_equal(strlen(cfg->levels[3].name), 47);
	sl_config_free(cfg);

	/* labels and annotations are accepted (and ignored); anchors work */
	cfg = load_ok(API "kind: PriorityLevelConfiguration\nmetadata:\n  name: web\n"
		      "  labels: &l {team: net}\n  annotations: *l\nspec: {type: Exempt}\n");
	sl_config_free(cfg);
}

static void test_mandatory_levels(void **state)
{
	struct sl_config *cfg;
	const struct sl_level_cfg *l;

	(void)state;
	/* exempt: nominalConcurrencyShares and lendablePercent may change */
	cfg = load_ok(PLN("web") "  type: Limited\n---\n"
		      PLN("exempt") "  type: Exempt\n  exempt: {nominalConcurrencyShares: 7, lendablePercent: 40}\n");
	check_mandatory(cfg);
	assert_int_equal(cfg->n_levels, 3);
	l = &cfg->levels[0];
	assert_int_equal(l->shares, 7);
	assert_int_equal(l->lendable_percent, 40);
	assert_false(l->builtin);
	assert_string_equal(l->file, "t.yaml");
	assert_int_equal(l->line, 7);
	assert_string_equal(cfg->levels[2].name, "web"); /* file levels after the mandatory ones */
	sl_config_free(cfg);

	/* restating exempt without changes */
	cfg = load_ok(PLN("exempt") "  type: Exempt\n");
	assert_int_equal(cfg->n_levels, 2);
	assert_int_equal(cfg->levels[0].shares, 0);
	sl_config_free(cfg);

	/* exempt: nothing else may change (a limited block is the only other spot) */
	expect_one(PLN("exempt") "  type: Exempt\n  limited: {nominalConcurrencyShares: 1}\n", SL_SEV_ERROR,
		   6, 3, "PriorityLevelConfiguration/exempt", "spec.limited",
		   "only allowed when type is Limited (type is Exempt)");

	/* catch-all restated exactly as built in: fine */
	cfg = load_ok(PLN("catch-all") "  type: Limited\n  limited:\n    nominalConcurrencyShares: 5\n"
		      "    lendablePercent: 0\n    limitResponse: {type: Reject}\n");
	check_mandatory(cfg);
	assert_int_equal(cfg->n_levels, 2);
	assert_false(cfg->levels[1].builtin);
	assert_int_equal(cfg->levels[1].line, 1);
	sl_config_free(cfg);
}

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

static void test_queuing_rules_good(void **state)
{
	/* boundary cases of the entropy rule (shufflesharding.go) */
	static const struct { const char *yaml; unsigned q, h, warnings; } ok[] = {
		{ QUEUE "        queues: 1024\n        handSize: 6\n", 1024, 6, 0 },  /* 60 bits */
		{ QUEUE "        queues: 64\n        handSize: 10\n", 64, 10, 0 },   /* 60 bits */
		{ QUEUE "        queues: 1000\n        handSize: 6\n", 1000, 6, 0 },  /* ceil(59.79) */
		{ QUEUE "        queues: 1\n        handSize: 1\n", 1, 1, 0 },      /* one FIFO */
		{ QUEUE "        queues: 8\n        handSize: 8\n", 8, 8, 1 },      /* hand = deck: no isolation */
		{ QUEUE "        queues: 67108864\n        handSize: 2\n", 67108864, 2, 0 },
		{ QUEUE "        queueLengthLimit: 1\n        queueWaitLimit: 1ms\n", 64, 8, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct sl_config *cfg = load_warned(ok[i].yaml, ok[i].warnings);

		assert_int_equal(cfg->levels[2].queues, ok[i].q);
		assert_int_equal(cfg->levels[2].hand_size, ok[i].h);
		sl_config_free(cfg);
	}
}

/* Kubernetes' own parameters (Kubernetes bootstrap/default.go and the v1 defaults) get no
 * shuffle-sharding advice; poorer ones do, with the numbers. */
static void test_mouse_odds_warning(void **state)
{
	static const struct { unsigned q, h; } quiet[] = {
		{ 64, 6 }, { 16, 4 }, { 128, 6 }, { 64, 8 }, { 32, 12 },
	};
	char yaml[512];

	(void)state;
	for (size_t i = 0; i < sizeof(quiet) / sizeof(quiet[0]); i++) {
		snprintf(yaml, sizeof(yaml), QUEUE "        queues: %u\n        handSize: %u\n",
			 quiet[i].q, quiet[i].h);
		sl_config_free(load_ok(yaml));
	}
	expect_one(QUEUE "        queues: 16\n        handSize: 6\n", SL_SEV_WARNING, 11, 19, PL_OBJ,
		   QPATH "handSize",
		   "with 16 queues and handSize 6, 4 elephant flows crush a mouse flow with probability 0.342 (one elephant: 0.000125); raise queues (e.g. 64 queues: 0.000747)");
	/* handSize defaulted: the warning sits on queues */
	expect_one(QUEUE "        queues: 16\n", SL_SEV_WARNING, 10, 17, PL_OBJ, QPATH "queues",
		   "with 16 queues and handSize 8, 4 elephant flows crush a mouse flow with probability 0.");
	/* a bigger hand helps when queues are plenty */
	expect_one(QUEUE "        queues: 16\n        handSize: 1\n", SL_SEV_WARNING, 11, 19, PL_OBJ,
		   QPATH "handSize", "raise queues (e.g. 512 queues: 0.00779) or handSize");
	/* queues: 2 (two FIFOs, hand 1) is poor isolation */
	expect_one(QUEUE "        queues: 2\n        handSize: 1\n", SL_SEV_WARNING, 11, 19, PL_OBJ,
		   QPATH "handSize", "with 2 queues and handSize 1, 4 elephant flows crush a mouse flow with probability 0.938 (one elephant: 0.5)");
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
	expect_one(PLN("workload-low") "  type: Limited\n---\n"
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
		      "---\n" PLN("web") "  type: Limited\n");
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

static void test_policy_defaults(void **state)
{
	struct sl_config *cfg = load_ok(POLICY);
	const struct sl_policy_cfg *p;

	(void)state;
	assert_int_equal(cfg->n_policies, 1);
	p = &cfg->policies[0];
	assert_string_equal(p->name, "p");
	/* the ASM / blueprint defaults */
	assert_true(p->slope == -1);
	assert_true(p->min_gradient == 0.1);
	assert_true(p->max_gradient == 1);
	assert_true(p->load_multiplier_linear_increment == 0.025);
	assert_true(p->max_load_multiplier == 2);
	assert_true(p->min_load_multiplier == 0);
	assert_int_equal(p->n_selectors, 1);
	assert_string_equal(p->selectors[0].control_point, "ingress");
	assert_string_equal(p->selectors[0].service, "any");
	assert_string_equal(p->selectors[0].agent_group, "default");
	assert_int_equal(p->selectors[0].matcher.n_reqs, 0);
	assert_null(p->selectors[0].matcher.expr);
	assert_int_equal(p->n_workloads, 0);
	assert_null(p->workloads);
	assert_true(p->default_params.priority == 1);
	assert_false(p->default_params.tokens_set);
	assert_false(p->default_params.queue_timeout_set);
	assert_true(p->default_params.queue_timeout_ns == SL_QUEUE_TIMEOUT_UNSET);
	assert_false(p->workload_latency_based_tokens);
	assert_int_equal(p->signal, SL_SIGNAL_DURATION);
	assert_null(p->external_path);
	assert_int_equal(p->period_ns, 10 * SEC);
	assert_int_equal(p->signal_window_ns, 30 * SEC);
	assert_int_equal(p->baseline_window_ns, 1800 * SEC);
	assert_int_equal(p->baseline_period_ns, 30 * SEC);
	assert_true(p->tolerance == 1.25);
	assert_string_equal(p->file, "t.yaml");
	assert_int_equal(p->line, 1);
	sl_config_free(cfg);

	/* a workload's parameters default on their own */
	cfg = load_ok(SCHED "          workloads:\n          - label_matcher: {}\n");
	p = &cfg->policies[0];
	assert_int_equal(p->n_workloads, 1);
	assert_null(p->workloads[0].name);
	assert_true(p->workloads[0].params.priority == 1);
	assert_false(p->workloads[0].params.tokens_set);
	assert_true(p->workloads[0].params.queue_timeout_ns == SL_QUEUE_TIMEOUT_UNSET);
	sl_config_free(cfg);
}

static void test_policy_good_values(void **state)
{
	struct sl_config *cfg;
	const struct sl_policy_cfg *p;
	const struct sl_label_matcher *m;

	(void)state;
	/* positive slope (a signal that falls under load), equal gradients */
	cfg = load_ok(AIMD "      gradient: {slope: 0.5, min_gradient: 1, max_gradient: 1}\n"
		      "      min_load_multiplier: 1.99\n" AIMD_END
		      "  signal: {type: srtt, window: 1ms}\n  control_period: 1ms\n"
		      "  latency_baseliner: {latency_tolerance_multiplier: 1, long_term_query_interval: 1ms}\n");
	p = &cfg->policies[0];
	assert_true(p->slope == 0.5);
	assert_true(p->min_gradient == 1 && p->max_gradient == 1);
	assert_true(p->min_load_multiplier == 1.99);
	assert_int_equal(p->signal, SL_SIGNAL_SRTT);
	assert_int_equal(p->signal_window_ns, 1 * MS);
	assert_int_equal(p->period_ns, 1 * MS);
	assert_int_equal(p->baseline_window_ns, 1 * MS);
	sl_config_free(cfg);

	/* the matcher dialect: match_expressions is match_list's old name */
	cfg = load_ok(SEL "          label_matcher:\n"
		      "            match_expressions: [{key: src.ip, operator: In, values: [10.0.0.1]}]\n");
	m = &cfg->policies[0].selectors[0].matcher;
	assert_int_equal(m->n_reqs, 1);
	assert_string_equal(m->reqs[0].values[0], "10.0.0.1");
	sl_config_free(cfg);
	/* ... used only when match_list is absent */
	expect_one(SEL "          label_matcher:\n"
		   "            match_list: [{key: src.ip, operator: Exists}]\n"
		   "            match_expressions: [{key: dst.ip, operator: Exists}]\n",
		   SL_SEV_WARNING, 12, 13, POL_OBJ, SP "label_matcher.match_expressions",
		   "ignored: match_list is present (match_expressions is its deprecated alias, used only without it)");
	cfg = load_warned(SEL "          label_matcher:\n"
			  "            match_list: [{key: src.ip, operator: Exists}]\n"
			  "            match_expressions: [{key: dst.ip, operator: Exists}]\n", 1);
	m = &cfg->policies[0].selectors[0].matcher;
	assert_int_equal(m->n_reqs, 1);
	assert_string_equal(m->reqs[0].key, "src.ip");
	sl_config_free(cfg);
	/* Aperture's validator spells DoesNotExists; read it */
	cfg = load_warned(SEL "          label_matcher: {match_list: [{key: iface, operator: DoesNotExists}]}\n", 1);
	assert_int_equal(cfg->policies[0].selectors[0].matcher.reqs[0].op, SL_LM_DOES_NOT_EXIST);
	sl_config_free(cfg);
	/* the ASM documentation's example regex (a lookahead: PCRE2, not RE2) */
	cfg = load_ok(SEL "          label_matcher:\n            expression:\n"
		      "              label_matches: {label: src.ip, regex: \"^(?!.*Chrome).*Safari\"}\n");
	m = &cfg->policies[0].selectors[0].matcher;
	assert_non_null(m->expr);
	assert_int_equal(m->expr->kind, SL_LE_MATCHES);
	assert_string_equal(m->expr->label, "src.ip");
	assert_non_null(m->expr->re);
	sl_config_free(cfg);
	/* empty all/any lists are allowed (true / false) */
	cfg = load_ok(SEL "          label_matcher: {expression: {any: {}}}\n"
		      "        - label_matcher: {expression: {all: {of: []}}}\n");
	assert_int_equal(cfg->policies[0].selectors[0].matcher.expr->kind, SL_LE_ANY);
	assert_int_equal(cfg->policies[0].selectors[0].matcher.expr->n_children, 0);
	assert_int_equal(cfg->policies[0].selectors[1].matcher.expr->kind, SL_LE_ALL);
	sl_config_free(cfg);
	/* workload_latency_based_tokens on the scheduler is accepted too */
	cfg = load_ok(SCHED "          workload_latency_based_tokens: true\n");
	assert_true(cfg->policies[0].workload_latency_based_tokens);
	sl_config_free(cfg);
	/* an empty matcher matches all: workloads after it are dead */
	expect_one(SCHED "          workloads:\n          - {name: a, label_matcher: {}}\n"
		   "          - {name: b, label_matcher: {match_labels: {dst.port: \"1\"}}}\n",
		   SL_SEV_WARNING, 11, 38, POL_OBJ, SCP "workloads[0].label_matcher",
		   "an empty label_matcher matches every connection, so the workloads after this one are never used");
	/* a queue_timeout longer than SYN retries last */
	expect_one(SCHED "          default_workload_parameters: {queue_timeout: 2m}\n", SL_SEV_WARNING, 10, 56,
		   POL_OBJ, SCP "default_workload_parameters.queue_timeout",
		   "2m is longer than Linux clients keep retrying a connection");
	sl_config_free(load_ok(SCHED "          default_workload_parameters: {queue_timeout: 63s}\n"));
	/* advice on windows and tolerance */
	expect_one(POLICY "  latency_baseliner: {long_term_query_interval: 10s}\n", SL_SEV_WARNING, 9, 49,
		   POL_OBJ, "spec.latency_baseliner.long_term_query_interval",
		   "the baseline window (10s) is shorter than the signal window (30s)");
	expect_one(POLICY "  latency_baseliner: {latency_tolerance_multiplier: 0.9}\n", SL_SEV_WARNING, 9, 53,
		   POL_OBJ, "spec.latency_baseliner.latency_tolerance_multiplier",
		   "0.9 is below 1: latency counts as overloaded whenever it is at its own long-term mean");
}

static void test_expression_depth_and_aliases(void **state)
{
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	/* a recursive alias: the decoder stops at its depth limit */
	assert_int_equal(load(SEL "          label_matcher: {expression: &e {not: *e}}\n", &cfg, &d), -EINVAL);
	assert_null(cfg);
	assert_true(d.n_errors >= 1);
	assert_non_null(strstr(d.items[0].message, "expressions nest deeper than 32 levels"));
	sl_diags_free(&d);

	/* rules x CIDRs multiplied through aliases */
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	fprintf(f, API "kind: ConnectionLabels\nmetadata: {name: bomb}\nspec:\n  rules:\n"
		   "  - &r {sources: &s [");
	for (int k = 0; k < 2000; k++)
		fprintf(f, "%s10.0.0.0/8", k ? ", " : "");
	fprintf(f, "], labels: {a: b}}\n");
	for (int k = 0; k < 1100; k++)
		fprintf(f, "  - *r\n");
	fclose(f);
	assert_int_equal(sl_config_load_buffer("t.yaml", buf, len, &cfg, &d), -EINVAL);
	assert_int_equal(d.n_errors, 1);
	assert_non_null(strstr(d.items[0].message, "expands to more than 1048576 list items"));
	sl_diags_free(&d);
	free(buf);
}

/* ---- warnings ------------------------------------------------------------------ */

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
		   "2m is longer than Linux clients keep retrying a connection");
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
	expect_one(SRV "  failMode: closed\n  heartbeatTimeout: 0s\n", SL_SEV_WARNING, 5, 13,
		   SRV_OBJ, "spec.failMode",
		   "failMode closed has no effect while heartbeatTimeout is 0s");
	/* good counterparts: no warning */
	sl_config_free(load_ok(SRV "  tick: 1s\n  heartbeatTimeout: 2s\n"));
	sl_config_free(load_ok(SRV "  failMode: closed\n"));
	sl_config_free(load_ok(QUEUE "        queueWaitLimit: 63s\n"));
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
	check_diag(&d.items[0], SL_SEV_ERROR, 18, 9, PL_OBJ, "metadata.name", where);
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
		"\"message\": \"invalid value 'op\\\"en\\\\n'; did you mean 'open'? (allowed: open, closed)\"}\n"
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
	assert_int_equal(load(PL "  type: Limited\n", NULL, &d), 0);
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
	struct sl_config *cfg = load_ok(PLN("web") "  type: Limited\n---\n" PLN("api") "  type: Exempt\n");

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
	assert_int_equal(cfg->levels[3].line, 7);
	assert_string_equal(cfg->levels[3].file, "t.yaml");
	sl_config_free(cfg);
	sl_config_free(NULL);
}

/* ---- durations ------------------------------------------------------------------------ */

static void test_parse_duration_good(void **state)
{
	static const struct { const char *s; uint64_t ns; } good[] = {
		{ "0s", 0 },
		{ "+5s", 5 * SEC },
		{ "1ns", 1 },
		{ "1us", 1000 },
		{ "1\xc2\xb5s", 1000 },   /* U+00B5 micro sign */
		{ "1\xce\xbcs", 1000 },   /* U+03BC greek mu */
		{ "250ms", 250 * MS },
		{ "5s", 5 * SEC },
		{ "1m", 60 * SEC },
		{ "1m30s", 90 * SEC },
		{ "2h", 7200 * SEC },
		{ "1.5s", 1500 * MS },
		{ "1.5h", 5400 * SEC },
		{ ".5s", 500 * MS },
		{ "5.s", 5 * SEC },
		{ "0.1s", 100 * MS },
		{ "1h2m3s4ms5us6ns", 3723004005006ULL },
		{ "100ms100ms", 200 * MS },
		{ "1.0000000001s", 1 * SEC },
		{ "2562047h47m16.854775807s", 9223372036854775807ULL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		uint64_t ns = 12345;
		int r = sl_parse_duration(good[i].s, &ns);

		if (r || ns != good[i].ns)
			fprintf(stderr, "duration '%s': r=%d ns=%llu\n", good[i].s, r,
				(unsigned long long)ns);
		assert_int_equal(r, 0);
		assert_int_equal(ns, good[i].ns);
	}
}

static void test_parse_duration_bad(void **state)
{
	static const struct { const char *s; int r; } bad[] = {
		{ "", -EINVAL },
		{ "5", -EINVAL },   /* needs a unit */
		{ "0", -EINVAL },
		{ "1.5", -EINVAL },
		{ "-1s", -EINVAL },
		{ "-0s", -EINVAL },
		{ "+", -EINVAL },
		{ "5x", -EINVAL },
		{ "1S", -EINVAL },
		{ "1sec", -EINVAL },
		{ "s", -EINVAL },
		{ "ms5", -EINVAL },
		{ "1m30", -EINVAL },
		{ "5 s", -EINVAL },
		{ " 5s", -EINVAL },
		{ "5s ", -EINVAL },
		{ ".s", -EINVAL },
		{ "1..5s", -EINVAL },
		{ "abc", -EINVAL },
		{ "2562047h47m16.854775808s", -ERANGE },
		{ "9999999999h", -ERANGE },
		{ "99999999999999999999ns", -ERANGE },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t ns = 777;
		int r = sl_parse_duration(bad[i].s, &ns);

		if (r != bad[i].r)
			fprintf(stderr, "duration '%s': r=%d\n", bad[i].s, r);
		assert_int_equal(r, bad[i].r);
		assert_int_equal(ns, 777); /* untouched */
	}
	assert_int_equal(sl_parse_duration(NULL, &(uint64_t){ 0 }), -EINVAL);
}

static void test_format_duration(void **state)
{
	static const struct { uint64_t ns; const char *s; } t[] = {
		{ 0, "0s" }, { 1, "1ns" }, { 1500, "1.5us" }, { 250 * MS, "250ms" },
		{ 1500 * MS, "1.5s" }, { 90 * SEC, "1m30s" }, { 7200 * SEC, "2h" },
		{ 3601 * SEC, "1h1s" }, { 1 * SEC + 5, "1.000000005s" },
	};
	char buf[64];

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint64_t back = 0;

		sl_format_duration(t[i].ns, buf, sizeof(buf));
		assert_string_equal(buf, t[i].s);
		assert_int_equal(sl_parse_duration(buf, &back), 0);
		assert_int_equal(back, t[i].ns);
	}
}

static void test_duration_field_messages(void **state)
{
	(void)state;
	expect_one(SRV "  tick: 1m30\n", SL_SEV_ERROR, 5, 9, SRV_OBJ, "spec.tick",
		   "duration '1m30' needs a unit after the last number");
	expect_one(SRV "  tick: 1.5\n", SL_SEV_ERROR, 5, 9, SRV_OBJ, "spec.tick",
		   "duration 1.5 needs a unit, e.g. 1.5s");
	expect_one(SRV "  tick: \"\"\n", SL_SEV_ERROR, 5, 9, SRV_OBJ, "spec.tick",
		   "duration '' is empty");
	expect_one(SRV "  tick: fast\n", SL_SEV_ERROR, 5, 9, SRV_OBJ, "spec.tick",
		   "duration 'fast' is not a duration; expected a number and a unit, e.g. 5s or 1m30s");
	/* quoted is fine: durations are strings */
	sl_config_free(load_ok(SRV "  tick: \"250ms\"\n  heartbeatTimeout: '1.5s'\n"));
}

/* ---- yaml_doc ----------------------------------------------------------------------------- */

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

/* Server spec.shadow: a boolean, false unless given. */
static void test_server_shadow(void **state)
{
	static const char yaml[] = "apiVersion: sluice/v1\nkind: Server\nmetadata: {name: s}\n"
				   "spec: {shadow: true, ticketOverbooking: 4.5}\n";
	struct sl_config *cfg = NULL;

	(void)state;
	assert_int_equal(sl_config_load_buffer("t.yaml", yaml, sizeof(yaml) - 1, &cfg, NULL), 0);
	assert_true(cfg->server.shadow);
	assert_true(cfg->server.ticket_overbooking == 4.5);
	sl_config_free(cfg);
	assert_int_equal(sl_config_load_buffer("t.yaml", "", 0, &cfg, NULL), 0);
	assert_false(cfg->server.shadow);
	assert_true(cfg->server.ticket_overbooking == 1);
	sl_config_free(cfg);
}

/* Server spec.heldSyns: byte budgets for held SYN frames, 8 and 4 MiB
 * unless given, bounded, unknown keys refused. */
static void test_server_held_syns(void **state)
{
	static const char yaml[] = "apiVersion: sluice/v1\nkind: Server\nmetadata: {name: s}\n"
				   "spec:\n  heldSyns: {maxBytes: 1000000, maxBytesPerLevel: 250000}\n";
	static const char bad[] = "apiVersion: sluice/v1\nkind: Server\nmetadata: {name: s}\n"
				  "spec: {heldSyns: {maxBytes: -1, budget: 3}}\n";
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;

	(void)state;
	assert_int_equal(sl_config_load_buffer("t.yaml", yaml, sizeof(yaml) - 1, &cfg, &d), 0);
	assert_int_equal(cfg->server.held_syns.max_bytes, 1000000);
	assert_int_equal(cfg->server.held_syns.max_bytes_per_level, 250000);
	assert_int_equal(d.count, 0);
	sl_config_free(cfg);
	assert_int_equal(sl_config_load_buffer("t.yaml", "", 0, &cfg, NULL), 0);
	assert_int_equal(cfg->server.held_syns.max_bytes, 8u << 20);
	assert_int_equal(cfg->server.held_syns.max_bytes_per_level, 4u << 20);
	sl_config_free(cfg);
	assert_int_equal(sl_config_load_buffer("t.yaml", bad, sizeof(bad) - 1, &cfg, &d), -EINVAL);
	assert_int_equal(sl_diags_error_count(&d), 2);
	sl_diags_free(&d);
}

/* metricsAddress forms that parse, with the socket address they give. */
static void test_hostport(void **state)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
	socklen_t len;
	char why[128];

	(void)state;
	assert_int_equal(sl_parse_hostport("127.0.0.1:9464", &ss, &len, why, sizeof(why)), 0);
	assert_int_equal(a4->sin_family, AF_INET);
	assert_int_equal(ntohs(a4->sin_port), 9464);
	assert_int_equal(ntohl(a4->sin_addr.s_addr), 0x7f000001);
	assert_int_equal(len, sizeof(*a4));
	assert_int_equal(sl_parse_hostport("[::1]:1", &ss, &len, why, sizeof(why)), 0);
	assert_int_equal(a6->sin6_family, AF_INET6);
	assert_int_equal(ntohs(a6->sin6_port), 1);
	assert_int_equal(a6->sin6_addr.s6_addr[15], 1);
	assert_int_equal(sl_parse_hostport("[::]:65535", &ss, &len, why, sizeof(why)), 0);
	assert_int_equal(sl_parse_hostport("0.0.0.0:0", &ss, &len, why, sizeof(why)), -EINVAL);
	assert_int_equal(sl_parse_hostport("[::1]", &ss, &len, why, sizeof(why)), -EINVAL);
	assert_int_equal(sl_parse_hostport("1.2.3.4:80x", &ss, &len, why, sizeof(why)), -EINVAL);
	assert_int_equal(sl_parse_hostport(":80", &ss, &len, why, sizeof(why)), -EINVAL);
}

int main(void)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(test_hostport),
		cmocka_unit_test(test_server_shadow),
		cmocka_unit_test(test_server_held_syns),
		cmocka_unit_test(test_empty_buffer_defaults),
		cmocka_unit_test(test_null_buffer),
		cmocka_unit_test(test_empty_and_comment_files),
		cmocka_unit_test(test_empty_documents_skipped),
		cmocka_unit_test(test_any_subset_is_valid),
		cmocka_unit_test(test_server_empty_spec_defaults),
		cmocka_unit_test(test_good_full_fixture),
		cmocka_unit_test(test_default_config_loads),
		cmocka_unit_test(test_server_boundaries_good),
		cmocka_unit_test(test_level_defaults),
		cmocka_unit_test(test_level_good_values),
		cmocka_unit_test(test_mandatory_levels),
		cmocka_unit_test(test_mandatory_schemas),
		cmocka_unit_test(test_queuing_rules_good),
		cmocka_unit_test(test_mouse_odds_warning),
		cmocka_unit_test(test_flow_schema_defaults),
		cmocka_unit_test(test_flow_schema_sorting),
		cmocka_unit_test(test_dangling_flow_schema),
		cmocka_unit_test(test_subjects_and_destinations_good),
		cmocka_unit_test(test_connection_labels),
		cmocka_unit_test(test_label_refs),
		cmocka_unit_test(test_policy_defaults),
		cmocka_unit_test(test_policy_good_values),
		cmocka_unit_test(test_expression_depth_and_aliases),
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
		cmocka_unit_test(test_parse_duration_good),
		cmocka_unit_test(test_parse_duration_bad),
		cmocka_unit_test(test_format_duration),
		cmocka_unit_test(test_duration_field_messages),
		cmocka_unit_test(test_yaml_scalar_resolution),
		cmocka_unit_test(test_yaml_documents_and_quote),
	};
	enum { N_FIXED = sizeof(fixed) / sizeof(fixed[0]),
	       N_BAD = sizeof(bad_cases) / sizeof(bad_cases[0]) };
	static struct CMUnitTest tests[N_FIXED + N_BAD];

	for (size_t i = 0; i < N_FIXED; i++)
		tests[i] = fixed[i];
	for (size_t i = 0; i < N_BAD; i++)
		tests[N_FIXED + i] = (struct CMUnitTest){
			.name = bad_cases[i].name,
			.test_func = run_bad_case,
			.initial_state = (void *)(uintptr_t)&bad_cases[i],
		};
	return _cmocka_run_group_tests("config", tests, N_FIXED + N_BAD, NULL, NULL);
}
