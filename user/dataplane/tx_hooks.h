/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The programs that make a refusal leave on any interface (adapter;
 * bpf/handoff.h, bpf/tx_watch.h): sluice_tc_in and sluice_tc_out as tcx
 * links on every protected interface (or clsact filters, below), and the raw tracepoints that count
 * the XDP_TX frames a driver dropped.  Every link is pinned under
 * <pin-dir>/links, so that a daemon stopped with --keep-attached (or a
 * crashed one) leaves refusals deliverable, and the next one takes them
 * over: a tcx link by bpf_link_update, atomically; a tracepoint by a new
 * link before the old pin goes.
 *
 * Nothing here is fatal: an interface whose tc programs cannot be attached
 * has no hand-off (its RSTs go by XDP_TX, proven or not, and its held SYNs
 * by ticket), and the daemon says so (tx_path_rt.c).
 */
#ifndef SLUICE_TX_HOOKS_H
#define SLUICE_TX_HOOKS_H

#include <stdbool.h>
#include <stdint.h>

#include "dataplane/dataplane.h"

/* Where the kernel has no tcx (before 6.6), the hand-off programs are
 * cls_bpf filters on the interface's clsact qdisc, under a handle and
 * priority of sluice's own: a restart replaces them in place, a detach
 * removes only them. */
#define SL_TC_HANDLE   0x51ceu
#define SL_TC_PRIORITY 1

/* Attach (or take over) every interface's tcx links and the tracepoints;
 * each failure logged as one line. */
void sl_tx_hooks_attach(struct sl_dataplane *dp);
/* Whether interface i has both tc programs: its hand-off is delivered. */
bool sl_tx_hooks_ready(const struct sl_dataplane *dp, size_t i);
/* keep: close our fds and leave everything attached and pinned; else
 * detach and unpin. */
void sl_tx_hooks_detach(struct sl_dataplane *dp, bool keep);
/* Remove sluice's clsact filters from the interface, each only while it
 * runs the program given (0: whichever).  How many were removed. */
int sl_tx_hooks_remove_clsact(int ifindex, uint32_t in_prog_id, uint32_t out_prog_id);

#endif
