/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Verifier-safe packet parsing for the sluice XDP program: Ethernet with up
 * to two VLAN tags, IPv4 (options, fragments), IPv6 (up to six extension
 * headers), TCP.  Every dereference is preceded by a bounds check against
 * data_end; every variable offset is clamped so the verifier can track it.
 */
#ifndef SLUICE_BPF_PARSE_H
#define SLUICE_BPF_PARSE_H

#include <stdbool.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "sluice_abi.h"
#include "bounds.h"

#define VLAN_MAX_DEPTH     2
#define IPV6_EXT_MAX_CHAIN 6
/* Upper bound on any header offset we compute; keeps offsets verifiable. */
#define MAX_HDR_OFF        512

#ifndef ETH_P_8021Q
#define ETH_P_8021Q  0x8100
#endif
#ifndef ETH_P_8021AD
#define ETH_P_8021AD 0x88A8
#endif

enum parse_result {
	PARSE_OTHER = 0,     /* not a TCP SYN: pass untouched */
	PARSE_SYN,           /* SYN (SYN set, ACK and RST clear) */
	PARSE_RST,           /* RST without SYN: key and seq filled (half-open release) */
	PARSE_ICMP_ABORT,    /* an ICMP error that aborts the handshake of the SYN-ACK it
			      * quotes: key of that connection, seq = the quoted ack */
	PARSE_ACK,           /* ACK without SYN or RST (a handshake's last, or any later
			      * segment): key, seq, ack_seq, payload and fin filled */
	PARSE_MALFORMED,     /* truncated or invalid header: pass and count */
	PARSE_FRAGMENT,      /* IP fragment: never a SYN */
};

/* ICMP and ICMPv6 share this 8-byte header; linux/icmp.h pulls in libc
 * headers a BPF target cannot build, so the few values we need are here. */
struct icmp_hdr_s {
	__u8   type;
	__u8   code;
	__sum16 checksum;
	__be32 rest;
};
#define ICMP4_DEST_UNREACH   3
#define ICMP4_NET_UNREACH    0
#define ICMP4_HOST_UNREACH   1
#define ICMP4_TIME_EXCEEDED  11
#define ICMP4_PARAMETERPROB  12
#define ICMP6_DEST_UNREACH   1
#define ICMP6_NOROUTE        0
#define ICMP6_BEYONDSCOPE    2
#define ICMP6_ADDR_UNREACH   3
#define ICMP6_PARAMPROB      4

struct vlan_hdr_s {
	__be16 tci;
	__be16 encap_proto;
};

/* What the SYN handler and the RST builder need from a parsed SYN. */
struct syn_pkt {
	struct sluice_conn_key key; /* server view: s = client, d = local */
	__u32 l3_off;       /* offset of the IP header */
	__u32 l4_off;       /* offset of the TCP header */
	__u32 payload_len;  /* TCP payload bytes (from IP lengths, not frame length) */
	__be32 seq;         /* the SYN's sequence number (PARSE_ACK: the ACK's) */
	__be32 ack_seq;     /* PARSE_ACK: what it acknowledges */
	__u32 fin;          /* 1 if FIN is set too (it counts in SEG.LEN) */
	__u32 ack;          /* 1 for PARSE_ACK: a RST in reply takes its seq from ack_seq */
};

static __always_inline void v4_mapped(__u8 dst[16], __be32 addr)
{
	__builtin_memset(dst, 0, 10);
	dst[10] = 0xff;
	dst[11] = 0xff;
	__builtin_memcpy(dst + 12, &addr, 4);
}

/* Parse the TCP header at l4_off; ip_payload is the IP payload length that
 * remains for TCP (header + data). */
static __always_inline enum parse_result
parse_tcp(void *data, void *data_end, struct syn_pkt *p, __u32 l4_off,
	  __u32 ip_payload)
{
	struct tcphdr *th;
	__u32 doff_bytes, syn, ack;

	if (l4_off > MAX_HDR_OFF)
		return PARSE_MALFORMED;
	th = data + l4_off;
	if ((void *)(th + 1) > data_end)
		return PARSE_MALFORMED;
	doff_bytes = th->doff * 4;
	if (doff_bytes < sizeof(*th) || doff_bytes > ip_payload)
		return PARSE_MALFORMED;
	/* Everything read here, once: the compiler may otherwise rebuild th
	 * from a register whose bounds the verifier has forgotten. */
	syn = th->syn;
	ack = th->ack;
	p->l4_off = l4_off;
	p->key.sport = th->source;
	p->key.dport = th->dest;
	p->seq = th->seq;
	p->ack_seq = th->ack_seq;
	p->fin = th->fin;
	if (th->rst && !syn)
		return PARSE_RST;
	if (th->rst || (syn && ack) || (!syn && !ack))
		return PARSE_OTHER;
	p->payload_len = ip_payload - doff_bytes;
	if (syn)
		return PARSE_SYN;
	p->ack = 1;
	return PARSE_ACK;
}

/*
 * An ICMP error quoting a SYN-ACK we sent (the quote's IP header is at
 * off, quote_len bytes of it are in the frame's ICMP payload).  The quote
 * must hold the TCP header's first 14 bytes: ports, seq, ack and flags
 * (SYN+ACK).  Routers quote that much (RFC 1812: as much as fits in 576
 * bytes; ICMPv6 up to the minimum MTU); a quote of only 8 bytes cannot be
 * checked and is left alone.  The key is the connection's, seen from the
 * server: s = the quote's destination (the client).  p->seq is the quoted
 * ack, which is the client's SYN sequence + 1.
 */
static __always_inline enum parse_result
parse_quoted_synack(void *data, void *data_end, struct syn_pkt *p, __u32 tcp_off, __u32 avail)
{
	__u8 *t;

	if (tcp_off > MAX_HDR_OFF || avail < 14)
		return PARSE_OTHER;
	t = data + tcp_off;
	if ((void *)(t + 14) > data_end)
		return PARSE_OTHER;
	if ((t[13] & 0x17) != 0x12) /* SYN and ACK; no RST, no FIN */
		return PARSE_OTHER;
	__builtin_memcpy(&p->key.sport, t + 2, 2); /* the quote's destination port: the client's */
	__builtin_memcpy(&p->key.dport, t, 2);
	__builtin_memcpy(&p->seq, t + 8, 4);
	return PARSE_ICMP_ABORT;
}

/* The ICMPv4 errors after which Linux drops a pending connection request
 * (tcp_v4_err on TCP_NEW_SYN_RECV): its handshake cannot complete. */
static __always_inline bool icmp4_aborts_handshake(__u8 type, __u8 code)
{
	return type == ICMP4_PARAMETERPROB || type == ICMP4_TIME_EXCEEDED ||
	       (type == ICMP4_DEST_UNREACH && (code == ICMP4_NET_UNREACH || code == ICMP4_HOST_UNREACH));
}

/* The same for ICMPv6 (icmpv6_err_convert's fatal errors). */
static __always_inline bool icmp6_aborts_handshake(__u8 type, __u8 code)
{
	return type == ICMP6_PARAMPROB ||
	       (type == ICMP6_DEST_UNREACH && code != ICMP6_NOROUTE && code != ICMP6_BEYONDSCOPE &&
		code != ICMP6_ADDR_UNREACH);
}

static __always_inline enum parse_result
parse_icmp4(void *data, void *data_end, struct syn_pkt *p, __u32 off, __u32 len)
{
	struct icmp_hdr_s *ic;
	struct iphdr *q;
	__u32 qhl;

	if (off > MAX_HDR_OFF)
		return PARSE_OTHER;
	ic = data + off;
	if ((void *)(ic + 1) > data_end || len < sizeof(*ic))
		return PARSE_OTHER;
	if (!icmp4_aborts_handshake(ic->type, ic->code))
		return PARSE_OTHER;
	q = (void *)(ic + 1);
	if ((void *)(q + 1) > data_end || len < sizeof(*ic) + sizeof(*q))
		return PARSE_OTHER;
	if (q->version != 4 || q->ihl < 5 || q->protocol != IPPROTO_TCP)
		return PARSE_OTHER;
	qhl = q->ihl * 4;
	if (len < sizeof(*ic) + qhl)
		return PARSE_OTHER;
	p->key.family = 4;
	v4_mapped(p->key.saddr, q->daddr);
	v4_mapped(p->key.daddr, q->saddr);
	return parse_quoted_synack(data, data_end, p, off + sizeof(*ic) + qhl,
				   len - sizeof(*ic) - qhl);
}

static __always_inline enum parse_result
parse_icmp6(void *data, void *data_end, struct syn_pkt *p, __u32 off, __u32 len)
{
	struct icmp_hdr_s *ic;
	struct ipv6hdr *q;

	if (off > MAX_HDR_OFF)
		return PARSE_OTHER;
	ic = data + off;
	if ((void *)(ic + 1) > data_end || len < sizeof(*ic))
		return PARSE_OTHER;
	if (!icmp6_aborts_handshake(ic->type, ic->code))
		return PARSE_OTHER;
	q = (void *)(ic + 1);
	if ((void *)(q + 1) > data_end || len < sizeof(*ic) + sizeof(*q))
		return PARSE_OTHER;
	if (q->version != 6 || q->nexthdr != IPPROTO_TCP) /* we send no extension headers */
		return PARSE_OTHER;
	p->key.family = 6;
	__builtin_memcpy(p->key.saddr, &q->daddr, 16);
	__builtin_memcpy(p->key.daddr, &q->saddr, 16);
	return parse_quoted_synack(data, data_end, p, off + sizeof(*ic) + sizeof(*q),
				   len - sizeof(*ic) - sizeof(*q));
}

static __always_inline enum parse_result
parse_ipv4(void *data, void *data_end, struct syn_pkt *p, __u32 off)
{
	struct iphdr *iph;
	__u32 ihl_bytes, tot_len;

	if (off > MAX_HDR_OFF)
		return PARSE_MALFORMED;
	iph = data + off;
	if ((void *)(iph + 1) > data_end)
		return PARSE_MALFORMED;
	if (iph->version != 4 || iph->ihl < 5)
		return PARSE_MALFORMED;
	ihl_bytes = iph->ihl * 4;
	tot_len = bpf_ntohs(iph->tot_len);
	verifier_opaque(tot_len);
	if (tot_len > 0xffff)
		return PARSE_MALFORMED;
	if (tot_len < ihl_bytes || data + off + tot_len > data_end)
		return PARSE_MALFORMED;
	if (iph->protocol == IPPROTO_ICMP && !(iph->frag_off & bpf_htons(0x3fff)))
		return parse_icmp4(data, data_end, p, off + ihl_bytes, tot_len - ihl_bytes);
	if (iph->protocol != IPPROTO_TCP)
		return PARSE_OTHER;
	/* Any fragment (MF set or a non-zero offset) is never treated as a SYN. */
	if (iph->frag_off & bpf_htons(0x3fff))
		return PARSE_FRAGMENT;
	p->l3_off = off;
	p->key.family = 4;
	v4_mapped(p->key.saddr, iph->saddr);
	v4_mapped(p->key.daddr, iph->daddr);
	return parse_tcp(data, data_end, p, off + ihl_bytes, tot_len - ihl_bytes);
}

static __always_inline enum parse_result
parse_ipv6(void *data, void *data_end, struct syn_pkt *p, __u32 off)
{
	struct ipv6hdr *ip6h;
	__u32 ext_off, payload;
	__u8 nexthdr;
	int i;

	if (off > MAX_HDR_OFF)
		return PARSE_MALFORMED;
	ip6h = data + off;
	if ((void *)(ip6h + 1) > data_end)
		return PARSE_MALFORMED;
	if (ip6h->version != 6)
		return PARSE_MALFORMED;
	payload = bpf_ntohs(ip6h->payload_len);
	verifier_opaque(payload);
	if (payload > 0xffff)
		return PARSE_MALFORMED;
	if (data + off + sizeof(*ip6h) + payload > data_end)
		return PARSE_MALFORMED;
	nexthdr = ip6h->nexthdr;
	ext_off = off + sizeof(*ip6h);

#pragma unroll
	for (i = 0; i < IPV6_EXT_MAX_CHAIN; i++) {
		struct ipv6_opt_hdr *oh;
		__u32 len;

		if (nexthdr == IPPROTO_TCP || nexthdr == IPPROTO_ICMPV6)
			break;
		if (nexthdr == IPPROTO_FRAGMENT)
			return PARSE_FRAGMENT;
		if (nexthdr != IPPROTO_HOPOPTS && nexthdr != IPPROTO_ROUTING &&
		    nexthdr != IPPROTO_DSTOPTS && nexthdr != IPPROTO_AH)
			return PARSE_OTHER; /* not TCP, or a header we cannot see through (ESP) */
		if (ext_off > MAX_HDR_OFF)
			return PARSE_MALFORMED;
		oh = data + ext_off;
		if ((void *)(oh + 1) > data_end)
			return PARSE_MALFORMED;
		len = nexthdr == IPPROTO_AH ? (oh->hdrlen + 2) * 4 : (oh->hdrlen + 1) * 8;
		nexthdr = oh->nexthdr;
		ext_off += len;
	}
	if (nexthdr == IPPROTO_ICMPV6) {
		/* Not a SYN either way: a broken chain is not ours to count. */
		if (ext_off > MAX_HDR_OFF || ext_off - off - sizeof(*ip6h) > payload)
			return PARSE_OTHER;
		return parse_icmp6(data, data_end, p, ext_off,
				   payload - (ext_off - off - sizeof(*ip6h)));
	}
	if (nexthdr != IPPROTO_TCP)
		return PARSE_OTHER; /* chain longer than we walk: not ours to judge */
	if (ext_off > MAX_HDR_OFF || ext_off - off - sizeof(*ip6h) > payload)
		return PARSE_MALFORMED;

	p->l3_off = off;
	p->key.family = 6;
	__builtin_memcpy(p->key.saddr, &ip6h->saddr, 16);
	__builtin_memcpy(p->key.daddr, &ip6h->daddr, 16);
	return parse_tcp(data, data_end, p, ext_off,
			 payload - (ext_off - off - sizeof(*ip6h)));
}

/* Parse a frame.  On PARSE_SYN, *p describes the SYN; on PARSE_ACK, the ACK. */
static __always_inline enum parse_result
parse_frame(struct xdp_md *ctx, struct syn_pkt *p)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	__u32 off = sizeof(*eth);
	__be16 proto;
	int i;

	if ((void *)(eth + 1) > data_end)
		return PARSE_MALFORMED;
	proto = eth->h_proto;

#pragma unroll
	for (i = 0; i < VLAN_MAX_DEPTH; i++) {
		struct vlan_hdr_s *vh;

		if (proto != bpf_htons(ETH_P_8021Q) && proto != bpf_htons(ETH_P_8021AD))
			break;
		vh = data + off;
		if ((void *)(vh + 1) > data_end)
			return PARSE_MALFORMED;
		proto = vh->encap_proto;
		off += sizeof(*vh);
	}

	if (proto == bpf_htons(ETH_P_IP))
		return parse_ipv4(data, data_end, p, off);
	if (proto == bpf_htons(ETH_P_IPV6))
		return parse_ipv6(data, data_end, p, off);
	return PARSE_OTHER; /* ARP, a third VLAN tag, anything else */
}

#endif /* SLUICE_BPF_PARSE_H */
