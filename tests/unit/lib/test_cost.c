// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Unit tests for what sluice costs per connection (user/lib/cost.c) and
 * the daemon's CPU time from procfs (user/lib/task_cpu.c, on a directory
 * laid out as /proc is). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/cost.h"
#include "lib/task_cpu.h"

static struct sl_cost_reading reading(uint64_t t_ns, uint64_t xdp_runs, uint64_t xdp_ns, uint64_t so_runs,
				      uint64_t so_ns, uint64_t daemon_ns, uint64_t admitted)
{
	struct sl_cost_reading r = {.mono_ns = t_ns, .daemon_pid = 42, .daemon_ns = daemon_ns, .admitted = admitted};

	r.prog[0].id = 7;
	r.prog[0].runs = xdp_runs;
	r.prog[0].run_ns = xdp_ns;
	r.prog[1].id = 8;
	r.prog[1].runs = so_runs;
	r.prog[1].run_ns = so_ns;
	return r;
}

static void test_per_connection(void **state)
{
	struct sl_cost_reading a = reading(1000000000, 500, 100000, 1300, 50000, 3000000, 100);
	struct sl_cost_reading b = reading(3000000000, 5500, 1100000, 14300, 1050000, 3400000, 1100);
	struct sl_cost c;

	(void)state;
	sl_cost_between(&a, &b, &c);
	assert_true(c.seconds == 2.0);
	assert_int_equal(c.connections, 1000);
	assert_int_equal(c.prog[0].runs, 5000);
	assert_true(c.prog[0].runs_per_conn == 5.0);
	assert_true(c.prog[0].ns_per_run == 200.0);
	assert_true(c.prog[0].ns_per_conn == 1000.0);
	assert_true(c.prog[1].runs_per_conn == 13.0);
	assert_true(c.prog[1].ns_per_conn == 1000.0);
	assert_int_equal(c.daemon_ns, 400000);
	assert_true(c.daemon_ns_per_conn == 400.0);
	assert_true(c.bpf_ns_per_conn == 2000.0);
	assert_true(c.ns_per_conn == 2400.0);
	assert_false(c.prog_replaced[0] || c.prog_replaced[1] || c.daemon_replaced);
}

/* Nothing admitted: the runs still count, nothing is divided by zero. */
static void test_no_connection(void **state)
{
	struct sl_cost_reading a = reading(0, 10, 1000, 0, 0, 0, 5);
	struct sl_cost_reading b = reading(500000000, 20, 3000, 0, 0, 1000, 5);
	struct sl_cost c;

	(void)state;
	sl_cost_between(&a, &b, &c);
	assert_int_equal(c.connections, 0);
	assert_int_equal(c.prog[0].runs, 10);
	assert_true(c.prog[0].ns_per_run == 200.0);
	assert_true(c.prog[0].ns_per_conn == 0 && c.ns_per_conn == 0);
	assert_true(c.prog[1].ns_per_run == 0); /* no run: no division */
}

/* A program or the daemon replaced in between: its counts restart at 0,
 * and the difference of two programs' counts is not taken. */
static void test_replaced(void **state)
{
	struct sl_cost_reading a = reading(0, 5000, 900000, 100, 100, 5000000, 100);
	struct sl_cost_reading b = reading(1000000000, 10, 2000, 200, 300, 1000, 200);
	struct sl_cost c;

	(void)state;
	b.prog[0].id = 9;
	b.daemon_pid = 43;
	sl_cost_between(&a, &b, &c);
	assert_true(c.prog_replaced[0]);
	assert_false(c.prog_replaced[1]);
	assert_true(c.daemon_replaced);
	assert_int_equal(c.prog[0].runs, 0);
	assert_int_equal(c.daemon_ns, 0);
	assert_int_equal(c.prog[1].runs, 100);
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_task_cpu(void **state)
{
	char dir[] = "/tmp/sl-proc-XXXXXX", p[512];
	uint64_t ns = 0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/123", dir);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/123/task", dir);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/123/task/123", dir);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/123/task/124", dir);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/123/task/123/schedstat", dir);
	put(p, "1500000 20000 30\n");
	snprintf(p, sizeof(p), "%s/123/task/124/schedstat", dir);
	put(p, "250 7 1\n");

	/* Every thread's run time, summed (the first field only). */
	assert_int_equal(sl_task_cpu_ns(dir, 123, &ns), 0);
	assert_int_equal(ns, 1500250);
	/* No such process. */
	assert_int_equal(sl_task_cpu_ns(dir, 999, &ns), -ESRCH);

	snprintf(p, sizeof(p), "rm -rf '%s'", dir);
	assert_int_equal(system(p), 0);
}

/* The real procfs: this process has run. */
static void test_task_cpu_self(void **state)
{
	uint64_t ns = 0;

	(void)state;
	assert_int_equal(sl_task_cpu_ns("/proc", getpid(), &ns), 0);
	assert_true(ns > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_per_connection),
		cmocka_unit_test(test_no_connection),
		cmocka_unit_test(test_replaced),
		cmocka_unit_test(test_task_cpu),
		cmocka_unit_test(test_task_cpu_self),
	};

	return cmocka_run_group_tests_name("cost", tests, NULL, NULL);
}
