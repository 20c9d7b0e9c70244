// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A one-line XDP program for the *peer* of a veth that runs sluice in
 * native mode: veth delivers XDP_TX frames only when the receiving side has
 * NAPI enabled, which an attached XDP program does.
 * Also the parse-free baseline for benchmarks.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int xdp_pass(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
