// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The fleet's keys in etcd (user/daemon/fleet_keys.c): the layout every
 * host of a fleet writes and reads, the values, and the members a range
 * of a level's prefix holds, in the order every host sorts them.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "daemon/fleet_keys.h"

static void test_keys_and_values(void **state)
{
	char k[128], small[16];
	char *v;

	(void)state;
	assert_int_equal(sl_fleet_prefix(k, sizeof(k), "pg", "db"), strlen("/sluice/pg/db/"));
	assert_string_equal(k, "/sluice/pg/db/");
	sl_fleet_seats_prefix(k, sizeof(k), "pg", "db");
	assert_string_equal(k, "/sluice/pg/db/seats/");
	sl_fleet_key(k, sizeof(k), "pg", "db", SL_FLEET_KEY_MEMBER, "host-a");
	assert_string_equal(k, "/sluice/pg/db/seats/member/host-a");
	sl_fleet_key(k, sizeof(k), "pg", "db", SL_FLEET_KEY_CLAIM, "host-a");
	assert_string_equal(k, "/sluice/pg/db/seats/claim/host-a");
	sl_fleet_key(k, sizeof(k), "pg", "db", SL_FLEET_KEY_WANT, "host-a");
	assert_string_equal(k, "/sluice/pg/db/want/host-a");
	assert_int_equal(sl_fleet_key(small, sizeof(small), "pg", "db", SL_FLEET_KEY_WANT, "host-a"), -E2BIG);
	v = sl_fleet_value_member(20);
	assert_string_equal(v, "{\"floor\":20}");
	free(v);
	v = sl_fleet_value_claim(4000000000u);
	assert_string_equal(v, "{\"extra\":4000000000}");
	free(v);
	v = sl_fleet_value_want(3, 9, 200);
	assert_string_equal(v, "{\"budget\":200,\"in_use\":3,\"wants\":9}");
	free(v);
}

static struct sl_etcd_kv kv(const char *key, const char *value, int64_t lease)
{
	struct sl_etcd_kv k = {.lease = lease};

	snprintf(k.key, sizeof(k.key), "%s", key);
	snprintf(k.value, sizeof(k.value), "%s", value);
	return k;
}

/* As a range returns them (by key): members, claims and wants of three
 * hosts, one gone (no claim), one of another shape, one unreadable. */
static void test_members_from_a_range(void **state)
{
	struct sl_etcd_kv kvs[] = {
		kv("/sluice/pg/db/seats/claim/host-b", "{\"extra\":30}", 77),
		kv("/sluice/pg/db/seats/claim/host-c", "{\"extra\":-1}", 78),   /* unreadable: skipped */
		kv("/sluice/pg/db/seats/member/host-a", "{\"floor\":10}", 0),   /* its lease expired */
		kv("/sluice/pg/db/seats/member/host-b", "{\"floor\":20}", 0),
		kv("/sluice/pg/db/seats/member/host-c", "{\"floor\":5}", 0),
		kv("/sluice/pg/db/seats/quota", "{}", 0),                       /* another shape: skipped */
		kv("/sluice/pg/db/want/host-b", "{\"budget\":200,\"in_use\":25,\"wants\":60}", 77),
	};
	struct sl_fleet_node out[4];
	size_t n, skipped;

	(void)state;
	assert_int_equal(sl_fleet_members(kvs, 7, "/sluice/pg/db/", out, 4, &n, &skipped), 0);
	assert_int_equal(n, 3);
	assert_int_equal(skipped, 2);
	assert_string_equal(out[0].node, "host-a");
	assert_false(out[0].m.live);
	assert_int_equal(out[0].m.floor, 10);
	assert_string_equal(out[1].node, "host-b");
	assert_true(out[1].m.live);
	assert_int_equal(out[1].lease, 77);
	assert_int_equal(out[1].m.floor, 20);
	assert_int_equal(out[1].m.extra, 30);
	assert_int_equal(out[1].m.in_use, 25);
	assert_int_equal(out[1].m.wants, 60);
	assert_int_equal(out[1].m.budget, 200);
	assert_string_equal(out[2].node, "host-c");
	assert_false(out[2].m.live); /* its claim did not read */
	assert_int_equal(sl_fleet_members(kvs, 7, "/sluice/pg/db/", out, 2, &n, &skipped), -E2BIG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keys_and_values),
		cmocka_unit_test(test_members_from_a_range),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
