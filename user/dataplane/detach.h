/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Take sluice off a host where no daemon runs (adapter): what a daemon
 * stopped with --keep-attached (or a crashed one) left behind.  XDP comes
 * off every interface of this network namespace that runs the pinned
 * program, the pinned links (sock_ops, the tc hand-off, the drop
 * tracepoints) are detached, and every pin under the
 * pin directory goes, so the maps are freed with their last reference.
 * `sluicectl detach`, the unit's ExecStopPost and the package's prerm.
 */
#ifndef SLUICE_DETACH_H
#define SLUICE_DETACH_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>

#define SL_DETACH_MAX_IFACES 64

struct sl_detach_report {
	bool found;          /* the pin directory existed */
	size_t n_xdp;        /* interfaces XDP came off */
	char xdp[SL_DETACH_MAX_IFACES][IF_NAMESIZE];
	const char *xdp_mode[SL_DETACH_MAX_IFACES];
	bool sockops;        /* the pinned sock_ops link was detached */
	size_t n_links;      /* other links detached (the tc hand-off's tcx links or clsact
			      * filters, the drop tracepoints) */
	size_t n_root_slots; /* root programs' array slots left (xdpChain.rootArray) */
	size_t n_pins;       /* pins removed */
	size_t n_failed;     /* pins or attachments that could not be removed */
};

/* Refuses with -EBUSY while a daemon holds the pin directory (its flock):
 * a running daemon is stopped, not pulled from under.  A missing pin
 * directory is success with found == false, so stopping twice is fine.
 * 0, or a negative errno (then *r says what was done before the error). */
int sl_detach_pinned(const char *pin_dir, struct sl_detach_report *r);

#endif
