// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * sluice data path.
 *
 * sluice_xdp: for each TCP SYN to a protected port, decide admit (pass and
 * reserve seats), defer (drop, handing the SYN's frame to the daemon, which
 * holds it in its queue and re-injects it when its turn comes) or reject
 * (a RST: XDP_TX where that is proven to deliver, else handed to
 * sluice_tc_in, handoff.h).  A level under half-open pressure seats at the ACK
 * instead: its SYNs pass, and the same decision is taken on the handshake's
 * final ACK once it proves its source.  A client's RST (or an ICMP error)
 * for a half-open connection returns its seats.  Everything else passes
 * untouched.
 *
 * sluice_sockops: follows admitted connections (established, close) so
 * seats are returned exactly once.
 *
 * sluice_tc_in, sluice_tc_out (tcx, handoff.h): a handed-off RST out of
 * the device; a held SYN the daemon sends back into its receive path.
 * sluice_tx_bulk, sluice_tx_exc (raw tracepoints, tx_watch.h): count the
 * XDP_TX frames a driver dropped.
 *
 * sluice_reset: never attached; the daemon runs it on a held SYN with
 * BPF_PROG_TEST_RUN to build its RST (dataplane/inject.c).
 */
#include "parse.h"
#include "rst.h"
#include "maps.h"
#include "handoff.h"
#include "tx_watch.h"
#include "sluice_seats.h"
#include "sluice_class.h"

#define NSEC_PER_SEC 1000000000ULL

static __always_inline struct sluice_stats *global_stats(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&sl_stats, &zero);
}

#define STAT_INC(s, field) do { if (s) (s)->field++; } while (0)

/* Per-CPU one-second window cap on ring buffer events, per level, so a
 * SYN flood cannot melt the daemon (a flood of events is the complaint
 * users of such tools file most), and a flood into one level cannot spend
 * the events of another's deferrals (issue 26).  Counters stay exact. */
static __always_inline bool event_allowed(const struct sluice_settings *cfg, __u64 now, __u32 level)
{
	struct sluice_ev_limit *lim;

	if (!cfg->events_per_sec)
		return true;
	lim = bpf_map_lookup_elem(&sl_ev_limit, &level);
	if (!lim)
		return false;
	if (now - lim->window_start_ns >= NSEC_PER_SEC) {
		lim->window_start_ns = now;
		lim->count = 0;
	}
	if (lim->count >= cfg->events_per_sec)
		return false;
	lim->count++;
	return true;
}

/* A zeroed event with its time, 4-tuple and type, or NULL (counted lost)
 * when the ring buffer is full. */
static __always_inline struct sluice_event *new_event(struct sluice_stats *gs, __u32 type,
						      const struct sluice_conn_key *key, __u64 now)
{
	struct sluice_event *ev = bpf_ringbuf_reserve(&sl_events, sizeof(*ev), 0);

	if (!ev) {
		STAT_INC(gs, events_lost);
		return NULL;
	}
	__builtin_memset(ev, 0, sizeof(*ev));
	ev->ts_ns = now;
	ev->key = *key;
	ev->type = type;
	return ev;
}

/* Unread bytes past which a quiet event wakes the daemon anyway. */
#define QUIET_WAKE_BYTES (256 * 1024)

/*
 * Submit an event.  Urgent: someone waits on what it says (a deferral to
 * hold, a seat that frees for waiters): the daemon wakes now.  Quiet: a
 * sample a controller takes at its own pace: no wake-up, the daemon reads
 * it at its next tick (a bounded delay: spec.tick, 100 ms by default), or
 * at once when the ring is filling.  An urgent event after quiet ones
 * forces the wake-up: the kernel wakes the reader on a plain submit only
 * when it had read everything before it.
 */
static __always_inline void submit_event(void *ev, __u64 size, bool urgent)
{
	__u64 unread = bpf_ringbuf_query(&sl_events, BPF_RB_AVAIL_DATA);
	__u64 own = (size + 8 + 7) & ~7ULL; /* the record's header and padding */
	__u64 flags;

	if (urgent)
		flags = unread > own ? BPF_RB_FORCE_WAKEUP : 0;
	else
		flags = unread > QUIET_WAKE_BYTES ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
	bpf_ringbuf_submit(ev, flags);
}

/* The class fields every verdict event carries. */
static __always_inline void fill_class(struct sluice_event *ev, __u8 gate,
				       const struct sluice_class *cls)
{
	ev->level = cls->level;
	ev->schema = cls->schema;
	ev->policy = cls->policy;
	ev->workload = cls->workload;
	ev->seats = cls->seats;
	ev->gate = gate;
}

static __always_inline void emit_event(const struct sluice_settings *cfg,
				       struct sluice_stats *gs, __u32 type, __u8 gate,
				       const struct sluice_class *cls,
				       const struct sluice_conn_key *key, __u64 now)
{
	struct sluice_event *ev;

	if (!event_allowed(cfg, now, cls->level)) {
		STAT_INC(gs, events_lost);
		return;
	}
	ev = new_event(gs, type, key, now);
	if (!ev)
		return;
	fill_class(ev, gate, cls);
	/* An inline verdict, for the record: nobody waits on it. */
	submit_event(ev, sizeof(*ev), false);
}

/* A deferral, with the SYN's frame as received so that the daemon can hold
 * it (struct sluice_defer_event).  Rate-limited like every event: a SYN
 * whose event is not sent waits for its client's retransmit. */
static __always_inline void emit_defer(struct xdp_md *ctx, const struct sluice_settings *cfg,
				       struct sluice_stats *gs, __u8 gate,
				       const struct sluice_class *cls,
				       const struct sluice_conn_key *key, __u64 now)
{
	struct sluice_defer_event *e;
	__u32 len;

	if (!event_allowed(cfg, now, cls->level)) {
		STAT_INC(gs, events_lost);
		return;
	}
	e = bpf_ringbuf_reserve(&sl_events, sizeof(*e), 0);
	if (!e) {
		STAT_INC(gs, events_lost);
		return;
	}
	__builtin_memset(e, 0, offsetof(struct sluice_defer_event, frame));
	e->ev.ts_ns = now;
	e->ev.key = *key;
	e->ev.type = SLUICE_EV_DEFER;
	fill_class(&e->ev, gate, cls);
	e->ifindex = ctx->ingress_ifindex;
	len = (__u32)(ctx->data_end - ctx->data);
	if (cfg->flags & SLUICE_CFG_NO_FRAMES) {
		/* nobody would hold it */
	} else if (len > SLUICE_FRAME_MAX) {
		STAT_INC(gs, frames_too_long);
	} else if (len >= 1 && !bpf_xdp_load_bytes(ctx, 0, e->frame, len)) {
		e->frame_len = (__u16)len;
		STAT_INC(gs, frames_copied);
	}
	submit_event(e, sizeof(*e), true); /* the daemon holds it and queues it now */
}

/* How old the daemon's heartbeat is (U64_MAX: never written). */
static __always_inline __u64 heartbeat_age(__u64 now)
{
	struct sluice_heartbeat *hb;
	__u32 zero = 0;

	hb = bpf_map_lookup_elem(&sl_heartbeat, &zero);
	if (!hb || !hb->mono_ns)
		return ~0ULL;
	return now > hb->mono_ns ? now - hb->mono_ns : 0;
}

/* Older than a limit (0 = no limit). */
static __always_inline bool older_than(__u64 age, __u64 limit)
{
	return limit && age > limit;
}

/* The masks (a set of mask numbers, as in sluice_settings.masks) that test
 * each dimension: mask m tests dimension d when m & d. */
#define MASKS_TESTING_SRC   0xAAAA /* m & SLUICE_DIM_SRC (1) */
#define MASKS_TESTING_DST   0xCCCC /* m & SLUICE_DIM_DST (2) */
#define MASKS_TESTING_SPORT 0xF0F0 /* m & SLUICE_DIM_SPORT (4) */
#define MASKS_TESTING_DPORT 0xFF00 /* m & SLUICE_DIM_DPORT (8) */
_Static_assert(SLUICE_DIM_SRC == 1 && SLUICE_DIM_DST == 2 && SLUICE_DIM_SPORT == 4 &&
	       SLUICE_DIM_DPORT == 8 && SLUICE_MASKS == 16, "the masks above");

/* Classify a connection (its SYN, or its handshake's ACK) with the tables
 * the daemon compiled: up to four O(1) lookups give the class ids, then
 * one hash lookup per mask in use finds the lowest-ranked schema and
 * policy candidates under them (sluice_abi.h).
 * The result is built in *out. */
static __always_inline const struct sluice_class *
classify(const struct sluice_settings *cfg, const struct syn_pkt *p, struct sluice_class *out)
{
	const struct sluice_class *c;
	struct sluice_lpm_key lk;
	struct sluice_class_key ck, k; /* ck: the SYN's class ids; k: the key under one mask */
	struct sluice_lpm_val *lv;
	struct sluice_class_best best;
	__u32 base, idx, *pc;
	__u8 gen = cfg->generation & 1;
	__u16 used = cfg->masks;

	/* Field by field: an initialiser would become a .rodata template,
	 * an extra map that bpftool and the pin layout do not want. */
	__builtin_memset(&lk, 0, sizeof(lk));
	__builtin_memset(&ck, 0, sizeof(ck));
	__builtin_memset(&k, 0, sizeof(k));
	lk.prefixlen = SLUICE_LPM_FULL;
	lk.gen = gen;
	/* A dimension no entry tests needs no lookup (its class id is only
	 * read under a mask that tests it): the tries are the costly part of
	 * a SYN, and most configurations never name a local address. */
	if (used & MASKS_TESTING_SRC) {
		__builtin_memcpy(lk.addr, p->key.saddr, 16);
		lv = bpf_map_lookup_elem(&sl_src_cls, &lk);
		ck.src = lv ? (__u16)lv->cls : 0;
	}
	if (used & MASKS_TESTING_DST) {
		__builtin_memcpy(lk.addr, p->key.daddr, 16);
		lv = bpf_map_lookup_elem(&sl_dst_cls, &lk);
		ck.dst = lv ? (__u16)lv->cls : 0;
	}

	base = (__u32)gen * 2 * 65536;
	if (used & MASKS_TESTING_SPORT) {
		idx = base + SLUICE_PORT_SRC * 65536 + bpf_ntohs(p->key.sport);
		pc = bpf_map_lookup_elem(&sl_port_cls, &idx);
		ck.sport = pc ? (__u16)*pc : 0;
	}
	if (used & MASKS_TESTING_DPORT) {
		idx = base + SLUICE_PORT_DST * 65536 + bpf_ntohs(p->key.dport);
		pc = bpf_map_lookup_elem(&sl_port_cls, &idx);
		ck.dport = pc ? (__u16)*pc : 0;
	}

	/* Tuple space search: one lookup per mask in use; each entry may
	 * better the schema half, the policy half or both. */
	sluice_class_begin(out, &cfg->default_class, &best);
	for (__u32 m = 1; m < SLUICE_MASKS; m++) {
		if (!(used & (1u << m)))
			continue;
		k.src = (m & SLUICE_DIM_SRC) ? ck.src : 0;
		k.dst = (m & SLUICE_DIM_DST) ? ck.dst : 0;
		k.sport = (m & SLUICE_DIM_SPORT) ? ck.sport : 0;
		k.dport = (m & SLUICE_DIM_DPORT) ? ck.dport : 0;
		k.gen = gen;
		k.mask = (__u8)m;
		c = bpf_map_lookup_elem(&sl_classes, &k);
		if (c)
			sluice_class_consider(out, c, &best);
	}
	return out;
}

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

#include "fail_static.h"

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
	struct sluice_conn c = {
		.admitted_ns = now,
		.level = cls->level,
		.seats = seats,
		.state = SLUICE_CONN_ADMITTED,
		.schema = cls->schema,
		.policy = cls->policy,
		.workload = cls->workload,
		.flags = (__u16)((p->ack ? SLUICE_CONNF_AT_ACK : 0) | flags),
		.syn_seq = syn_seq_of(p),
	};

	return bpf_map_update_elem(&sl_conns, &p->key, &c, BPF_NOEXIST);
}

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
	struct sluice_conn c = {};

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
	c.admitted_ns = now;
	c.level = t.level;
	c.seats = t.seats;
	c.state = SLUICE_CONN_ADMITTED;
	c.schema = t.schema;
	c.policy = t.policy;
	c.workload = t.workload;
	/* The daemon's record of it waits for its close. */
	c.flags = (__u16)((p->ack ? SLUICE_CONNF_AT_ACK : 0) | (t.flags & SLUICE_CONNF_POLICY_SLOT) |
			  SLUICE_CONNF_DAEMON);
	c.syn_seq = syn_seq_of(p);
	if (bpf_map_update_elem(&sl_conns, &p->key, &c, BPF_NOEXIST)) {
		/* Table full (or raced): give the seats back, let it retry. */
		if (seats)
			__sync_fetch_and_sub(&seats->seats_in_use, t.seats);
		release_policy_slot(t.policy, t.flags);
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

/* A SYN whose 4-tuple is tracked already: a retransmit of a connection
 * admitted before, counted so. */
static __always_inline bool retransmit_of_tracked(const struct syn_pkt *p, struct sluice_level_stats *ls)
{
	if (!bpf_map_lookup_elem(&sl_conns, &p->key))
		return false;
	ls->retransmits++;
	return true;
}

/* The SYN's place in the policy gate's per-workload tables. */
static __always_inline __u32 policy_slot(const struct sluice_class *cls)
{
	__u32 wl = cls->workload < SLUICE_MAX_WORKLOADS ? cls->workload : SLUICE_WL_DEFAULT;

	return (__u32)cls->policy * SLUICE_WL_SLOTS + wl;
}

/*
 * The level's judgement of a connection that has no seat yet: its SYN, or
 * (the level seating at the ACK) its handshake's proving ACK.  Policy gate,
 * then the level's seats; admit (XDP_PASS with the seats taken), defer
 * (XDP_DROP, the frame to the daemon) or reject (its RST: refuse()).
 */
static __always_inline int judge(struct xdp_md *ctx, struct syn_pkt *p,
				 struct sluice_settings *cfg, const struct sluice_class *cls,
				 struct sluice_level *lvl, struct sluice_seats *seats,
				 struct sluice_level_stats *ls, struct sluice_fs_stats *fs,
				 struct sluice_stats *gs, __u64 now)
{
	struct sluice_policy_gate *gate = NULL; /* a slot or tokens taken from this gate */
	struct sluice_wl_stats *ws = NULL;
	__u32 need;
	__s64 mtok = 0; /* the workload's tokens */
	__u16 conn_flags = 0;
	__u64 age;
	bool force = false, stale, undispatched, shadow, limit_mode = false, static_outage;
	int err;

	need = cls->seats ? cls->seats : 1;
	age = heartbeat_age(now);
	stale = older_than(age, cfg->heartbeat_timeout_ns);
	/* Nobody dispatches what would be deferred: never defer then. */
	undispatched = stale || older_than(age, cfg->dispatch_timeout_ns);
	shadow = cfg->flags & SLUICE_CFG_SHADOW;
	/* The kernel expires the half-open connections it admits now. */
	static_outage = stale && cfg->fail_mode == SLUICE_FAIL_STATIC;

	/* Gate 1: the policy's load scheduler, when a policy selects the SYN.
	 * Without a dispatcher it is open: the daemon that would queue is gone. */
	if (cls->policy < SLUICE_MAX_POLICIES) {
		__u32 pol = cls->policy, slot = policy_slot(cls);
		struct sluice_policy_gate *g = bpf_map_lookup_elem(&sl_pol_gate, &pol);
		__u32 *tokens = bpf_map_lookup_elem(&sl_wl_tokens, &slot);

		ws = bpf_map_lookup_elem(&sl_wl_stats, &slot);
		if (ws)
			ws->syns++;
		mtok = tokens ? *tokens : 0;
		/* THROTTLE takes the workload's tokens from the credit, LIMIT
		 * holds one slot; either defers when flows wait or it runs short. */
		limit_mode = g && g->mode == SLUICE_POLICY_LIMIT;
		if (g && (limit_mode || (g->mode == SLUICE_POLICY_THROTTLE && mtok)) && !undispatched) {
			if (g->waiting || !(limit_mode ? sluice_hold_slot(&g->slots_held, g->slot_limit) :
					    sluice_take(&g->credit_mtok, mtok))) {
				if (ws)
					ws->deferred++;
				STAT_INC(gs, policy_deferred);
				if (!shadow) {
					emit_defer(ctx, cfg, gs, SLUICE_GATE_POLICY, cls, &p->key,
						   now);
					return XDP_DROP;
				}
				/* Shadow: counted, not enforced; the level decides. */
				STAT_INC(gs, shadow_passed);
				ls->shadow_passed++;
			} else {
				gate = g;
				if (limit_mode)
					conn_flags = SLUICE_CONNF_POLICY_SLOT;
			}
		}
	}

	/* Gate 2: the priority level.  Exempt levels are never held back, not
	 * even by a fail-closed failsafe: that is where an operator puts SSH
	 * and health checks. */
	if (lvl->type == SLUICE_LEVEL_EXEMPT) {
		force = true;
	} else if (static_outage) {
		/* The limit holds without a daemon: judged as undispatched
		 * below, and the kernel expires what never establishes. */
		ls->failsafe++;
		STAT_INC(gs, failsafe_static);
		arm_static_sweep();
	} else if (stale) {
		/* A retransmit is none of the failsafe's business. */
		if (!ws && retransmit_of_tracked(p, ls))
			return XDP_PASS;
		ls->failsafe++;
		if (cfg->fail_mode == SLUICE_FAIL_CLOSED) {
			STAT_INC(gs, failsafe_closed);
			ls->deferred++;
			if (!shadow)
				return XDP_DROP;
			STAT_INC(gs, shadow_passed);
			ls->shadow_passed++;
		} else {
			STAT_INC(gs, failsafe_open);
		}
		force = true; /* admit, but keep counting seats */
	}

	/* Connections waiting in the daemon's queues go first, unless no
	 * daemon is there to dispatch them; then the seats of tickets nobody
	 * claimed are lent out too (at most the limit again). */
	if (force) {
		__sync_fetch_and_add(&seats->seats_in_use, need);
	} else if (undispatched) {
		__u64 lent = seats->unclaimed < lvl->seat_limit ? seats->unclaimed : lvl->seat_limit;

		if (!sluice_reserve(&seats->seats_in_use, need, lvl->seat_limit + lent))
			goto over_limit;
	} else if (seats->waiting || !sluice_reserve(&seats->seats_in_use, need, lvl->seat_limit)) {
		goto over_limit;
	}

	err = track_conn(p, cls, need, conn_flags, now);
	if (!err) {
		if (static_outage)
			static_outage_admitted(&p->key, now); /* arms it for an exempt level too */
		ls->admitted++;
		if (fs)
			fs->admitted_inline++;
		if (ws) {
			/* Both gates passed: the daemon's incoming rate and
			 * accepted tokens (pass-through included). */
			ws->inline_admitted++;
			ws->inline_mtok += mtok;
		}
		return XDP_PASS;
	}
	__sync_fetch_and_sub(&seats->seats_in_use, need);
	if (err == -17 /* EEXIST: another CPU admitted this 4-tuple */) {
		ls->retransmits++;
		goto refund;
	}
	STAT_INC(gs, conn_table_full);
	if (force) {
		/* Fail open even when we cannot track; untracked, it holds no
		 * slot of an in-flight limit. */
		if (gate && (conn_flags & SLUICE_CONNF_POLICY_SLOT))
			give_back_gate(gate, conn_flags, mtok);
		return XDP_PASS;
	}

over_limit:
	/* The level refused: the policy's tokens go back (Aperture workload-scheduler/scheduler.go); the
	 * daemon runs the deferred SYN through both gates again. */
	if (gate) {
		give_back_gate(gate, conn_flags, mtok);
		STAT_INC(gs, policy_refunds);
	}
	/* Unless it is a retransmit of a connection admitted before (not
	 * asked yet without a policy: handle_syn). */
	if (!ws && retransmit_of_tracked(p, ls))
		return XDP_PASS;
	if (shadow) {
		/* The verdict is counted; the connection is admitted and
		 * tracked anyway, so its seats show the real concurrency. */
		if (lvl->limit_response == SLUICE_RESP_REJECT)
			ls->rejected++;
		else
			ls->deferred++;
		ls->shadow_passed++;
		STAT_INC(gs, shadow_passed);
		__sync_fetch_and_add(&seats->seats_in_use, need);
		if (track_conn(p, cls, need, 0, now))
			__sync_fetch_and_sub(&seats->seats_in_use, need);
		else if (static_outage)
			static_outage_admitted(&p->key, now);
		return XDP_PASS;
	}
	if (lvl->limit_response == SLUICE_RESP_REJECT) {
		int act = refuse(ctx, p, now);

		if (act >= 0) {
			ls->rejected++;
			if (fs)
				fs->rejected_inline++;
			emit_event(cfg, gs, SLUICE_EV_REJECT, SLUICE_GATE_LEVEL, cls, &p->key, now);
			return act;
		}
		STAT_INC(gs, rst_failed);
	}
	ls->deferred++;
	if (undispatched) {
		/* No queue without a dispatcher: the client's retransmit
		 * tries again, within the limit as above. */
		STAT_INC(gs, undispatched);
		return XDP_DROP;
	}
	emit_defer(ctx, cfg, gs, SLUICE_GATE_LEVEL, cls, &p->key, now);
	return XDP_DROP;

refund:
	if (gate) {
		give_back_gate(gate, conn_flags, mtok);
		STAT_INC(gs, policy_refunds);
	}
	return XDP_PASS;
}


/* The FlowSchema's own counters, or NULL past SLUICE_FS_STATS. */
static __always_inline struct sluice_fs_stats *schema_stats(__u32 schema)
{
	return bpf_map_lookup_elem(&sl_fs_stats, &schema);
}

/* The level of a classified connection, with its seats and counters, or
 * NULL when its class names no configured level (unprotected). */
struct level_ctx {
	struct sluice_level *lvl;
	struct sluice_seats *seats;
	struct sluice_level_stats *ls;
	struct sluice_fs_stats *fs; /* NULL past SLUICE_FS_STATS */
};

static __always_inline bool level_of(const struct sluice_class *cls, struct level_ctx *l)
{
	__u32 level = cls->level;

	l->lvl = bpf_map_lookup_elem(&sl_levels, &level);
	l->seats = bpf_map_lookup_elem(&sl_seats, &level);
	l->ls = bpf_map_lookup_elem(&sl_lvl_stats, &level);
	l->fs = schema_stats(cls->schema);
	return l->lvl && l->seats && l->ls && l->lvl->type != SLUICE_LEVEL_UNUSED;
}

/*
 * A loopback source on a device: XDP never runs on lo, so the frame is
 * spoofed, and the kernel drops it as a martian.  It is passed untouched
 * and never classified: the built-in exempt FlowSchema (loopback sources)
 * would seat and track it, and the kernel's drop would leave its entry in
 * sl_conns until the half-open time-out (issue 26: a flood of them filled
 * the table, and then no Limited level admitted anyone).
 */
static __always_inline bool loopback_source(const struct sluice_conn_key *k)
{
	if (k->family == 4)
		return k->saddr[12] == 127; /* ::ffff:127.0.0.0/104 */
	for (int i = 0; i < 15; i++)
		if (k->saddr[i])
			return false;
	return k->saddr[15] == 1; /* ::1 */
}

static __always_inline int handle_syn(struct xdp_md *ctx, struct syn_pkt *p)
{
	struct sluice_stats *gs = global_stats();
	struct sluice_class cls_buf;
	const struct sluice_class *cls;
	struct sluice_settings *cfg;
	struct sluice_ticket *ticket;
	struct level_ctx l;
	__u32 zero = 0;
	__u64 now;
	int verdict;

	STAT_INC(gs, syns);
	cfg = bpf_map_lookup_elem(&sl_config, &zero);
	if (!cfg || !(cfg->flags & SLUICE_CFG_ACTIVE))
		return XDP_PASS; /* not configured yet: sluice is transparent */
	if (loopback_source(&p->key)) {
		STAT_INC(gs, martians);
		return XDP_PASS;
	}

	cls = classify(cfg, p, &cls_buf);
	if (!level_of(cls, &l)) {
		STAT_INC(gs, unprotected);
		return XDP_PASS;
	}
	l.ls->syns++;
	if (l.fs)
		l.fs->syns++;

	/* A retransmit of a SYN we already admitted passes: its seats are
	 * held.  Asked here only where a gate could act on it first (a
	 * ticket, a policy, a level seating at the ACK); a SYN that meets
	 * none is asked when its level refuses it, and the admission's own
	 * insert finds it otherwise (judge): a new connection's SYN, the
	 * common case, looks its 4-tuple up once, not twice. */
	now = bpf_ktime_get_ns();
	ticket = find_ticket(p, l.seats);
	if ((ticket || cls->policy < SLUICE_MAX_POLICIES || (l.lvl->flags & SLUICE_LVL_SEAT_AT_ACK)) &&
	    retransmit_of_tracked(p, l.ls))
		return XDP_PASS;

	/* The daemon decided about this deferred connection. */
	if (ticket) {
		verdict = claim_ticket(ctx, p, ticket, cfg, gs, now);
		if (verdict >= 0)
			return verdict;
	}
	/* Seats at the ACK: the kernel answers the SYN, nothing is held for
	 * a source that has not shown it exists.  Exempt levels hold no
	 * one back, so they keep seating (counting) at the SYN. */
	if ((l.lvl->flags & SLUICE_LVL_SEAT_AT_ACK) && l.lvl->type == SLUICE_LEVEL_LIMITED) {
		l.ls->unseated++;
		return XDP_PASS;
	}
	return judge(ctx, p, cfg, cls, l.lvl, l.seats, l.ls, l.fs, gs, now);
}

/* A tcp_request_sock field or two, relocated against the running kernel's
 * BTF (CO-RE): the ISN the kernel sent in its SYN-ACK. */
struct tcp_request_sock {
	__u32 snt_isn;
} __attribute__((preserve_access_index));

/* Whether an unseated ACK finishes a handshake the kernel will complete:
 * it acknowledges the ISN of the pending request socket of its 4-tuple, or
 * it carries a SYN cookie the listener issued (the kernel's own check,
 * recent overflow included).  A blind or spoofed ACK proves nothing. */
static __always_inline bool handshake_proved(struct xdp_md *ctx, const struct syn_pkt *p)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct bpf_sock_tuple t = {};
	struct bpf_sock *sk;
	struct tcphdr *th;
	__u32 l3 = p->l3_off, l4 = p->l4_off, tlen;
	bool v4 = p->key.family == 4, ok = false;

	if (l3 > MAX_HDR_OFF || l4 > MAX_HDR_OFF)
		return false;
	th = data + l4;
	if ((void *)(th + 1) > data_end)
		return false;
	if (v4) {
		__builtin_memcpy(&t.ipv4.saddr, p->key.saddr + 12, 4);
		__builtin_memcpy(&t.ipv4.daddr, p->key.daddr + 12, 4);
		t.ipv4.sport = p->key.sport;
		t.ipv4.dport = p->key.dport;
		tlen = sizeof(t.ipv4);
	} else {
		__builtin_memcpy(t.ipv6.saddr, p->key.saddr, 16);
		__builtin_memcpy(t.ipv6.daddr, p->key.daddr, 16);
		t.ipv6.sport = p->key.sport;
		t.ipv6.dport = p->key.dport;
		tlen = sizeof(t.ipv6);
	}
	sk = bpf_skc_lookup_tcp(ctx, &t, tlen, BPF_F_CURRENT_NETNS, 0);
	if (!sk)
		return false;
	if (sk->state == BPF_TCP_NEW_SYN_RECV) {
		struct tcp_request_sock *req = bpf_skc_to_tcp_request_sock(sk);

		ok = req && bpf_ntohl(p->ack_seq) == req->snt_isn + 1;
	} else if (sk->state == BPF_TCP_LISTEN) {
		if (v4) {
			struct iphdr *iph = data + l3;

			if ((void *)(iph + 1) <= data_end)
				ok = !bpf_tcp_check_syncookie(sk, iph, sizeof(*iph), th, sizeof(*th));
		} else {
			struct ipv6hdr *ip6h = data + l3;

			if ((void *)(ip6h + 1) <= data_end)
				ok = !bpf_tcp_check_syncookie(sk, ip6h, sizeof(*ip6h), th, sizeof(*th));
		}
	}
	bpf_sk_release(sk);
	return ok;
}

/*
 * An ACK, while some level seats at the ACK.  One that has a seat, or whose
 * level is not watched, passes untouched; an unseated one that proves its
 * source meets its level's gates (or claims its ticket) as a SYN would.
 */
static __always_inline int handle_ack(struct xdp_md *ctx, struct syn_pkt *p)
{
	struct sluice_class cls_buf;
	const struct sluice_class *cls;
	struct sluice_settings *cfg;
	struct sluice_stats *gs;
	struct level_ctx l;
	__u32 zero = 0;
	__u64 now;
	int verdict;

	cfg = bpf_map_lookup_elem(&sl_config, &zero);
	if (!cfg || !cfg->ack_watch_levels || !(cfg->flags & SLUICE_CFG_ACTIVE))
		return XDP_PASS;
	if (bpf_map_lookup_elem(&sl_conns, &p->key) || loopback_source(&p->key))
		return XDP_PASS; /* seated: an established connection's segment (or a martian) */
	cls = classify(cfg, p, &cls_buf);
	if (!level_of(cls, &l) || !(l.lvl->flags & SLUICE_LVL_ACK_WATCH) ||
	    l.lvl->type != SLUICE_LEVEL_LIMITED)
		return XDP_PASS;
	gs = global_stats();
	if (!handshake_proved(ctx, p)) {
		STAT_INC(gs, acks_unproved);
		return XDP_PASS; /* the kernel drops it, or it is not a handshake's */
	}
	l.ls->acks_proved++;
	now = bpf_ktime_get_ns();
	verdict = ticket_verdict(ctx, p, l.seats, cfg, gs, now);
	if (verdict >= 0)
		return verdict;
	return judge(ctx, p, cfg, cls, l.lvl, l.seats, l.ls, l.fs, gs, now);
}

/* ---- sock_ops ---------------------------------------------------------- */

/* Build the XDP-compatible key from a socket.  Context fields are read
 * through volatile: clang 14 fuses adjacent u32 loads into one u64 load,
 * which the verifier rejects.  Byte orders (include/linux/bpf.h, struct
 * bpf_sock_ops):
 * remote_port is network order in the high 16 bits, local_port host order. */
static __always_inline void sockops_key(struct bpf_sock_ops *skops,
					struct sluice_conn_key *k)
{
	volatile struct bpf_sock_ops *v = skops;
	__u32 family = v->family;
	__u32 rport = v->remote_port;
	__u32 lport = v->local_port;

	__builtin_memset(k, 0, sizeof(*k));
	if (family == 2 /* AF_INET */) {
		__be32 r = v->remote_ip4, l = v->local_ip4;

		v4_mapped(k->saddr, r);
		v4_mapped(k->daddr, l);
		k->family = 4;
	} else {
		__u32 r[4], l[4];

		r[0] = v->remote_ip6[0]; r[1] = v->remote_ip6[1];
		r[2] = v->remote_ip6[2]; r[3] = v->remote_ip6[3];
		l[0] = v->local_ip6[0];  l[1] = v->local_ip6[1];
		l[2] = v->local_ip6[2];  l[3] = v->local_ip6[3];
		__builtin_memcpy(k->saddr, r, 16);
		__builtin_memcpy(k->daddr, l, 16);
		/* A dual-stack listener sees IPv4 clients as ::ffff:a.b.c.d;
		 * XDP saw an IPv4 packet, so key it as family 4. */
		k->family = (r[0] == 0 && r[1] == 0 && r[2] == bpf_htonl(0xffff)) ? 4 : 6;
	}
	k->sport = bpf_htons((__u16)bpf_ntohl(rport));
	k->dport = bpf_htons((__u16)lport);
}

/* floor(log2(x)) for x >= 1, 0 for 0: six compares, no loop. */
static __always_inline __u32 log2_u64(__u64 x)
{
	__u32 r = 0;

	if (x >= 1ULL << 32) { x >>= 32; r += 32; }
	if (x >= 1ULL << 16) { x >>= 16; r += 16; }
	if (x >= 1ULL << 8)  { x >>= 8;  r += 8; }
	if (x >= 1ULL << 4)  { x >>= 4;  r += 4; }
	if (x >= 1ULL << 2)  { x >>= 2;  r += 2; }
	if (x >= 1ULL << 1)  { r += 1; }
	return r;
}

/* log2(x) in 1/SLUICE_LOG2_ONE: the exponent, then the four bits after
 * the leading one as the fraction (piecewise linear between powers of 2). */
static __always_inline __u64 log2_fixed(__u64 x)
{
	__u32 e = log2_u64(x);
	__u64 frac = e >= 4 ? (x >> (e - 4)) & 15 : (x << (4 - e)) & 15;

	return (__u64)e * SLUICE_LOG2_ONE + frac;
}

/* A served connection's lifetime into its FlowSchema's histogram. */
static __always_inline void count_lifetime(__u32 schema, __u64 ns)
{
	struct sluice_fs_duration *d;
	__u64 ms = ns / 1000000ULL, rest = ns % 1000000ULL;
	__u32 b = SLUICE_DUR_BOUNDS;

	if (schema >= SLUICE_FS_STATS)
		return;
	d = bpf_map_lookup_elem(&sl_fs_dur, &schema);
	if (!d)
		return;
	/* The first bound at or above it (Prometheus' le), unrolled: the
	 * bounds are constants. */
#define DUR_BUCKET(i, bound_ms) \
	if (b == SLUICE_DUR_BOUNDS && (ms < (bound_ms) || (ms == (bound_ms) && !rest))) b = (i);
	DUR_BUCKET(0, 0) DUR_BUCKET(1, 5) DUR_BUCKET(2, 20) DUR_BUCKET(3, 50) DUR_BUCKET(4, 100)
	DUR_BUCKET(5, 200) DUR_BUCKET(6, 500) DUR_BUCKET(7, 1000) DUR_BUCKET(8, 2000)
	DUR_BUCKET(9, 5000) DUR_BUCKET(10, 10000) DUR_BUCKET(11, 15000) DUR_BUCKET(12, 30000)
	DUR_BUCKET(13, 60000) DUR_BUCKET(14, 300000) DUR_BUCKET(15, 900000) DUR_BUCKET(16, 3600000)
#undef DUR_BUCKET
	/* This CPU's copy: a plain add (a program runs with migration off;
	 * a close nested in another on the same CPU could lose one count,
	 * which a histogram bears). */
	if (b < SLUICE_DUR_BUCKETS)
		d->bucket[b]++;
	d->sum_ns += ns;
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
	seats = bpf_map_lookup_elem(&sl_seats, &copy.level);
	if (seats)
		__sync_fetch_and_sub(&seats->seats_in_use, copy.seats);
	release_policy_slot(copy.policy, copy.flags);
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

/* One handshake's time, SYN seat to established, into sl_hs_hist: the
 * daemon's half-open time-out is a few times what handshakes take. */
static __always_inline void count_handshake(__u64 ns)
{
	__u32 b = log2_u64(ns / 1000);
	__u64 *n;

	if (b >= SLUICE_HS_BUCKETS)
		b = SLUICE_HS_BUCKETS - 1;
	n = bpf_map_lookup_elem(&sl_hs_hist, &b);
	if (n)
		(*n)++;
}

/*
 * sock_ops runs for every TCP socket in the cgroup, the clients' own
 * included, and for callbacks sluice has no use for (RTO and window
 * initialisation, ECN): those return at the switch, before any map access.
 * A connection sluice admitted is looked up once, when it is established,
 * and then subscribes to its state changes only; its close is the second
 * and last lookup.  No RTT callback: the smoothed RTT at the close is the
 * sample the controllers take (one per connection), and reading it there
 * costs nothing on every ACK in between.
 */
SEC("sockops")
int sluice_sockops(struct bpf_sock_ops *skops)
{
	volatile struct bpf_sock_ops *v = skops;
	struct sluice_conn_key k;
	struct sluice_conn *c;
	struct sluice_stats *gs;
	__u32 op = v->op;

	switch (op) {
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		sockops_key(skops, &k);
		c = bpf_map_lookup_elem(&sl_conns, &k);
		if (!c)
			break; /* not a connection sluice admitted: no callbacks more */
		c->state = SLUICE_CONN_ESTABLISHED;
		c->established_ns = bpf_ktime_get_ns();
		c->srtt_us = v->srtt_us >> 3;
		if (!(c->flags & SLUICE_CONNF_AT_ACK))
			count_handshake(c->established_ns - c->admitted_ns);
		bpf_sock_ops_cb_flags_set(skops, BPF_SOCK_OPS_STATE_CB_FLAG);
		gs = global_stats();
		STAT_INC(gs, established);
		break;
	case BPF_SOCK_OPS_STATE_CB:
		if (v->args[1] != BPF_TCP_CLOSE)
			break;
		sockops_key(skops, &k);
		/* args[0], the state it leaves: an orderly close passes through
		 * FIN_WAIT or LAST_ACK, an abort (a RST either way) leaves
		 * ESTABLISHED or CLOSE_WAIT at once. */
		conn_closed(&k, v->args[0] == BPF_TCP_ESTABLISHED || v->args[0] == BPF_TCP_CLOSE_WAIT
				    ? SLUICE_END_RESET : SLUICE_END_CLOSED, v->srtt_us >> 3);
		break;
	default:
		break;
	}
	return 1;
}

/* A client's RST for a connection still in its handshake (the server's
 * SYN-ACK reached a client that had given up, or the client changed its
 * mind): the seats come back now, not at the handshake time-out.  Only an
 * RST that carries the SYN's sequence number + 1 (what a client's stack
 * sends in answer to the SYN-ACK) counts: a blind one cannot free seats.
 * Established connections are sock_ops' business. */
static __always_inline int handle_rst(struct syn_pkt *p, bool icmp)
{
	struct sluice_conn *c = bpf_map_lookup_elem(&sl_conns, &p->key);
	struct sluice_stats *gs;

	if (!c || c->state != SLUICE_CONN_ADMITTED ||
	    bpf_ntohl(p->seq) != bpf_ntohl(c->syn_seq) + 1)
		return XDP_PASS;
	conn_closed(&p->key, icmp ? SLUICE_END_HANDSHAKE_ICMP : SLUICE_END_HANDSHAKE_RST, 0);
	gs = global_stats();
	if (icmp)
		STAT_INC(gs, icmp_released);
	else
		STAT_INC(gs, rst_released);
	return XDP_PASS;
}

static __always_inline int xdp_decide(struct xdp_md *ctx)
{
	struct syn_pkt p = {};
	struct sluice_stats *gs;

	switch (parse_frame(ctx, &p)) {
	case PARSE_SYN:
		return handle_syn(ctx, &p);
	case PARSE_ACK:
		return handle_ack(ctx, &p);
	case PARSE_RST:
		return handle_rst(&p, false);
	case PARSE_ICMP_ABORT:
		/* The same rule for an ICMP error about our SYN-ACK (a spoofed
		 * source's router answering it): the quoted ack must be the
		 * SYN's sequence + 1, and the kernel drops the request too. */
		return handle_rst(&p, true);
	case PARSE_MALFORMED:
		gs = global_stats();
		STAT_INC(gs, malformed);
		return XDP_PASS;
	case PARSE_FRAGMENT:
		gs = global_stats();
		STAT_INC(gs, fragments);
		return XDP_PASS;
	default:
		return XDP_PASS;
	}
}

SEC("xdp")
int sluice_xdp(struct xdp_md *ctx)
{
	int act = xdp_decide(ctx);

	/* Passed on: to the next program when one is chained (a tail call
	 * does not return), else to the stack.  An empty slot costs one
	 * array lookup.  A handed-off RST is sluice's own answer: to the
	 * stack, where sluice_tc_in sends it, never to the next program. */
	if (act == SLUICE_ACT_HANDOFF)
		return XDP_PASS;
	if (act == XDP_PASS)
		bpf_tail_call(ctx, &sl_xdp_next, 0);
	return act;
}

/* The programs the daemon runs on a frame it held. */
#include "held_frames.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";
