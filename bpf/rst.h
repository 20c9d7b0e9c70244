/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Turn a parsed SYN into a RST|ACK reply in place (RFC 793 reset generation
 * for a segment without ACK: seq 0, ack = SYN seq + 1 + payload length),
 * or a parsed ACK into a bare RST (for a segment with ACK: seq = its ack).
 *
 * The reply keeps the link layer (MACs swapped, VLAN tags kept as they
 * were), writes a fresh 20-byte IPv4 header (options dropped) or a 40-byte
 * IPv6 header (extension headers dropped) and a 20-byte TCP header, then
 * trims the frame.  Checksums are computed from scratch: incremental updates
 * are wrong on veth/loopback where the SYN carries CHECKSUM_PARTIAL.
 */
#ifndef SLUICE_BPF_RST_H
#define SLUICE_BPF_RST_H

#include "parse.h"

#define RST_TTL 64

static __always_inline __u16 csum_fold32(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

/* One's complement sum of n 16-bit words (n constant, small). */
static __always_inline __u32 csum_add_words(__u32 sum, const void *buf, int n)
{
	const __u16 *w = buf;
	int i;

#pragma unroll
	for (i = 0; i < n; i++)
		sum += w[i];
	return sum;
}

static __always_inline void fill_tcp_rst(struct tcphdr *th, const struct syn_pkt *p)
{
	__builtin_memset(th, 0, sizeof(*th));
	th->source = p->key.dport;
	th->dest = p->key.sport;
	th->doff = sizeof(*th) / 4;
	th->rst = 1;
	th->window = 0;
	if (p->ack) {
		th->seq = p->ack_seq;
		return;
	}
	th->seq = 0;
	/* SEG.LEN: the SYN occupies one sequence number, a FIN another, the
	 * payload (TFO) the rest. */
	th->ack_seq = bpf_htonl(bpf_ntohl(p->seq) + 1 + p->fin + p->payload_len);
	th->ack = 1;
}

/* Returns the reply's length and leaves the frame ready for XDP_TX, or -1
 * (the frame could not be grown or read: the caller then drops the
 * segment instead).  room: bytes left after
 * the reply for a trailer (0, or a hand-off's SLUICE_HANDOFF_TRAILER; the
 * frame grows if it was shorter).  A subprogram of its own: it runs only on
 * the refusal path, and inlined at each of its callers it would take stack
 * the verdict's deepest path has no room for. */
static __noinline int build_rst(struct xdp_md *ctx, const struct syn_pkt *p, __u32 room)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct tcphdr th;
	__u32 l3 = p->l3_off, new_len, sum;
	int old_len = data_end - data;

	if ((void *)(eth + 1) > data_end)
		return -1;
	/* Byte by byte in registers: a buffer would take stack, and this
	 * frame, the deciding function's and the program's share 512 bytes
	 * (6.1 counts them all). */
#pragma unroll
	for (int i = 0; i < ETH_ALEN; i++) {
		__u8 b = eth->h_source[i];

		eth->h_source[i] = eth->h_dest[i];
		eth->h_dest[i] = b;
	}

	fill_tcp_rst(&th, p);

	/* The IP header is written in the frame itself, its checksums summed
	 * from p, not built on the stack and copied: this subprogram's frame
	 * adds to the verdict's deepest one, and the two share 512 bytes. */
	if (p->key.family == 4) {
		struct { struct iphdr ip; struct tcphdr tcp; } *out;
		__u32 addrs;

		/* Checked where it is used: 6.1 would reload an l3 checked
		 * before the branch from a spill made before the check. */
		verifier_opaque(l3);
		if (l3 > MAX_HDR_OFF)
			return -1;
		out = data + l3;
		if ((void *)(out + 1) > data_end)
			return -1;
		__builtin_memset(&out->ip, 0, sizeof(out->ip));
		out->ip.version = 4;
		out->ip.ihl = 5;
		out->ip.tot_len = bpf_htons(sizeof(out->ip) + sizeof(th));
		out->ip.frag_off = bpf_htons(0x4000); /* DF */
		out->ip.ttl = RST_TTL;
		out->ip.protocol = IPPROTO_TCP;
		__builtin_memcpy(&out->ip.saddr, p->key.daddr + 12, 4);
		__builtin_memcpy(&out->ip.daddr, p->key.saddr + 12, 4);
		addrs = csum_add_words(0, p->key.daddr + 12, 2);
		addrs = csum_add_words(addrs, p->key.saddr + 12, 2);
		/* Its words: version/ihl/tos, length, id 0, DF, ttl/protocol,
		 * the checksum (0), the addresses. */
		sum = addrs + bpf_htons(0x4500) + out->ip.tot_len + out->ip.frag_off +
		      bpf_htons((RST_TTL << 8) | IPPROTO_TCP);
		out->ip.check = csum_fold32(sum);

		/* Pseudo header: addresses, zero byte + protocol, TCP length. */
		sum = addrs + bpf_htons(IPPROTO_TCP) + bpf_htons(sizeof(th));
		sum = csum_add_words(sum, &th, sizeof(th) / 2);
		th.check = csum_fold32(sum);
		__builtin_memcpy(&out->tcp, &th, sizeof(th));
		new_len = l3 + sizeof(*out);
	} else {
		struct { struct ipv6hdr ip6; struct tcphdr tcp; } *out;

		verifier_opaque(l3);
		if (l3 > MAX_HDR_OFF)
			return -1;
		out = data + l3;
		if ((void *)(out + 1) > data_end)
			return -1;
		__builtin_memset(&out->ip6, 0, 8);
		out->ip6.version = 6;
		out->ip6.payload_len = bpf_htons(sizeof(th));
		out->ip6.nexthdr = IPPROTO_TCP;
		out->ip6.hop_limit = RST_TTL;
		__builtin_memcpy(&out->ip6.saddr, p->key.daddr, 16);
		__builtin_memcpy(&out->ip6.daddr, p->key.saddr, 16);

		sum = csum_add_words(0, p->key.daddr, 8);
		sum = csum_add_words(sum, p->key.saddr, 8);
		/* 32-bit upper-layer length and next header: one word each. */
		sum += bpf_htons(sizeof(th)) + bpf_htons(IPPROTO_TCP);
		sum = csum_add_words(sum, &th, sizeof(th) / 2);
		th.check = csum_fold32(sum);
		__builtin_memcpy(&out->tcp, &th, sizeof(th));
		new_len = l3 + sizeof(*out);
	}

	/* Trim options, extension headers and payload; after this call every
	 * packet pointer is invalid, and nothing below touches the packet. */
	if ((int)(new_len + room) != old_len && bpf_xdp_adjust_tail(ctx, (int)(new_len + room) - old_len))
		return -1;
	return (int)new_len;
}

#endif /* SLUICE_BPF_RST_H */
