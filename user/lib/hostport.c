// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "lib/hostport.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bad(char *why, size_t len, const char *msg)
{
	if (why && len)
		snprintf(why, len, "%s", msg);
	return -EINVAL;
}

int sl_parse_hostport(const char *s, struct sockaddr_storage *out, socklen_t *out_len,
		      char *why, size_t why_len)
{
	char host[64];
	const char *port, *colon;
	size_t hl;
	char *end;
	long p;

	memset(out, 0, sizeof(*out));
	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || close[1] != ':')
			return bad(why, why_len, "an IPv6 address needs brackets and a port: [::1]:9464");
		hl = (size_t)(close - s - 1);
		if (hl >= sizeof(host))
			return bad(why, why_len, "address too long");
		memcpy(host, s + 1, hl);
		host[hl] = '\0';
		port = close + 2;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return bad(why, why_len, "expected host:port, e.g. 127.0.0.1:9464 or [::1]:9464");
		if (strchr(s, ':') != colon)
			return bad(why, why_len, "an IPv6 address needs brackets: [::1]:9464");
		hl = (size_t)(colon - s);
		if (!hl || hl >= sizeof(host))
			return bad(why, why_len, "expected host:port, e.g. 127.0.0.1:9464 or [::1]:9464");
		memcpy(host, s, hl);
		host[hl] = '\0';
		port = colon + 1;
	}
	p = strtol(port, &end, 10);
	if (end == port || *end || p < 1 || p > 65535)
		return bad(why, why_len, "the port must be a number from 1 to 65535");
	if (s[0] == '[') {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)out;

		if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1)
			return bad(why, why_len, "not a numeric IPv6 address (names are not resolved)");
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)p);
		*out_len = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)out;

		if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
			return bad(why, why_len, "not a numeric IPv4 address (names are not resolved)");
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)p);
		*out_len = sizeof(*a);
	}
	return 0;
}

bool sl_addr_is_wildcard(const struct sockaddr_storage *addr)
{
	if (addr->ss_family == AF_INET)
		return ((const struct sockaddr_in *)addr)->sin_addr.s_addr == htonl(INADDR_ANY);
	if (addr->ss_family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)addr)->sin6_addr);
	return false;
}

/* IPv4 as a 32-bit host-order address, v4-mapped IPv6 included; false
 * for anything else. */
static bool ipv4_of(const struct sockaddr_storage *a, uint32_t *out)
{
	if (a->ss_family == AF_INET) {
		*out = ntohl(((const struct sockaddr_in *)a)->sin_addr.s_addr);
		return true;
	}
	if (a->ss_family == AF_INET6) {
		const struct in6_addr *v6 = &((const struct sockaddr_in6 *)a)->sin6_addr;

		if (IN6_IS_ADDR_V4MAPPED(v6)) {
			memcpy(out, &v6->s6_addr[12], 4);
			*out = ntohl(*out);
			return true;
		}
	}
	return false;
}

bool sl_peer_is_local(const struct sockaddr_storage *peer, const struct sockaddr_storage *self)
{
	uint32_t p4, s4;

	if (peer->ss_family == AF_UNIX)
		return true;
	if (ipv4_of(peer, &p4))
		return (p4 >> 24) == 127 || (ipv4_of(self, &s4) && p4 == s4);
	if (peer->ss_family != AF_INET6)
		return false;
	const struct in6_addr *p6 = &((const struct sockaddr_in6 *)peer)->sin6_addr;

	return IN6_IS_ADDR_LOOPBACK(p6) ||
	       (self->ss_family == AF_INET6 &&
		!memcmp(p6, &((const struct sockaddr_in6 *)self)->sin6_addr, sizeof(*p6)));
}
