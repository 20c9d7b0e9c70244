/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The ledger from userspace (data plane): tickets, connections and seats;
 * the only code that writes sl_tickets, and the only code in userspace
 * that changes or reads sl_seats (through the accessors below).  The
 * daemon's admission decides; this writes the decision the way the data
 * path expects it:
 *  - an admit ticket reserves its seats first (unless the caller reserved
 *    them by the seat rule already), counts them unclaimed, then writes the
 *    ticket; a failed write undoes both, so a ticket never exists without
 *    its seats and seats never without their ticket;
 *  - whoever deletes an admit ticket owns its seats: XDP when the client's
 *    retransmit claims it, sl_ticket_withdraw when it expires unclaimed;
 *  - every ticket is counted in its level's sl_seats.tickets before it is
 *    written, and uncounted by whoever deletes it: the data path skips the
 *    ticket lookup while its level counts none.
 * A policy slot (SLUICE_CONNF_POLICY_SLOT in the ticket's or the entry's
 * flags) goes with the seats: given back by whoever deletes what holds it.
 * When writing an admit ticket or an entry fails, the slot stays the
 * caller's.
 */
#ifndef SLUICE_LEDGER_H
#define SLUICE_LEDGER_H

#include <stdbool.h>
#include <stdint.h>

#include "dataplane/dataplane.h"
#include "sluice_abi.h"

/* Write t (verdict ADMIT) for key.  seats_reserved: the caller already
 * holds t->seats by sl_seats_reserve.  0 or a negative errno (nothing
 * changed: reserved seats are given back too). */
int sl_ticket_admit(struct sl_dataplane *dp, const struct sluice_conn_key *key,
		    const struct sluice_ticket *t, bool seats_reserved);
/* Write a REJECT ticket (no seats): the retransmit gets a RST. */
int sl_ticket_reject(struct sl_dataplane *dp, const struct sluice_conn_key *key,
		     const struct sluice_ticket *t);
/* Take back an unclaimed admit ticket of `seats` on `level`: true when we
 * deleted it (its seats are returned), false when it was claimed first. */
bool sl_ticket_withdraw(struct sl_dataplane *dp, const struct sluice_conn_key *key, unsigned level,
			uint32_t seats);
/* Delete a reject ticket. */
void sl_ticket_drop(struct sl_dataplane *dp, const struct sluice_conn_key *key);
bool sl_ticket_exists(const struct sl_dataplane *dp, const struct sluice_conn_key *key);
/* Record a connection as admitted the way XDP does inline (a held SYN the
 * daemon is about to re-inject): its seats (unless seats_reserved), then
 * its sl_conns entry, so that sock_ops returns the seats on close and the
 * re-injected SYN, if XDP sees it, passes as already admitted.  0, or a
 * negative errno with the seats given back (-EEXIST: the data path
 * admitted a retransmit of it meanwhile, with seats of its own). */
int sl_conn_admit(struct sl_dataplane *dp, const struct sluice_conn_key *key,
		  const struct sluice_conn *c, bool seats_reserved);
/* Undo sl_conn_admit (the SYN could not be re-injected): true when we
 * deleted the entry (seats returned; a policy slot the entry carried
 * stays the caller's, who still admits it another way or gives it back),
 * false when the data path had taken it already (a close, the expiry
 * sweep, a RST). */
bool sl_conn_unadmit(struct sl_dataplane *dp, const struct sluice_conn_key *key);
/* The expiry sweep's verdict on a half-open entry: true when it was still
 * admitted and not established, and we deleted it, returned its seats and
 * policy slot and counted it expired; false when sock_ops established or
 * closed it first (whoever deletes the entry releases it). */
bool sl_conn_expire(struct sl_dataplane *dp, const struct sluice_conn_key *key);
/* Release a tracked connection that is gone (the kernel has no socket for
 * it): true when we deleted the entry `seen` describes and returned its
 * seats; false when it closed meanwhile or the 4-tuple is a newer
 * connection's now. */
bool sl_conn_release(struct sl_dataplane *dp, const struct sluice_conn_key *key,
		     const struct sluice_conn *seen);
/* Whether the data path tracks this connection (admitted, in sl_conns). */
bool sl_conn_tracked(const struct sl_dataplane *dp, const struct sluice_conn_key *key);
/* Tickets a previous daemon left (crash, --keep-maps) belong to nobody:
 * delete them, return the seats of admit tickets.  Returns how many. */
unsigned sl_tickets_clear_stale(struct sl_dataplane *dp);

/* The seat rule on `level` (include/sluice_seats.h). */
bool sl_seats_reserve(struct sl_dataplane *dp, unsigned level, uint32_t seats, uint64_t limit);
void sl_seats_release(struct sl_dataplane *dp, unsigned level, uint32_t seats);
/* A level's whole sl_seats entry, each field read atomically (zeros
 * without a data path): every read of sl_seats outside this file is one
 * of these accessors. */
void sl_seats_read(const struct sl_dataplane *dp, unsigned level, struct sluice_seats *out);
uint64_t sl_seats_in_use(const struct sl_dataplane *dp, unsigned level);
uint64_t sl_seats_unclaimed(const struct sl_dataplane *dp, unsigned level);
/* Deferred connections of the level waiting in the daemon (the data path
 * admits nobody inline while there are any). */
void sl_seats_publish_waiting(struct sl_dataplane *dp, unsigned level, uint64_t waiting);
/* How many SYNs the daemon holds for the level, and their bytes. */
void sl_seats_publish_held(struct sl_dataplane *dp, unsigned level, uint64_t frames,
			   uint64_t bytes);
/* Count a held SYN re-injected (admitted) or answered with its RST. */
void sl_seats_count_reinjected(struct sl_dataplane *dp, unsigned level);
void sl_seats_count_reset(struct sl_dataplane *dp, unsigned level);
/* ...or whose RST could not be sent (it falls back to a reject ticket). */
void sl_seats_count_reset_failed(struct sl_dataplane *dp, unsigned level);

#endif
