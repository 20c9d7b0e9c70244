/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The protected interfaces as the data path sees them (adapter; the one
 * writer of sl_ifaces): each one's sl_if_stats slot, its hand-off cookie
 * and how its RSTs leave (engine/tx_path.h decides, the daemon's
 * tx_path_rt.c keeps it up to date).  Also what the kernel says of each
 * device: its xdp-features, and its counters (ours, and its driver's
 * count of XDP_TX drops: dataplane/driver_stats.h).
 */
#ifndef SLUICE_IFACES_H
#define SLUICE_IFACES_H

#include <stdint.h>

#include "dataplane/dataplane.h"
#include "engine/tx_path.h"

/* Before XDP is attached: every interface gets its entry (an adopted one
 * keeps its cookie, so the hand-off frames in flight across a restart are
 * still recognised; a new one gets a random one), chosen from what is
 * known now (the xdp-features, no drops).  0 or -errno (logged). */
int sl_ifaces_init(struct sl_dataplane *dp);
/* What one interface reads now, for engine/tx_path.h; probe: ask the
 * kernel for its xdp-features (else the last ones are taken). */
void sl_iface_reading(struct sl_dataplane *dp, size_t i, struct sl_tx_reading *r);
/* Write interface i's choice, and count lost_driver_only more XDP_TX
 * drops that only its driver saw (sluice_iface.tx_dropped_driver).  0 or
 * -errno. */
int sl_iface_publish(struct sl_dataplane *dp, size_t i, const struct sl_tx_choice *c,
		     uint64_t xdp_features, uint64_t lost_driver_only);
/* Its counters, summed over CPUs. */
int sl_iface_stats(const struct sl_dataplane *dp, size_t i, struct sluice_if_stats *out);

#endif
