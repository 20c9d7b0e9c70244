/*
 * sluicectl: inspect and explain sluice's pinned maps, validate configs,
 * and tune.  Reads need no running daemon.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ctl/ctl.h"
#include "daemon/control.h"
#include "lib/log.h"
#include "lib/version.h"

static const struct ctl_command commands[] = {
	{"status", "per-level seats, admissions and failsafe state", ctl_status},
	{"top", "live view: seats, waiting and rates per level, controller per policy", ctl_top},
	{"levels", "priority levels: limits after borrowing, seats, queued connections", ctl_levels},
	{"queues", "the fair queues of each Queue-type level (dump_queues)", ctl_queues},
	{"flows", "connections waiting in or dispatched from the queues (dump_requests)", ctl_flows},
	{"conns", "the connections sluice admitted and still tracks (seats, state, age, srtt)", ctl_conns},
	{"controller", "each scheduling policy's latency controller and workloads", ctl_controller},
	{"validate", "check configuration files (file:line:column diagnostics)", ctl_validate},
	{"limits", "seats per priority level from a configuration", ctl_limits},
	{"explain", "which FlowSchema, level, flow and workload a connection gets, and why", ctl_explain},
	{"reload", "make the daemon reload its configuration (all or nothing)", ctl_reload},
	{"shadow", "shadow mode: count every verdict, enforce none (on|off)", ctl_shadow},
	{"odds", "probability that elephant flows crush a mouse (shuffle sharding)", ctl_odds},
	{"deal", "the queues a flow hash is dealt (shuffle sharding)", ctl_deal},
	{"replay", "run the controller offline over a latency trace (tuning)", ctl_replay},
	{"signal", "send external latency samples to a policy's signal socket", ctl_signal},
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: sluicectl COMMAND [OPTIONS]\n"
		"       sluicectl COMMAND --help\n\n"
		"Inspect and control sluice, the connection-level overload protector.\n\n"
		"Commands:\n");
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nCommon options: --pin-dir DIR (default %s), --json, --help.\n"
		   "Commands may be abbreviated to any unique prefix.\n", SL_DEFAULT_PIN_DIR);
}

/* Exact name, else a unique prefix. */
static const struct ctl_command *find_command(const char *name)
{
	const struct ctl_command *found = NULL;
	size_t len = strlen(name);

	for (size_t i = 0; i < N_COMMANDS; i++) {
		if (!strcmp(commands[i].name, name))
			return &commands[i];
		if (!strncmp(commands[i].name, name, len)) {
			if (found)
				return NULL; /* ambiguous */
			found = &commands[i];
		}
	}
	return found;
}

int ctl_open_maps(const char *pin_dir, struct sl_maps *m)
{
	char what[4096] = "";
	int err = sl_maps_open_pinned(pin_dir, m, what, sizeof(what));

	if (!err)
		return 0;
	if (err == -ENOENT)
		fprintf(stderr, "sluicectl: %s: no such pinned map; is sluiced running "
				"(or were its maps kept with --keep-maps)? Use --pin-dir if it "
				"pins elsewhere.\n", what);
	else
		fprintf(stderr, "sluicectl: %s: %s\n", what, strerror(-err));
	return err;
}

int ctl_request(const char *cmd, const char *socket_path, const char *request, char **answer)
{
	int err = sl_control_request(socket_path, request, answer);

	if (err)
		fprintf(stderr, "sluicectl %s: %s: %s (is sluiced running? --socket)\n", cmd, socket_path,
			strerror(-err));
	return err;
}

int main(int argc, char **argv)
{
	const struct ctl_command *cmd;

	sl_log_init("sluicectl", SL_LOG_WARN);
	if (argc < 2) {
		usage(stderr);
		return CTL_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return CTL_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("sluicectl %s (%s, map ABI %d)\n", sl_version(), sl_version_git(),
		       SLUICE_ABI_VERSION);
		return CTL_OK;
	}
	cmd = find_command(argv[1]);
	if (!cmd) {
		fprintf(stderr, "sluicectl: unknown or ambiguous command '%s'\n\n", argv[1]);
		usage(stderr);
		return CTL_USAGE;
	}
	return cmd->run(argc - 1, argv + 1);
}
