/*
 * The control protocol's request parser (control.h): every request word
 * matches exactly, with exactly the arguments it takes.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/control.h"

static void expect_ok(const char *line, enum sl_control_cmd cmd, const char *arg)
{
	struct sl_control_req r;
	const char *why = NULL;
	char buf[SL_CONTROL_REQUEST_MAX];

	snprintf(buf, sizeof(buf), "%s", line);
	assert_int_equal(sl_control_parse(buf, &r, &why), 0);
	assert_int_equal(r.cmd, cmd);
	if (arg)
		assert_string_equal(r.arg, arg);
	else
		assert_null(r.arg);
}

static void expect_bad(const char *line, const char *why_part)
{
	struct sl_control_req r;
	const char *why = NULL;
	char buf[SL_CONTROL_REQUEST_MAX];

	snprintf(buf, sizeof(buf), "%s", line);
	assert_int_equal(sl_control_parse(buf, &r, &why), -EINVAL);
	assert_non_null(why);
	if (!strstr(why, why_part))
		fail_msg("'%s': why '%s' lacks '%s'", line, why, why_part);
}

static void test_words(void **state)
{
	(void)state;
	expect_ok("levels\n", SL_CTL_LEVELS, NULL);
	expect_ok("levels web", SL_CTL_LEVELS, "web");
	expect_ok("queues\r\n", SL_CTL_QUEUES, NULL);
	expect_ok("flows catch-all\n", SL_CTL_FLOWS, "catch-all");
	expect_ok("controller", SL_CTL_CONTROLLER, NULL);
	expect_ok("reload\n", SL_CTL_RELOAD, NULL);
	expect_ok("shadow on", SL_CTL_SHADOW, "on");
	expect_ok("shadow off\n", SL_CTL_SHADOW, "off");
	expect_ok("hand web=198.18.3.0/24\n", SL_CTL_HAND, "web=198.18.3.0/24");
	expect_ok("hand web=", SL_CTL_HAND, "web="); /* no distinguisher */
	expect_ok("reload-status 17\n", SL_CTL_RELOAD_STATUS, "17");
}

static void test_exact(void **state)
{
	(void)state;
	expect_bad("levelsx", "unknown request");
	expect_bad("level", "unknown request");
	expect_bad("reloadnow", "unknown request");
	expect_bad("RELOAD", "unknown request");
	expect_bad("", "unknown request");
	expect_bad("reload now", "no argument");
	expect_bad("controller x", "no argument");
	expect_bad("shadow", "shadow on");
	expect_bad("shadow maybe", "shadow on");
	expect_bad("shadow on off", "at most one argument");
	expect_bad("levels ", "at most one argument");
	expect_bad("levels  web", "at most one argument");
	expect_bad("hand", "hand SCHEMA=DISTINGUISHER");
	expect_bad("hand web", "hand SCHEMA=DISTINGUISHER");
	expect_bad("hand =198.18.0.1", "hand SCHEMA=DISTINGUISHER");
	expect_bad("reload-status", "reload-status N");
	expect_bad("reload-status x1", "reload-status N");
	expect_bad("reload-status 12345678901234567890", "reload-status N");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_words),
		cmocka_unit_test(test_exact),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
