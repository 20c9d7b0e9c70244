/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Fail-static (failMode: static): while no daemon writes the heartbeat,
 * the kernel keeps each level's limit on its own.  The judgement needs
 * nothing new (judge() treats the SYN as undispatched: within the limit,
 * or dropped for its retransmit); what the daemon did besides is expire
 * the half-open entries, whose seats would otherwise leak for the whole
 * outage (a SYN flood from spoofed sources would close the level).  Here
 * a BPF timer does it: armed by the first SYN the static failsafe judges,
 * it runs once a second, deletes the entries admitted longer than
 * halfopen_timeout_ns ago that never established, and returns their seats
 * (whoever deletes the entry releases them, as everywhere), until a
 * heartbeat is fresh again.  It costs nothing while the daemon runs.
 *
 * What a run costs is bounded by what is due, not by the table: a walk of
 * sl_conns visits every bucket (a 16M-entry table is a long softirq
 * stall), so it walks the table only where it must, and otherwise reads a
 * FIFO of what the outage admitted:
 *  - every connection the static failsafe admits is queued in sl_static_due
 *    (4-tuple and admission time, in admission order); a run pops the
 *    entries that are due and expires each that is still the same
 *    half-open connection;
 *  - whole walks: at the outage's first run (entries the daemon admitted
 *    and did not live to expire), once more a handshake time-out later
 *    (the daemon's youngest are due by then), and after the FIFO
 *    overflowed (what it lost is due a handshake time-out later): at most
 *    one a handshake time-out, never more than one a second.
 */
#ifndef SLUICE_BPF_FAIL_STATIC_H
#define SLUICE_BPF_FAIL_STATIC_H

#include "clock.h"
#include "conns.h"
#include "heartbeat.h"
#include "maps.h"
#include "stats.h"

#define STATIC_SWEEP_PERIOD_NS NSEC_PER_SEC

struct bpf_map;

struct static_walk {
	__u64 now, timeout; /* timeout 0: drain the FIFO, expire nothing */
	__u64 expired;
	__u64 walked;       /* this run walked the whole table */
};

static long static_expire_one(struct bpf_map *map, struct sluice_conn_key *key,
			      struct sluice_conn *c, struct static_walk *w)
{
	struct sluice_seats *seats;
	__u32 level = c->level, n = c->seats;
	__u16 policy = c->policy, flags = c->flags;

	if (c->state != SLUICE_CONN_ADMITTED || w->now < c->admitted_ns ||
	    w->now - c->admitted_ns <= w->timeout)
		return 0;
	/* The walk resumes by bucket: deleting the entry in hand is safe. */
	if (bpf_map_delete_elem(map, key))
		return 0; /* closed or established meanwhile: not ours */
	seats = release_seats(level, n, policy, flags);
	if (seats)
		__sync_fetch_and_add(&seats->expired, 1);
	w->expired++;
	return 0;
}

/* One FIFO entry, if it is due: popped, and its connection expired if it
 * is still the half-open one that was queued.  1 stops the loop. */
static long static_pop_one(__u32 i, struct static_walk *w)
{
	struct sluice_static_due d;
	struct sluice_conn *c;

	if (bpf_map_peek_elem(&sl_static_due, &d))
		return 1; /* empty */
	if (w->timeout && w->now >= d.admitted_ns && w->now - d.admitted_ns <= w->timeout)
		return 1; /* the oldest is not due: neither is the rest */
	if (bpf_map_pop_elem(&sl_static_due, &d))
		return 1;
	if (!w->timeout)
		return 0; /* draining: the daemon is back */
	c = bpf_map_lookup_elem(&sl_conns, &d.key);
	if (c && c->admitted_ns == d.admitted_ns)
		static_expire_one((struct bpf_map *)&sl_conns, &d.key, c, w);
	return 0;
}

/* Whole walks: due ones, and one for what an overflow lost. */
static __always_inline void static_walk_if_due(struct sluice_static_sweep *s, struct static_walk *w)
{
	if (s->overflow && !s->walks) {
		/* What the FIFO refused is due a time-out after it was refused. */
		s->overflow = 0;
		s->walks = 1;
		if (s->walk_at_ns < w->now + w->timeout)
			s->walk_at_ns = w->now + w->timeout;
	}
	if (!s->walks || w->now < s->walk_at_ns)
		return;
	bpf_for_each_map_elem(&sl_conns, static_expire_one, w, 0);
	s->walks--;
	s->walk_at_ns = w->now + (w->timeout > STATIC_SWEEP_PERIOD_NS ? w->timeout : STATIC_SWEEP_PERIOD_NS);
	w->walked = 1;
}

static int static_sweep_run(void *map, __u32 *key, struct sluice_static_sweep *s)
{
	struct static_walk w = { .now = bpf_ktime_get_ns() };
	struct sluice_settings *cfg;
	struct sluice_stats *gs;
	__u32 zero = 0;

	cfg = bpf_map_lookup_elem(&sl_config, &zero);
	if (!cfg || cfg->fail_mode != SLUICE_FAIL_STATIC ||
	    !older_than(heartbeat_age(w.now), cfg->heartbeat_timeout_ns)) {
		/* A daemon is back (or the mode changed): its sweep.  What the
		 * FIFO holds is the daemon's to expire; drop it, so that the
		 * next outage starts empty. */
		bpf_loop(SLUICE_STATIC_DUE, static_pop_one, &w, 0);
		s->armed = 0;
		return 0;
	}
	w.timeout = cfg->halfopen_timeout_ns;
	if (w.timeout) {
		static_walk_if_due(s, &w);
		bpf_loop(SLUICE_STATIC_DUE, static_pop_one, &w, 0);
	}
	gs = global_stats();
	if (gs) {
		gs->static_sweeps++;
		gs->static_walks += w.walked;
		gs->static_expired += w.expired;
	}
	if (bpf_timer_start(&s->timer, STATIC_SWEEP_PERIOD_NS, 0))
		s->armed = 0; /* the next SYN of the outage arms it again */
	return 0;
}

/* The first SYN of an outage arms the sweep; the others find it armed. */
static __always_inline void arm_static_sweep(void)
{
	struct sluice_static_sweep *s;
	__u32 zero = 0;

	s = bpf_map_lookup_elem(&sl_static_sweep, &zero);
	if (!s || s->armed || __sync_val_compare_and_swap(&s->armed, 0, 1))
		return;
	/* This outage's whole walks: now, and a time-out later. */
	s->walks = 2;
	s->walk_at_ns = 0;
	s->overflow = 0;
	/* -EBUSY when an earlier outage initialised it: it is reused. */
	bpf_timer_init(&s->timer, &sl_static_sweep, CLOCK_MONOTONIC);
	if (bpf_timer_set_callback(&s->timer, static_sweep_run) || bpf_timer_start(&s->timer, 0, 0))
		s->armed = 0;
}

/* The static failsafe admitted this connection: queued for its time-out.
 * A full FIFO asks for a whole walk instead. */
static __always_inline void static_due_push(const struct sluice_conn_key *key, __u64 now)
{
	struct sluice_static_due d = { .admitted_ns = now };
	struct sluice_static_sweep *s;
	__u32 zero = 0;

	__builtin_memcpy(&d.key, key, sizeof(d.key));
	if (!bpf_map_push_elem(&sl_static_due, &d, 0))
		return;
	s = bpf_map_lookup_elem(&sl_static_sweep, &zero);
	if (s)
		s->overflow = 1;
}

/* A connection admitted while the static failsafe decides (by judge(),
 * or on a ticket a dead daemon left): the kernel expires it if it never
 * establishes. */
static __always_inline void static_outage_admitted(const struct sluice_conn_key *key, __u64 now)
{
	arm_static_sweep();
	static_due_push(key, now);
}

#endif /* SLUICE_BPF_FAIL_STATIC_H */
