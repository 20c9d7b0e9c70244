/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The device of the default route (lib, pure: it parses the text of
 * /proc/net/route and /proc/net/ipv6_route, it reads no file), for
 * `sluiced --iface auto`: one DaemonSet for nodes whose NICs have
 * different names protects each node's uplink.
 */
#ifndef SLUICE_DEFAULT_ROUTE_H
#define SLUICE_DEFAULT_ROUTE_H

#include <stddef.h>

/*
 * The device of the usable default route with the lowest metric: IPv4's
 * (route_v4, /proc/net/route) first, else IPv6's (route_v6,
 * /proc/net/ipv6_route); either may be NULL.  Routes that are down,
 * rejecting (unreachable, prohibit) or on loopback do not count.  0 with
 * the name in out, or -ENOENT.
 */
int sl_default_route_dev(const char *route_v4, const char *route_v6, char *out, size_t out_len);

#endif
