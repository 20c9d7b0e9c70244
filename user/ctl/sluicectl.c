// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * sluicectl: inspect and explain sluice's pinned maps, validate configs,
 * and tune.  Reads need no running daemon.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/ctl.h"
#include "ctl/daemon_paths.h"
#include "lib/nearest.h"
#include "ctl/options.h"
#include "daemon/control.h"
#include "lib/json_out.h"
#include "lib/log.h"
#include "lib/version.h"

static const struct ctl_command commands[] = {
	{"status", "per-level seats, admissions and failsafe state", ctl_status, false},
	{"top", "live view: seats, waiting and rates per level, controller per policy", ctl_top, false},
	{"levels", "priority levels: limits after borrowing, seats, queued connections", ctl_levels, false},
	{"queues", "the fair queues of each Queue-type level (dump_queues)", ctl_queues, false},
	{"flows", "connections waiting in or dispatched from the queues (dump_requests)", ctl_flows, false},
	{"conns", "the connections sluice admitted and still tracks (seats, state, age, srtt)", ctl_conns, false},
	{"cost", "what sluice costs this host per connection, measured now (BPF and daemon CPU)", ctl_cost, false},
	{"controller", "each scheduling policy's latency controller and workloads", ctl_controller, false},
	{"validate", "check configuration files (file:line:column diagnostics)", ctl_validate, false},
	{"limits", "seats per priority level from a configuration", ctl_limits, false},
	{"schema", "every configuration field: type, values, default (sluice.yaml(5))", ctl_schema, false},
	{"explain", "which FlowSchema, level, flow and workload a connection gets, and why", ctl_explain, false},
	{"reload", "make the daemon reload its configuration (all or nothing)", ctl_reload, true},
	{"shadow", "shadow mode: count every verdict, enforce none (on|off)", ctl_shadow, true},
	{"odds", "probability that elephant flows crush a mouse (shuffle sharding)", ctl_odds, false},
	{"deal", "the queues a flow hash is dealt (shuffle sharding)", ctl_deal, false},
	{"replay", "run the controller offline over a latency trace (tuning)", ctl_replay, false},
	{"simulate", "a policy's limit in flight against a modelled service, with and without (tuning)", ctl_simulate, false},
	{"signal", "send external latency samples to a policy's signal socket", ctl_signal, true},
	{"detach", "take sluice off this host when no daemon runs (XDP, sock_ops, pins)", ctl_detach, true},
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: sluicectl [-j|--json] [-p|--pretty] COMMAND [OPTIONS]\n"
		"       sluicectl help [COMMAND]\n\n"
		"Inspect and control sluice, the connection-level overload protector.\n\n"
		"Commands:\n");
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nGlobal options, before or after the command:\n"
		   "  -j, --json     JSON on stdout; errors too, as {\"error\": \"...\"}\n"
		   "  -p, --pretty   the same JSON, indented\n"
		   "  -V, --version  the version, the commit built and the map ABI\n"
		   "Every command takes --help.  Those that talk to sluiced find it as sluiced\n"
		   "does: --pin-dir DIR and --socket PATH where given, else the Server pinDir\n"
		   "and controlSocket of -c FILE (default %s, if present),\n"
		   "else %s and %s.\n"
		   "A FILE argument may be - for standard input.\n"
		   "A command that changes nothing may be abbreviated to any unique prefix.\n", SL_DEFAULT_CONFIG, SL_DEFAULT_PIN_DIR,
		SL_DEFAULT_CONTROL_SOCKET);
}

/* Exact name, else a unique prefix of a command that changes nothing: a
 * command that changes state must be spelled out (*refused names it). */
static const struct ctl_command *find_command(const char *name, const struct ctl_command **refused)
{
	const struct ctl_command *found = NULL;
	size_t len = strlen(name);

	*refused = NULL;
	for (size_t i = 0; i < N_COMMANDS; i++) {
		if (!strcmp(commands[i].name, name))
			return &commands[i];
		if (strncmp(commands[i].name, name, len))
			continue;
		if (commands[i].changes_state) {
			*refused = &commands[i];
			continue;
		}
		if (found)
			return NULL; /* ambiguous */
		found = &commands[i];
	}
	if (found && *refused)
		return NULL; /* ambiguous too */
	return found;
}

static bool is_json_flag(const char *a) { return !strcmp(a, "-j") || !strcmp(a, "--json"); }
static bool is_pretty_flag(const char *a) { return !strcmp(a, "-p") || !strcmp(a, "--pretty"); }

/* -j and -p anywhere before "--" (the command's own parser takes them too,
 * but what is done with errors must be known before it runs). */
static void scan_globals(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (is_json_flag(argv[i]))
			ctl_global.json = true;
		if (is_pretty_flag(argv[i]))
			ctl_global.pretty = ctl_global.json = true;
	}
}

static int version(void)
{
	if (ctl_global.json) {
		struct json_out jo;

		jo_init(&jo, stdout, false);
		jo_obj_begin(&jo, NULL);
		jo_str(&jo, "version", sl_version());
		jo_str(&jo, "revision", sl_version_git());
		jo_u64(&jo, "abi", SLUICE_ABI_VERSION);
		jo_obj_end(&jo);
		jo_finish(&jo);
	} else {
		printf("sluicectl %s (%s, map ABI %d)\n", sl_version(), sl_version_git(),
		       SLUICE_ABI_VERSION);
	}
	return CTL_OK;
}

/* What sluicectl itself says (not a command): one line, or its JSON. */
static int fail(int rc, const char *fmt, const char *arg)
{
	char msg[256];

	snprintf(msg, sizeof(msg), fmt, arg);
	if (ctl_global.json)
		ctl_json_error(stdout, msg, rc);
	else
		fprintf(stderr, "sluicectl: %s\n", msg);
	return rc;
}

/* What a command not found was. */
static int unknown_command(const char *what, const char *name, const struct ctl_command *refused)
{
	char msg[256];

	const char *names[N_COMMANDS], *near;
	size_t prefixed = 0;

	for (size_t i = 0; i < N_COMMANDS; i++) {
		names[i] = commands[i].name;
		prefixed += !strncmp(names[i], name, strlen(name));
	}
	near = sl_nearest(name, names, N_COMMANDS);
	if (refused)
		snprintf(msg, sizeof(msg), "%s'%s': %s changes state, so it is never abbreviated; spell it out",
			 what, name, refused->name);
	else if (prefixed > 1)
		snprintf(msg, sizeof(msg), "%s'%s' is more than one command (sluicectl --help lists them)",
			 what, name);
	else if (near)
		snprintf(msg, sizeof(msg), "%sunknown command '%s': did you mean %s?", what, name, near);
	else
		snprintf(msg, sizeof(msg), "%sunknown command '%s' (sluicectl --help lists them)", what, name);
	return fail(CTL_USAGE, "%s", msg);
}

static int run(int argc, char **argv)
{
	const struct ctl_command *cmd, *refused;
	int i = 1;

	/* Global options before the command. */
	while (i < argc && (is_json_flag(argv[i]) || is_pretty_flag(argv[i])))
		i++;
	if (i >= argc) {
		if (ctl_global.json)
			return fail(CTL_USAGE, "%s", "no command given");
		usage(stderr);
		return CTL_USAGE;
	}
	if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h") || !strcmp(argv[i], "help")) {
		/* help COMMAND is COMMAND --help. */
		if (!strcmp(argv[i], "help") && i + 1 < argc) {
			char *help_argv[] = {argv[i + 1], "--help", NULL};

			cmd = find_command(argv[i + 1], &refused);
			if (!cmd && refused)
				cmd = refused; /* help changes nothing */
			if (!cmd)
				return unknown_command("help: ", argv[i + 1], NULL);
			return cmd->run(2, help_argv);
		}
		usage(stdout);
		return CTL_OK;
	}
	if (!strcmp(argv[i], "--version") || !strcmp(argv[i], "-V"))
		return version();
	cmd = find_command(argv[i], &refused);
	if (!cmd)
		return unknown_command("", argv[i], refused);
	/* --version is global: after the command too. */
	for (int k = i + 1; k < argc && strcmp(argv[k], "--"); k++)
		if (!strcmp(argv[k], "--version") || !strcmp(argv[k], "-V"))
			return version();
	return cmd->run(argc - i, argv + i);
}

int main(int argc, char **argv)
{
	struct ctl_json_mode jm;
	int rc;

	sl_log_init("sluicectl", SL_LOG_WARN);
	scan_globals(argc, argv);
	if (ctl_json_mode_begin(&jm))
		return CTL_FAIL;
	rc = run(argc, argv);
	return ctl_json_mode_end(&jm, rc);
}
