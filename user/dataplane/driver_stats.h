/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A device's driver statistics (adapter: the ethtool ioctls).  Some drivers
 * drop XDP_TX frames without a tracepoint: virtio_net, the NIC of most
 * cloud VMs, counts a full ring's drops only in its own tx_xdp_tx_drops.
 * engine/tx_path.h picks the counter; this reads them.
 */
#ifndef SLUICE_DRIVER_STATS_H
#define SLUICE_DRIVER_STATS_H

#include <stdint.h>

/* The XDP_TX frames the driver of ifname (in this network namespace)
 * counted as dropped since it came up.  0, -EOPNOTSUPP when the driver
 * keeps no such counter, or -errno. */
int sl_driver_xdp_tx_drops(const char *ifname, uint64_t *drops);

#endif
