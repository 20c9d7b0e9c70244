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

/* Every tracked connection, one walk in batches (a syscall per few hundred
 * entries, not two per entry), bounded by twice the table's size in case
 * BPF churns it meanwhile (-EAGAIN): fn is called with a copy of each
 * entry; a non-zero return stops the walk and is returned.  0 at the end
 * of the table, or a negative errno. */
typedef int (*sl_conn_fn)(void *ctx, const struct sluice_conn_key *key, const struct sluice_conn *c);
int sl_conns_each(struct sl_dataplane *dp, sl_conn_fn fn, void *ctx);

#endif
