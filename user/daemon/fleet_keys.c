// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The fleet's keys in etcd.  See fleet_keys.h. */
#include "daemon/fleet_keys.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fit(int n, size_t size)
{
	return n < 0 || (size_t)n >= size ? -E2BIG : n;
}

int sl_fleet_prefix(char *buf, size_t size, const char *fleet, const char *level)
{
	return fit(snprintf(buf, size, "/sluice/%s/%s/", fleet, level), size);
}

int sl_fleet_seats_prefix(char *buf, size_t size, const char *fleet, const char *level)
{
	return fit(snprintf(buf, size, "/sluice/%s/%s/seats/", fleet, level), size);
}

static const char *const kind_path[] = {
	[SL_FLEET_KEY_MEMBER] = "seats/member/",
	[SL_FLEET_KEY_CLAIM] = "seats/claim/",
	[SL_FLEET_KEY_WANT] = "want/",
};

int sl_fleet_key(char *buf, size_t size, const char *fleet, const char *level, enum sl_fleet_key_kind kind,
		 const char *node)
{
	return fit(snprintf(buf, size, "/sluice/%s/%s/%s%s", fleet, level, kind_path[kind], node), size);
}

static char *value(const char *fmt, ...)
{
	va_list ap;
	json_t *o;
	char *s = NULL;

	va_start(ap, fmt);
	o = json_vpack_ex(NULL, 0, fmt, ap);
	va_end(ap);
	if (o)
		s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	return s;
}

char *sl_fleet_value_member(uint32_t floor)
{
	return value("{sI}", "floor", (json_int_t)floor);
}

char *sl_fleet_value_claim(uint32_t extra)
{
	return value("{sI}", "extra", (json_int_t)extra);
}

char *sl_fleet_value_want(uint32_t in_use, uint32_t wants, uint32_t budget)
{
	return value("{sIsIsI}", "in_use", (json_int_t)in_use, "wants", (json_int_t)wants, "budget",
		     (json_int_t)budget);
}

/* A field of a value: a non-negative integer that fits 32 bits. */
static int field_u32(const json_t *o, const char *name, uint32_t *v)
{
	const json_t *f = json_object_get(o, name);
	json_int_t x;

	if (!json_is_integer(f))
		return -EPROTO;
	x = json_integer_value(f);
	if (x < 0 || x > UINT32_MAX)
		return -EPROTO;
	*v = (uint32_t)x;
	return 0;
}

static struct sl_fleet_node *node_of(struct sl_fleet_node *out, size_t *n, size_t max, const char *name)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp(out[i].node, name))
			return &out[i];
	if (*n == max)
		return NULL;
	memset(&out[*n], 0, sizeof(out[*n]));
	snprintf(out[*n].node, sizeof(out[*n].node), "%s", name);
	return &out[(*n)++];
}

static int by_node(const void *a, const void *b)
{
	return strcmp(((const struct sl_fleet_node *)a)->node, ((const struct sl_fleet_node *)b)->node);
}

int sl_fleet_members(const struct sl_etcd_kv *kvs, size_t n, const char *prefix, struct sl_fleet_node *out,
		     size_t max, size_t *n_out, size_t *skipped)
{
	size_t plen = strlen(prefix);

	*n_out = 0;
	*skipped = 0;
	for (size_t i = 0; i < n; i++) {
		const char *rest = kvs[i].key + plen, *name = NULL;
		enum sl_fleet_key_kind kind = SL_FLEET_KEY_MEMBER;
		struct sl_fleet_node *m;
		json_t *o;
		int err;

		if (strncmp(kvs[i].key, prefix, plen))
			continue;
		for (int k = SL_FLEET_KEY_MEMBER; k <= SL_FLEET_KEY_WANT; k++)
			if (!strncmp(rest, kind_path[k], strlen(kind_path[k]))) {
				kind = k;
				name = rest + strlen(kind_path[k]);
			}
		if (!name || !*name || strlen(name) > SL_FLEET_NODE_MAX || strchr(name, '/')) {
			(*skipped)++;
			continue;
		}
		o = json_loads(kvs[i].value, 0, NULL);
		m = node_of(out, n_out, max, name);
		if (!m) {
			json_decref(o);
			return -E2BIG;
		}
		switch (kind) {
		case SL_FLEET_KEY_MEMBER:
			err = field_u32(o, "floor", &m->m.floor);
			break;
		case SL_FLEET_KEY_CLAIM:
			err = field_u32(o, "extra", &m->m.extra);
			if (!err) {
				m->m.live = true;
				m->lease = kvs[i].lease;
			}
			break;
		default:
			err = field_u32(o, "in_use", &m->m.in_use) ?: field_u32(o, "wants", &m->m.wants) ?:
			      field_u32(o, "budget", &m->m.budget);
			break;
		}
		json_decref(o);
		if (err)
			(*skipped)++;
	}
	qsort(out, *n_out, sizeof(*out), by_node);
	return 0;
}
