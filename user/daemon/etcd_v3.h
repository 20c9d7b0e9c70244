/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The contract with etcd v3's JSON gateway (etcd 3.4, Debian 12's
 * etcd-server): the request bodies sluice sends and the answers it reads,
 * with no I/O (etcd_http.h carries them).  Keys and values are base64,
 * 64-bit integers are strings, and zero fields are left out of answers
 * (no "kvs": none; no "succeeded": false; no "TTL": the lease is gone).
 *
 *   POST /v3/kv/range           sl_etcd_body_range      sl_etcd_parse_range
 *   POST /v3/kv/put             sl_etcd_body_put        (any answer)
 *   POST /v3/kv/txn             sl_etcd_body_txn        sl_etcd_parse_txn
 *   POST /v3/lease/grant        sl_etcd_body_grant      sl_etcd_parse_grant
 *   POST /v3/lease/keepalive    sl_etcd_body_lease      sl_etcd_parse_keepalive
 *   POST /v3/lease/revoke       sl_etcd_body_lease      (any answer)
 */
#ifndef SLUICE_DAEMON_ETCD_V3_H
#define SLUICE_DAEMON_ETCD_V3_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SL_ETCD_KEY_MAX   256
#define SL_ETCD_VALUE_MAX 1024

struct sl_etcd_kv {
	char key[SL_ETCD_KEY_MAX + 1];
	char value[SL_ETCD_VALUE_MAX + 1];
	int64_t mod_revision;
	int64_t lease;                  /* 0: none */
};

/* A write inside a transaction: a put (lease 0: none) or, delete, a delete. */
struct sl_etcd_op {
	const char *key;
	const char *value;
	int64_t lease;
	bool delete;
};

/* Request bodies: a malloc'd JSON string, or NULL (out of memory, a key or
 * value too long). */
char *sl_etcd_body_range(const char *key, bool prefix);
/* An unguarded put (lease 0: none). */
char *sl_etcd_body_put(const struct sl_etcd_op *op);
/* Every op if no key under prefix was written after revision (a MOD
 * compare over the prefix's range: "unchanged since I read it"), else
 * nothing. */
char *sl_etcd_body_txn(const char *prefix, int64_t revision, const struct sl_etcd_op *ops, size_t n);
char *sl_etcd_body_grant(int64_t ttl_s);
char *sl_etcd_body_lease(int64_t id);

/* Answers.  0, or -EPROTO (not etcd's answer: an error object, bad JSON),
 * -E2BIG (more kvs than max, or a key or value too long). */
int sl_etcd_parse_range(const char *json, int64_t *revision, struct sl_etcd_kv *kvs, size_t max, size_t *n);
int sl_etcd_parse_txn(const char *json, bool *succeeded, int64_t *revision);
int sl_etcd_parse_grant(const char *json, int64_t *id, int64_t *ttl_s);
/* *ttl_s 0: the lease has expired (etcd leaves the field out). */
int sl_etcd_parse_keepalive(const char *json, int64_t *ttl_s);

#endif
