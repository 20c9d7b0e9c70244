// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Unit tests for sluiced's command line (user/daemon/daemon_opts.c): its
 * table through the shared parser, and what the daemon derives from it. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "daemon/daemon.h"

static char out_text[8192], err_text[1024];

/* Capture one stream of this process into buf while fn runs. */
static FILE *capture_begin(int fd, int *saved)
{
	FILE *tmp = tmpfile();

	assert_non_null(tmp);
	fflush(fd == STDOUT_FILENO ? stdout : stderr);
	*saved = dup(fd);
	dup2(fileno(tmp), fd);
	return tmp;
}

static void capture_end(int fd, int saved, FILE *tmp, char *buf, size_t len)
{
	fflush(fd == STDOUT_FILENO ? stdout : stderr);
	dup2(saved, fd);
	close(saved);
	rewind(tmp);
	buf[fread(buf, 1, len - 1, tmp)] = '\0';
	fclose(tmp);
}

static int run(struct daemon_opts *o, char **words)
{
	int argc = 0, so, se, rc;
	FILE *out, *err;

	while (words[argc])
		argc++;
	memset(o, 0, sizeof(*o));
	o->log_level = SL_LOG_INFO;
	out = capture_begin(STDOUT_FILENO, &so);
	err = capture_begin(STDERR_FILENO, &se);
	rc = daemon_parse_args(argc, words, o);
	capture_end(STDERR_FILENO, se, err, err_text, sizeof(err_text));
	capture_end(STDOUT_FILENO, so, out, out_text, sizeof(out_text));
	return rc;
}

#define WORDS(...) ((char *[]){"sluiced", __VA_ARGS__, NULL})

static void test_every_option_lands(void **state)
{
	struct daemon_opts o;

	(void)state;
	assert_int_equal(run(&o, WORDS("-c", "sluice.yaml", "-i", "eth0", "--iface", "eth1", "--xdp-mode",
				       "generic", "--keep-attached", "--pin-dir", "/sys/fs/bpf/x", "-s", "/run/x.sock",
				       "--metrics-address", "127.0.0.1:9464", "-W", "-f", "--keep-privileges",
				       "--veth-peer-xdp", "-g", "/sys/fs/cgroup/a")), 0);
	assert_string_equal(o.config_path, "sluice.yaml");
	assert_int_equal(o.n_ifnames, 2);
	assert_string_equal(o.ifnames[0], "eth0");
	assert_string_equal(o.ifnames[1], "eth1");
	assert_null(o.ifnames[2]);
	assert_true(o.xdp_generic);
	assert_true(o.keep_attached);
	assert_true(o.keep_maps); /* the attached programs keep their maps */
	assert_string_equal(o.pin_dir, "/sys/fs/bpf/x");
	assert_string_equal(o.control_path, "/run/x.sock");
	assert_string_equal(o.metrics_address, "127.0.0.1:9464");
	assert_true(o.watch_config && o.force && o.keep_privileges && o.veth_peer_xdp);
	assert_string_equal(o.cgroup, "/sys/fs/cgroup/a");
	assert_int_equal(o.log_level, SL_LOG_INFO);
	assert_string_equal(err_text, "");
}

/* The old spellings work for one release, each with a line that names
 * the new one; the new ones say nothing. */
static void test_old_spellings_warn(void **state)
{
	struct daemon_opts o;

	(void)state;
	assert_int_equal(run(&o, WORDS("-c", "sluice.yaml", "-i", "eth0", "-K", "--control", "/run/x.sock")), 0);
	assert_true(o.keep_attached);
	assert_string_equal(o.control_path, "/run/x.sock");
	assert_non_null(strstr(err_text, "sluiced: -K is an old spelling: use --keep-attached"));
	assert_non_null(strstr(err_text, "sluiced: --control is an old spelling: use --control-socket"));
	assert_int_equal(run(&o, WORDS("-c", "sluice.yaml", "-i", "eth0", "-k")), 0);
	assert_true(o.keep_maps);
	assert_non_null(strstr(err_text, "sluiced: -k is an old spelling: use --keep-maps"));
	assert_int_equal(run(&o, WORDS("-c", "sluice.yaml", "-i", "eth0", "--keep-maps", "--control-socket", "/r.sock")), 0);
	assert_string_equal(err_text, "");
}

static void test_verbose_and_log_level(void **state)
{
	struct daemon_opts o;

	(void)state;
	assert_int_equal(run(&o, WORDS("-c", "f", "-v")), 0);
	assert_int_equal(o.log_level, SL_LOG_DEBUG);
	assert_true(o.verbose);
	/* --log-level says otherwise, before or after -v. */
	assert_int_equal(run(&o, WORDS("-c", "f", "-v", "--log-level", "warning")), 0);
	assert_int_equal(o.log_level, SL_LOG_WARN);
	assert_int_equal(run(&o, WORDS("--log-level", "error", "-v", "-c", "f")), 0);
	assert_int_equal(o.log_level, SL_LOG_ERROR);
	assert_int_equal(run(&o, WORDS("-c", "f", "-m", "native")), 0);
	assert_false(o.xdp_generic);
}

/* Each bad command line: -EINVAL and one line that starts with the name. */
static void test_bad_lines_say_one_line(void **state)
{
	const struct {
		char **words;
		const char *says;
	} cases[] = {
		{WORDS("-c", "f", "--bogus"), "sluiced: unknown option '--bogus' (see --help)\n"},
		{WORDS("--config"), "sluiced: option '--config' needs a value (see --help)\n"},
		{WORDS("-i", "eth0"), "sluiced: --config FILE is required (see --help)\n"},
		{WORDS("-c", "f", "--xdp-mode", "fast"), "sluiced: --xdp-mode: 'fast' is not native or generic"},
		{WORDS("-c", "f", "--log-level", "loud"), "sluiced: --log-level: 'loud' is not error"},
		{WORDS("-c", "f", "--metrics-address", "nowhere"), "sluiced: --metrics-address: 'nowhere': "},
		{WORDS("-c", "f", "extra"), "sluiced: unexpected argument 'extra' (see --help)\n"},
	};
	struct daemon_opts o;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(run(&o, cases[i].words), -EINVAL);
		if (strncmp(err_text, cases[i].says, strlen(cases[i].says)))
			fail_msg("case %zu: stderr '%s', expected it to start with '%s'", i, err_text, cases[i].says);
		assert_non_null(strchr(err_text, '\n'));
		assert_string_equal(strchr(err_text, '\n'), "\n"); /* one line */
	}
}

static void test_too_many_interfaces(void **state)
{
	char *words[2 * SL_DP_MAX_IFACES + 6] = {"sluiced", "-c", "f"};
	int n = 3;
	struct daemon_opts o;

	(void)state;
	for (int i = 0; i <= SL_DP_MAX_IFACES; i++) {
		words[n++] = "-i";
		words[n++] = "veth";
	}
	words[n] = NULL;
	assert_int_equal(run(&o, words), -EINVAL);
	assert_non_null(strstr(err_text, "--iface: at most"));
	words[n - 2] = NULL; /* exactly the most */
	assert_int_equal(run(&o, words), 0);
	assert_int_equal(o.n_ifnames, SL_DP_MAX_IFACES);
}

/* --help and --version answer without a configuration: 1, exit 0. */
static void test_help_and_version(void **state)
{
	static const char *const every[] = {"--config", "--iface", "--xdp-mode", "--veth-peer-xdp", "--cgroup",
					    "--pin-dir", "--keep-maps", "--keep-attached", "--control-socket",
					    "--metrics-address", "--force", "--keep-privileges",
					    "--watch-config", "--log-level", "--verbose", "--version", "--help"};
	struct daemon_opts o;

	(void)state;
	assert_int_equal(run(&o, WORDS("--help")), 1);
	/* One usage line: help2man takes the first as the man page's SYNOPSIS and
	 * puts what follows it into the DESCRIPTION. */
	assert_true(!strncmp(out_text, "Usage: sluiced --config FILE [OPTIONS]\n\n", 40));
	for (size_t i = 0; i < sizeof(every) / sizeof(every[0]); i++)
		if (!strstr(out_text, every[i]))
			fail_msg("--help does not name %s", every[i]);
	assert_int_equal(run(&o, WORDS("-V")), 1);
	assert_true(!strncmp(out_text, "sluiced ", 8));
	assert_non_null(strstr(out_text, "map ABI"));
	assert_string_equal(err_text, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_option_lands),
		cmocka_unit_test(test_old_spellings_warn),
		cmocka_unit_test(test_verbose_and_log_level),
		cmocka_unit_test(test_bad_lines_say_one_line),
		cmocka_unit_test(test_too_many_interfaces),
		cmocka_unit_test(test_help_and_version),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
