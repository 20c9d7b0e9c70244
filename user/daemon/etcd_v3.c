// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The contract with etcd v3's JSON gateway.  See etcd_v3.h. */
#include "daemon/etcd_v3.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base64.h"

/* A string field of base64 for text of at most max bytes. */
static int set_b64(json_t *obj, const char *field, const char *text, size_t max)
{
	char buf[SL_BASE64_LEN(SL_ETCD_VALUE_MAX) + 1];
	size_t n = strlen(text);

	if (n > max || sl_base64_encode(text, n, buf, sizeof(buf)) < 0)
		return -E2BIG;
	return json_object_set_new(obj, field, json_string(buf)) ? -ENOMEM : 0;
}

static int set_i64(json_t *obj, const char *field, int64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	return json_object_set_new(obj, field, json_string(buf)) ? -ENOMEM : 0;
}

/* The end of a prefix's range: its last byte plus one (etcd's rule). */
static int prefix_end(const char *prefix, char *end, size_t size)
{
	size_t n = strlen(prefix);

	if (!n || n >= size)
		return -E2BIG;
	memcpy(end, prefix, n + 1);
	while (n && (unsigned char)end[n - 1] == 0xff)
		end[--n] = '\0';
	if (!n)
		return -EINVAL;
	end[n - 1]++;
	return 0;
}

static char *dump(json_t *o, int err)
{
	char *s = err ? NULL : json_dumps(o, JSON_COMPACT);

	json_decref(o);
	return s;
}

char *sl_etcd_body_range(const char *key, bool prefix)
{
	json_t *o = json_object();
	char end[SL_ETCD_KEY_MAX + 1];
	int err = o ? set_b64(o, "key", key, SL_ETCD_KEY_MAX) : -ENOMEM;

	if (!err && prefix)
		err = prefix_end(key, end, sizeof(end)) ?: set_b64(o, "range_end", end, SL_ETCD_KEY_MAX);
	return dump(o, err);
}

/* A put's fields (key, value, lease) into obj. */
static int put_fields(json_t *obj, const struct sl_etcd_op *op)
{
	return set_b64(obj, "key", op->key, SL_ETCD_KEY_MAX) ?:
	       set_b64(obj, "value", op->value ? op->value : "", SL_ETCD_VALUE_MAX) ?:
	       (op->lease ? set_i64(obj, "lease", op->lease) : 0);
}

char *sl_etcd_body_put(const struct sl_etcd_op *op)
{
	json_t *o = json_object();

	return dump(o, o ? put_fields(o, op) : -ENOMEM);
}

char *sl_etcd_body_txn(const char *prefix, int64_t revision, const struct sl_etcd_op *ops, size_t n)
{
	json_t *o = json_object(), *cmp = json_object(), *cmps = json_array(), *succ = json_array();
	char end[SL_ETCD_KEY_MAX + 1];
	int err = o && cmp && cmps && succ ? 0 : -ENOMEM;

	/* Every key in the range last written before revision + 1. */
	if (!err)
		err = set_b64(cmp, "key", prefix, SL_ETCD_KEY_MAX) ?: prefix_end(prefix, end, sizeof(end)) ?:
		      set_b64(cmp, "range_end", end, SL_ETCD_KEY_MAX) ?:
		      json_object_set_new(cmp, "target", json_string("MOD")) ?:
		      json_object_set_new(cmp, "result", json_string("LESS")) ?:
		      set_i64(cmp, "mod_revision", revision + 1);
	for (size_t i = 0; !err && i < n; i++) {
		json_t *req = json_object(), *op = json_object();

		err = req && op ? 0 : -ENOMEM;
		if (!err)
			err = ops[i].delete ? set_b64(req, "key", ops[i].key, SL_ETCD_KEY_MAX) : put_fields(req, &ops[i]);
		if (!err)
			err = json_object_set(op, ops[i].delete ? "request_delete_range" : "request_put", req) ?:
			      json_array_append(succ, op);
		json_decref(req);
		json_decref(op);
	}
	if (!err)
		err = json_array_append(cmps, cmp) ?: json_object_set(o, "compare", cmps) ?:
		      json_object_set(o, "success", succ);
	json_decref(cmp);
	json_decref(cmps);
	json_decref(succ);
	return dump(o, err);
}

char *sl_etcd_body_grant(int64_t ttl_s)
{
	json_t *o = json_object();

	return dump(o, o ? set_i64(o, "TTL", ttl_s) : -ENOMEM);
}

char *sl_etcd_body_lease(int64_t id)
{
	json_t *o = json_object();

	return dump(o, o ? set_i64(o, "ID", id) : -ENOMEM);
}

/* An int64 field as etcd writes it (a string), or as a number; absent: 0. */
static int get_i64(const json_t *o, const char *field, int64_t *v)
{
	const json_t *f = json_object_get(o, field);
	char *end;

	*v = 0;
	if (!f)
		return 0;
	if (json_is_integer(f)) {
		*v = json_integer_value(f);
		return 0;
	}
	if (!json_is_string(f))
		return -EPROTO;
	errno = 0;
	*v = strtoll(json_string_value(f), &end, 10);
	return errno || *end ? -EPROTO : 0;
}

static int get_b64(const json_t *o, const char *field, char *out, size_t max)
{
	const json_t *f = json_object_get(o, field);
	size_t n = 0;
	int err;

	out[0] = '\0';
	if (!f)
		return 0;
	if (!json_is_string(f))
		return -EPROTO;
	err = sl_base64_decode(json_string_value(f), json_string_length(f), out, max, &n);
	out[n] = '\0';
	return err == -EINVAL ? -EPROTO : err;
}

/* The answer, if it is one (an error answer carries "error" or "code"). */
static json_t *answer(const char *text)
{
	json_t *o = json_loads(text, 0, NULL);

	if (o && (!json_is_object(o) || json_object_get(o, "error") || json_object_get(o, "code"))) {
		json_decref(o);
		o = NULL;
	}
	return o;
}

static int header_revision(const json_t *o, int64_t *revision)
{
	const json_t *h = json_object_get(o, "header");

	return h ? get_i64(h, "revision", revision) : -EPROTO;
}

int sl_etcd_parse_range(const char *json, int64_t *revision, struct sl_etcd_kv *kvs, size_t max, size_t *n)
{
	json_t *o = answer(json);
	const json_t *arr, *kv;
	size_t i;
	int err;

	*n = 0;
	if (!o)
		return -EPROTO;
	err = header_revision(o, revision);
	arr = json_object_get(o, "kvs");
	if (!err && arr && !json_is_array(arr))
		err = -EPROTO;
	if (!err && arr && json_array_size(arr) > max)
		err = -E2BIG;
	json_array_foreach(arr, i, kv) {
		if (err)
			break;
		err = get_b64(kv, "key", kvs[i].key, SL_ETCD_KEY_MAX) ?:
		      get_b64(kv, "value", kvs[i].value, SL_ETCD_VALUE_MAX) ?:
		      get_i64(kv, "mod_revision", &kvs[i].mod_revision) ?: get_i64(kv, "lease", &kvs[i].lease);
		if (!err)
			(*n)++;
	}
	json_decref(o);
	return err;
}

int sl_etcd_parse_txn(const char *json, bool *succeeded, int64_t *revision)
{
	json_t *o = answer(json);
	int err;

	if (!o)
		return -EPROTO;
	err = header_revision(o, revision);
	*succeeded = json_is_true(json_object_get(o, "succeeded"));
	json_decref(o);
	return err;
}

int sl_etcd_parse_grant(const char *json, int64_t *id, int64_t *ttl_s)
{
	json_t *o = answer(json);
	int err;

	if (!o)
		return -EPROTO;
	err = get_i64(o, "ID", id) ?: get_i64(o, "TTL", ttl_s);
	if (!err && (!*id || json_object_get(o, "error")))
		err = -EPROTO;
	json_decref(o);
	return err;
}

int sl_etcd_parse_keepalive(const char *json, int64_t *ttl_s)
{
	json_t *o = answer(json);
	const json_t *r;
	int err;

	*ttl_s = 0;
	if (!o)
		return -EPROTO;
	/* The gateway streams: one {"result": {...}} per answer. */
	r = json_object_get(o, "result");
	err = r ? get_i64(r, "TTL", ttl_s) : -EPROTO;
	json_decref(o);
	return err;
}
