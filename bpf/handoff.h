/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * How a refusal leaves the device, whatever the device (issue 38; the
 * frame format is in include/sluice_abi.h, the reasoning in
 * docs/ARCHITECTURE.md "Refusals and re-injection on any interface").
 *
 * Native XDP_TX is delivered only where the driver transmits it: a veth
 * drops it silently unless its peer has NAPI.  So refuse() sends a RST with
 * XDP_TX only where the daemon proved that it is delivered (and no drop was
 * seen on this CPU lately); elsewhere it marks the RST as a hand-off frame
 * and passes it, and sluice_tc_in, on the device's tcx ingress, sends it
 * out of the device through the stack's own transmit, which every device
 * has.  sluice_tc_out, on tcx egress, does the reverse for the daemon: a
 * held SYN it sends through its packet socket re-enters the device's
 * receive path as if it had just arrived.
 */
#ifndef SLUICE_BPF_HANDOFF_H
#define SLUICE_BPF_HANDOFF_H

#include <linux/pkt_cls.h>

#include <stdbool.h>

#include "maps.h"
#include "parse.h"
#include "rst.h"

/* sluice_xdp's own verdict for a handed-off RST: XDP_PASS to the stack,
 * never to a chained program (sl_xdp_next). */
#define SLUICE_ACT_HANDOFF 0x100

/* Turn the RST just built (len bytes, SLUICE_HANDOFF_TRAILER of room after
 * it) into a hand-off frame. */
static __always_inline int mark_handoff(struct xdp_md *ctx, int len, __u32 cookie)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct sluice_handoff_trailer *t;
	struct ethhdr *eth = data;
	__u32 off = (__u32)len;

	if (off > MAX_HDR_OFF + 64)
		return -1;
	t = data + off;
	if ((void *)(eth + 1) > data_end || (void *)(t + 1) > data_end)
		return -1;
	t->cookie = cookie;
	t->proto = eth->h_proto;
	t->dir = SLUICE_HANDOFF_OUT;
	t->magic = SLUICE_HANDOFF_MAGIC;
	eth->h_proto = bpf_htons(SLUICE_ETH_P_HANDOFF);
	return 0;
}

/* Answer the parsed segment with its RST: the XDP verdict (XDP_TX or
 * SLUICE_ACT_HANDOFF), or -1 when no RST could be built (the caller drops
 * the segment and counts rst_failed). */
static __always_inline int refuse(struct xdp_md *ctx, const struct syn_pkt *p, __u64 now)
{
	__u32 ifindex = ctx->ingress_ifindex, slot, cookie = 0;
	struct sluice_if_stats *st = NULL;
	struct sluice_iface *ifc;
	bool handoff = false;
	int len;

	ifc = bpf_map_lookup_elem(&sl_ifaces, &ifindex);
	if (ifc) {
		slot = ifc->slot;
		st = bpf_map_lookup_elem(&sl_if_stats, &slot);
		cookie = ifc->cookie;
		handoff = (ifc->flags & SLUICE_IF_HANDOFF_READY) &&
			  ((ifc->flags & SLUICE_IF_RST_HANDOFF) ||
			   (st && st->tx_drop_ns && now - st->tx_drop_ns < SLUICE_TX_DROP_HOLD_NS));
	}
	len = build_rst(ctx, p, handoff ? SLUICE_HANDOFF_TRAILER : 0);
	if (len < 0 || (handoff && mark_handoff(ctx, len, cookie)))
		return -1;
	if (!handoff) {
		if (st)
			st->rst_xdp_tx++;
		return XDP_TX;
	}
	if (st)
		st->rst_handoff++;
	return SLUICE_ACT_HANDOFF;
}

/* A hand-off frame in the given direction, on the device it is for: its
 * EtherType back, its trailer off, and on its way (out of the device, or
 * into it).  Anything else goes on to the next program or the stack. */
static __always_inline int handoff_take(struct __sk_buff *skb, __u8 dir)
{
	struct sluice_handoff_trailer t;
	struct sluice_if_stats *st;
	struct sluice_iface *ifc;
	__u32 ifindex = skb->ifindex, slot;
	__be16 h_proto;

	/* The frame's own EtherType, not only the skb's protocol: a RST this
	 * program sent out keeps the skb protocol it came in with, and passes
	 * tcx egress (sluice_tc_out) with its real EtherType restored. */
	if (skb->protocol != bpf_htons(SLUICE_ETH_P_HANDOFF) ||
	    bpf_skb_load_bytes(skb, offsetof(struct ethhdr, h_proto), &h_proto, sizeof(h_proto)) ||
	    h_proto != bpf_htons(SLUICE_ETH_P_HANDOFF))
		return TC_ACT_UNSPEC;
	ifc = bpf_map_lookup_elem(&sl_ifaces, &ifindex);
	if (!ifc)
		return TC_ACT_UNSPEC;
	slot = ifc->slot;
	st = bpf_map_lookup_elem(&sl_if_stats, &slot);
	if (skb->len < ETH_HLEN + sizeof(t) ||
	    bpf_skb_load_bytes(skb, skb->len - sizeof(t), &t, sizeof(t)) ||
	    t.magic != SLUICE_HANDOFF_MAGIC || t.dir != dir || t.cookie != ifc->cookie) {
		/* Someone else's experiment with the same EtherType. */
		if (st)
			st->handoff_foreign++;
		return TC_ACT_UNSPEC;
	}
	if (bpf_skb_store_bytes(skb, offsetof(struct ethhdr, h_proto), &t.proto, sizeof(t.proto), 0) ||
	    bpf_skb_change_tail(skb, skb->len - sizeof(t), 0))
		return TC_ACT_SHOT;
	if (st) {
		if (dir == SLUICE_HANDOFF_OUT)
			st->handoff_out++;
		else
			st->handoff_in++;
	}
	return bpf_redirect(ifindex, dir == SLUICE_HANDOFF_IN ? BPF_F_INGRESS : 0);
}

/* tcx ingress: XDP's RSTs, out of the device. */
SEC("tc")
int sluice_tc_in(struct __sk_buff *skb)
{
	return handoff_take(skb, SLUICE_HANDOFF_OUT);
}

/* tcx egress: the daemon's held SYNs, into the device's receive path. */
SEC("tc")
int sluice_tc_out(struct __sk_buff *skb)
{
	return handoff_take(skb, SLUICE_HANDOFF_IN);
}

#endif /* SLUICE_BPF_HANDOFF_H */
