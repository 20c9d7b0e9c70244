/*
 * The adaptive controller of each AverageLatencySchedulingPolicy, running
 * in the daemon on the connections' real latency (adapter).
 *
 * Stage: observe.  Every completed connection a policy selects (sock_ops
 * close event: admission to close, or its smoothed RTT with `signal.type:
 * srtt`) feeds the policy's gradient controller (or, with `external`, a
 * number the application writes to signal.external_path each period),
 * which runs each control period and publishes signal, setpoint, overload,
 * gradient, integrator, load multiplier and pass-through, shown by
 * `sluicectl controller`.  The data path does not act on the multiplier
 * yet (the token-bucket gate is the next step, see docs/ARCHITECTURE.md),
 * so every connection counts as accepted.
 */
#ifndef SLUICE_POLICY_RT_H
#define SLUICE_POLICY_RT_H

#include <stdint.h>
#include <stdio.h>

#include "config.h"

struct sl_policies;

int sl_policies_create(struct sl_policies **out);
void sl_policies_free(struct sl_policies *ps);
/* (Re)configure: policies keep their history when their name survives a
 * reload; the configuration must outlive the next call. */
int sl_policies_configure(struct sl_policies *ps, const struct sl_config *cfg, uint64_t now);
/* A connection of policy `policy` (index in cfg->policies), workload
 * `workload` (SLUICE_NONE16 = default) closed after duration_ns, with its
 * last smoothed RTT. */
void sl_policies_on_close(struct sl_policies *ps, unsigned policy, unsigned workload,
			  uint64_t duration_ns, uint32_t srtt_us, uint64_t now);
void sl_policies_tick(struct sl_policies *ps, uint64_t now);
/* {"policies": [...]} for `sluicectl controller`. */
void sl_policies_dump(struct sl_policies *ps, FILE *f);

#endif
