// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "lib/logfmt.h"

#include <stdbool.h>
#include <string.h>

static bool key_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
	       c == '.' || c == '-';
}

int sl_logfmt_each(const char *line, char *buf, size_t len, sl_logfmt_fn fn, void *arg)
{
	const char *p = line;

	if (!len)
		return 0;
	while (*p) {
		const char *key;
		size_t klen, o = 0;
		int rc;

		while (*p == ' ')
			p++;
		key = p;
		while (key_char(*p))
			p++;
		klen = (size_t)(p - key);
		if (!klen || *p != '=') {
			/* not a pair: skip the word */
			while (*p && *p != ' ')
				p++;
			continue;
		}
		p++;
		if (*p == '"') {
			for (p++; *p && *p != '"'; p++) {
				char c = *p;

				if (c == '\\' && p[1]) {
					c = *++p == 'n' ? '\n' : *p;
				}
				if (o + 1 < len)
					buf[o++] = c;
			}
			if (*p == '"')
				p++;
		} else {
			for (; *p && *p != ' '; p++)
				if (o + 1 < len)
					buf[o++] = *p;
		}
		buf[o] = '\0';
		rc = fn(key, klen, buf, arg);
		if (rc)
			return rc;
	}
	return 0;
}
