// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Benchmark baselines (tests/bench/bench_xdp.c):
 *  parse_pass  the same parser as sluice_xdp, then XDP_PASS: the difference
 *              to sluice_xdp is what classification and admission cost;
 *  ref_admit   the least an admission can do: the same parser, one LPM
 *              lookup (the source address), one hash insert (the 4-tuple,
 *              sluice's connection entry) and one atomic add (a seat).  An
 *              admitted SYN through sluice_xdp is measured against it
 *              (issue 25's goal: at most 2x).
 */
#include "parse.h"

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, SLUICE_LPM_ENTRIES);
	__type(key, struct sluice_lpm_key);
	__type(value, struct sluice_lpm_val);
} ref_lpm SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SLUICE_DEFAULT_CONNS);
	__type(key, struct sluice_conn_key);
	__type(value, struct sluice_conn);
} ref_conns SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} ref_seats SEC(".maps");

SEC("xdp")
int parse_pass(struct xdp_md *ctx)
{
	struct syn_pkt p = {};

	/* The verdict of the parse is ignored: only its cost matters. */
	return parse_frame(ctx, &p) == PARSE_SYN ? XDP_PASS : XDP_PASS;
}

SEC("xdp")
int ref_admit(struct xdp_md *ctx)
{
	struct sluice_lpm_key lk;
	struct sluice_lpm_val *lv;
	struct sluice_conn c = {};
	struct syn_pkt p = {};
	__u32 zero = 0;
	__u64 *seats;

	if (parse_frame(ctx, &p) != PARSE_SYN)
		return XDP_PASS;
	__builtin_memset(&lk, 0, sizeof(lk));
	lk.prefixlen = SLUICE_LPM_FULL;
	__builtin_memcpy(lk.addr, p.key.saddr, 16);
	lv = bpf_map_lookup_elem(&ref_lpm, &lk);
	c.level = lv ? lv->cls : 0;
	c.seats = 1;
	c.state = SLUICE_CONN_ADMITTED;
	c.admitted_ns = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&ref_conns, &p.key, &c, BPF_NOEXIST))
		return XDP_DROP;
	seats = bpf_map_lookup_elem(&ref_seats, &zero);
	if (seats)
		__sync_fetch_and_add(seats, 1);
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
