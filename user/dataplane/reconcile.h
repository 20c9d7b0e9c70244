/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Reconciling the connection table with the kernel's sockets (adapter):
 * what closed while no sock_ops program saw it gives its seats back. */
#ifndef SLUICE_RECONCILE_H
#define SLUICE_RECONCILE_H

#include <stdint.h>

#include "dataplane/dataplane.h"
#include "dataplane/pinned_maps.h"
#include "dataplane/sockets.h"

/*
 * Reconcile sl_conns with the kernel's sockets: an established entry whose
 * connection has no socket any more closed while no sock_ops program saw
 * it (a restart with --keep-maps, a crash), and gives its seats back.
 * Entries established less than grace_ns before the kernel was asked are
 * left alone (their socket may be younger than the snapshot).  Returns the
 * number of connections released, or a negative errno.
 */
int sl_reconcile_conns(struct sl_dataplane *dp, uint64_t grace_ns);
/* The same against a snapshot the caller took (sl_sock_dump) when the
 * kernel was asked at asked_ns. */
int sl_reconcile_with(struct sl_dataplane *dp, const struct sl_live_sockets *live,
		      uint64_t asked_ns, uint64_t grace_ns);
/* The same walk in slices for the loop (sl_conns_walk): goes on where
 * pass stopped until deadline_ns.  1 at the end of the table (released
 * holds the pass's count; zero pass before the next), 0 when more is to
 * come, or a negative errno. */
struct sl_reconcile_pass {
	struct sl_conns_cursor cur;
	int released;
};
int sl_reconcile_step(struct sl_dataplane *dp, const struct sl_live_sockets *live,
		      uint64_t asked_ns, uint64_t grace_ns, struct sl_reconcile_pass *pass,
		      uint64_t deadline_ns);

#endif
