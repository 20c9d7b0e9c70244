/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Whether a handshake's final ACK proves its source exists, for a level
 * that seats at the ACK: the kernel's own request socket or SYN cookie
 * says so.
 */
#ifndef SLUICE_BPF_ACK_PROOF_H
#define SLUICE_BPF_ACK_PROOF_H

#include <stdbool.h>

#include "parse.h"

/* A tcp_request_sock field or two, relocated against the running kernel's
 * BTF (CO-RE): the ISN the kernel sent in its SYN-ACK. */
struct tcp_request_sock {
	__u32 snt_isn;
} __attribute__((preserve_access_index));

/* Whether an unseated ACK finishes a handshake the kernel will complete:
 * it acknowledges the ISN of the pending request socket of its 4-tuple, or
 * it carries a SYN cookie the listener issued (the kernel's own check,
 * recent overflow included).  A blind or spoofed ACK proves nothing. */
static __always_inline bool handshake_proved(struct xdp_md *ctx, const struct syn_pkt *p)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct bpf_sock_tuple t = {};
	struct bpf_sock *sk;
	struct tcphdr *th;
	__u32 l3 = p->l3_off, l4 = p->l4_off, tlen;
	bool v4 = p->key.family == 4, ok = false;

	if (l3 > MAX_HDR_OFF || l4 > MAX_HDR_OFF)
		return false;
	th = data + l4;
	if ((void *)(th + 1) > data_end)
		return false;
	if (v4) {
		__builtin_memcpy(&t.ipv4.saddr, p->key.saddr + 12, 4);
		__builtin_memcpy(&t.ipv4.daddr, p->key.daddr + 12, 4);
		t.ipv4.sport = p->key.sport;
		t.ipv4.dport = p->key.dport;
		tlen = sizeof(t.ipv4);
	} else {
		__builtin_memcpy(t.ipv6.saddr, p->key.saddr, 16);
		__builtin_memcpy(t.ipv6.daddr, p->key.daddr, 16);
		t.ipv6.sport = p->key.sport;
		t.ipv6.dport = p->key.dport;
		tlen = sizeof(t.ipv6);
	}
	sk = bpf_skc_lookup_tcp(ctx, &t, tlen, BPF_F_CURRENT_NETNS, 0);
	if (!sk)
		return false;
	if (sk->state == BPF_TCP_NEW_SYN_RECV) {
		struct tcp_request_sock *req = bpf_skc_to_tcp_request_sock(sk);

		ok = req && bpf_ntohl(p->ack_seq) == req->snt_isn + 1;
	} else if (sk->state == BPF_TCP_LISTEN) {
		if (v4) {
			struct iphdr *iph = data + l3;

			if ((void *)(iph + 1) <= data_end)
				ok = !bpf_tcp_check_syncookie(sk, iph, sizeof(*iph), th, sizeof(*th));
		} else {
			struct ipv6hdr *ip6h = data + l3;

			if ((void *)(ip6h + 1) <= data_end)
				ok = !bpf_tcp_check_syncookie(sk, ip6h, sizeof(*ip6h), th, sizeof(*th));
		}
	}
	bpf_sk_release(sk);
	return ok;
}

#endif /* SLUICE_BPF_ACK_PROOF_H */
