/*
 * Compile a configuration's classification into the data path's tables
 * (pure; docs/ARCHITECTURE.md "Compiled classification").
 *
 * Every predicate sluice knows depends on the source address, the local
 * address, the client port and the local port.  For each dimension the
 * compiler collects the CIDRs or port boundaries the configuration
 * mentions; they cut the dimension into classes, inside which every
 * predicate is constant.  It then runs the reference classifier on one
 * representative tuple per combination of classes, so the table cannot
 * disagree with `sluicectl explain`.
 */
#ifndef SLUICE_CLASS_COMPILER_H
#define SLUICE_CLASS_COMPILER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "config/diag.h"
#include "sluice_abi.h"

struct sl_prefix_class {
	uint8_t addr[16];
	uint8_t prefix_len; /* 0..128 (v4-mapped) */
	uint16_t cls;       /* >= 1; class 0 is "no prefix matched" */
};

struct sl_class_entry {
	struct sluice_class_key key; /* gen left 0: the writer sets it */
	struct sluice_class val;
};

struct sl_compiled {
	struct sl_prefix_class *src, *dst;
	size_t n_src, n_dst;
	uint16_t *sport_cls, *dport_cls; /* 65536 each */
	uint16_t n_sport_cls, n_dport_cls;
	struct sl_class_entry *entries;  /* only combinations that differ from the default */
	size_t n_entries;
	struct sluice_class default_class;
	size_t n_combinations;           /* classes multiplied out */
};

/* level_slot[i]: the BPF slot of cfg->levels[i].  iface: value of the
 * iface label.  max_entries: the class-product table's capacity.  Returns
 * 0, or a negative errno with a diagnostic (too many combinations, a
 * regex on an address or port label, ...). */
int sl_compile_classes(const struct sl_config *cfg, const unsigned *level_slot,
		       const char *iface, size_t max_entries,
		       struct sl_compiled *out, struct sl_diags *diags);
void sl_compiled_free(struct sl_compiled *c);
/* Whether two compilations give the data path the same tables. */
bool sl_compiled_equal(const struct sl_compiled *a, const struct sl_compiled *b);

#endif
