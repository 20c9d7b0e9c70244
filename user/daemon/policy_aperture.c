// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Mode aperture (policy_rt_int.h's interface): Aperture's load scheduler
 * (engine/loadsched.c, a token bucket over weighted fair queues) under
 * its AIMD controller (engine/aimd.c), whose load multiplier sets the
 * bucket's fill rate each period; the data path spends the bucket's
 * credit inline at its gate (dataplane/policy_gate.h).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/control.h"
#include "daemon/ext_signal.h"
#include "daemon/policy_rt_int.h"
#include "dataplane/policy_gate.h"
#include "engine/aimd.h"
#include "engine/loadsched.h"
#include "lib/json_out.h"
#include "lib/log.h"

/* What is left of the credit comes back into the bucket.  An exchange:
 * tokens the data path takes after it find no credit (and defer), tokens
 * it gives back after it are collected the next time. */
static void ap_reclaim(struct policy_rt *p, uint64_t now)
{
	int64_t left;

	if (!policy_has_gate(p) || !p->ls)
		return;
	left = sl_gate_take_back(p->ps->dp, p->index);
	if (left > 0)
		sl_ls_ungrant(p->ls, now, (double)left / SLUICE_MTOK);
}

/* Grant the bucket's tokens to the data path, and say how many wait. */
static void publish(struct policy_rt *p, uint64_t now)
{
	struct sl_ls_stats st;
	double grant;

	if (!policy_has_gate(p) || !p->ls)
		return;
	grant = sl_ls_grant(p->ls, now);
	sl_ls_get_stats(p->ls, now, &st);
	if (isinf(grant))
		sl_gate_pass(p->ps->dp, p->index, st.waiting);
	else
		sl_gate_throttle(p->ps->dp, p->index, st.waiting,
				 grant > 0 ? (int64_t)(grant * SLUICE_MTOK) : 0);
}

/* Connections the data path admitted inline since the last tick: the
 * incoming rate (in pass-through the scheduler sees nothing else) and
 * accepted tokens. */
static void feed_inline(struct policy_rt *p, uint64_t now)
{
	size_t n = p->cfg->n_workloads;

	for (size_t i = 0; i <= n; i++) {
		int wl = i < n ? (int)i : -1;
		unsigned slot = policy_wl_slot(wl);
		struct sluice_wl_stats cur;
		uint64_t flows, mtok;

		policy_read_wl_stats(p, slot, &cur);
		flows = cur.inline_admitted - p->seen[slot].inline_admitted;
		mtok = cur.inline_mtok - p->seen[slot].inline_mtok;
		p->seen[slot] = cur;
		if (flows)
			sl_ls_observe_inline(p->ls, now, wl, flows, (double)mtok / SLUICE_MTOK);
	}
}

/* Each workload's token cost, for the data path (written when it moves). */
static void write_tokens(struct policy_rt *p)
{
	size_t n = p->cfg->n_workloads;

	if (!p->ps->dp || !p->ls) /* a limit in flight counts connections, not tokens */
		return;
	for (size_t i = 0; i <= n; i++) {
		int wl = i < n ? (int)i : -1;
		unsigned slot = policy_wl_slot(wl);
		double t = sl_ls_workload_tokens(p->ls, wl);
		uint32_t mtok;

		if (!isfinite(t) || t < 0)
			t = 1;
		mtok = t * SLUICE_MTOK > UINT32_MAX - 1 ? UINT32_MAX - 1 : (uint32_t)llround(t * SLUICE_MTOK);
		if (p->tokens_written[slot] == mtok + 1)
			continue;
		if (!sl_gate_set_tokens(p->ps->dp, p->index, slot, mtok))
			p->tokens_written[slot] = mtok + 1;
	}
}

/* The schedulers' ctx is the policy set (stable across reloads, when a
 * scheduler moves to the new record). */
static void on_ls_admit(void *ctx, uint64_t id, uint64_t now)
{
	struct sl_policies *ps = ctx;

	if (ps->hooks.admit)
		ps->hooks.admit(ps->hooks.ctx, id, now); /* its tokens are spent either way */
}

/* Aperture's scheduler rejects when the wait passed, or sheds. */
static void on_ls_reject(void *ctx, uint64_t id, uint64_t now, enum sl_ls_why why)
{
	struct sl_policies *ps = ctx;

	if (ps->hooks.reject)
		ps->hooks.reject(ps->hooks.ctx, id, now, why == SL_LS_SHED ? SL_SS_SHED : SL_SS_TIME_OUT);
}

static bool same_scheduler(const struct sl_policy_cfg *a, const struct sl_policy_cfg *b)
{
	struct sl_ls_workload x, y;

	if (a->n_workloads != b->n_workloads ||
	    a->workload_latency_based_tokens != b->workload_latency_based_tokens)
		return false;
	for (size_t i = 0; i <= a->n_workloads; i++) {
		x = sl_ls_workload_from_cfg(i < a->n_workloads ? &a->workloads[i].params : &a->default_params);
		y = sl_ls_workload_from_cfg(i < b->n_workloads ? &b->workloads[i].params : &b->default_params);
		if (memcmp(&x, &y, sizeof(x)))
			return false;
	}
	return true;
}

static int ap_prepare(struct policy_rt *p, const struct policy_rt *old, uint64_t now)
{
	const struct sl_policy_cfg *pc = p->cfg;
	struct sl_aimd_params ap;
	char why[160];
	int err;

	old = old && old->mode == p->mode ? old : NULL;
	sl_aimd_params_from_policy(&ap, pc);
	if (!old || memcmp(&old->aimd.p, &ap, sizeof(ap))) {
		err = sl_aimd_init(&p->aimd, &ap);
		if (err) {
			pr_err("policy %s: controller parameters rejected", pc->name);
			return err;
		}
		p->aimd_made = true;
		p->next_period_ns = now + ap.period_ns;
	}
	if (!old || !old->ls || !same_scheduler(old->cfg, pc)) {
		err = sl_ls_create_for_policy(&p->ls, pc, now, on_ls_admit, on_ls_reject, p->ps, why,
					      sizeof(why));
		if (err) {
			pr_err("policy %s: scheduler: %s", pc->name, why);
			return err;
		}
	}
	return 0;
}

/* Keep the history of a policy whose name (and parameters) survive. */
static void ap_adopt(struct policy_rt *p, struct policy_rt *old)
{
	if (old->mode != p->mode)
		return;
	if (!p->aimd_made) {
		p->aimd = old->aimd;
		memset(&old->aimd, 0, sizeof(old->aimd));
		p->have_out = old->have_out;
		p->out = old->out;
		p->next_period_ns = old->next_period_ns;
	}
	if (!p->ls) {
		p->ls = old->ls;
		old->ls = NULL;
	}
}

/* Re-learn the counters' baselines, and give the data path its tokens. */
static void ap_start(struct policy_rt *p, uint64_t now)
{
	for (unsigned s = 0; s < SLUICE_WL_SLOTS; s++)
		policy_read_wl_stats(p, s, &p->seen[s]);
	memset(p->tokens_written, 0, sizeof(p->tokens_written));
	write_tokens(p);
	publish(p, now);
}

/* Everything still waiting in a scheduler that goes away is admitted
 * (fail-open), then the scheduler is freed. */
static void ap_release(struct policy_rt *p, uint64_t now)
{
	if (p->ls) {
		sl_ls_set_multiplier(p->ls, now, NAN, true);
		sl_ls_tick(p->ls, now);
		sl_ls_free(p->ls);
		p->ls = NULL;
	}
	sl_aimd_free(&p->aimd);
}

static int ap_arrive(struct policy_rt *p, uint64_t now, uint64_t id, unsigned workload, uint64_t flow)
{
	int r;

	(void)flow; /* Aperture's scheduler is fair by workload, not flow */
	if (!p->ls)
		return -ENOENT;
	/* The arrival sees the whole bucket: the credit comes back first and
	 * what is left goes out again after. */
	ap_reclaim(p, now);
	r = sl_ls_arrive(p->ls, now, id, policy_ls_workload(workload), SL_LS_TOKENS_AUTO,
			 sl_workload_wait_limit_ns(policy_workload_params(p->cfg, workload)));
	publish(p, now);
	return r;
}

static bool ap_can_requeue(const struct policy_rt *p, unsigned workload, uint64_t arrival_ns,
			   uint64_t now)
{
	(void)p, (void)workload, (void)arrival_ns, (void)now;
	return false; /* nothing is recalled from a token bucket */
}

static int ap_requeue(struct policy_rt *p, uint64_t now, uint64_t id, unsigned workload, uint64_t flow,
		      uint64_t arrival_ns)
{
	(void)p, (void)now, (void)id, (void)workload, (void)flow, (void)arrival_ns;
	return -ENOENT;
}

static void ap_give_back(struct policy_rt *p, unsigned workload, uint64_t now)
{
	int wl = policy_ls_workload(workload);

	if (p->ls)
		sl_ls_return(p->ls, now, wl, sl_ls_workload_tokens(p->ls, wl));
}

static void ap_closed(struct policy_rt *p, unsigned workload, uint64_t duration_ns, uint64_t queued_ns,
		      uint32_t srtt_us, bool served, uint64_t now)
{
	(void)queued_ns;
	/* Nothing a client that gave up leaves behind steers a controller. */
	if (!p->ls || !served)
		return;
	/* The policy's signal: the connection's duration, or its smoothed
	 * RTT (network-side latency); the external signal is read per period. */
	if (p->cfg->signal == SL_SIGNAL_DURATION)
		sl_aimd_observe_latency(&p->aimd, now, duration_ns);
	else if (p->cfg->signal == SL_SIGNAL_SRTT && srtt_us)
		sl_aimd_observe_latency(&p->aimd, now, (uint64_t)srtt_us * 1000);
	/* Aperture workload_latency_based_tokens: the workload's token estimate is its mean connection time. */
	sl_ls_complete(p->ls, now, policy_ls_workload(workload), duration_ns);
}

/* The external signal: one number (milliseconds) the application keeps in
 * a file; NaN (no valid value this period) when it is missing or not a
 * number, which the controller treats like an empty window. */
static double read_external(struct policy_rt *p)
{
	const char *why = NULL;
	double v;

	if (!p->cfg->external_path)
		return NAN;
	v = sl_ext_read_file(p->cfg->external_path, &why);
	if (why && !p->external_warned)
		pr_warn("policy %s: external signal %s: %s", p->name, p->cfg->external_path, why);
	p->external_warned = why != NULL;
	return v;
}

/* One control period: the controller's decision goes to the scheduler. */
static void control_period(struct policy_rt *p, uint64_t now)
{
	bool was = p->have_out ? p->out.pass_through : true;
	double was_lm = p->have_out ? p->out.load_multiplier : 1;
	double accepted = 0, rejected = 0;

	sl_ls_take_period(p->ls, &accepted, &rejected);
	sl_aimd_observe_tokens(&p->aimd, accepted, rejected);
	if (p->cfg->signal == SL_SIGNAL_EXTERNAL && p->cfg->external_socket) {
		policy_ext_drain(p);
		sl_aimd_period_external(&p->aimd, p->ext_n ? p->ext_sum / (double)p->ext_n : NAN,
					&p->out);
		p->ext_sum = 0;
		p->ext_n = 0;
	} else if (p->cfg->signal == SL_SIGNAL_EXTERNAL)
		sl_aimd_period_external(&p->aimd, read_external(p), &p->out);
	else
		sl_aimd_period(&p->aimd, now, &p->out);
	p->have_out = true;
	sl_ls_set_multiplier(p->ls, now, p->out.load_multiplier, p->out.pass_through);
	/* logfmt, one line per change: what an operator greps for after an
	 * incident (the per-period numbers are metrics). */
	if (was != p->out.pass_through || was_lm != p->out.load_multiplier)
		pr_info("event=load_multiplier policy=%s from=%.3f to=%.3f reason=%s signal_ms=%.1f "
			"setpoint_ms=%.1f pass_through=%s",
			p->name, was_lm, p->out.load_multiplier,
			p->out.overload ? "overload" : p->out.pass_through ? "pass-through" : "increase",
			p->out.signal, p->out.setpoint, p->out.pass_through ? "true" : "false");
}

static void ap_tick(struct policy_rt *p, uint64_t now)
{
	if (!p->ls)
		return;
	ap_reclaim(p, now);
	feed_inline(p, now);
	policy_ext_drain(p);
	sl_ls_tick(p->ls, now);
	if (now >= p->next_period_ns) {
		p->next_period_ns = now + p->aimd.p.period_ns;
		control_period(p, now);
	}
	write_tokens(p);
	publish(p, now);
}

/* ---- reports ------------------------------------------------------------------------- */

static void dump_workloads(struct policy_rt *p, struct json_out *jo, uint64_t now)
{
	size_t n = sl_ls_workload_count(p->ls);

	jo_arr_begin(jo, SL_APERTURE_POLICY_KEY(WORKLOADS));
	for (size_t w = 0; w < n; w++) {
		bool dflt = w + 1 == n;
		struct sl_ls_workload_stats ws;
		struct sluice_wl_stats ds;
		char idx[24];

		if (sl_ls_get_workload_stats(p->ls, now, w, &ws))
			break;
		policy_read_wl_stats(p, policy_wl_slot(dflt ? -1 : (int)w), &ds);
		jo_obj_begin(jo, NULL);
		jo_str(jo, SL_APERTURE_WORKLOAD_KEY(NAME), policy_workload_name(p, w, n, idx));
		jo_double(jo, SL_APERTURE_WORKLOAD_KEY(PRIORITY), ws.priority);
		jo_double(jo, SL_APERTURE_WORKLOAD_KEY(TOKENS), ws.tokens);
		jo_u64(jo, SL_APERTURE_WORKLOAD_KEY(ADMITTED), ws.admitted);
		jo_u64(jo, SL_APERTURE_WORKLOAD_KEY(ADMITTED_INLINE), ws.inline_admitted);
		jo_u64(jo, SL_APERTURE_WORKLOAD_KEY(DEFERRED), ws.deferred);
		jo_u64(jo, SL_APERTURE_WORKLOAD_KEY(REJECTED), ws.rejected);
		jo_u64(jo, SL_APERTURE_WORKLOAD_KEY(SHED), ws.shed);
		jo_u64(jo, SL_APERTURE_WORKLOAD_KEY(WAITING), ws.waiting);
		jo_u64(jo, SL_APERTURE_WORKLOAD_KEY(SYNS), ds.syns);
		jo_u64(jo, SL_APERTURE_WORKLOAD_KEY(GATE_DEFERRED), ds.deferred);
		jo_double(jo, SL_APERTURE_WORKLOAD_KEY(TOKEN_ESTIMATE_MS), ws.token_estimate);
		jo_double(jo, SL_APERTURE_WORKLOAD_KEY(ACCEPTED_TOKENS), ws.accepted_tokens);
		jo_double(jo, SL_APERTURE_WORKLOAD_KEY(REJECTED_TOKENS), ws.rejected_tokens);
		jo_obj_end(jo);
	}
	jo_arr_end(jo);
}

static void ap_dump(struct policy_rt *p, struct json_out *jo, uint64_t now)
{
	const struct sl_aimd_out *o = &p->out;
	struct sl_gate_view gv;
	struct sl_ls_stats st;

	jo_str(jo, SL_POLICY_KEY(MODE), "aperture");
	jo_u64(jo, SL_APERTURE_POLICY_KEY(PERIODS), p->aimd.periods);
	jo_u64(jo, SL_APERTURE_POLICY_KEY(PERIOD_MS), p->aimd.p.period_ns / 1000000);
	if (p->have_out) {
		jo_double(jo, SL_APERTURE_POLICY_KEY(SIGNAL_MS), o->signal);
		jo_double(jo, SL_APERTURE_POLICY_KEY(SETPOINT_MS), o->setpoint);
		jo_bool(jo, SL_APERTURE_POLICY_KEY(OVERLOAD), o->overload);
		jo_double(jo, SL_APERTURE_POLICY_KEY(GRADIENT), o->gradient);
		jo_double(jo, SL_APERTURE_POLICY_KEY(INTEGRATOR), o->integrator);
		jo_double(jo, SL_APERTURE_POLICY_KEY(OBSERVED), o->observed);
		jo_double(jo, SL_APERTURE_POLICY_KEY(LOAD_MULTIPLIER), o->load_multiplier);
		jo_bool(jo, SL_APERTURE_POLICY_KEY(PASS_THROUGH), o->pass_through);
	} else {
		jo_null(jo, SL_APERTURE_POLICY_KEY(SIGNAL_MS));
		jo_null(jo, SL_APERTURE_POLICY_KEY(SETPOINT_MS));
		jo_bool(jo, SL_APERTURE_POLICY_KEY(OVERLOAD), false);
		jo_null(jo, SL_APERTURE_POLICY_KEY(GRADIENT));
		jo_double(jo, SL_APERTURE_POLICY_KEY(INTEGRATOR), p->aimd.integrator);
		jo_null(jo, SL_APERTURE_POLICY_KEY(OBSERVED));
		jo_double(jo, SL_APERTURE_POLICY_KEY(LOAD_MULTIPLIER), 0);
		jo_bool(jo, SL_APERTURE_POLICY_KEY(PASS_THROUGH), true);
	}
	if (p->ls) {
		sl_ls_get_stats(p->ls, now, &st);
		jo_bool(jo, SL_APERTURE_POLICY_KEY(BOOTSTRAPPING), st.bootstrapping);
		jo_bool(jo, SL_APERTURE_POLICY_KEY(SCHEDULER_PASS_THROUGH), st.pass_through);
		jo_double(jo, SL_APERTURE_POLICY_KEY(FILL_RATE), st.fill_rate);
		jo_double(jo, SL_APERTURE_POLICY_KEY(CAPACITY), st.capacity);
		jo_double(jo, SL_APERTURE_POLICY_KEY(AVAILABLE), st.available);
		jo_double(jo, SL_APERTURE_POLICY_KEY(INCOMING_RATE), st.incoming_rate);
		jo_u64(jo, SL_APERTURE_POLICY_KEY(WAITING), st.waiting);
	}
	if (!sl_gate_read(p->ps->dp, p->index, &gv)) {
		jo_str(jo, SL_APERTURE_POLICY_KEY(GATE), gv.throttle ? "throttle" : "pass");
		jo_double(jo, SL_APERTURE_POLICY_KEY(GATE_CREDIT), (double)gv.credit_mtok / SLUICE_MTOK);
		jo_u64(jo, SL_APERTURE_POLICY_KEY(GATE_GRANTS), gv.grants);
	}
	if (p->ls)
		dump_workloads(p, jo, now);
}

static size_t ap_workload_count(const struct policy_rt *p)
{
	return p->ls ? sl_ls_workload_count(p->ls) : 0;
}

/* Aperture's scheduler counts all of it itself. */
static int ap_workload_counts(struct policy_rt *p, size_t w, size_t n, uint64_t now,
			      struct policy_workload_counts *out)
{
	struct sl_ls_workload_stats ws;

	(void)n;
	if (!p->ls || sl_ls_get_workload_stats(p->ls, now, w, &ws))
		return -ENOENT;
	out->admitted = ws.admitted;
	out->admitted_inline = ws.inline_admitted;
	out->deferred = ws.deferred;
	out->rejected = ws.rejected;
	out->waiting = ws.waiting;
	return 0;
}

static double ap_gauge(struct policy_rt *p, enum policy_gauge g, uint64_t now)
{
	const struct sl_aimd_out *o = &p->out;
	struct sl_ls_stats st = {0};

	if (p->ls)
		sl_ls_get_stats(p->ls, now, &st);
	switch (g) {
	case POLICY_SIGNAL_S: return p->have_out ? o->signal / 1000 : NAN;
	case POLICY_SETPOINT_S: return p->have_out ? o->setpoint / 1000 : NAN;
	case POLICY_OVERLOAD: return p->have_out && o->overload;
	case POLICY_LOAD_MULTIPLIER: return p->have_out ? o->load_multiplier : 0;
	case POLICY_PASS_THROUGH: return p->have_out ? o->pass_through : 1;
	case POLICY_FILL_RATE: return st.fill_rate;
	case POLICY_INCOMING_RATE: return st.incoming_rate;
	case POLICY_WAITING: return (double)st.waiting;
	default: return NAN;
	}
}

const struct policy_mode policy_mode_aperture = {
	.name = "aperture",
	.takes_slots = false,
	.prepare = ap_prepare,
	.adopt = ap_adopt,
	.start = ap_start,
	.release = ap_release,
	.reclaim = ap_reclaim,
	.arrive = ap_arrive,
	.can_requeue = ap_can_requeue,
	.requeue = ap_requeue,
	.give_back = ap_give_back,
	.closed = ap_closed,
	.tick = ap_tick,
	.dump = ap_dump,
	.workload_count = ap_workload_count,
	.workload_counts = ap_workload_counts,
	.gauge = ap_gauge,
	.families = NULL,
};
