/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The policy runtime's records, shared by its files only (as
 * admission_int.h is admission's): policy_rt.c runs them, policy_report.c
 * dumps and measures them.
 */
#ifndef SLUICE_POLICY_RT_INT_H
#define SLUICE_POLICY_RT_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "config/config.h"
#include "daemon/policy_limit.h"
#include "daemon/policy_rt.h"
#include "dataplane/dataplane.h"
#include "engine/aimd.h"
#include "engine/loadsched.h"
#include "sluice_abi.h"

struct policy_mode;
struct json_out;

struct policy_rt {
	char name[SL_LEVEL_NAME_SIZE];
	const struct sl_policy_cfg *cfg;
	struct sl_policies *ps;
	unsigned index;               /* in cfg->policies: the data path's gate index */
	const struct policy_mode *mode; /* what runs it: policy_aperture.c or policy_sluice.c */
	bool external_warned;
	int ext_fd;                   /* signal.external_socket, bound; -1 without */
	double ext_sum;               /* this period's datagrams */
	uint64_t ext_n;
	/* Mode aperture's (policy_aperture.c only). */
	struct sl_aimd aimd;
	bool aimd_made;               /* aimd initialised here (not kept from the old set) */
	bool have_out;
	struct sl_aimd_out out;
	uint64_t next_period_ns;
	struct sl_ls *ls;
	struct sluice_wl_stats seen[SLUICE_WL_SLOTS]; /* data path counters already fed */
	uint32_t tokens_written[SLUICE_WL_SLOTS];     /* sl_wl_tokens as last written + 1 */
	/* Mode sluice's (policy_sluice.c only). */
	struct sl_plimit *lim;
};

/* A workload's counts, whichever mode runs it: what the metrics show. */
struct policy_workload_counts {
	uint64_t admitted, admitted_inline, deferred, rejected, waiting;
};

/* The per-policy gauges every mode answers (NaN where it has none). */
enum policy_gauge {
	POLICY_SIGNAL_S, POLICY_SETPOINT_S, POLICY_OVERLOAD, POLICY_LOAD_MULTIPLIER,
	POLICY_PASS_THROUGH, POLICY_FILL_RATE, POLICY_INCOMING_RATE, POLICY_WAITING,
	POLICY_GAUGE_N
};

/*
 * One interface per policy mode: the runtime (policy_rt.c) and its
 * reports (policy_report.c) call these and know nothing of either mode's
 * scheduler or controller.  A reload is prepare (may fail, touches
 * nothing of the running set), adopt (takes from the old record of the
 * same name what prepare kept: old may run the other mode), start (once
 * the new set is in place); release frees a record, admitting whatever
 * waits in it.
 */
struct policy_mode {
	const char *name;            /* "aperture", "sluice": the config's and the dump's */
	bool takes_slots;            /* admits by slots of an in-flight limit (the gate's count) */
	int (*prepare)(struct policy_rt *p, const struct policy_rt *old, uint64_t now);
	void (*adopt)(struct policy_rt *p, struct policy_rt *old);
	void (*start)(struct policy_rt *p, uint64_t now);
	void (*release)(struct policy_rt *p, uint64_t now);
	/* Before a new set takes over: what the data path holds goes back. */
	void (*reclaim)(struct policy_rt *p, uint64_t now);
	int (*arrive)(struct policy_rt *p, uint64_t now, uint64_t id, unsigned workload, uint64_t flow);
	bool (*can_requeue)(const struct policy_rt *p, unsigned workload, uint64_t arrival_ns,
			    uint64_t now);
	int (*requeue)(struct policy_rt *p, uint64_t now, uint64_t id, unsigned workload, uint64_t flow,
		       uint64_t arrival_ns);
	/* The level refused what the policy admitted: its tokens come back. */
	void (*give_back)(struct policy_rt *p, unsigned workload, uint64_t now);
	void (*closed)(struct policy_rt *p, unsigned workload, uint64_t duration_ns, uint64_t queued_ns,
		       uint32_t srtt_us, bool served, uint64_t now);
	void (*tick)(struct policy_rt *p, uint64_t now);
	/* Reports: the policy's object after its name, its workloads' counts,
	 * its gauges, and the mode's own metric families over the whole set
	 * (NULL: none). */
	void (*dump)(struct policy_rt *p, struct json_out *jo, uint64_t now);
	size_t (*workload_count)(const struct policy_rt *p);
	int (*workload_counts)(struct policy_rt *p, size_t w, size_t n, uint64_t now,
			       struct policy_workload_counts *out);
	double (*gauge)(struct policy_rt *p, enum policy_gauge g, uint64_t now);
	void (*families)(struct sl_policies *ps, FILE *f);
};

extern const struct policy_mode policy_mode_aperture; /* policy_aperture.c */
extern const struct policy_mode policy_mode_sluice;   /* policy_sluice.c */

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
/* Its workload's index in the schedulers (-1: the default workload). */
int policy_ls_workload(unsigned workload);
/* Its workload's parameters (the default's for the default workload). */
const struct sl_workload_params *policy_workload_params(const struct sl_policy_cfg *pc,
							 unsigned workload);
/* A workload's display name: its name, its index when unnamed (Aperture's
 * label), "default" for the last.  buf: 24 bytes. */
const char *policy_workload_name(const struct policy_rt *p, size_t w, size_t n, char *buf);
/* Whether the data path has the policy's gate. */
bool policy_has_gate(const struct policy_rt *p);
/* The external signal's datagrams since the last call (into ext_sum, ext_n). */
void policy_ext_drain(struct policy_rt *p);

#endif
