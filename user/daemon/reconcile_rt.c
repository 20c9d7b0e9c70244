// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Reconciling the connection table with the kernel's sockets, from the
 * daemon (daemon.h): all at once at start, then a little a tick.  What
 * it compares is dataplane/reconcile.h's.
 */
#include <string.h>

#include "daemon/daemon.h"
#include "dataplane/reconcile.h"
#include "lib/clock.h"

/* sl_conns against the kernel's sockets: at start (a restart with
 * --keep-maps left connections that closed unseen) and then this often, for
 * anything sock_ops missed.  An entry established less than the grace ago
 * may have a socket younger than the snapshot. */
#define RECONCILE_INTERVAL_NS (30ull * 1000000000ULL)
#define RECONCILE_GRACE_NS    1000000000ULL
/* The periodic listing, and then the walk of sl_conns against it, are
 * read at most this long per tick: a namespace of very many sockets or a
 * table of very many entries takes several ticks, never a late heartbeat. */
#define RECONCILE_BUDGET_NS   (2ull * 1000000ULL)

/* What a reconcile released, logged and counted. */
static void reconciled(struct daemon *d, const char *when, int n, uint64_t took_ms)
{
	if (n < 0) {
		pr_warn("reconcile connections with the kernel's sockets: %s", strerror(-n));
		return;
	}
	d->reconciled += (unsigned)n;
	if (n > 0)
		pr_info("%s: released %d connection%s that closed while sock_ops did not see it (%llu ms)",
			when, n, n == 1 ? "" : "s", (unsigned long long)took_ms);
	else if (took_ms > 20)
		pr_info("%s: reconciling connections took %llu ms", when, (unsigned long long)took_ms);
}

/* At start, before attaching: all at once. */
void daemon_reconcile_all(struct daemon *d, const char *when)
{
	uint64_t t0 = sl_mono_ns();
	int n = sl_reconcile_conns(&d->dp, RECONCILE_GRACE_NS);

	d->last_reconcile_ns = t0;
	reconciled(d, when, n, (sl_mono_ns() - t0) / 1000000);
}

/* Periodically, from the loop: the kernel's listing read within
 * RECONCILE_BUDGET_NS a tick, then sl_conns walked against it within the
 * same budget a tick (a million entries take some 40 ticks). */
void daemon_reconcile_step(struct daemon *d, uint64_t now)
{
	int r;

	if (d->reconcile_walking)
		goto walk;
	if (!sl_sock_dump_running(&d->sock_dump)) {
		if (now - d->last_reconcile_ns < RECONCILE_INTERVAL_NS)
			return;
		d->last_reconcile_ns = now;
		r = sl_sock_dump_begin(&d->sock_dump);
		if (r) {
			pr_warn("reconcile: cannot list the kernel's sockets: %s", strerror(-r));
			return;
		}
	}
	r = sl_sock_dump_continue(&d->sock_dump, RECONCILE_BUDGET_NS);
	if (r < 0) {
		pr_warn("reconcile: listing the kernel's sockets: %s", strerror(-r));
		return;
	}
	if (r == 0)
		return; /* more at the next tick */
	memset(&d->reconcile_pass, 0, sizeof(d->reconcile_pass));
	d->reconcile_walking = true;
walk:
	r = sl_reconcile_step(&d->dp, &d->sock_dump.s, d->sock_dump.begun_ns, RECONCILE_GRACE_NS,
			      &d->reconcile_pass, sl_mono_ns() + RECONCILE_BUDGET_NS);
	if (r == 0)
		return; /* more of the table at the next tick */
	d->reconcile_walking = false;
	sl_live_sockets_free(&d->sock_dump.s);
	reconciled(d, "periodic", r < 0 ? r : d->reconcile_pass.released,
		   (sl_mono_ns() - d->sock_dump.begun_ns) / 1000000);
}
