// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Unit tests for the metrics listener's HTTP request parsing
 * (user/lib/http_request.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "lib/http_request.h"

#define S(lit) lit, sizeof(lit) - 1

static void test_request_end(void **state)
{
	(void)state;
	assert_int_equal(sl_http_request_end(S("GET / HTTP/1.1\r\nHost: x\r\n\r\n")), 27);
	assert_int_equal(sl_http_request_end(S("GET / HTTP/1.1\r\nHost: x\r\n")), 0);
	assert_int_equal(sl_http_request_end(S("GET /\n\n")), 7);
	/* The first blank line ends it; what follows is not ours. */
	assert_int_equal(sl_http_request_end(S("GET /\r\n\r\nGET /x\r\n\r\n")), 9);
	assert_int_equal(sl_http_request_end(S("")), 0);
}

static void test_request_line(void **state)
{
	struct sl_http_request r;

	(void)state;
	assert_int_equal(sl_http_parse_request(S("GET /metrics HTTP/1.1\r\n\r\n"), &r), 0);
	assert_int_equal(r.method, SL_HTTP_GET);
	assert_string_equal(r.path, "/metrics");
	assert_int_equal(sl_http_parse_request(S("HEAD /healthz?verbose=1 HTTP/1.0\r\n\r\n"), &r), 0);
	assert_int_equal(r.method, SL_HTTP_HEAD);
	assert_string_equal(r.path, "/healthz");
	/* HTTP/0.9's form: no version. */
	assert_int_equal(sl_http_parse_request(S("GET /readyz\n\n"), &r), 0);
	assert_string_equal(r.path, "/readyz");
	assert_int_equal(sl_http_parse_request(S("DELETE /metrics HTTP/1.1\r\n\r\n"), &r), 0);
	assert_int_equal(r.method, SL_HTTP_OTHER);
	/* Methods are case-sensitive (RFC 9110). */
	assert_int_equal(sl_http_parse_request(S("get /metrics HTTP/1.1\r\n\r\n"), &r), 0);
	assert_int_equal(r.method, SL_HTTP_OTHER);
}

static void test_bad_requests(void **state)
{
	struct sl_http_request r;
	char long_path[SL_HTTP_PATH_MAX + 32] = "GET /";

	(void)state;
	assert_int_equal(sl_http_parse_request(S("GET\r\n\r\n"), &r), -EINVAL);
	assert_int_equal(sl_http_parse_request(S(" /metrics HTTP/1.1\r\n\r\n"), &r), -EINVAL);
	assert_int_equal(sl_http_parse_request(S("GET metrics HTTP/1.1\r\n\r\n"), &r), -EINVAL);
	assert_int_equal(sl_http_parse_request(S("GET  HTTP/1.1\r\n\r\n"), &r), -EINVAL);
	assert_int_equal(sl_http_parse_request(S("GET /a\0b HTTP/1.1\r\n\r\n"), &r), -EINVAL);
	assert_int_equal(sl_http_parse_request(S("GET /a\tb HTTP/1.1\r\n\r\n"), &r), -EINVAL);
	assert_int_equal(sl_http_parse_request(S(""), &r), -EINVAL);
	memset(long_path + 5, 'a', SL_HTTP_PATH_MAX);
	long_path[5 + SL_HTTP_PATH_MAX] = '\0';
	assert_int_equal(sl_http_parse_request(long_path, strlen(long_path), &r), -EINVAL);
	/* The longest path that fits. */
	long_path[4 + SL_HTTP_PATH_MAX - 1] = '\0';
	assert_int_equal(sl_http_parse_request(long_path, strlen(long_path), &r), 0);
	assert_int_equal(strlen(r.path), SL_HTTP_PATH_MAX - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_end),
		cmocka_unit_test(test_request_line),
		cmocka_unit_test(test_bad_requests),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
