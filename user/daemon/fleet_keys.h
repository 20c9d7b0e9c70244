/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The fleet's keys in etcd, one level's under /sluice/<fleet>/<level>/
 * (the contract between the hosts of a fleet; etcd_v3.h carries them):
 *
 *   seats/member/<node>  {"floor": N}                  no lease: the floor stays
 *                                                      until `sluicectl fleet forget`
 *   seats/claim/<node>   {"extra": N}                  on the node's lease
 *   want/<node>          {"in_use": N, "wants": N,     on the node's lease
 *                         "budget": N}
 *
 * A member is live while its claim exists (it goes with the lease); the
 * guarded transactions compare the seats/ prefix only, so a want written
 * each sync does not void another host's raise.
 */
#ifndef SLUICE_DAEMON_FLEET_KEYS_H
#define SLUICE_DAEMON_FLEET_KEYS_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/etcd_v3.h"
#include "engine/fleet_share.h"

#define SL_FLEET_NODE_MAX 63

enum sl_fleet_key_kind {
	SL_FLEET_KEY_MEMBER,
	SL_FLEET_KEY_CLAIM,
	SL_FLEET_KEY_WANT,
};

/* The level's prefix ("/sluice/pg/db/"), its seats/ prefix, or a node's
 * key.  The length, or -E2BIG. */
int sl_fleet_prefix(char *buf, size_t size, const char *fleet, const char *level);
int sl_fleet_seats_prefix(char *buf, size_t size, const char *fleet, const char *level);
int sl_fleet_key(char *buf, size_t size, const char *fleet, const char *level, enum sl_fleet_key_kind kind,
		 const char *node);

/* Values: malloc'd JSON, or NULL. */
char *sl_fleet_value_member(uint32_t floor);
char *sl_fleet_value_claim(uint32_t extra);
char *sl_fleet_value_want(uint32_t in_use, uint32_t wants, uint32_t budget);

struct sl_fleet_node {
	char node[SL_FLEET_NODE_MAX + 1];
	struct sl_fleet_member m;
	int64_t lease;      /* its claim's lease (0: not live) */
};

/* The members a range of the level's prefix holds, sorted by node name
 * (the order every host computes the same targets in).  Keys of other
 * shapes are skipped, as are values that do not read (a host of another
 * version: said by the caller from *skipped).  0 or -E2BIG (more than
 * max members). */
int sl_fleet_members(const struct sl_etcd_kv *kvs, size_t n, const char *prefix, struct sl_fleet_node *out,
		     size_t max, size_t *n_out, size_t *skipped);

#endif
