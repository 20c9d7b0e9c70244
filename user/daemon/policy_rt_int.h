/*
 * The policy runtime's records, shared by its files only (as
 * admission_int.h is admission's): policy_rt.c runs them, policy_report.c
 * dumps and measures them.
 */
#ifndef SLUICE_POLICY_RT_INT_H
#define SLUICE_POLICY_RT_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"
#include "daemon/policy_limit.h"
#include "daemon/policy_rt.h"
#include "dataplane/dataplane.h"
#include "engine/aimd.h"
#include "engine/loadsched.h"
#include "sluice_abi.h"

struct policy_rt {
	char name[SL_LEVEL_NAME_SIZE];
	const struct sl_policy_cfg *cfg;
	struct sl_policies *ps;
	unsigned index;               /* in cfg->policies: the data path's gate index */
	struct sl_aimd aimd;
	bool aimd_made;               /* aimd initialised here (not kept from the old set) */
	bool have_out;
	struct sl_aimd_out out;
	uint64_t next_period_ns;
	bool external_warned;
	int ext_fd;                   /* signal.external_socket, bound; -1 without */
	double ext_sum;               /* this period's datagrams */
	uint64_t ext_n;
	struct sl_ls *ls;             /* mode aperture */
	struct sl_plimit *lim;        /* mode sluice (then no aimd, no ls) */
	struct sluice_wl_stats seen[SLUICE_WL_SLOTS]; /* data path counters already fed */
	uint32_t tokens_written[SLUICE_WL_SLOTS];     /* sl_wl_tokens as last written + 1 */
};

struct sl_policies {
	struct sl_dataplane *dp;
	struct sl_policy_hooks hooks;
	struct policy_rt *v;
	size_t n;
	/* A prepared configuration (sl_policies_prepare), not yet committed:
	 * the new records, and for each the old record of the same name. */
	struct policy_rt *next;
	struct policy_rt **next_old;
	size_t next_n;
	bool dropping; /* admitting what waits in a limit that goes away: no slots */
};

/* A workload's slot in the data path's per-workload maps (the default
 * workload, -1, has the last). */
unsigned policy_wl_slot(int workload);
/* The data path's counters of a policy's workload slot (zeros without a
 * data path). */
void policy_read_wl_stats(const struct policy_rt *p, unsigned slot, struct sluice_wl_stats *out);

#endif
