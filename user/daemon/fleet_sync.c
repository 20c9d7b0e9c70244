// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* One sync of one host in one fleet level, against etcd.  See fleet_sync.h. */
#include "daemon/fleet_sync.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/etcd_v3.h"

/* POST a body (freed here); the answer for the parser, or NULL. */
static int call(struct sl_etcd_http *h, const char *path, char *body, char **answer)
{
	int err = body ? sl_etcd_http_post(h, path, body, answer) : -ENOMEM;

	free(body);
	return err;
}

int sl_fleet_sync_read(struct sl_etcd_http *h, struct sl_fleet_sync *s)
{
	/* Too large for a thread's stack, and only a sync's: on the heap for
	 * it (a thread-local array would sit in every thread of the daemon). */
	struct sl_etcd_kv *kvs = malloc(3 * SL_FLEET_MAX_MEMBERS * sizeof(*kvs));
	struct sl_fleet_node *nodes = malloc(SL_FLEET_MAX_MEMBERS * sizeof(*nodes));
	char prefix[SL_ETCD_KEY_MAX + 1], *answer = NULL;
	size_t n_kvs, skipped;
	int err = kvs && nodes ? 0 : -ENOMEM;

	s->members = 0;
	s->held = s->after = 0;
	s->written = false;
	if (!err && sl_fleet_prefix(prefix, sizeof(prefix), s->fleet, s->level) < 0)
		err = -E2BIG;
	if (!err)
		err = call(h, "/v3/kv/range", sl_etcd_body_range(prefix, true), &answer);
	if (!err)
		err = sl_etcd_parse_range(answer, &s->revision, kvs, 3 * SL_FLEET_MAX_MEMBERS, &n_kvs);
	free(answer);
	if (!err)
		err = sl_fleet_members(kvs, n_kvs, prefix, nodes, SL_FLEET_MAX_MEMBERS, &s->members, &skipped);
	if (!err)
		err = sl_fleet_plan_step(nodes, s->members, &s->self, &s->plan);
	for (size_t i = 0; !err && i < s->members; i++)
		if (!strcmp(nodes[i].node, s->self.node) && nodes[i].m.live)
			s->held = nodes[i].m.floor + nodes[i].m.extra;
	free(kvs);
	free(nodes);
	if (err)
		return err;
	switch (s->plan.action) {
	case SL_FLEET_JOIN:
		s->after = s->self.floor;
		break;
	case SL_FLEET_RAISE:
	case SL_FLEET_CUT:
		s->after = s->self.floor + s->plan.next;
		break;
	default:
		s->after = s->held;
		break;
	}
	return 0;
}

int sl_fleet_sync_write(struct sl_etcd_http *h, struct sl_fleet_sync *s, int64_t lease)
{
	char seats[SL_ETCD_KEY_MAX + 1], buf[SL_FLEET_STEP_BUF], *answer = NULL;
	struct sl_etcd_op ops[3];
	int64_t rev;
	int err = 0, n;

	if (sl_fleet_seats_prefix(seats, sizeof(seats), s->fleet, s->level) < 0)
		return -E2BIG;
	n = sl_fleet_step_ops(s->fleet, s->level, &s->self, &s->plan, lease, false, ops, buf, sizeof(buf));
	if (n < 0)
		return n;
	if (n) {
		err = call(h, "/v3/kv/txn", sl_etcd_body_txn(seats, s->revision, ops, (size_t)n), &answer);
		if (!err)
			err = sl_etcd_parse_txn(answer, &s->written, &rev);
		free(answer);
		answer = NULL;
		if (err)
			return err;
	}
	/* The want, every sync, on the lease: it moves no seat. */
	n = sl_fleet_step_ops(s->fleet, s->level, &s->self, &s->plan, lease, true, ops, buf, sizeof(buf));
	if (n < 0)
		return n;
	err = call(h, "/v3/kv/put", sl_etcd_body_put(&ops[0]), &answer);
	free(answer);
	return err;
}
