/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * sluicectl's command-line options, declared once per command as a table
 * (the way xdp-tools' params.c does it): each row names the option, its
 * kind, where its value goes in the command's options struct, its bounds
 * and its help line.  One parser reads every command's argv, checks
 * values against their bounds and required options against argv, and
 * prints --help from the same rows, so the usage cannot drift from what
 * the parser accepts.
 */
#ifndef SLUICE_CTL_OPTIONS_H
#define SLUICE_CTL_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum ctl_opt_kind {
	CTL_OPT_FLAG,   /* bool, set to true */
	CTL_OPT_STRING, /* const char *, pointing into argv */
	CTL_OPT_U16,    /* uint16_t, decimal, within [min, max] */
	CTL_OPT_U32,    /* uint32_t, decimal, within [min, max] */
	CTL_OPT_U64,    /* uint64_t, decimal or 0x hex, within [min, max] */
	CTL_OPT_DOUBLE, /* double, within [min, max] */
	CTL_OPT_CUSTOM, /* parse(arg, field): 0, or -EINVAL and a reason in why */
};

enum {
	CTL_OPT_REQUIRED = 1u << 0, /* the command does not run without it */
};

struct ctl_opt {
	const char *name;           /* long name without "--"; NULL ends the table */
	char short_name;            /* 0: long form only */
	enum ctl_opt_kind kind;
	size_t offset;              /* of the value in the command's options struct */
	const char *metavar;        /* "FILE", "N" (not for flags) */
	const char *help;           /* lines separated by '\n' */
	double min, max;            /* numeric kinds */
	unsigned flags;
	int (*parse)(const char *arg, void *field, char *why, size_t why_len);
};

/* Row builders.  T is the command's options struct, F the field. */
#define CTL_FLAG(S, N, T, F, H) \
	{ .name = (N), .short_name = (S), .kind = CTL_OPT_FLAG, .offset = offsetof(T, F), .help = (H) }
#define CTL_STRING(S, N, T, F, META, H, FLAGS) \
	{ .name = (N), .short_name = (S), .kind = CTL_OPT_STRING, .offset = offsetof(T, F), \
	  .metavar = (META), .help = (H), .flags = (FLAGS) }
#define CTL_NUMBER(KIND, S, N, T, F, META, MIN, MAX, H, FLAGS) \
	{ .name = (N), .short_name = (S), .kind = (KIND), .offset = offsetof(T, F), .metavar = (META), \
	  .help = (H), .min = (MIN), .max = (MAX), .flags = (FLAGS) }
#define CTL_CUSTOM(S, N, T, F, META, FN, H, FLAGS) \
	{ .name = (N), .short_name = (S), .kind = CTL_OPT_CUSTOM, .offset = offsetof(T, F), \
	  .metavar = (META), .help = (H), .flags = (FLAGS), .parse = (FN) }
#define CTL_OPT_END { .name = NULL }

/* The options most commands share, spelled the same everywhere.  -p is
 * --pretty (a global option, as in bpftool), so --pin-dir has no short
 * form. */
#define CTL_JSON(T, F, H)    CTL_FLAG('j', "json", T, F, H)
#define CTL_PIN_DIR(T, F)    CTL_STRING(0, "pin-dir", T, F, "DIR", \
	"where sluiced pinned its maps (default " SL_DEFAULT_PIN_DIR ")", 0)
#define CTL_SOCKET(T, F)     CTL_STRING('s', "socket", T, F, "PATH", \
	"the daemon's control socket (default " SL_DEFAULT_CONTROL_SOCKET ")", 0)

/* What --help says around the generated option list. */
struct ctl_command_doc {
	const char *name;        /* the command word */
	const char *args;        /* positional arguments for the synopsis, or NULL */
	int min_args, max_args;  /* how many the command takes; max CTL_ARGS_ANY: no bound */
	const char *description; /* paragraphs after the synopsis */
	const char *epilogue;    /* after the options (exit status, examples), or NULL */
};

#define CTL_ARGS_ANY (-1)

/* What the parser saw. */
struct ctl_parsed {
	int first_arg;           /* index in argv of the first positional argument */
	unsigned long long given; /* bit i: row i of the table appeared */
};

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
 * Parse argv (argv[0] is the command word) into the struct at `values`,
 * whose fields hold the defaults.  Positional arguments may come before,
 * between or after options; they are collected, in order, at
 * argv[parsed->first_arg..argc), and their count is checked against the
 * doc's min_args..max_args.  Returns CTL_PARSE_RUN, or the exit code
 * the command must return at once: CTL_OK after --help (usage on stdout),
 * CTL_USAGE after one line on stderr naming the command, the option and
 * what is wrong with it.
 */
int ctl_parse_options(const struct ctl_command_doc *doc, const struct ctl_opt *table, void *values,
		      int argc, char **argv, struct ctl_parsed *parsed);

/* Whether the option named `name` appeared (for options whose absence differs
 * from any value, and for checks between options). */
bool ctl_option_given(const struct ctl_opt *table, const struct ctl_parsed *parsed, const char *name);

/* The --help text: synopsis, description, options, epilogue. */
void ctl_print_usage(FILE *f, const struct ctl_command_doc *doc, const struct ctl_opt *table);

#endif
