// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * sluicectl replay: the daemon's AIMD controller (user/aimd.c) run offline
 * over a latency trace, for tuning a policy (Aperture aimd-load-scheduler.go).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/aimd.h"
#include "config/config.h"
#include "ctl/ctl.h"
#include "ctl/options.h"
#include "ctl/plot.h"
#include "ctl/replay_limit.h"
#include "ctl/trace.h"
#include "lib/read_file.h"
#include "lib/json_out.h"

#define MAX_OBS_WINDOW 100000
#define MAX_TRACE_BYTES (64u << 20) /* ~2 million rows: days of 100 ms samples */

struct replay_opts {
	const char *policy, *trace, *connections, *name, *plot;
	uint32_t observed_window;
	bool baseline_includes_overload, verbose, json;
};

static const struct sl_opt replay_options[] = {
	SL_ROW_STRING('c', "config", struct replay_opts, policy, "FILE",
		   "a sluice configuration holding an AverageLatencySchedulingPolicy", SL_OPT_REQUIRED),
	SL_ROW_RENAMED('P', "policy", "config"),
	SL_ROW_STRING(0, "trace", struct replay_opts, trace, "CSV",
		   "header t_s,signal,setpoint (any order; setpoint optional),\n"
		   "one row per period; an empty cell means no valid value.\n"
		   "Without a setpoint column the setpoint is the baseline the\n"
		   "daemon computes: the mean signal over the policy's\n"
		   "long_term_query_interval (overloaded periods excluded),\n"
		   "refreshed every long_term_query_periodic_interval, times\n"
		   "latency_tolerance_multiplier.  '-' reads standard input.\n"
		   "Replays Aperture's controller (mode aperture).", 0),
	SL_ROW_STRING(0, "connections", struct replay_opts, connections, "CSV",
		   "replay sluice's own controller (mode sluice) instead, over\n"
		   "a trace of connections: header admitted_s,duration_ms (any\n"
		   "order, other columns ignored), one row per connection; every\n"
		   "100 ms tick, the closed ones are its completions and the open\n"
		   "ones its count in flight.  Prints the decisions that moved the\n"
		   "limit (-v: every decision).", 0),
	SL_ROW_STRING('n', "name", struct replay_opts, name, "NAME", "which policy, when FILE holds several", 0),
	SL_ROW_NUMBER(SL_OPT_U32, 0, "observed-window", struct replay_opts, observed_window, "N", 1,
		   MAX_OBS_WINDOW,
		   "OBSERVED of period k = mean of min(1, applied) over periods\n"
		   "k-N .. k-1 (applied = 1 in pass-through, else the published\n"
		   "multiplier; periods before the first count as 1).  Default 1.", 0),
	SL_ROW_FLAG('B', "baseline-includes-overload", struct replay_opts, baseline_includes_overload,
		 "Aperture's baseline (overloaded periods included; it can\n"
		 "ratchet up under sustained overload)."),
	SL_ROW_FLAG('v', "verbose", struct replay_opts, verbose, "also print signal, setpoint and observed"),
	SL_ROW_STRING('o', "plot", struct replay_opts, plot, "FILE.png",
		   "also draw it (gnuplot): latency against setpoint with the\n"
		   "overloaded periods, the load multiplier applied, and the\n"
		   "trace's admitted/deferred/rejected per second if it has them", 0),
	CTL_JSON(struct replay_opts, json,
		 "a JSON array of {t_s, overload, gradient, integrator,\n"
		 "load_multiplier, pass_through} with every digit (shortest\n"
		 "round-trip); invalid numbers are null.  The table shows 6\n"
		 "significant digits and '-' for invalid numbers."),
	SL_ROW_END,
};

static const struct sl_opt_doc replay_doc = {
	.prog = "sluicectl", .command = "replay",
	.description =
		"Run the daemon's controller code offline: Aperture's (--trace, a latency\n"
		"trace, one row per control period: its decision for each period) or\n"
		"sluice's own (--connections, a trace of connections: the decisions that move\n"
		"its limit in flight).\n",
	.epilogue =
		"integrator is its value after the period's update; load_multiplier is the\n"
		"published multiplier (0 in pass-through).\n\n"
		"Exit status: 0 ok, 1 invalid policy or trace (file:line:column), 2 usage.\n",
};

/* Read and parse the trace file ('-': standard input). */
static int read_trace(const char *path, struct ctl_trace_row **rows_out, size_t *n_out,
		      bool *has_setpoint)
{
	char *text = NULL;
	size_t text_len;
	int err, ret;

	err = sl_read_file(path, MAX_TRACE_BYTES, &text, &text_len);
	if (err == -EFBIG) {
		fprintf(stderr, "sluicectl replay: %s: a trace holds at most %u MiB\n", path,
			MAX_TRACE_BYTES >> 20);
		return -1;
	}
	if (err) {
		fprintf(stderr, "sluicectl replay: %s: %s\n", path, sl_read_file_strerror(err));
		return -1;
	}
	ret = ctl_trace_parse(path, text, text_len, rows_out, n_out, has_setpoint);
	free(text);
	return ret;
}

/* Table cells: 6 significant digits (--json has every digit); '-' = invalid. */
static const char *num(double v, char *buf, size_t len)
{
	if (isnan(v))
		return "-";
	if (isinf(v))
		return v > 0 ? "inf" : "-inf";
	snprintf(buf, len, "%.6g", v);
	return buf;
}

int ctl_replay(int argc, char **argv)
{
	struct replay_opts opt = {.observed_window = 1};
	struct sl_config *cfg = NULL;
	const struct sl_policy_cfg *pol;
	struct sl_aimd_params params;
	struct sl_opt_parsed parsed;
	struct sl_aimd st;
	struct ctl_trace_row *rows = NULL;
	struct ctl_plot_point *pts = NULL;
	double *applied = NULL;
	size_t n_rows = 0;
	bool has_setpoint;
	int rc;
	char why[160];

	rc = ctl_parse_options(&replay_doc, replay_options, &opt, argc, argv, &parsed);
	if (rc != CTL_PARSE_RUN)
		return rc;
	if (!!opt.trace == !!opt.connections) {
		fprintf(stderr, "sluicectl replay: give --trace (Aperture's controller) or --connections "
				"(sluice's), one of them (see --help)\n");
		return CTL_USAGE;
	}
	if (opt.connections && (opt.plot || opt.baseline_includes_overload || opt.observed_window != 1)) {
		fprintf(stderr, "sluicectl replay: --plot, -B and -w are for --trace (Aperture's controller)\n");
		return CTL_USAGE;
	}
	rc = CTL_FAIL;

	pol = ctl_policy_from_file("replay", opt.policy, opt.name, &cfg, &rc);
	if (!pol)
		goto out;
	if (opt.connections) {
		rc = ctl_replay_limit(pol, opt.connections, opt.json, opt.verbose);
		goto out;
	}
	/* A per-period signal trace is Aperture's controller's input; sluice's
	 * judges connections (--connections). */
	if (pol->mode == SL_POLICY_SLUICE)
		fprintf(stderr, "sluicectl replay: note: policy %s runs mode sluice; --trace replays Aperture's "
			"controller (mode aperture) with its parameters; --connections replays its own\n",
			pol->name);
	sl_aimd_params_from_policy(&params, pol);
	if (opt.baseline_includes_overload)
		params.baseline_excludes_overload = false;
	if (sl_aimd_params_check(&params, why, sizeof(why))) {
		fprintf(stderr, "sluicectl replay: policy %s: %s\n", pol->name, why);
		rc = CTL_FAIL;
		goto out;
	}
	if (read_trace(opt.trace, &rows, &n_rows, &has_setpoint)) {
		rc = CTL_FAIL;
		goto out;
	}
	if (sl_aimd_init(&st, &params)) {
		fprintf(stderr, "sluicectl replay: out of memory\n");
		rc = CTL_FAIL;
		goto out;
	}
	applied = calloc(n_rows ? n_rows : 1, sizeof(*applied));
	pts = opt.plot ? calloc(n_rows ? n_rows : 1, sizeof(*pts)) : NULL;
	if (!applied || (opt.plot && !pts)) {
		fprintf(stderr, "sluicectl replay: out of memory\n");
		sl_aimd_free(&st);
		rc = CTL_FAIL;
		goto out;
	}

	struct json_out jo;

	if (opt.json) {
		jo_init(&jo, stdout, false);
		jo_arr_begin(&jo, NULL);
	} else {
		printf("%-10s %-8s %-10s %-10s %-15s %-12s", "t_s", "overload", "gradient",
		       "integrator", "load_multiplier", "pass_through");
		if (opt.verbose)
			printf(" %-10s %-10s %s", "signal", "setpoint", "observed");
		putchar('\n');
	}
	for (size_t k = 0; k < n_rows; k++) {
		struct sl_aimd_out o;
		double obs = 0;

		/* OBSERVED: mean of min(1, applied) over the previous
		 * `--observed-window` periods, history before the first counting as 1. */
		for (unsigned long j = 1; j <= opt.observed_window; j++)
			obs += k >= j ? fmin(1.0, applied[k - j]) : 1.0;
		obs /= (double)opt.observed_window;

		if (has_setpoint)
			sl_aimd_step(&st, rows[k].signal, rows[k].setpoint, obs, &o);
		else
			sl_aimd_period_signal(&st, rows[k].signal, obs, &o);
		applied[k] = o.pass_through ? 1.0 : o.load_multiplier;
		if (pts)
			pts[k] = (struct ctl_plot_point){
				.t_s = rows[k].t_s, .signal = o.signal, .setpoint = o.setpoint,
				.multiplier = applied[k], .overload = o.overload,
				.admitted = rows[k].admitted, .deferred = rows[k].deferred,
				.rejected = rows[k].rejected,
			};

		if (opt.json) {
			jo_obj_begin(&jo, NULL);
			jo_double(&jo, "t_s", rows[k].t_s);
			jo_bool(&jo, "overload", o.overload);
			jo_double(&jo, "gradient", o.gradient);
			jo_double(&jo, "integrator", o.integrator);
			jo_double(&jo, "load_multiplier", o.load_multiplier);
			jo_bool(&jo, "pass_through", o.pass_through);
			if (opt.verbose) {
				jo_double(&jo, "signal", o.signal);
				jo_double(&jo, "setpoint", o.setpoint);
				jo_double(&jo, "observed", o.observed);
			}
			jo_obj_end(&jo);
		} else {
			char b[6][32];

			snprintf(b[0], 32, "%.10g", rows[k].t_s);
			printf("%-10s %-8s %-10s %-10s %-15s %-12s", b[0],
			       o.overload ? "yes" : "no", num(o.gradient, b[1], 32),
			       num(o.integrator, b[2], 32), num(o.load_multiplier, b[3], 32),
			       o.pass_through ? "yes" : "no");
			if (opt.verbose)
				printf(" %-10s %-10s %s", num(o.signal, b[4], 32),
				       num(o.setpoint, b[5], 32), num(o.observed, b[0], 32));
			putchar('\n');
		}
	}
	if (opt.json) {
		jo_arr_end(&jo);
		jo_finish(&jo);
	}
	sl_aimd_free(&st);
	rc = fflush(stdout) ? CTL_FAIL : CTL_OK;
	if (rc == CTL_OK && pts) {
		char title[160];

		snprintf(title, sizeof(title), "sluicectl replay: policy %s over %s", pol->name, opt.trace);
		if (ctl_plot_replay(opt.plot, title, pts, n_rows))
			rc = CTL_FAIL;
	}
out:
	free(pts);
	free(applied);
	free(rows);
	sl_config_free(cfg);
	return rc;
}
