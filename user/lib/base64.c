// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Base64.  See base64.h. */
#include "lib/base64.h"

#include <errno.h>
#include <stdint.h>

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int sl_base64_encode(const void *in, size_t n, char *out, size_t out_size)
{
	const unsigned char *p = in;
	size_t o = 0;

	if (SL_BASE64_LEN(n) + 1 > out_size)
		return -E2BIG;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
			     (i + 2 < n ? p[i + 2] : 0);

		out[o++] = alphabet[v >> 18 & 63];
		out[o++] = alphabet[v >> 12 & 63];
		out[o++] = i + 1 < n ? alphabet[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? alphabet[v & 63] : '=';
	}
	out[o] = '\0';
	return (int)o;
}

static int value_of(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '+' ? 62 : c == '/' ? 63 : -1;
}

int sl_base64_decode(const char *in, size_t len, void *out, size_t out_size, size_t *n)
{
	unsigned char *o = out;
	size_t w = 0;

	*n = 0;
	if (len % 4)
		return -EINVAL;
	for (size_t i = 0; i < len; i += 4) {
		int v[4], pad = 0;
		uint32_t x;

		for (int k = 0; k < 4; k++) {
			if (in[i + k] == '=' && i + 4 == len && k >= 2) {
				v[k] = 0;
				pad++;
			} else if (pad || (v[k] = value_of(in[i + k])) < 0) {
				return -EINVAL;
			}
		}
		x = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
		if (w + 3 - (size_t)pad > out_size)
			return -E2BIG;
		o[w++] = (unsigned char)(x >> 16);
		if (pad < 2)
			o[w++] = (unsigned char)(x >> 8);
		if (pad < 1)
			o[w++] = (unsigned char)x;
	}
	*n = w;
	return 0;
}
