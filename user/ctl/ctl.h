/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* sluicectl: the command table and what the commands share. */
#ifndef SLUICE_CTL_H
#define SLUICE_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "daemon/control.h"
#include "dataplane/pinned_maps.h"

struct ctl_command {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv); /* argv[0] is the command name */
	bool changes_state; /* never run from an abbreviation ("sh on") */
};

/* Exit codes shared by every command. */
enum {
	CTL_OK = 0,
	CTL_FAIL = 1,  /* the command ran and failed (or found errors) */
	CTL_USAGE = 2, /* bad invocation */
};

/* Open the pinned maps or print one line saying why not (and what to do). */
int ctl_open_maps(const char *pin_dir, struct sl_maps *m);

/* Send one request over the daemon's control socket; on failure print one
 * line naming the command and the socket.  0 or a negative errno. */
int ctl_request(const char *cmd, const char *socket_path, enum sl_control_cmd req, const char *arg,
		char **answer);

/* JSON mode (json_mode.c): between begin and end, with -j or -p, stderr
 * is collected, and with -p stdout is re-indented.  end returns rc, after
 * writing {"error": what the command said, "exit_status": rc} on stdout
 * when rc is not CTL_OK (else the collected warnings go to stderr). */
struct ctl_json_mode {
	FILE *err, *real_err, *out, *real_out;
	char *err_text;
	size_t err_len;
};
int ctl_json_mode_begin(struct ctl_json_mode *jm);
int ctl_json_mode_end(struct ctl_json_mode *jm, int rc);
/* One {"error": message, "exit_status": N} line. */
void ctl_json_error(FILE *f, const char *message, int exit_status);

int ctl_status(int argc, char **argv);
int ctl_validate(int argc, char **argv);
int ctl_limits(int argc, char **argv);
int ctl_explain(int argc, char **argv);
int ctl_reload(int argc, char **argv);
int ctl_odds(int argc, char **argv);
int ctl_levels(int argc, char **argv);
int ctl_queues(int argc, char **argv);
int ctl_flows(int argc, char **argv);
int ctl_controller(int argc, char **argv);
int ctl_deal(int argc, char **argv);
int ctl_replay(int argc, char **argv);
int ctl_simulate(int argc, char **argv);

struct sl_config;
struct sl_policy_cfg;
/* Load and validate file (diagnostics on stderr), then the policy named
 * name, or the only one.  NULL with *rc = CTL_FAIL (bad file, no such
 * policy) or CTL_USAGE (several and no name); *cfg is the caller's to
 * free either way. */
const struct sl_policy_cfg *ctl_policy_from_file(const char *cmd, const char *file, const char *name,
						 struct sl_config **cfg, int *rc);
int ctl_signal(int argc, char **argv);
int ctl_conns(int argc, char **argv);
int ctl_shadow(int argc, char **argv);
int ctl_top(int argc, char **argv);
int ctl_detach(int argc, char **argv);
int ctl_schema(int argc, char **argv);
int ctl_cost(int argc, char **argv);

#endif
