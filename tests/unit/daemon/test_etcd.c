// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The fleet's client of etcd (user/daemon/etcd_v3.c, the contract, and
 * etcd_http.c, the transport) against a real etcd: Debian's etcd-server,
 * started here on loopback with a throw-away data directory.  A lease, a
 * transaction guarded by "nothing under the prefix changed since I read
 * it", keys that go with their lease, an endpoint that is down.  Then
 * etcd with TLS and --client-cert-auth (certificates made here with
 * openssl): a host with a certificate of the fleet's CA is served, one
 * without, or with another CA's, is refused.  Without etcd the test
 * fails; it does not skip.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
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
#include "daemon/fleet_sync.h"

#define ETCD "/usr/bin/etcd"
#define PREFIX "/sluice/test/db/seats/"

static pid_t etcd_pid;
static char dir[64], client_url[64];
static bool with_tls;
static char ca[96], cert[96], key[96];

/* A CA, etcd's server certificate for 127.0.0.1, a client certificate of
 * the CA and one of another CA (EC keys: quick to make).  etcd 3.4's JSON
 * gateway dials etcd itself with the server certificate: with
 * --client-cert-auth it must be good for clientAuth too, or every
 * request through the gateway fails ("connection closed"). */
static int make_certs(void)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd),
		 "cd %s && ( k='-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes' && "
		 "openssl req -x509 $k -keyout ca.key -out ca.pem -days 1 -subj /CN=fleet-ca && "
		 "openssl req -x509 $k -keyout other.key -out other-ca.pem -days 1 -subj /CN=other-ca && "
		 "openssl req $k -keyout server.key -out server.csr -subj /CN=127.0.0.1 && "
		 "printf 'subjectAltName=IP:127.0.0.1\\nextendedKeyUsage=serverAuth,clientAuth\\n' >server.ext && "
		 "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 -out server.pem -extfile server.ext && "
		 "printf 'extendedKeyUsage=clientAuth\\n' >client.ext && "
		 "openssl req $k -keyout client.key -out client.csr -subj /CN=host-a && "
		 "openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 -out client.pem -extfile client.ext && "
		 "openssl req $k -keyout stranger.key -out stranger.csr -subj /CN=host-x && "
		 "openssl x509 -req -in stranger.csr -CA other-ca.pem -CAkey other.key -CAcreateserial -days 1 -out stranger.pem -extfile client.ext"
		 " ) >certs.log 2>&1", dir);
	if (system(cmd)) {
		fprintf(stderr, "openssl could not make the test's certificates (%s/certs.log)\n", dir);
		return -1;
	}
	snprintf(ca, sizeof(ca), "%s/ca.pem", dir);
	snprintf(cert, sizeof(cert), "%s/client.pem", dir);
	snprintf(key, sizeof(key), "%s/client.key", dir);
	return 0;
}

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
	char peer_url[64], cluster[96], data[96], logf[96], srv_cert[96], srv_key[96];
	const char *eps[1] = {client_url};
	struct sl_etcd_tls tls = {ca, cert, key};
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
	if (with_tls && make_certs())
		return -1;
	snprintf(srv_cert, sizeof(srv_cert), "%s/server.pem", dir);
	snprintf(srv_key, sizeof(srv_key), "%s/server.key", dir);
	snprintf(client_url, sizeof(client_url), "%s://127.0.0.1:%d", with_tls ? "https" : "http", cport);
	snprintf(peer_url, sizeof(peer_url), "http://127.0.0.1:%d", pport);
	snprintf(cluster, sizeof(cluster), "t=%s", peer_url);
	snprintf(data, sizeof(data), "%s/data", dir);
	snprintf(logf, sizeof(logf), "%s/etcd.log", dir);
	etcd_pid = fork();
	if (etcd_pid == 0) {
		int fd = open(logf, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(fd, 1);
		dup2(fd, 2);
		if (with_tls)
			execl(ETCD, ETCD, "--name", "t", "--data-dir", data, "--listen-client-urls", client_url,
			      "--advertise-client-urls", client_url, "--listen-peer-urls", peer_url,
			      "--initial-advertise-peer-urls", peer_url, "--initial-cluster", cluster,
			      "--cert-file", srv_cert, "--key-file", srv_key, "--client-cert-auth",
			      "--trusted-ca-file", ca, (char *)NULL);
		else
			execl(ETCD, ETCD, "--name", "t", "--data-dir", data, "--listen-client-urls", client_url,
			      "--advertise-client-urls", client_url, "--listen-peer-urls", peer_url,
			      "--initial-advertise-peer-urls", peer_url, "--initial-cluster", cluster, (char *)NULL);
		_exit(127);
	}
	if (etcd_pid < 0 || sl_etcd_http_open(&h, eps, 1, 500000000ull, with_tls ? &tls : NULL))
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

static int64_t grant(struct sl_etcd_http *h)
{
	char *answer = NULL;
	int64_t id = 0, ttl;

	assert_int_equal(post(h, "/v3/lease/grant", sl_etcd_body_grant(5), &answer), 0);
	assert_int_equal(sl_etcd_parse_grant(answer, &id, &ttl), 0);
	free(answer);
	return id;
}

/* floors + live extras of the level, as etcd has them */
static uint32_t held_in_etcd(struct sl_etcd_http *h)
{
	static struct sl_etcd_kv kvs[16];
	struct sl_fleet_node nodes[4];
	size_t n, members, skipped;
	int64_t rev;
	uint32_t held = 0;
	char *answer = NULL;

	assert_int_equal(post(h, "/v3/kv/range", sl_etcd_body_range("/sluice/pg/db/", true), &answer), 0);
	assert_int_equal(sl_etcd_parse_range(answer, &rev, kvs, 16, &n), 0);
	free(answer);
	assert_int_equal(sl_fleet_members(kvs, n, "/sluice/pg/db/", nodes, 4, &members, &skipped), 0);
	for (size_t i = 0; i < members; i++)
		held += nodes[i].m.floor + (nodes[i].m.live ? nodes[i].m.extra : 0);
	return held;
}

/* Two hosts of one fleet level, through etcd: both join from their floors
 * (the one that read before the other's join is refused, and joins at its
 * next sync), the seats are shared by what each wants, and the fleet's
 * budget (100) is never passed; a host whose lease ends leaves its extra
 * to the other and keeps its floor reserved. */
static void test_two_hosts_share_a_level(void **state)
{
	const char *eps[1] = {client_url};
	struct sl_etcd_http *h;
	struct sl_fleet_sync a = {.fleet = "pg", .level = "db",
				  .self = {.node = "a", .floor = 20, .seats = 100, .wants = 80}};
	struct sl_fleet_sync b = {.fleet = "pg", .level = "db",
				  .self = {.node = "b", .floor = 20, .seats = 100, .wants = 30}};
	int64_t la, lb;
	char *answer = NULL;

	(void)state;
	assert_int_equal(sl_etcd_http_open(&h, eps, 1, 2000000000ull, NULL), 0);
	la = grant(h);
	lb = grant(h);
	/* Both read the empty level; a's join goes first, b's is refused. */
	assert_int_equal(sl_fleet_sync_read(h, &a), 0);
	assert_int_equal(sl_fleet_sync_read(h, &b), 0);
	assert_int_equal(a.plan.action, SL_FLEET_JOIN);
	assert_int_equal(b.plan.action, SL_FLEET_JOIN);
	assert_int_equal(sl_fleet_sync_write(h, &a, la), 0);
	assert_true(a.written);
	assert_int_equal(sl_fleet_sync_write(h, &b, lb), 0);
	assert_false(b.written);
	assert_int_equal(sl_fleet_sync_read(h, &b), 0);
	assert_int_equal(b.plan.action, SL_FLEET_JOIN);
	assert_int_equal(sl_fleet_sync_write(h, &b, lb), 0);
	assert_true(b.written);
	assert_int_equal(held_in_etcd(h), 40);
	/* Pool 60: b wants 10 over its floor, a the other 50. */
	assert_int_equal(sl_fleet_sync_read(h, &a), 0);
	assert_int_equal(a.plan.action, SL_FLEET_RAISE);
	assert_int_equal(a.after, 70);
	assert_int_equal(sl_fleet_sync_write(h, &a, la), 0);
	assert_true(a.written);
	assert_int_equal(sl_fleet_sync_read(h, &b), 0);
	assert_int_equal(b.held, 20);
	assert_int_equal(b.after, 30);
	assert_int_equal(sl_fleet_sync_write(h, &b, lb), 0);
	assert_true(b.written);
	assert_int_equal(held_in_etcd(h), 100);
	/* a's lease ends (a host gone): its extra is b's to claim, its floor stays. */
	assert_int_equal(post(h, "/v3/lease/revoke", sl_etcd_body_lease(la), &answer), 0);
	free(answer);
	b.self.wants = 90;
	assert_int_equal(sl_fleet_sync_read(h, &b), 0);
	assert_int_equal(b.plan.action, SL_FLEET_RAISE);
	assert_int_equal(b.after, 80); /* 100 less a's floor */
	assert_int_equal(sl_fleet_sync_write(h, &b, lb), 0);
	assert_true(b.written);
	assert_int_equal(held_in_etcd(h), 100);
	sl_etcd_http_close(h);
}

/* etcd with --client-cert-auth: whoever can write the fleet's keys can
 * starve every host, so only the fleet's CA's certificates get in. */
static void test_tls_client_certificates(void **state)
{
	const char *eps[1] = {client_url};
	struct sl_etcd_tls good = {ca, cert, key}, none = {ca, NULL, NULL}, stranger;
	char s_cert[96], s_key[96], *answer = NULL;
	struct sl_etcd_http *h;

	(void)state;
	snprintf(s_cert, sizeof(s_cert), "%s/stranger.pem", dir);
	snprintf(s_key, sizeof(s_key), "%s/stranger.key", dir);
	stranger = (struct sl_etcd_tls){ca, s_cert, s_key};
	assert_int_equal(sl_etcd_http_open(&h, eps, 1, 2000000000ull, &good), 0);
	assert_int_equal(post(h, "/v3/kv/range", sl_etcd_body_range(PREFIX, true), &answer), 0);
	free(answer);
	sl_etcd_http_close(h);
	assert_int_equal(sl_etcd_http_open(&h, eps, 1, 2000000000ull, &stranger), 0);
	assert_int_equal(post(h, "/v3/kv/range", sl_etcd_body_range(PREFIX, true), &answer), -EIO);
	assert_null(answer);
	sl_etcd_http_close(h);
	assert_int_equal(sl_etcd_http_open(&h, eps, 1, 2000000000ull, &none), 0);
	assert_int_equal(post(h, "/v3/kv/range", sl_etcd_body_range(PREFIX, true), &answer), -EIO);
	sl_etcd_http_close(h);
}

static int start_etcd_tls(void **state)
{
	with_tls = true;
	return start_etcd(state);
}

int main(void)
{
	const struct CMUnitTest plain[] = {
		cmocka_unit_test(test_lease_txn_range),
		cmocka_unit_test(test_endpoints_and_errors),
		cmocka_unit_test(test_two_hosts_share_a_level),
	};
	const struct CMUnitTest tls[] = {
		cmocka_unit_test(test_tls_client_certificates),
	};
	int failed = cmocka_run_group_tests_name("etcd over http", plain, start_etcd, stop_etcd);

	return failed + cmocka_run_group_tests_name("etcd over https, client certificates", tls, start_etcd_tls,
						    stop_etcd);
}
