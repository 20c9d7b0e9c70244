/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * How long connections take: a served connection's lifetime into its
 * FlowSchema's histogram (sl_fs_dur) and its level's log-mean, a
 * handshake's time into sl_hs_hist.  Arithmetic without loops.
 */
#ifndef SLUICE_BPF_LIFETIMES_H
#define SLUICE_BPF_LIFETIMES_H

#include "maps.h"

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

#endif /* SLUICE_BPF_LIFETIMES_H */
