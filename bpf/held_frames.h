/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The RST for a frame the daemon held (user/dataplane/inject.c): an XDP
 * program it runs with BPF_PROG_TEST_RUN on the frame, never attached to a
 * device.  sluice_reset turns a refused SYN (or ACK) into the RST the data
 * path would have sent and returns it as the run's output; the daemon sends
 * it through its packet socket.  (An admitted held SYN goes back in through
 * sluice_tc_out: handoff.h.)  The end of a deferred SYN's walk
 * (docs/ARCHITECTURE.md).
 */
#ifndef SLUICE_BPF_HELD_FRAMES_H
#define SLUICE_BPF_HELD_FRAMES_H

#include "parse.h"
#include "rst.h"

/* A held SYN (or ACK) the daemon rejects: the RST the data path would
 * have sent, as the test run's output frame. */
SEC("xdp")
int sluice_reset(struct xdp_md *ctx)
{
	struct syn_pkt p = {};

	enum parse_result r = parse_frame(ctx, &p);

	if ((r != PARSE_SYN && r != PARSE_ACK) || build_rst(ctx, &p, 0) < 0)
		return XDP_ABORTED;
	return XDP_TX;
}

#endif
