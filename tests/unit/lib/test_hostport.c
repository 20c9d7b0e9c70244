// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Unit tests for host:port parsing (user/lib/hostport.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <cmocka.h>

#include "lib/hostport.h"

/* metricsAddress forms that parse, with the socket address they give. */
static void test_hostport(void **state)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
	socklen_t len;
	char why[128];

	(void)state;
	assert_int_equal(sl_parse_hostport("127.0.0.1:9464", &ss, &len, why, sizeof(why)), 0);
	assert_int_equal(a4->sin_family, AF_INET);
	assert_int_equal(ntohs(a4->sin_port), 9464);
	assert_int_equal(ntohl(a4->sin_addr.s_addr), 0x7f000001);
	assert_int_equal(len, sizeof(*a4));
	assert_int_equal(sl_parse_hostport("[::1]:1", &ss, &len, why, sizeof(why)), 0);
	assert_int_equal(a6->sin6_family, AF_INET6);
	assert_int_equal(ntohs(a6->sin6_port), 1);
	assert_int_equal(a6->sin6_addr.s6_addr[15], 1);
	assert_int_equal(sl_parse_hostport("[::]:65535", &ss, &len, why, sizeof(why)), 0);
	assert_int_equal(sl_parse_hostport("0.0.0.0:0", &ss, &len, why, sizeof(why)), -EINVAL);
	assert_int_equal(sl_parse_hostport("[::1]", &ss, &len, why, sizeof(why)), -EINVAL);
	assert_int_equal(sl_parse_hostport("1.2.3.4:80x", &ss, &len, why, sizeof(why)), -EINVAL);
	assert_int_equal(sl_parse_hostport(":80", &ss, &len, why, sizeof(why)), -EINVAL);
}

static struct sockaddr_storage addr(const char *hostport)
{
	struct sockaddr_storage ss;
	socklen_t len;
	char why[128];

	assert_int_equal(sl_parse_hostport(hostport, &ss, &len, why, sizeof(why)), 0);
	return ss;
}

/* Listeners every interface reaches: the daemon warns about them. */
static void test_wildcard(void **state)
{
	struct sockaddr_storage a;

	(void)state;
	a = addr("0.0.0.0:9464");
	assert_true(sl_addr_is_wildcard(&a));
	a = addr("[::]:9464");
	assert_true(sl_addr_is_wildcard(&a));
	a = addr("127.0.0.1:9464");
	assert_false(sl_addr_is_wildcard(&a));
	a = addr("10.0.0.7:9464");
	assert_false(sl_addr_is_wildcard(&a));
	a = addr("[::1]:9464");
	assert_false(sl_addr_is_wildcard(&a));
}

/* Which peers are this host: loopback, a Unix socket, or the
 * connection's own address (the kubelet probing the node's address). */
static void test_peer_is_local(void **state)
{
	struct sockaddr_storage node = addr("10.0.0.7:9464"), node6 = addr("[fd00::7]:9464");
	struct sockaddr_storage p, unix_peer = {.ss_family = AF_UNIX};

	(void)state;
	p = addr("127.0.0.1:40000");
	assert_true(sl_peer_is_local(&p, &node));
	p = addr("127.9.9.9:40000");
	assert_true(sl_peer_is_local(&p, &node));
	p = addr("10.0.0.7:40000");
	assert_true(sl_peer_is_local(&p, &node));
	p = addr("10.0.0.8:40000");
	assert_false(sl_peer_is_local(&p, &node));
	p = addr("[::1]:40000");
	assert_true(sl_peer_is_local(&p, &node6));
	p = addr("[fd00::7]:40000");
	assert_true(sl_peer_is_local(&p, &node6));
	p = addr("[fd00::8]:40000");
	assert_false(sl_peer_is_local(&p, &node6));
	/* A dual-stack listener sees IPv4 peers v4-mapped. */
	p = addr("[::ffff:10.0.0.7]:40000");
	assert_true(sl_peer_is_local(&p, &node));
	p = addr("[::ffff:127.0.0.1]:40000");
	assert_true(sl_peer_is_local(&p, &node6));
	p = addr("[::ffff:10.0.0.9]:40000");
	assert_false(sl_peer_is_local(&p, &node));
	assert_true(sl_peer_is_local(&unix_peer, &unix_peer));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hostport),
		cmocka_unit_test(test_wildcard),
		cmocka_unit_test(test_peer_is_local),
	};

	return cmocka_run_group_tests_name("hostport", tests, NULL, NULL);
}
