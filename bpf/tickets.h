/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The daemon's verdicts on deferred connections (sl_tickets): a ticket
 * is claimed by the connection's retransmit (or its handshake's ACK), by
 * exactly one CPU, and admits it with the seats the daemon reserved or
 * refuses it.
 */
#ifndef SLUICE_BPF_TICKETS_H
#define SLUICE_BPF_TICKETS_H

#include "conns.h"
#include "fail_static.h"
#include "handoff.h"
#include "maps.h"
#include "parse.h"
#include "stats.h"

/* Claim a ticket: delete it (only one CPU succeeds), then act on it.
 * Returns the XDP verdict, or -1 when the ticket was not ours to use. */
static __always_inline int claim_ticket(struct xdp_md *ctx, const struct syn_pkt *p,
					const struct sluice_ticket *ticket,
					const struct sluice_settings *cfg,
					struct sluice_stats *gs, __u64 now)
{
	struct sluice_level_stats *ls;
	struct sluice_ticket t = *ticket;
	struct sluice_seats *seats;
	struct sluice_conn c;

	if (bpf_map_delete_elem(&sl_tickets, &p->key))
		return -1; /* another CPU claimed it, or the daemon swept it */
	seats = bpf_map_lookup_elem(&sl_seats, &t.level);
	if (seats)
		__sync_fetch_and_sub(&seats->tickets, 1);
	ls = bpf_map_lookup_elem(&sl_lvl_stats, &t.level);
	if (t.verdict == SLUICE_TICKET_REJECT) {
		int act;

		STAT_INC(gs, tickets_rejected);
		act = refuse(ctx, p, now);
		if (act >= 0) {
			if (ls)
				ls->rejected++;
			return act;
		}
		STAT_INC(gs, rst_failed);
		return XDP_DROP;
	}
	/* ADMIT: the daemon reserved the seats; the connection now holds them. */
	if (seats)
		__sync_fetch_and_sub(&seats->unclaimed, t.seats);
	/* The daemon's record of it waits for its close. */
	sluice_conn_admitted(&c, now, t.level, t.seats, t.schema, t.policy, t.workload,
			     (__u16)((p->ack ? SLUICE_CONNF_AT_ACK : 0) |
				     (t.flags & SLUICE_CONNF_POLICY_SLOT) | SLUICE_CONNF_DAEMON),
			     syn_seq_of(p));
	if (bpf_map_update_elem(&sl_conns, &p->key, &c, BPF_NOEXIST)) {
		/* Table full (or raced): give the seats back, let it retry. */
		release_seats(t.level, t.seats, t.policy, t.flags);
		STAT_INC(gs, conn_table_full);
		return XDP_DROP;
	}
	STAT_INC(gs, tickets_admitted);
	if (ls)
		ls->admitted++;
	/* A ticket claimed during an outage: nobody else would expire it. */
	if (static_outage_now(cfg, now))
		static_outage_admitted(&p->key, now);
	return XDP_PASS;
}

/* The daemon's ticket for this 4-tuple, looked up only while the level
 * the connection classifies into counts tickets (none on a normal day).
 * A ticket whose 4-tuple a reload moved to another level is not found
 * here; the daemon withdraws it at its deadline, as any unclaimed one. */
static __always_inline struct sluice_ticket *find_ticket(const struct syn_pkt *p,
							 const struct sluice_seats *seats)
{
	if (!*(volatile const __u64 *)&seats->tickets)
		return NULL;
	return bpf_map_lookup_elem(&sl_tickets, &p->key);
}

/* The daemon's verdict on this 4-tuple, if it left one: the XDP verdict,
 * or -1 (no ticket, or not ours to use). */
static __always_inline int ticket_verdict(struct xdp_md *ctx, const struct syn_pkt *p,
					  const struct sluice_seats *seats,
					  const struct sluice_settings *cfg,
					  struct sluice_stats *gs, __u64 now)
{
	struct sluice_ticket *ticket = find_ticket(p, seats);

	return ticket ? claim_ticket(ctx, p, ticket, cfg, gs, now) : -1;
}

#endif /* SLUICE_BPF_TICKETS_H */
