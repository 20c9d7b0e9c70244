// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What every policy mode calls (policy_rt_int.h): its gate in the data
 * path, its workloads' parameters, slots and counters, its external
 * signal's datagrams.  Below the modes: policy_rt.c picks a mode and runs
 * it, the modes call only this.
 */
#include <stdio.h>
#include <string.h>

#include "daemon/ext_signal.h"
#include "daemon/policy_rt_int.h"
#include "dataplane/dataplane.h"
#include "dataplane/policy_gate.h"
#include "lib/log.h"
#include "sluice_abi.h"

bool policy_has_gate(const struct policy_rt *p)
{
	return sl_gate_present(p->ps->dp, p->index);
}

int policy_ls_workload(unsigned workload)
{
	return workload == SLUICE_NONE16 || workload >= SLUICE_MAX_WORKLOADS ? -1 : (int)workload;
}

const struct sl_workload_params *policy_workload_params(const struct sl_policy_cfg *pc,
							 unsigned workload)
{
	int w = policy_ls_workload(workload);

	return w >= 0 && (size_t)w < pc->n_workloads ? &pc->workloads[w].params : &pc->default_params;
}

unsigned policy_wl_slot(int workload)
{
	return workload < 0 ? SLUICE_WL_DEFAULT : (unsigned)workload;
}

void policy_read_wl_stats(const struct policy_rt *p, unsigned slot, struct sluice_wl_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (p->ps->dp)
		sl_maps_wl_stats(&p->ps->dp->maps, p->index, slot, out);
}

const char *policy_workload_name(const struct policy_rt *p, size_t w, size_t n, char *buf)
{
	if (w + 1 == n)
		return "default";
	if (p->cfg->workloads[w].name)
		return p->cfg->workloads[w].name;
	snprintf(buf, 24, "%zu", w);
	return buf;
}

/* Everything the application sent since the last tick. */
void policy_ext_drain(struct policy_rt *p)
{
	if (sl_ext_drain(p->ext_fd, &p->ext_sum, &p->ext_n) && !p->external_warned) {
		pr_warn("policy %s: external signal: ignoring a datagram that is not a number of ms",
			p->name);
		p->external_warned = true;
	}
}
