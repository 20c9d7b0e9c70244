// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * sluicectl top: a live view.  Per level: seats against the limit, waiting,
 * and admissions, deferrals and rejections per second (differences between
 * refreshes); per policy (when the daemon answers): signal, setpoint,
 * multiplier, fill rate and waiting.  Bounded by --count.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/control.h"
#include "engine/seat_gradient.h"
#include "ctl/ctl.h"
#include "ctl/daemon_paths.h"
#include "ctl/options.h"

struct level_snap {
	bool used;
	struct sluice_level cfg;
	struct sluice_seats seats;
	struct sluice_level_stats st;
};

struct top_opts {
	const char *config;
	double interval;
	uint32_t count;
	const char *pin_dir;
	const char *socket;
	bool json;
};

static const struct sl_opt top_options[] = {
	SL_ROW_NUMBER(SL_OPT_DOUBLE, 'w', "watch", struct top_opts, interval, "SECONDS", 0.01, 86400,
		   "refresh period (default 1), as status --watch", 0),
	SL_ROW_RENAMED(0, "interval", "watch"),
	SL_ROW_NUMBER(SL_OPT_U32, 0, "count", struct top_opts, count, "N", 1, UINT32_MAX,
		   "stop after N refreshes (default: until interrupted)", 0),
	CTL_CONFIG(struct top_opts, config),
	CTL_PIN_DIR(struct top_opts, pin_dir),
	CTL_SOCKET(struct top_opts, socket),
	CTL_JSON(struct top_opts, json,
		 "one JSON object per refresh, one per line: {\"time\", \"interval_s\",\n"
		 "\"shadow\", \"levels\": [...], \"policies\": [...] or null}\n"
		 "(rates are null in the first, which has no interval yet)"),
	SL_ROW_END,
};

static const struct sl_opt_doc top_doc = {
	.prog = "sluicectl", .command = "top",
	.description =
		"A live view, refreshed every interval: per priority level the seats in\n"
		"use against the limit, connections waiting, and admissions, deferrals\n"
		"and rejections per second; per scheduling policy (if sluiced answers on\n"
		"its control socket) the latency signal against the setpoint, the load\n"
		"multiplier, the fill rate and connections waiting.  On a terminal the\n"
		"screen is redrawn; otherwise one snapshot follows another.\n",
};

static int snap_levels(const struct sl_maps *m, struct level_snap *out)
{
	int err;

	for (unsigned s = 0; s < SLUICE_MAX_LEVELS; s++) {
		struct level_snap *l = &out[s];

		memset(l, 0, sizeof(*l));
		if ((err = sl_maps_level(m, s, &l->cfg)))
			return err;
		if (l->cfg.type == SLUICE_LEVEL_UNUSED)
			continue;
		l->cfg.name[SLUICE_LEVEL_NAME_LEN - 1] = '\0';
		if ((err = sl_maps_seats(m, s, &l->seats)) || (err = sl_maps_level_stats(m, s, &l->st)))
			return err;
		l->used = true;
	}
	return 0;
}

static double rate(__u64 now, __u64 before, double dt)
{
	return dt > 0 && now >= before ? (double)(now - before) / dt : 0;
}

/* The controller's policies as sluiced answers them, or NULL. */
/* The daemon's controller dump (quietly: top shows what it has). */
static int controller_answer(const char *sock, char **answer)
{
	char req[SL_CONTROL_REQUEST_MAX];
	const char *why;

	return sl_control_format(req, sizeof(req), SL_CTL_CONTROLLER, NULL, &why) ?:
	       sl_control_request(sock, req, answer);
}

static json_t *policies_of(const char *sock)
{
	char *answer = NULL;
	json_t *root, *p;

	if (controller_answer(sock, &answer))
		return NULL;
	root = json_loads(answer, 0, NULL);
	free(answer);
	p = root ? json_incref(json_object_get(root, SL_CONTROLLER_REPLY_KEY(POLICIES))) : NULL;
	json_decref(root);
	return p;
}

static json_t *rate_or_null(bool have, double r)
{
	return have ? json_real(r) : json_null();
}

/* One refresh as a JSON object on its own line. */
static void print_json(const struct level_snap *cur, const struct level_snap *prev, double dt,
		       bool shadow, const char *sock)
{
	json_t *root = json_object(), *levels = json_array(), *pol = policies_of(sock);

	json_object_set_new(root, "time", json_real((double)time(NULL)));
	json_object_set_new(root, "interval_s", dt > 0 ? json_real(dt) : json_null());
	json_object_set_new(root, "shadow", json_boolean(shadow));
	for (unsigned s = 0; s < SLUICE_MAX_LEVELS; s++) {
		const struct level_snap *l = &cur[s], *p = &prev[s];
		bool have = p->used && dt > 0;
		json_t *o;

		if (!l->used)
			continue;
		o = json_object();
		json_object_set_new(o, "name", json_string(l->cfg.name));
		json_object_set_new(o, "type", json_string(l->cfg.type == SLUICE_LEVEL_EXEMPT ? "Exempt"
										     : "Limited"));
		json_object_set_new(o, "seats_in_use", json_integer((json_int_t)l->seats.seats_in_use));
		json_object_set_new(o, "seat_limit", l->cfg.type == SLUICE_LEVEL_EXEMPT ? json_null() :
				    json_integer(l->cfg.seat_limit));
		json_object_set_new(o, "waiting", json_integer((json_int_t)l->seats.waiting));
		json_object_set_new(o, "admitted_per_s",
				    rate_or_null(have, rate(l->st.admitted, p->st.admitted, dt)));
		json_object_set_new(o, "deferred_per_s",
				    rate_or_null(have, rate(l->st.deferred, p->st.deferred, dt)));
		json_object_set_new(o, "rejected_per_s",
				    rate_or_null(have, rate(l->st.rejected, p->st.rejected, dt)));
		json_array_append_new(levels, o);
	}
	json_object_set_new(root, "levels", levels);
	json_object_set_new(root, "policies", pol ? pol : json_null());
	json_dumpf(root, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER);
	fputc('\n', stdout);
	json_decref(root);
}

static void print_policies(const char *sock)
{
	char *answer = NULL;
	json_t *root, *p;
	size_t i;

	if (controller_answer(sock, &answer)) {
		printf("(policies: sluiced does not answer on %s)\n", sock);
		return;
	}
	root = json_loads(answer, 0, NULL);
	free(answer);
	if (!root)
		return;
	if (json_array_size(json_object_get(root, SL_CONTROLLER_REPLY_KEY(POLICIES))))
		printf("\n%-20s %-8s %10s %10s %-9s %-22s %8s\n", "POLICY", "MODE", "SIGNAL_MS", "TARGET_MS",
		       "STATE", "LOAD", "WAITING");
	json_array_foreach(json_object_get(root, SL_CONTROLLER_REPLY_KEY(POLICIES)), i, p) {
		bool sluice = !strcmp(json_string_value(json_object_get(p, SL_POLICY_KEY(MODE))) ?: "", "sluice");
		/* The same gauges under each mode's own keys (daemon/control.h). */
		const char *sgk = sluice ? SL_SLUICE_DECISION_KEY(SIGNAL_MS) : SL_APERTURE_POLICY_KEY(SIGNAL_MS);
		const char *spk = sluice ? SL_SLUICE_DECISION_KEY(TARGET_MS) : SL_APERTURE_POLICY_KEY(SETPOINT_MS);
		const char *ptk = sluice ? SL_SLUICE_POLICY_KEY(PASS_THROUGH) : SL_APERTURE_POLICY_KEY(PASS_THROUGH);
		const char *wk = sluice ? SL_SLUICE_POLICY_KEY(WAITING) : SL_APERTURE_POLICY_KEY(WAITING);
		double sig = json_number_value(json_object_get(p, sgk));
		double sp = json_number_value(json_object_get(p, spk));
		bool pt = json_is_true(json_object_get(p, ptk));
		bool over = sluice ? !strcmp(json_string_value(json_object_get(p, SL_SLUICE_POLICY_KEY(REASON))) ?: "", sl_sg_reason_names[SL_SG_OVERLOAD])
				   : json_is_true(json_object_get(p, SL_APERTURE_POLICY_KEY(OVERLOAD)));
		char load[48];

		/* Sluice's mode limits what is in flight, Aperture's a rate. */
		if (sluice && pt)
			snprintf(load, sizeof(load), "%lld in flight, no limit",
				 json_integer_value(json_object_get(p, SL_SLUICE_POLICY_KEY(IN_FLIGHT))));
		else if (sluice)
			snprintf(load, sizeof(load), "%lld of %lld in flight",
				 json_integer_value(json_object_get(p, SL_SLUICE_POLICY_KEY(IN_FLIGHT))),
				 json_integer_value(json_object_get(p, SL_SLUICE_POLICY_KEY(LIMIT))));
		else
			snprintf(load, sizeof(load), "x%.3f, %.1f/s",
				 json_number_value(json_object_get(p, SL_APERTURE_POLICY_KEY(LOAD_MULTIPLIER))),
				 json_number_value(json_object_get(p, SL_APERTURE_POLICY_KEY(FILL_RATE))));
		printf("%-20s %-8s %10.1f %10.1f %-9s %-22s %8lld\n",
		       json_string_value(json_object_get(p, SL_POLICY_KEY(NAME))) ?: "?", sluice ? "sluice" : "aperture",
		       json_is_number(json_object_get(p, sgk)) ? sig : NAN,
		       json_is_number(json_object_get(p, spk)) ? sp : NAN,
		       over ? "OVERLOAD" : pt ? "pass" : sluice ? "limit" : "throttle", load,
		       json_integer_value(json_object_get(p, wk)));
	}
	json_decref(root);
}

int ctl_top(int argc, char **argv)
{
	struct top_opts o = {.interval = 1};
	struct level_snap *prev, *cur, *tmp;
	unsigned long long t_prev = 0;
	struct sl_opt_parsed parsed;
	struct sl_maps m;
	int err;

	err = ctl_parse_options(&top_doc, top_options, &o, argc, argv, &parsed);
	if (err != CTL_PARSE_RUN)
		return err;
	if (ctl_daemon_paths("top", o.config, &o.pin_dir, &o.socket))
		return CTL_FAIL;
	err = 0;
	if (ctl_open_maps(o.pin_dir, &m))
		return CTL_FAIL;
	prev = calloc(SLUICE_MAX_LEVELS, sizeof(*prev));
	cur = calloc(SLUICE_MAX_LEVELS, sizeof(*cur));
	if (!prev || !cur) {
		err = -1;
		goto out;
	}
	for (long n = 0; !o.count || n < o.count; n++) {
		unsigned long long now = sl_mono_ns();
		double dt = t_prev ? (double)(now - t_prev) / 1e9 : 0;
		struct sluice_settings cfg;
		time_t wall = time(NULL);
		char ts[32];

		if ((err = snap_levels(&m, cur)) || (err = sl_maps_config(&m, &cfg))) {
			fprintf(stderr, "sluicectl top: reading maps in %s: %s\n", o.pin_dir, strerror(-err));
			break;
		}
		if (o.json) {
			print_json(cur, prev, dt, cfg.flags & SLUICE_CFG_SHADOW, o.socket);
			goto next;
		}
		if (isatty(STDOUT_FILENO))
			printf("\033[H\033[2J");
		else if (n)
			printf("\n");
		strftime(ts, sizeof(ts), "%H:%M:%S", localtime(&wall));
		printf("sluice top  %s  every %gs%s\n\n", ts, o.interval,
		       cfg.flags & SLUICE_CFG_SHADOW ? "  SHADOW MODE" : "");
		printf("%-24s %11s %8s %10s %10s %10s\n", "LEVEL", "SEATS/LIMIT", "WAITING",
		       "ADMIT/S", "DEFER/S", "REJECT/S");
		for (unsigned s = 0; s < SLUICE_MAX_LEVELS; s++) {
			const struct level_snap *l = &cur[s], *p = &prev[s];
			char seats[32];

			if (!l->used)
				continue;
			if (l->cfg.type == SLUICE_LEVEL_EXEMPT)
				snprintf(seats, sizeof(seats), "%llu/-", (unsigned long long)l->seats.seats_in_use);
			else
				snprintf(seats, sizeof(seats), "%llu/%u", (unsigned long long)l->seats.seats_in_use,
					 l->cfg.seat_limit);
			printf("%-24s %11s %8llu %10.1f %10.1f %10.1f\n", l->cfg.name, seats,
			       (unsigned long long)l->seats.waiting,
			       p->used ? rate(l->st.admitted, p->st.admitted, dt) : 0,
			       p->used ? rate(l->st.deferred, p->st.deferred, dt) : 0,
			       p->used ? rate(l->st.rejected, p->st.rejected, dt) : 0);
		}
		print_policies(o.socket);
next:
		fflush(stdout);
		tmp = prev, prev = cur, cur = tmp;
		t_prev = now;
		if (o.count && n + 1 >= o.count)
			break;
		usleep((useconds_t)(o.interval * 1e6));
	}
out:
	free(prev);
	free(cur);
	sl_maps_close(&m);
	return err ? CTL_FAIL : CTL_OK;
}
