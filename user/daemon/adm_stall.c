// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A stalled level's verdicts (admission.h; the rule: engine/stall.h):
 * when a full level with waiters has closed nothing for long enough, the
 * waiters of the flows that hold its seats are refused.  A room of
 * admission (admission_int.h): admission calls it, and it reaches back
 * only through the hooks it is given.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/admission.h"
#include "daemon/admission_int.h"
#include "dataplane/expiry.h"
#include "lib/clock.h"
#include "lib/grow.h"
#include "lib/log.h"

/* The walk of sl_conns a stall verdict needs reads at most this long a
 * tick. */
#define STALL_WALK_BUDGET_NS (10ull * 1000000ULL)

/* The walk's and the verdict's context: the level, and admission's hooks. */
struct stall_walk {
	struct level_rt *l;
	const struct adm_stall_hooks *h;
};

static void on_stalled(void *ctx, uint64_t id)
{
	const struct stall_walk *w = ctx;

	w->h->refuse(w->l, id);
}

static int collect_seat_flow(void *ctx, const struct sluice_conn_key *key, const struct sluice_conn *c)
{
	const struct stall_walk *w = ctx;
	struct seat_flows *sf = &w->l->stall_flows;

	if (c->level != sf->level)
		return 0;
	if (sl_grow((void **)&sf->hash, &sf->cap, sf->n + 1, sizeof(*sf->hash)))
		return -ENOMEM;
	sf->hash[sf->n++] = w->h->flow_hash(sf->adm, c->schema, key);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool holds_seats(void *ctx, uint64_t flow_hash)
{
	const struct seat_flows *sf = ctx;

	return sf->incomplete ||
	       (sf->n && bsearch(&flow_hash, sf->hash, sf->n, sizeof(*sf->hash), cmp_u64));
}

/* The level is full, has waiters and nothing has closed for several
 * typical lifetimes (engine/stall.h): the waiters of the flows that hold
 * its seats are refused now, each blocked client gets its error, goes on
 * and releases what it holds.  A waiter whose flow holds no seat here (a
 * health check beside a pool) cannot be part of the deadlock and keeps
 * its place; the first seat freed is its. */
size_t adm_stall_step(struct level_rt *l, uint64_t now, const struct adm_stall_hooks *h)
{
	struct seat_flows *sf = &l->stall_flows;
	struct stall_walk w = {.l = l, .h = h};
	bool again = sl_stall_stalled(&l->stall);
	uint64_t after = sl_stall_after_ns(&l->stall);
	size_t n;

	if (!l->qs || !sl_stall_due(&l->stall, now)) {
		sf->collecting = false; /* over before the walk ended */
		return 0;
	}
	/* Still stalled since the last verdict: nothing has closed and no seat
	 * was granted, the flows holding seats are the ones seen then.  So one
	 * walk of sl_conns per episode, not one per verdict; it reads the
	 * table STALL_WALK_BUDGET_NS a tick, and the verdict waits for its
	 * end (a few ticks at a million entries). */
	if (!again || sf->collecting) {
		int rc;

		if (!sf->collecting) {
			sf->adm = l->adm;
			sf->level = l->slot;
			sf->n = 0;
			memset(&sf->cur, 0, sizeof(sf->cur));
			sf->collecting = true;
		}
		rc = sl_conns_walk(&l->adm->dp->maps, &sf->cur, sl_mono_ns() + STALL_WALK_BUDGET_NS,
				   collect_seat_flow, &w);
		if (rc == 1)
			return 0;
		sf->collecting = false;
		/* A walk cut short (memory, a churning table) counts every flow
		 * as holding a seat: refusing a bystander beats missing the
		 * deadlock. */
		sf->incomplete = rc != 0;
		if (sf->n) /* none collected: no array, and qsort wants one */
			qsort(sf->hash, sf->n, sizeof(*sf->hash), cmp_u64);
	}
	n = sl_qs_shed_flows(l->qs, now, holds_seats, sf, on_stalled, &w);
	if (!n)
		return 0; /* busy with long connections, not stalled by its waiters */
	l->stalls++;
	/* The first verdict of an episode at info; the released clients'
	 * next connects, refused while it lasts, at debug. */
	sl_log(again ? SL_LOG_DEBUG : SL_LOG_INFO,
	       "event=stalled level=%s refused=%zu no_close_ms=%.0f again=%s "
	       "(full, and nothing closed %s: waiters whose flows hold its seats may be what holds them)",
	       l->name, n, (double)after / 1e6, again ? "yes" : "no",
	       again ? "since the last verdict" : "for several typical lifetimes");
	return n;
}
