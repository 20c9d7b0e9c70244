/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The programs that make a refusal leave on any interface (adapter;
 * bpf/handoff.h, bpf/tx_watch.h): sluice_tc_in and sluice_tc_out as tcx
 * links on every protected interface, and the raw tracepoints that count
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

#include "dataplane/dataplane.h"

/* Attach (or take over) every interface's tcx links and the tracepoints;
 * each failure logged as one line. */
void sl_tx_hooks_attach(struct sl_dataplane *dp);
/* Whether interface i has both tc programs: its hand-off is delivered. */
bool sl_tx_hooks_ready(const struct sl_dataplane *dp, size_t i);
/* keep: close our fds and leave everything attached and pinned; else
 * detach and unpin. */
void sl_tx_hooks_detach(struct sl_dataplane *dp, bool keep);

#endif
