/*
 * "host:port" with a numeric host: 127.0.0.1:9464, [::1]:9464,
 * 0.0.0.0:9464, [::]:9464 (pure: no name resolution, no I/O).  Used by
 * the configuration (metricsAddress) and the metrics listener.
 */
#ifndef SLUICE_HOSTPORT_H
#define SLUICE_HOSTPORT_H

#include <stddef.h>
#include <sys/socket.h>

/* 0, or -EINVAL with the reason in why. */
int sl_parse_hostport(const char *s, struct sockaddr_storage *out, socklen_t *out_len,
		      char *why, size_t why_len);

#endif
