// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* "Did you mean ...?" (user/lib/nearest.c): a prefix, or at most two edits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/nearest.h"

static const char *const commands[] = {"status", "top", "levels", "queues", "flows", "conns", "cost",
				       "controller", "validate", "limits", "reload", "replay"};
#define N (sizeof(commands) / sizeof(commands[0]))

static void test_nearest(void **state)
{
	(void)state;
	assert_string_equal(sl_nearest("statsu", commands, N), "status");  /* a swap */
	assert_string_equal(sl_nearest("stauts", commands, N), "status");
	assert_string_equal(sl_nearest("levle", commands, N), "levels");   /* a swap and a letter */
	assert_string_equal(sl_nearest("contr", commands, N), "controller"); /* a prefix */
	assert_string_equal(sl_nearest("cots", commands, N), "cost");
	assert_string_equal(sl_nearest("reloda", commands, N), "reload");
	assert_null(sl_nearest("xyzzy", commands, N));
	assert_null(sl_nearest("", commands, N));
	assert_null(sl_nearest("status", commands, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nearest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
