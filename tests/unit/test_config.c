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
#include <grp.h>
#include <sys/wait.h>

#include "config.h"
#include "diag.h"
#include "yaml_doc.h"

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
	  "Deployment/x", "kind", "unknown kind 'Deployment' (known kinds: Server, PriorityLevelConfiguration)" },
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
	  "spec.tableSizes.conns", "unknown field 'conns' (known fields: connections)" },
	{ "bad_server_table_typo", SRV "  tableSizes: {conections: 2048}\n", 5, 16, SRV_OBJ,
	  "spec.tableSizes.conections", "unknown field 'conections'; did you mean 'connections'?" },
	{ "bad_server_table_not_map", SRV "  tableSizes: 2048\n", 5, 15, SRV_OBJ,
	  "spec.tableSizes", "expected a mapping, got integer 2048" },
	{ "bad_server_metrics_type", SRV "  metricsAddress: 9464\n", 5, 19, SRV_OBJ,
	  "spec.metricsAddress", "expected a string, got integer 9464" },
	{ "bad_server_metrics_empty", SRV "  metricsAddress: \"\"\n", 5, 19, SRV_OBJ,
	  "spec.metricsAddress", "must not be empty" },
	{ "bad_server_events_negative", SRV "  eventsPerSecond: -5\n", 5, 20, SRV_OBJ,
	  "spec.eventsPerSecond", "must be at least 0, got -5" },
	{ "bad_server_unknown_field_case", SRV "  failmode: open\n", 5, 3, SRV_OBJ,
	  "spec.failmode", "unknown field 'failmode'; did you mean 'failMode'?" },
	{ "bad_server_unknown_field_typo", SRV "  heartbeatTimout: 1s\n", 5, 3, SRV_OBJ,
	  "spec.heartbeatTimout", "did you mean 'heartbeatTimeout'?" },
	{ "bad_server_unknown_field_list", SRV "  colour: blue\n", 5, 3, SRV_OBJ, "spec.colour",
	  "unknown field 'colour' (known fields: serverConcurrencyLimit, failMode, heartbeatTimeout, tick, handshakeTimeout, interfaces, pinDir, tableSizes, metricsAddress, eventsPerSecond)" },
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
	{ "bad_level_missing_type", PL "  ports: [80]\n", 5, 3, PL_OBJ, "spec.type",
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

	/* seatsPerConnection, ports */
	{ "bad_seats_zero", PL "  type: Limited\n  seatsPerConnection: 0\n", 6, 23, PL_OBJ,
	  "spec.seatsPerConnection", "must be between 1 and 100, got 0" },
	{ "bad_seats_high", PL "  type: Limited\n  seatsPerConnection: 101\n", 6, 23, PL_OBJ,
	  "spec.seatsPerConnection", "must be between 1 and 100, got 101" },
	{ "bad_ports_not_list", PL "  type: Limited\n  ports: 80\n", 6, 10, PL_OBJ, "spec.ports",
	  "expected a list of ports and port ranges (e.g. [80, \"9000-9100\"]), got integer 80" },
	{ "bad_port_zero", PL "  type: Limited\n  ports: [80, 0]\n", 6, 15, PL_OBJ, "spec.ports[1]",
	  "port 0 is out of range; ports are 1..65535" },
	{ "bad_port_high", PL "  type: Limited\n  ports: [65536]\n", 6, 11, PL_OBJ, "spec.ports[0]",
	  "port 65536 is out of range; ports are 1..65535" },
	{ "bad_port_range_high", PL "  type: Limited\n  ports: [\"65000-70000\"]\n", 6, 11, PL_OBJ,
	  "spec.ports[0]", "port range '65000-70000' is out of range; ports are 1..65535" },
	{ "bad_port_range_reversed", PL "  type: Limited\n  ports: [9100-9000]\n", 6, 11, PL_OBJ,
	  "spec.ports[0]", "port range '9100-9000' is reversed; write \"9000-9100\"" },
	{ "bad_port_name", PL "  type: Limited\n  ports: [http]\n", 6, 11, PL_OBJ, "spec.ports[0]",
	  "expected a port (1..65535) or a port range like \"9000-9100\", got string 'http'" },
	{ "bad_port_float", PL "  type: Limited\n  ports: [80.5]\n", 6, 11, PL_OBJ, "spec.ports[0]",
	  "got float 80.5" },
	{ "bad_port_overlap_levels",
	  PLN("web") "  type: Limited\n  ports: [80, 443]\n---\n" PLN("api") "  type: Limited\n  ports: [8443, 443]\n",
	  13, 17, "PriorityLevelConfiguration/api", "spec.ports[1]",
	  "port 443 already belongs to PriorityLevelConfiguration/web (listed at t.yaml:6:15); a port may belong to at most one level" },
	{ "bad_port_overlap_range",
	  PLN("web") "  type: Limited\n  ports: [\"9000-9100\"]\n---\n" PLN("api") "  type: Exempt\n  ports: [\"8990-9000\"]\n",
	  13, 11, "PriorityLevelConfiguration/api", "spec.ports[0]",
	  "port range 8990-9000 includes port 9000, which already belongs to PriorityLevelConfiguration/web (listed at t.yaml:6:11)" },
	{ "bad_ports_table_full", PL "  type: Limited\n  ports: [\"1-1024\", 2000]\n", 6, 21, PL_OBJ,
	  "spec.ports[1]", "port 2000 brings the number of protected ports above 1024, the size of the port table" },
	{ "bad_duplicate_level_name",
	  PLN("web") "  type: Limited\n---\n" PLN("web") "  type: Exempt\n", 9, 18, PL_OBJ,
	  "metadata.name", "duplicate PriorityLevelConfiguration name 'web'; also defined at t.yaml:3:18" },

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
	assert_null(cfg->server.metrics_address);
	assert_int_equal(cfg->server.events_per_second, 1000);
	assert_null(cfg->server.file);
	assert_int_equal(cfg->n_levels, 0);
	assert_string_equal(cfg->source_file, "t.yaml");
	sl_config_free(cfg);
}

static void test_null_buffer(void **state)
{
	struct sl_config *cfg = NULL;

	(void)state;
	assert_int_equal(sl_config_load_buffer("none", NULL, 0, &cfg, NULL), 0);
	assert_non_null(cfg);
	assert_int_equal(cfg->n_levels, 0);
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
		assert_int_equal(cfg->n_levels, 0);
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
	assert_int_equal(cfg->n_levels, 1);
	assert_string_equal(cfg->levels[0].name, "web");
	assert_int_equal(cfg->levels[0].line, 5);
	sl_config_free(cfg);

	cfg = load_ok("---\n---\n...\n---\n# nothing\n");
	assert_int_equal(cfg->n_levels, 0);
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
	cfg = load_ok(SRV "  tick:\n  failMode: ~\n");
	assert_true(cfg->server.present);
	assert_int_equal(cfg->server.tick_ns, 100 * MS);
	assert_int_equal(cfg->server.fail_mode, SL_FAIL_OPEN);
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
	assert_string_equal(cfg->server.metrics_address, "127.0.0.1:9464");
	assert_int_equal(cfg->server.events_per_second, 0);
	assert_string_equal(cfg->server.file, path);
	assert_int_equal(cfg->server.line, 2);

	assert_int_equal(cfg->n_levels, 3);
	/* file order */
	assert_string_equal(cfg->levels[0].name, "exempt");
	assert_string_equal(cfg->levels[1].name, "web");
	assert_string_equal(cfg->levels[2].name, "batch.jobs");

	l = &cfg->levels[0];
	assert_int_equal(l->type, SL_LEVEL_EXEMPT);
	assert_int_equal(l->shares, 5);
	assert_int_equal(l->lendable_percent, 10);
	assert_int_equal(l->borrowing_limit_percent, -1);
	assert_int_equal(l->n_ports, 1);
	assert_int_equal(l->ports[0].lo, 22);
	assert_int_equal(l->ports[0].hi, 22);
	assert_string_equal(l->file, path);
	assert_int_equal(l->line, 21);
	assert_int_equal(l->column, 1);

	l = &cfg->levels[1];
	assert_int_equal(l->type, SL_LEVEL_LIMITED);
	assert_int_equal(l->shares, 40);
	assert_int_equal(l->lendable_percent, 25);
	assert_int_equal(l->borrowing_limit_percent, 200);
	assert_int_equal(l->limit_response, SL_RESP_QUEUE);
	assert_int_equal(l->queues, 128);
	assert_int_equal(l->hand_size, 6);
	assert_int_equal(l->queue_length_limit, 20);
	assert_int_equal(l->queue_wait_limit_ns, 5 * SEC);
	assert_int_equal(l->seats_per_conn, 2);
	assert_int_equal(l->n_ports, 3);
	assert_int_equal(l->ports[0].lo, 80);
	assert_int_equal(l->ports[1].lo, 443);
	assert_int_equal(l->ports[2].lo, 8000);
	assert_int_equal(l->ports[2].hi, 8099);
	assert_int_equal(l->line, 32);

	l = &cfg->levels[2];
	assert_int_equal(l->type, SL_LEVEL_LIMITED);
	assert_int_equal(l->shares, 10);
	assert_int_equal(l->limit_response, SL_RESP_REJECT);
	assert_int_equal(l->queues, 0);
	assert_int_equal(l->queue_wait_limit_ns, 0);
	assert_int_equal(l->ports[0].lo, 9000);
	assert_int_equal(l->ports[0].hi, 9010);

	sl_config_free(cfg);
	sl_diags_free(&d);
}

static void test_server_boundaries_good(void **state)
{
	struct sl_config *cfg;

	(void)state;
	cfg = load_ok(SRV "  serverConcurrencyLimit: 1\n  tick: 1ms\n  heartbeatTimeout: 0s\n"
		      "  handshakeTimeout: 1ms\n  tableSizes: {connections: 1024}\n"
		      "  eventsPerSecond: 4294967295\n  interfaces: [abcdefghijklmno]\n");
	assert_int_equal(cfg->server.server_concurrency_limit, 1);
	assert_int_equal(cfg->server.tick_ns, 1 * MS);
	assert_int_equal(cfg->server.heartbeat_timeout_ns, 0);
	assert_int_equal(cfg->server.handshake_timeout_ns, 1 * MS);
	assert_int_equal(cfg->server.table_sizes.connections, 1024);
	assert_int_equal(cfg->server.events_per_second, 4294967295u);
	assert_string_equal(cfg->server.interfaces[0], "abcdefghijklmno");
	sl_config_free(cfg);

	cfg = load_ok(SRV "  serverConcurrencyLimit: 2147483647\n  tick: 10s\n  heartbeatTimeout: 24h\n"
		      "  handshakeTimeout: 24h\n  tableSizes: {connections: 16777216}\n"
		      "  failMode: open\n  interfaces: []\n  pinDir: /\n");
	assert_int_equal(cfg->server.server_concurrency_limit, 2147483647);
	assert_int_equal(cfg->server.tick_ns, 10 * SEC);
	assert_int_equal(cfg->server.heartbeat_timeout_ns, 24 * 3600 * SEC);
	assert_int_equal(cfg->server.table_sizes.connections, 16777216);
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
	l = &cfg->levels[0];
	assert_string_equal(l->name, "web");
	assert_int_equal(l->type, SL_LEVEL_LIMITED);
	assert_int_equal(l->shares, 30);
	assert_int_equal(l->lendable_percent, 0);
	assert_int_equal(l->borrowing_limit_percent, -1);
	assert_int_equal(l->limit_response, SL_RESP_REJECT);
	assert_int_equal(l->queues, 0);
	assert_int_equal(l->hand_size, 0);
	assert_int_equal(l->queue_length_limit, 0);
	assert_int_equal(l->seats_per_conn, 1);
	assert_int_equal(l->n_ports, 0);
	assert_null(l->ports);
	sl_config_free(cfg);

	/* limited: null and limitResponse: null are absent too */
	cfg = load_ok(PL "  type: Limited\n  limited:\n");
	assert_int_equal(cfg->levels[0].shares, 30);
	sl_config_free(cfg);
	cfg = load_ok(PL "  type: Limited\n  limited: {limitResponse: ~}\n");
	assert_int_equal(cfg->levels[0].limit_response, SL_RESP_REJECT);
	sl_config_free(cfg);

	/* Exempt: shares 0 */
	cfg = load_ok(PL "  type: Exempt\n");
	l = &cfg->levels[0];
	assert_int_equal(l->type, SL_LEVEL_EXEMPT);
	assert_int_equal(l->shares, 0);
	assert_int_equal(l->lendable_percent, 0);
	assert_int_equal(l->borrowing_limit_percent, -1);
	sl_config_free(cfg);

	/* Queue without a queuing block: Kubernetes defaults */
	cfg = load_ok(PL "  type: Limited\n  limited: {limitResponse: {type: Queue}}\n");
	l = &cfg->levels[0];
	assert_int_equal(l->limit_response, SL_RESP_QUEUE);
	assert_int_equal(l->queues, 64);
	assert_int_equal(l->hand_size, 8);
	assert_int_equal(l->queue_length_limit, 50);
	assert_int_equal(l->queue_wait_limit_ns, 15 * SEC);
	sl_config_free(cfg);

	/* partial queuing block: the rest defaults */
	cfg = load_ok(QUEUE "        queues: 16\n");
	l = &cfg->levels[0];
	assert_int_equal(l->queues, 16);
	assert_int_equal(l->hand_size, 8);
	assert_int_equal(l->queue_length_limit, 50);
	sl_config_free(cfg);
}

static void test_level_good_values(void **state)
{
	struct sl_config *cfg;
	const struct sl_level_cfg *l;

	(void)state;
	cfg = load_ok(PL "  type: Exempt\n  exempt: {nominalConcurrencyShares: 0, lendablePercent: 100}\n"
		      "  seatsPerConnection: 100\n");
	l = &cfg->levels[0];
	assert_int_equal(l->lendable_percent, 100);
	assert_int_equal(l->seats_per_conn, 100);
	sl_config_free(cfg);

	cfg = load_ok(PL "  type: Limited\n  limited:\n    nominalConcurrencyShares: 0\n"
		      "    lendablePercent: 0\n    borrowingLimitPercent: 0\n  seatsPerConnection: 1\n");
	l = &cfg->levels[0];
	assert_int_equal(l->shares, 0);
	assert_int_equal(l->borrowing_limit_percent, 0);
	sl_config_free(cfg);

	/* names: dots, dashes, digits, 47 characters */
	cfg = load_ok(PLN("a.b-c.0") "  type: Exempt\n---\n"
		      PLN("a2345678901234567890123456789012345678901234567") "  type: Exempt\n");
	assert_string_equal(cfg->levels[0].name, "a.b-c.0");
	assert_int_equal(strlen(cfg->levels[1].name), 47);
	sl_config_free(cfg);

	/* labels and annotations are accepted (and ignored); anchors work */
	cfg = load_ok(API "kind: PriorityLevelConfiguration\nmetadata:\n  name: web\n"
		      "  labels: &l {team: net}\n  annotations: *l\nspec: {type: Exempt}\n");
	sl_config_free(cfg);
}

static void test_queuing_rules_good(void **state)
{
	/* boundary cases of the entropy rule (spec/apf.md 2.2) */
	static const struct { const char *yaml; unsigned q, h; } ok[] = {
		{ QUEUE "        queues: 1024\n        handSize: 6\n", 1024, 6 },  /* 60 bits */
		{ QUEUE "        queues: 64\n        handSize: 10\n", 64, 10 },   /* 60 bits */
		{ QUEUE "        queues: 1000\n        handSize: 6\n", 1000, 6 },  /* ceil(59.79) */
		{ QUEUE "        queues: 1\n        handSize: 1\n", 1, 1 },
		{ QUEUE "        queues: 8\n        handSize: 8\n", 8, 8 },      /* hand = deck */
		{ QUEUE "        queues: 67108864\n        handSize: 2\n", 67108864, 2 },
		{ QUEUE "        queueLengthLimit: 1\n        queueWaitLimit: 1ms\n", 64, 8 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct sl_config *cfg = load_ok(ok[i].yaml);

		assert_int_equal(cfg->levels[0].queues, ok[i].q);
		assert_int_equal(cfg->levels[0].hand_size, ok[i].h);
		sl_config_free(cfg);
	}
}

static void test_ports_good(void **state)
{
	struct sl_config *cfg;
	const struct sl_level_cfg *l;

	(void)state;
	cfg = load_ok(PL "  type: Limited\n  ports: [1, 65535, \"8080\", 9000-9100, \"7000 - 7001\", 0x50]\n---\n"
		      PLN("api") "  type: Limited\n  ports: [9101, 8999]\n");
	l = &cfg->levels[0];
	assert_int_equal(l->n_ports, 6);
	assert_int_equal(l->ports[0].lo, 1);
	assert_int_equal(l->ports[1].hi, 65535);
	assert_int_equal(l->ports[2].lo, 8080);
	assert_int_equal(l->ports[2].hi, 8080);
	assert_int_equal(l->ports[3].lo, 9000);
	assert_int_equal(l->ports[3].hi, 9100);
	assert_int_equal(l->ports[4].lo, 7000);
	assert_int_equal(l->ports[4].hi, 7001);
	assert_int_equal(l->ports[5].lo, 80);
	assert_int_equal(cfg->levels[1].n_ports, 2);
	sl_config_free(cfg);

	/* exactly a full port table */
	cfg = load_ok(PL "  type: Limited\n  ports: [\"1-1000\"]\n---\n"
		      PLN("api") "  type: Limited\n  ports: [\"1001-1024\"]\n");
	sl_config_free(cfg);
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
	assert_int_equal(sl_diags_warning_count(&d), 3);
	check_diag(&d.items[0], SL_SEV_WARNING, 7, 21, SRV_OBJ, "spec.heartbeatTimeout",
		   "heartbeatTimeout 1.5s is shorter than two ticks (tick 1s)");
	check_diag(&d.items[1], SL_SEV_WARNING, 17, 33, PL_OBJ, QPATH "queueWaitLimit",
		   "2m is longer than Linux clients keep retrying a connection");
	snprintf(where, sizeof(where), "also listed at %s:18:11", path);
	check_diag(&d.items[2], SL_SEV_WARNING, 18, 15, PL_OBJ, "spec.ports[1]", where);
	assert_int_equal(cfg->levels[0].n_ports, 2);
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
	expect_one(PL "  type: Limited\n  ports: [\"80-90\", 85]\n", SL_SEV_WARNING, 6, 20, PL_OBJ,
		   "spec.ports[1]", "port 85 is listed twice for this level (also listed at t.yaml:6:11)");
	expect_one(PL "  type: Limited\n  ports: [85, \"80-90\"]\n", SL_SEV_WARNING, 6, 15, PL_OBJ,
		   "spec.ports[1]", "port range 80-90 overlaps port 85, also listed for this level at t.yaml:6:11");
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
	check_diag(&d.items[2], SL_SEV_ERROR, 15, 23, PL_OBJ, "spec.seatsPerConnection",
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
}

static void test_port_overlap_fixture(void **state)
{
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;
	char path[512], m1[800], m2[800];

	(void)state;
	fixture(path, sizeof(path), "bad-port-overlap.yaml");
	assert_int_equal(sl_config_load_file(path, &cfg, &d), -EINVAL);
	assert_int_equal(d.count, 2);
	snprintf(m1, sizeof(m1),
		 "port range 8080-8090 includes port 8080, which already belongs to PriorityLevelConfiguration/web (listed at %s:7:20)",
		 path);
	snprintf(m2, sizeof(m2),
		 "port 443 already belongs to PriorityLevelConfiguration/web (listed at %s:7:15)", path);
	/* the diagnostic's object names one level, its message the other */
	check_diag(&d.items[0], SL_SEV_ERROR, 17, 7, "PriorityLevelConfiguration/api", "spec.ports[1]", m1);
	check_diag(&d.items[1], SL_SEV_ERROR, 18, 7, "PriorityLevelConfiguration/api", "spec.ports[2]", m2);
	sl_diags_free(&d);
}

static void test_overlap_names_invalid_level(void **state)
{
	/* a level with an invalid name is still named in a later conflict */
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;

	(void)state;
	assert_int_equal(load(PLN("Web") "  type: Limited\n  ports: [80]\n---\n"
			      PLN("api") "  type: Limited\n  ports: [80]\n", &cfg, &d), -EINVAL);
	assert_int_equal(d.count, 2);
	check_diag(&d.items[1], SL_SEV_ERROR, 13, 11, "PriorityLevelConfiguration/api", "spec.ports[0]",
		   "already belongs to PriorityLevelConfiguration/Web (listed at t.yaml:6:11)");
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
	for (int i = 0; i <= SL_MAX_LEVELS; i++) /* 65 levels, 5 lines each */
		fprintf(f, "%s" API "kind: PriorityLevelConfiguration\nmetadata: {name: l%d}\nspec: {type: Exempt}\n",
			i ? "---\n" : "", i);
	fclose(f);
	assert_int_equal(sl_config_load_buffer("t.yaml", buf, len, &cfg, &d), -EINVAL);
	assert_int_equal(d.count, 1);
	check_diag(&d.items[0], SL_SEV_ERROR, 64 * 5 + 2, 7, "PriorityLevelConfiguration/l64", "kind",
		   "too many PriorityLevelConfiguration objects; at most 64 are supported");
	sl_diags_free(&d);
	free(buf);

	/* 64 is fine */
	f = open_memstream(&buf, &len);
	for (int i = 0; i < SL_MAX_LEVELS; i++)
		fprintf(f, "---\n" API "kind: PriorityLevelConfiguration\nmetadata: {name: l%d}\nspec: {type: Exempt}\n", i);
	fclose(f);
	assert_int_equal(sl_config_load_buffer("t.yaml", buf, len, &cfg, NULL), 0);
	assert_int_equal(cfg->n_levels, SL_MAX_LEVELS);
	assert_string_equal(cfg->levels[63].name, "l63");
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
		assert_int_equal(a->levels[i].n_ports, b->levels[i].n_ports);
		assert_int_equal(a->levels[i].line, b->levels[i].line);
	}
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
	assert_ptr_equal(sl_config_find_level(cfg, "api"), &cfg->levels[1]);
	assert_ptr_equal(sl_config_find_level(cfg, "web"), &cfg->levels[0]);
	assert_null(sl_config_find_level(cfg, "nope"));
	assert_null(sl_config_find_level(cfg, NULL));
	assert_null(sl_config_find_level(NULL, "web"));
	assert_int_equal(cfg->levels[1].line, 7);
	assert_string_equal(cfg->levels[1].file, "t.yaml");
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

int main(void)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(test_empty_buffer_defaults),
		cmocka_unit_test(test_null_buffer),
		cmocka_unit_test(test_empty_and_comment_files),
		cmocka_unit_test(test_empty_documents_skipped),
		cmocka_unit_test(test_server_empty_spec_defaults),
		cmocka_unit_test(test_good_full_fixture),
		cmocka_unit_test(test_server_boundaries_good),
		cmocka_unit_test(test_level_defaults),
		cmocka_unit_test(test_level_good_values),
		cmocka_unit_test(test_queuing_rules_good),
		cmocka_unit_test(test_ports_good),
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
		cmocka_unit_test(test_port_overlap_fixture),
		cmocka_unit_test(test_overlap_names_invalid_level),
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
