// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The request server on real Unix sockets, driven by a little epoll loop
 * in the test: whole answers, answers in parts, eviction of the least
 * recently progressing client, deadlines, the byte budget, and a client
 * that hangs up before its answer (SIGPIPE is left at its default here:
 * a write that raised it would kill the test).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/clock.h"
#include "daemon/request_server.h"

static char dir[64], path[108];

static const struct sl_reqsrv_limits limits = {
	.max_clients = 2,
	.request_max = 16,
	.request_ns = 1000000000ULL,
	.total_ns = 3000000000ULL,
};

static size_t line_complete(const char *buf, size_t len)
{
	const char *nl = memchr(buf, '\n', len);

	return nl ? (size_t)(nl - buf) + 1 : 0;
}

/* "big N": N parts of 64 KiB each, more than a socket buffer holds. */
struct parts {
	struct sl_reqsrv_more more;
	int left;
	int *released;
};

static bool parts_next(struct sl_reqsrv_more *m, FILE *out)
{
	struct parts *p = (struct parts *)m;

	for (int i = 0; i < 65536; i++)
		fputc('a' + p->left % 26, out);
	return --p->left > 0;
}

static void parts_release(struct sl_reqsrv_more *m)
{
	struct parts *p = (struct parts *)m;

	(*p->released)++;
	free(p);
}

static int released;

static struct sl_reqsrv_more *answer(void *ctx, const struct sl_reqsrv_peer *peer, char *req,
				     size_t len, FILE *out)
{
	struct parts *p;
	int n;

	(void)ctx;
	if (sscanf(req, "big %d", &n) == 1 && n > 0) {
		p = calloc(1, sizeof(*p));
		assert_non_null(p);
		p->more = (struct sl_reqsrv_more){.next = parts_next, .release = parts_release};
		p->left = n;
		p->released = &released;
		fprintf(out, "parts:");
		return &p->more;
	}
	if (!strcmp(req, "who\n")) {
		fprintf(out, "%d %u %d", peer->known, (unsigned)peer->uid, (int)peer->pid);
		return NULL;
	}
	fprintf(out, "pong:%.*s", (int)len - 1, req);
	return NULL;
}

static int make_listener(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	unlink(path);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 16), 0);
	return fd;
}

static int client(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/* Run the server's events for about ms milliseconds. */
static void pump(struct sl_reqsrv *s, int ep, int ms)
{
	uint64_t end = sl_mono_ns() + (uint64_t)ms * 1000000ULL;

	while (sl_mono_ns() < end) {
		struct epoll_event evs[8];
		int n = epoll_wait(ep, evs, 8, 5);

		for (int i = 0; i < n; i++)
			assert_true(sl_reqsrv_handle(s, evs[i].data.fd, evs[i].events));
	}
}

/* Read what the server sent until it closed (or nothing more came). */
static size_t read_all(int fd, char *buf, size_t cap, struct sl_reqsrv *s, int ep)
{
	size_t got = 0;

	for (int spins = 0; spins < 400; spins++) {
		ssize_t n = recv(fd, buf + got, cap - 1 - got, MSG_DONTWAIT);

		if (n == 0)
			break;
		if (n > 0) {
			got += (size_t)n;
			if (got + 1 >= cap)
				break;
			continue;
		}
		pump(s, ep, 5);
	}
	buf[got] = '\0';
	return got;
}

static void setup_server(struct sl_reqsrv **s, int *ep)
{
	*ep = epoll_create1(EPOLL_CLOEXEC);
	assert_true(*ep >= 0);
	assert_int_equal(sl_reqsrv_open(s, make_listener(), *ep, &limits, line_complete, answer,
					NULL), 0);
}

static void test_whole_answer(void **state)
{
	struct sl_reqsrv *s;
	char buf[64];
	int ep, c;

	(void)state;
	setup_server(&s, &ep);
	c = client();
	assert_int_equal(send(c, "ping\n", 5, 0), 5);
	read_all(c, buf, sizeof(buf), s, ep);
	assert_string_equal(buf, "pong:ping");
	close(c);
	sl_reqsrv_close(s);
	close(ep);
}

/* The answer callback learns who asked: the peer's uid and pid. */
static void test_peer_credentials(void **state)
{
	struct sl_reqsrv *s;
	char buf[64], want[64];
	int ep, c;

	(void)state;
	setup_server(&s, &ep);
	c = client();
	assert_int_equal(send(c, "who\n", 4, 0), 4);
	read_all(c, buf, sizeof(buf), s, ep);
	snprintf(want, sizeof(want), "1 %u %d", (unsigned)getuid(), (int)getpid());
	assert_string_equal(buf, want);
	close(c);
	sl_reqsrv_close(s);
	close(ep);
}

static void test_answer_in_parts(void **state)
{
	static char buf[8 * 65536 + 64];
	struct sl_reqsrv_stats st;
	struct sl_reqsrv *s;
	int ep, c;
	size_t n;

	(void)state;
	released = 0;
	setup_server(&s, &ep);
	c = client();
	assert_int_equal(send(c, "big 8\n", 6, 0), 6);
	n = read_all(c, buf, sizeof(buf), s, ep);
	assert_int_equal(n, 6 + 8 * 65536);
	assert_memory_equal(buf, "parts:", 6);
	assert_int_equal(buf[6], 'a' + 8 % 26);           /* first part: left == 8 */
	assert_int_equal(buf[n - 1], 'a' + 1);             /* last part: left == 1 */
	assert_int_equal(released, 1);
	sl_reqsrv_stats(s, &st);
	assert_int_equal(st.answered, 1);
	close(c);

	/* A client that never reads: the server does not wait for it, and
	 * releases the rest of its answer when it is dropped. */
	c = client();
	assert_int_equal(send(c, "big 100\n", 8, 0), 8);
	pump(s, ep, 50);
	assert_int_equal(sl_reqsrv_clients(s), 1);
	sl_reqsrv_sweep(s, sl_mono_ns() + limits.total_ns + 1);
	assert_int_equal(sl_reqsrv_clients(s), 0);
	assert_int_equal(released, 2);
	close(c);
	sl_reqsrv_close(s);
	close(ep);
}

static void test_eviction(void **state)
{
	struct sl_reqsrv_stats st;
	struct sl_reqsrv *s;
	char buf[64];
	int ep, a, b, c;

	(void)state;
	setup_server(&s, &ep);
	a = client();
	pump(s, ep, 10);
	b = client();
	pump(s, ep, 10);
	assert_int_equal(sl_reqsrv_clients(s), 2);
	/* b has made progress since a: a, the least recent, makes room. */
	assert_int_equal(send(b, "x", 1, 0), 1);
	pump(s, ep, 10);
	c = client();
	assert_int_equal(send(c, "hi\n", 3, 0), 3);
	read_all(c, buf, sizeof(buf), s, ep);
	assert_string_equal(buf, "pong:hi");
	assert_int_equal(recv(a, buf, sizeof(buf), MSG_DONTWAIT), 0); /* closed */
	assert_int_equal(send(b, "\n", 1, 0), 1);
	read_all(b, buf, sizeof(buf), s, ep);
	assert_string_equal(buf, "pong:x");
	sl_reqsrv_stats(s, &st);
	assert_int_equal(st.evicted, 1);
	close(a);
	close(b);
	close(c);
	sl_reqsrv_close(s);
	close(ep);
}

static void test_deadline_and_budget(void **state)
{
	struct sl_reqsrv_stats st;
	struct sl_reqsrv *s;
	char buf[64];
	int ep, a, b;

	(void)state;
	setup_server(&s, &ep);
	a = client();
	assert_int_equal(send(a, "trick", 5, 0), 5);
	pump(s, ep, 10);
	sl_reqsrv_sweep(s, sl_mono_ns() + limits.request_ns / 2);
	assert_int_equal(sl_reqsrv_clients(s), 1);
	sl_reqsrv_sweep(s, sl_mono_ns() + limits.request_ns + 1);
	assert_int_equal(sl_reqsrv_clients(s), 0);
	assert_int_equal(recv(a, buf, sizeof(buf), 0), 0);

	b = client();
	assert_int_equal(send(b, "0123456789abcdefXYZ", 19, 0), 19); /* no newline in 16 bytes */
	pump(s, ep, 20);
	assert_int_equal(sl_reqsrv_clients(s), 0);
	sl_reqsrv_stats(s, &st);
	assert_int_equal(st.timed_out, 1);
	assert_int_equal(st.oversized, 1);
	close(a);
	close(b);
	sl_reqsrv_close(s);
	close(ep);
}

static void test_hangup_before_answer(void **state)
{
	struct sl_reqsrv_stats st;
	struct sl_reqsrv *s;
	char buf[64];
	int ep, c;

	(void)state;
	setup_server(&s, &ep);
	for (int i = 0; i < 20; i++) {
		c = client();
		assert_int_equal(send(c, "big 4\n", 6, 0), 6);
		close(c); /* gone before the answer: EPIPE, never SIGPIPE */
		pump(s, ep, 5);
	}
	sl_reqsrv_stats(s, &st);
	assert_true(st.hung_up >= 1);
	assert_int_equal(sl_reqsrv_clients(s), 0);
	c = client();
	assert_int_equal(send(c, "ok\n", 3, 0), 3);
	read_all(c, buf, sizeof(buf), s, ep);
	assert_string_equal(buf, "pong:ok");
	close(c);
	sl_reqsrv_close(s);
	close(ep);
}

static int group_setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/sluice-reqsrv.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/s.sock", dir);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	unlink(path);
	rmdir(dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole_answer),
		cmocka_unit_test(test_peer_credentials),
		cmocka_unit_test(test_answer_in_parts),
		cmocka_unit_test(test_eviction),
		cmocka_unit_test(test_deadline_and_budget),
		cmocka_unit_test(test_hangup_before_answer),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
