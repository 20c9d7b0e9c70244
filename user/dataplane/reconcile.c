// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "dataplane/reconcile.h"

#include <errno.h>
#include <stdlib.h>

#include "dataplane/ledger.h"
#include "lib/clock.h"

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

/* An established entry without a socket is released as the walk finds
 * it: the walk resumes by bucket, not by key, so deleting the entry in
 * hand is safe, and a close racing us through sock_ops wins (whoever
 * deletes the entry releases its seats), so nothing is done twice. */
struct gone_walk {
	struct sl_dataplane *dp;
	const struct sl_live_sockets *live;
	uint64_t asked_ns, grace_ns;
	int released;
};

static int release_gone(void *ctx, const struct sluice_conn_key *key, const struct sluice_conn *c)
{
	struct gone_walk *w = ctx;

	if (c->state != SLUICE_CONN_ESTABLISHED || c->established_ns + w->grace_ns >= w->asked_ns ||
	    sl_live_sockets_has(w->live, key))
		return 0;
	if (sl_conn_release(w->dp, key, c))
		w->released++;
	return 0;
}

int sl_reconcile_step(struct sl_dataplane *dp, const struct sl_live_sockets *live,
		      uint64_t asked_ns, uint64_t grace_ns, struct sl_reconcile_pass *pass,
		      uint64_t deadline_ns)
{
	struct gone_walk w = { .dp = dp, .live = live, .asked_ns = asked_ns, .grace_ns = grace_ns };
	int rc = sl_conns_walk(&dp->maps, &pass->cur, deadline_ns, release_gone, &w);

	pass->released += w.released;
	if (rc == 1)
		return 0;
	/* A table churned faster than we read it is no error here: what the
	 * walk missed is reconciled next time. */
	return rc && rc != -EAGAIN ? rc : 1;
}

int sl_reconcile_with(struct sl_dataplane *dp, const struct sl_live_sockets *live,
		      uint64_t asked_ns, uint64_t grace_ns)
{
	struct sl_reconcile_pass pass = {0};
	int rc = sl_reconcile_step(dp, live, asked_ns, grace_ns, &pass, UINT64_MAX);

	return rc < 0 ? rc : pass.released;
}
