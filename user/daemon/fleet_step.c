// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* One sync of one host in one fleet level.  See fleet_step.h. */
#include "daemon/fleet_step.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sl_fleet_plan_step(const struct sl_fleet_node *nodes, size_t n, const struct sl_fleet_self *self,
		       struct sl_fleet_plan *plan)
{
	struct sl_fleet_member m[SL_FLEET_MAX_MEMBERS] = {{0}};
	uint32_t target[SL_FLEET_MAX_MEMBERS];
	size_t me = SIZE_MAX;
	uint64_t others = 0, old_grant, new_grant;
	int err;

	memset(plan, 0, sizeof(*plan));
	if (n + 1 > SL_FLEET_MAX_MEMBERS)
		return -E2BIG;
	for (size_t i = 0; i < n; i++) {
		m[i] = nodes[i].m;
		if (!strcmp(nodes[i].node, self->node)) {
			me = i;
			/* What this host knows of itself is newer than etcd's. */
			m[i].in_use = self->in_use;
			m[i].wants = self->wants;
			m[i].budget = self->seats;
		} else {
			/* the seats the others hold: floors, and live extras */
			others += m[i].floor + (m[i].live ? m[i].extra : 0);
		}
	}
	plan->budget = sl_fleet_budget(m, n, self->seats);
	if (me == SIZE_MAX || !m[me].live) {
		/* Not a member, or its lease went: join from its floor, if the
		 * others leave room for it. */
		plan->action = others + self->floor <= plan->budget ? SL_FLEET_JOIN : SL_FLEET_NO_ROOM;
		return 0;
	}
	/* A reload may have moved its floor: the sums take the new one, and
	 * it is written with the claim. */
	m[me].floor = self->floor;
	err = sl_fleet_targets(m, n, plan->budget, target);
	if (err && err != -ERANGE)
		return err;
	plan->extra = m[me].extra;
	plan->target = target[me];
	plan->next = sl_fleet_next_claim(m[me].extra, target[me],
					 self->in_use > self->floor ? self->in_use - self->floor : 0,
					 sl_fleet_room(m, n, plan->budget));
	old_grant = (uint64_t)nodes[me].m.floor + nodes[me].m.extra;
	new_grant = (uint64_t)self->floor + plan->next;
	if (new_grant > old_grant && others + new_grant > plan->budget)
		plan->action = SL_FLEET_NO_ROOM; /* a floor raised past what the others leave */
	else if (new_grant > old_grant)
		plan->action = SL_FLEET_RAISE;
	else if (new_grant < old_grant)
		plan->action = SL_FLEET_CUT;
	else
		plan->action = nodes[me].m.floor != self->floor || plan->next != plan->extra ?
			       SL_FLEET_RAISE : SL_FLEET_NOTHING;
	return 0;
}

/* Copy s into the buffer; its address, or NULL when it does not fit. */
static const char *keep(char **at, size_t *left, const char *s)
{
	size_t n = s ? strlen(s) + 1 : 0;
	char *p = *at;

	if (!s || n > *left)
		return NULL;
	memcpy(p, s, n);
	*at += n;
	*left -= n;
	return p;
}

int sl_fleet_step_ops(const char *fleet, const char *level, const struct sl_fleet_self *self,
		      const struct sl_fleet_plan *plan, int64_t lease, bool want, struct sl_etcd_op *ops,
		      char *buf, size_t size)
{
	char key[SL_ETCD_KEY_MAX + 1], *v;
	size_t n = 0;
	int err = 0;

#define PUT(kind, val, with_lease)                                                              \
	do {                                                                                    \
		v = (val);                                                              \
		if (sl_fleet_key(key, sizeof(key), fleet, level, kind, self->node) < 0 ||       \
		    !(ops[n].key = keep(&buf, &size, key)) || !(ops[n].value = keep(&buf, &size, v))) \
			err = -E2BIG;                                                           \
		ops[n].lease = (with_lease) ? lease : 0;                                        \
		ops[n].delete = false;                                                          \
		free(v);                                                                        \
		n++;                                                                            \
	} while (0)
	if (want) {
		PUT(SL_FLEET_KEY_WANT, sl_fleet_value_want(self->in_use, self->wants, self->seats), true);
		return err ? err : (int)n;
	}
	switch (plan->action) {
	case SL_FLEET_JOIN:
		PUT(SL_FLEET_KEY_MEMBER, sl_fleet_value_member(self->floor), false);
		PUT(SL_FLEET_KEY_CLAIM, sl_fleet_value_claim(0), true);
		break;
	case SL_FLEET_RAISE:
	case SL_FLEET_CUT:
		PUT(SL_FLEET_KEY_MEMBER, sl_fleet_value_member(self->floor), false);
		PUT(SL_FLEET_KEY_CLAIM, sl_fleet_value_claim(plan->next), true);
		break;
	default:
		break;
	}
#undef PUT
	return err ? err : (int)n;
}
