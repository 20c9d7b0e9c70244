/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * "host:port" with a numeric host: 127.0.0.1:9464, [::1]:9464,
 * 0.0.0.0:9464, [::]:9464 (pure: no name resolution, no I/O).  Used by
 * the configuration (metricsAddress) and the metrics listener.
 */
#ifndef SLUICE_HOSTPORT_H
#define SLUICE_HOSTPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

/* 0, or -EINVAL with the reason in why. */
int sl_parse_hostport(const char *s, struct sockaddr_storage *out, socklen_t *out_len,
		      char *why, size_t why_len);

/* Whether a listener on addr answers every interface (0.0.0.0, ::): on a
 * host whose NIC sluice protects, the world reaches it. */
bool sl_addr_is_wildcard(const struct sockaddr_storage *addr);

/* Whether the peer of a connection is this host: a Unix socket, a
 * loopback address, or the connection's own local address (a host that
 * connects to one of its own addresses uses that address as the source:
 * the kubelet probing a hostNetwork pod on the node's address). */
bool sl_peer_is_local(const struct sockaddr_storage *peer, const struct sockaddr_storage *self);

#endif
