// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * sluicectl simulate: a policy's limit in flight (mode sluice, the daemon's
 * controller code, engine/seat_gradient.c) in closed loop with a modelled
 * CPU-bound service (engine/ps_model.c: processor sharing over CORES, WORK
 * of one core a connection), under phases of offered load, against the
 * same service unprotected.  Where replay runs a controller open loop over
 * what a service did, this shows what the service would do behind it: for
 * tuning max_in_flight, min_in_flight and the tolerance before a surge
 * does it for real.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "config/duration.h"
#include "ctl/ctl.h"
#include "ctl/options.h"
#include "ctl/plot.h"
#include "engine/ps_model.h"
#include "engine/seat_gradient.h"
#include "lib/grow.h"
#include "lib/json_out.h"

#define MAX_PHASES   32
#define MAX_TOTAL_S  3600
#define MAX_RATE     100000.0

struct sim_phases {
	size_t n;
	struct sim_phase {
		uint64_t duration_ns;
		double rate, cores; /* cores: 0 = --cores */
	} v[MAX_PHASES];
};

struct simulate_opts {
	const char *policy, *name, *plot;
	double cores;
	uint64_t work_ns, patience_ns;
	bool patience_given;
	struct sim_phases phases;
	uint64_t seed;
	bool json;
};

/* "40s@80,60s@480/6": DURATION@RATE[/CORES], comma-separated. */
static int parse_phases(const char *arg, void *field, char *why, size_t len)
{
	struct sim_phases *ph = field;
	char buf[1024], *save = NULL, *tok;
	uint64_t total = 0;

	if (strlen(arg) >= sizeof(buf)) {
		snprintf(why, len, "too long");
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", arg);
	ph->n = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		struct sim_phase *p = &ph->v[ph->n];
		char *at = strchr(tok, '@'), *slash, *end;

		if (ph->n == MAX_PHASES) {
			snprintf(why, len, "at most %d phases", MAX_PHASES);
			return -EINVAL;
		}
		if (!at) {
			snprintf(why, len, "'%s' is not DURATION@RATE[/CORES] (e.g. 40s@80)", tok);
			return -EINVAL;
		}
		*at = '\0';
		if (sl_parse_duration(tok, &p->duration_ns) || !p->duration_ns) {
			snprintf(why, len, "'%s' is not a duration > 0 (e.g. 40s, 1m30s)", tok);
			return -EINVAL;
		}
		slash = strchr(at + 1, '/');
		if (slash)
			*slash = '\0';
		p->rate = strtod(at + 1, &end);
		if (end == at + 1 || *end || !(p->rate >= 0) || p->rate > MAX_RATE) {
			snprintf(why, len, "rate '%s' is not a number of connections/s in 0..%.0f", at + 1,
				 MAX_RATE);
			return -EINVAL;
		}
		p->cores = 0;
		if (slash) {
			p->cores = strtod(slash + 1, &end);
			if (end == slash + 1 || *end || !(p->cores > 0) || p->cores > 4096) {
				snprintf(why, len, "cores '%s' is not a number in (0, 4096]", slash + 1);
				return -EINVAL;
			}
		}
		total += p->duration_ns;
		if (total > (uint64_t)MAX_TOTAL_S * 1000000000ULL) {
			snprintf(why, len, "the phases last more than %d s together", MAX_TOTAL_S);
			return -EINVAL;
		}
		ph->n++;
	}
	if (!ph->n) {
		snprintf(why, len, "no phase");
		return -EINVAL;
	}
	return 0;
}

static int parse_work(const char *arg, void *field, char *why, size_t len)
{
	uint64_t *ns = field;

	if (sl_parse_duration(arg, ns) || !*ns || *ns > 60000000000ULL) {
		snprintf(why, len, "'%s' is not a duration in (0, 60s]", arg);
		return -EINVAL;
	}
	return 0;
}

static int parse_patience(const char *arg, void *field, char *why, size_t len)
{
	uint64_t *ns = field;

	if (sl_parse_duration(arg, ns) || *ns > 3600000000000ULL) {
		snprintf(why, len, "'%s' is not a duration of at most 1h", arg);
		return -EINVAL;
	}
	return 0;
}

static const struct sl_opt simulate_options[] = {
	SL_ROW_STRING('c', "config", struct simulate_opts, policy, "FILE",
		   "a sluice configuration holding an AverageLatencySchedulingPolicy", SL_OPT_REQUIRED),
	SL_ROW_RENAMED('P', "policy", "config"),
	SL_ROW_STRING('n', "name", struct simulate_opts, name, "NAME", "which policy, when FILE holds several", 0),
	SL_ROW_CUSTOM(0, "phases", struct simulate_opts, phases, "LIST", parse_phases,
		   "the offered load: DURATION@RATE[/CORES],... in order, RATE\n"
		   "connections/s arriving as a Poisson process, CORES the\n"
		   "service's cores in that phase (default --cores), e.g.\n"
		   "40s@80,60s@480,60s@80 (1 h in all at most)", SL_OPT_REQUIRED),
	SL_ROW_NUMBER(SL_OPT_DOUBLE, 0, "cores", struct simulate_opts, cores, "N", 0.001, 4096,
		   "the service's cores, shared among what it runs (default 8)", 0),
	SL_ROW_CUSTOM(0, "work", struct simulate_opts, work_ns, "DURATION", parse_work,
		   "one connection's work, of one core (default 50ms)", 0),
	SL_ROW_CUSTOM(0, "patience", struct simulate_opts, patience_ns, "DURATION", parse_patience,
		   "how long a connection waits for a slot before its client\n"
		   "gives up (default: the policy's default workload's\n"
		   "queue_timeout, at most 15s, as the daemon waits)", 0),
	SL_ROW_NUMBER(SL_OPT_U64, 0, "seed", struct simulate_opts, seed, "N", 1, 1.8e19,
		   "the arrivals' random seed (default 42: runs repeat)", 0),
	SL_ROW_STRING('o', "plot", struct simulate_opts, plot, "FILE.png",
		   "also draw it (gnuplot): completions/s, median time in\n"
		   "service and connections in flight, with sluice and without", 0),
	CTL_JSON(struct simulate_opts, json,
		 "one JSON object: the phases, and for each arm (none,\n"
		 "sluice) a summary per phase and a row per second"),
	SL_ROW_END,
};

static const struct sl_opt_doc simulate_doc = {
	.prog = "sluicectl", .command = "simulate",
	.description =
		"Run a policy's limit in flight (mode sluice, the daemon's controller code)\n"
		"in closed loop with a modelled CPU-bound service: CORES shared among the\n"
		"connections it runs (processor sharing), WORK of one core each, so\n"
		"capacity is CORES / WORK connections/s and past it every connection gets\n"
		"slower.  The same load runs against the service unprotected (arm none) and\n"
		"behind the limit (arm sluice: connections wait for a slot, at most\n"
		"--patience, and are admitted the moment one frees; the controller steps\n"
		"at the configuration's tick).  Per phase: completions/s, median and p99\n"
		"time in service, clients that gave up, most in flight.\n",
	.epilogue =
		"Example: sluicectl simulate -c configs/demo.yaml --cores 8 --work 50ms \\\n"
		"           --phases 40s@80,60s@480,60s@80 --plot surge.png\n\n"
		"Exit status: 0 ok, 1 invalid policy or plot failed, 2 usage.\n",
};

/* One phase of one arm. */
struct sim_summary {
	double completed_per_s, median_ms, p99_ms;
	uint64_t refused, most_in_flight;
};

struct sim_arm {
	const char *name;
	struct ctl_sim_second *seconds; /* one a second: what --json and --plot show */
	size_t n_seconds, cap_seconds;
	struct sim_summary phases[MAX_PHASES];
};

/* Durations of the completions of a second and of a phase, ms. */
struct sample {
	double *v;
	size_t n, cap;
	bool failed;
};

struct collect {
	struct sample second, phase;
};

static void push(struct sample *s, double v)
{
	if (sl_grow((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v))) {
		s->failed = true;
		return;
	}
	s->v[s->n++] = v;
}

static void on_done(void *ctx, uint64_t admitted, uint64_t duration)
{
	struct collect *c = ctx;

	(void)admitted;
	push(&c->second, (double)duration / 1e6);
	push(&c->phase, (double)duration / 1e6);
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The q-quantile (nearest rank) of s, sorted here; NaN when empty. */
static double quantile(struct sample *s, double q)
{
	size_t i;

	if (!s->n)
		return NAN;
	qsort(s->v, s->n, sizeof(*s->v), by_value);
	i = (size_t)ceil(q * (double)s->n);
	return s->v[i ? i - 1 : 0];
}

static int run_arm(struct sim_arm *arm, const struct simulate_opts *o, const struct sl_psm_params *mp,
		   struct sl_sg *sg)
{
	struct collect c = {0};
	struct sl_psm *m;
	uint64_t now = 0, refused_before = 0, phase_refused0 = 0;
	int err = sl_psm_create(&m, mp, sg);

	if (err)
		return err;
	for (size_t k = 0; k < o->phases.n && !err; k++) {
		const struct sim_phase *ph = &o->phases.v[k];
		double cores = ph->cores ? ph->cores : o->cores;
		uint64_t end = now + ph->duration_ns, most = 0;

		c.phase.n = 0;
		phase_refused0 = sl_psm_refused(m);
		while (now < end && !err) {
			now += SL_PSM_STEP_NS;
			err = sl_psm_step(m, now, ph->rate, cores, on_done, &c);
			if (sl_psm_in_flight(m) > most)
				most = sl_psm_in_flight(m);
			if (now % 1000000000ULL)
				continue;
			if (sl_grow((void **)&arm->seconds, &arm->cap_seconds, arm->n_seconds + 1,
				    sizeof(*arm->seconds))) {
				err = -ENOMEM;
				break;
			}
			arm->seconds[arm->n_seconds++] = (struct ctl_sim_second){
				.completed = (double)c.second.n,
				.refused = (double)(sl_psm_refused(m) - refused_before),
				.median_ms = quantile(&c.second, 0.5),
				.in_flight = (double)sl_psm_in_flight(m),
				.waiting = (double)sl_psm_waiting(m),
				.limit = sg && sl_sg_limit(sg) != UINT32_MAX ? (double)sl_sg_limit(sg) : NAN,
			};
			refused_before = sl_psm_refused(m);
			c.second.n = 0;
		}
		arm->phases[k] = (struct sim_summary){
			.completed_per_s = (double)c.phase.n / ((double)ph->duration_ns / 1e9),
			.median_ms = quantile(&c.phase, 0.5),
			.p99_ms = quantile(&c.phase, 0.99),
			.refused = sl_psm_refused(m) - phase_refused0,
			.most_in_flight = most,
		};
	}
	if (!err && (c.second.failed || c.phase.failed))
		err = -ENOMEM;
	sl_psm_free(m);
	free(c.second.v);
	free(c.phase.v);
	return err;
}

static void json_number_or_null(struct json_out *jo, const char *key, double v)
{
	if (isfinite(v))
		jo_double(jo, key, v);
	else
		jo_null(jo, key);
}

static void print_json(const struct simulate_opts *o, const struct sl_policy_cfg *pol,
		       const struct sim_arm *arms, size_t n_arms)
{
	struct json_out jo;
	uint64_t from = 0;

	jo_init(&jo, stdout, false);
	jo_obj_begin(&jo, NULL);
	jo_str(&jo, "policy", pol->name);
	jo_double(&jo, "cores", o->cores);
	jo_double(&jo, "work_ms", (double)o->work_ns / 1e6);
	jo_double(&jo, "capacity_per_s", o->cores / ((double)o->work_ns / 1e9));
	jo_double(&jo, "patience_s", (double)o->patience_ns / 1e9);
	jo_arr_begin(&jo, "phases");
	for (size_t k = 0; k < o->phases.n; k++) {
		const struct sim_phase *ph = &o->phases.v[k];

		jo_obj_begin(&jo, NULL);
		jo_double(&jo, "from_s", (double)from / 1e9);
		jo_double(&jo, "to_s", (double)(from += ph->duration_ns) / 1e9);
		jo_double(&jo, "rate", ph->rate);
		jo_double(&jo, "cores", ph->cores ? ph->cores : o->cores);
		jo_obj_end(&jo);
	}
	jo_arr_end(&jo);
	jo_arr_begin(&jo, "arms");
	for (size_t a = 0; a < n_arms; a++) {
		jo_obj_begin(&jo, NULL);
		jo_str(&jo, "name", arms[a].name);
		jo_arr_begin(&jo, "phases");
		for (size_t k = 0; k < o->phases.n; k++) {
			const struct sim_summary *s = &arms[a].phases[k];

			jo_obj_begin(&jo, NULL);
			jo_double(&jo, "completed_per_s", s->completed_per_s);
			json_number_or_null(&jo, "median_ms", s->median_ms);
			json_number_or_null(&jo, "p99_ms", s->p99_ms);
			jo_u64(&jo, "refused", s->refused);
			jo_u64(&jo, "most_in_flight", s->most_in_flight);
			jo_obj_end(&jo);
		}
		jo_arr_end(&jo);
		jo_arr_begin(&jo, "seconds");
		for (size_t i = 0; i < arms[a].n_seconds; i++) {
			const struct ctl_sim_second *s = &arms[a].seconds[i];

			jo_obj_begin(&jo, NULL);
			jo_u64(&jo, "t_s", i + 1);
			jo_u64(&jo, "completed", (uint64_t)s->completed);
			json_number_or_null(&jo, "median_ms", s->median_ms);
			jo_u64(&jo, "in_flight", (uint64_t)s->in_flight);
			jo_u64(&jo, "waiting", (uint64_t)s->waiting);
			jo_u64(&jo, "refused", (uint64_t)s->refused);
			json_number_or_null(&jo, "limit", s->limit);
			jo_obj_end(&jo);
		}
		jo_arr_end(&jo);
		jo_obj_end(&jo);
	}
	jo_arr_end(&jo);
	jo_obj_end(&jo);
	jo_finish(&jo);
}

static const char *ms_cell(double v, char *buf)
{
	if (!isfinite(v))
		return "-";
	snprintf(buf, 32, "%.1f", v);
	return buf;
}

static void print_table(const struct simulate_opts *o, const struct sl_policy_cfg *pol,
			const struct sl_sg_params *sp, const struct sim_arm *arms, size_t n_arms)
{
	uint64_t from = 0;

	printf("policy %s (mode sluice: in flight %u..%u, tolerance %.3g) on %.4g cores x %.4g ms "
	       "(capacity %.1f/s), patience %.3g s\n", pol->name, sp->min_limit, sp->max_limit,
	       sp->tolerance, o->cores, (double)o->work_ns / 1e6,
	       o->cores / ((double)o->work_ns / 1e9), (double)o->patience_ns / 1e9);
	printf("%-5s %-11s %9s %-7s %11s %10s %10s %9s %9s\n", "PHASE", "SECONDS", "OFFERED/S", "ARM",
	       "COMPLETED/S", "MEDIAN_MS", "P99_MS", "GAVE_UP", "MOST_IN");
	for (size_t k = 0; k < o->phases.n; k++) {
		const struct sim_phase *ph = &o->phases.v[k];
		char span[32];
		uint64_t to = from + ph->duration_ns;

		snprintf(span, sizeof(span), "%.4g-%.4g", (double)from / 1e9, (double)to / 1e9);
		for (size_t a = 0; a < n_arms; a++) {
			const struct sim_summary *s = &arms[a].phases[k];
			char b1[32], b2[32];

			printf("%-5zu %-11s %9.4g %-7s %11.1f %10s %10s %9llu %9llu\n", k + 1, span, ph->rate,
			       arms[a].name, s->completed_per_s, ms_cell(s->median_ms, b1),
			       ms_cell(s->p99_ms, b2), (unsigned long long)s->refused,
			       (unsigned long long)s->most_in_flight);
		}
		from = to;
	}
}

int ctl_simulate(int argc, char **argv)
{
	struct simulate_opts o = {.cores = 8, .work_ns = 50000000ULL, .seed = 42};
	struct sim_arm arms[2] = {{.name = "none"}, {.name = "sluice"}};
	struct sl_config *cfg = NULL;
	const struct sl_policy_cfg *pol;
	struct sl_opt_parsed parsed;
	struct sl_sg_params sp;
	struct sl_sg sg;
	int rc, err = 0;

	rc = ctl_parse_options(&simulate_doc, simulate_options, &o, argc, argv, &parsed);
	if (rc != CTL_PARSE_RUN)
		return rc;
	pol = ctl_policy_from_file("simulate", o.policy, o.name, &cfg, &rc);
	if (!pol)
		goto out;
	if (pol->mode != SL_POLICY_SLUICE)
		fprintf(stderr, "sluicectl simulate: note: policy %s runs mode aperture; this simulates mode "
			"sluice with its parameters (spec.adaptive)\n", pol->name);
	if (!sl_opt_given(simulate_options, &parsed, "patience"))
		o.patience_ns = sl_workload_wait_limit_ns(&pol->default_params); /* as the daemon bounds a wait */
	{
		struct sl_psm_params mp = {.work_ms = (double)o.work_ns / 1e6, .patience_ns = o.patience_ns,
					   .seed = o.seed, .decide_ns = cfg->server.tick_ns};

		sl_sg_params_from_policy(&sp, pol);
		sl_sg_init(&sg, &sp, 0);
		err = run_arm(&arms[0], &o, &mp, NULL);
		if (!err)
			err = run_arm(&arms[1], &o, &mp, &sg);
	}
	if (err) {
		fprintf(stderr, "sluicectl simulate: %s\n", strerror(-err));
		rc = CTL_FAIL;
		goto out;
	}
	if (o.json)
		print_json(&o, pol, arms, 2);
	else
		print_table(&o, pol, &sp, arms, 2);
	rc = fflush(stdout) ? CTL_FAIL : CTL_OK;
	if (rc == CTL_OK && o.plot) {
		struct ctl_plot_arm pa[2];
		char title[160];

		for (size_t a = 0; a < 2; a++)
			pa[a] = (struct ctl_plot_arm){.name = arms[a].name, .s = arms[a].seconds,
						      .n = arms[a].n_seconds};
		snprintf(title, sizeof(title), "sluicectl simulate: policy %s, %.4g cores x %.4g ms", pol->name,
			 o.cores, (double)o.work_ns / 1e6);
		if (ctl_plot_simulate(o.plot, title, pa, 2))
			rc = CTL_FAIL;
	}
out:
	free(arms[0].seconds);
	free(arms[1].seconds);
	sl_config_free(cfg);
	return rc;
}
