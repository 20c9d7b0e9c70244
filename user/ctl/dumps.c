// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * sluicectl levels | queues | flows | controller: the running daemon's
 * dumps, asked over its control socket.  The first three are the
 * Kubernetes APF debug dumps (dump_priority_levels, dump_queues,
 * dump_requests) for connections; controller is each policy's AIMD
 * controller, scheduler and gate.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/control.h"
#include "engine/seat_gradient.h"
#include "ctl/ctl.h"
#include "ctl/daemon_paths.h"
#include "ctl/options.h"

struct dump_opts {
	const char *config;
	const char *socket;
	bool json;
};

static const struct sl_opt dump_options[] = {
	CTL_CONFIG(struct dump_opts, config),
	CTL_SOCKET(struct dump_opts, socket),
	CTL_JSON(struct dump_opts, json, "the daemon's JSON answer"),
	SL_ROW_END,
};

static const struct sl_opt_doc dump_docs[] = {
	{.prog = "sluicectl", .command = "levels", .args = "[LEVEL]", .max_args = 1, .description =
		"Per priority level: type, nominal / lendable / min / max seats, the current\n"
		"limit after borrowing, seats in use, connections waiting, admitted,\n"
		"deferred, rejected, dispatched from the queues, and measured demand.\n"
		"Then per Queue level: waits refused by reason (queue-full, time-out at\n"
		"queueWaitLimit, shed by controlled delay, stalled), held SYNs dropped\n"
		"because their client had gone (no retransmit), admitted connections that\n"
		"never established (no latency sample), and the wait bounds.\n"},
	{.prog = "sluicectl", .command = "queues", .args = "[LEVEL]", .max_args = 1, .description =
		"Per queue of each Queue-type level: waiting and executing connections,\n"
		"seats in use, the virtual dispatch time and the work waiting\n"
		"(Kubernetes dump_queues).\n"},
	{.prog = "sluicectl", .command = "flows", .args = "[LEVEL]", .max_args = 1, .description =
		"Every connection a QueueSet holds, waiting or executing: client, FlowSchema,\n"
		"queue and position, whether its SYN is held (re-injected the moment its\n"
		"turn comes; otherwise its client's retransmit claims a ticket), flow\n"
		"hash, seats (Kubernetes dump_requests).\n"},
	{.prog = "sluicectl", .command = "controller", .description =
		"Per AverageLatencySchedulingPolicy: the latency signal and setpoint, overload,\n"
		"gradient, integrator, load multiplier and pass-through of its gradient\n"
		"controller; its scheduler (incoming token rate, fill rate, tokens\n"
		"available, connections waiting) and the data path's gate (pass or\n"
		"throttle, credit); and per workload its priority and tokens, the\n"
		"connections admitted (of which inline by the data path), deferred\n"
		"(queued), rejected and waiting, and the latency-based token estimate.\n"},
};

static const char *s(json_t *o, const char *k)
{
	const char *v = json_string_value(json_object_get(o, k));

	return v ? v : "-";
}

static long long n(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return json_is_integer(v) ? json_integer_value(v) : (long long)json_number_value(v);
}

static void print_levels(json_t *root)
{
	json_t *rows = json_object_get(root, SL_LEVELS_REPLY_KEY(LEVELS)), *r;
	size_t i;

	printf("borrowing regime: %s\n", s(root, SL_LEVELS_REPLY_KEY(BORROWING_REGIME)));
	printf("%-20s %-7s %5s %5s %5s %5s %6s %6s %7s %9s %9s %9s %8s\n", "LEVEL", "TYPE", "NOM",
	       "LEND", "MIN", "MAX", "LIMIT", "SEATS", "WAITING", "ADMITTED", "DEFERRED", "REJECTED",
	       "QUEUED");
	json_array_foreach(rows, i, r) {
		printf("%-20s %-7s %5lld %5lld %5lld %5lld %6lld %6lld %7lld %9lld %9lld %9lld %8lld\n",
		       s(r, SL_LEVEL_KEY(NAME)), s(r, SL_LEVEL_KEY(TYPE)), n(r, SL_LEVEL_KEY(NOMINAL)), n(r, SL_LEVEL_KEY(LENDABLE)), n(r, SL_LEVEL_KEY(MIN)),
		       n(r, SL_LEVEL_KEY(MAX)), n(r, SL_LEVEL_KEY(LIMIT)), n(r, SL_LEVEL_KEY(SEATS_IN_USE)), n(r, SL_LEVEL_KEY(WAITING)),
		       n(r, SL_LEVEL_KEY(ADMITTED)), n(r, SL_LEVEL_KEY(DEFERRED)), n(r, SL_LEVEL_KEY(REJECTED)), n(r, SL_LEVEL_KEY(DISPATCHED_FROM_QUEUE)));
	}
	/* Queue levels: how each wait ended when it did not end admitted, and
	 * the bounds that end them (every deferred connection is admitted or
	 * refused within its level's bounds: nothing times out silently). */
	printf("\n%-20s %10s %9s %9s %8s %6s %10s %8s %9s %8s\n", "QUEUE LEVEL", "QUEUE-FULL",
	       "TIME-OUT", "SHED", "STALLED", "GONE", "UNSERVED", "TARGET", "INTERVAL", "LIMIT");
	json_array_foreach(rows, i, r) {
		char tg[16], iv[16], lim[16];

		if (!n(r, SL_LEVEL_KEY(QUEUES)))
			continue;
		snprintf(tg, sizeof(tg), "%.0fms", json_number_value(json_object_get(r, SL_LEVEL_KEY(DELAY_TARGET_MS))));
		snprintf(iv, sizeof(iv), "%.0fms", json_number_value(json_object_get(r, SL_LEVEL_KEY(DELAY_INTERVAL_MS))));
		snprintf(lim, sizeof(lim), "%.0fms", json_number_value(json_object_get(r, SL_LEVEL_KEY(QUEUE_WAIT_LIMIT_MS))));
		printf("%-20s %10lld %9lld %9lld %8lld %6lld %10lld %8s %9s %8s\n", s(r, SL_LEVEL_KEY(NAME)),
		       n(r, SL_LEVEL_KEY(REJECTED_QUEUE_FULL)), n(r, SL_LEVEL_KEY(REJECTED_TIME_OUT)), n(r, SL_LEVEL_KEY(REJECTED_SHED)),
		       n(r, SL_LEVEL_KEY(REJECTED_STALLED)), n(r, SL_LEVEL_KEY(DROPPED_GONE)), n(r, SL_LEVEL_KEY(CLOSED_UNSERVED)), tg, iv, lim);
	}
}

static void print_queues(json_t *root)
{
	json_t *rows = json_object_get(root, SL_QUEUES_REPLY_KEY(QUEUES)), *r;
	size_t i, shown = 0;

	printf("%-20s %5s %8s %9s %6s %22s %18s\n", "LEVEL", "QUEUE", "WAITING", "EXECUTING",
	       "SEATS", "NEXT_DISPATCH_R", "WORK_WAITING");
	json_array_foreach(rows, i, r) {
		/* Idle queues are noise in a human view; --json has them all. */
		if (!n(r, SL_QUEUE_KEY(WAITING)) && !n(r, SL_QUEUE_KEY(EXECUTING)))
			continue;
		printf("%-20s %5lld %8lld %9lld %6lld %22s %18s\n", s(r, SL_QUEUE_KEY(LEVEL)), n(r, SL_QUEUE_KEY(INDEX)),
		       n(r, SL_QUEUE_KEY(WAITING)), n(r, SL_QUEUE_KEY(EXECUTING)), n(r, SL_QUEUE_KEY(SEATS_IN_USE)), s(r, SL_QUEUE_KEY(NEXT_DISPATCH_R)),
		       s(r, SL_QUEUE_KEY(TOTAL_WORK_SUM)));
		shown++;
	}
	printf("(%zu busy of %zu queues)\n", shown, json_array_size(rows));
}

static void print_flows(json_t *root)
{
	json_t *rows = json_object_get(root, SL_FLOWS_REPLY_KEY(FLOWS)), *r;
	size_t i;

	printf("%-16s %-16s %-24s %5s %4s %-9s %-4s %-18s %5s\n", "LEVEL", "FLOWSCHEMA", "CLIENT",
	       "QUEUE", "POS", "STATE", "SYN", "FLOW_HASH", "SEATS");
	json_array_foreach(rows, i, r) {
		printf("%-16s %-16s %-24s %5lld %4lld %-9s %-4s %-18s %5lld\n", s(r, SL_FLOW_KEY(LEVEL)),
		       s(r, SL_FLOW_KEY(FLOW_SCHEMA)), s(r, SL_FLOW_KEY(CLIENT)), n(r, SL_FLOW_KEY(QUEUE)), n(r, SL_FLOW_KEY(POSITION)),
		       json_is_true(json_object_get(r, SL_FLOW_KEY(EXECUTING))) ? "executing" : "waiting",
		       json_is_true(json_object_get(r, SL_FLOW_KEY(HELD))) ? "held" : "-",
		       s(r, SL_FLOW_KEY(FLOW_HASH)), n(r, SL_FLOW_KEY(SEATS)));
	}
	if (!json_array_size(rows))
		printf("(no connection waiting or dispatched from a queue)\n");
}

/* A JSON number as text, "-" for null; buf holds 32 bytes. */
static const char *num(json_t *o, const char *k, char *buf)
{
	json_t *v = json_object_get(o, k);

	if (!json_is_number(v))
		return "-";
	snprintf(buf, 32, "%.4g", json_number_value(v));
	return buf;
}

/* A policy in sluice's own mode: its limit in flight, and why it is where
 * it is. */
static void print_limit_policy(json_t *r)
{
	char b1[32], b2[32], b3[32], b4[32], b5[32];
	json_t *d = json_object_get(r, SL_SLUICE_POLICY_KEY(DECISIONS)), *w;
	size_t j;

	printf("policy %s (mode sluice): limit %s in flight, %lld in flight, %lld waiting, "
	       "%lld recalled from a level's queue by a cut\n",
	       s(r, SL_POLICY_KEY(NAME)), json_is_true(json_object_get(r, SL_SLUICE_POLICY_KEY(PASS_THROUGH))) ? "none (pass-through)" :
										num(r, SL_SLUICE_POLICY_KEY(LIMIT), b1),
	       n(r, SL_SLUICE_POLICY_KEY(IN_FLIGHT)), n(r, SL_SLUICE_POLICY_KEY(WAITING)), n(r, SL_SLUICE_POLICY_KEY(RECALLED)));
	printf("  last decision: %s (signal %s ms, target %s ms, baseline %s ms, %s completions/s, "
	       "gradient %s)\n", s(r, SL_SLUICE_POLICY_KEY(REASON)), num(r, SL_SLUICE_DECISION_KEY(SIGNAL_MS), b1), num(r, SL_SLUICE_DECISION_KEY(TARGET_MS), b2),
	       num(r, SL_SLUICE_DECISION_KEY(BASELINE_MS), b3), num(r, SL_SLUICE_DECISION_KEY(THROUGHPUT), b4), num(r, SL_SLUICE_DECISION_KEY(GRADIENT), b5));
	printf("  decisions: overload %lld, increase %lld, hold %lld, pass-through %lld, no baseline %lld\n",
	       n(d, sl_sg_reason_names[SL_SG_OVERLOAD]), n(d, sl_sg_reason_names[SL_SG_INCREASE]), n(d, sl_sg_reason_names[SL_SG_HOLD]), n(d, sl_sg_reason_names[SL_SG_PASS_THROUGH]), n(d, sl_sg_reason_names[SL_SG_NO_BASELINE]));
	printf("  %-20s %5s %9s %9s %9s %8s %9s %9s %9s %9s\n", "WORKLOAD", "PRIO", "SYNS", "INLINE",
	       "DEFERRED", "WAITING", "ADMITTED", "REJECTED", "SHED", "REFUSED");
	json_array_foreach(json_object_get(r, SL_SLUICE_POLICY_KEY(WORKLOADS)), j, w)
		printf("  %-20s %5s %9lld %9lld %9lld %8lld %9lld %9lld %9lld %9lld\n",
		       json_is_string(json_object_get(w, SL_SLUICE_WORKLOAD_KEY(NAME))) ? s(w, SL_SLUICE_WORKLOAD_KEY(NAME)) : num(w, SL_SLUICE_WORKLOAD_KEY(NAME), b1),
		       num(w, SL_SLUICE_WORKLOAD_KEY(PRIORITY), b2), n(w, SL_SLUICE_WORKLOAD_KEY(SYNS)), n(w, SL_SLUICE_WORKLOAD_KEY(ADMITTED_INLINE)), n(w, SL_SLUICE_WORKLOAD_KEY(GATE_DEFERRED)),
		       n(w, SL_SLUICE_WORKLOAD_KEY(WAITING)), n(w, SL_SLUICE_WORKLOAD_KEY(ADMITTED_ON_ARRIVAL)) + n(w, SL_SLUICE_WORKLOAD_KEY(ADMITTED)), n(w, SL_SLUICE_WORKLOAD_KEY(REJECTED)),
		       n(w, SL_SLUICE_WORKLOAD_KEY(SHED)), n(w, SL_SLUICE_WORKLOAD_KEY(REFUSED)));
}

static void print_controller(json_t *root)
{
	char b1[32], b2[32], b3[32], b4[32], b5[32];
	json_t *rows = json_object_get(root, SL_CONTROLLER_REPLY_KEY(POLICIES)), *r, *w;
	size_t i, j;

	printf("stage: %s\n", s(root, SL_CONTROLLER_REPLY_KEY(STAGE)));
	json_array_foreach(rows, i, r) {
		bool pt = json_is_true(json_object_get(r, SL_APERTURE_POLICY_KEY(PASS_THROUGH)));

		if (!strcmp(s(r, SL_POLICY_KEY(MODE)), "sluice")) {
			print_limit_policy(r);
			continue;
		}

		printf("policy %s (mode aperture): signal %s ms, setpoint %s ms, %s, gradient %s, integrator %s, "
		       "load multiplier %s%s\n", s(r, SL_POLICY_KEY(NAME)),
		       num(r, SL_APERTURE_POLICY_KEY(SIGNAL_MS), b1), num(r, SL_APERTURE_POLICY_KEY(SETPOINT_MS), b2),
		       json_is_true(json_object_get(r, SL_APERTURE_POLICY_KEY(OVERLOAD))) ? "OVERLOAD" : "ok",
		       num(r, SL_APERTURE_POLICY_KEY(GRADIENT), b3), num(r, SL_APERTURE_POLICY_KEY(INTEGRATOR), b4), num(r, SL_APERTURE_POLICY_KEY(LOAD_MULTIPLIER), b5),
		       pt ? " (pass-through)" : "");
		printf("  scheduler: %s%s, incoming %s tokens/s, fill rate %s tokens/s, available %s, "
		       "waiting %lld; data-path gate %s (credit %s)\n",
		       json_is_true(json_object_get(r, SL_APERTURE_POLICY_KEY(SCHEDULER_PASS_THROUGH))) ? "pass-through" : "throttling",
		       json_is_true(json_object_get(r, SL_APERTURE_POLICY_KEY(BOOTSTRAPPING))) ? " (bootstrapping)" : "",
		       num(r, SL_APERTURE_POLICY_KEY(INCOMING_RATE), b1), num(r, SL_APERTURE_POLICY_KEY(FILL_RATE), b2), num(r, SL_APERTURE_POLICY_KEY(AVAILABLE), b3),
		       n(r, SL_APERTURE_POLICY_KEY(WAITING)), s(r, SL_APERTURE_POLICY_KEY(GATE)), num(r, SL_APERTURE_POLICY_KEY(GATE_CREDIT), b4));
		printf("  %-20s %5s %7s %9s %9s %9s %9s %9s %8s %14s\n", "WORKLOAD", "PRIO", "TOKENS",
		       "ADMITTED", "(INLINE)", "DEFERRED", "REJECTED", "(SHED)", "WAITING", "EST. TOKENS");
		json_array_foreach(json_object_get(r, SL_APERTURE_POLICY_KEY(WORKLOADS)), j, w) {
			printf("  %-20s %5s %7s %9lld %9lld %9lld %9lld %9lld %8lld %14s\n", s(w, SL_APERTURE_WORKLOAD_KEY(NAME)),
			       num(w, SL_APERTURE_WORKLOAD_KEY(PRIORITY), b1), num(w, SL_APERTURE_WORKLOAD_KEY(TOKENS), b2), n(w, SL_APERTURE_WORKLOAD_KEY(ADMITTED)),
			       n(w, SL_APERTURE_WORKLOAD_KEY(ADMITTED_INLINE)), n(w, SL_APERTURE_WORKLOAD_KEY(DEFERRED)), n(w, SL_APERTURE_WORKLOAD_KEY(REJECTED)), n(w, SL_APERTURE_WORKLOAD_KEY(SHED)),
			       n(w, SL_APERTURE_WORKLOAD_KEY(WAITING)), num(w, SL_APERTURE_WORKLOAD_KEY(TOKEN_ESTIMATE_MS), b3));
		}
	}
	if (!json_array_size(rows))
		printf("(no AverageLatencySchedulingPolicy configured)\n");
}

static int dump(int argc, char **argv, const struct sl_opt_doc *doc, enum sl_control_cmd req)
{
	struct dump_opts o = {0};
	const char *cmd = doc->command;
	struct sl_opt_parsed parsed;
	char *answer = NULL;
	json_t *root;
	int rc;

	rc = ctl_parse_options(doc, dump_options, &o, argc, argv, &parsed);
	if (rc != CTL_PARSE_RUN)
		return rc;
	if (ctl_daemon_paths(cmd, o.config, NULL, &o.socket))
		return CTL_FAIL;
	if (ctl_request(cmd, o.socket, req, parsed.first_arg < argc ? argv[parsed.first_arg] : NULL, &answer))
		return CTL_FAIL;
	if (o.json) {
		fputs(answer, stdout);
		free(answer);
		return CTL_OK;
	}
	root = json_loads(answer, 0, NULL);
	free(answer);
	if (!root) {
		fprintf(stderr, "sluicectl %s: the daemon's answer is not JSON\n", cmd);
		return CTL_FAIL;
	}
	if (!strcmp(cmd, "levels"))
		print_levels(root);
	else if (!strcmp(cmd, "controller"))
		print_controller(root);
	else if (!strcmp(cmd, "queues"))
		print_queues(root);
	else
		print_flows(root);
	json_decref(root);
	return CTL_OK;
}

int ctl_levels(int argc, char **argv) { return dump(argc, argv, &dump_docs[0], SL_CTL_LEVELS); }
int ctl_queues(int argc, char **argv) { return dump(argc, argv, &dump_docs[1], SL_CTL_QUEUES); }
int ctl_flows(int argc, char **argv) { return dump(argc, argv, &dump_docs[2], SL_CTL_FLOWS); }
int ctl_controller(int argc, char **argv) { return dump(argc, argv, &dump_docs[3], SL_CTL_CONTROLLER); }
