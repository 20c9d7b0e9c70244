// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A root XDP program in the manner of Katran's shared mode: it owns the
 * interface and hands every frame to the first program in its array (a
 * tail call does not return); with none there, it passes.  The tests put
 * sluice in a slot of it (Server spec.xdpChain.rootArray).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define ROOT_SLOTS 4

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, ROOT_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
} root_array SEC(".maps");

SEC("xdp")
int xdp_root(struct xdp_md *ctx)
{
	for (__u32 i = 0; i < ROOT_SLOTS; i++)
		bpf_tail_call(ctx, &root_array, i);
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
