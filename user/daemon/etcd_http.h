/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * etcd's JSON gateway over HTTP(S) (adapter: libcurl, keep-alive, a bound
 * on every request, TLS with a client certificate).  Blocking: only the
 * fleet's own thread calls it, never the loop.  etcd_v3.h writes the
 * bodies and reads the answers.
 */
#ifndef SLUICE_DAEMON_ETCD_HTTP_H
#define SLUICE_DAEMON_ETCD_HTTP_H

#include <stddef.h>
#include <stdint.h>

struct sl_etcd_tls {
	const char *ca_file, *cert_file, *key_file; /* NULL: plain HTTP */
};

struct sl_etcd_http;

/* endpoints: "http://IP:PORT" (n of them, tried in turn: a failure moves
 * to the next), every request bounded by timeout_ns.  0 or -errno. */
int sl_etcd_http_open(struct sl_etcd_http **out, const char *const *endpoints, size_t n,
		      uint64_t timeout_ns, const struct sl_etcd_tls *tls);
/* POST body to path ("/v3/kv/range") on the current endpoint; *answer the
 * malloc'd body of a 200.  0, -ETIMEDOUT, -ECONNREFUSED (or another
 * transport failure: -EIO), -EPROTO (an HTTP status other than 200: the
 * answer is kept, etcd says why in it). */
int sl_etcd_http_post(struct sl_etcd_http *h, const char *path, const char *body, char **answer);
void sl_etcd_http_close(struct sl_etcd_http *h);

#endif
