// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The kernel's socket table through sock_diag (dataplane/sockets.c), over
 * real loopback connections: the listing read a little at a time (what
 * the daemon's loop does every 30 s) finds every connection, as the
 * listing read at once does, and takes more than one call when the
 * budget is small.  Runs in a network namespace of its own; needs root.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "dataplane/sockets.h"

#define N_CONNS 300

static int cli[N_CONNS], srv[N_CONNS], lfd = -1;
static uint16_t port, cports[N_CONNS];

static int group_setup(void **state)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);

	(void)state;
	if (unshare(CLONE_NEWNET))
		fail_msg("unshare(CLONE_NEWNET): %s (the test needs root)", strerror(errno));
	if (system("ip link set lo up"))
		fail_msg("ip link set lo up failed");
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) || listen(lfd, N_CONNS) ||
	    getsockname(lfd, (struct sockaddr *)&a, &al))
		fail_msg("listener: %s", strerror(errno));
	port = ntohs(a.sin_port);
	for (int i = 0; i < N_CONNS; i++) {
		struct sockaddr_in me;
		socklen_t ml = sizeof(me);

		cli[i] = socket(AF_INET, SOCK_STREAM, 0);
		if (cli[i] < 0 || connect(cli[i], (struct sockaddr *)&a, sizeof(a)) ||
		    getsockname(cli[i], (struct sockaddr *)&me, &ml))
			fail_msg("connect %d: %s", i, strerror(errno));
		cports[i] = ntohs(me.sin_port);
		srv[i] = accept(lfd, NULL, NULL);
		if (srv[i] < 0)
			fail_msg("accept %d: %s", i, strerror(errno));
	}
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	for (int i = 0; i < N_CONNS; i++) {
		close(cli[i]);
		close(srv[i]);
	}
	close(lfd);
	return 0;
}

/* The server's view of connection i, keyed as the data path keys it. */
static struct sluice_conn_key server_key(int i)
{
	struct sluice_conn_key k = {.family = 4};

	k.saddr[10] = k.saddr[11] = k.daddr[10] = k.daddr[11] = 0xff;
	k.saddr[12] = k.daddr[12] = 127;
	k.saddr[15] = k.daddr[15] = 1;
	k.sport = htons(cports[i]);
	k.dport = htons(port);
	return k;
}

static void expect_all(const struct sl_live_sockets *s)
{
	/* Both ends of every connection, nothing else in this namespace
	 * (the listener is not a connection). */
	assert_int_equal(s->n, 2 * N_CONNS);
	for (int i = 0; i < N_CONNS; i++) {
		struct sluice_conn_key k = server_key(i);

		assert_true(sl_live_sockets_has(s, &k));
	}
}

static void test_read_at_once(void **state)
{
	struct sl_live_sockets s;

	(void)state;
	assert_int_equal(sl_live_sockets_read(&s), 0);
	expect_all(&s);
	sl_live_sockets_free(&s);
}

static void test_read_a_little_at_a_time(void **state)
{
	struct sl_sock_dump d = SL_SOCK_DUMP_INIT;
	int calls = 0, r;

	(void)state;
	assert_false(sl_sock_dump_running(&d));
	assert_int_equal(sl_sock_dump_begin(&d), 0);
	assert_true(sl_sock_dump_running(&d));
	/* A budget of 1 ns: each call reads what is ready and returns. */
	while ((r = sl_sock_dump_continue(&d, 1)) == 0) {
		calls++;
		assert_true(calls < 100000);
	}
	assert_int_equal(r, 1);
	assert_false(sl_sock_dump_running(&d));
	assert_true(calls >= 2); /* 600 sockets do not come in one datagram */
	expect_all(&d.s);
	sl_live_sockets_free(&d.s);

	/* Abandoned half way: nothing left open or allocated. */
	assert_int_equal(sl_sock_dump_begin(&d), 0);
	assert_int_equal(sl_sock_dump_continue(&d, 1), 0);
	sl_sock_dump_abort(&d);
	assert_false(sl_sock_dump_running(&d));
	assert_null(d.s.keys);
	assert_int_equal(sl_sock_dump_continue(&d, 1), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_at_once),
		cmocka_unit_test(test_read_a_little_at_a_time),
	};

	return cmocka_run_group_tests_name("sockets", tests, group_setup, group_teardown);
}
