/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The connection table, sl_conns, as the data path keeps it: an admitted
 * connection is recorded with what it holds (track_conn), and whoever
 * deletes its entry returns that, exactly once (release_seats): its close
 * (conn_closed), a client's RST, the static failsafe's expiry.  The
 * daemon's side is user/dataplane/ledger.c.
 */
#ifndef SLUICE_BPF_CONNS_H
#define SLUICE_BPF_CONNS_H

#include <stdbool.h>
#include <linux/errno.h>

#include "events.h"
#include "lifetimes.h"
#include "maps.h"
#include "parse.h"
#include "stats.h"
#include "sluice_conn.h"
#include "sluice_seats.h"

/* The client's SYN sequence number, from its SYN or from its ACK (which
 * carries SYN + 1): what a RST for the half-open connection must carry + 1. */
static __always_inline __be32 syn_seq_of(const struct syn_pkt *p)
{
	return p->ack ? bpf_htonl(bpf_ntohl(p->seq) - 1) : p->seq;
}

/* A connection that held a slot of its policy's in-flight limit gives it
 * back (whoever deleted its sl_conns entry, or a ticket that could not
 * become one). */
static __always_inline void release_policy_slot(__u16 policy, __u16 flags)
{
	struct sluice_policy_gate *g;
	__u32 pol = policy;

	if (!(flags & SLUICE_CONNF_POLICY_SLOT) || pol >= SLUICE_MAX_POLICIES)
		return;
	g = bpf_map_lookup_elem(&sl_pol_gate, &pol);
	if (g)
		__sync_fetch_and_add(&g->slots_held, -1);
}

/* A connection's sl_conns entry is gone (whoever deleted it, exactly
 * once): its seats go back to its level and its slot, if it held one, to
 * its policy.  The level's seats, for the caller's own counting. */
static __always_inline struct sluice_seats *release_seats(__u32 level, __u32 n, __u16 policy, __u16 flags)
{
	struct sluice_seats *seats = bpf_map_lookup_elem(&sl_seats, &level);

	if (seats)
		sluice_release(&seats->seats_in_use, n);
	release_policy_slot(policy, flags);
	return seats;
}

/* What judge took from a gate goes back: the slot (LIMIT), else the
 * workload's tokens (THROTTLE). */
static __always_inline void give_back_gate(struct sluice_policy_gate *g, __u16 conn_flags, __s64 mtok)
{
	if (conn_flags & SLUICE_CONNF_POLICY_SLOT)
		__sync_fetch_and_add(&g->slots_held, -1);
	else
		__sync_fetch_and_add(&g->credit_mtok, mtok);
}

/* Record the admitted connection.  Returns 0, or -EEXIST when another CPU
 * admitted the same 4-tuple first, or another negative errno (table full). */
static __always_inline int track_conn(const struct syn_pkt *p, const struct sluice_class *cls,
				      __u32 seats, __u16 flags, __u64 now)
{
	struct sluice_conn c;

	sluice_conn_admitted(&c, now, cls->level, seats, cls->schema, cls->policy, cls->workload,
			     (__u16)((p->ack ? SLUICE_CONNF_AT_ACK : 0) | flags), syn_seq_of(p));
	return bpf_map_update_elem(&sl_conns, &p->key, &c, BPF_NOEXIST);
}

/* A SYN whose 4-tuple is tracked already: a retransmit of a connection
 * admitted before, counted so. */
static __always_inline bool retransmit_of_tracked(const struct syn_pkt *p, struct sluice_level_stats *ls)
{
	struct sluice_conn *c = bpf_map_lookup_elem(&sl_conns, &p->key);

	if (!c)
		return false;
	/* The wire carried this SYN once: generic XDP seeing the daemon's
	 * re-injection of it is no retransmit (its mark goes with it). */
	if (c->flags & SLUICE_CONNF_REINJECTED)
		c->flags &= ~SLUICE_CONNF_REINJECTED;
	else
		ls->retransmits++;
	return true;
}

/*
 * Whether the daemon needs to hear of this close, and how soon.  At once
 * (urgent) when it admitted the connection itself (and keeps a record of
 * it), or connections wait for its level's seats or its policy's (the close
 * lets the next one in); at its own pace (a sample) when only a policy
 * takes the lifetime.  Otherwise the maps count it and nobody wakes up: on
 * a normal day, nobody waits.
 */
enum close_need { CLOSE_QUIET, CLOSE_SAMPLE, CLOSE_URGENT };

static __always_inline enum close_need close_wanted(const struct sluice_conn *c,
						    const struct sluice_seats *seats)
{
	struct sluice_policy_gate *g;
	__u32 pol = c->policy;

	if ((c->flags & SLUICE_CONNF_DAEMON) || (seats && *(volatile const __u64 *)&seats->waiting))
		return CLOSE_URGENT;
	if (pol >= SLUICE_MAX_POLICIES)
		return CLOSE_QUIET;
	/* Flows wait in its policy's scheduler: its slot or tokens let one in. */
	g = bpf_map_lookup_elem(&sl_pol_gate, &pol);
	return g && *(volatile const __u32 *)&g->waiting ? CLOSE_URGENT : CLOSE_SAMPLE;
}

/* The connection of key k ended (end: enum sluice_conn_end, as its
 * caller saw it; srtt_us: its smoothed RTT then, 0 before it established). */
static __always_inline void conn_closed(struct sluice_conn_key *k, __u8 end, __u32 srtt_us)
{
	struct sluice_stats *gs = global_stats();
	struct sluice_level_stats *ls;
	struct sluice_seats *seats;
	struct sluice_conn *c, copy;
	struct sluice_event *ev;
	bool served = end == SLUICE_END_CLOSED || end == SLUICE_END_RESET;
	enum close_need need;
	__u64 now, lifetime;

	c = bpf_map_lookup_elem(&sl_conns, k);
	if (!c)
		return;
	copy = *c;
	/* Whoever deletes the entry releases its seats: exactly once, even if
	 * the daemon's handshake-expiry sweep races with us. */
	if (bpf_map_delete_elem(&sl_conns, k))
		return;
	now = bpf_ktime_get_ns();
	lifetime = now - copy.admitted_ns;
	seats = release_seats(copy.level, copy.seats, copy.policy, copy.flags);
	ls = bpf_map_lookup_elem(&sl_lvl_stats, &copy.level);
	if (ls) {
		ls->closed++;
		if (served) {
			ls->served++;
			ls->served_log2 += log2_fixed(lifetime);
		} else {
			ls->closed_unserved++;
		}
	}
	if (served)
		count_lifetime(copy.schema, lifetime);
	STAT_INC(gs, released);

	need = close_wanted(&copy, seats);
	if (need == CLOSE_QUIET) {
		STAT_INC(gs, closes_quiet);
		return;
	}
	/* Not rate limited: the ring buffer's size is the bound. */
	ev = new_event(gs, SLUICE_EV_CLOSE, k, now);
	if (!ev)
		return;
	ev->level = copy.level;
	ev->duration_ns = lifetime;
	ev->srtt_us = srtt_us ? srtt_us : copy.srtt_us;
	ev->schema = copy.schema;
	ev->policy = copy.policy;
	ev->workload = copy.workload;
	ev->seats = (__u16)copy.seats;
	ev->end = end;
	submit_event(ev, sizeof(*ev), need == CLOSE_URGENT);
}

#endif /* SLUICE_BPF_CONNS_H */
