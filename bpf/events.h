/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Events to the daemon through sl_events: verdicts for the record, and
 * deferrals with their SYN's frame, rate-limited per level and CPU; the
 * daemon is woken only when someone waits on what an event says.
 */
#ifndef SLUICE_BPF_EVENTS_H
#define SLUICE_BPF_EVENTS_H

#include <stdbool.h>

#include "bounds.h"
#include "clock.h"
#include "maps.h"
#include "stats.h"

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
	} else if (len >= 1) {
		/* 6.1 does not learn len != 0 from len >= 1; from len - 1 <
		 * SLUICE_FRAME_MAX it learns 1 <= len <= SLUICE_FRAME_MAX. */
		__u32 below = len - 1;

		verifier_opaque(below);
		if (below < SLUICE_FRAME_MAX && !bpf_xdp_load_bytes(ctx, 0, e->frame, below + 1)) {
			e->frame_len = (__u16)len;
			STAT_INC(gs, frames_copied);
		}
	}
	submit_event(e, sizeof(*e), true); /* the daemon holds it and queues it now */
}

#endif /* SLUICE_BPF_EVENTS_H */
