#include "dataplane/expiry.h"
#include "dataplane/sockets.h"
#include "dataplane/tickets.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "sluice.skel.h"

int sl_expire_handshakes(struct sl_dataplane *dp, uint64_t now_ns,
			 const uint64_t timeout_ns[SLUICE_MAX_LEVELS], uint64_t linger_ns,
			 uint32_t lingering[SLUICE_MAX_LEVELS], struct sl_conn_census *census)
{
	int fd = dp->maps.fd[SL_MAP_CONNS];
	struct sluice_conn_key *stale, key, next;
	struct sluice_conn c;
	void *prev = NULL;
	size_t n = 0, visited = 0, max_visits;
	int expired = 0;

	stale = calloc(SL_EXPIRE_BATCH, sizeof(*stale));
	if (!stale)
		return -ENOMEM;
	/* Collect first, delete after: deleting while walking would restart
	 * the walk.  Bounded by twice the table's real size (it is set from
	 * tableSizes.connections) in case BPF churns it meanwhile. */
	max_visits = 2u * (size_t)bpf_map__max_entries(dp->skel->maps.sl_conns);
	if (lingering)
		memset(lingering, 0, SLUICE_MAX_LEVELS * sizeof(*lingering));
	if (census) {
		memset(census->conns, 0, census->n * sizeof(*census->conns));
		memset(census->seats, 0, census->n * sizeof(*census->seats));
		census->complete = false;
	}
	for (;;) {
		bool found;

		if (n >= SL_EXPIRE_BATCH || visited++ >= max_visits)
			break;
		if (bpf_map_get_next_key(fd, prev, &next)) {
			if (census)
				census->complete = true; /* the end of the table */
			break;
		}
		found = !bpf_map_lookup_elem(fd, &next, &c);
		if (found && census && c.schema < census->n) {
			census->conns[c.schema]++;
			census->seats[c.schema] += c.seats;
		}
		if (found && c.state == SLUICE_CONN_ADMITTED && now_ns > c.admitted_ns) {
			uint64_t age = now_ns - c.admitted_ns;
			unsigned lv = c.level < SLUICE_MAX_LEVELS ? c.level : 0;

			if (age > timeout_ns[lv])
				stale[n++] = next;
			else if (lingering && age > linger_ns && c.level < SLUICE_MAX_LEVELS)
				lingering[c.level]++;
		}
		key = next;
		prev = &key;
	}
	for (size_t i = 0; i < n; i++) {
		if (bpf_map_lookup_elem(fd, &stale[i], &c))
			continue;
		if (c.state != SLUICE_CONN_ADMITTED)
			continue; /* established meanwhile */
		/* Whoever deletes the entry releases its seats: if sock_ops
		 * closed it first, the delete fails and we do nothing. */
		if (bpf_map_delete_elem(fd, &stale[i]))
			continue;
		sl_conn_expired(dp, &c);
		if (c.level < SLUICE_MAX_LEVELS)
			__atomic_fetch_add(&dp->seats[c.level].expired, 1, __ATOMIC_RELAXED);
		if (census && c.schema < census->n && census->conns[c.schema]) {
			census->conns[c.schema]--;
			census->seats[c.schema] -= census->seats[c.schema] >= c.seats ? c.seats
										: census->seats[c.schema];
		}
		expired++;
	}
	free(stale);
	return expired;
}

int sl_conns_each(struct sl_dataplane *dp, sl_conn_fn fn, void *ctx)
{
	int fd = dp->maps.fd[SL_MAP_CONNS];
	struct sluice_conn_key key, next;
	struct sluice_conn c;
	void *prev = NULL;
	size_t visited = 0, max_visits = 2u * (size_t)bpf_map__max_entries(dp->skel->maps.sl_conns);
	int rc;

	while (visited++ < max_visits && !bpf_map_get_next_key(fd, prev, &next)) {
		if (!bpf_map_lookup_elem(fd, &next, &c) && (rc = fn(ctx, &next, &c)))
			return rc;
		key = next;
		prev = &key;
	}
	return 0;
}

int sl_reconcile_conns(struct sl_dataplane *dp, uint64_t grace_ns)
{
	struct sl_live_sockets live;
	uint64_t asked_ns = sl_mono_ns();
	int err = sl_live_sockets_read(&live);

	if (err)
		return err;
	err = sl_reconcile_with(dp, &live, asked_ns, grace_ns);
	sl_live_sockets_free(&live);
	return err;
}

int sl_reconcile_with(struct sl_dataplane *dp, const struct sl_live_sockets *live,
		      uint64_t asked_ns, uint64_t grace_ns)
{
	int fd = dp->maps.fd[SL_MAP_CONNS];
	struct gone { struct sluice_conn_key key; struct sluice_conn seen; } *gone = NULL;
	struct sluice_conn_key key, next;
	struct sluice_conn c;
	void *prev = NULL;
	size_t n = 0, cap = 0, visited = 0, max_visits;
	int released = 0, err = 0;

	max_visits = 2u * (size_t)bpf_map__max_entries(dp->skel->maps.sl_conns);
	while (visited++ < max_visits && !bpf_map_get_next_key(fd, prev, &next)) {
		if (!bpf_map_lookup_elem(fd, &next, &c) && c.state == SLUICE_CONN_ESTABLISHED &&
		    c.established_ns + grace_ns < asked_ns && !sl_live_sockets_has(live, &next)) {
			if (n == cap) {
				size_t ncap = cap ? 2 * cap : 256;
				struct gone *g = realloc(gone, ncap * sizeof(*g));

				if (!g) {
					err = -ENOMEM;
					break;
				}
				gone = g;
				cap = ncap;
			}
			gone[n].key = next;
			gone[n++].seen = c;
		}
		key = next;
		prev = &key;
	}
	/* Whoever deletes the entry releases its seats (a close racing us
	 * through sock_ops wins and we do nothing). */
	for (size_t i = 0; i < n; i++)
		if (sl_conn_release(dp, &gone[i].key, &gone[i].seen))
			released++;
	free(gone);
	return err ? err : released;
}
