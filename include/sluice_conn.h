/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A connection's record in sl_conns as it is admitted, built one way for
 * the data path (an inline admission, a claimed ticket) and the daemon (a
 * held SYN it puts back), so that the three cannot disagree on a field.
 */
#ifndef SLUICE_CONN_H
#define SLUICE_CONN_H

#include "sluice_abi.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* Admitted now (not yet established), holding `seats` of `level` and, with
 * SLUICE_CONNF_POLICY_SLOT in flags, a slot of its policy; syn_seq is the
 * client's SYN sequence number (network order).  Every field, one by one
 * (the struct has no implicit padding): in BPF an initialiser can become
 * a .rodata template, and a memset costs stores on the SYN's path. */
static __always_inline void sluice_conn_admitted(struct sluice_conn *c, __u64 now, __u32 level,
						 __u32 seats, __u16 schema, __u16 policy,
						 __u16 workload, __u16 flags, __be32 syn_seq)
{
	c->admitted_ns = now;
	c->established_ns = 0;
	c->level = level;
	c->seats = seats;
	c->state = SLUICE_CONN_ADMITTED;
	c->srtt_us = 0;
	c->schema = schema;
	c->policy = policy;
	c->workload = workload;
	c->flags = flags;
	c->syn_seq = syn_seq;
	c->pad2 = 0;
}

#endif
