// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "daemon/policy_limit.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/control.h"
#include "dataplane/policy_gate.h"
#include "engine/loadsched.h"
#include "lib/json_out.h"
#include "lib/log.h"
#include "sluice_abi.h"

void sl_plimit_params(const struct sl_policy_cfg *pc, struct sl_sg_params *sg,
		      struct sl_ss_workload *w, size_t *n_w)
{
	sl_sg_params_from_policy(sg, pc);
	*n_w = pc->n_workloads + 1;
	for (size_t i = 0; i <= pc->n_workloads; i++) {
		const struct sl_workload_params *wp = i < pc->n_workloads ? &pc->workloads[i].params
									  : &pc->default_params;

		w[i].priority = wp->priority > 0 ? wp->priority : 1;
		w[i].queue_timeout_ns = sl_workload_wait_limit_ns(wp);
		w[i].delay_target_ns = wp->queue_delay_target_ns;
		w[i].delay_interval_ns = wp->queue_delay_interval_ns;
	}
}

/* The scheduler admitted a flow with a slot taken for it: the slot goes
 * back when the flow is gone. */
static void on_admit(void *ctx, uint64_t id, uint64_t now)
{
	struct sl_plimit *pl = ctx;

	if (!pl->hooks.admit(pl->hooks.ctx, id, now) && !pl->releasing)
		sl_gate_give_slot(pl->dp, pl->index);
}

static void on_reject(void *ctx, uint64_t id, uint64_t now, enum sl_ss_why why)
{
	struct sl_plimit *pl = ctx;

	if (pl->hooks.reject)
		pl->hooks.reject(pl->hooks.ctx, id, now, why);
}

int sl_plimit_create(struct sl_plimit **out, const struct sl_policy_cfg *pc, struct sl_dataplane *dp,
		     const struct sl_plimit_hooks *hooks, uint64_t now)
{
	struct sl_ss_workload w[SLUICE_WL_SLOTS];
	struct sl_sg_params sp;
	struct sl_plimit *pl;
	char why[128];
	size_t n;
	int err;

	sl_plimit_params(pc, &sp, w, &n);
	if (sl_sg_params_check(&sp, why, sizeof(why))) {
		pr_err("policy %s: adaptive limit: %s", pc->name, why);
		return -EINVAL;
	}
	pl = calloc(1, sizeof(*pl));
	if (!pl)
		return -ENOMEM;
	snprintf(pl->name, sizeof(pl->name), "%s", pc->name);
	pl->dp = dp;
	pl->hooks = *hooks;
	sl_sg_init(&pl->sg, &sp, now);
	err = sl_ss_create(&pl->ss, w, n, SL_PLIMIT_MAX_WAITING, on_admit, on_reject, pl);
	if (err) {
		free(pl);
		return err;
	}
	*out = pl;
	return 0;
}

/* Field by field: the structs have padding. */
static bool same_params(const struct sl_sg_params *a, const struct sl_sg_params *b)
{
	return a->tolerance == b->tolerance && a->min_limit == b->min_limit &&
	       a->max_limit == b->max_limit && a->min_gradient == b->min_gradient &&
	       a->max_increase == b->max_increase && a->min_samples == b->min_samples &&
	       a->window_min_ns == b->window_min_ns && a->window_max_ns == b->window_max_ns &&
	       a->baseline_ns == b->baseline_ns && a->probe_ns == b->probe_ns &&
	       a->release_ns == b->release_ns;
}

bool sl_plimit_same(const struct sl_plimit *pl, const struct sl_policy_cfg *pc)
{
	struct sl_ss_workload w[SLUICE_WL_SLOTS];
	struct sl_sg_params sp;
	size_t n;

	sl_plimit_params(pc, &sp, w, &n);
	return same_params(&sp, &pl->sg.p) && sl_ss_same(pl->ss, w, n);
}

uint64_t sl_plimit_in_flight(const struct sl_plimit *pl)
{
	struct sl_gate_view gv;

	if (sl_gate_read(pl->dp, pl->index, &gv) || gv.slots_held <= 0)
		return 0;
	return (uint64_t)gv.slots_held;
}

uint32_t sl_plimit_limit(const struct sl_plimit *pl)
{
	return sl_sg_limit(&pl->sg);
}

static uint64_t wanted(const struct sl_plimit *pl)
{
	uint32_t l = sl_sg_limit(&pl->sg);

	return l == UINT32_MAX ? SL_PLIMIT_PASS : l;
}

/* The limit and the queue's length, to the data path (a SYN defers while
 * any flow waits). */
static void publish(struct sl_plimit *pl)
{
	sl_gate_limit(pl->dp, pl->index, sl_ss_waiting(pl->ss), wanted(pl));
}

void sl_plimit_start(struct sl_plimit *pl, unsigned index)
{
	pl->index = index;
	publish(pl);
}

void sl_plimit_free(struct sl_plimit *pl)
{
	if (!pl)
		return;
	sl_ss_free(pl->ss);
	free(pl);
}

static bool take_any(void *ctx)
{
	(void)ctx;
	return true;
}

void sl_plimit_release_all(struct sl_plimit *pl, uint64_t now)
{
	pl->releasing = true;
	sl_ss_run(pl->ss, now, take_any, NULL);
	pl->releasing = false;
}

static bool take_slot(void *ctx)
{
	struct sl_plimit *pl = ctx;

	return sl_gate_take_slot(pl->dp, pl->index);
}

/* Free slots to the waiting, in fair order; then tell the data path how
 * many still wait (a SYN defers while any do). */
static void dispatch(struct sl_plimit *pl, uint64_t now)
{
	sl_ss_run(pl->ss, now, take_slot, pl);
	publish(pl);
}

/* The default workload (SLUICE_NONE16) is the scheduler's last. */
static unsigned ss_workload(const struct sl_plimit *pl, unsigned workload)
{
	unsigned last = (unsigned)sl_ss_workloads(pl->ss) - 1;

	return workload < last ? workload : last;
}

int sl_plimit_arrive(struct sl_plimit *pl, uint64_t now, uint64_t id, unsigned workload, uint64_t flow)
{
	unsigned w = ss_workload(pl, workload);
	int err;

	if (!sl_ss_waiting(pl->ss) && sl_gate_take_slot(pl->dp, pl->index)) {
		pl->admitted_on_arrival[w]++;
		return SL_LS_ADMITTED;
	}
	err = sl_ss_enqueue(pl->ss, now, id, w, flow);
	if (err == -ENOSPC)
		return SL_LS_REJECTED;
	if (err)
		return err;
	publish(pl);
	return SL_LS_QUEUED;
}

bool sl_plimit_can_requeue(const struct sl_plimit *pl, unsigned workload, uint64_t arrival_ns, uint64_t now)
{
	return sl_ss_within_timeout(pl->ss, ss_workload(pl, workload), arrival_ns, now);
}

int sl_plimit_requeue(struct sl_plimit *pl, uint64_t now, uint64_t id, unsigned workload,
		      uint64_t flow, uint64_t arrival_ns)
{
	int err = sl_ss_requeue(pl->ss, now, id, ss_workload(pl, workload), flow, arrival_ns);

	if (err == -ENOSPC)
		return SL_LS_REJECTED;
	if (err)
		return err;
	pl->recalled++;
	return SL_LS_QUEUED;
}

void sl_plimit_complete(struct sl_plimit *pl, uint64_t now, uint64_t duration_ns, uint64_t queued_ns,
			bool served)
{
	uint64_t held = duration_ns + queued_ns;

	if (served)
		sl_sg_complete(&pl->sg, now > held ? now - held : 0, queued_ns, duration_ns);
	if (sl_ss_waiting(pl->ss))
		dispatch(pl, now); /* its slot is free now */
}

void sl_plimit_tick(struct sl_plimit *pl, uint64_t now)
{
	uint64_t in_flight = sl_plimit_in_flight(pl);
	size_t waiting = sl_ss_waiting(pl->ss);
	uint32_t before = sl_sg_limit(&pl->sg);
	struct sl_sg_decision d;

	if (sl_sg_step(&pl->sg, now, in_flight > UINT32_MAX ? UINT32_MAX : (uint32_t)in_flight,
		       waiting > UINT32_MAX ? UINT32_MAX : (uint32_t)waiting, &d)) {
		pl->decisions[d.reason]++;
		pl->last = d;
		pl->have_last = true;
		if (sl_sg_limit(&pl->sg) != before)
			pr_info("event=limit_in_flight policy=%s from=%s%u to=%s%u reason=%s signal_ms=%.1f "
				"target_ms=%.1f baseline_ms=%.1f in_flight=%.0f throughput=%.1f",
				pl->name, before == UINT32_MAX ? "pass-through:" : "",
				before == UINT32_MAX ? 0 : before,
				sl_sg_limit(&pl->sg) == UINT32_MAX ? "pass-through:" : "",
				sl_sg_limit(&pl->sg) == UINT32_MAX ? 0 : sl_sg_limit(&pl->sg),
				sl_sg_reason_names[d.reason], d.signal_ms, d.target_ms, d.baseline_ms,
				d.in_flight, d.throughput);
	}
	/* Cut below what is held: what the last limit admitted and still
	 * waits downstream comes back to wait here, in fair order with the
	 * rest (a light client's connection is not left behind it). */
	if (sl_sg_limit(&pl->sg) < before && pl->hooks.recall) {
		uint32_t limit = sl_sg_limit(&pl->sg);

		in_flight = sl_plimit_in_flight(pl);
		if (in_flight > limit)
			pl->hooks.recall(pl->hooks.ctx, pl->index, (size_t)(in_flight - limit), now);
	}
	/* The new limit first (the queue's turns are taken against it): cut
	 * below what is held, nothing is admitted until enough connections
	 * close. */
	publish(pl);
	dispatch(pl, now);
}

void sl_plimit_dump(const struct sl_plimit *pl, const struct sl_policy_cfg *pc,
		    const struct sluice_wl_stats *dp_stats, struct json_out *jo)
{
	uint32_t limit = sl_sg_limit(&pl->sg);
	struct sl_gate_view gv;

	jo_str(jo, SL_POLICY_KEY(MODE), "sluice");
	jo_bool(jo, SL_SLUICE_POLICY_KEY(PASS_THROUGH), limit == UINT32_MAX);
	if (limit == UINT32_MAX)
		jo_null(jo, SL_SLUICE_POLICY_KEY(LIMIT));
	else
		jo_u64(jo, SL_SLUICE_POLICY_KEY(LIMIT), limit);
	jo_u64(jo, SL_SLUICE_POLICY_KEY(IN_FLIGHT), sl_plimit_in_flight(pl));
	if (!sl_gate_read(pl->dp, pl->index, &gv)) {
		/* The data path's own: a count below zero would be a bug. */
		jo_obj_begin(jo, SL_SLUICE_POLICY_KEY(GATE));
		jo_u64(jo, SL_SLUICE_GATE_KEY(INDEX), pl->index);
		jo_i64(jo, SL_SLUICE_GATE_KEY(SLOTS_HELD), gv.slots_held);
		jo_i64(jo, SL_SLUICE_GATE_KEY(SLOT_LIMIT), gv.slot_limit);
		jo_obj_end(jo);
	}
	jo_u64(jo, SL_SLUICE_POLICY_KEY(WAITING), sl_ss_waiting(pl->ss));
	jo_u64(jo, SL_SLUICE_POLICY_KEY(RECALLED), pl->recalled); /* back from a level's queue after a cut */
	jo_u64(jo, SL_SLUICE_POLICY_KEY(MAX_IN_FLIGHT), pc->max_in_flight);
	if (pl->have_last) {
		const struct sl_sg_decision *d = &pl->last;

		jo_str(jo, SL_SLUICE_POLICY_KEY(REASON), sl_sg_reason_names[d->reason]);
		jo_double(jo, SL_SLUICE_DECISION_KEY(SIGNAL_MS), d->signal_ms);
		jo_double(jo, SL_SLUICE_DECISION_KEY(FRESH_MS), d->fresh_ms);
		jo_double(jo, SL_SLUICE_DECISION_KEY(LITTLE_MS), d->little_ms);
		jo_double(jo, SL_SLUICE_DECISION_KEY(BASELINE_MS), d->baseline_ms);
		jo_double(jo, SL_SLUICE_DECISION_KEY(TARGET_MS), d->target_ms);
		jo_double(jo, SL_SLUICE_DECISION_KEY(THROUGHPUT), d->throughput);
		jo_double(jo, SL_SLUICE_DECISION_KEY(GRADIENT), d->gradient);
		jo_u64(jo, SL_SLUICE_DECISION_KEY(LIMIT_BEFORE), d->limit_before);
		jo_u64(jo, SL_SLUICE_DECISION_KEY(LIMIT_AFTER), d->limit_after);
	} else {
		jo_str(jo, SL_SLUICE_POLICY_KEY(REASON), sl_sg_reason_names[SL_SG_NO_BASELINE]);
	}
	jo_obj_begin(jo, SL_SLUICE_POLICY_KEY(DECISIONS));
	for (unsigned r = 0; r <= SL_SG_PASS_THROUGH; r++)
		jo_u64(jo, sl_sg_reason_names[r], pl->decisions[r]);
	jo_obj_end(jo);
	jo_arr_begin(jo, SL_SLUICE_POLICY_KEY(WORKLOADS));
	for (size_t w = 0; w < sl_ss_workloads(pl->ss); w++) {
		struct sl_ss_stats st;
		bool dflt = w + 1 == sl_ss_workloads(pl->ss);

		sl_ss_stats(pl->ss, (unsigned)w, &st);
		jo_obj_begin(jo, NULL);
		if (dflt)
			jo_str(jo, SL_SLUICE_WORKLOAD_KEY(NAME), "default");
		else if (pc->workloads[w].name)
			jo_str(jo, SL_SLUICE_WORKLOAD_KEY(NAME), pc->workloads[w].name);
		else
			jo_u64(jo, SL_SLUICE_WORKLOAD_KEY(NAME), w);
		jo_double(jo, SL_SLUICE_WORKLOAD_KEY(PRIORITY), dflt ? pc->default_params.priority : pc->workloads[w].params.priority);
		jo_u64(jo, SL_SLUICE_WORKLOAD_KEY(WAITING), sl_ss_waiting_in(pl->ss, (unsigned)w));
		/* The data path's, then the queue's: a connection admitted
		 * inline never met the daemon. */
		jo_u64(jo, SL_SLUICE_WORKLOAD_KEY(SYNS), dp_stats[w].syns);
		jo_u64(jo, SL_SLUICE_WORKLOAD_KEY(ADMITTED_INLINE), dp_stats[w].inline_admitted);
		jo_u64(jo, SL_SLUICE_WORKLOAD_KEY(GATE_DEFERRED), dp_stats[w].deferred);
		jo_u64(jo, SL_SLUICE_WORKLOAD_KEY(ADMITTED_ON_ARRIVAL), pl->admitted_on_arrival[w]);
		jo_u64(jo, SL_SLUICE_WORKLOAD_KEY(ADMITTED), st.admitted);
		jo_u64(jo, SL_SLUICE_WORKLOAD_KEY(REJECTED), st.rejected);
		jo_u64(jo, SL_SLUICE_WORKLOAD_KEY(SHED), st.shed);
		jo_u64(jo, SL_SLUICE_WORKLOAD_KEY(REFUSED), st.refused);
		jo_obj_end(jo);
	}
	jo_arr_end(jo);
}
