// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Mode sluice (policy_rt_int.h's interface): sluice's own limit in
 * flight (daemon/policy_limit.c: a gradient on the limit, fair queuing
 * over its slots), whose slots the data path takes at its gate.
 */
#include <errno.h>
#include <math.h>

#include "daemon/policy_limit.h"
#include "daemon/policy_rt_int.h"
#include "lib/json_out.h"
#include "lib/prom.h"

/* The limit's ctx is the policy set (stable across reloads, when a limit
 * moves to the new record). */
static bool on_limit_admit(void *ctx, uint64_t id, uint64_t now)
{
	struct sl_policies *ps = ctx;

	return !ps->hooks.admit || ps->hooks.admit(ps->hooks.ctx, id, now);
}

static void on_limit_reject(void *ctx, uint64_t id, uint64_t now, enum sl_ss_why why)
{
	struct sl_policies *ps = ctx;

	if (ps->hooks.reject)
		ps->hooks.reject(ps->hooks.ctx, id, now, why);
}

static size_t on_limit_recall(void *ctx, unsigned policy, size_t n, uint64_t now)
{
	struct sl_policies *ps = ctx;

	return ps->hooks.recall ? ps->hooks.recall(ps->hooks.ctx, policy, n, now) : 0;
}

static int lim_prepare(struct policy_rt *p, const struct policy_rt *old, uint64_t now)
{
	struct sl_plimit_hooks h = {
		.admit = on_limit_admit, .reject = on_limit_reject, .recall = on_limit_recall, .ctx = p->ps,
	};

	if (old && old->mode == p->mode && old->lim && sl_plimit_same(old->lim, p->cfg))
		return 0; /* adopted at commit */
	return sl_plimit_create(&p->lim, p->cfg, p->ps->dp, &h, now);
}

static void lim_adopt(struct policy_rt *p, struct policy_rt *old)
{
	if (old->mode != p->mode || p->lim)
		return;
	p->lim = old->lim;
	old->lim = NULL;
}

/* The gate keeps the count of the slots held through it. */
static void lim_start(struct policy_rt *p, uint64_t now)
{
	(void)now;
	sl_plimit_start(p->lim, p->index);
}

/* What waits is admitted without a slot, then the limit is freed. */
static void lim_release(struct policy_rt *p, uint64_t now)
{
	if (!p->lim)
		return;
	p->ps->dropping = true;
	sl_plimit_release_all(p->lim, now);
	p->ps->dropping = false;
	sl_plimit_free(p->lim);
	p->lim = NULL;
}

static void lim_nothing(struct policy_rt *p, uint64_t now)
{
	(void)p, (void)now; /* the data path holds slots, not credit */
}

static int lim_arrive(struct policy_rt *p, uint64_t now, uint64_t id, unsigned workload, uint64_t flow)
{
	return p->lim ? sl_plimit_arrive(p->lim, now, id, workload, flow) : -ENOENT;
}

static bool lim_can_requeue(const struct policy_rt *p, unsigned workload, uint64_t arrival_ns,
			   uint64_t now)
{
	return p->lim && sl_plimit_can_requeue(p->lim, workload, arrival_ns, now);
}

static int lim_requeue(struct policy_rt *p, uint64_t now, uint64_t id, unsigned workload, uint64_t flow,
		      uint64_t arrival_ns)
{
	return p->lim ? sl_plimit_requeue(p->lim, now, id, workload, flow, arrival_ns) : -ENOENT;
}

static void lim_give_back(struct policy_rt *p, unsigned workload, uint64_t now)
{
	(void)p, (void)workload, (void)now; /* a slot, not tokens: the runtime gives it back */
}

static void lim_closed(struct policy_rt *p, unsigned workload, uint64_t duration_ns, uint64_t queued_ns,
		      uint32_t srtt_us, bool served, uint64_t now)
{
	(void)workload, (void)srtt_us;
	if (p->lim)
		sl_plimit_complete(p->lim, now, duration_ns, queued_ns, served);
}

static void lim_tick(struct policy_rt *p, uint64_t now)
{
	if (p->lim)
		sl_plimit_tick(p->lim, now);
}

static void lim_dump(struct policy_rt *p, struct json_out *jo, uint64_t now)
{
	struct sluice_wl_stats ds[SLUICE_WL_SLOTS];
	size_t n = p->cfg->n_workloads;

	(void)now;
	for (size_t w = 0; w <= n && w < SLUICE_WL_SLOTS; w++)
		policy_read_wl_stats(p, policy_wl_slot(w < n ? (int)w : -1), &ds[w]);
	sl_plimit_dump(p->lim, p->cfg, ds, jo);
}

static size_t lim_workload_count(const struct policy_rt *p)
{
	return p->lim ? sl_ss_workloads(p->lim->ss) : 0;
}

/* The data path admits inline and defers at its gate; the slot scheduler
 * admits what waited and rejects what timed out or found its queue full. */
static int lim_workload_counts(struct policy_rt *p, size_t w, size_t n, uint64_t now,
			      struct policy_workload_counts *out)
{
	struct sluice_wl_stats ds;
	struct sl_ss_stats st;
	uint64_t at_once;

	(void)now;
	if (!p->lim)
		return -ENOENT;
	policy_read_wl_stats(p, policy_wl_slot(w + 1 < n ? (int)w : -1), &ds);
	sl_ss_stats(p->lim->ss, (unsigned)w, &st);
	at_once = p->lim->admitted_on_arrival[w];
	out->admitted = ds.inline_admitted + at_once + st.admitted;
	out->admitted_inline = ds.inline_admitted;
	out->waiting = sl_ss_waiting_in(p->lim->ss, (unsigned)w);
	/* Connections, not SYNs: a waiting client's retransmits meet the gate
	 * again (the data path's `deferred` counts each). */
	out->deferred = at_once + st.admitted + st.rejected + st.shed + st.refused + out->waiting;
	out->rejected = st.rejected + st.shed + st.refused;
	return 0;
}

static double lim_gauge(struct policy_rt *p, enum policy_gauge g, uint64_t now)
{
	const struct sl_sg_decision *d;
	bool have;

	(void)now;
	if (!p->lim)
		return NAN;
	d = &p->lim->last;
	have = p->lim->have_last;
	switch (g) {
	case POLICY_SIGNAL_S: return have ? d->signal_ms / 1000 : NAN;
	case POLICY_SETPOINT_S: return have ? d->target_ms / 1000 : NAN;
	case POLICY_OVERLOAD: return have && d->reason == SL_SG_OVERLOAD;
	case POLICY_PASS_THROUGH: return sl_plimit_limit(p->lim) == UINT32_MAX;
	case POLICY_WAITING: return (double)sl_ss_waiting(p->lim->ss);
	default: return NAN; /* no multiplier and no bucket: a limit in flight */
	}
}

/* Its limit in flight, and its decisions, for each policy in this mode. */
static void lim_families(struct sl_policies *ps, FILE *f)
{
	sl_prom_family(f, "policy_in_flight_limit", SL_PROM_GAUGE,
		       "Mode sluice: the limit of connections in flight (+Inf in pass-through).");
	for (size_t i = 0; i < ps->n; i++) {
		uint32_t l;

		if (ps->v[i].mode != &policy_mode_sluice)
			continue;
		l = sl_plimit_limit(ps->v[i].lim);
		sl_prom_sample(f, "policy_in_flight_limit", l == UINT32_MAX ? INFINITY : (double)l, "policy",
			       ps->v[i].name, NULL);
	}
	sl_prom_family(f, "policy_in_flight", SL_PROM_GAUGE,
		       "Mode sluice: connections of the policy in flight (admitted, not closed).");
	for (size_t i = 0; i < ps->n; i++)
		if (ps->v[i].mode == &policy_mode_sluice)
			sl_prom_sample(f, "policy_in_flight", (double)sl_plimit_in_flight(ps->v[i].lim),
				       "policy", ps->v[i].name, NULL);
	sl_prom_family(f, "policy_limit_decisions_total", SL_PROM_COUNTER,
		       "Mode sluice: the controller's decisions, by reason.");
	for (size_t i = 0; i < ps->n; i++)
		for (unsigned r = 0; ps->v[i].mode == &policy_mode_sluice && r <= SL_SG_PASS_THROUGH; r++)
			sl_prom_sample_u64(f, "policy_limit_decisions_total", ps->v[i].lim->decisions[r],
					   "policy", ps->v[i].name, "reason", sl_sg_reason_names[r], NULL);
}

const struct policy_mode policy_mode_sluice = {
	.name = "sluice",
	.takes_slots = true,
	.prepare = lim_prepare,
	.adopt = lim_adopt,
	.start = lim_start,
	.release = lim_release,
	.reclaim = lim_nothing,
	.arrive = lim_arrive,
	.can_requeue = lim_can_requeue,
	.requeue = lim_requeue,
	.give_back = lim_give_back,
	.closed = lim_closed,
	.tick = lim_tick,
	.dump = lim_dump,
	.workload_count = lim_workload_count,
	.workload_counts = lim_workload_counts,
	.gauge = lim_gauge,
	.families = lim_families,
};
