// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The handshake sweep, from the tick: the entries of sl_conns admitted
 * longer ago than their level's half-open time-out that never established
 * are expired (the ledger returns their seats), a little of the table a
 * tick, and the same pass counts what each FlowSchema holds (the census).
 */
#include <string.h>

#include "daemon/admission.h"
#include "daemon/daemon.h"
#include "dataplane/expiry.h"
#include "lib/log.h"

#define SWEEP_INTERVAL_NS 1000000000ULL

/* A pass of the handshake sweep reads the connection table for at most
 * this long a tick (about 24,000 entries: a million take some 40 ticks),
 * so no table size makes the heartbeat late. */
#define SWEEP_BUDGET_NS (10ull * 1000000ULL)

void daemon_sweep(struct daemon *d, uint64_t now, bool force)
{
	int n = 0, r;

	if (!d->expiry.running) {
		if (!force && !d->sweep_again && now - d->last_sweep_ns < SWEEP_INTERVAL_NS)
			return;
		d->last_sweep_ns = now;
		d->sweep_again = false;
	} else if (force) {
		d->sweep_again = true; /* what the running pass passed is seen next pass */
	}
	r = sl_expiry_step(&d->expiry, &d->dp, now, now + SWEEP_BUDGET_NS,
			   d->halfopen.level_timeout_ns, d->cfg->server.half_open.min_timeout_ns,
			   d->halfopen.lingering, d->census.conns ? &d->census : NULL, &n);
	if (r < 0)
		pr_warn("handshake sweep: %s", strerror(-r));
	else if (r == 1 && d->census.conns)
		sl_adm_census(d->adm, &d->census);
	if (n > 0)
		pr_info("expired %d admitted connection%s that never established", n, n == 1 ? "" : "s");
}
