// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Configuration loader tests: the fleet (user/config/fleet.c), Server
 * spec.fleet and a level's limited.fleet, and the checks that keep a fleet
 * level within the fleet's budget whatever happens to its host.
 */
#include "config_helpers.h"

/* Server/main with a fleet: its fields from line 6 (indent 4). */
#define FSRV SRV "  fleet:\n"
#define EP "    endpoints: [\"http://198.18.0.1:2379\"]\n"
#define FLEET FSRV "    name: pg\n" EP
/* PriorityLevelConfiguration/db after a server of N lines: limited.fleet's
 * mapping on its 8th line, at column 12. */
#define FLEVEL(extra) "---\n" PLN("db") "  type: Limited\n  limited:\n    limitResponse: {type: Reject}\n" \
	"    fleet: {seats: 100" extra "}\n"
#define FL_OBJ "PriorityLevelConfiguration/db"

static const struct bad_case bad_cases[] = {
	{ "fleet_name_not_a_name", FSRV "    name: a/b\n" EP FLEVEL(""), 6, 11, SRV_OBJ, "spec.fleet.name",
	  "'a/b' is not a name" },
	{ "fleet_name_missing", FSRV EP FLEVEL(""), 6, 5, SRV_OBJ, "spec.fleet.name", "missing required field 'name'" },
	{ "fleet_node_too_long", FLEET "    node: " LONG64 "\n" FLEVEL(""), 8, 11, SRV_OBJ, "spec.fleet.node",
	  "is not a name: 1 to 63" },
	{ "fleet_endpoint_scheme", FSRV "    name: pg\n    endpoints: [\"ftp://198.18.0.1:2379\"]\n" FLEVEL(""), 7, 17,
	  SRV_OBJ, "spec.fleet.endpoints[0]", "must start with http:// or https://" },
	{ "fleet_endpoint_name", FSRV "    name: pg\n    endpoints: [\"http://etcd:2379\"]\n" FLEVEL(""), 7, 17,
	  SRV_OBJ, "spec.fleet.endpoints[0]", "needs an IP address (names are not resolved)" },
	{ "fleet_endpoint_port", FSRV "    name: pg\n    endpoints: [\"http://198.18.0.1:0\"]\n" FLEVEL(""), 7, 17,
	  SRV_OBJ, "spec.fleet.endpoints[0]", "needs a port 1-65535" },
	{ "fleet_endpoint_mixed", FSRV "    name: pg\n    endpoints: [\"https://198.18.0.1:2379\", \"http://198.18.0.2:2379\"]\n"
	  "    tls: {caFile: /a, certFile: /b, keyFile: /c}\n" FLEVEL(""), 7, 44, SRV_OBJ, "spec.fleet.endpoints[1]",
	  "every endpoint takes the same scheme" },
	{ "fleet_endpoints_empty", FSRV "    name: pg\n    endpoints: []\n" FLEVEL(""), 7, 16, SRV_OBJ,
	  "spec.fleet.endpoints", "needs at least one endpoint" },
	{ "fleet_https_needs_tls", FSRV "    name: pg\n    endpoints: [\"https://198.18.0.1:2379\"]\n" FLEVEL(""), 7, 16,
	  SRV_OBJ, "spec.fleet.endpoints", "https:// endpoints need tls" },
	{ "fleet_tls_over_http", FLEET "    tls: {caFile: /a, certFile: /b, keyFile: /c}\n" FLEVEL(""), 8, 5, SRV_OBJ,
	  "spec.fleet.tls", "would travel in the clear" },
	{ "fleet_tls_incomplete", FSRV "    name: pg\n    endpoints: [\"https://198.18.0.1:2379\"]\n"
	  "    tls: {caFile: /a, certFile: /b}\n" FLEVEL(""), 8, 10, SRV_OBJ, "spec.fleet.tls.keyFile", "missing required field 'keyFile'" },
	{ "fleet_ttl_short", FLEET "    leaseTTL: 1s\n" FLEVEL(""), 8, 15, SRV_OBJ, "spec.fleet.leaseTTL",
	  "must be between 2s and 1h, got 1s" },
	{ "fleet_sync_over_half", FLEET "    leaseTTL: 20s\n    syncPeriod: 11s\n" FLEVEL(""), 9, 17, SRV_OBJ,
	  "spec.fleet.syncPeriod", "syncPeriod 11s is over half the leaseTTL 20s" },
	{ "fleet_floor_over_seats", FLEET FLEVEL(", floor: 101"), 16, 32, FL_OBJ, "spec.limited.fleet.floor",
	  "floor 101 is over the fleet's 100 seats" },
	{ "fleet_seats_missing", FLEET "---\n" PLN("db") "  type: Limited\n  limited:\n    limitResponse: {type: Reject}\n"
	  "    fleet: {floor: 1}\n", 16, 12, FL_OBJ, "spec.limited.fleet.seats", "missing required field 'seats'" },
	{ "fleet_level_without_server", SRV "  serverConcurrencyLimit: 10\n" FLEVEL(""), 14, 12, FL_OBJ,
	  "spec.limited.fleet", "needs Server spec.fleet" },
	{ "fleet_lease_too_short", SRV "  heartbeatTimeout: 5s\n  fleet:\n    name: pg\n" EP FLEVEL(""), 17, 12, FL_OBJ,
	  "spec.limited.fleet.drainTimeout", "heartbeatTimeout 5s + drainTimeout 1s + syncPeriod 200ms + margin 600ms = 6.8s must be under" },
	{ "fleet_fail_open", SRV "  failMode: open\n  fleet:\n    name: pg\n" EP FLEVEL(""), 7, 5, "Server", "spec.failMode",
	  "failMode open with a fleet level" },
	{ "fleet_overbooking", SRV "  ticketOverbooking: 2\n  fleet:\n    name: pg\n" EP FLEVEL(""), 7, 5, "Server",
	  "spec.ticketOverbooking", "ticketOverbooking 2 with a fleet level" },
};

static void test_fleet_loads(void **state)
{
	struct sl_config *cfg = load_ok(FSRV "    name: pg-front\n    node: host-a\n"
				   "    endpoints: [\"https://198.18.0.1:2379\", \"https://[fd53:6c75:6963::1]:2379\"]\n"
				   "    leaseTTL: 10s\n    syncPeriod: 500ms\n    requestTimeout: 1s\n"
				   "    tls: {caFile: /etc/sluice/ca.pem, certFile: /etc/sluice/a.pem, keyFile: /etc/sluice/a.key}\n"
				   FLEVEL(", floor: 20, drainTimeout: 2s"));
	const struct sl_level_cfg *l = sl_config_find_level(cfg, "db");

	(void)state;
	assert_true(cfg->server.fleet.set);
	assert_string_equal(cfg->server.fleet.name, "pg-front");
	assert_string_equal(cfg->server.fleet.node, "host-a");
	assert_int_equal(cfg->server.fleet.n_endpoints, 2);
	assert_string_equal(cfg->server.fleet.endpoints[1], "https://[fd53:6c75:6963::1]:2379");
	assert_int_equal(cfg->server.fleet.lease_ttl_ns, 10 * SEC);
	assert_int_equal(cfg->server.fleet.sync_period_ns, 500 * MS);
	assert_int_equal(cfg->server.fleet.request_timeout_ns, 1 * SEC);
	assert_string_equal(cfg->server.fleet.tls.key_file, "/etc/sluice/a.key");
	assert_non_null(l);
	assert_true(l->fleet.set);
	assert_int_equal(l->fleet.seats, 100);
	assert_int_equal(l->fleet.floor, 20);
	assert_int_equal(l->fleet.drain_ns, 2 * SEC);
	sl_config_free(cfg);
}

/* Without a fleet nothing changes; with one, its defaults. */
static void test_fleet_defaults(void **state)
{
	struct sl_config *cfg = load_ok(SRV "  serverConcurrencyLimit: 10\n");
	const struct sl_level_cfg *l;

	(void)state;
	assert_false(cfg->server.fleet.set);
	for (size_t i = 0; i < cfg->n_levels; i++)
		assert_false(cfg->levels[i].fleet.set);
	sl_config_free(cfg);
	cfg = load_ok(FLEET FLEVEL(""));
	l = sl_config_find_level(cfg, "db");
	assert_null(cfg->server.fleet.node); /* the host name, at start */
	assert_int_equal(cfg->server.fleet.lease_ttl_ns, 6 * SEC);
	assert_int_equal(cfg->server.fleet.sync_period_ns, 200 * MS);
	assert_int_equal(cfg->server.fleet.request_timeout_ns, 300 * MS);
	assert_null(cfg->server.fleet.tls.ca_file);
	assert_int_equal(l->fleet.floor, 0);
	assert_int_equal(l->fleet.drain_ns, 1 * SEC);
	sl_config_free(cfg);
}

/* A fleet no level names shares nothing: said, not refused. */
static void test_fleet_unused_warns(void **state)
{
	(void)state;
	expect_one(FLEET, SL_SEV_WARNING, 6, 5, "Server", "spec.fleet", "no level names the fleet");
}

/* heartbeatTimeout 0s is refused with a fleet (beside its own warning). */
static void test_fleet_refuses_no_heartbeat(void **state)
{
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;
	bool said = false;

	(void)state;
	assert_int_equal(load(SRV "  heartbeatTimeout: 0s\n  fleet:\n    name: pg\n" EP FLEVEL(""), &cfg, &d), -EINVAL);
	for (size_t i = 0; i < d.count; i++)
		said |= d.items[i].severity == SL_SEV_ERROR && strstr(d.items[i].message, "heartbeatTimeout 0s with a fleet");
	assert_true(said);
	sl_diags_free(&d);
}

/* The mandatory levels take no fleet. */
static void test_fleet_not_on_catch_all(void **state)
{
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;
	bool said = false;

	(void)state;
	assert_int_equal(load(FLEET "---\n" PLN("catch-all") "  type: Limited\n  limited:\n    nominalConcurrencyShares: 5\n"
			      "    limitResponse: {type: Reject}\n    fleet: {seats: 10}\n", &cfg, &d), -EINVAL);
	for (size_t i = 0; i < d.count; i++)
		said |= d.items[i].severity == SL_SEV_ERROR &&
			strstr(d.items[i].message, "the mandatory level catch-all takes no fleet");
	assert_true(said);
	sl_diags_free(&d);
}

int main(void)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(test_fleet_loads),
		cmocka_unit_test(test_fleet_defaults),
		cmocka_unit_test(test_fleet_unused_warns),
		cmocka_unit_test(test_fleet_refuses_no_heartbeat),
		cmocka_unit_test(test_fleet_not_on_catch_all),
	};

	return run_config_suite("config_fleet", fixed, N_OF(fixed), bad_cases, N_OF(bad_cases));
}
