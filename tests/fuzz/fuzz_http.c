// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libFuzzer target for the metrics listener's HTTP request parsing
 * (lib/http_request.c): any bytes a client on the network may send.
 * Invariants: the end it finds is inside the input and after a blank
 * line; a parsed request has a NUL-terminated path that starts with '/',
 * holds no control byte, no space and no query; the input is not changed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/http_request.h"

#define CHECK(x) do { if (!(x)) { fprintf(stderr, "invariant failed: %s (%s:%d)\n", #x, __FILE__, __LINE__); abort(); } } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exact-size copy: ASan sees any read past the request. */
	char *buf = malloc(size ? size : 1), *copy = malloc(size ? size : 1);
	struct sl_http_request r;
	size_t end;

	if (!buf || !copy)
		abort();
	memcpy(buf, data, size);
	memcpy(copy, data, size);
	end = sl_http_request_end(buf, size);
	CHECK(end <= size);
	CHECK(!end || (end >= 2 && buf[end - 1] == '\n'));
	if (!sl_http_parse_request(buf, end ? end : size, &r)) {
		size_t plen = strnlen(r.path, sizeof(r.path));

		CHECK(plen > 0 && plen < sizeof(r.path));
		CHECK(r.path[0] == '/');
		CHECK(r.method == SL_HTTP_GET || r.method == SL_HTTP_HEAD || r.method == SL_HTTP_OTHER);
		for (size_t i = 0; i < plen; i++)
			CHECK((unsigned char)r.path[i] >= 0x20 && r.path[i] != ' ' && r.path[i] != '?' &&
			      r.path[i] != 0x7f);
	}
	CHECK(!memcmp(buf, copy, size));
	free(buf);
	free(copy);
	return 0;
}
