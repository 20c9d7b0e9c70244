/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Command-line options declared as a table (the way xdp-tools' params.c
 * does it): each row names the option, its kind, where its value goes in
 * the program's options struct, its bounds and its help line.  One parser
 * reads argv, checks values against their bounds and required options
 * against argv, and prints --help from the same rows, so the usage cannot
 * drift from what the parser accepts.  sluiced and every sluicectl
 * command read their options through it.
 */
#ifndef SLUICE_LIB_OPTIONS_H
#define SLUICE_LIB_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum sl_opt_kind {
	SL_OPT_FLAG,   /* bool, set to true */
	SL_OPT_STRING, /* const char *, pointing into argv */
	SL_OPT_U16,    /* uint16_t, decimal, within [min, max] */
	SL_OPT_U32,    /* uint32_t, decimal, within [min, max] */
	SL_OPT_U64,    /* uint64_t, decimal or 0x hex, within [min, max] */
	SL_OPT_DOUBLE, /* double, within [min, max] */
	SL_OPT_CUSTOM, /* parse(arg, field): 0, or -EINVAL and a reason in why */
};

enum {
	SL_OPT_REQUIRED = 1u << 0, /* the program does not run without it */
	SL_OPT_ANSWERS = 1u << 1,  /* a flag that, like --help, answers alone
				    * (--version): given, no row is required */
	SL_OPT_DEPRECATED = 1u << 2, /* an old spelling kept for one release: hidden
				      * from --help, and its use is warned of with
				      * its help line (what to use instead) */
};

struct sl_opt {
	const char *name;           /* long name without "--"; NULL ends the table */
	char short_name;            /* 0: long form only */
	enum sl_opt_kind kind;
	size_t offset;              /* of the value in the options struct */
	const char *metavar;        /* "FILE", "N" (not for flags) */
	const char *help;           /* lines separated by '\n' */
	double min, max;            /* numeric kinds */
	unsigned flags;
	int (*parse)(const char *arg, void *field, char *why, size_t why_len);
	/* Old spellings, accepted for one release with a warning: alias_of
	 * makes this row the long name another row had (SL_ROW_RENAMED), and
	 * old_short a short name this row had. */
	const char *alias_of;
	char old_short;
};

/* Row builders.  T is the options struct, F the field. */
#define SL_ROW_FLAG(S, N, T, F, H) \
	{ .name = (N), .short_name = (S), .kind = SL_OPT_FLAG, .offset = offsetof(T, F), .help = (H) }
#define SL_ROW_STRING(S, N, T, F, META, H, FLAGS) \
	{ .name = (N), .short_name = (S), .kind = SL_OPT_STRING, .offset = offsetof(T, F), \
	  .metavar = (META), .help = (H), .flags = (FLAGS) }
#define SL_ROW_NUMBER(KIND, S, N, T, F, META, MIN, MAX, H, FLAGS) \
	{ .name = (N), .short_name = (S), .kind = (KIND), .offset = offsetof(T, F), .metavar = (META), \
	  .help = (H), .min = (MIN), .max = (MAX), .flags = (FLAGS) }
#define SL_ROW_CUSTOM(S, N, T, F, META, FN, H, FLAGS) \
	{ .name = (N), .short_name = (S), .kind = SL_OPT_CUSTOM, .offset = offsetof(T, F), \
	  .metavar = (META), .help = (H), .flags = (FLAGS), .parse = (FN) }
/* --OLD (and -S) as --NEW was once spelled: warned of, hidden from --help. */
#define SL_ROW_RENAMED(S, OLD, NEW) \
	{ .name = (OLD), .short_name = (S), .alias_of = (NEW), .flags = SL_OPT_DEPRECATED }
#define SL_ROW_END { .name = NULL }

/* What --help says around the generated option list, and whose options
 * these are. */
struct sl_opt_doc {
	const char *prog;        /* "sluiced", "sluicectl" */
	const char *command;     /* the command word after prog, or NULL */
	const char *args;        /* positional arguments for the synopsis, or NULL */
	const char *synopsis;    /* the usage line after prog, instead of one made from
	                          * the rows (a program's man page takes one line) */
	int min_args, max_args;  /* how many it takes; max SL_OPT_ARGS_ANY: no bound */
	const char *description; /* paragraphs after the synopsis */
	const char *epilogue;    /* after the options (exit status, examples), or NULL */
};

#define SL_OPT_ARGS_ANY (-1)

/*
 * Options every table of a program accepts besides its own rows (sluicectl's
 * -j/--json and -p/--pretty, as bpftool has them), with their own values
 * struct.  A row here whose long name a table also has is the table's.
 */
struct sl_opt_globals {
	const struct sl_opt *table;
	void *values;
};

/* What the parser saw. */
struct sl_opt_parsed {
	int first_arg;            /* index in argv of the first positional argument */
	unsigned long long given; /* bit i: row i of the table appeared */
};

/* The parser's verdicts besides an error. */
enum {
	SL_OPT_HELPED = 0, /* --help: the usage is on stdout, nothing to run */
	SL_OPT_RUN = 1,    /* options are in place: run */
};

/*
 * Parse argv (argv[0] is the program or command word) into the struct at
 * `values`, whose fields hold the defaults; `globals` may be NULL.
 * Positional arguments may come before, between or after options; they are
 * collected, in order, at argv[parsed->first_arg..argc), and their count is
 * checked against the doc's min_args..max_args.  Returns SL_OPT_RUN,
 * SL_OPT_HELPED, or -EINVAL after one line on stderr naming the program,
 * the option and what is wrong with it (-ENOMEM, -E2BIG: the same).
 */
int sl_opt_parse(const struct sl_opt_doc *doc, const struct sl_opt *table, void *values,
		 const struct sl_opt_globals *globals, int argc, char **argv,
		 struct sl_opt_parsed *parsed);

/* Whether the option named `name` appeared, or an old spelling of it (for
 * options whose absence differs from any value, and for checks between
 * options). */
bool sl_opt_given(const struct sl_opt *table, const struct sl_opt_parsed *parsed, const char *name);

/* The row named `name` of a table, or NULL. */
const struct sl_opt *sl_opt_row(const struct sl_opt *table, const char *name);

/* The --help text: synopsis, description, options (the table's, the
 * globals' it does not override, --help), epilogue. */
void sl_opt_print_usage(FILE *f, const struct sl_opt_doc *doc, const struct sl_opt *table,
			const struct sl_opt_globals *globals);

#endif
