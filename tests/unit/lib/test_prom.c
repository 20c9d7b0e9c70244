// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Unit tests for the Prometheus text writer (user/lib/prom.c). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/prom.h"

/* What fn wrote into a memory stream. */
#define CAPTURE(text, ...) do { \
		size_t len_; \
		FILE *f_ = open_memstream(&(text), &len_); \
		assert_non_null(f_); \
		{ FILE *f = f_; __VA_ARGS__; } \
		assert_int_equal(fclose(f_), 0); \
	} while (0)

static void test_family_and_samples(void **state)
{
	char *text = NULL;

	(void)state;
	CAPTURE(text,
		sl_prom_family(f, "level_seats", SL_PROM_GAUGE, "Seats in use.");
		sl_prom_sample(f, "level_seats", 3, "level", "web", NULL);
		sl_prom_sample(f, "level_seats", 0.5, "level", "api", "reason", "x", NULL);
		sl_prom_sample(f, "level_seats", 7, NULL));
	assert_string_equal(text,
			    "# HELP sluice_level_seats Seats in use.\n"
			    "# TYPE sluice_level_seats gauge\n"
			    "sluice_level_seats{level=\"web\"} 3\n"
			    "sluice_level_seats{level=\"api\",reason=\"x\"} 0.5\n"
			    "sluice_level_seats 7\n");
	free(text);
}

static void test_values_as_prometheus_reads_them(void **state)
{
	char *text = NULL;

	(void)state;
	CAPTURE(text,
		sl_prom_sample(f, "a", NAN, NULL);
		sl_prom_sample(f, "a", INFINITY, NULL);
		sl_prom_sample(f, "a", -INFINITY, NULL);
		sl_prom_sample(f, "a", 0.1, NULL);
		sl_prom_sample_u64(f, "c", UINT64_MAX, NULL);
		sl_prom_sample_u64(f, "c", (1ull << 53) + 1, NULL));
	assert_string_equal(text,
			    "sluice_a NaN\n"
			    "sluice_a +Inf\n"
			    "sluice_a -Inf\n"
			    "sluice_a 0.10000000000000001\n" /* round-trips */
			    "sluice_c 18446744073709551615\n"
			    "sluice_c 9007199254740993\n"); /* exact, where a double is not */
	assert_true(strtod("0.10000000000000001", NULL) == 0.1);
	free(text);
}

static void test_escaping(void **state)
{
	char *text = NULL;

	(void)state;
	CAPTURE(text,
		sl_prom_family(f, "x", SL_PROM_COUNTER, "a \\ b\nc \"q\"");
		sl_prom_sample_u64(f, "x", 1, "level", "we\"b\\\n", "empty", NULL, NULL));
	/* Help escapes backslash and newline; label values also the double quote. */
	assert_string_equal(text,
			    "# HELP sluice_x a \\\\ b\\nc \"q\"\n"
			    "# TYPE sluice_x counter\n"
			    "sluice_x{level=\"we\\\"b\\\\\\n\",empty=\"\"} 1\n");
	free(text);
}

static void test_single(void **state)
{
	char *text = NULL;

	(void)state;
	CAPTURE(text, sl_prom_single(f, "up", SL_PROM_GAUGE, "1 while up.", 1));
	assert_string_equal(text, "# HELP sluice_up 1 while up.\n# TYPE sluice_up gauge\nsluice_up 1\n");
	free(text);
}

/* Buckets are cumulative with le as the last label, +Inf equals _count,
 * a value on a bound counts in that bound's bucket, and extra zeros land
 * in every bucket. */
static void test_histogram(void **state)
{
	static const double bounds[] = {0.005, 0.5, 2};
	struct sl_hist h;
	char *text = NULL;

	(void)state;
	sl_hist_init(&h, bounds, 3);
	sl_hist_observe(&h, 0.5);   /* on a bound: le="0.5" */
	sl_hist_observe(&h, 0.001);
	sl_hist_observe(&h, 7);     /* above every bound: +Inf only */
	sl_hist_observe(&h, NAN);   /* ignored */
	assert_int_equal(h.count, 3);
	CAPTURE(text,
		sl_prom_family(f, "wait_seconds", SL_PROM_HISTOGRAM, "Waits.");
		sl_prom_histogram(f, "wait_seconds", &h, 2, "priority_level", "web", NULL));
	assert_string_equal(text,
			    "# HELP sluice_wait_seconds Waits.\n"
			    "# TYPE sluice_wait_seconds histogram\n"
			    "sluice_wait_seconds_bucket{priority_level=\"web\",le=\"0.005\"} 3\n"
			    "sluice_wait_seconds_bucket{priority_level=\"web\",le=\"0.5\"} 4\n"
			    "sluice_wait_seconds_bucket{priority_level=\"web\",le=\"2\"} 4\n"
			    "sluice_wait_seconds_bucket{priority_level=\"web\",le=\"+Inf\"} 5\n"
			    "sluice_wait_seconds_sum{priority_level=\"web\"} 7.5010000000000003\n"
			    "sluice_wait_seconds_count{priority_level=\"web\"} 5\n");
	free(text);
	/* No labels at all: le alone. */
	CAPTURE(text, sl_prom_histogram(f, "x", &h, 0, NULL));
	assert_non_null(strstr(text, "sluice_x_bucket{le=\"+Inf\"} 3\n"));
	assert_non_null(strstr(text, "sluice_x_count 3\n"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_family_and_samples),
		cmocka_unit_test(test_values_as_prometheus_reads_them),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_single),
		cmocka_unit_test(test_histogram),
	};

	return cmocka_run_group_tests_name("prom", tests, NULL, NULL);
}
