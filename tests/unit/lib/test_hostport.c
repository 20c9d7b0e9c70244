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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hostport),
	};

	return cmocka_run_group_tests_name("hostport", tests, NULL, NULL);
}
