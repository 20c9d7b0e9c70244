/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Sharing the interface with other XDP programs without freplace (adapter):
 * where the kernel refuses BPF_PROG_TYPE_EXT, libxdp's dispatcher cannot
 * load, but tail calls work.  Two ways, both Server spec.xdpChain:
 *  - next: sluice is the interface's program and hands every frame it
 *    passes to a pinned program (sl_xdp_next, slot 0);
 *  - rootArray + slot: another program owns the interface (Katran's shared
 *    mode) and sluice takes a slot of its pinned PROG_ARRAY instead of
 *    attaching; the root's own order decides what runs before it.
 * A marker pin, links/root_array_<slot> (the root's array), lets
 * `sluicectl detach` leave the slot when no daemon runs.
 */
#ifndef SLUICE_CHAIN_H
#define SLUICE_CHAIN_H

#include <stdbool.h>
#include <stdint.h>

struct sl_dataplane;

/* Slot 0 of sl_xdp_next: the pinned XDP program at next_pin, or empty
 * (NULL).  0, or a negative errno with one line said. */
int sl_chain_set_next(struct sl_dataplane *dp, const char *next_pin);
/* Put sluice's XDP program in slot `slot` of the PROG_ARRAY pinned at
 * root_pin: replacing a previous sluiced's program there, or anything
 * with force; else -EBUSY. */
int sl_chain_join_root(struct sl_dataplane *dp, const char *root_pin, uint32_t slot, bool force);
/* At a stop that detaches: empty the slot if it still holds this program
 * (keep: leave it, for the next daemon), unpin the marker, close. */
void sl_chain_leave_root(struct sl_dataplane *dp, bool keep);

#define SL_ROOT_MARKER "root_array_" /* bpffs refuses names with a dot */

#endif
