/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A held frame's way out of the daemon (adapter), on any interface
 * (docs/ARCHITECTURE.md "Refusals and re-injection on any interface"):
 * both go through the daemon's packet socket on the device the frame came
 * in on, which every device has; neither through the device's XDP transmit
 * (a veth drops that silently unless its peer has NAPI), nor through a
 * live-frame BPF_PROG_TEST_RUN (EPERM to the daemon on Linux 6.18, and the
 * same XDP transmit for its RSTs).
 *
 * sl_inject_syn: an admitted SYN, wrapped as a hand-off frame: sent out of
 * the device, sluice_tc_out (tcx egress) takes it before it leaves,
 * unwraps it and redirects it into the device's receive path, as if it
 * had just arrived.  In native mode the device's XDP program does not see
 * it; in generic mode it does, and finds the connection already in
 * sl_conns (the caller records it first): admitted exactly once either way.
 *
 * sl_inject_reset: the RST the data path would have sent (sluice_reset,
 * run with BPF_PROG_TEST_RUN on a copy of the frame), sent out of the
 * device as it is.
 */
#ifndef SLUICE_INJECT_H
#define SLUICE_INJECT_H

#include <stddef.h>
#include <stdint.h>

#include "dataplane/dataplane.h"

/* Open the packet socket (at start, before privileges are dropped: sending
 * on it needs none; opening it, CAP_NET_RAW).  0 or -errno, logged. */
int sl_inject_open(struct sl_dataplane *dp);
void sl_inject_close(struct sl_dataplane *dp);

/* 0; -ENOTSUP without the socket, the programs, or (a SYN) the interface's
 * hand-off; -ENODEV for a device that is not one of ours; or the send's
 * errno (-EAGAIN: the device's queue is full; never waits). */
int sl_inject_syn(struct sl_dataplane *dp, const uint8_t *frame, size_t len, uint32_t ifindex);
int sl_inject_reset(struct sl_dataplane *dp, const uint8_t *frame, size_t len, uint32_t ifindex);

#endif
