/* The handshake-expiry sweep (adapter): connections admitted at SYN that
 * never established give their seats back after the half-open time-out
 * (daemon/halfopen_rt.c measures it; handshakeTimeout at most). */
#ifndef SLUICE_EXPIRY_H
#define SLUICE_EXPIRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dataplane/dataplane.h"

/* At most SL_EXPIRE_BATCH per call, so one sweep never holds the loop
 * long (about 10 ms for a full batch); the caller sweeps again at its next
 * tick while a call returns a full batch.  timeout_ns: one per level.
 * lingering (NULL, or one count per level) gets the half-open connections
 * older than linger_ns that are not expired yet: pressure seen before any
 * seat times out.  Returns the number of connections expired, or a
 * negative errno. */
#define SL_EXPIRE_BATCH 4096
/* What the same walk counts of every tracked connection, by FlowSchema
 * index (those at n and beyond are not counted): connections and their
 * seats.  complete: the walk saw the whole table (it stops early at a full
 * batch). */
struct sl_conn_census {
	uint32_t *conns, *seats; /* n entries each, zeroed by the walk */
	size_t n;
	bool complete;
};
int sl_expire_handshakes(struct sl_dataplane *dp, uint64_t now_ns,
			 const uint64_t timeout_ns[SLUICE_MAX_LEVELS], uint64_t linger_ns,
			 uint32_t lingering[SLUICE_MAX_LEVELS], struct sl_conn_census *census);


#endif
