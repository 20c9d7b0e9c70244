/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The little HTTP/1 a metrics listener needs (lib, pure: no I/O): where a
 * request ends, and its request line.  Only the method and the path
 * matter: the headers are read past, never interpreted, and the body
 * (none for GET and HEAD) is not expected.  Fuzzed (tests/fuzz/fuzz_http.c).
 */
#ifndef SLUICE_HTTP_REQUEST_H
#define SLUICE_HTTP_REQUEST_H

#include <stddef.h>

/* The length of the request in buf (its blank line included) once the
 * headers are complete ("\r\n\r\n", or "\n\n" from a sloppy client),
 * else 0: more bytes are needed. */
size_t sl_http_request_end(const char *buf, size_t len);

enum sl_http_method {
	SL_HTTP_GET = 0,
	SL_HTTP_HEAD,
	SL_HTTP_OTHER,  /* a method we do not serve: 405 */
};

#define SL_HTTP_PATH_MAX 256

struct sl_http_request {
	enum sl_http_method method;
	char path[SL_HTTP_PATH_MAX]; /* without its query string; NUL-terminated */
};

/*
 * Parse the request line of the len bytes at buf (a complete request, not
 * NUL-terminated; buf is not changed): METHOD SP PATH [SP VERSION].
 * 0, or -EINVAL for a request that is not one (no space after the method,
 * an empty path or one not starting with '/', a control byte, a path
 * longer than SL_HTTP_PATH_MAX - 1): 400.
 */
int sl_http_parse_request(const char *buf, size_t len, struct sl_http_request *out);

#endif
