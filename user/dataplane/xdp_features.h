/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What a device says it can do with XDP: the netdev generic-netlink
 * family's xdp-features (NETDEV_CMD_DEV_GET).  sluice reads one bit,
 * NDO_XMIT: whether the driver transmits XDP frames at all.  A veth sets
 * it only while its peer has NAPI (an XDP program, or GRO on), which is
 * exactly when its XDP_TX frames are delivered rather than dropped.
 */
#ifndef SLUICE_XDP_FEATURES_H
#define SLUICE_XDP_FEATURES_H

#include <stdint.h>

/* The bits are NETDEV_XDP_ACT_* (linux/netdev.h; Debian 12's headers
 * predate it); the one sluice reads is engine/tx_path.h's. */

struct sl_genl_netdev {
	int fd;
	uint16_t family; /* 0: the kernel has no netdev family (before 6.3) */
	uint32_t seq;
};

/* Open a generic-netlink socket and resolve the family.  -errno; a kernel
 * without the family is not an error (family stays 0). */
int sl_genl_netdev_open(struct sl_genl_netdev *g);
void sl_genl_netdev_close(struct sl_genl_netdev *g);
/* The device's xdp-features: 0, -ENOTSUP (no family), -ENODEV, -errno.
 * Bounded: waits at most 100 ms for the kernel's answer. */
int sl_xdp_features(struct sl_genl_netdev *g, int ifindex, uint64_t *out);

#endif
