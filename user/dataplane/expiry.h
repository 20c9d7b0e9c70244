/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The handshake-expiry sweep (adapter): connections admitted at SYN that
 * never established give their seats back after the half-open time-out
 * (daemon/halfopen_rt.c measures it; handshakeTimeout at most). */
#ifndef SLUICE_EXPIRY_H
#define SLUICE_EXPIRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dataplane/dataplane.h"
#include "dataplane/pinned_maps.h"

/* What a pass of the sweep counts of every tracked connection, by
 * FlowSchema index (those at n and beyond are not counted): connections
 * and their seats.  complete: the pass saw the whole table (a walk cut
 * short by a churning table or an error did not). */
struct sl_conn_census {
	uint32_t *conns, *seats; /* n entries each */
	size_t n;
	bool complete;
};

/* One pass over the table may take several calls: each reads until its
 * deadline and the next goes on where it stopped, so a table of a million
 * entries never holds the loop past a tick (issue 26).  Seats expired go
 * back at once; what the pass counts (lingering, census) is published when
 * it ends. */
struct sl_expiry {
	struct sl_conns_cursor cur;
	bool running;
	/* Accumulated over the running pass. */
	uint32_t lingering[SLUICE_MAX_LEVELS];
	uint32_t *conns, *seats; /* census: n entries each (NULL: none kept) */
	size_t n;
	uint32_t entries;        /* entries the running pass found and kept */
	uint32_t last_entries;   /* ... the last complete pass (metrics: how full the table is) */
	unsigned long long passes; /* completed */
};

/* census_n: the FlowSchemas a census counts (0: none).  0 or -ENOMEM. */
int sl_expiry_init(struct sl_expiry *e, size_t census_n);
void sl_expiry_free(struct sl_expiry *e);

/*
 * Start a pass unless one runs, and go on with it until deadline_ns
 * (sl_mono_ns(); UINT64_MAX: to the end).  An admitted connection older
 * than its level's timeout_ns is expired; one older than linger_ns but
 * not expired yet lingers (pressure seen before any seat times out).  At
 * the end of a pass (return 1), lingering (NULL, or one count per level)
 * and census (NULL, or n at most the init's census_n) get what it counted.
 * *expired (may be NULL) gets the connections this call expired.
 * Returns 1 at the end of a pass, 0 when it goes on at the next call, or
 * a negative errno (the pass is abandoned; the next call starts anew).
 */
int sl_expiry_step(struct sl_expiry *e, struct sl_dataplane *dp, uint64_t now_ns,
		   uint64_t deadline_ns, const uint64_t timeout_ns[SLUICE_MAX_LEVELS],
		   uint64_t linger_ns, uint32_t lingering[SLUICE_MAX_LEVELS],
		   struct sl_conn_census *census, int *expired);

#endif
