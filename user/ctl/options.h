/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * sluicectl's side of the option tables (lib/options.h is the parser): the
 * rows most commands share, spelled the same everywhere, and the global
 * options -j/--json and -p/--pretty that every command accepts, before or
 * after its word.
 */
#ifndef SLUICE_CTL_OPTIONS_H
#define SLUICE_CTL_OPTIONS_H

#include <stdbool.h>

#include "lib/options.h"

/* -p is --pretty (a global option, as in bpftool), so --pin-dir has no
 * short form. */
#define CTL_JSON(T, F, H)    SL_ROW_FLAG('j', "json", T, F, H)
#define CTL_PIN_DIR(T, F)    SL_ROW_STRING(0, "pin-dir", T, F, "DIR", \
	"where sluiced pinned its maps (default: -c's pinDir, else " SL_DEFAULT_PIN_DIR ")", 0)
/* One name for the control socket everywhere: sluiced's flag and the
 * configuration's key (controlSocket).  --socket was sluicectl's. */
#define CTL_SOCKET(T, F)     SL_ROW_STRING('s', "control-socket", T, F, "PATH", \
	"the daemon's control socket (default: -c's controlSocket, else " \
	SL_DEFAULT_CONTROL_SOCKET ")", 0), \
	SL_ROW_RENAMED(0, "socket", "control-socket")

/*
 * The global options, as bpftool has them: -j/--json (JSON output, and
 * errors as {"error": ...} on stdout) and -p/--pretty (the same JSON,
 * indented), before or after the command.  Every command's parser accepts
 * both; a command whose table has a "json" row gets it set.
 */
struct ctl_global {
	bool json, pretty;
};
extern struct ctl_global ctl_global;

/* The parser's verdicts besides "run the command". */
enum {
	CTL_PARSE_RUN = -1,      /* options are in place: run */
};

/*
 * sl_opt_parse with sluicectl's globals.  Returns CTL_PARSE_RUN, or the
 * exit code the command must return at once: CTL_OK after --help (usage on
 * stdout), CTL_USAGE after one line on stderr naming the command, the
 * option and what is wrong with it.
 */
int ctl_parse_options(const struct sl_opt_doc *doc, const struct sl_opt *table, void *values,
		      int argc, char **argv, struct sl_opt_parsed *parsed);

/* The --help text of a command, its globals included. */
void ctl_print_usage(FILE *f, const struct sl_opt_doc *doc, const struct sl_opt *table);

#endif
