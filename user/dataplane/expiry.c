// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "dataplane/expiry.h"
#include "dataplane/ledger.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int sl_expiry_init(struct sl_expiry *e, size_t census_n)
{
	memset(e, 0, sizeof(*e));
	if (!census_n)
		return 0;
	e->conns = calloc(census_n, sizeof(*e->conns));
	e->seats = calloc(census_n, sizeof(*e->seats));
	if (!e->conns || !e->seats) {
		sl_expiry_free(e);
		return -ENOMEM;
	}
	e->n = census_n;
	return 0;
}

void sl_expiry_free(struct sl_expiry *e)
{
	free(e->conns);
	free(e->seats);
	memset(e, 0, sizeof(*e));
}

struct expire_visit {
	struct sl_expiry *e;
	struct sl_dataplane *dp;
	uint64_t now_ns, linger_ns;
	const uint64_t *timeout_ns;
	int expired;
};

static int expire_visit(void *ctx, const struct sluice_conn_key *key, const struct sluice_conn *c)
{
	struct expire_visit *v = ctx;
	struct sl_expiry *e = v->e;

	if (c->state == SLUICE_CONN_ADMITTED && v->now_ns > c->admitted_ns) {
		uint64_t age = v->now_ns - c->admitted_ns;
		unsigned lv = c->level < SLUICE_MAX_LEVELS ? c->level : 0;

		if (age > v->timeout_ns[lv]) {
			/* Deleting the entry in hand is safe: the walk
			 * resumes by bucket, not by key.  The ledger
			 * deletes it and returns what it held. */
			if (sl_conn_expire(v->dp, key)) {
				v->expired++;
				return 0; /* gone: neither lingering nor counted */
			}
			/* established or closed meanwhile: not lingering */
		} else if (age > v->linger_ns && c->level < SLUICE_MAX_LEVELS)
			e->lingering[c->level]++;
	}
	e->entries++;
	if (c->schema < e->n) {
		e->conns[c->schema]++;
		e->seats[c->schema] += c->seats;
	}
	return 0;
}

static void pass_begin(struct sl_expiry *e)
{
	memset(e->lingering, 0, sizeof(e->lingering));
	e->entries = 0;
	if (e->n) {
		memset(e->conns, 0, e->n * sizeof(*e->conns));
		memset(e->seats, 0, e->n * sizeof(*e->seats));
	}
	e->running = true;
}

static void pass_publish(const struct sl_expiry *e, bool complete, uint32_t *lingering,
			 struct sl_conn_census *census)
{
	if (lingering)
		memcpy(lingering, e->lingering, sizeof(e->lingering));
	if (census) {
		size_t n = census->n < e->n ? census->n : e->n;

		census->complete = complete && n == census->n;
		if (n) {
			memcpy(census->conns, e->conns, n * sizeof(*census->conns));
			memcpy(census->seats, e->seats, n * sizeof(*census->seats));
		}
	}
}

int sl_expiry_step(struct sl_expiry *e, struct sl_dataplane *dp, uint64_t now_ns,
		   uint64_t deadline_ns, const uint64_t timeout_ns[SLUICE_MAX_LEVELS],
		   uint64_t linger_ns, uint32_t lingering[SLUICE_MAX_LEVELS],
		   struct sl_conn_census *census, int *expired)
{
	struct expire_visit v = {
		.e = e, .dp = dp, .now_ns = now_ns, .linger_ns = linger_ns, .timeout_ns = timeout_ns,
	};
	int rc;

	if (!e->running)
		pass_begin(e);
	rc = sl_conns_walk(&dp->maps, &e->cur, deadline_ns, expire_visit, &v);
	if (expired)
		*expired = v.expired;
	if (rc == 1)
		return 0; /* more at the next call */
	e->running = false;
	if (rc == -EAGAIN) {
		/* BPF churned the table faster than we read it: what we saw
		 * lingers, but the census would be short. */
		pass_publish(e, false, lingering, census);
		e->passes++;
		return 1;
	}
	if (rc < 0)
		return rc;
	pass_publish(e, true, lingering, census);
	e->last_entries = e->entries; /* a churned pass would say too few */
	e->passes++;
	return 1;
}
