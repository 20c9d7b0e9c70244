// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The one option parser and --help printer of sluiced and sluicectl.  See
 * options.h. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/options.h"
#include "lib/nearest.h"

#define MAX_OPTIONS 48 /* rows per table (bits of sl_opt_parsed.given) */
#define MAX_GLOBALS 8
#define LONG_TABLE  256 /* getopt's value for row i of the table: 256 + i */
#define LONG_GLOBAL 512 /* ... for row j of the globals: 512 + j */

static const struct sl_opt help_row = {
	.name = "help", .short_name = 'h', .kind = SL_OPT_FLAG, .help = "show this help and exit",
};

static size_t table_len(const struct sl_opt *table)
{
	size_t n = 0;

	while (table && table[n].name)
		n++;
	return n;
}

const struct sl_opt *sl_opt_row(const struct sl_opt *table, const char *name)
{
	for (size_t i = 0; table && table[i].name; i++)
		if (!strcmp(table[i].name, name))
			return &table[i];
	return NULL;
}

/* A global row the table does not override. */
static bool global_applies(const struct sl_opt *table, const struct sl_opt *g)
{
	return !sl_opt_row(table, g->name);
}

/* The row an old spelling stands for (itself for any other row). */
static const struct sl_opt *resolved(const struct sl_opt *table, const struct sl_opt *o)
{
	const struct sl_opt *t = o->alias_of ? sl_opt_row(table, o->alias_of) : NULL;

	return t ? t : o;
}

static bool takes_value(const struct sl_opt *o)
{
	return o->kind != SL_OPT_FLAG;
}

static bool hidden(const struct sl_opt *o)
{
	return o->flags & SL_OPT_DEPRECATED;
}

/* "sluiced: " or "sluicectl status: ", then the message, then the pointer
 * to --help: one line, at the edge. */
static void say(const struct sl_opt_doc *doc, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s%s%s: ", doc->prog, doc->command ? " " : "", doc->command ? doc->command : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see --help)\n");
}

/* "%g" that prints integers whole (1e+07 reads badly in a bound). */
static void fmt_bound(char *buf, size_t len, double v)
{
	if (v == floor(v) && fabs(v) < 1e18)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%g", v);
}

static int parse_number(const struct sl_opt *o, const char *arg, void *field, char *why, size_t len)
{
	char lo[32], hi[32], *end;
	double d = 0;
	uint64_t u = 0;

	fmt_bound(lo, sizeof(lo), o->min);
	fmt_bound(hi, sizeof(hi), o->max);
	errno = 0;
	if (o->kind == SL_OPT_DOUBLE) {
		d = strtod(arg, &end);
		if (!*arg || *end || errno || isnan(d) || d < o->min || d > o->max) {
			snprintf(why, len, "'%s' is not a number in %s..%s", arg, lo, hi);
			return -EINVAL;
		}
		*(double *)field = d;
		return 0;
	}
	/* strtoull accepts a sign and wraps negatives: refuse both. */
	if (!*arg || *arg == '-' || *arg == '+' || *arg == ' ')
		goto bad;
	u = strtoull(arg, &end, o->kind == SL_OPT_U64 ? 0 : 10);
	if (*end || errno || (double)u < o->min || (double)u > o->max)
		goto bad;
	switch (o->kind) {
	case SL_OPT_U16: *(uint16_t *)field = (uint16_t)u; break;
	case SL_OPT_U32: *(uint32_t *)field = (uint32_t)u; break;
	default:         *(uint64_t *)field = u; break;
	}
	return 0;
bad:
	snprintf(why, len, "'%s' is not an integer in %s..%s", arg, lo, hi);
	return -EINVAL;
}

static int store(const struct sl_opt *o, const char *arg, void *values, char *why, size_t len)
{
	void *field = (char *)values + o->offset;

	switch (o->kind) {
	case SL_OPT_FLAG:
		*(bool *)field = true;
		return 0;
	case SL_OPT_STRING:
		if (!*arg) {
			snprintf(why, len, "needs a value");
			return -EINVAL;
		}
		*(const char **)field = arg;
		return 0;
	case SL_OPT_CUSTOM:
		return o->parse(arg, field, why, len);
	default:
		return parse_number(o, arg, field, why, len);
	}
}

/* getopt's tables for a table and its globals; false if they do not fit. */
static bool build_getopt(const struct sl_opt *table, const struct sl_opt_globals *globals,
			 struct option *longs, char *shorts)
{
	size_t n = table_len(table), ng = globals ? table_len(globals->table) : 0, nl = 0, ns = 0;

	if (n >= MAX_OPTIONS || ng > MAX_GLOBALS)
		return false;
	/* '-': positional arguments come back as option 1, in order, so they
	 * may sit anywhere; ':' first: a missing value is reported as ':'. */
	shorts[ns++] = '-';
	shorts[ns++] = ':';
	for (size_t i = 0; i < n + ng; i++) {
		const struct sl_opt *o = i < n ? &table[i] : &globals->table[i - n];

		bool value = takes_value(i < n ? resolved(table, o) : o);

		if (i >= n && !global_applies(table, o))
			continue;
		longs[nl++] = (struct option){o->name, value ? required_argument : no_argument, NULL,
					      i < n ? LONG_TABLE + (int)i : LONG_GLOBAL + (int)(i - n)};
		for (int k = 0; k < 2; k++) {
			char sn = k ? o->old_short : o->short_name;

			if (!sn)
				continue;
			shorts[ns++] = sn;
			if (value)
				shorts[ns++] = ':';
		}
	}
	longs[nl++] = (struct option){"help", no_argument, NULL, 'h'};
	longs[nl] = (struct option){0};
	shorts[ns++] = 'h';
	shorts[ns] = '\0';
	return true;
}

/* The row getopt returned c for: a long option's value names it; a short
 * one is a character getopt only returns when a row declared it. */
static const struct sl_opt *row_of(int c, const struct sl_opt *table, const struct sl_opt_globals *globals,
				   void **values)
{
	size_t n = table_len(table), ng = globals ? table_len(globals->table) : 0;

	if (c >= LONG_GLOBAL) {
		*values = globals->values;
		return &globals->table[c - LONG_GLOBAL];
	}
	if (c >= LONG_TABLE)
		return &table[c - LONG_TABLE];
	for (size_t i = 0; i < n; i++)
		if (table[i].short_name == c || table[i].old_short == c)
			return &table[i];
	for (size_t j = 0; j < ng; j++)
		if (globals->table[j].short_name == c && global_applies(table, &globals->table[j])) {
			*values = globals->values;
			return &globals->table[j];
		}
	return NULL;
}

/* An option nobody declared: one line, with the nearest one when there
 * is one ("--jsn": did you mean --json?). */
static void say_unknown(const struct sl_opt_doc *doc, const struct sl_opt *table,
			const struct sl_opt_globals *globals, const char *arg)
{
	const char *names[MAX_OPTIONS + MAX_GLOBALS + 1], *near = NULL;
	char word[64];
	size_t n = 0;

	if (!strncmp(arg, "--", 2)) {
		snprintf(word, sizeof(word), "%s", arg + 2);
		word[strcspn(word, "=")] = '\0';
		for (size_t i = 0; table[i].name && n < MAX_OPTIONS; i++)
			if (!hidden(&table[i]))
				names[n++] = table[i].name;
		for (size_t j = 0; globals && globals->table[j].name && j < MAX_GLOBALS; j++)
			if (global_applies(table, &globals->table[j]))
				names[n++] = globals->table[j].name;
		names[n++] = "help";
		near = sl_nearest(word, names, n);
	}
	if (near)
		say(doc, "unknown option '%s': did you mean --%s?", arg, near);
	else
		say(doc, "unknown option '%s'", arg);
}

/* An old spelling works for one release, and says what replaces it. */
static void say_old_spelling(const struct sl_opt_doc *doc, const struct sl_opt *table,
			     const struct sl_opt *o, int c)
{
	const char *prog = doc->prog, *cmd = doc->command;

	if (o->alias_of && c < LONG_TABLE)
		fprintf(stderr, "%s%s%s: -%c is an old spelling: use --%s (the old one goes in the next release)\n",
			prog, cmd ? " " : "", cmd ? cmd : "", c, resolved(table, o)->name);
	else if (o->alias_of)
		fprintf(stderr, "%s%s%s: --%s is an old spelling: use --%s (the old one goes in the next release)\n",
			prog, cmd ? " " : "", cmd ? cmd : "", o->name, resolved(table, o)->name);
	else if (hidden(o))
		fprintf(stderr, "%s%s%s: --%s is deprecated: %s\n", prog, cmd ? " " : "", cmd ? cmd : "",
			o->name, o->help);
	else if (o->old_short && c == o->old_short)
		fprintf(stderr, "%s%s%s: -%c is an old spelling: use --%s (the old one goes in the next release)\n",
			prog, cmd ? " " : "", cmd ? cmd : "", c, o->name);
}

int sl_opt_parse(const struct sl_opt_doc *doc, const struct sl_opt *table, void *values,
		 const struct sl_opt_globals *globals, int argc, char **argv,
		 struct sl_opt_parsed *parsed)
{
	struct option longs[MAX_OPTIONS + MAX_GLOBALS + 2];
	char shorts[6 * (MAX_OPTIONS + MAX_GLOBALS) + 5], why[160];
	char **args = NULL;
	int c, n_args = 0, rc = SL_OPT_RUN;
	bool answers = false;

	memset(parsed, 0, sizeof(*parsed));
	if (!build_getopt(table, globals, longs, shorts)) {
		say(doc, "too many options in its table");
		return -E2BIG;
	}
	/* Positional arguments are moved, in order, to the end of argv. */
	args = calloc((size_t)argc + 1, sizeof(*args));
	if (!args) {
		say(doc, "out of memory");
		return -ENOMEM;
	}
	/* 0, not 1: glibc then forgets a scan that stopped inside a bundle of
	 * short options (-abc) of an earlier argv (the fuzzer found it). */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		const struct sl_opt *o;
		void *into = values;

		if (c == 1) {
			args[n_args++] = optarg;
			continue;
		}
		if (c == 'h') {
			sl_opt_print_usage(stdout, doc, table, globals);
			rc = SL_OPT_HELPED;
			goto out;
		}
		if (c == '?' || c == ':') {
			if (c == '?')
				say_unknown(doc, table, globals, argv[optind - 1]);
			else
				say(doc, "option '%s' needs a value", argv[optind - 1]);
			rc = -EINVAL;
			goto out;
		}
		o = row_of(c, table, globals, &into);
		if (into == values) {
			say_old_spelling(doc, table, o, c);
			o = resolved(table, o);
			parsed->given |= 1ull << (o - table);
		}
		why[0] = '\0';
		if (store(o, optarg, into, why, sizeof(why))) {
			say(doc, "--%s: %s", o->name, why);
			rc = -EINVAL;
			goto out;
		}
	}
	for (size_t i = 0; table[i].name; i++)
		if ((table[i].flags & SL_OPT_ANSWERS) && (parsed->given & (1ull << i)))
			answers = true;
	for (size_t i = 0; table[i].name && !answers; i++) {
		if ((table[i].flags & SL_OPT_REQUIRED) && !(parsed->given & (1ull << i))) {
			say(doc, "--%s%s%s is required", table[i].name, table[i].metavar ? " " : "",
			    table[i].metavar ? table[i].metavar : "");
			rc = -EINVAL;
			goto out;
		}
	}
	/* After "--" everything left is positional. */
	while (optind < argc)
		args[n_args++] = argv[optind++];
	if (n_args < doc->min_args) {
		say(doc, "needs %s", doc->args ? doc->args : "arguments");
		rc = -EINVAL;
		goto out;
	}
	if (doc->max_args != SL_OPT_ARGS_ANY && n_args > doc->max_args) {
		say(doc, "unexpected argument '%s'", args[doc->max_args]);
		rc = -EINVAL;
		goto out;
	}
	/* getopt left the options it consumed in place; the positionals go last. */
	parsed->first_arg = argc - n_args;
	for (int i = 0; i < n_args; i++)
		argv[parsed->first_arg + i] = args[i];
out:
	free(args);
	return rc;
}

bool sl_opt_given(const struct sl_opt *table, const struct sl_opt_parsed *parsed, const char *name)
{
	const struct sl_opt *o = sl_opt_row(table, name);

	return o && (parsed->given & (1ull << (o - table)));
}

/* "  -c, --config FILE" or "      --json", padded to the help column. */
#define HELP_COLUMN 30

static void print_option(FILE *f, const struct sl_opt *o)
{
	char head[96];
	const char *line = o->help, *nl;
	int w;

	if (o->short_name)
		w = snprintf(head, sizeof(head), "  -%c, --%s", o->short_name, o->name);
	else
		w = snprintf(head, sizeof(head), "      --%s", o->name);
	if (takes_value(o) && o->metavar)
		snprintf(head + w, sizeof(head) - (size_t)w, " %s", o->metavar);
	fprintf(f, "%-*s", HELP_COLUMN, head);
	if (strlen(head) >= HELP_COLUMN)
		fprintf(f, "\n%-*s", HELP_COLUMN, "");
	for (;;) {
		nl = strchr(line, '\n');
		if (!nl) {
			fprintf(f, "%s\n", line);
			break;
		}
		fprintf(f, "%.*s\n%-*s", (int)(nl - line), line, HELP_COLUMN, "");
		line = nl + 1;
	}
}

/* Synopsis words wrap under the first one, as man pages do. */
static void synopsis_word(FILE *f, int *col, int indent, const char *word)
{
	int w = (int)strlen(word);

	if (*col + 1 + w > 79) {
		fprintf(f, "\n%*s", indent, "");
		*col = indent;
	} else {
		fputc(' ', f);
		(*col)++;
	}
	fputs(word, f);
	*col += w;
}

void sl_opt_print_usage(FILE *f, const struct sl_opt_doc *doc, const struct sl_opt *table,
			const struct sl_opt_globals *globals)
{
	char word[96];
	int col = fprintf(f, "Usage: %s%s%s", doc->prog, doc->command ? " " : "",
			  doc->command ? doc->command : ""),
	    indent = col + 1;

	for (size_t i = 0; table[i].name && !doc->synopsis; i++) {
		const struct sl_opt *o = &table[i];
		bool req = o->flags & SL_OPT_REQUIRED;

		if (hidden(o))
			continue;
		snprintf(word, sizeof(word), "%s--%s%s%s%s", req ? "" : "[", o->name, takes_value(o) ? " " : "",
			 takes_value(o) && o->metavar ? o->metavar : "", req ? "" : "]");
		synopsis_word(f, &col, indent, word);
	}
	if (doc->synopsis)
		fprintf(f, " %s", doc->synopsis);
	else if (doc->args)
		synopsis_word(f, &col, indent, doc->args);
	fprintf(f, "\n\n%s", doc->description);
	fprintf(f, "\nOptions:\n");
	for (size_t i = 0; table[i].name; i++)
		if (!hidden(&table[i]))
			print_option(f, &table[i]);
	for (size_t j = 0; globals && globals->table[j].name; j++)
		if (global_applies(table, &globals->table[j]))
			print_option(f, &globals->table[j]);
	print_option(f, &help_row);
	if (doc->epilogue)
		fprintf(f, "\n%s", doc->epilogue);
}
