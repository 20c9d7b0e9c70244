#include "dataplane/reconcile.h"

#include <errno.h>
#include <stdlib.h>

#include "dataplane/expiry.h"
#include "dataplane/ledger.h"
#include "lib/clock.h"
#include "lib/grow.h"

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

/* What one walk found gone: established entries without a socket. */
struct gone_walk {
	const struct sl_live_sockets *live;
	uint64_t asked_ns, grace_ns;
	struct gone { struct sluice_conn_key key; struct sluice_conn seen; } *v;
	size_t n, cap;
};

static int collect_gone(void *ctx, const struct sluice_conn_key *key, const struct sluice_conn *c)
{
	struct gone_walk *w = ctx;

	if (c->state != SLUICE_CONN_ESTABLISHED || c->established_ns + w->grace_ns >= w->asked_ns ||
	    sl_live_sockets_has(w->live, key))
		return 0;
	if (sl_grow((void **)&w->v, &w->cap, w->n + 1, sizeof(*w->v)))
		return -ENOMEM;
	w->v[w->n].key = *key;
	w->v[w->n++].seen = *c;
	return 0;
}

int sl_reconcile_with(struct sl_dataplane *dp, const struct sl_live_sockets *live,
		      uint64_t asked_ns, uint64_t grace_ns)
{
	struct gone_walk w = { .live = live, .asked_ns = asked_ns, .grace_ns = grace_ns };
	int released = 0;
	int err = sl_conns_each(&dp->maps, collect_gone, &w);

	/* What was found is released even when the walk stopped early (out of
	 * memory, a churning table): whoever deletes the entry releases its
	 * seats, and a close racing us through sock_ops wins, so we do nothing
	 * twice. */
	for (size_t i = 0; i < w.n; i++)
		if (sl_conn_release(dp, &w.v[i].key, &w.v[i].seen))
			released++;
	free(w.v);
	/* A table churned faster than we read it is no error here: what the
	 * walk missed is reconciled next time. */
	return err && err != -EAGAIN ? err : released;
}
