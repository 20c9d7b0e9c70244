// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* plan.c: configuration -> exact map contents, all or nothing. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "config/config.h"
#include "engine/plan.h"

static struct sl_config *load(const char *yaml)
{
	struct sl_diags diags = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;
	int err = sl_config_load_buffer("t.yaml", yaml, strlen(yaml), &cfg, &diags);

	if (err) {
		sl_diags_print(&diags, stderr);
		fail_msg("config did not load: %d", err);
	}
	sl_diags_free(&diags);
	return cfg;
}

static const char two_levels[] =
	"apiVersion: sluice/v1\n"
	"kind: Server\n"
	"metadata: {name: s}\n"
	"spec: {serverConcurrencyLimit: 70, failMode: closed, heartbeatTimeout: 2s, eventsPerSecond: 7}\n"
	"---\n"
	"apiVersion: sluice/v1\n"
	"kind: PriorityLevelConfiguration\n"
	"metadata: {name: web}\n"
	"spec:\n"
	"  type: Limited\n"
	"  limited: {nominalConcurrencyShares: 30, limitResponse: {type: Queue}}\n"
	"---\n"
	"apiVersion: sluice/v1\n"
	"kind: FlowSchema\n"
	"metadata: {name: web}\n"
	"spec:\n"
	"  priorityLevelConfiguration: {name: web}\n"
	"  seatsPerConnection: 2\n"
	"  rules:\n"
	"  - subjects: [{kind: Network, network: {cidrs: [0.0.0.0/0]}}]\n"
	"    destinations: [{ports: [\"80\", \"8000-8002\"]}]\n";

/* failMode static reaches the data path with the half-open time-out its
 * kernel sweep uses (handshakeTimeout). */
static void test_plan_fail_static(void **state)
{
	static const char yaml[] =
		"apiVersion: sluice/v1\n"
		"kind: Server\n"
		"metadata: {name: s}\n"
		"spec: {serverConcurrencyLimit: 8, failMode: static, handshakeTimeout: 4s}\n";
	char old[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN] = {{0}};
	struct sl_config *cfg = load(yaml);
	struct sl_plan plan;

	(void)state;
	assert_int_equal(cfg->server.fail_mode, SL_FAIL_STATIC);
	assert_string_equal(sl_fail_mode_name(cfg->server.fail_mode), "static");
	assert_int_equal(sl_plan_build(cfg, old, "eth0", &plan, NULL), 0);
	assert_int_equal(plan.config.fail_mode, SLUICE_FAIL_STATIC);
	assert_int_equal(plan.config.halfopen_timeout_ns, 4000000000ULL);
	sl_plan_free(&plan);
	sl_config_free(cfg);
}

static void test_plan_levels_and_config(void **state)
{
	char old[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN] = {{0}};
	struct sl_config *cfg = load(two_levels);
	struct sl_plan plan;
	unsigned web;

	(void)state;
	assert_int_equal(sl_plan_build(cfg, old, "eth0", &plan, NULL), 0);
	/* mandatory exempt and catch-all come first */
	assert_int_equal(plan.n_levels, 3);
	assert_string_equal(plan.levels[plan.slot_of[0]].name, "exempt");
	assert_int_equal(plan.levels[plan.slot_of[0]].type, SLUICE_LEVEL_EXEMPT);
	assert_string_equal(plan.levels[plan.slot_of[1]].name, "catch-all");
	assert_int_equal(plan.levels[plan.slot_of[1]].limit_response, SLUICE_RESP_REJECT);
	web = plan.slot_of[2];
	assert_string_equal(plan.levels[web].name, "web");
	assert_int_equal(plan.levels[web].type, SLUICE_LEVEL_LIMITED);
	assert_int_equal(plan.levels[web].limit_response, SLUICE_RESP_QUEUE);
	/* shares 0 + 5 + 30: web gets ceil(70 * 30 / 35) = 60, catch-all 10 */
	assert_int_equal(plan.levels[web].seat_limit, 60);
	assert_int_equal(plan.levels[plan.slot_of[1]].seat_limit, 10);
	assert_int_equal(plan.levels[3].type, SLUICE_LEVEL_UNUSED);
	assert_int_equal(plan.config.fail_mode, SLUICE_FAIL_CLOSED);
	assert_int_equal(plan.config.heartbeat_timeout_ns, 2000000000ULL);
	/* the default tick is 100 ms: three ticks */
	assert_int_equal(plan.config.dispatch_timeout_ns, 300000000ULL);
	assert_int_equal(plan.config.events_per_sec, 7);
	assert_true(plan.config.flags & SLUICE_CFG_ACTIVE);
	assert_false(plan.config.flags & SLUICE_CFG_NO_FRAMES); /* heldSyns' defaults hold SYNs */
	assert_int_equal(plan.config.abi_version, SLUICE_ABI_VERSION);
	/* Ports 80 and 8000..8002 are local-port classes apart from 81. */
	assert_true(plan.classes.dport_cls[80] != plan.classes.dport_cls[81]);
	assert_int_equal(plan.classes.dport_cls[8000], plan.classes.dport_cls[8002]);
	assert_true(plan.classes.dport_cls[8002] != plan.classes.dport_cls[8003]);
	/* The table's default and its entries name real slots. */
	assert_memory_equal(&plan.config.default_class, &plan.classes.default_class,
			    sizeof(plan.config.default_class));
	for (size_t i = 0; i < plan.classes.n_entries; i++) {
		const struct sluice_class *c = &plan.classes.entries[i].val;

		assert_true(c->level < SLUICE_MAX_LEVELS);
		assert_int_not_equal(plan.levels[c->level].type, SLUICE_LEVEL_UNUSED);
		if (c->level == web)
			assert_int_equal(c->seats, 2);
	}
	sl_plan_free(&plan);
	sl_config_free(cfg);
}

/* Deferral stops a few ticks into a silence: never sooner than 50 ms (a
 * busy loop is not a dead one), never later than the failsafe. */
static void test_dispatch_timeout(void **state)
{
	const uint64_t ms = 1000000ULL;

	(void)state;
	assert_int_equal(sl_dispatch_timeout_ns(100 * ms, 3000 * ms), 300 * ms);
	assert_int_equal(sl_dispatch_timeout_ns(1 * ms, 3000 * ms), 50 * ms);
	assert_int_equal(sl_dispatch_timeout_ns(100 * ms, 200 * ms), 200 * ms);
	assert_int_equal(sl_dispatch_timeout_ns(2000 * ms, 0), 6000 * ms); /* failsafe off */
}

/* heldSyns with a zero budget: the data path need not copy frames. */
static void test_plan_no_frames(void **state)
{
	char old[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN] = {{0}};
	struct sl_config *cfg = load(two_levels);
	struct sl_plan plan;

	(void)state;
	cfg->server.held_syns.max_bytes = 0;
	assert_int_equal(sl_plan_build(cfg, old, "eth0", &plan, NULL), 0);
	assert_true(plan.config.flags & SLUICE_CFG_NO_FRAMES);
	sl_plan_free(&plan);
	sl_config_free(cfg);
}

static void test_plan_keeps_slots_by_name(void **state)
{
	char old[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN] = {{0}};
	struct sl_config *cfg = load(two_levels);
	struct sl_plan plan;

	(void)state;
	strcpy(old[5], "catch-all");
	strcpy(old[9], "web");
	strcpy(old[0], "gone"); /* a removed level keeps its slot reserved */
	assert_int_equal(sl_plan_build(cfg, old, "eth0", &plan, NULL), 0);
	assert_int_equal(plan.slot_of[1], 5);
	assert_int_equal(plan.slot_of[2], 9);
	assert_int_equal(plan.slot_of[0], 1); /* exempt: first never-used slot */
	assert_string_equal(plan.levels[9].name, "web");
	assert_int_equal(plan.levels[0].type, SLUICE_LEVEL_UNUSED);
	sl_plan_free(&plan);
	sl_config_free(cfg);
}

/* A configuration that loads but cannot be compiled fails the plan with
 * a diagnostic, before anything would be written. */
static void test_plan_fails_on_uncompilable_matcher(void **state)
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
		"              label_matches: {label: dst.port, regex: \"^80\"}\n";
	char old[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN] = {{0}};
	struct sl_diags diags = SL_DIAGS_INIT;
	struct sl_config *cfg = load(yaml);
	struct sl_plan plan;

	(void)state;
	assert_int_equal(sl_plan_build(cfg, old, "eth0", &plan, &diags), -EINVAL);
	assert_int_equal(sl_diags_error_count(&diags), 1);
	assert_non_null(strstr(diags.items[0].message, "dst.port"));
	assert_string_equal(diags.items[0].object, "AverageLatencySchedulingPolicy/p");
	/* file:line:col of the selector (the class compiler's errors had none) */
	assert_string_equal(diags.items[0].file, "t.yaml");
	assert_int_equal(diags.items[0].line, 9);
	assert_int_equal(diags.items[0].column, 11);
	sl_plan_free(&plan);
	sl_diags_free(&diags);
	sl_config_free(cfg);
}

/* Kubernetes max_seats.go: a Queue level caps one connection's width at
 * max(1, min(ceil(0.15 x NominalCL), NominalCL / handSize)), with a
 * warning naming the FlowSchema; a Reject level does not. */
static void test_plan_caps_seats_per_connection(void **state)
{
	static const char yaml[] =
		"apiVersion: sluice/v1\nkind: Server\nmetadata: {name: s}\n"
		"spec: {serverConcurrencyLimit: 20}\n"
		"---\napiVersion: sluice/v1\nkind: PriorityLevelConfiguration\nmetadata: {name: web}\n"
		"spec:\n  type: Limited\n  limited:\n    nominalConcurrencyShares: 30\n"
		"    limitResponse: {type: Queue, queuing: {queues: 64, handSize: 8}}\n"
		"---\napiVersion: sluice/v1\nkind: PriorityLevelConfiguration\nmetadata: {name: bulk}\n"
		"spec:\n  type: Limited\n  limited: {nominalConcurrencyShares: 30, limitResponse: {type: Reject}}\n"
		"---\napiVersion: sluice/v1\nkind: FlowSchema\nmetadata: {name: web}\n"
		"spec:\n  priorityLevelConfiguration: {name: web}\n  seatsPerConnection: 5\n"
		"  rules:\n  - subjects: [{kind: Network, network: {cidrs: [0.0.0.0/0]}}]\n"
		"    destinations: [{ports: [\"80\"]}]\n"
		"---\napiVersion: sluice/v1\nkind: FlowSchema\nmetadata: {name: bulk}\n"
		"spec:\n  priorityLevelConfiguration: {name: bulk}\n  seatsPerConnection: 5\n"
		"  rules:\n  - subjects: [{kind: Network, network: {cidrs: [0.0.0.0/0]}}]\n"
		"    destinations: [{ports: [\"81\"]}]\n";
	char old[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN] = {{0}};
	struct sl_diags diags = SL_DIAGS_INIT;
	struct sl_config *cfg = load(yaml);
	struct sl_plan plan;
	unsigned web, bulk;
	bool seen_web = false, seen_bulk = false;

	(void)state;
	assert_int_equal(sl_plan_build(cfg, old, "eth0", &plan, &diags), 0);
	web = plan.slot_of[2];
	bulk = plan.slot_of[3];
	/* shares 5 + 30 + 30: web's nominal ceil(20 x 30 / 65) = 10; its cap
	 * max(1, min(ceil(1.5), 10 / 8)) = 1 */
	assert_int_equal(plan.levels[web].seat_limit, 10);
	for (size_t i = 0; i < plan.classes.n_entries; i++) {
		const struct sluice_class *c = &plan.classes.entries[i].val;

		if (c->level == web) {
			assert_int_equal(c->seats, 1);
			seen_web = true;
		} else if (c->level == bulk) {
			assert_int_equal(c->seats, 5);
			seen_bulk = true;
		}
	}
	assert_true(seen_web && seen_bulk);
	assert_int_equal(sl_diags_error_count(&diags), 0);
	assert_int_equal(sl_diags_warning_count(&diags), 1);
	assert_non_null(strstr(diags.items[0].message, "seatsPerConnection 5 exceeds"));
	assert_string_equal(diags.items[0].object, "FlowSchema/web");
	/* At the field, not at the object (issue 27). */
	assert_int_equal(diags.items[0].line, 27);
	assert_int_equal(diags.items[0].column, 23);
	sl_diags_free(&diags);
	sl_plan_free(&plan);
	sl_config_free(cfg);
}

/* Aperture runs every load scheduler that selects a flow; the data path
 * has one policy gate per connection.  Two policies whose selectors meet
 * are refused with both names, not silently cut to the first; disjoint
 * ones are fine. */
static void test_plan_refuses_overlapping_policies(void **state)
{
#define POLICY_ON(name, port) \
	"---\napiVersion: sluice/v1\nkind: AverageLatencySchedulingPolicy\nmetadata: {name: " name "}\n" \
	"spec:\n  load_scheduling_core:\n    aimd_load_scheduler:\n      load_scheduler:\n" \
	"        selectors: [{label_matcher: {match_labels: {dst.port: \"" port "\"}}}]\n"
	static const char overlapping[] = "apiVersion: sluice/v1\nkind: Server\nmetadata: {name: s}\n"
		POLICY_ON("api", "8080") POLICY_ON("api-too", "8080");
	static const char disjoint[] = "apiVersion: sluice/v1\nkind: Server\nmetadata: {name: s}\n"
		POLICY_ON("api", "8080") POLICY_ON("web", "8081");
#undef POLICY_ON
	char old[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN] = {{0}};
	struct sl_diags diags = SL_DIAGS_INIT;
	struct sl_config *cfg = load(overlapping);
	struct sl_plan plan;

	(void)state;
	assert_int_equal(sl_plan_build(cfg, old, "eth0", &plan, &diags), -EINVAL);
	assert_int_equal(sl_diags_error_count(&diags), 1);
	assert_non_null(strstr(diags.items[0].message, "AverageLatencySchedulingPolicy/api"));
	assert_non_null(strstr(diags.items[0].message, "both select"));
	assert_string_equal(diags.items[0].object, "AverageLatencySchedulingPolicy/api-too");
	/* At its selectors, not at the object (issue 27). */
	assert_int_equal(diags.items[0].line, 21);
	assert_int_equal(diags.items[0].column, 21);
	assert_string_equal(diags.items[0].path,
			    "spec.load_scheduling_core.aimd_load_scheduler.load_scheduler.selectors");
	sl_diags_free(&diags);
	sl_plan_free(&plan);
	sl_config_free(cfg);

	cfg = load(disjoint);
	assert_int_equal(sl_plan_build(cfg, old, "eth0", &plan, NULL), 0);
	sl_plan_free(&plan);
	sl_config_free(cfg);
}

/* A removed level still holding connections keeps its shares in the sum
 * (a quiescing APF level does): the others' nominal limits stay down. */
static void test_plan_quiescing_shares(void **state)
{
	char old[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN] = {{0}};
	struct sl_config *cfg = load(two_levels);
	struct sl_plan plan;
	unsigned web;

	(void)state;
	assert_int_equal(sl_plan_build_quiescing(cfg, old, "eth0", 35, NULL, &plan, NULL), 0);
	web = plan.slot_of[2];
	/* shares 0 + 5 + 30, and 35 quiescing: web ceil(70 x 30 / 70) = 30 */
	assert_int_equal(plan.levels[web].seat_limit, 30);
	sl_plan_free(&plan);
	sl_config_free(cfg);
}

/* tests/unit/configs-like variations of two_levels: a text with one
 * substitution. */
static struct sl_config *load_with(const char *from, const char *to)
{
	char buf[sizeof(two_levels) + 64];
	const char *at = strstr(two_levels, from);

	assert_non_null(at);
	snprintf(buf, sizeof(buf), "%.*s%s%s", (int)(at - two_levels), two_levels, to,
		 at + strlen(from));
	return load(buf);
}

/* A reload that changes only shares (or the server's limit) copies the
 * running tables: the same tables a compile gives, no compile.  One that
 * changes what classifies, or a level's seat cap on a schema, compiles. */
static void test_plan_reuses_classification(void **state)
{
	static const struct {
		const char *from, *to;
		bool reused;
	} cases[] = {
		{"nominalConcurrencyShares: 30", "nominalConcurrencyShares: 31", true},
		{"serverConcurrencyLimit: 70", "serverConcurrencyLimit: 700", true},
		{"heartbeatTimeout: 2s", "heartbeatTimeout: 3s", true},
		{"\"8000-8002\"", "\"8000-8003\"", false},
		{"0.0.0.0/0", "10.0.0.0/8", false},
		{"seatsPerConnection: 2", "seatsPerConnection: 3", false},
		{"metadata: {name: web}\nspec:\n  priorityLevelConfiguration",
		 "metadata: {name: web2}\nspec:\n  priorityLevelConfiguration", false},
		{"limitResponse: {type: Queue}", "limitResponse: {type: Reject}", true},
	};
	char old[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN] = {{0}};
	struct sl_config *base = load(two_levels);
	struct sl_plan running;

	(void)state;
	assert_int_equal(sl_plan_build(base, old, "eth0", &running, NULL), 0);
	assert_false(running.classes_reused);
	assert_true(running.classes.digest != 0);
	assert_true(running.config.class_digest == running.classes.digest);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sl_config *cfg = load_with(cases[i].from, cases[i].to);
		struct sl_plan p, fresh;

		assert_int_equal(sl_plan_build_quiescing(cfg, old, "eth0", 0, &running.classes, &p, NULL), 0);
		assert_int_equal(sl_plan_build(cfg, old, "eth0", &fresh, NULL), 0);
		if (p.classes_reused != cases[i].reused)
			fail_msg("case %zu (%s -> %s): reused %d", i, cases[i].from, cases[i].to,
				 p.classes_reused);
		/* Reused or not, the tables are what a compile gives. */
		assert_true(sl_compiled_equal(&p.classes, &fresh.classes));
		assert_true(p.classes.digest == fresh.classes.digest);
		assert_true((p.classes.digest == running.classes.digest) == cases[i].reused);
		/* Another interface name is another classification (the iface label). */
		sl_plan_free(&fresh);
		assert_int_equal(sl_plan_build(cfg, old, "eth1", &fresh, NULL), 0);
		assert_true(fresh.classes.digest != p.classes.digest);
		sl_plan_free(&fresh);
		sl_plan_free(&p);
		sl_config_free(cfg);
	}
	sl_plan_free(&running);
	sl_config_free(base);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_levels_and_config),
		cmocka_unit_test(test_plan_fail_static),
		cmocka_unit_test(test_plan_caps_seats_per_connection),
		cmocka_unit_test(test_plan_refuses_overlapping_policies),
		cmocka_unit_test(test_plan_quiescing_shares),
		cmocka_unit_test(test_plan_reuses_classification),
		cmocka_unit_test(test_plan_keeps_slots_by_name),
		cmocka_unit_test(test_dispatch_timeout),
		cmocka_unit_test(test_plan_no_frames),
		cmocka_unit_test(test_plan_fails_on_uncompilable_matcher),
	};

	return cmocka_run_group_tests_name("plan", tests, NULL, NULL);
}
