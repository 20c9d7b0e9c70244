#include "dataplane/expiry.h"
#include "dataplane/ledger.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/log.h"

struct expire_walk {
	uint64_t now_ns, linger_ns;
	const uint64_t *timeout_ns;
	uint32_t *lingering;
	struct sl_conn_census *census;
	struct sluice_conn_key *stale;
	size_t n;
};

static int expire_visit(void *ctx, const struct sluice_conn_key *key, const struct sluice_conn *c)
{
	struct expire_walk *w = ctx;

	if (w->census && c->schema < w->census->n) {
		w->census->conns[c->schema]++;
		w->census->seats[c->schema] += c->seats;
	}
	if (c->state == SLUICE_CONN_ADMITTED && w->now_ns > c->admitted_ns) {
		uint64_t age = w->now_ns - c->admitted_ns;
		unsigned lv = c->level < SLUICE_MAX_LEVELS ? c->level : 0;

		if (age > w->timeout_ns[lv])
			w->stale[w->n++] = *key;
		else if (w->lingering && age > w->linger_ns && c->level < SLUICE_MAX_LEVELS)
			w->lingering[c->level]++;
	}
	return w->n >= SL_EXPIRE_BATCH; /* a full batch: the rest at the next call */
}

int sl_expire_handshakes(struct sl_dataplane *dp, uint64_t now_ns,
			 const uint64_t timeout_ns[SLUICE_MAX_LEVELS], uint64_t linger_ns,
			 uint32_t lingering[SLUICE_MAX_LEVELS], struct sl_conn_census *census)
{
	int fd = dp->maps.fd[SL_MAP_CONNS];
	struct expire_walk w = {
		.now_ns = now_ns, .linger_ns = linger_ns, .timeout_ns = timeout_ns,
		.lingering = lingering, .census = census,
	};
	struct sluice_conn c;
	int expired = 0, rc;

	w.stale = calloc(SL_EXPIRE_BATCH, sizeof(*w.stale));
	if (!w.stale)
		return -ENOMEM;
	if (lingering)
		memset(lingering, 0, SLUICE_MAX_LEVELS * sizeof(*lingering));
	if (census) {
		memset(census->conns, 0, census->n * sizeof(*census->conns));
		memset(census->seats, 0, census->n * sizeof(*census->seats));
	}
	/* Collect first, delete after: deleting while walking would restart
	 * the walk. */
	rc = sl_conns_each(&dp->maps, expire_visit, &w);
	if (census)
		census->complete = rc == 0; /* the end of the table */
	if (rc < 0 && !w.n) {
		free(w.stale);
		return rc;
	}
	for (size_t i = 0; i < w.n; i++) {
		if (bpf_map_lookup_elem(fd, &w.stale[i], &c))
			continue;
		if (c.state != SLUICE_CONN_ADMITTED)
			continue; /* established meanwhile */
		/* Whoever deletes the entry releases its seats: if sock_ops
		 * closed it first, the delete fails and we do nothing. */
		if (bpf_map_delete_elem(fd, &w.stale[i]))
			continue;
		sl_conn_expired(dp, &c);
		sl_seats_count_expired(dp, c.level);
		if (census && c.schema < census->n && census->conns[c.schema]) {
			census->conns[c.schema]--;
			census->seats[c.schema] -= census->seats[c.schema] >= c.seats ? c.seats
										: census->seats[c.schema];
		}
		expired++;
	}
	free(w.stale);
	return expired;
}
