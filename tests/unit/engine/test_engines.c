// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Unit tests for the small pure engines of the foundation: concurrency
 * limits (against spec/vectors/apf.json), level slots, cgroup2 discovery,
 * address formatting and the JSON writer. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "vectors.h"
#include <jansson.h>

#include "lib/cgroup_path.h"
#include "lib/fmt.h"
#include "lib/json_out.h"
#include "engine/level_slots.h"
#include "engine/limits.h"

#include "apf_defaults.h"
#include "load_config.h"

static void test_limits_default_config_vectors(void **state)
{
	json_t *root = load_vectors("apf.json"), *cases, *c;
	const char *server_cl_key;
	struct sl_limit_input in[N_DEFAULT];
	struct sl_level_limits out[N_DEFAULT];
	int checked = 0;

	(void)state;
	for (size_t i = 0; i < N_DEFAULT; i++) {
		in[i].exempt = default_levels[i].exempt;
		in[i].shares = default_levels[i].shares;
		in[i].lendable_percent = default_levels[i].lendable;
		in[i].borrowing_limit_percent = -1;
	}
	cases = json_object_get(json_object_get(root, "concurrency"), "defaultConfigLimits");
	assert_non_null(cases);
	json_object_foreach(cases, server_cl_key, c) {
		uint32_t server_cl = (uint32_t)json_integer_value(json_object_get(c, "serverCL"));
		json_t *per = json_object_get(c, "perLevel");
		uint32_t sum = 0;

		assert_int_equal(sl_limits_compute(server_cl, in, N_DEFAULT, out), 0);
		for (size_t i = 0; i < N_DEFAULT; i++) {
			json_t *v = json_object_get(per, default_levels[i].name);

			assert_non_null(v);
			assert_int_equal(out[i].nominal, json_integer_value(json_object_get(v, "nominalCL")));
			assert_int_equal(out[i].lendable, json_integer_value(json_object_get(v, "lendableCL")));
			assert_int_equal(out[i].borrowing, json_integer_value(json_object_get(v, "borrowingCL")));
			assert_int_equal(out[i].min, json_integer_value(json_object_get(v, "minCL")));
			assert_int_equal(out[i].max, json_integer_value(json_object_get(v, "maxCL")));
			if (json_object_get(v, "initialCL"))
				assert_int_equal(out[i].initial,
						 json_integer_value(json_object_get(v, "initialCL")));
			sum += out[i].nominal;
			checked++;
		}
		if (json_object_get(c, "nominalCLSum"))
			assert_int_equal(sum, json_integer_value(json_object_get(c, "nominalCLSum")));
	}
	assert_true(checked >= (int)N_DEFAULT);
	json_decref(root);
}

/* The built-in levels pasted as kubectl prints them (a List of v1 objects
 * with the server's metadata and status: tests/unit/configs/pasted/, its
 * source cited there) load, and their limits at serverConcurrencyLimit 600
 * are kube-apiserver's (spec/vectors/apf.json), level by level. */
static void test_limits_of_pasted_kubectl_levels(void **state)
{
	const char *dir = getenv("SLUICE_TEST_DATA");
	char path[512];
	struct sl_config *cfg;
	json_t *root = load_vectors("apf.json"), *per;
	struct sl_limit_input in[SL_MAX_LEVELS] = {0};
	struct sl_level_limits out[SL_MAX_LEVELS];

	(void)state;
	snprintf(path, sizeof(path), "%s/pasted/kubectl-builtin-levels-list.yaml",
		 dir ? dir : "tests/unit/configs");
	cfg = load_config_file(path);
	per = json_object_get(json_object_get(json_object_get(json_object_get(root, "concurrency"),
							      "defaultConfigLimits"), "600"), "perLevel");
	assert_non_null(per);
	assert_int_equal(cfg->n_levels, N_DEFAULT);
	for (size_t i = 0; i < cfg->n_levels; i++) {
		in[i].exempt = cfg->levels[i].type == SL_LEVEL_EXEMPT;
		in[i].shares = (uint32_t)cfg->levels[i].shares;
		in[i].lendable_percent = (uint32_t)cfg->levels[i].lendable_percent;
		in[i].borrowing_limit_percent = cfg->levels[i].borrowing_limit_percent;
	}
	assert_int_equal(sl_limits_compute(600, in, cfg->n_levels, out), 0);
	for (size_t i = 0; i < cfg->n_levels; i++) {
		json_t *v = json_object_get(per, cfg->levels[i].name);

		assert_non_null(v);
		assert_int_equal(out[i].nominal, json_integer_value(json_object_get(v, "nominalCL")));
		assert_int_equal(out[i].lendable, json_integer_value(json_object_get(v, "lendableCL")));
		assert_int_equal(out[i].min, json_integer_value(json_object_get(v, "minCL")));
		assert_int_equal(out[i].max, json_integer_value(json_object_get(v, "maxCL")));
	}
	sl_config_free(cfg);
	json_decref(root);
}

static void test_limits_borrowing_percent_and_errors(void **state)
{
	struct sl_limit_input in[2] = {
		{.shares = 10, .lendable_percent = 0, .borrowing_limit_percent = 150},
		{.shares = 30, .lendable_percent = 100, .borrowing_limit_percent = 0},
	};
	struct sl_level_limits out[2];

	(void)state;
	assert_int_equal(sl_limits_compute(100, in, 2, out), 0);
	assert_int_equal(out[0].nominal, 25);   /* ceil(100*10/40) */
	assert_int_equal(out[0].borrowing, 38); /* round(37.5) away from zero */
	assert_int_equal(out[0].max, 63);
	assert_int_equal(out[1].nominal, 75);
	assert_int_equal(out[1].lendable, 75);
	assert_int_equal(out[1].min, 0);
	assert_int_equal(out[1].borrowing, 0);
	assert_int_equal(sl_limits_compute(0, in, 2, out), -EINVAL);
	assert_int_equal(sl_limits_compute(10, in, 0, out), -EINVAL);
	/* All shares zero: nobody gets a nominal seat, nothing divides by 0. */
	in[0].shares = in[1].shares = 0;
	assert_int_equal(sl_limits_compute(10, in, 2, out), 0);
	assert_int_equal(out[0].nominal, 0);
	assert_int_equal(out[1].nominal, 0);
}

static void test_level_slots_keep_and_fill(void **state)
{
	char old[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN] = {{0}};
	const char *want[] = {"new", "b", "a"};
	unsigned slot[3];

	(void)state;
	strcpy(old[0], "a");
	strcpy(old[1], "gone"); /* a vanished level: its slot is the last resort */
	strcpy(old[2], "b");
	assert_int_equal(sl_assign_level_slots(old, want, 3, slot), 0);
	assert_int_equal(slot[2], 0); /* a stays */
	assert_int_equal(slot[1], 2); /* b stays */
	assert_int_equal(slot[0], 3); /* new takes the first never-used slot */
}

static void test_level_slots_full(void **state)
{
	char old[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN] = {{0}};
	const char *names[SLUICE_MAX_LEVELS + 1];
	char buf[SLUICE_MAX_LEVELS + 1][8];
	unsigned slot[SLUICE_MAX_LEVELS + 1];

	(void)state;
	for (int i = 0; i <= SLUICE_MAX_LEVELS; i++) {
		snprintf(buf[i], sizeof(buf[i]), "l%d", i);
		names[i] = buf[i];
	}
	assert_int_equal(sl_assign_level_slots(old, names, SLUICE_MAX_LEVELS, slot), 0);
	for (int i = 0; i < SLUICE_MAX_LEVELS; i++)
		assert_int_equal(slot[i], i);
	assert_int_equal(sl_assign_level_slots(old, names, SLUICE_MAX_LEVELS + 1, slot), -ENOSPC);
}

static void test_cgroup2_find(void **state)
{
	const char mounts[] =
		"sysfs /sys sysfs rw 0 0\n"
		"cgroup /sys/fs/cgroup/cpu cgroup rw,cpu 0 0\n"
		"cgroup2 /sys/fs/cgroup/uni\\040fied cgroup2 rw,relatime 0 0\n";
	const char none[] = "sysfs /sys sysfs rw 0 0\n";
	char out[256];
	FILE *f;

	(void)state;
	f = fmemopen((void *)mounts, sizeof(mounts) - 1, "r");
	assert_int_equal(sl_cgroup2_find(f, out, sizeof(out)), 0);
	assert_string_equal(out, "/sys/fs/cgroup/uni fied");
	fclose(f);
	f = fmemopen((void *)none, sizeof(none) - 1, "r");
	assert_int_equal(sl_cgroup2_find(f, out, sizeof(out)), -ENOENT);
	fclose(f);
}

static void test_fmt_addr_roundtrip(void **state)
{
	uint8_t a[16];
	char buf[64];

	(void)state;
	assert_int_equal(sl_parse_addr("198.18.0.7", a), 4);
	assert_int_equal(a[10], 0xff);
	assert_int_equal(a[15], 7);
	assert_string_equal(sl_fmt_addr(a, buf, sizeof(buf)), "198.18.0.7");
	assert_string_equal(sl_fmt_endpoint(a, htons(8080), buf, sizeof(buf)), "198.18.0.7:8080");
	assert_int_equal(sl_parse_addr("fd53:6c75:6963::2", a), 6);
	assert_string_equal(sl_fmt_endpoint(a, htons(443), buf, sizeof(buf)), "[fd53:6c75:6963::2]:443");
	assert_int_equal(sl_parse_addr("not-an-address", a), -EINVAL);
}

static void test_json_out_escaping_and_nesting(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct json_out jo;
	json_error_t jerr;
	json_t *root;

	(void)state;
	jo_init(&jo, f, false);
	jo_obj_begin(&jo, NULL);
	jo_str(&jo, "s", "a\"b\\c\nd\x01");
	jo_arr_begin(&jo, "arr");
	jo_u64(&jo, NULL, 9007199254740993ULL);
	jo_i64(&jo, NULL, -5);
	jo_double(&jo, NULL, 0.5);
	jo_obj_begin(&jo, NULL);
	jo_obj_end(&jo);
	jo_arr_end(&jo);
	jo_null(&jo, "n");
	jo_bool(&jo, "t", true);
	jo_obj_end(&jo);
	jo_finish(&jo);
	fclose(f);

	root = json_loads(buf, 0, &jerr);
	if (!root)
		fail_msg("invalid JSON '%s': %s", buf, jerr.text);
	assert_string_equal(json_string_value(json_object_get(root, "s")), "a\"b\\c\nd\x01");
	assert_int_equal(json_array_size(json_object_get(root, "arr")), 4);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(root, "arr"), 1)), -5);
	assert_true(json_is_null(json_object_get(root, "n")));
	assert_true(json_is_true(json_object_get(root, "t")));
	json_decref(root);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_limits_default_config_vectors),
		cmocka_unit_test(test_limits_of_pasted_kubectl_levels),
		cmocka_unit_test(test_limits_borrowing_percent_and_errors),
		cmocka_unit_test(test_level_slots_keep_and_fill),
		cmocka_unit_test(test_level_slots_full),
		cmocka_unit_test(test_cgroup2_find),
		cmocka_unit_test(test_fmt_addr_roundtrip),
		cmocka_unit_test(test_json_out_escaping_and_nesting),
	};

	return cmocka_run_group_tests_name("engines", tests, NULL, NULL);
}
