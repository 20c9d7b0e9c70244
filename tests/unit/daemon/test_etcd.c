// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The fleet's client of etcd (user/daemon/etcd_v3.c, the contract, and
 * etcd_http.c, the transport) against a real etcd: Debian's etcd-server,
 * started here on loopback with a throw-away data directory.  A lease, a
 * transaction guarded by "nothing under the prefix changed since I read
 * it", keys that go with their lease, an endpoint that is down.  Without
 * etcd the test fails; it does not skip.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "daemon/etcd_http.h"
#include "daemon/etcd_v3.h"

#define ETCD "/usr/bin/etcd"
#define PREFIX "/sluice/test/db/seats/"

static pid_t etcd_pid;
static char dir[64], client_url[64];

static int free_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	if (fd >= 0 && !bind(fd, (struct sockaddr *)&a, sizeof(a)) && !getsockname(fd, (struct sockaddr *)&a, &len))
		port = ntohs(a.sin_port);
	close(fd);
	return port;
}

static int post(struct sl_etcd_http *h, const char *path, char *body, char **answer)
{
	int err = sl_etcd_http_post(h, path, body, answer);

	free(body);
	return err;
}

static int start_etcd(void **state)
{
	char peer_url[64], cluster[96], data[96], logf[96];
	const char *eps[1] = {client_url};
	struct sl_etcd_http *h = NULL;
	int cport = free_port(), pport = free_port();

	(void)state;
	if (access(ETCD, X_OK)) {
		fprintf(stderr, "%s missing: scripts/install-deps.sh installs etcd-server\n", ETCD);
		return -1;
	}
	snprintf(dir, sizeof(dir), "/tmp/sluice-etcd.XXXXXX");
	if (!mkdtemp(dir) || cport < 0 || pport < 0)
		return -1;
	snprintf(client_url, sizeof(client_url), "http://127.0.0.1:%d", cport);
	snprintf(peer_url, sizeof(peer_url), "http://127.0.0.1:%d", pport);
	snprintf(cluster, sizeof(cluster), "t=%s", peer_url);
	snprintf(data, sizeof(data), "%s/data", dir);
	snprintf(logf, sizeof(logf), "%s/etcd.log", dir);
	etcd_pid = fork();
	if (etcd_pid == 0) {
		int fd = open(logf, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(fd, 1);
		dup2(fd, 2);
		execl(ETCD, ETCD, "--name", "t", "--data-dir", data, "--listen-client-urls", client_url,
		      "--advertise-client-urls", client_url, "--listen-peer-urls", peer_url,
		      "--initial-advertise-peer-urls", peer_url, "--initial-cluster", cluster, (char *)NULL);
		_exit(127);
	}
	if (etcd_pid < 0 || sl_etcd_http_open(&h, eps, 1, 500000000ull, NULL))
		return -1;
	/* Up when it answers a range (at most 20 s: a slow machine's first start). */
	for (int i = 0; i < 200; i++) {
		char *answer = NULL;
		int err = post(h, "/v3/kv/range", sl_etcd_body_range("/", true), &answer);

		free(answer);
		if (!err) {
			sl_etcd_http_close(h);
			return 0;
		}
		usleep(100000);
	}
	sl_etcd_http_close(h);
	fprintf(stderr, "etcd did not answer on %s (its log: %s)\n", client_url, logf);
	return -1;
}

static int stop_etcd(void **state)
{
	char cmd[96];

	(void)state;
	if (etcd_pid > 0) {
		kill(etcd_pid, SIGTERM);
		waitpid(etcd_pid, NULL, 0);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void range(struct sl_etcd_http *h, int64_t *rev, struct sl_etcd_kv *kvs, size_t max, size_t *n)
{
	char *answer = NULL;

	assert_int_equal(post(h, "/v3/kv/range", sl_etcd_body_range(PREFIX, true), &answer), 0);
	assert_int_equal(sl_etcd_parse_range(answer, rev, kvs, max, n), 0);
	free(answer);
}

/* A member joins: its floor and its leased claim in one transaction
 * guarded by the revision it read; a second writer with the same stale
 * revision is refused; the claim goes with its lease, the floor stays. */
static void test_lease_txn_range(void **state)
{
	const char *eps[1] = {client_url};
	struct sl_etcd_http *h;
	struct sl_etcd_kv kvs[8];
	int64_t id, ttl, rev, rev2;
	size_t n;
	bool ok;
	char *answer = NULL;

	(void)state;
	assert_int_equal(sl_etcd_http_open(&h, eps, 1, 2000000000ull, NULL), 0);
	assert_int_equal(post(h, "/v3/lease/grant", sl_etcd_body_grant(5), &answer), 0);
	assert_int_equal(sl_etcd_parse_grant(answer, &id, &ttl), 0);
	free(answer);
	assert_true(id != 0);
	assert_int_equal(ttl, 5);

	range(h, &rev, kvs, 8, &n);
	assert_int_equal(n, 0);
	{
		const struct sl_etcd_op join[] = {
			{.key = PREFIX "member/a", .value = "{\"floor\":20}"},
			{.key = PREFIX "claim/a", .value = "{\"extra\":30}", .lease = id},
		};

		assert_int_equal(post(h, "/v3/kv/txn", sl_etcd_body_txn(PREFIX, rev, join, 2), &answer), 0);
		assert_int_equal(sl_etcd_parse_txn(answer, &ok, &rev2), 0);
		free(answer);
		assert_true(ok);
		assert_true(rev2 > rev);
		/* Another member read before that write: its raise is refused. */
		assert_int_equal(post(h, "/v3/kv/txn", sl_etcd_body_txn(PREFIX, rev, join + 1, 1), &answer), 0);
		assert_int_equal(sl_etcd_parse_txn(answer, &ok, &rev2), 0);
		free(answer);
		assert_false(ok);
	}
	range(h, &rev, kvs, 8, &n);
	assert_int_equal(n, 2);
	assert_string_equal(kvs[0].key, PREFIX "claim/a");
	assert_string_equal(kvs[0].value, "{\"extra\":30}");
	assert_int_equal(kvs[0].lease, id);
	assert_string_equal(kvs[1].key, PREFIX "member/a");
	assert_int_equal(kvs[1].lease, 0);
	assert_int_equal(sl_etcd_parse_range("{\"header\":{\"revision\":\"9\"},\"kvs\":[{},{},{}]}", &rev, kvs, 2, &n),
			 -E2BIG);

	assert_int_equal(post(h, "/v3/lease/keepalive", sl_etcd_body_lease(id), &answer), 0);
	assert_int_equal(sl_etcd_parse_keepalive(answer, &ttl), 0);
	free(answer);
	assert_int_equal(ttl, 5);
	assert_int_equal(post(h, "/v3/lease/revoke", sl_etcd_body_lease(id), &answer), 0);
	free(answer);
	range(h, &rev, kvs, 8, &n);
	assert_int_equal(n, 1); /* the claim went with its lease */
	assert_string_equal(kvs[0].key, PREFIX "member/a");
	assert_int_equal(post(h, "/v3/lease/keepalive", sl_etcd_body_lease(id), &answer), 0);
	assert_int_equal(sl_etcd_parse_keepalive(answer, &ttl), 0);
	free(answer);
	assert_int_equal(ttl, 0); /* gone: etcd leaves TTL out */
	sl_etcd_http_close(h);
}

/* An endpoint that is down fails its request at once and the next goes to
 * the next endpoint; a request etcd refuses is an error with its answer. */
static void test_endpoints_and_errors(void **state)
{
	const char *eps[2] = {"http://127.0.0.1:1", client_url};
	struct sl_etcd_http *h;
	char *answer = NULL;
	int64_t rev;
	struct sl_etcd_kv kv;
	size_t n;

	(void)state;
	assert_int_equal(sl_etcd_http_open(&h, eps, 2, 1000000000ull, NULL), 0);
	assert_int_equal(post(h, "/v3/kv/range", sl_etcd_body_range(PREFIX, true), &answer), -ECONNREFUSED);
	assert_null(answer);
	assert_int_equal(post(h, "/v3/kv/range", sl_etcd_body_range(PREFIX, true), &answer), 0);
	free(answer);
	assert_int_equal(sl_etcd_http_post(h, "/v3/kv/range", "{\"key\": 5}", &answer), -EPROTO);
	assert_non_null(answer);
	assert_int_equal(sl_etcd_parse_range(answer, &rev, &kv, 1, &n), -EPROTO);
	free(answer);
	sl_etcd_http_close(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lease_txn_range),
		cmocka_unit_test(test_endpoints_and_errors),
	};

	return cmocka_run_group_tests(tests, start_etcd, stop_etcd);
}
