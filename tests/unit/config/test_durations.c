// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Configuration loader tests: durations (parsing, formatting, and the
 * messages of duration fields).
 *
 * Every rule has a good and a bad example; the bad ones are rows of
 * bad_cases[] (one test each).  Run from the repository root, or point
 * SLUICE_TEST_DATA at tests/unit/configs.
 */
#include "config_helpers.h"

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

int main(void)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(test_parse_duration_good),
		cmocka_unit_test(test_parse_duration_bad),
		cmocka_unit_test(test_format_duration),
		cmocka_unit_test(test_duration_field_messages),
	};

	return run_config_suite("config_durations", fixed, N_OF(fixed), NULL, 0);
}
