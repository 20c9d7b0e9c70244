// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "lib/fmt.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

static const uint8_t v4_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

const char *sl_fmt_addr(const uint8_t addr[16], char *buf, size_t len)
{
	if (!memcmp(addr, v4_prefix, sizeof(v4_prefix))) {
		if (!inet_ntop(AF_INET, addr + 12, buf, len))
			snprintf(buf, len, "?");
	} else if (!inet_ntop(AF_INET6, addr, buf, len)) {
		snprintf(buf, len, "?");
	}
	return buf;
}

const char *sl_fmt_endpoint(const uint8_t addr[16], uint16_t port_be, char *buf, size_t len)
{
	char a[SL_ADDR_STRLEN];
	int v4 = !memcmp(addr, v4_prefix, sizeof(v4_prefix));

	sl_fmt_addr(addr, a, sizeof(a));
	snprintf(buf, len, v4 ? "%s:%u" : "[%s]:%u", a, ntohs(port_be));
	return buf;
}

int sl_parse_addr(const char *s, uint8_t out[16])
{
	memset(out, 0, 16);
	if (inet_pton(AF_INET, s, out + 12) == 1) {
		memcpy(out, v4_prefix, sizeof(v4_prefix));
		return 4;
	}
	if (inet_pton(AF_INET6, s, out) == 1)
		return 6;
	return -EINVAL;
}
