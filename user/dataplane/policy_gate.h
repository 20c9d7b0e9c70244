/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The load-scheduler gate of each policy in the data path (sl_pol_gate,
 * mmapped; sl_wl_tokens), from the daemon's side: the only userspace code
 * that writes them.  The order of the stores is the protocol: waiting and
 * credit before the mode, so a SYN that sees THROTTLE sees them too.
 */
#ifndef SLUICE_POLICY_GATE_H
#define SLUICE_POLICY_GATE_H

#include <stdbool.h>
#include <stdint.h>

#include "dataplane/dataplane.h"

/* Whether the data plane has a gate for this policy index. */
bool sl_gate_present(const struct sl_dataplane *dp, unsigned policy);
/* Take back what is left of the credit (an exchange with 0): tokens the
 * data path takes after it find none and defer, tokens it gives back after
 * it are collected next time.  Milli-tokens. */
int64_t sl_gate_take_back(struct sl_dataplane *dp, unsigned policy);
/* Pass-through: every SYN passes; waiting is shown, not used. */
void sl_gate_pass(struct sl_dataplane *dp, unsigned policy, uint64_t waiting);
/* Throttle with `grant_mtok` more credit (may be 0) and `waiting` flows in
 * the daemon's scheduler. */
void sl_gate_throttle(struct sl_dataplane *dp, unsigned policy, uint64_t waiting,
		      int64_t grant_mtok);
/* LIMIT mode (a limit of connections in flight): at most `limit` slots
 * held (below what is held under a cut), `waiting` flows in the daemon's
 * queue.  The count held is the holders', never written here. */
void sl_gate_limit(struct sl_dataplane *dp, unsigned policy, uint64_t waiting, uint64_t limit);
/* A slot for a connection the daemon dispatches: true when one was free. */
bool sl_gate_take_slot(struct sl_dataplane *dp, unsigned policy);
/* A slot back (a connection that held one is gone, or never was). */
void sl_gate_give_slot(struct sl_dataplane *dp, unsigned policy);
/* Open (a policy removed or replaced): no credit, nothing waiting; the
 * slots still held stay counted until their holders give them back. */
void sl_gate_open(struct sl_dataplane *dp, unsigned policy);
/* The policy that runs the gate (what a restart keeps at this index):
 * written at each configuration, read at start.  "" when none ever did. */
void sl_gate_set_policy(struct sl_dataplane *dp, unsigned index, const char *name);
/* The milli-tokens one connection of workload slot `slot` takes. */
int sl_gate_set_tokens(struct sl_dataplane *dp, unsigned policy, unsigned slot, uint32_t mtok);

struct sl_gate_view {
	bool throttle;
	bool limit;          /* LIMIT mode: slots_held of slot_limit */
	int64_t credit_mtok; /* THROTTLE */
	int64_t slots_held, slot_limit;
	char policy[SLUICE_LEVEL_NAME_LEN];
	uint64_t grants;
};
/* A reading of the gate (for dumps).  0, or -ENOENT without one. */
int sl_gate_read(const struct sl_dataplane *dp, unsigned policy, struct sl_gate_view *out);

#endif
