// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The external latency signal's adapter (daemon/ext_signal.c), issue 26:
 * the socket is its owner's alone whatever the umask, and only in a
 * directory nobody else may write into; a sample is a number of ms from 0
 * to an hour (1e308, inf, -1 and text are ignored); the file is read only
 * when it is a regular file, and a FIFO never blocks.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>

#include "daemon/ext_signal.h"

static char dir[64];

static int make_dir(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/sluice-ext.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void send_to(const char *path, const char *msg)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);

	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	assert_true(sendto(fd, msg, strlen(msg), 0, (struct sockaddr *)&sa, sizeof(sa)) ==
		    (ssize_t)strlen(msg));
	close(fd);
}

static void test_socket_is_private_and_samples_bounded(void **state)
{
	char path[128];
	struct stat st;
	double sum = 0;
	uint64_t n = 0;
	mode_t old;
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "%s/signal.sock", dir);
	old = umask(0); /* the most permissive umask a daemon could inherit */
	fd = sl_ext_open(path);
	umask(old);
	assert_true(fd >= 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	send_to(path, "12.5");
	send_to(path, "1e308");
	send_to(path, "inf");
	send_to(path, "-1");
	send_to(path, "3600001");
	send_to(path, "7 and more");
	send_to(path, "3600000\n");
	assert_int_equal(sl_ext_drain(fd, &sum, &n), 5);
	assert_int_equal(n, 2);
	assert_true(fabs(sum - 3600012.5) < 1e-9);
	close(fd);
}

static void test_socket_refused_in_a_shared_directory(void **state)
{
	char shared[128], sticky[128], path[160];
	int fd;

	(void)state;
	snprintf(shared, sizeof(shared), "%s/shared", dir);
	snprintf(sticky, sizeof(sticky), "%s/sticky", dir);
	assert_int_equal(mkdir(shared, 0700), 0);
	assert_int_equal(chmod(shared, 0777), 0);
	snprintf(path, sizeof(path), "%s/signal.sock", shared);
	assert_int_equal(sl_ext_open(path), -EPERM);
	assert_int_not_equal(access(path, F_OK), 0); /* nothing created */
	/* A sticky one (as /tmp) keeps others from replacing what is ours. */
	assert_int_equal(mkdir(sticky, 0700), 0);
	assert_int_equal(chmod(sticky, 01777), 0);
	snprintf(path, sizeof(path), "%s/signal.sock", sticky);
	fd = sl_ext_open(path);
	assert_true(fd >= 0);
	close(fd);
}

static void test_file_only_when_regular(void **state)
{
	char path[128], fifo[128];
	const char *why;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/latency", dir);
	snprintf(fifo, sizeof(fifo), "%s/latency.fifo", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("42\n", f);
	fclose(f);
	assert_true(fabs(sl_ext_read_file(path, &why) - 42) < 1e-9);
	assert_null(why);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_true(isnan(sl_ext_read_file(fifo, &why))); /* returns: never waits for a writer */
	assert_string_equal(why, "not a regular file");
	assert_true(isnan(sl_ext_read_file("/dev/null", &why)));
	assert_string_equal(why, "not a regular file");
	f = fopen(path, "w");
	fputs("1e308\n", f);
	fclose(f);
	assert_true(isnan(sl_ext_read_file(path, &why)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_socket_is_private_and_samples_bounded),
		cmocka_unit_test(test_socket_refused_in_a_shared_directory),
		cmocka_unit_test(test_file_only_when_regular),
	};

	return cmocka_run_group_tests_name("ext_signal", tests, make_dir, remove_dir);
}
