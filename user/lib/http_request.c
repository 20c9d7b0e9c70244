// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "lib/http_request.h"

#include <errno.h>
#include <string.h>

size_t sl_http_request_end(const char *buf, size_t len)
{
	const char *end = memmem(buf, len, "\r\n\r\n", 4);

	if (end)
		return (size_t)(end - buf) + 4;
	end = memmem(buf, len, "\n\n", 2);
	return end ? (size_t)(end - buf) + 2 : 0;
}

int sl_http_parse_request(const char *buf, size_t len, struct sl_http_request *out)
{
	const char *nl = memchr(buf, '\n', len);
	const char *line_end = nl ? nl : buf + len;
	const char *sp, *path, *path_end;
	size_t mlen, plen;

	memset(out, 0, sizeof(*out));
	if (line_end > buf && line_end[-1] == '\r')
		line_end--;
	for (const char *p = buf; p < line_end; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return -EINVAL; /* a NUL, a bare CR, a tab: not a request line */
	sp = memchr(buf, ' ', (size_t)(line_end - buf));
	if (!sp || sp == buf)
		return -EINVAL;
	mlen = (size_t)(sp - buf);
	if (mlen == 3 && !memcmp(buf, "GET", 3))
		out->method = SL_HTTP_GET;
	else if (mlen == 4 && !memcmp(buf, "HEAD", 4))
		out->method = SL_HTTP_HEAD;
	else
		out->method = SL_HTTP_OTHER;
	path = sp + 1;
	path_end = memchr(path, ' ', (size_t)(line_end - path));
	if (!path_end)
		path_end = line_end;
	plen = (size_t)(path_end - path);
	{
		const char *q = memchr(path, '?', plen);

		if (q)
			plen = (size_t)(q - path);
	}
	if (!plen || path[0] != '/' || plen >= sizeof(out->path))
		return -EINVAL;
	memcpy(out->path, path, plen);
	out->path[plen] = '\0';
	return 0;
}
