// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The policy runtime's reports (policy_rt.h): the controller's dump for
 * `sluicectl controller` and the policies' and workloads' metrics.  What
 * is here is every mode's frame; each mode fills in its own part
 * (policy_rt_int.h's interface).
 */
#include <math.h>
#include <stdio.h>

#include "daemon/control.h"
#include "daemon/policy_rt_int.h"
#include "lib/json_out.h"
#include "lib/prom.h"

void sl_policies_dump(struct sl_policies *ps, FILE *f, uint64_t now)
{
	struct json_out jo;

	jo_init(&jo, f, false);
	jo_obj_begin(&jo, NULL);
	jo_str(&jo, SL_CONTROLLER_REPLY_KEY(STAGE), "enforce");
	jo_arr_begin(&jo, SL_CONTROLLER_REPLY_KEY(POLICIES));
	for (size_t i = 0; i < ps->n; i++) {
		jo_obj_begin(&jo, NULL);
		jo_str(&jo, SL_POLICY_KEY(NAME), ps->v[i].name);
		ps->v[i].mode->dump(&ps->v[i], &jo, now);
		jo_obj_end(&jo);
	}
	jo_arr_end(&jo);
	jo_obj_end(&jo);
	jo_finish(&jo);
}

/* ---- metrics --------------------------------------------------------------------------- */

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
	static const struct policy_mode *const modes[] = {&policy_mode_aperture, &policy_mode_sluice};

	_Static_assert(sizeof(pm) / sizeof(pm[0]) == POLICY_GAUGE_N, "a gauge without its family");
	for (size_t m = 0; m < sizeof(pm) / sizeof(pm[0]); m++) {
		sl_prom_family(f, pm[m].name, pm[m].type, pm[m].help);
		for (size_t i = 0; i < ps->n; i++)
			sl_prom_sample(f, pm[m].name, ps->v[i].mode->gauge(&ps->v[i], (enum policy_gauge)m, now),
				       "policy", ps->v[i].name, NULL);
	}
	sl_prom_family(f, "policy_mode", SL_PROM_GAUGE,
		       "1 for the controller the policy runs: sluice (a limit in flight) or aperture (AIMD).");
	for (size_t i = 0; i < ps->n; i++)
		sl_prom_sample(f, "policy_mode", 1, "policy", ps->v[i].name, "mode", ps->v[i].mode->name, NULL);
	for (size_t k = 0; k < sizeof(modes) / sizeof(modes[0]); k++)
		if (modes[k]->families)
			modes[k]->families(ps, f);
	for (size_t m = 0; m < sizeof(wm) / sizeof(wm[0]); m++) {
		sl_prom_family(f, wm[m].name, wm[m].type, wm[m].help);
		for (size_t i = 0; i < ps->n; i++) {
			struct policy_rt *p = &ps->v[i];
			size_t n = p->mode->workload_count(p);

			for (size_t w = 0; w < n; w++) {
				struct policy_workload_counts c;
				char idx[24];
				const char *wname = policy_workload_name(p, w, n, idx);
				uint64_t v = 0;

				if (p->mode->workload_counts(p, w, n, now, &c))
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
