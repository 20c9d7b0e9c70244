/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The daemon's heartbeat, as the data path reads it: how old it is, and
 * whether that is past a limit (the failsafe's, the dispatcher's).
 */
#ifndef SLUICE_BPF_HEARTBEAT_H
#define SLUICE_BPF_HEARTBEAT_H

#include <stdbool.h>

#include "maps.h"

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

/* Whether the static failsafe decides now (a stale heartbeat). */
static __always_inline bool static_outage_now(const struct sluice_settings *cfg, __u64 now)
{
	return cfg->fail_mode == SLUICE_FAIL_STATIC &&
	       older_than(heartbeat_age(now), cfg->heartbeat_timeout_ns);
}

#endif /* SLUICE_BPF_HEARTBEAT_H */
