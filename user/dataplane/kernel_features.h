/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The kernel features sluice uses (adapter: each is probed on this host),
 * in one table: the kernel that brought each, and the way sluice takes
 * where it is missing.  `sluiced --check` prints the table with what this
 * host has; `sluiced --requirements` prints it as README.md's Markdown
 * table (a test keeps the two equal).  The daemon says each fallback once
 * at start, where it takes it (tx_hooks.c, ifaces.c).
 */
#ifndef SLUICE_KERNEL_FEATURES_H
#define SLUICE_KERNEL_FEATURES_H

#include <stdbool.h>
#include <stdio.h>

enum sl_feature_id {
	SL_FEAT_BTF,
	SL_FEAT_CGROUP2,
	SL_FEAT_HELPERS,
	SL_FEAT_PROGRAMS,
	SL_FEAT_TCX,
	SL_FEAT_XDP_FEATURES,
	SL_FEAT__COUNT,
};

struct sl_feature {
	const char *name;    /* what sluice uses */
	const char *since;   /* the kernel that brought it */
	const char *without; /* what sluice does where it is missing; NULL: it cannot run */
};

extern const struct sl_feature sl_features[SL_FEAT__COUNT];

enum sl_feature_state {
	SL_FEAT_ABSENT = 0,
	SL_FEAT_PRESENT = 1,
	SL_FEAT_UNKNOWN = 2, /* the probe could not tell (not root, say) */
};

struct sl_feature_probe {
	enum sl_feature_state state[SL_FEAT__COUNT];
	char detail[SL_FEAT__COUNT][160]; /* why absent or unknown */
};

/* Probe every feature; load_programs: also load sluice's object once (the
 * verifier's word; needs CAP_BPF), else SL_FEAT_PROGRAMS stays unknown. */
void sl_features_probe(struct sl_feature_probe *p, bool load_programs);
/* Whether sluice can protect this host: no feature without a fallback is
 * absent (unknown is not enough). */
bool sl_features_sufficient(const struct sl_feature_probe *p);
/* sluiced --check: the table with this host's answers. */
void sl_features_print(FILE *f, const struct sl_feature_probe *p, const char *kernel);
/* sluiced --requirements: the table as Markdown (README.md's). */
void sl_features_print_markdown(FILE *f);

#endif
