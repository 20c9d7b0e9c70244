/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Putting a held SYN back (data plane): BPF_PROG_TEST_RUN on live frames
 * with the ingress device and queue the SYN came in on.  sluice_inject
 * returns XDP_PASS: the frame is built into an skb and delivered through
 * netif_receive_skb, as if it had just arrived.  sluice_reset builds the
 * data path's RST from it and returns XDP_TX: the RST goes out of that
 * same device.
 *
 * In native mode the device's own XDP program does not see an injected
 * frame; in generic mode it does, and finds the connection already in
 * sl_conns (the caller records it first): admitted exactly once either way.
 */
#ifndef SLUICE_INJECT_H
#define SLUICE_INJECT_H

#include <stddef.h>
#include <stdint.h>

#include "dataplane/dataplane.h"

/* 0, -ENOTSUP without the programs (no data plane loaded), or the errno of
 * the run (a device that is gone: -ENODEV; a queue it does not have:
 * -EINVAL). */
int sl_inject_syn(struct sl_dataplane *dp, const uint8_t *frame, size_t len, uint32_t ifindex,
		  uint32_t rx_queue);
int sl_inject_reset(struct sl_dataplane *dp, const uint8_t *frame, size_t len, uint32_t ifindex,
		    uint32_t rx_queue);

#endif
