/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What a classification compile reads (pure), and its digest: equal
 * digests, equal tables, so a reload that changes only levels or shares
 * keeps the tables it has (engine/plan.c).  The compiler
 * (class_compiler.h) reads these; nothing here reads the compiler.
 */
#ifndef SLUICE_CLASS_INPUTS_H
#define SLUICE_CLASS_INPUTS_H

#include <stddef.h>
#include <stdint.h>

#include "config/config.h"

/* What a compile reads. */
struct sl_class_inputs {
	const struct sl_config *cfg;
	const unsigned *level_slot; /* cfg->levels[i] -> its BPF slot */
	const uint32_t *seat_cap;   /* by slot: most seats one connection takes (0: no cap);
				     * NULL: no caps */
	const char *iface;          /* the value of the iface label */
	size_t max_entries;         /* the class table's capacity per generation */
};

/* Everything the compile reads, FNV-1a 64 over length-prefixed fields:
 * equal digests, equal tables.  Never 0. */
uint64_t sl_class_digest(const struct sl_class_inputs *in);
/* The seats a connection of this schema takes: seatsPerConnection, capped. */
uint32_t sl_class_seats(const struct sl_class_inputs *in, const struct sl_flow_schema *fs);

#endif
