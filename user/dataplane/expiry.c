#include "dataplane/expiry.h"
#include "dataplane/tickets.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/log.h"

/* Entries per batch syscall.  A hash map's batch holds whole buckets: a
 * bucket longer than the buffer (ENOSPC, nothing copied) doubles it. */
#define CONNS_WALK_BATCH 1024
#define CONNS_WALK_BATCH_MAX 65536

/* The table's real size (tableSizes.connections), from the map itself:
 * the walk's bound, whoever made the map. */
static size_t conns_capacity(int fd)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len) || !info.max_entries)
		return SLUICE_DEFAULT_CONNS;
	return info.max_entries;
}

int sl_conns_each(struct sl_dataplane *dp, sl_conn_fn fn, void *ctx)
{
	int fd = dp->maps.fd[SL_MAP_CONNS];
	/* The batch token is the map's own (a bucket index for a hash map):
	 * room for a key covers any of them. */
	union { struct sluice_conn_key key; uint64_t u64; } in, out;
	size_t cap = CONNS_WALK_BATCH, visited = 0;
	size_t max_visits = 2u * conns_capacity(fd);
	struct sluice_conn_key *keys = NULL;
	struct sluice_conn *vals = NULL;
	bool first = true;
	int rc = 0;
	LIBBPF_OPTS(bpf_map_batch_opts, opts);

	for (;;) {
		__u32 count = cap;
		int err;

		if (!keys) {
			keys = calloc(cap, sizeof(*keys));
			vals = calloc(cap, sizeof(*vals));
			if (!keys || !vals) {
				rc = -ENOMEM;
				break;
			}
		}
		err = bpf_map_lookup_batch(fd, first ? NULL : &in, &out, keys, vals, &count, &opts);
		if (err == -ENOSPC && !count && cap < CONNS_WALK_BATCH_MAX) {
			free(keys);
			free(vals);
			keys = NULL;
			vals = NULL;
			cap *= 2;
			continue;
		}
		if (err && err != -ENOENT) {
			rc = err;
			break;
		}
		for (__u32 i = 0; i < count && !rc; i++)
			rc = fn(ctx, &keys[i], &vals[i]);
		if (rc || err == -ENOENT)
			break; /* stopped by fn, or the end of the table */
		visited += count;
		if (visited >= max_visits) {
			rc = -EAGAIN; /* BPF churns the table faster than we read it */
			break;
		}
		in = out;
		first = false;
	}
	free(keys);
	free(vals);
	return rc;
}

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
	rc = sl_conns_each(dp, expire_visit, &w);
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
		if (c.level < SLUICE_MAX_LEVELS)
			__atomic_fetch_add(&dp->seats[c.level].expired, 1, __ATOMIC_RELAXED);
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
