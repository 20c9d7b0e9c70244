/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Fail-static (failMode: static): while no daemon writes the heartbeat,
 * the kernel keeps each level's limit on its own.  The judgement needs
 * nothing new (judge() treats the SYN as undispatched: within the limit,
 * or dropped for its retransmit); what the daemon did besides is expire
 * the half-open entries, whose seats would otherwise leak for the whole
 * outage (a SYN flood from spoofed sources would close the level).  Here
 * a BPF timer does it: armed by the first SYN the static failsafe judges,
 * it walks sl_conns once a second, deletes the entries admitted longer
 * than halfopen_timeout_ns ago that never established, and returns their
 * seats (whoever deletes the entry releases them, as everywhere), until a
 * heartbeat is fresh again.  A section of sluice.bpf.c, kept apart by
 * concern; it costs nothing while the daemon runs.
 */
#ifndef SLUICE_BPF_FAIL_STATIC_H
#define SLUICE_BPF_FAIL_STATIC_H

#include "maps.h"

#define CLOCK_MONOTONIC 1
#define STATIC_SWEEP_PERIOD_NS NSEC_PER_SEC

struct static_sweep {
	struct bpf_timer timer;
	__u32 armed; /* a sweep is scheduled (set by the arming SYN, cleared by
		      * the sweep that finds the heartbeat fresh) */
	__u32 pad;
};

/* Pinned with the other maps: a timer lives only while its map has a user
 * reference, and the pin is what outlives the daemon. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct static_sweep);
} sl_static_sweep SEC(".maps");

struct bpf_map;

struct static_walk {
	__u64 now, timeout;
	__u64 expired;
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
	seats = bpf_map_lookup_elem(&sl_seats, &level);
	if (seats) {
		__sync_fetch_and_sub(&seats->seats_in_use, n);
		__sync_fetch_and_add(&seats->expired, 1);
	}
	release_policy_slot(policy, flags);
	w->expired++;
	return 0;
}

static int static_sweep_run(void *map, __u32 *key, struct static_sweep *s)
{
	struct static_walk w = { .now = bpf_ktime_get_ns() };
	struct sluice_settings *cfg;
	struct sluice_stats *gs;
	__u32 zero = 0;

	cfg = bpf_map_lookup_elem(&sl_config, &zero);
	if (!cfg || cfg->fail_mode != SLUICE_FAIL_STATIC ||
	    !older_than(heartbeat_age(w.now), cfg->heartbeat_timeout_ns)) {
		s->armed = 0; /* a daemon is back (or the mode changed): its sweep */
		return 0;
	}
	w.timeout = cfg->halfopen_timeout_ns;
	if (w.timeout)
		bpf_for_each_map_elem(&sl_conns, static_expire_one, &w, 0);
	gs = global_stats();
	if (gs) {
		gs->static_sweeps++;
		gs->static_expired += w.expired;
	}
	if (bpf_timer_start(&s->timer, STATIC_SWEEP_PERIOD_NS, 0))
		s->armed = 0; /* the next SYN of the outage arms it again */
	return 0;
}

/* The first SYN of an outage arms the sweep; the others find it armed. */
static __always_inline void arm_static_sweep(void)
{
	struct static_sweep *s;
	__u32 zero = 0;

	s = bpf_map_lookup_elem(&sl_static_sweep, &zero);
	if (!s || s->armed || __sync_val_compare_and_swap(&s->armed, 0, 1))
		return;
	/* -EBUSY when an earlier outage initialised it: it is reused. */
	bpf_timer_init(&s->timer, &sl_static_sweep, CLOCK_MONOTONIC);
	if (bpf_timer_set_callback(&s->timer, static_sweep_run) || bpf_timer_start(&s->timer, 0, 0))
		s->armed = 0;
}

#endif /* SLUICE_BPF_FAIL_STATIC_H */
