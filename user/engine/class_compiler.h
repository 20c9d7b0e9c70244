/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Compile a configuration's classification into the data path's tables
 * (pure; docs/ARCHITECTURE.md "Compiled classification").
 *
 * Every predicate sluice knows depends on the source address, the local
 * address, the client port and the local port.  Each dimension is cut
 * into classes by the CIDRs and port boundaries the configuration
 * mentions (class_dims.h).  Each FlowSchema rule, and each policy's
 * selectors with each of its workloads, becomes a term: a conjunction of
 * class sets over the dimensions it constrains (class_terms.h,
 * class_labels.h).  Terms expand, in rank order, into tuple-space
 * entries keyed by (kind, mask, class ids); an entry that an earlier one
 * under a sub-mask already decides is left out.  Build time and size grow
 * with the terms' own sizes, not with the product of the dimensions.
 */
#ifndef SLUICE_CLASS_COMPILER_H
#define SLUICE_CLASS_COMPILER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "config/diag.h"
#include "engine/class_dims.h"
#include "engine/class_inputs.h"
#include "sluice_abi.h"
#include "sluice_class.h"

struct sl_class_entry {
	struct sluice_class_key key; /* gen left 0: the writer sets it */
	struct sluice_class val;
};

struct sl_compiled {
	struct sl_prefix_class *src, *dst;
	size_t n_src, n_dst;
	uint16_t *sport_cls, *dport_cls; /* 65536 each */
	uint16_t n_sport_cls, n_dport_cls;
	struct sl_class_entry *entries;  /* sorted by key */
	size_t n_entries;
	struct sluice_class default_class; /* mask 0: schema and policy parts */
	uint16_t masks;                    /* masks in use (bit m) */
	uint64_t digest;                   /* sl_class_digest of the inputs */
	size_t n_terms;                    /* terms expanded */
	size_t n_shadowed;                 /* combinations an earlier entry decides */
};

/* 0, or a negative errno with a diagnostic (table full, a regex on an
 * address or port label, overlapping policies, ...). */
int sl_compile_classes(const struct sl_class_inputs *in, struct sl_compiled *out,
		       struct sl_diags *diags);
int sl_compiled_copy(struct sl_compiled *dst, const struct sl_compiled *src);
void sl_compiled_free(struct sl_compiled *c);
/* Whether two compilations give the data path the same tables. */
bool sl_compiled_equal(const struct sl_compiled *a, const struct sl_compiled *b);
/* What the data path finds for these class ids (each half's
 * lowest-ranked candidate, over the default): for tests and tools that check a
 * compilation without a kernel. */
void sl_compiled_lookup(const struct sl_compiled *c, const uint16_t ids[SL_DIMS],
			struct sluice_class *out);

#endif
