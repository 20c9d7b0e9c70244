/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The kernel's statistics of sluice's programs (adapter): how often each
 * ran and for how long, counted while run-time statistics are on
 * (kernel.bpf_stats_enabled, or a BPF_ENABLE_STATS descriptor held open).
 * For `sluicectl cost` and the daemon's metrics; needs no daemon. */
#ifndef SLUICE_PROG_STATS_H
#define SLUICE_PROG_STATS_H

#include <stdint.h>

#include "lib/cost.h"

/* The programs whose cost is measured, in lib/cost.h's order. */
extern const char *const sl_cost_prog_names[SL_COST_PROGS];

struct sl_prog_stats {
	uint32_t id;
	uint64_t runs, run_ns;
};

/* The program pinned as PIN_DIR/progs/NAME.  0, or a negative errno
 * (-ENOENT: none pinned). */
int sl_prog_stats_read(const char *pin_dir, const char *name, struct sl_prog_stats *out);

/* Id of the program pinned at <pin_dir>/progs/<name>, 0 if none. */
uint32_t sl_pinned_prog_id(const char *pin_dir, const char *name);

/* The running daemon's own programs, as sl_cost_prog_names lists them
 * (its metrics).  0, or a negative errno. */
struct sl_dataplane;
int sl_dataplane_prog_stats(const struct sl_dataplane *dp, struct sl_prog_stats out[SL_COST_PROGS]);

/* Turn the kernel's run-time statistics on for as long as the returned
 * descriptor stays open (they cost two clock reads a run, so nobody keeps
 * them on by default).  A descriptor, or a negative errno. */
int sl_prog_stats_enable(void);

#endif
