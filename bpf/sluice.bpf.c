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
#include "stats.h"
#include "heartbeat.h"
#include "events.h"
#include "classify.h"
#include "conns.h"
#include "fail_static.h"
#include "handoff.h"
#include "tickets.h"
#include "ack_proof.h"
#include "lifetimes.h"
#include "tx_watch.h"
#include "held_frames.h"
#include "sluice_seats.h"
#include "sluice_class.h"

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
	sluice_release(&seats->seats_in_use, need);
	if (err == -EEXIST) { /* another CPU admitted this 4-tuple, or the daemon */
		retransmit_of_tracked(p, ls);
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
			sluice_release(&seats->seats_in_use, need);
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

/*
 * The three decisions below are global functions: the verifier checks each
 * once, on its own, from any parsed packet, instead of once for every path
 * through the parser that reaches it.  6.1's verifier gives up on the
 * product ("BPF program is too large": over 1,000,000 instructions walked),
 * which it verifies as three pieces.  __noinline keeps clang from inlining
 * them back.  Each works on its own copy of the parsed packet (decision_of).
 */

/* The decision's own copy of the parsed packet (sl_decision); NULL if
 * there is none.  A global function's pointer argument is plain memory
 * that may be NULL, as far as the verifier knows. */
static __always_inline struct sl_decision *decision_of(const struct syn_pkt *parsed)
{
	__u32 zero = 0;
	struct sl_decision *d;

	if (!parsed)
		return NULL;
	d = bpf_map_lookup_elem(&sl_decision, &zero);
	if (d)
		__builtin_memcpy(&d->pkt, parsed, sizeof(d->pkt));
	return d;
}

__noinline int sl_decide_syn(struct xdp_md *ctx, const struct syn_pkt *parsed)
{
	struct sl_decision *d = decision_of(parsed);
	struct syn_pkt *p;
	struct sluice_stats *gs = global_stats();
	const struct sluice_class *cls;
	struct sluice_settings *cfg;
	struct sluice_ticket *ticket;
	struct level_ctx l;
	__u32 zero = 0;
	__u64 now;
	int verdict;

	if (!d)
		return XDP_PASS;
	p = &d->pkt;
	STAT_INC(gs, syns);
	cfg = bpf_map_lookup_elem(&sl_config, &zero);
	if (!cfg || !(cfg->flags & SLUICE_CFG_ACTIVE))
		return XDP_PASS; /* not configured yet: sluice is transparent */
	if (loopback_source(&p->key)) {
		STAT_INC(gs, martians);
		return XDP_PASS;
	}

	classify(cfg, p, &d->cls);
	cls = &d->cls;
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


/*
 * An ACK, while some level seats at the ACK.  One that has a seat, or whose
 * level is not watched, passes untouched; an unseated one that proves its
 * source meets its level's gates (or claims its ticket) as a SYN would.
 */
__noinline int sl_decide_ack(struct xdp_md *ctx, const struct syn_pkt *parsed)
{
	struct sl_decision *d;
	struct syn_pkt *p;
	const struct sluice_class *cls;
	struct sluice_settings *cfg;
	struct sluice_stats *gs;
	struct level_ctx l;
	__u32 zero = 0;
	__u64 now;
	int verdict;

	/* Every segment of every connection is an ACK: without a level that
	 * seats at the ACK it passes here, before the packet is copied. */
	cfg = bpf_map_lookup_elem(&sl_config, &zero);
	if (!cfg || !cfg->ack_watch_levels || !(cfg->flags & SLUICE_CFG_ACTIVE))
		return XDP_PASS;
	d = decision_of(parsed);
	if (!d)
		return XDP_PASS;
	p = &d->pkt;
	if (bpf_map_lookup_elem(&sl_conns, &p->key) || loopback_source(&p->key))
		return XDP_PASS; /* seated: an established connection's segment (or a martian) */
	classify(cfg, p, &d->cls);
	cls = &d->cls;
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
__noinline int sl_decide_rst(const struct syn_pkt *parsed, bool icmp)
{
	struct sl_decision *d = decision_of(parsed);
	struct syn_pkt *p;
	struct sluice_conn *c;
	struct sluice_stats *gs;

	if (!d)
		return XDP_PASS;
	p = &d->pkt;
	c = bpf_map_lookup_elem(&sl_conns, &p->key);
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
		return sl_decide_syn(ctx, &p);
	case PARSE_ACK:
		return sl_decide_ack(ctx, &p);
	case PARSE_RST:
		return sl_decide_rst(&p, false);
	case PARSE_ICMP_ABORT:
		/* The same rule for an ICMP error about our SYN-ACK (a spoofed
		 * source's router answering it): the quoted ack must be the
		 * SYN's sequence + 1, and the kernel drops the request too. */
		return sl_decide_rst(&p, true);
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

char LICENSE[] SEC("license") = "Dual BSD/GPL";
