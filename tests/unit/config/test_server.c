// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Configuration loader tests: kind Server.
 *
 * Every rule has a good and a bad example; the bad ones are rows of
 * bad_cases[] (one test each).  Run from the repository root, or point
 * SLUICE_TEST_DATA at tests/unit/configs.
 */
#include "config_helpers.h"

static const struct bad_case bad_cases[] = {
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
	  "invalid value 'shut' (allowed: open, closed, static)" },
	{ "bad_server_fail_mode_case", SRV "  failMode: Closed\n", 5, 13, SRV_OBJ, "spec.failMode",
	  "invalid value 'Closed'; did you mean 'closed'? (allowed: open, closed, static)" },
	{ "bad_server_fail_mode_bool", SRV "  failMode: true\n", 5, 13, SRV_OBJ, "spec.failMode",
	  "expected one of open, closed, static, got boolean true" },
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
	  "unknown field 'colour' (known fields: serverConcurrencyLimit, failMode, heartbeatTimeout, tick, handshakeTimeout, interfaces, pinDir, tableSizes, metricsAddress, eventsPerSecond, controlSocket, shadow, ticketOverbooking, heldSyns, halfOpen, readGroup, xdpChain, fleet)" },
	{ "bad_server_chain_relative_next", SRV "  xdpChain: {next: progs/fw}\n", 5, 20, SRV_OBJ, "spec.xdpChain.next",
	  "must be the absolute path of a pin (bpffs), got 'progs/fw'" },
	{ "bad_server_chain_slot_high", SRV "  xdpChain: {rootArray: /sys/fs/bpf/root/array, slot: 65536}\n", 5, 55, SRV_OBJ,
	  "spec.xdpChain.slot", "65536" },
	{ "bad_server_chain_unknown", SRV "  xdpChain: {nxt: /sys/fs/bpf/fw}\n", 5, 14, SRV_OBJ, "spec.xdpChain.nxt",
	  "did you mean 'next'" },
	{ "bad_server_read_group_name", SRV "  readGroup: \"Sluice Readers\"\n", 5, 14, SRV_OBJ, "spec.readGroup",
	  "'Sluice Readers' is not a group name" },
	{ "bad_server_read_group_digit", SRV "  readGroup: 1sluice\n", 5, 14, SRV_OBJ, "spec.readGroup",
	  "'1sluice' is not a group name" },
	{ "bad_server_duplicate", API "kind: Server\nmetadata: {name: a}\n---\n" API "kind: Server\nmetadata: {name: b}\n",
	  6, 7, "Server/b", "kind", "only one Server object is allowed; also defined at t.yaml:2:7" },

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

	/* kind: Server, halfOpen */
	{ "bad_server_seat_at", SRV "  halfOpen: {seatAt: fin}\n", 5, 22, SRV_OBJ,
	  "spec.halfOpen.seatAt", "invalid value 'fin'; did you mean 'syn'? (allowed: auto, syn, ack)" },
	{ "bad_server_engage_zero", SRV "  halfOpen: {engageAfter: 0}\n", 5, 27, SRV_OBJ,
	  "spec.halfOpen.engageAfter", "must be between 1 and 1000000, got 0" },
	{ "bad_server_hold_short", SRV "  halfOpen: {holdFor: 10ms}\n", 5, 23, SRV_OBJ,
	  "spec.halfOpen.holdFor", "between 1s and 24h" },
	{ "bad_server_half_open_unknown", SRV "  halfOpen: {seatsAt: ack}\n", 5, 14, SRV_OBJ,
	  "spec.halfOpen.seatsAt", "did you mean 'seatAt'?" },

};

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
	assert_int_equal(cfg->server.fail_mode, SL_FAIL_STATIC);
	assert_string_equal(cfg->server.control_socket, "/run/sluice/sluiced.sock");
	assert_null(cfg->server.read_group);
	sl_config_free(cfg);
	cfg = load_ok(SRV "  readGroup: sluice_ro-1\n");
	assert_string_equal(cfg->server.read_group, "sluice_ro-1");
	sl_config_free(cfg);
	cfg = load_ok(API "kind: Server\nmetadata: {name: main}\nspec:\n");
	assert_true(cfg->server.present);
	sl_config_free(cfg);
}

static void test_server_boundaries_good(void **state)
{
	struct sl_config *cfg;

	(void)state;
	/* heartbeatTimeout 0s, the failsafe off: valid, with its warning */
	cfg = load_warned(SRV "  serverConcurrencyLimit: 1\n  tick: 1ms\n  heartbeatTimeout: 0s\n"
		      "  handshakeTimeout: 1ms\n  tableSizes: {connections: 1024, classes: 1024}\n"
		      "  eventsPerSecond: 4294967295\n  interfaces: [abcdefghijklmno]\n"
		      "  controlSocket: /" LONG64 "a23456789012345678901234567890123456789012\n", 1);
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

/* Server spec.halfOpen: where levels seat and the measured time-out's
 * floor; a floor above handshakeTimeout is only a warning. */
static void test_server_half_open(void **state)
{
	struct sl_config *cfg;

	(void)state;
	cfg = load_ok(API "kind: Server\nmetadata: {name: s}\n");
	assert_int_equal(cfg->server.half_open.seat_at, SL_SEAT_AT_AUTO);
	assert_int_equal(cfg->server.half_open.engage_after, 4);
	assert_int_equal(cfg->server.half_open.hold_ns, 30ull * 1000000000ull);
	assert_int_equal(cfg->server.half_open.min_timeout_ns, 200ull * 1000000ull);
	sl_config_free(cfg);
	cfg = load_ok(SRV "  halfOpen: {seatAt: ack, engageAfter: 12, holdFor: 2m, minTimeout: 50ms}\n");
	assert_int_equal(cfg->server.half_open.seat_at, SL_SEAT_AT_ACK);
	assert_int_equal(cfg->server.half_open.engage_after, 12);
	assert_int_equal(cfg->server.half_open.hold_ns, 120ull * 1000000000ull);
	assert_int_equal(cfg->server.half_open.min_timeout_ns, 50ull * 1000000ull);
	sl_config_free(cfg);
	cfg = load_ok(SRV "  halfOpen: {seatAt: syn}\n");
	assert_int_equal(cfg->server.half_open.seat_at, SL_SEAT_AT_SYN);
	sl_config_free(cfg);
	cfg = load_warned(SRV "  handshakeTimeout: 1s\n  halfOpen: {minTimeout: 2s}\n", 1);
	assert_int_equal(cfg->server.half_open.min_timeout_ns, 2000000000ull);
	sl_config_free(cfg);
}

int main(void)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(test_server_half_open),
		cmocka_unit_test(test_server_empty_spec_defaults),
		cmocka_unit_test(test_server_boundaries_good),
		cmocka_unit_test(test_server_shadow),
		cmocka_unit_test(test_server_held_syns),
	};

	return run_config_suite("config_server", fixed, N_OF(fixed), bad_cases, N_OF(bad_cases));
}
