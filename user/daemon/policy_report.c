/*
 * The policy runtime's reports (policy_rt.h): the controller's dump for
 * `sluicectl controller` and the policies' and workloads' metrics, for
 * either mode.  policy_rt.c runs the policies.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>

#include "daemon/policy_rt_int.h"
#include "dataplane/policy_gate.h"
#include "lib/json_out.h"
#include "lib/prom.h"

/* ---- dump ------------------------------------------------------------------------------ */

/* A workload's display name: its name, its index when unnamed (Aperture's
 * label), "default" for the last (the default workload).  buf: 24 bytes. */
static const char *workload_name(const struct policy_rt *p, size_t w, size_t n, char *buf)
{
	if (w + 1 == n)
		return "default";
	if (p->cfg->workloads[w].name)
		return p->cfg->workloads[w].name;
	snprintf(buf, 24, "%zu", w);
	return buf;
}

static void dump_workloads(struct policy_rt *p, struct json_out *jo, uint64_t now)
{
	size_t n = sl_ls_workload_count(p->ls);

	jo_arr_begin(jo, "workloads");
	for (size_t w = 0; w < n; w++) {
		bool dflt = w + 1 == n;
		struct sl_ls_workload_stats ws;
		struct sluice_wl_stats ds;
		char idx[24];

		if (sl_ls_get_workload_stats(p->ls, now, w, &ws))
			break;
		policy_read_wl_stats(p, policy_wl_slot(dflt ? -1 : (int)w), &ds);
		jo_obj_begin(jo, NULL);
		jo_str(jo, "name", workload_name(p, w, n, idx));
		jo_double(jo, "priority", ws.priority);
		jo_double(jo, "tokens", ws.tokens);
		jo_u64(jo, "admitted", ws.admitted);
		jo_u64(jo, "admitted_inline", ws.inline_admitted);
		jo_u64(jo, "deferred", ws.deferred);
		jo_u64(jo, "rejected", ws.rejected);
		jo_u64(jo, "shed", ws.shed);
		jo_u64(jo, "waiting", ws.waiting);
		jo_u64(jo, "syns", ds.syns);
		jo_u64(jo, "gate_deferred", ds.deferred);
		jo_double(jo, "token_estimate_ms", ws.token_estimate);
		jo_double(jo, "accepted_tokens", ws.accepted_tokens);
		jo_double(jo, "rejected_tokens", ws.rejected_tokens);
		jo_obj_end(jo);
	}
	jo_arr_end(jo);
}

void sl_policies_dump(struct sl_policies *ps, FILE *f, uint64_t now)
{
	struct json_out jo;

	jo_init(&jo, f, false);
	jo_obj_begin(&jo, NULL);
	jo_str(&jo, "stage", "enforce");
	jo_arr_begin(&jo, "policies");
	for (size_t i = 0; i < ps->n; i++) {
		struct policy_rt *p = &ps->v[i];
		const struct sl_aimd_out *o = &p->out;
		struct sl_gate_view gv;
		struct sl_ls_stats st;

		jo_obj_begin(&jo, NULL);
		jo_str(&jo, "name", p->name);
		if (p->lim) {
			struct sluice_wl_stats ds[SLUICE_WL_SLOTS];
			size_t n = p->cfg->n_workloads;

			for (size_t w = 0; w <= n && w < SLUICE_WL_SLOTS; w++)
				policy_read_wl_stats(p, policy_wl_slot(w < n ? (int)w : -1), &ds[w]);
			sl_plimit_dump(p->lim, p->cfg, ds, &jo);
			jo_obj_end(&jo);
			continue;
		}
		jo_str(&jo, "mode", "aperture");
		jo_u64(&jo, "periods", p->aimd.periods);
		jo_u64(&jo, "period_ms", p->aimd.p.period_ns / 1000000);
		if (p->have_out) {
			jo_double(&jo, "signal_ms", o->signal);
			jo_double(&jo, "setpoint_ms", o->setpoint);
			jo_bool(&jo, "overload", o->overload);
			jo_double(&jo, "gradient", o->gradient);
			jo_double(&jo, "integrator", o->integrator);
			jo_double(&jo, "observed", o->observed);
			jo_double(&jo, "load_multiplier", o->load_multiplier);
			jo_bool(&jo, "pass_through", o->pass_through);
		} else {
			jo_null(&jo, "signal_ms");
			jo_null(&jo, "setpoint_ms");
			jo_bool(&jo, "overload", false);
			jo_null(&jo, "gradient");
			jo_double(&jo, "integrator", p->aimd.integrator);
			jo_null(&jo, "observed");
			jo_double(&jo, "load_multiplier", 0);
			jo_bool(&jo, "pass_through", true);
		}
		if (p->ls) {
			sl_ls_get_stats(p->ls, now, &st);
			jo_bool(&jo, "bootstrapping", st.bootstrapping);
			jo_bool(&jo, "scheduler_pass_through", st.pass_through);
			jo_double(&jo, "fill_rate", st.fill_rate);
			jo_double(&jo, "capacity", st.capacity);
			jo_double(&jo, "available", st.available);
			jo_double(&jo, "incoming_rate", st.incoming_rate);
			jo_u64(&jo, "waiting", st.waiting);
		}
		if (!sl_gate_read(ps->dp, p->index, &gv)) {
			jo_str(&jo, "gate", gv.throttle ? "throttle" : "pass");
			jo_double(&jo, "gate_credit", (double)gv.credit_mtok / SLUICE_MTOK);
			jo_u64(&jo, "gate_grants", gv.grants);
		}
		if (p->ls)
			dump_workloads(p, &jo, now);
		jo_obj_end(&jo);
	}
	jo_arr_end(&jo);
	jo_obj_end(&jo);
	jo_finish(&jo);
}

/* ---- metrics --------------------------------------------------------------------------- */

/* A workload's counts, whichever mode runs it: what the metrics show. */
struct workload_counts {
	uint64_t admitted, admitted_inline, deferred, rejected, waiting;
};

static size_t workload_count(const struct policy_rt *p)
{
	if (p->lim)
		return sl_ss_workloads(p->lim->ss);
	return p->ls ? sl_ls_workload_count(p->ls) : 0;
}

/* Mode sluice: the data path admits inline and defers at its gate; the
 * slot scheduler admits what waited and rejects what timed out or found
 * its queue full.  Aperture's scheduler counts all of it itself. */
static int workload_counts(struct policy_rt *p, size_t w, size_t n, uint64_t now,
			   struct workload_counts *out)
{
	if (p->lim) {
		struct sluice_wl_stats ds;
		struct sl_ss_stats st;

		policy_read_wl_stats(p, policy_wl_slot(w + 1 < n ? (int)w : -1), &ds);
		sl_ss_stats(p->lim->ss, (unsigned)w, &st);
		uint64_t at_once = p->lim->admitted_on_arrival[w];

		out->admitted = ds.inline_admitted + at_once + st.admitted;
		out->admitted_inline = ds.inline_admitted;
		out->waiting = sl_ss_waiting_in(p->lim->ss, (unsigned)w);
		/* Connections, not SYNs: a waiting client's retransmits meet
		 * the gate again (the data path's `deferred` counts each). */
		out->deferred = at_once + st.admitted + st.rejected + st.shed + st.refused + out->waiting;
		out->rejected = st.rejected + st.shed + st.refused;
		return 0;
	} else {
		struct sl_ls_workload_stats ws;

		if (sl_ls_get_workload_stats(p->ls, now, w, &ws))
			return -ENOENT;
		out->admitted = ws.admitted;
		out->admitted_inline = ws.inline_admitted;
		out->deferred = ws.deferred;
		out->rejected = ws.rejected;
		out->waiting = ws.waiting;
		return 0;
	}
}

/* Which controller each policy runs, and sluice's limit in flight. */
static void limit_metrics(struct sl_policies *ps, FILE *f)
{
	sl_prom_family(f, "policy_mode", SL_PROM_GAUGE,
		       "1 for the controller the policy runs: sluice (a limit in flight) or aperture (AIMD).");
	for (size_t i = 0; i < ps->n; i++)
		sl_prom_sample(f, "policy_mode", 1, "policy", ps->v[i].name, "mode",
			       ps->v[i].lim ? "sluice" : "aperture", NULL);
	sl_prom_family(f, "policy_in_flight_limit", SL_PROM_GAUGE,
		       "Mode sluice: the limit of connections in flight (+Inf in pass-through).");
	for (size_t i = 0; i < ps->n; i++) {
		uint32_t l;

		if (!ps->v[i].lim)
			continue;
		l = sl_plimit_limit(ps->v[i].lim);
		sl_prom_sample(f, "policy_in_flight_limit", l == UINT32_MAX ? INFINITY : (double)l, "policy",
			       ps->v[i].name, NULL);
	}
	sl_prom_family(f, "policy_in_flight", SL_PROM_GAUGE,
		       "Mode sluice: connections of the policy in flight (admitted, not closed).");
	for (size_t i = 0; i < ps->n; i++)
		if (ps->v[i].lim)
			sl_prom_sample(f, "policy_in_flight", (double)sl_plimit_in_flight(ps->v[i].lim),
				       "policy", ps->v[i].name, NULL);
	sl_prom_family(f, "policy_limit_decisions_total", SL_PROM_COUNTER,
		       "Mode sluice: the controller's decisions, by reason.");
	for (size_t i = 0; i < ps->n; i++)
		for (unsigned r = 0; ps->v[i].lim && r <= SL_SG_PASS_THROUGH; r++)
			sl_prom_sample_u64(f, "policy_limit_decisions_total", ps->v[i].lim->decisions[r],
					   "policy", ps->v[i].name, "reason", sl_sg_reason_names[r], NULL);
}

void sl_policies_metrics(struct sl_policies *ps, FILE *f, uint64_t now)
{
	static const struct {
		const char *name;
		enum sl_prom_type type;
		const char *help;
	} pm[] = {
		{"policy_signal_seconds", SL_PROM_GAUGE, "The latency signal (NaN without a valid value)."},
		{"policy_setpoint_seconds", SL_PROM_GAUGE,
		 "The setpoint (mode sluice: the target), baseline x tolerance (NaN while learning)."},
		{"policy_overload", SL_PROM_GAUGE, "1 while the last period was overloaded."},
		{"policy_load_multiplier", SL_PROM_GAUGE, "The published load multiplier (0 in pass-through)."},
		{"policy_pass_through", SL_PROM_GAUGE, "1 while the scheduler admits everything."},
		{"policy_fill_rate", SL_PROM_GAUGE, "Token bucket fill rate, tokens/s."},
		{"policy_incoming_rate", SL_PROM_GAUGE, "Incoming token rate over the last 30 s, tokens/s."},
		{"policy_waiting", SL_PROM_GAUGE, "Connections waiting in the scheduler."},
	}, wm[] = {
		{"workload_admitted_total", SL_PROM_COUNTER, "Connections the workload had admitted (inline or queued)."},
		{"workload_admitted_inline_total", SL_PROM_COUNTER, "Of those, admitted by the data path."},
		{"workload_deferred_total", SL_PROM_COUNTER, "Connections that had to wait."},
		{"workload_rejected_total", SL_PROM_COUNTER,
		 "Connections rejected (time-out; Aperture's mode: no tokens; sluice's: queue full)."},
		{"workload_waiting", SL_PROM_GAUGE, "Connections waiting now."},
	};

	for (size_t m = 0; m < sizeof(pm) / sizeof(pm[0]); m++) {
		sl_prom_family(f, pm[m].name, pm[m].type, pm[m].help);
		for (size_t i = 0; i < ps->n; i++) {
			struct policy_rt *p = &ps->v[i];
			const struct sl_aimd_out *o = &p->out;
			struct sl_ls_stats st = {0};
			double v = NAN;

			if (p->ls)
				sl_ls_get_stats(p->ls, now, &st);
			if (p->lim) {
				const struct sl_sg_decision *d = &p->lim->last;
				bool have = p->lim->have_last;

				switch (m) {
				case 0: v = have ? d->signal_ms / 1000 : NAN; break;
				case 1: v = have ? d->target_ms / 1000 : NAN; break;
				case 2: v = have && d->reason == SL_SG_OVERLOAD; break;
				case 3: v = NAN; break; /* no multiplier: a limit in flight */
				case 4: v = sl_plimit_limit(p->lim) == UINT32_MAX; break;
				case 5: case 6: v = NAN; break;
				case 7: v = (double)sl_ss_waiting(p->lim->ss); break;
				}
				sl_prom_sample(f, pm[m].name, v, "policy", p->name, NULL);
				continue;
			}
			switch (m) {
			case 0: v = p->have_out ? o->signal / 1000 : NAN; break;
			case 1: v = p->have_out ? o->setpoint / 1000 : NAN; break;
			case 2: v = p->have_out && o->overload; break;
			case 3: v = p->have_out ? o->load_multiplier : 0; break;
			case 4: v = p->have_out ? o->pass_through : 1; break;
			case 5: v = st.fill_rate; break;
			case 6: v = st.incoming_rate; break;
			case 7: v = (double)st.waiting; break;
			}
			sl_prom_sample(f, pm[m].name, v, "policy", p->name, NULL);
		}
	}
	limit_metrics(ps, f);
	for (size_t m = 0; m < sizeof(wm) / sizeof(wm[0]); m++) {
		sl_prom_family(f, wm[m].name, wm[m].type, wm[m].help);
		for (size_t i = 0; i < ps->n; i++) {
			struct policy_rt *p = &ps->v[i];
			size_t n = workload_count(p);

			for (size_t w = 0; w < n; w++) {
				struct workload_counts c;
				char idx[24];
				const char *wname = workload_name(p, w, n, idx);
				uint64_t v = 0;

				if (workload_counts(p, w, n, now, &c))
					break;
				switch (m) {
				case 0: v = c.admitted; break;
				case 1: v = c.admitted_inline; break;
				case 2: v = c.deferred; break;
				case 3: v = c.rejected; break;
				case 4: v = c.waiting; break;
				}
				sl_prom_sample_u64(f, wm[m].name, v, "policy", p->name, "workload", wname, NULL);
			}
		}
	}
}
