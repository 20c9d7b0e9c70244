// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The hooks sluice uses, with nothing in them (scripts/bench_cost.sh): an
 * XDP program that passes every frame and a sock_ops program that asks for
 * nothing.  Attached where sluice attaches, they measure what the hooks
 * themselves cost on the device and the host (veth's XDP mode, the cgroup's
 * sock_ops calls), apart from what sluice does in them.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int empty_xdp(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_PASS;
}

SEC("sockops")
int empty_sockops(struct bpf_sock_ops *skops)
{
	(void)skops;
	return 1;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
