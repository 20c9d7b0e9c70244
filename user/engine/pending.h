/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Deferred connections the daemon knows about (pure): a slab of records
 * addressed by a 64-bit id (slot index + generation, so a stale id never
 * finds a reused slot) and indexed by 4-tuple, so a SYN retransmit of a
 * queued connection is recognised and not enqueued twice.
 */
#ifndef SLUICE_PENDING_H
#define SLUICE_PENDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sluice_abi.h"

enum sl_pending_state {
	SL_PENDING_QUEUED = 1,   /* waiting in its level's QueueSet */
	SL_PENDING_ADMITTED,     /* dispatched: seats reserved, admit ticket written/claimed */
	SL_PENDING_REJECTED,     /* reject ticket written (queue full or wait limit) */
	SL_PENDING_POLICY,       /* waiting in its policy's load scheduler */
};

struct sl_pending {
	uint64_t id;
	struct sluice_conn_key key;
	enum sl_pending_state state;
	uint32_t level;        /* slot */
	uint16_t seats, schema, policy, workload;
	uint64_t flow_hash;
	bool in_queueset;      /* went through its level's QueueSet (which owns its seats) */
	bool policy_admitted;  /* its policy's scheduler admitted it (tokens taken) */
	bool policy_slot;      /* ... taking a slot of its in-flight limit, which goes
				* with the admission (ticket or entry flags) */
	uint64_t arrival_ns;   /* first deferral seen */
	uint64_t policy_ns;    /* when its policy admitted it (policy_admitted) */
	uint64_t last_syn_ns;  /* the latest deferral of its SYN seen (a retransmit, or the first) */
	uint64_t lost_at_arrival; /* the data path's lost events as read before its arrival */
	uint64_t ticket_ns;    /* when the ticket was written */
	uint64_t deadline_ns;  /* an unclaimed ticket is withdrawn after this */
};

struct sl_pending_table;

/* key: the index's SipHash key, secret (the 4-tuples are the clients'
 * choice: a known key lets them choose colliding ones). */
struct sl_pending_table *sl_pending_new(size_t capacity, const uint8_t key[16]);
void sl_pending_free(struct sl_pending_table *t);
/* A new record for key (state QUEUED), or NULL when full or the key is
 * already present (*exists set then). */
struct sl_pending *sl_pending_add(struct sl_pending_table *t, const struct sluice_conn_key *key,
				  bool *exists);
struct sl_pending *sl_pending_by_key(struct sl_pending_table *t, const struct sluice_conn_key *key);
struct sl_pending *sl_pending_by_id(struct sl_pending_table *t, uint64_t id);
void sl_pending_remove(struct sl_pending_table *t, struct sl_pending *p);
size_t sl_pending_count(const struct sl_pending_table *t);
/* Index slots looked at by every lookup, insert and removal so far: what a
 * lookup costs, counted rather than timed. */
uint64_t sl_pending_probes(const struct sl_pending_table *t);
/* Visit every record; the callback may remove the record it is given. */
void sl_pending_each(struct sl_pending_table *t, void (*fn)(struct sl_pending *p, void *ctx), void *ctx);

#endif
