// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Unit tests for the per-FlowSchema metrics (user/daemon/flow_metrics.c):
 * counters stay monotonic across a reload that moves a schema's index,
 * a new occupant of an index does not inherit what its predecessor
 * counted, dispatched and rejected combine the data path's and the
 * daemon's verdicts, and the exposition passes a parse of its own.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "daemon/flow_metrics.h"

/* A configuration of just its FlowSchemas: (name, level) pairs. */
struct mini_cfg {
	struct sl_config cfg;
	struct sl_flow_schema fs[8];
};

static void mini(struct mini_cfg *m, const char *const pairs[][2], size_t n)
{
	memset(m, 0, sizeof(*m));
	for (size_t i = 0; i < n; i++) {
		snprintf(m->fs[i].name, sizeof(m->fs[i].name), "%s", pairs[i][0]);
		snprintf(m->fs[i].level_name, sizeof(m->fs[i].level_name), "%s", pairs[i][1]);
	}
	m->cfg.schemas = m->fs;
	m->cfg.n_schemas = n;
}

/* The value of the sample whose line starts with prefix (name{labels}), or
 * -1 when there is none. */
static double sample(const char *text, const char *prefix)
{
	size_t n = strlen(prefix);

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, prefix, n) && l[n] == ' ')
			return strtod(l + n + 1, NULL);
	return -1;
}

static char *render(const struct sl_flow_metrics *fm, const struct sl_fs_reading *r, size_t n)
{
	char *text = NULL;
	size_t len;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	sl_fm_render(fm, f, r, n);
	assert_int_equal(fclose(f), 0);
	return text;
}

#define DISPATCHED(s, l) "sluice_dispatched_connections_total{priority_level=\"" l "\",flow_schema=\"" s "\"}"

static void test_counters_follow_a_schema_to_its_new_index(void **state)
{
	static const char *const v1[][2] = {{"tenant-a", "web"}, {"tenant-b", "web"}};
	/* A new schema takes index 0; tenant-a moves to 1; tenant-b is gone. */
	static const char *const v2[][2] = {{"tenant-c", "web"}, {"tenant-a", "web"}};
	struct sl_fs_reading r[2] = {0};
	struct sl_flow_metrics fm;
	struct mini_cfg m;
	char *text;

	(void)state;
	sl_fm_init(&fm);
	r[0].c.admitted_inline = 100; /* counted before the daemon started */
	mini(&m, v1, 2);
	assert_int_equal(sl_fm_reconfigure(&fm, &m.cfg, r, 2), 0);
	r[0].c.syns = r[0].c.admitted_inline = 105; /* tenant-a: 5 since */
	r[1].c.syns = r[1].c.admitted_inline = 7;   /* tenant-b: 7 */
	sl_fm_dispatched(sl_fm_at(&fm, 0), 0.25); /* and one from a queue */
	text = render(&fm, r, 2);
	assert_int_equal(sample(text, DISPATCHED("tenant-a", "web")), 6);
	assert_int_equal(sample(text, DISPATCHED("tenant-b", "web")), 7);
	free(text);

	mini(&m, v2, 2);
	assert_int_equal(sl_fm_reconfigure(&fm, &m.cfg, r, 2), 0);
	/* Index 0 now counts tenant-c, index 1 tenant-a. */
	r[0].c.syns = r[0].c.admitted_inline = 108; /* tenant-c: 3 */
	r[1].c.syns = r[1].c.admitted_inline = 9;   /* tenant-a: 2 more */
	text = render(&fm, r, 2);
	assert_int_equal(sample(text, DISPATCHED("tenant-a", "web")), 8);
	assert_int_equal(sample(text, DISPATCHED("tenant-c", "web")), 3);
	assert_true(sample(text, DISPATCHED("tenant-b", "web")) < 0);
	free(text);
	sl_fm_free(&fm);
}

/* The pair is the series: a schema moved to another level starts anew. */
static void test_a_schema_moved_to_another_level_starts_anew(void **state)
{
	static const char *const v1[][2] = {{"t", "web"}};
	static const char *const v2[][2] = {{"t", "batch"}};
	struct sl_fs_reading r[1] = {{.c = {.syns = 4, .admitted_inline = 4}}};
	struct sl_flow_metrics fm;
	struct mini_cfg m;
	char *text;

	(void)state;
	sl_fm_init(&fm);
	mini(&m, v1, 1);
	assert_int_equal(sl_fm_reconfigure(&fm, &m.cfg, NULL, 0), 0);
	text = render(&fm, r, 1);
	assert_int_equal(sample(text, DISPATCHED("t", "web")), 4);
	free(text);
	mini(&m, v2, 1);
	assert_int_equal(sl_fm_reconfigure(&fm, &m.cfg, r, 1), 0);
	r[0].c.syns = r[0].c.admitted_inline = 6;
	text = render(&fm, r, 1);
	assert_int_equal(sample(text, DISPATCHED("t", "batch")), 2);
	assert_true(sample(text, DISPATCHED("t", "web")) < 0);
	free(text);
	sl_fm_free(&fm);
}

static void test_rejections_waits_and_durations(void **state)
{
	static const char *const v[][2] = {{"tenant-a", "web"}, {"idle", "web"}};
	/* The data path's lifetimes: one of 42 s (bucket le=60, the 14th bound). */
	struct sl_fs_reading r[2] = {{.c = {.syns = 10, .admitted_inline = 3, .rejected_inline = 2},
				      .d = {.bucket = {[13] = 1}, .sum_ns = 42000000000ULL}}};
	struct sl_flow_metrics fm;
	struct sl_flow_series *s;
	struct mini_cfg m;
	char *text;

	(void)state;
	sl_fm_init(&fm);
	mini(&m, v, 2);
	assert_int_equal(sl_fm_reconfigure(&fm, &m.cfg, NULL, 0), 0);
	s = sl_fm_at(&fm, 0);
	assert_null(sl_fm_at(&fm, 2));
	sl_fm_rejected(s, SL_REJ_QUEUE_FULL, 0.001);
	sl_fm_rejected(s, SL_REJ_TIME_OUT, 3);
	sl_fm_rejected(s, SL_REJ_CONCURRENCY, 0);
	sl_fm_dispatched(s, 0.3);
	sl_fm_rejected(NULL, SL_REJ_TIME_OUT, 1); /* no series: nothing */
	s->inqueue = 4;
	text = render(&fm, r, 2);
#define L "{priority_level=\"web\",flow_schema=\"tenant-a\""
	assert_int_equal(sample(text, "sluice_rejected_connections_total" L ",reason=\"queue-full\"}"), 1);
	assert_int_equal(sample(text, "sluice_rejected_connections_total" L ",reason=\"time-out\"}"), 1);
	/* The data path's two RSTs and the daemon's one. */
	assert_int_equal(sample(text, "sluice_rejected_connections_total" L ",reason=\"concurrency-limit\"}"), 3);
	assert_int_equal(sample(text, "sluice_rejected_connections_total" L ",reason=\"cancelled\"}"), 0);
	assert_int_equal(sample(text, "sluice_current_inqueue_connections" L "}"), 4);
	assert_int_equal(sample(text, "sluice_flowschema_syns_total" L "}"), 10);
	/* Waits: 3 inline admissions at 0 s and the dispatched one at 0.3 s. */
	assert_int_equal(sample(text, "sluice_connection_wait_duration_seconds_bucket" L ",execute=\"true\",le=\"0\"}"), 3);
	assert_int_equal(sample(text, "sluice_connection_wait_duration_seconds_bucket" L ",execute=\"true\",le=\"0.2\"}"), 3);
	assert_int_equal(sample(text, "sluice_connection_wait_duration_seconds_bucket" L ",execute=\"true\",le=\"0.5\"}"), 4);
	assert_int_equal(sample(text, "sluice_connection_wait_duration_seconds_count" L ",execute=\"true\"}"), 4);
	assert_true(fabs(sample(text, "sluice_connection_wait_duration_seconds_sum" L ",execute=\"true\"}") - 0.3) < 1e-9);
	/* Rejected: 2 inline RSTs at 0 s, and 0.001, 3 and 0 s. */
	assert_int_equal(sample(text, "sluice_connection_wait_duration_seconds_count" L ",execute=\"false\"}"), 5);
	assert_int_equal(sample(text, "sluice_connection_wait_duration_seconds_bucket" L ",execute=\"false\",le=\"2\"}"), 4);
	assert_int_equal(sample(text, "sluice_connection_duration_seconds_bucket" L ",le=\"30\"}"), 0);
	assert_int_equal(sample(text, "sluice_connection_duration_seconds_bucket" L ",le=\"60\"}"), 1);
	assert_int_equal(sample(text, "sluice_connection_duration_seconds_bucket" L ",le=\"+Inf\"}"), 1);
	assert_true(fabs(sample(text, "sluice_connection_duration_seconds_sum" L "}") - 42) < 1e-9);
#undef L
	/* A series nothing happened to is not written. */
	assert_null(strstr(text, "flow_schema=\"idle\""));
	free(text);
	sl_fm_free(&fm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counters_follow_a_schema_to_its_new_index),
		cmocka_unit_test(test_a_schema_moved_to_another_level_starts_anew),
		cmocka_unit_test(test_rejections_waits_and_durations),
	};

	return cmocka_run_group_tests_name("flow_metrics", tests, NULL, NULL);
}
