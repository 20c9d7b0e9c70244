// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
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
#include <jansson.h>
#include <stdlib.h>

#include "config/diag.h"
#include "contract_keys.h"
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

/* What a writer wrote, parsed. */
static json_t *parsed(char *text)
{
	json_error_t err;
	json_t *root = json_loads(text, 0, &err);

	if (!root)
		fail_msg("no JSON (%s): %s", err.text, text);
	free(text);
	return root;
}

/* The replies to changes, as sluicectl reads them: a reload pending, an
 * outcome with a diagnostic, an outcome without any. */
static void test_change_replies_are_the_contract(void **state)
{
	struct sl_diags diags = SL_DIAGS_INIT;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	json_t *root;

	(void)state;
	f = open_memstream(&text, &len);
	sl_control_write_pending(f, 7, "reloading", "/etc/sluice/sluice.yaml");
	fclose(f);
	root = parsed(text);
	assert_contract_keys(root, sl_pending_keys, SL_PENDING_NKEYS, "pending");
	assert_true(json_is_true(json_object_get(root, SL_PENDING_KEY(PENDING))));
	assert_int_equal(json_integer_value(json_object_get(root, SL_PENDING_KEY(GENERATION))), 7);
	json_decref(root);

	sl_diags_add(&diags, SL_SEV_ERROR, "a.yaml", 3, 5, "web", "spec.limited", "not a number");
	f = open_memstream(&text, &len);
	sl_control_write_outcome(f, false, "the configuration has errors", false, "a.yaml", &diags);
	fclose(f);
	root = parsed(text);
	assert_contract_keys(root, sl_outcome_keys, SL_OUTCOME_NKEYS, "outcome");
	assert_false(json_is_true(json_object_get(root, SL_OUTCOME_KEY(OK))));
	assert_int_equal(json_array_size(json_object_get(root, SL_OUTCOME_KEY(DIAGNOSTICS))), 1);
	{
		static const char *const diag_keys[SL_DIAG_N_KEYS] = {
			SL_DIAG_KEY_FILE, SL_DIAG_KEY_LINE, SL_DIAG_KEY_COLUMN, SL_DIAG_KEY_OBJECT,
			SL_DIAG_KEY_PATH, SL_DIAG_KEY_SEVERITY, SL_DIAG_KEY_MESSAGE,
		};

		assert_contract_keys(json_array_get(json_object_get(root, SL_OUTCOME_KEY(DIAGNOSTICS)), 0),
				     diag_keys, SL_DIAG_N_KEYS, "diagnostic");
	}
	json_decref(root);
	sl_diags_free(&diags);

	f = open_memstream(&text, &len);
	sl_control_write_outcome(f, true, "shadow mode on", true, "a.yaml", NULL);
	fclose(f);
	root = parsed(text);
	assert_contract_keys(root, sl_outcome_keys, SL_OUTCOME_NKEYS, "outcome");
	assert_true(json_is_true(json_object_get(root, SL_OUTCOME_KEY(SHADOW))));
	assert_int_equal(json_array_size(json_object_get(root, SL_OUTCOME_KEY(DIAGNOSTICS))), 0);
	json_decref(root);
}

/* The client's requests are written by the contract and read back by the
 * daemon's parser: every request round-trips, and what the daemon would
 * refuse is refused before it is sent. */
static void test_requests_round_trip(void **state)
{
	static const struct {
		enum sl_control_cmd cmd;
		const char *arg;
	} ok[] = {
		{SL_CTL_LEVELS, NULL}, {SL_CTL_LEVELS, "web"}, {SL_CTL_QUEUES, "web"},
		{SL_CTL_FLOWS, NULL}, {SL_CTL_CONTROLLER, NULL}, {SL_CTL_RELOAD, NULL},
		{SL_CTL_SHADOW, "on"}, {SL_CTL_SHADOW, "off"}, {SL_CTL_HAND, "web=198.18.0.10"},
		{SL_CTL_HAND, "web="}, {SL_CTL_RELOAD_STATUS, "17"},
	};
	char buf[SL_CONTROL_REQUEST_MAX], long_arg[SL_CONTROL_REQUEST_MAX];
	struct sl_control_req r;
	const char *why;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		why = NULL;
		assert_int_equal(sl_control_format(buf, sizeof(buf), ok[i].cmd, ok[i].arg, &why), 0);
		assert_null(strchr(buf, '\n'));
		assert_int_equal(sl_control_parse(buf, &r, &why), 0);
		assert_int_equal(r.cmd, ok[i].cmd);
		if (ok[i].arg)
			assert_string_equal(r.arg, ok[i].arg);
		else
			assert_null(r.arg);
	}
	/* Refused as the daemon would refuse them. */
	assert_int_equal(sl_control_format(buf, sizeof(buf), SL_CTL_SHADOW, "maybe", &why), -EINVAL);
	assert_int_equal(sl_control_format(buf, sizeof(buf), SL_CTL_RELOAD_STATUS, "x1", &why), -EINVAL);
	assert_int_equal(sl_control_format(buf, sizeof(buf), SL_CTL_LEVELS, "two words", &why), -EINVAL);
	assert_int_equal(sl_control_format(buf, sizeof(buf), SL_CTL_CONTROLLER, "web", &why), -EINVAL);
	assert_int_equal(sl_control_format(buf, sizeof(buf), SL_CTL_HAND, "=x", &why), -EINVAL);
	memset(long_arg, 'a', sizeof(long_arg) - 1);
	long_arg[sizeof(long_arg) - 1] = '\0';
	assert_int_equal(sl_control_format(buf, sizeof(buf), SL_CTL_LEVELS, long_arg, &why), -ENAMETOOLONG);
	/* The longest line the daemon reads, its "\n" included, still goes. */
	long_arg[SL_CONTROL_REQUEST_MAX - 1 - strlen("levels ") - 1] = '\0';
	assert_int_equal(sl_control_format(buf, sizeof(buf), SL_CTL_LEVELS, long_arg, &why), 0);
	assert_int_equal(strlen(buf) + 1, SL_CONTROL_REQUEST_MAX - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_words),
		cmocka_unit_test(test_exact),
		cmocka_unit_test(test_change_replies_are_the_contract),
		cmocka_unit_test(test_requests_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
