/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The way out of the daemon for a frame it held (user/dataplane/inject.c):
 * two XDP programs it runs with BPF_PROG_TEST_RUN on the frame, never
 * attached to a device.  sluice_inject puts an admitted SYN back into the
 * stack; sluice_reset answers a refused one with the RST the data path
 * would have sent.  A section of sluice.bpf.c, kept apart as the end of a
 * deferred SYN's walk (docs/ARCHITECTURE.md).
 */
#ifndef SLUICE_BPF_HELD_FRAMES_H
#define SLUICE_BPF_HELD_FRAMES_H

#include "parse.h"
#include "rst.h"

/* Run on a held SYN with BPF_PROG_TEST_RUN (live frames, the original
 * ingress device): XDP_PASS builds it into an skb and delivers it through
 * netif_receive_skb, as if it had just arrived. */
SEC("xdp")
int sluice_inject(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_PASS;
}

/* The same, for a held SYN (or ACK) the daemon rejects: the RST the data
 * path would have sent, out of the device it came in on. */
SEC("xdp")
int sluice_reset(struct xdp_md *ctx)
{
	struct syn_pkt p = {};

	enum parse_result r = parse_frame(ctx, &p);

	if ((r != PARSE_SYN && r != PARSE_ACK) || build_rst(ctx, &p))
		return XDP_ABORTED;
	return XDP_TX;
}

#endif
