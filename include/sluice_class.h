/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The classification's candidate rule, written once for the data path
 * (classify in bpf/sluice.bpf.c) and userspace (the compiler's mirror
 * sl_compiled_lookup, and the bench that rewrites a class in place).
 *
 * An entry of sl_classes carries two halves (sluice_abi.h): the schema
 * half (level, schema, seats, distinguisher, prefixes) and the policy half
 * (policy, workload).  Starting from the default class, each entry found
 * under a mask in use replaces a half when that half ranks strictly lower
 * than the best so far.  A half an entry does not carry is SLUICE_NONE16,
 * which ranks last: it never replaces anything.
 */
#ifndef SLUICE_CLASS_H
#define SLUICE_CLASS_H

#include "sluice_abi.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

static __always_inline void sluice_class_take_schema(struct sluice_class *to,
						     const struct sluice_class *from)
{
	to->level = from->level;
	to->schema = from->schema;
	to->seats = from->seats;
	to->distinguisher = from->distinguisher;
	to->prefix_v4 = from->prefix_v4;
	to->prefix_v6 = from->prefix_v6;
}

static __always_inline void sluice_class_take_policy(struct sluice_class *to,
						     const struct sluice_class *from)
{
	to->policy = from->policy;
	to->workload = from->workload;
}

/* The ranks of the best halves so far. */
struct sluice_class_best {
	__u32 schema_rank;
	__u32 policy_rank;
};

/* Begin with the candidates of mask 0. */
static __always_inline void sluice_class_begin(struct sluice_class *out,
					       const struct sluice_class *dflt,
					       struct sluice_class_best *best)
{
	*out = *dflt;
	best->schema_rank = SLUICE_SCHEMA_RANK(dflt);
	best->policy_rank = SLUICE_POLICY_RANK(dflt);
}

/* An entry found under one mask: each of its halves that ranks lower wins. */
static __always_inline void sluice_class_consider(struct sluice_class *out,
						  const struct sluice_class *c,
						  struct sluice_class_best *best)
{
	__u32 rank = SLUICE_SCHEMA_RANK(c);

	if (rank < best->schema_rank) {
		best->schema_rank = rank;
		sluice_class_take_schema(out, c);
	}
	rank = SLUICE_POLICY_RANK(c);
	if (rank < best->policy_rank) {
		best->policy_rank = rank;
		sluice_class_take_policy(out, c);
	}
}

#endif
