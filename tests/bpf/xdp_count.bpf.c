// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The next program of a chain, for the tests of sluice's tail call
 * (Server spec.xdpChain.next): it counts every frame it sees, and the TCP
 * SYNs among them, then passes the frame on.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/in.h>
#include <linux/tcp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2); /* 0: frames, 1: TCP SYNs (IPv4 and IPv6, no options in IPv6) */
	__type(key, __u32);
	__type(value, __u64);
} count_seen SEC(".maps");

static __always_inline void bump(__u32 k)
{
	__u64 *v = bpf_map_lookup_elem(&count_seen, &k);

	if (v)
		__sync_fetch_and_add(v, 1);
}

SEC("xdp")
int xdp_count(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct tcphdr *tcp = NULL;

	bump(0);
	if ((void *)(eth + 1) > end)
		return XDP_PASS;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);

		if ((void *)(ip + 1) > end || ip->protocol != IPPROTO_TCP)
			return XDP_PASS;
		tcp = (void *)ip + ip->ihl * 4;
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > end || ip6->nexthdr != IPPROTO_TCP)
			return XDP_PASS;
		tcp = (void *)(ip6 + 1);
	}
	if (tcp && (void *)(tcp + 1) <= end && tcp->syn && !tcp->ack)
		bump(1);
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
