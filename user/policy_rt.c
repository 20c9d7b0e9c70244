#include "policy_rt.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aimd.h"
#include "json_out.h"
#include "log.h"
#include "sluice_abi.h"

#define MAX_WORKLOADS 256

struct workload_rt {
	uint64_t admitted;      /* connections completed */
	double latency_ewma_ms; /* for the token estimate */
};

struct policy_rt {
	char name[SL_LEVEL_NAME_SIZE];
	const struct sl_policy_cfg *cfg;
	struct sl_aimd aimd;
	bool have_out;
	struct sl_aimd_out out;
	uint64_t next_period_ns;
	uint64_t period_accepted;
	bool external_warned;
	struct workload_rt workloads[MAX_WORKLOADS + 1]; /* [0] = default */
};

struct sl_policies {
	struct policy_rt *v;
	size_t n;
};

int sl_policies_create(struct sl_policies **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

static void free_all(struct policy_rt *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sl_aimd_free(&v[i].aimd);
	free(v);
}

void sl_policies_free(struct sl_policies *ps)
{
	if (!ps)
		return;
	free_all(ps->v, ps->n);
	free(ps);
}

int sl_policies_configure(struct sl_policies *ps, const struct sl_config *cfg, uint64_t now)
{
	struct policy_rt *v = calloc(cfg->n_policies ? cfg->n_policies : 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < cfg->n_policies; i++) {
		const struct sl_policy_cfg *pc = &cfg->policies[i];
		struct sl_aimd_params p;
		struct policy_rt *old = NULL;
		int err;

		for (size_t j = 0; j < ps->n; j++)
			if (!strcmp(ps->v[j].name, pc->name))
				old = &ps->v[j];
		snprintf(v[i].name, sizeof(v[i].name), "%s", pc->name);
		v[i].cfg = pc;
		sl_aimd_params_from_policy(&p, pc);
		if (old && !memcmp(&old->aimd.p, &p, sizeof(p))) {
			/* Same name, same parameters: keep the history. */
			v[i].aimd = old->aimd;
			memset(&old->aimd, 0, sizeof(old->aimd));
			v[i].have_out = old->have_out;
			v[i].out = old->out;
			v[i].next_period_ns = old->next_period_ns;
			memcpy(v[i].workloads, old->workloads, sizeof(v[i].workloads));
			continue;
		}
		err = sl_aimd_init(&v[i].aimd, &p);
		if (err) {
			pr_err("policy %s: controller parameters rejected", pc->name);
			free_all(v, i);
			return err;
		}
		v[i].next_period_ns = now + p.period_ns;
	}
	free_all(ps->v, ps->n);
	ps->v = v;
	ps->n = cfg->n_policies;
	return 0;
}

void sl_policies_on_close(struct sl_policies *ps, unsigned policy, unsigned workload,
			  uint64_t duration_ns, uint32_t srtt_us, uint64_t now)
{
	struct policy_rt *p;
	struct workload_rt *w;
	double ms = (double)duration_ns / 1e6;

	if (policy >= ps->n)
		return;
	p = &ps->v[policy];
	/* The policy's signal: the connection's duration, or its smoothed
	 * RTT (network-side latency); the external signal is read per period. */
	if (p->cfg->signal == SL_SIGNAL_DURATION)
		sl_aimd_observe_latency(&p->aimd, now, duration_ns);
	else if (p->cfg->signal == SL_SIGNAL_SRTT && srtt_us)
		sl_aimd_observe_latency(&p->aimd, now, (uint64_t)srtt_us * 1000);
	p->period_accepted++;
	w = &p->workloads[workload == SLUICE_NONE16 || workload >= MAX_WORKLOADS ? 0 : workload + 1];
	w->admitted++;
	w->latency_ewma_ms = w->admitted == 1 ? ms : 0.9 * w->latency_ewma_ms + 0.1 * ms;
}

/* The external signal: one number (milliseconds) the application keeps in
 * a file; NaN (no valid value this period) when it is missing or not a
 * number, which the controller treats like an empty window. */
static double read_external(struct policy_rt *p)
{
	char buf[64], *end;
	double v = NAN;
	FILE *f;

	if (!p->cfg->external_path)
		return NAN;
	f = fopen(p->cfg->external_path, "re");
	if (!f) {
		if (!p->external_warned)
			pr_warn("policy %s: external signal %s: %s", p->name, p->cfg->external_path,
				strerror(errno));
		p->external_warned = true;
		return NAN;
	}
	if (fgets(buf, sizeof(buf), f)) {
		v = strtod(buf, &end);
		if (end == buf || !isfinite(v) || v < 0)
			v = NAN;
	}
	fclose(f);
	p->external_warned = false;
	return v;
}

void sl_policies_tick(struct sl_policies *ps, uint64_t now)
{
	for (size_t i = 0; i < ps->n; i++) {
		struct policy_rt *p = &ps->v[i];
		bool was = p->have_out ? p->out.pass_through : true;

		if (now < p->next_period_ns)
			continue;
		p->next_period_ns = now + p->aimd.p.period_ns;
		/* Observe stage: nothing is rejected yet. */
		if (p->cfg->signal == SL_SIGNAL_EXTERNAL) {
			double observed = 1.0;

			sl_aimd_period_signal(&p->aimd, read_external(p), observed, &p->out);
		} else {
			sl_aimd_observe_tokens(&p->aimd, (double)p->period_accepted, 0);
			sl_aimd_period(&p->aimd, now, &p->out);
		}
		p->period_accepted = 0;
		p->have_out = true;
		if (was != p->out.pass_through || p->out.overload)
			pr_info("policy %s: signal %.1f ms, setpoint %.1f ms, %s, load multiplier %.3f%s",
				p->name, p->out.signal, p->out.setpoint,
				p->out.overload ? "OVERLOAD" : "ok", p->out.load_multiplier,
				p->out.pass_through ? " (pass-through)" : "");
	}
}

static void jnum(struct json_out *jo, const char *key, double v)
{
	if (isfinite(v))
		jo_double(jo, key, v);
	else
		jo_null(jo, key);
}

void sl_policies_dump(struct sl_policies *ps, FILE *f)
{
	struct json_out jo;

	jo_init(&jo, f, false);
	jo_obj_begin(&jo, NULL);
	jo_str(&jo, "stage", "observe");
	jo_arr_begin(&jo, "policies");
	for (size_t i = 0; i < ps->n; i++) {
		struct policy_rt *p = &ps->v[i];
		const struct sl_aimd_out *o = &p->out;

		jo_obj_begin(&jo, NULL);
		jo_str(&jo, "name", p->name);
		jo_u64(&jo, "periods", p->aimd.periods);
		jo_u64(&jo, "period_ms", p->aimd.p.period_ns / 1000000);
		if (p->have_out) {
			jnum(&jo, "signal_ms", o->signal);
			jnum(&jo, "setpoint_ms", o->setpoint);
			jo_bool(&jo, "overload", o->overload);
			jnum(&jo, "gradient", o->gradient);
			jnum(&jo, "integrator", o->integrator);
			jnum(&jo, "observed", o->observed);
			jnum(&jo, "load_multiplier", o->load_multiplier);
			jo_bool(&jo, "pass_through", o->pass_through);
		} else {
			jo_null(&jo, "signal_ms");
			jo_null(&jo, "setpoint_ms");
			jo_bool(&jo, "overload", false);
			jo_null(&jo, "gradient");
			jnum(&jo, "integrator", p->aimd.integrator);
			jo_null(&jo, "observed");
			jo_double(&jo, "load_multiplier", 0);
			jo_bool(&jo, "pass_through", true);
		}
		jo_arr_begin(&jo, "workloads");
		for (size_t w = 0; w <= p->cfg->n_workloads && w <= MAX_WORKLOADS; w++) {
			const struct workload_rt *wr = &p->workloads[w];

			jo_obj_begin(&jo, NULL);
			jo_str(&jo, "name", w ? p->cfg->workloads[w - 1].name : "default");
			jo_u64(&jo, "admitted", wr->admitted);
			jo_u64(&jo, "deferred", 0);
			jo_u64(&jo, "rejected", 0);
			jnum(&jo, "token_estimate_ms", wr->admitted ? wr->latency_ewma_ms : NAN);
			jo_obj_end(&jo);
		}
		jo_arr_end(&jo);
		jo_obj_end(&jo);
	}
	jo_arr_end(&jo);
	jo_obj_end(&jo);
	jo_finish(&jo);
}
