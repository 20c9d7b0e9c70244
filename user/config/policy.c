// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Configuration loader: kind AverageLatencySchedulingPolicy (Alibaba ASM; Aperture's average-latency blueprint).
 * The ASM CRD's fields verbatim plus sluice's signal, baseliner and period
 * (see config.h for the whole shape and the defaults).
 */
#include "config/decode.h"
#include "lib/grow.h"
#include "lib/syn_retransmit.h"
#include "sluice_abi.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Defaults (Aperture gradient-controller.go, average-latency blueprint, workload-scheduler/scheduler.go). */
#define DEF_SLOPE           (-1.0)
#define DEF_MIN_GRADIENT    0.1
#define DEF_MAX_GRADIENT    1.0
#define DEF_INCREMENT       0.025
#define DEF_MAX_LM          2.0
#define DEF_PRIORITY        1.0
#define DEF_PERIOD          (10 * SEC)
#define DEF_SIGNAL_WINDOW   (30 * SEC)
#define DEF_BASELINE_WINDOW (30 * MIN)
#define DEF_BASELINE_PERIOD (30 * SEC)
#define DEF_TOLERANCE       1.25
#define DEF_CONTROL_POINT   "ingress"
#define DEF_SERVICE         "any"
#define DEF_AGENT_GROUP     "default"
#define DEFAULT_WORKLOAD    "default"
#define DEF_MAX_IN_FLIGHT   1000
#define DEF_MIN_IN_FLIGHT   1

#define POL struct sl_policy_cfg
#define WP struct sl_workload_params

static const struct enumval policy_modes[] = {
	{ "sluice", SL_POLICY_SLUICE }, { "aperture", SL_POLICY_APERTURE }, { NULL, 0 },
};

enum { SP_CORE, SP_SIGNAL, SP_BASELINER, SP_PERIOD, SP_MODE, SP_ADAPTIVE, SP_N };
static const struct fdesc spec_fields[SP_N] = {
	[SP_CORE] = F_CUSTOM("load_scheduling_core", .required = true, .type = "mapping"),
	[SP_SIGNAL] = F_CUSTOM("signal", .type = "mapping"),
	[SP_BASELINER] = F_CUSTOM("latency_baseliner", .type = "mapping"),
	[SP_PERIOD] = F_DUR("control_period", POL, period_ns, 1 * MSEC, 1 * HOUR),
	[SP_MODE] = F_ENUM("mode", POL, mode, policy_modes),
	[SP_ADAPTIVE] = F_CUSTOM("adaptive", .type = "mapping (mode sluice)"),
};

enum { AD_MAX, AD_MIN, AD_N };
static const struct fdesc adaptive_fields[AD_N] = {
	[AD_MAX] = F_INT("max_in_flight", POL, max_in_flight, 2, 1000000),
	[AD_MIN] = F_INT("min_in_flight", POL, min_in_flight, 1, 999999),
};

static const struct fdesc core_fields[] = {
	F_CUSTOM("aimd_load_scheduler", .required = true, .type = "mapping"),
};

enum { AI_GRADIENT, AI_INC, AI_MAX_LM, AI_MIN_LM, AI_LS, AI_N };
static const struct fdesc aimd_fields[AI_N] = {
	[AI_GRADIENT] = F_CUSTOM("gradient", .type = "mapping"),
	/* 0 is allowed and means the default, as in ASM's CRD (Aperture fills
	 * a zero field with its default). */
	[AI_INC] = F_NUM("load_multiplier_linear_increment", POL,
			 load_multiplier_linear_increment, 0, 1e9),
	[AI_MAX_LM] = F_NUM("max_load_multiplier", POL, max_load_multiplier, 0, 1e9),
	[AI_MIN_LM] = F_NUM("min_load_multiplier", POL, min_load_multiplier, 0, 1e9),
	[AI_LS] = F_CUSTOM("load_scheduler", .required = true, .type = "mapping"),
};

enum { GR_SLOPE, GR_MIN, GR_MAX, GR_N };
static const struct fdesc gradient_fields[GR_N] = {
	[GR_SLOPE] = F_NUM("slope", POL, slope, -1e9, 1e9),
	[GR_MIN] = F_NUM("min_gradient", POL, min_gradient, -1e300, 1e300),
	[GR_MAX] = F_NUM("max_gradient", POL, max_gradient, -1e300, 1e300),
};

enum { LS_SELECTORS, LS_SCHEDULER, LS_WLBT, LS_N };
static const struct fdesc ls_fields[LS_N] = {
	[LS_SELECTORS] = F_CUSTOM("selectors", .required = true, .type = "list of mappings"),
	[LS_SCHEDULER] = F_CUSTOM("scheduler", .type = "mapping"),
	[LS_WLBT] = F_BOOL("workload_latency_based_tokens", POL, workload_latency_based_tokens),
};

enum { SC_WORKLOADS, SC_DEFAULT, SC_WLBT, SC_N };
static const struct fdesc scheduler_fields[SC_N] = {
	[SC_WORKLOADS] = F_CUSTOM("workloads", .type = "list of mappings"),
	[SC_DEFAULT] = F_CUSTOM("default_workload_parameters", .type = "mapping: the parameters below"),
	/* Aperture has it on load_scheduler; accepted here too. */
	[SC_WLBT] = F_CUSTOM("workload_latency_based_tokens", .type = "boolean (also on load_scheduler)"),
};

enum { WL_NAME, WL_MATCHER, WL_PARAMS, WL_N };
static const struct fdesc workload_fields[WL_N] = {
	[WL_NAME] = F_CUSTOM("name", .type = "string"),
	[WL_MATCHER] = F_CUSTOM("label_matcher", .required = true, .type = "a label matcher"),
	[WL_PARAMS] = F_CUSTOM("parameters", .type = "mapping"),
};

enum { PA_PRIORITY, PA_TOKENS, PA_TIMEOUT, PA_DELAY_TARGET, PA_DELAY_INTERVAL, PA_N };
static const struct fdesc param_fields[PA_N] = {
	[PA_PRIORITY] = F_NUM("priority", WP, priority, 0, 1e300, .dmin_open = true),
	[PA_TOKENS] = F_NUM("tokens", WP, tokens, 0, 1e300),
	[PA_TIMEOUT] = F_DUR("queue_timeout", WP, queue_timeout_ns, 0, 24 * HOUR,
			     .dflt = SL_DEFERRED_WAIT_TEXT " (a level's queueWaitLimit too)"),
	/* sluice's: the controlled delay of the workload's queue (mode sluice). */
	[PA_DELAY_TARGET] = F_DUR("queue_delay_target", WP, queue_delay_target_ns, 0, 24 * HOUR),
	[PA_DELAY_INTERVAL] = F_DUR("queue_delay_interval", WP, queue_delay_interval_ns, 1 * MSEC, 24 * HOUR),
};

enum { SE_CONTROL_POINT, SE_SERVICE, SE_AGENT_GROUP, SE_MATCHER, SE_N };
static const struct fdesc selector_fields[SE_N] = {
	[SE_CONTROL_POINT] = F_CUSTOM("control_point", .type = "string (kept, unused)"),
	[SE_SERVICE] = F_CUSTOM("service", .type = "string (kept, unused)"),
	[SE_AGENT_GROUP] = F_CUSTOM("agent_group", .type = "string (kept, unused)"),
	[SE_MATCHER] = F_CUSTOM("label_matcher", .type = "a label matcher"),
};

static const struct enumval signal_types[] = {
	{ "duration", SL_SIGNAL_DURATION }, { "srtt", SL_SIGNAL_SRTT },
	{ "external", SL_SIGNAL_EXTERNAL }, { NULL, 0 },
};

enum { SG_TYPE, SG_PATH, SG_SOCKET, SG_WINDOW, SG_N };
static const struct fdesc signal_fields[SG_N] = {
	[SG_TYPE] = F_ENUM("type", POL, signal, signal_types),
	[SG_PATH] = F_STR("external_path", POL, external_path),
	[SG_SOCKET] = F_STR("external_socket", POL, external_socket),
	[SG_WINDOW] = F_DUR("window", POL, signal_window_ns, 1 * MSEC, 24 * HOUR),
};

enum { BL_TOLERANCE, BL_WINDOW, BL_PERIOD, BL_INCLUDE, BL_FLUX, BL_N };
static const struct fdesc baseliner_fields[BL_N] = {
	[BL_TOLERANCE] = F_NUM("latency_tolerance_multiplier", POL, tolerance, 0, 1e9,
			       .dmin_open = true),
	[BL_WINDOW] = F_DUR("long_term_query_interval", POL, baseline_window_ns,
			    1 * MSEC, 30 * 24 * HOUR),
	[BL_PERIOD] = F_DUR("long_term_query_periodic_interval", POL, baseline_period_ns,
			    1 * MSEC, 24 * HOUR),
	/* sluice's: true gives Aperture's baseline exactly, overloaded periods
	 * included (`sluicectl replay -B` shows the difference). */
	[BL_INCLUDE] = F_BOOL("include_overloaded_periods", POL, baseline_includes_overload),
	/* Aperture's blueprints require one; pasted, it is said and not read. */
	[BL_FLUX] = F_CUSTOM("flux_meter", .type = "mapping"),
};
#undef POL
#undef WP

/* ---- release ------------------------------------------------------------------ */

void cd_policy_release(struct sl_policy_cfg *p)
{
	for (size_t i = 0; i < p->n_selectors; i++) {
		free(p->selectors[i].control_point);
		free(p->selectors[i].service);
		free(p->selectors[i].agent_group);
		sl_label_matcher_free(&p->selectors[i].matcher);
	}
	free(p->selectors);
	for (size_t i = 0; i < p->n_workloads; i++) {
		free(p->workloads[i].name);
		sl_label_matcher_free(&p->workloads[i].matcher);
	}
	free(p->workloads);
	free(p->external_path);
	free(p->external_socket);
	free(p->file);
	memset(p, 0, sizeof(*p));
}

/* ---- pieces --------------------------------------------------------------------- */

static void params_defaults(struct sl_workload_params *wp)
{
	memset(wp, 0, sizeof(*wp));
	wp->priority = DEF_PRIORITY;
	wp->queue_timeout_ns = SL_QUEUE_TIMEOUT_UNSET;
	wp->queue_delay_target_ns = SL_DEFERRED_DELAY_TARGET_NS;
	wp->queue_delay_interval_ns = SL_DEFERRED_DELAY_INTERVAL_NS;
}

static void decode_params(struct ctx *c, const struct sl_ynode *n,
			  struct sl_workload_params *wp)
{
	struct fhit h[PA_N];

	if (!cd_decode_fields(c, n, param_fields, PA_N, wp, h))
		return;
	/* tokens 0 means "unset" in Aperture (Aperture workload-scheduler/scheduler.go) */
	wp->tokens_set = h[PA_TOKENS].value && h[PA_TOKENS].ok && wp->tokens != 0;
	if (!wp->tokens_set)
		wp->tokens = 0;
	wp->queue_timeout_set = h[PA_TIMEOUT].value && h[PA_TIMEOUT].ok;
	if (h[PA_DELAY_TARGET].ok && h[PA_DELAY_INTERVAL].ok &&
	    wp->queue_delay_target_ns > wp->queue_delay_interval_ns) {
		const struct sl_ynode *at = h[PA_DELAY_TARGET].value ? h[PA_DELAY_TARGET].value
								     : h[PA_DELAY_INTERVAL].value;
		size_t old = cd_path_push(c, h[PA_DELAY_TARGET].value ? "queue_delay_target" : "queue_delay_interval");

		cd_err(c, at ? at : n,
		       "the delay target %s must not exceed queue_delay_interval (%s): a standing queue is one whose backlog has lasted the interval",
		       cd_dur(wp->queue_delay_target_ns).s, cd_dur(wp->queue_delay_interval_ns).s);
		cd_path_pop(c, old);
	}
	if (!wp->queue_timeout_set) {
		wp->queue_timeout_ns = SL_QUEUE_TIMEOUT_UNSET;
	} else if (wp->queue_timeout_ns > SL_SYN_CLIENT_DEADLINE_NS) {
		/* policy_rt.c bounds every wait in a scheduler by the client's
		 * deadline: say the bound that applies, where it applies. */
		size_t old = cd_path_push(c, "queue_timeout");

		cd_warn(c, h[PA_TIMEOUT].value,
			"%s is longer than a connection may wait in a policy's scheduler (%s, when most clients' connect has given up); it waits %s at most",
			cd_dur(wp->queue_timeout_ns).s, cd_dur(SL_SYN_CLIENT_DEADLINE_NS).s,
			cd_dur(SL_SYN_CLIENT_DEADLINE_NS).s);
		cd_path_pop(c, old);
	} else if (wp->queue_timeout_ns >= SL_SYN_IMPATIENT_NS) {
		size_t old = cd_path_push(c, "queue_timeout");

		cd_warn(c, h[PA_TIMEOUT].value,
			"%s is at or beyond " SL_SYN_IMPATIENT_TEXT "; a connection still waiting then ends in a silent time-out (keep it under your clients' connect timeout)",
			cd_dur(wp->queue_timeout_ns).s);
		cd_path_pop(c, old);
	}
}

uint64_t sl_workload_wait_limit_ns(const struct sl_workload_params *wp)
{
	if (!wp->queue_timeout_set)
		return SL_DEFERRED_WAIT_NS;
	return wp->queue_timeout_ns < SL_SYN_CLIENT_DEADLINE_NS ? wp->queue_timeout_ns : SL_SYN_CLIENT_DEADLINE_NS;
}

/* A required-looking string with a default: *out is malloc'ed. */
static const struct sl_ynode *string_field(struct ctx *c, const struct fhit *h,
					   const char *name, const char *def,
					   char **out)
{
	const char *s = def;
	size_t old = cd_path_push(c, name);

	if (h->value && cd_get_string(c, h->value, &s) && !*s) {
		cd_err(c, h->value, "must not be empty (the default is '%s')", def);
		s = def;
	}
	cd_path_pop(c, old);
	if (!(*out = strdup(s)))
		cd_oom(c);
	return h->value;
}

static void decode_selector(struct load *L, const struct sl_ynode *n,
			    struct sl_selector_cfg *sel)
{
	struct ctx *c = L->c;
	struct fhit h[SE_N];
	const struct sl_ynode *v;
	size_t old;
	QBUF;

	memset(sel, 0, sizeof(*sel));
	sel->line = n->line;
	sel->column = n->column;
	if (!cd_decode_fields(c, n, selector_fields, SE_N, NULL, h)) {
		sel->control_point = strdup(DEF_CONTROL_POINT);
		sel->service = strdup(DEF_SERVICE);
		sel->agent_group = strdup(DEF_AGENT_GROUP);
		if (!sel->control_point || !sel->service || !sel->agent_group)
			cd_oom(c);
		return;
	}
	v = string_field(c, &h[SE_CONTROL_POINT], "control_point", DEF_CONTROL_POINT,
			 &sel->control_point);
	if (v && sel->control_point && strcmp(sel->control_point, DEF_CONTROL_POINT)) {
		old = cd_path_push(c, "control_point");
		cd_err(c, v, "sluice acts on connections arriving at this host, so the only control point at layer 4 is 'ingress', got '%s'",
		       Q(v));
		cd_path_pop(c, old);
	}
	v = string_field(c, &h[SE_SERVICE], "service", DEF_SERVICE, &sel->service);
	if (v && sel->service && strcmp(sel->service, DEF_SERVICE)) {
		/* Aperture's selector picks a service's flows; here a connection
		 * has no service, only labels, and ignoring the name would
		 * widen the policy to every connection of the host. */
		old = cd_path_push(c, "service");
		cd_err(c, v, "sluice cannot tell services apart at layer 4, so '%s' would select every connection of the host; use service: any with a label_matcher on dst.port (the service's port)",
		       Q(v));
		cd_path_pop(c, old);
	}
	v = string_field(c, &h[SE_AGENT_GROUP], "agent_group", DEF_AGENT_GROUP,
			 &sel->agent_group);
	if (v && sel->agent_group && strcmp(sel->agent_group, DEF_AGENT_GROUP)) {
		old = cd_path_push(c, "agent_group");
		cd_err(c, v, "sluice runs one agent per host, in agent group 'default'; a selector for agent group '%s' would select nothing",
		       Q(v));
		cd_path_pop(c, old);
	}
	if (h[SE_MATCHER].value) {
		old = cd_path_push(c, "label_matcher");
		cd_decode_label_matcher(L, h[SE_MATCHER].value, &sel->matcher);
		cd_path_pop(c, old);
	}
}

/* With latency-based tokens, the estimate a workload's connections earn
 * replaces its configured tokens once there is one: what Aperture's code
 * does (workload-scheduler/scheduler.go), though ASM's documentation says
 * configured tokens win.  Said where it is switched on. */
static void warn_tokens_replaced(struct ctx *c, const struct sl_policy_cfg *p,
				 const struct sl_ynode *at, const char *field)
{
	char names[256] = "";
	size_t n = 0, len = 0, old;

	if (!p->workload_latency_based_tokens || !at || p->mode != SL_POLICY_APERTURE)
		return; /* mode sluice reads no tokens: warn_sluice_ignores says so */
	for (size_t i = 0; i <= p->n_workloads; i++) {
		const struct sl_workload_params *wp = i < p->n_workloads ? &p->workloads[i].params
									: &p->default_params;
		const char *name = i < p->n_workloads ? p->workloads[i].name : "the default workload";
		int w;

		if (!wp->tokens_set)
			continue;
		if (!name || !name[0])
			name = "(unnamed)";
		w = snprintf(names + len, sizeof(names) - len, "%s%s", n ? ", " : "", name);
		if (w > 0 && (size_t)w < sizeof(names) - len)
			len += (size_t)w;
		n++;
	}
	if (!n)
		return;
	old = cd_path_push(c, field);
	cd_warn(c, at,
		"with workload_latency_based_tokens the estimate replaces the tokens set for %s once "
		"it has one (as Aperture's scheduler does; ASM's documentation says configured tokens win)",
		names);
	cd_path_pop(c, old);
}

static bool matcher_empty(const struct sl_label_matcher *m)
{
	return !m->n_reqs && !m->expr;
}

struct wl_name {
	const struct sl_ynode *node;
	size_t idx;
};

static int cmp_wl_name(const void *a, const void *b)
{
	const struct wl_name *x = a, *y = b;
	int r = strcmp(x->node->str, y->node->str);

	return r ? r : x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Workload names are unique in a policy (O(n log n)). */
static void check_workload_names(struct ctx *c, struct wl_name *names, size_t n)
{
	size_t run = 0;

	if (n < 2)
		return;
	qsort(names, n, sizeof(*names), cmp_wl_name);
	for (size_t i = 1; i < n; i++) {
		const struct sl_ynode *k = names[i].node, *first = names[run].node;
		size_t old;
		QBUF;

		if (strcmp(k->str, first->str)) {
			run = i;
			continue;
		}
		old = cd_path_push_index(c, names[i].idx);
		cd_path_push(c, "name");
		cd_err(c, k, "duplicate workload name '%s'; also defined at %s:%u:%u",
		       Q(k), c->file, first->line, first->column);
		cd_path_pop(c, old);
	}
}

static void decode_workloads(struct load *L, const struct sl_ynode *v,
			     struct sl_policy_cfg *p)
{
	struct ctx *c = L->c;
	struct wl_name *names;
	size_t n_names = 0;

	if (!cd_expect_seq(c, v, "workloads ({name, label_matcher, parameters})") ||
	    !v->n_items || !cd_budget(c, v, v->n_items))
		return;
	if (v->n_items > SLUICE_MAX_WORKLOADS) {
		/* The data path keeps per-workload token costs and counters
		 * in fixed slots (sluice_abi.h). */
		cd_err(c, v, "too many workloads (%zu); at most %d per policy are supported, besides the default workload",
		       v->n_items, SLUICE_MAX_WORKLOADS);
		return;
	}
	p->workloads = calloc(v->n_items, sizeof(*p->workloads));
	names = calloc(v->n_items, sizeof(*names));
	if (!p->workloads || !names) {
		free(names);
		cd_oom(c);
		return;
	}
	for (size_t i = 0; i < v->n_items; i++) {
		struct sl_workload_cfg *w = &p->workloads[p->n_workloads++];
		struct fhit h[WL_N];
		size_t old = cd_path_push_index(c, i), o2;

		w->line = v->items[i]->line;
		w->column = v->items[i]->column;
		params_defaults(&w->params);
		if (!cd_decode_fields(c, v->items[i], workload_fields, WL_N, NULL, h))
			goto next;
		if (h[WL_NAME].value) {
			const char *name;

			o2 = cd_path_push(c, "name");
			if (cd_get_string(c, h[WL_NAME].value, &name)) {
				const struct sl_ynode *k = h[WL_NAME].value;

				if (!*name) {
					cd_err(c, k, "must not be empty (leave it out to name the workload by its index)");
				} else if (!strcmp(name, DEFAULT_WORKLOAD)) {
					cd_err(c, k, "'default' names the default workload (connections no workload matches); set scheduler.default_workload_parameters instead, or pick another name");
				} else {
					names[n_names++] = (struct wl_name){ k, i };
					if (!(w->name = strdup(name)))
						cd_oom(c);
				}
			}
			cd_path_pop(c, o2);
		}
		if (h[WL_MATCHER].value) {
			o2 = cd_path_push(c, "label_matcher");
			cd_decode_label_matcher(L, h[WL_MATCHER].value, &w->matcher);
			if (matcher_empty(&w->matcher) && i + 1 < v->n_items &&
			    h[WL_MATCHER].value->type == SL_Y_MAP &&
			    !h[WL_MATCHER].value->n_pairs)
				cd_warn(c, h[WL_MATCHER].value,
					"an empty label_matcher matches every connection, so the workloads after this one are never used");
			cd_path_pop(c, o2);
		}
		if (h[WL_PARAMS].value) {
			o2 = cd_path_push(c, "parameters");
			decode_params(c, h[WL_PARAMS].value, &w->params);
			cd_path_pop(c, o2);
		}
next:
		cd_path_pop(c, old);
	}
	check_workload_names(c, names, n_names);
	free(names);
}

static void decode_load_scheduler(struct load *L, const struct sl_ynode *n,
				  struct sl_policy_cfg *p)
{
	struct ctx *c = L->c;
	struct fhit h[LS_N], sh[SC_N];
	const struct sl_ynode *sel;
	size_t old = cd_path_push(c, "load_scheduler"), o2;

	if (!cd_decode_fields(c, n, ls_fields, LS_N, p, h))
		goto out;
	sel = h[LS_SELECTORS].value;
	o2 = cd_path_push(c, "selectors");
	if (sel && cd_expect_seq(c, sel, "selectors ({control_point, service, label_matcher})")) {
		if (!sel->n_items) {
			cd_err(c, sel, "must not be empty: a policy without selectors applies to no connection");
		} else if (cd_budget(c, sel, sel->n_items)) {
			p->selectors = calloc(sel->n_items, sizeof(*p->selectors));
			if (!p->selectors) {
				cd_oom(c);
			} else {
				for (size_t i = 0; i < sel->n_items; i++) {
					size_t o3 = cd_path_push_index(c, i);

					decode_selector(L, sel->items[i], &p->selectors[p->n_selectors++]);
					cd_path_pop(c, o3);
				}
			}
		}
	} else if (!sel && h[LS_SELECTORS].key) {
		cd_err(c, h[LS_SELECTORS].key, "must not be empty: a policy without selectors applies to no connection");
	}
	cd_path_pop(c, o2);
	if (h[LS_SCHEDULER].value) {
		o2 = cd_path_push(c, "scheduler");
		if (cd_decode_fields(c, h[LS_SCHEDULER].value, scheduler_fields, SC_N, NULL, sh)) {
			if (sh[SC_WORKLOADS].value) {
				size_t o3 = cd_path_push(c, "workloads");

				decode_workloads(L, sh[SC_WORKLOADS].value, p);
				cd_path_pop(c, o3);
			}
			if (sh[SC_DEFAULT].value) {
				size_t o3 = cd_path_push(c, "default_workload_parameters");

				decode_params(c, sh[SC_DEFAULT].value, &p->default_params);
				cd_path_pop(c, o3);
			}
			if (sh[SC_WLBT].value) {
				size_t o3 = cd_path_push(c, "workload_latency_based_tokens");
				bool b;

				if (cd_get_bool(c, sh[SC_WLBT].value, &b)) {
					if (h[LS_WLBT].value && h[LS_WLBT].ok &&
					    b != p->workload_latency_based_tokens)
						cd_err(c, sh[SC_WLBT].value,
						       "contradicts load_scheduler.workload_latency_based_tokens (at %s:%u:%u); set it in one place",
						       c->file, h[LS_WLBT].value->line,
						       h[LS_WLBT].value->column);
					else
						p->workload_latency_based_tokens = b;
				}
				cd_path_pop(c, o3);
			}
		}
		cd_path_pop(c, o2);
	}
	if (sh[SC_WLBT].value)
		warn_tokens_replaced(c, p, sh[SC_WLBT].value, "scheduler.workload_latency_based_tokens");
	else
		warn_tokens_replaced(c, p, h[LS_WLBT].value, "workload_latency_based_tokens");
out:
	cd_path_pop(c, old);
}

static void decode_aimd(struct load *L, const struct sl_ynode *n,
			struct sl_policy_cfg *p)
{
	struct ctx *c = L->c;
	struct fhit h[AI_N], gh[GR_N];
	size_t old = cd_path_push(c, "aimd_load_scheduler"), o2;

	if (!cd_decode_fields(c, n, aimd_fields, AI_N, p, h))
		goto out;
	if (p->load_multiplier_linear_increment == 0)
		p->load_multiplier_linear_increment = DEF_INCREMENT;
	if (p->max_load_multiplier == 0)
		p->max_load_multiplier = DEF_MAX_LM;
	if (h[AI_GRADIENT].value) {
		o2 = cd_path_push(c, "gradient");
		if (cd_decode_fields(c, h[AI_GRADIENT].value, gradient_fields, GR_N, p, gh)) {
			if (gh[GR_SLOPE].value && gh[GR_SLOPE].ok && p->slope == 0) {
				size_t o3 = cd_path_push(c, "slope");

				cd_err(c, gh[GR_SLOPE].value,
				       "must not be 0: the gradient would always be 1 and the controller could never shed load (Aperture requires a slope; the ASM default is -1)");
				cd_path_pop(c, o3);
			}
			if (gh[GR_MIN].ok && gh[GR_MAX].ok &&
			    p->max_gradient < p->min_gradient) {
				const struct sl_ynode *at = gh[GR_MAX].value ? gh[GR_MAX].value :
							    gh[GR_MIN].value;
				size_t o3 = cd_path_push(c, gh[GR_MAX].value ? "max_gradient" :
								  "min_gradient");

				cd_err(c, at, "max_gradient %s%g is below min_gradient %s%g",
				       gh[GR_MAX].value ? "" : "(default) ", p->max_gradient,
				       gh[GR_MIN].value ? "" : "(default) ", p->min_gradient);
				cd_path_pop(c, o3);
			}
		}
		cd_path_pop(c, o2);
	}
	if (h[AI_MIN_LM].value && h[AI_MIN_LM].ok && h[AI_MAX_LM].ok &&
	    p->min_load_multiplier >= p->max_load_multiplier) {
		o2 = cd_path_push(c, "min_load_multiplier");
		cd_err(c, h[AI_MIN_LM].value,
		       "must be below max_load_multiplier (%g), got %g",
		       p->max_load_multiplier, p->min_load_multiplier);
		cd_path_pop(c, o2);
	}
	if (h[AI_LS].value)
		decode_load_scheduler(L, h[AI_LS].value, p);
out:
	cd_path_pop(c, old);
}

/* An absolute path shorter than max bytes (with its NUL), if given. */
static void check_abs_path(struct ctx *c, const struct fhit *h, const char *field,
			   const char *path, size_t max)
{
	size_t o2;
	QBUF;

	if (!h->ok || !path)
		return;
	o2 = cd_path_push(c, field);
	if (path[0] != '/')
		cd_err(c, h->value, "must be an absolute path, got '%s'", Q(h->value));
	else if (strlen(path) >= max)
		cd_err(c, h->value, "too long (%zu bytes); at most %zu", strlen(path), max - 1);
	cd_path_pop(c, o2);
}

static void decode_signal(struct ctx *c, const struct sl_ynode *n,
			  struct sl_policy_cfg *p, const struct sl_config *cfg)
{
	struct fhit h[SG_N];
	size_t old = cd_path_push(c, "signal"), o2;

	if (!cd_decode_fields(c, n, signal_fields, SG_N, p, h))
		goto out;
	if (!h[SG_TYPE].ok)
		goto out;
	if (p->signal == SL_SIGNAL_EXTERNAL) {
		if (!h[SG_PATH].value && !h[SG_SOCKET].value) {
			o2 = cd_path_push(c, "external_path");
			cd_err(c, n, "type external needs external_path (a file the application writes its latency in ms to) or external_socket (a Unix datagram socket it sends them to)");
			cd_path_pop(c, o2);
		} else if (h[SG_PATH].value && h[SG_SOCKET].value) {
			o2 = cd_path_push(c, "external_socket");
			cd_err(c, h[SG_SOCKET].key, "give external_path or external_socket, not both");
			cd_path_pop(c, o2);
		}
		check_abs_path(c, &h[SG_PATH], "external_path", p->external_path, 4096);
		/* sockaddr_un.sun_path holds 108 bytes with the NUL. */
		check_abs_path(c, &h[SG_SOCKET], "external_socket", p->external_socket, 108);
		/* p is the last policy decoded so far: compare with the others. */
		for (size_t k = 0; h[SG_SOCKET].ok && p->external_socket && k + 1 < cfg->n_policies; k++) {
			const struct sl_policy_cfg *q = &cfg->policies[k];

			if (q->external_socket && !strcmp(q->external_socket, p->external_socket)) {
				o2 = cd_path_push(c, "external_socket");
				cd_err(c, h[SG_SOCKET].value,
				       "already the external_socket of AverageLatencySchedulingPolicy/%s (%s:%u:%u); each policy needs its own",
				       q->name, q->file ? q->file : "?", q->line, q->column);
				cd_path_pop(c, o2);
				break;
			}
		}
	} else {
		for (int f = SG_PATH; f <= SG_SOCKET; f++) {
			if (!h[f].key)
				continue;
			o2 = cd_path_push(c, f == SG_PATH ? "external_path" : "external_socket");
			cd_err(c, h[f].key, "only allowed when type is external (type is %s)",
			       p->signal == SL_SIGNAL_SRTT ? "srtt" : "duration");
			cd_path_pop(c, o2);
		}
		free(p->external_path);
		p->external_path = NULL;
		free(p->external_socket);
		p->external_socket = NULL;
	}
out:
	cd_path_pop(c, old);
}

static void decode_baseliner(struct ctx *c, const struct sl_ynode *n,
			     struct sl_policy_cfg *p, struct fhit *h)
{
	size_t old = cd_path_push(c, "latency_baseliner");

	if (cd_decode_fields(c, n, baseliner_fields, BL_N, p, h) &&
	    h[BL_TOLERANCE].value && h[BL_TOLERANCE].ok && p->tolerance < 1) {
		size_t o2 = cd_path_push(c, "latency_tolerance_multiplier");

		cd_warn(c, h[BL_TOLERANCE].value,
			"%g is below 1: latency counts as overloaded whenever it is at its own long-term mean",
			p->tolerance);
		cd_path_pop(c, o2);
	}
	if (h[BL_FLUX].key) {
		size_t o2 = cd_path_push(c, "flux_meter");

		cd_warn(c, h[BL_FLUX].key, "not read: the latency a policy follows is that of the "
			"connections its selectors select (spec.signal), not a flux meter's");
		cd_path_pop(c, o2);
	}
	cd_path_pop(c, old);
}

/* ---- the object -------------------------------------------------------------------- */

static void policy_defaults(struct sl_policy_cfg *p)
{
	p->slope = DEF_SLOPE;
	p->min_gradient = DEF_MIN_GRADIENT;
	p->max_gradient = DEF_MAX_GRADIENT;
	p->load_multiplier_linear_increment = DEF_INCREMENT;
	p->max_load_multiplier = DEF_MAX_LM;
	p->min_load_multiplier = 0;
	params_defaults(&p->default_params);
	p->signal = SL_SIGNAL_DURATION;
	p->period_ns = DEF_PERIOD;
	p->signal_window_ns = DEF_SIGNAL_WINDOW;
	p->baseline_window_ns = DEF_BASELINE_WINDOW;
	p->baseline_period_ns = DEF_BASELINE_PERIOD;
	p->tolerance = DEF_TOLERANCE;
	p->mode = SL_POLICY_SLUICE;
	p->max_in_flight = DEF_MAX_IN_FLIGHT;
	p->min_in_flight = DEF_MIN_IN_FLIGHT;
}

static void schema_policy(void *obj)
{
	memset(obj, 0, sizeof(struct sl_policy_cfg));
	policy_defaults(obj);
}

static void schema_params(void *obj) { params_defaults(obj); }

#define POLICY_ENTRY(path, f, n) \
	{ "AverageLatencySchedulingPolicy", path, f, n, schema_policy, sizeof(struct sl_policy_cfg) }
#define LS_PATH "spec.load_scheduling_core.aimd_load_scheduler.load_scheduler"
const struct cd_schema cd_schema_policy[] = {
	POLICY_ENTRY("spec", spec_fields, SP_N),
	POLICY_ENTRY("spec.adaptive", adaptive_fields, AD_N),
	POLICY_ENTRY("spec.load_scheduling_core", core_fields, ARRAY_SIZE(core_fields)),
	POLICY_ENTRY("spec.load_scheduling_core.aimd_load_scheduler", aimd_fields, AI_N),
	POLICY_ENTRY("spec.load_scheduling_core.aimd_load_scheduler.gradient", gradient_fields, GR_N),
	POLICY_ENTRY(LS_PATH, ls_fields, LS_N),
	POLICY_ENTRY(LS_PATH ".selectors[]", selector_fields, SE_N),
	POLICY_ENTRY(LS_PATH ".scheduler", scheduler_fields, SC_N),
	{ "AverageLatencySchedulingPolicy", LS_PATH ".scheduler.workloads[]", workload_fields, WL_N, NULL, 0 },
	{ "AverageLatencySchedulingPolicy", LS_PATH ".scheduler.workloads[].parameters", param_fields, PA_N,
	  schema_params, sizeof(struct sl_workload_params) },
	POLICY_ENTRY("spec.signal", signal_fields, SG_N),
	POLICY_ENTRY("spec.latency_baseliner", baseliner_fields, BL_N),
	{ NULL },
};
#undef LS_PATH
#undef POLICY_ENTRY

/* sluice's own mode: its bounds, and the signal it needs. */
static void check_sluice_mode(struct ctx *c, const struct sl_ynode *spec, const struct fhit *h,
			      struct sl_policy_cfg *p)
{
	struct fhit ah[AD_N];
	size_t old;

	if (h[SP_ADAPTIVE].value) {
		old = cd_path_push(c, "adaptive");
		if (p->mode == SL_POLICY_APERTURE) {
			cd_err(c, h[SP_ADAPTIVE].key, "only for mode sluice (mode is aperture)");
		} else if (cd_decode_fields(c, h[SP_ADAPTIVE].value, adaptive_fields, AD_N, p, ah) &&
			   p->min_in_flight >= p->max_in_flight) {
			size_t o2 = cd_path_push(c, "min_in_flight");

			cd_err(c, ah[AD_MIN].value ? ah[AD_MIN].value : h[SP_ADAPTIVE].value,
			       "min_in_flight %u must be below max_in_flight %u", p->min_in_flight,
			       p->max_in_flight);
			cd_path_pop(c, o2);
		}
		cd_path_pop(c, old);
	}
	/* Without a mode, a policy on another signal runs Aperture's: sluice's
	 * judges durations. */
	if (!h[SP_MODE].key && p->signal != SL_SIGNAL_DURATION)
		p->mode = SL_POLICY_APERTURE;
	if (p->mode == SL_POLICY_SLUICE && p->signal != SL_SIGNAL_DURATION) {
		old = cd_path_push(c, "signal.type");
		cd_err(c, spec, "mode sluice judges the connections admitted since each decision by "
			   "their durations: signal.type must be duration (or use mode: aperture)");
		cd_path_pop(c, old);
	}
}

/* The mode that runs the policy: spec.mode, else Aperture's for a policy
 * pasted under ASM's apiVersion (what its author expects to run) or for a
 * signal other than duration (sluice's mode judges durations), else
 * sluice's. */
static enum sl_policy_mode effective_mode(const struct sl_policy_cfg *p, const struct fhit *h,
					  enum cd_api api)
{
	const struct sl_ynode *t = h[SP_SIGNAL].value ? sl_ymap_get(h[SP_SIGNAL].value, "type") : NULL;

	if (h[SP_MODE].key)
		return p->mode;
	if (api == CD_API_ASM)
		return SL_POLICY_APERTURE;
	if (t && t->type == SL_Y_STR && strcmp(t->str, "duration"))
		return SL_POLICY_APERTURE;
	return SL_POLICY_SLUICE;
}

/* Aperture's fields that sluice's mode does not read (it runs a gradient
 * on a limit in flight: max_in_flight, min_in_flight, the tolerance, the
 * workloads' priorities and waits), each named where it is written, with
 * the way to get it: a pasted ASM CRD must not seem to run AIMD. */
static void warn_ignored_at(struct ctx *c, const struct sl_ynode *map, const char *key,
			    const char *path, bool explicit_mode)
{
	const struct sl_ynode *k = map && map->type == SL_Y_MAP ? sl_ymap_get_key(map, key) : NULL;
	size_t old;

	if (!k)
		return;
	old = cd_path_push(c, path);
	cd_warn(c, k, "ignored in mode sluice%s, which runs a gradient on a limit in flight "
		"(max_in_flight, latency_tolerance_multiplier): %s is Aperture's; set spec.mode: "
		"aperture to run Aperture's AIMD load multiplier with it", explicit_mode ? "" :
		" (the default)", key);
	cd_path_pop(c, old);
}

static void warn_params_ignored(struct ctx *c, const struct sl_ynode *params, const char *path,
				bool explicit_mode)
{
	size_t old = cd_path_push(c, path);

	warn_ignored_at(c, params, "tokens", "tokens", explicit_mode);
	cd_path_pop(c, old);
}

static void warn_sluice_ignores(struct ctx *c, const struct sl_ynode *spec,
				const struct sl_policy_cfg *p, bool explicit_mode)
{
	const struct sl_ynode *aimd = sl_ymap_get(sl_ymap_get(spec, "load_scheduling_core"),
						  "aimd_load_scheduler");
	const struct sl_ynode *ls = sl_ymap_get(aimd, "load_scheduler");
	const struct sl_ynode *sched = sl_ymap_get(ls, "scheduler");
	const struct sl_ynode *wls = sl_ymap_get(sched, "workloads");
	const struct sl_ynode *tol = sl_ymap_get(sl_ymap_get(spec, "latency_baseliner"),
						 "latency_tolerance_multiplier");
	static const char *const aimd_keys[] = {
		"gradient", "load_multiplier_linear_increment", "max_load_multiplier",
		"min_load_multiplier",
	};
	static const char *const baseliner_keys[] = {
		"long_term_query_interval", "long_term_query_periodic_interval",
		"include_overloaded_periods",
	};
	char path[160];

	warn_ignored_at(c, spec, "control_period", "control_period", explicit_mode);
	warn_ignored_at(c, sl_ymap_get(spec, "signal"), "window", "signal.window", explicit_mode);
	for (size_t i = 0; i < sizeof(baseliner_keys) / sizeof(baseliner_keys[0]); i++) {
		snprintf(path, sizeof(path), "latency_baseliner.%s", baseliner_keys[i]);
		warn_ignored_at(c, sl_ymap_get(spec, "latency_baseliner"), baseliner_keys[i], path,
				explicit_mode);
	}
	for (size_t i = 0; i < sizeof(aimd_keys) / sizeof(aimd_keys[0]); i++) {
		snprintf(path, sizeof(path), "load_scheduling_core.aimd_load_scheduler.%s", aimd_keys[i]);
		warn_ignored_at(c, aimd, aimd_keys[i], path, explicit_mode);
	}
	warn_ignored_at(c, ls, "workload_latency_based_tokens",
			"load_scheduling_core.aimd_load_scheduler.load_scheduler.workload_latency_based_tokens",
			explicit_mode);
	warn_ignored_at(c, sched, "workload_latency_based_tokens",
			"load_scheduling_core.aimd_load_scheduler.load_scheduler.scheduler."
			"workload_latency_based_tokens", explicit_mode);
	warn_params_ignored(c, sl_ymap_get(sched, "default_workload_parameters"),
			    "load_scheduling_core.aimd_load_scheduler.load_scheduler.scheduler."
			    "default_workload_parameters", explicit_mode);
	for (size_t i = 0; wls && wls->type == SL_Y_SEQ && i < wls->n_items; i++) {
		char wpath[160];

		snprintf(wpath, sizeof(wpath), "load_scheduling_core.aimd_load_scheduler.load_scheduler."
			 "scheduler.workloads[%zu].parameters", i);
		warn_params_ignored(c, sl_ymap_get(wls->items[i], "parameters"), wpath, explicit_mode);
	}
	/* The tolerance is read, within what the gradient on a limit works
	 * with (engine/seat_gradient.c). */
	if (tol && (p->tolerance < 1 || p->tolerance > 10)) {
		size_t old = cd_path_push(c, "latency_baseliner.latency_tolerance_multiplier");

		cd_warn(c, tol, "mode sluice%s uses it within [1, 10]: %g is taken as %g",
			explicit_mode ? "" : " (the default)", p->tolerance,
			p->tolerance < 1 ? 1.0 : 10.0);
		cd_path_pop(c, old);
	}
}

void cd_decode_policy(struct load *L, const struct object *o)
{
	struct ctx *c = L->c;
	struct sl_config *cfg = L->cfg;
	struct sl_policy_cfg *p;
	struct fhit h[SP_N], ch[1], bh[BL_N];
	size_t old;

	cd_register_name(L, KIND_POLICY, o);
	if (cfg->n_policies == SLUICE_MAX_POLICIES) {
		size_t old = cd_path_push(c, "kind");

		cd_err(c, o->kind, "too many AverageLatencySchedulingPolicy objects; at most %d are supported",
		       SLUICE_MAX_POLICIES);
		cd_path_pop(c, old);
		return;
	}
	if (sl_grow((void **)&cfg->policies, &L->policies_cap, cfg->n_policies + 1,
		    sizeof(*cfg->policies))) {
		cd_oom(c);
		return;
	}
	p = &cfg->policies[cfg->n_policies++];
	memset(p, 0, sizeof(*p));
	policy_defaults(p);
	if (o->name)
		snprintf(p->name, sizeof(p->name), "%s", o->name);
	p->line = o->root->line;
	p->column = o->root->column;
	if (!(p->file = strdup(c->file)))
		cd_oom(c);
	if (!o->spec)
		return;
	old = cd_path_push(c, "spec");
	if (!cd_decode_fields(c, o->spec, spec_fields, SP_N, p, h))
		goto out;
	p->mode = effective_mode(p, h, o->api);
	if (h[SP_CORE].value) {
		size_t o2 = cd_path_push(c, "load_scheduling_core");

		if (cd_decode_fields(c, h[SP_CORE].value, core_fields, 1, NULL, ch) &&
		    ch[0].value)
			decode_aimd(L, ch[0].value, p);
		else if (ch[0].key) {
			cd_path_push(c, "aimd_load_scheduler");
			cd_err(c, ch[0].key, "missing required field 'load_scheduler'");
		}
		cd_path_pop(c, o2);
	} else if (h[SP_CORE].key) {
		size_t o2 = cd_path_push(c, "load_scheduling_core");

		cd_err(c, h[SP_CORE].key, "missing required field 'aimd_load_scheduler'");
		cd_path_pop(c, o2);
	}
	if (h[SP_SIGNAL].value)
		decode_signal(c, h[SP_SIGNAL].value, p, cfg);
	check_sluice_mode(c, h[SP_SIGNAL].value ? h[SP_SIGNAL].value : o->spec, h, p);
	for (size_t i = 0; i < BL_N; i++)
		bh[i] = (struct fhit){ .ok = true };
	if (h[SP_BASELINER].value)
		decode_baseliner(c, h[SP_BASELINER].value, p, bh);
	/* Windows that cannot work together (valid values only; mode sluice
	 * has neither). */
	if (p->mode == SL_POLICY_APERTURE && bh[BL_WINDOW].ok &&
	    p->baseline_window_ns < p->signal_window_ns) {
		const struct sl_ynode *at = bh[BL_WINDOW].value ? bh[BL_WINDOW].value :
					    o->spec;
		size_t o2 = cd_path_push(c, "latency_baseliner.long_term_query_interval");

		cd_warn(c, at, "the baseline window (%s) is shorter than the signal window (%s): the setpoint follows the signal and overload is hardly ever seen",
			cd_dur(p->baseline_window_ns).s, cd_dur(p->signal_window_ns).s);
		cd_path_pop(c, o2);
	}
	if (p->mode == SL_POLICY_SLUICE)
		warn_sluice_ignores(c, o->spec, p, h[SP_MODE].key != NULL);
out:
	cd_path_pop(c, old);
}
