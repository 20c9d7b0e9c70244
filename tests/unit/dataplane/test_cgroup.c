// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Which cgroup sock_ops is attached to (lib/cgroup_path.c), on the real
 * cgroup2 mount: its root is a root (every socket of the host is under
 * it), a cgroup made under it is not, and neither is what is no cgroup.
 * Needs root (it makes a cgroup).
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/cgroup_path.h"

static void test_root_and_child(void **state)
{
	char root[PATH_MAX], child[PATH_MAX + 32];

	(void)state;
	assert_int_equal(sl_cgroup2_root(root, sizeof(root)), 0);
	assert_true(sl_cgroup2_is_root(root));
	snprintf(child, sizeof(child), "%s/sluice-unit-%d", root, (int)getpid());
	assert_int_equal(mkdir(child, 0755), 0);
	assert_false(sl_cgroup2_is_root(child));
	assert_int_equal(rmdir(child), 0);
}

static void test_no_cgroup(void **state)
{
	(void)state;
	assert_false(sl_cgroup2_is_root("/tmp"));
	assert_false(sl_cgroup2_is_root("/nonexistent"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_root_and_child),
		cmocka_unit_test(test_no_cgroup),
	};

	return cmocka_run_group_tests_name("cgroup", tests, NULL, NULL);
}
