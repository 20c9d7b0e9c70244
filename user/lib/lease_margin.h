/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * How much earlier than its etcd lease's end a fleet member gives its
 * grant up, for the clocks' and the network's slack: max(500 ms, TTL/10).
 * One rule for the configuration's check (config/fleet.c) and the
 * grant's deadline (engine/fleet_share.c).
 */
#ifndef SLUICE_LIB_LEASE_MARGIN_H
#define SLUICE_LIB_LEASE_MARGIN_H

#include <stdint.h>

#define SL_LEASE_MARGIN_MIN_NS 500000000ull

static inline uint64_t sl_lease_margin_ns(uint64_t lease_ttl_ns)
{
	return lease_ttl_ns / 10 > SL_LEASE_MARGIN_MIN_NS ? lease_ttl_ns / 10 : SL_LEASE_MARGIN_MIN_NS;
}

#endif
