// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * One sync of one host in one fleet level (user/daemon/fleet_step.c):
 * join, raise, cut, nothing, and no room, from the members a range read;
 * and the writes each step makes.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "daemon/fleet_step.h"

static struct sl_fleet_node node(const char *name, bool live, uint32_t floor, uint32_t extra, uint32_t in_use,
				 uint32_t wants, uint32_t budget)
{
	struct sl_fleet_node n = {.m = {.floor = floor, .live = live, .extra = extra, .in_use = in_use,
					.wants = wants, .budget = budget}, .lease = live ? 7 : 0};

	snprintf(n.node, sizeof(n.node), "%s", name);
	return n;
}

static void test_join(void **state)
{
	struct sl_fleet_self me = {.node = "b", .floor = 20, .seats = 100, .in_use = 0, .wants = 5};
	struct sl_fleet_node others[] = {node("a", true, 70, 0, 0, 0, 100)};
	struct sl_fleet_plan p;
	struct sl_etcd_op ops[3];
	char buf[SL_FLEET_STEP_BUF];

	(void)state;
	assert_int_equal(sl_fleet_plan_step(NULL, 0, &me, &p), 0);
	assert_int_equal(p.action, SL_FLEET_JOIN);
	assert_int_equal(sl_fleet_step_ops("pg", "db", &me, &p, 99, false, ops, buf, sizeof(buf)), 2);
	assert_string_equal(ops[0].key, "/sluice/pg/db/seats/member/b");
	assert_string_equal(ops[0].value, "{\"floor\":20}");
	assert_int_equal(ops[0].lease, 0);   /* the floor outlives the lease */
	assert_string_equal(ops[1].key, "/sluice/pg/db/seats/claim/b");
	assert_string_equal(ops[1].value, "{\"extra\":0}");
	assert_int_equal(ops[1].lease, 99);
	/* The others' floors leave it no room: it stays out. */
	me.floor = 31;
	assert_int_equal(sl_fleet_plan_step(others, 1, &me, &p), 0);
	assert_int_equal(p.action, SL_FLEET_NO_ROOM);
	me.floor = 30;
	assert_int_equal(sl_fleet_plan_step(others, 1, &me, &p), 0);
	assert_int_equal(p.action, SL_FLEET_JOIN);
}

/* 100 seats, floors of 20: a wants 80, b (this host) 50: targets 30 and
 * 30; b raises to 30 (the others leave 60). */
static void test_raise_then_nothing(void **state)
{
	struct sl_fleet_self me = {.node = "b", .floor = 20, .seats = 100, .in_use = 10, .wants = 50};
	struct sl_fleet_node nodes[] = {node("a", true, 20, 0, 80, 80, 100), node("b", true, 20, 0, 0, 0, 100)};
	struct sl_fleet_plan p;
	struct sl_etcd_op ops[3];
	char buf[SL_FLEET_STEP_BUF];

	(void)state;
	assert_int_equal(sl_fleet_plan_step(nodes, 2, &me, &p), 0);
	assert_int_equal(p.action, SL_FLEET_RAISE);
	assert_int_equal(p.budget, 100);
	assert_int_equal(p.target, 30);
	assert_int_equal(p.next, 30);
	assert_int_equal(sl_fleet_step_ops("pg", "db", &me, &p, 7, false, ops, buf, sizeof(buf)), 2);
	assert_string_equal(ops[1].value, "{\"extra\":30}");
	nodes[1].m.extra = 30;
	assert_int_equal(sl_fleet_plan_step(nodes, 2, &me, &p), 0);
	assert_int_equal(p.action, SL_FLEET_NOTHING);
	/* Every sync: its want, on its lease. */
	assert_int_equal(sl_fleet_step_ops("pg", "db", &me, &p, 7, true, ops, buf, sizeof(buf)), 1);
	assert_string_equal(ops[0].key, "/sluice/pg/db/want/b");
	assert_string_equal(ops[0].value, "{\"budget\":100,\"in_use\":10,\"wants\":50}");
	assert_int_equal(ops[0].lease, 7);
}

/* A cut never below the seats in use over the floor. */
static void test_cut(void **state)
{
	struct sl_fleet_self me = {.node = "b", .floor = 20, .seats = 100, .in_use = 45, .wants = 45};
	struct sl_fleet_node nodes[] = {node("a", true, 20, 0, 100, 100, 100), node("b", true, 20, 50, 45, 45, 100)};
	struct sl_fleet_plan p;

	(void)state;
	assert_int_equal(sl_fleet_plan_step(nodes, 2, &me, &p), 0);
	assert_int_equal(p.action, SL_FLEET_CUT);
	assert_int_equal(p.target, 25);   /* pool 60: b wants 25 over its floor, a the rest */
	assert_int_equal(p.next, 25);
	me.in_use = 60;                   /* 40 over its floor in use: cut to 40, not 25 */
	assert_int_equal(sl_fleet_plan_step(nodes, 2, &me, &p), 0);
	assert_int_equal(p.action, SL_FLEET_CUT);
	assert_int_equal(p.next, 40);
}

/* A reload raised the floor past what the others leave: no room; a
 * smaller budget declared by another member is the one in force. */
static void test_floor_raise_and_budget(void **state)
{
	struct sl_fleet_self me = {.node = "b", .floor = 30, .seats = 100, .in_use = 0, .wants = 0};
	struct sl_fleet_node nodes[] = {node("a", true, 20, 60, 80, 80, 100), node("b", true, 20, 0, 0, 0, 100)};
	struct sl_fleet_plan p;

	(void)state;
	assert_int_equal(sl_fleet_plan_step(nodes, 2, &me, &p), 0);
	assert_int_equal(p.action, SL_FLEET_NO_ROOM);
	me.floor = 20;
	nodes[0].m.budget = 90; /* a declares less: 90 in force */
	assert_int_equal(sl_fleet_plan_step(nodes, 2, &me, &p), 0);
	assert_int_equal(p.budget, 90);
	assert_int_equal(p.action, SL_FLEET_NOTHING);
	me.floor = 10;          /* a floor lowered: a cut */
	assert_int_equal(sl_fleet_plan_step(nodes, 2, &me, &p), 0);
	assert_int_equal(p.action, SL_FLEET_CUT);
}

static void test_buffer_too_small(void **state)
{
	struct sl_fleet_self me = {.node = "b", .floor = 20, .seats = 100};
	struct sl_fleet_plan p = {.action = SL_FLEET_JOIN};
	struct sl_etcd_op ops[3];
	char buf[40];

	(void)state;
	assert_int_equal(sl_fleet_step_ops("pg", "db", &me, &p, 7, false, ops, buf, sizeof(buf)), -E2BIG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_join),
		cmocka_unit_test(test_raise_then_nothing),
		cmocka_unit_test(test_cut),
		cmocka_unit_test(test_floor_raise_and_budget),
		cmocka_unit_test(test_buffer_too_small),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
