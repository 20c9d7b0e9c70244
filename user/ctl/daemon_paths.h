/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Where sluiced keeps its maps and its control socket, as sluicectl finds
 * them: the flag given, else the configuration sluiced runs (Server
 * pinDir and controlSocket), else the built-in defaults, the same order
 * sluiced takes.  So `sluicectl detach` in the unit's ExecStopPost takes
 * off what a custom pinDir attached, and `sluicectl reload` finds a
 * custom controlSocket.
 */
#ifndef SLUICE_CTL_DAEMON_PATHS_H
#define SLUICE_CTL_DAEMON_PATHS_H

#include "lib/options.h"

/* The configuration sluicectl reads when -c/--config is not given, if it
 * exists: the one the unit runs sluiced on. */
#ifndef SL_DEFAULT_CONFIG
#define SL_DEFAULT_CONFIG "/etc/sluice/sluice.yaml"
#endif

#define CTL_CONFIG(T, F) SL_ROW_STRING('c', "config", T, F, "FILE", \
	"sluiced's configuration, for its pinDir and controlSocket (default " \
	SL_DEFAULT_CONFIG ", if present)", 0)

/*
 * Fill *pin_dir and *socket (either may be NULL: not wanted) where no flag
 * set them.  config: -c/--config, or NULL (or "-": standard input, which
 * the command reads; the defaults then).  A configuration named that does
 * not load is an error (its diagnostics printed, CTL_FAIL); the default one
 * that does not load is said once and the built-in defaults are used.
 * cmd names the command in messages.  0 or CTL_FAIL.
 */
int ctl_daemon_paths(const char *cmd, const char *config, const char **pin_dir, const char **socket);

#endif
