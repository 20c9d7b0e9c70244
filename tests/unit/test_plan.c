/* plan.c: configuration -> exact map contents, all or nothing. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "config.h"
#include "plan.h"

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
	"spec: {serverConcurrencyLimit: 10, failMode: closed, heartbeatTimeout: 2s, eventsPerSecond: 7}\n"
	"---\n"
	"apiVersion: sluice/v1\n"
	"kind: PriorityLevelConfiguration\n"
	"metadata: {name: web}\n"
	"spec:\n"
	"  type: Limited\n"
	"  limited: {nominalConcurrencyShares: 30, limitResponse: {type: Queue}}\n"
	"  ports: [80, 8000-8002]\n"
	"  seatsPerConnection: 2\n"
	"---\n"
	"apiVersion: sluice/v1\n"
	"kind: PriorityLevelConfiguration\n"
	"metadata: {name: admin}\n"
	"spec:\n"
	"  type: Exempt\n"
	"  ports: [22]\n";

static void test_plan_levels_ports_config(void **state)
{
	char old[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN] = {{0}};
	struct sl_config *cfg = load(two_levels);
	struct sl_plan plan;
	unsigned web, admin;

	(void)state;
	assert_int_equal(sl_plan_build(cfg, old, &plan, NULL), 0);
	assert_int_equal(plan.n_levels, 2);
	web = plan.slot_of[0];
	admin = plan.slot_of[1];
	assert_int_equal(web, 0);
	assert_int_equal(admin, 1);
	assert_string_equal(plan.levels[web].name, "web");
	assert_int_equal(plan.levels[web].type, SLUICE_LEVEL_LIMITED);
	assert_int_equal(plan.levels[web].limit_response, SLUICE_RESP_QUEUE);
	/* shares 30 of 30 (exempt has 0): the whole budget */
	assert_int_equal(plan.levels[web].seat_limit, 10);
	assert_int_equal(plan.levels[web].seats_per_conn, 2);
	assert_int_equal(plan.levels[admin].type, SLUICE_LEVEL_EXEMPT);
	assert_int_equal(plan.levels[2].type, SLUICE_LEVEL_UNUSED);
	/* 80, 8000, 8001, 8002 -> web; 22 -> admin */
	assert_int_equal(plan.n_ports, 5);
	for (size_t i = 0; i < plan.n_ports; i++) {
		if (plan.ports[i].port == 22)
			assert_int_equal(plan.ports[i].slot, admin);
		else
			assert_int_equal(plan.ports[i].slot, web);
	}
	assert_int_equal(plan.config.fail_mode, SLUICE_FAIL_CLOSED);
	assert_int_equal(plan.config.heartbeat_timeout_ns, 2000000000ULL);
	assert_int_equal(plan.config.events_per_sec, 7);
	assert_true(plan.config.flags & SLUICE_CFG_ACTIVE);
	assert_int_equal(plan.config.abi_version, SLUICE_ABI_VERSION);
	sl_plan_free(&plan);
	sl_config_free(cfg);
}

static void test_plan_keeps_slots_by_name(void **state)
{
	char old[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN] = {{0}};
	struct sl_config *cfg = load(two_levels);
	struct sl_plan plan;

	(void)state;
	strcpy(old[5], "admin");
	strcpy(old[9], "web");
	assert_int_equal(sl_plan_build(cfg, old, &plan, NULL), 0);
	assert_int_equal(plan.slot_of[0], 9);
	assert_int_equal(plan.slot_of[1], 5);
	assert_string_equal(plan.levels[9].name, "web");
	assert_int_equal(plan.levels[0].type, SLUICE_LEVEL_UNUSED);
	sl_plan_free(&plan);
	sl_config_free(cfg);
}

static void test_plan_rejects_too_many_ports(void **state)
{
	static const char many[] =
		"apiVersion: sluice/v1\n"
		"kind: PriorityLevelConfiguration\n"
		"metadata: {name: web}\n"
		"spec:\n"
		"  type: Limited\n"
		"  ports: [1000-3000]\n";
	char old[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN] = {{0}};
	struct sl_diags diags = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;
	struct sl_plan plan;
	int err;

	(void)state;
	err = sl_config_load_buffer("t.yaml", many, strlen(many), &cfg, &diags);
	if (err) {
		/* The loader may already refuse it; either way it never applies. */
		assert_true(sl_diags_error_count(&diags) > 0);
		sl_diags_free(&diags);
		return;
	}
	assert_int_equal(sl_plan_build(cfg, old, &plan, &diags), -ENOSPC);
	assert_true(sl_diags_error_count(&diags) > 0);
	assert_non_null(strstr(diags.items[0].message, "port table"));
	sl_diags_free(&diags);
	sl_config_free(cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_levels_ports_config),
		cmocka_unit_test(test_plan_keeps_slots_by_name),
		cmocka_unit_test(test_plan_rejects_too_many_ports),
	};

	return cmocka_run_group_tests_name("plan", tests, NULL, NULL);
}
