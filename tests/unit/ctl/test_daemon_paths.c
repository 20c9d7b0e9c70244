// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Where sluicectl finds sluiced (user/ctl/daemon_paths.c): a flag wins,
 * then the configuration's Server pinDir and controlSocket, then the
 * built-in defaults; a configuration named that does not load fails the
 * command instead of guessing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "ctl/ctl.h"
#include "ctl/daemon_paths.h"

static char dir[64];

static const char *write_config(const char *name, const char *server_extra)
{
	static char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "apiVersion: sluice/v1\nkind: Server\nmetadata: {name: s}\nspec:\n"
		   "  serverConcurrencyLimit: 10\n%s", server_extra);
	fclose(f);
	return path;
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/sluice-paths.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_config_names_them(void **state)
{
	const char *cfg = write_config("custom.yaml", "  pinDir: /sys/fs/bpf/elsewhere\n"
					 "  controlSocket: /run/sluice/other.sock\n");
	const char *pin = NULL, *sock = NULL;

	(void)state;
	assert_int_equal(ctl_daemon_paths("status", cfg, &pin, &sock), 0);
	assert_string_equal(pin, "/sys/fs/bpf/elsewhere");
	assert_string_equal(sock, "/run/sluice/other.sock");
}

static void test_flags_win(void **state)
{
	const char *cfg = write_config("custom.yaml", "  pinDir: /sys/fs/bpf/elsewhere\n"
					 "  controlSocket: /run/sluice/other.sock\n");
	const char *pin = "/sys/fs/bpf/mine", *sock = NULL;

	(void)state;
	assert_int_equal(ctl_daemon_paths("status", cfg, &pin, &sock), 0);
	assert_string_equal(pin, "/sys/fs/bpf/mine");
	assert_string_equal(sock, "/run/sluice/other.sock");
}

static void test_unset_fields_are_the_defaults(void **state)
{
	const char *cfg = write_config("plain.yaml", "");
	const char *pin = NULL, *sock = NULL;

	(void)state;
	assert_int_equal(ctl_daemon_paths("detach", cfg, &pin, &sock), 0);
	assert_string_equal(pin, SL_DEFAULT_PIN_DIR);
	assert_string_equal(sock, SL_DEFAULT_CONTROL_SOCKET);
}

/* A stop that guessed the pin directory would say success and leave XDP
 * attached: a configuration named must load. */
static void test_named_config_that_does_not_load_fails(void **state)
{
	const char *cfg = write_config("bad.yaml", "  pinDir: [not, a, path]\n");
	char missing[160];
	const char *pin = NULL;

	(void)state;
	assert_int_equal(ctl_daemon_paths("detach", cfg, &pin, NULL), CTL_FAIL);
	snprintf(missing, sizeof(missing), "%s/none.yaml", dir);
	pin = NULL;
	assert_int_equal(ctl_daemon_paths("detach", missing, &pin, NULL), CTL_FAIL);
}

/* Nothing asked, nothing read: a flag given for each. */
static void test_nothing_wanted(void **state)
{
	const char *pin = "/a", *sock = "/b";

	(void)state;
	assert_int_equal(ctl_daemon_paths("top", "/nonexistent/config.yaml", &pin, &sock), 0);
	assert_string_equal(pin, "/a");
	assert_string_equal(sock, "/b");
	assert_int_equal(ctl_daemon_paths("top", "/nonexistent/config.yaml", NULL, NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_names_them),
		cmocka_unit_test(test_flags_win),
		cmocka_unit_test(test_unset_fields_are_the_defaults),
		cmocka_unit_test(test_named_config_that_does_not_load_fails),
		cmocka_unit_test(test_nothing_wanted),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
