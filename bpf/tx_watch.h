/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Proof that XDP_TX delivers, or that it does not: the kernel reports every
 * XDP_TX frame a driver could not send through its xdp tracepoints
 * (xdp_bulk_tx from a veth's flush, with its drops; xdp_exception from a
 * driver's failed transmit and from generic XDP's).  These raw tracepoints
 * count them for the protected interfaces (sl_if_stats) and stamp the time
 * on this CPU, so that the data path's next RST there takes the hand-off
 * (handoff.h) at once, whether or not a daemon runs.  The daemon reads the
 * counts, counts them as failed refusals and says so.
 */
#ifndef SLUICE_BPF_TX_WATCH_H
#define SLUICE_BPF_TX_WATCH_H

#include <linux/bpf.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "maps.h"

/* The one field we read, relocated against the running kernel's BTF. */
struct net_device {
	int ifindex;
} __attribute__((preserve_access_index));

static __always_inline void count_tx_drops(const struct net_device *dev, __u32 n)
{
	__u32 ifindex = (__u32)BPF_CORE_READ(dev, ifindex), slot;
	struct sluice_if_stats *st;
	struct sluice_iface *ifc;

	ifc = bpf_map_lookup_elem(&sl_ifaces, &ifindex);
	if (!ifc)
		return; /* not one of ours */
	slot = ifc->slot;
	st = bpf_map_lookup_elem(&sl_if_stats, &slot);
	if (!st)
		return;
	st->tx_dropped += n;
	st->tx_drop_ns = bpf_ktime_get_ns();
}

SEC("raw_tp/xdp_bulk_tx")
int BPF_PROG(sluice_tx_bulk, const struct net_device *dev, int sent, int drops, int err)
{
	if (drops > 0)
		count_tx_drops(dev, (__u32)drops);
	return 0;
}

SEC("raw_tp/xdp_exception")
int BPF_PROG(sluice_tx_exc, const struct net_device *dev, const void *xdp, __u32 act)
{
	if (act == XDP_TX)
		count_tx_drops(dev, 1);
	return 0;
}

#endif /* SLUICE_BPF_TX_WATCH_H */
