// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The one option parser and --help printer of sluicectl.  See options.h. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/ctl.h"
#include "ctl/options.h"

#define MAX_OPTIONS 48 /* rows per table, --help included (bits of ctl_parsed.given) */

struct ctl_global ctl_global;

/* The row named "json", or NULL. */
static const struct ctl_opt *json_row(const struct ctl_opt *table)
{
	for (size_t i = 0; table[i].name; i++)
		if (!strcmp(table[i].name, "json") && table[i].kind == CTL_OPT_FLAG)
			return &table[i];
	return NULL;
}

static const struct ctl_opt pretty_row = {
	.name = "pretty", .short_name = 'p', .kind = CTL_OPT_FLAG,
	.help = "JSON, indented (implies --json)",
};
static const struct ctl_opt json_builtin_row = {
	.name = "json", .short_name = 'j', .kind = CTL_OPT_FLAG,
	.help = "JSON output: the command's report as one object",
};

static size_t table_len(const struct ctl_opt *table)
{
	size_t n = 0;

	while (table[n].name)
		n++;
	return n;
}

static bool takes_value(const struct ctl_opt *o)
{
	return o->kind != CTL_OPT_FLAG;
}

/* "%g" that prints integers whole (1e+07 reads badly in a bound). */
static void fmt_bound(char *buf, size_t len, double v)
{
	if (v == floor(v) && fabs(v) < 1e18)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%g", v);
}

static int parse_number(const struct ctl_opt *o, const char *arg, void *field, char *why, size_t len)
{
	char lo[32], hi[32], *end;
	double d = 0;
	uint64_t u = 0;

	fmt_bound(lo, sizeof(lo), o->min);
	fmt_bound(hi, sizeof(hi), o->max);
	errno = 0;
	if (o->kind == CTL_OPT_DOUBLE) {
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
	u = strtoull(arg, &end, o->kind == CTL_OPT_U64 ? 0 : 10);
	if (*end || errno || (double)u < o->min || (double)u > o->max)
		goto bad;
	switch (o->kind) {
	case CTL_OPT_U16: *(uint16_t *)field = (uint16_t)u; break;
	case CTL_OPT_U32: *(uint32_t *)field = (uint32_t)u; break;
	default:          *(uint64_t *)field = u; break;
	}
	return 0;
bad:
	snprintf(why, len, "'%s' is not an integer in %s..%s", arg, lo, hi);
	return -EINVAL;
}

static int store(const struct ctl_opt *o, const char *arg, void *values, char *why, size_t len)
{
	void *field = (char *)values + o->offset;

	switch (o->kind) {
	case CTL_OPT_FLAG:
		*(bool *)field = true;
		return 0;
	case CTL_OPT_STRING:
		if (!*arg) {
			snprintf(why, len, "needs a value");
			return -EINVAL;
		}
		*(const char **)field = arg;
		return 0;
	case CTL_OPT_CUSTOM:
		return o->parse(arg, field, why, len);
	default:
		return parse_number(o, arg, field, why, len);
	}
}

static void usage_error(const struct ctl_command_doc *doc)
{
	fprintf(stderr, "Run 'sluicectl %s --help' for its options.\n", doc->name);
}

int ctl_parse_options(const struct ctl_command_doc *doc, const struct ctl_opt *table, void *values,
		      int argc, char **argv, struct ctl_parsed *parsed)
{
	struct option longs[MAX_OPTIONS + 3];
	char shorts[3 * MAX_OPTIONS + 5], why[160];
	size_t n = table_len(table), ns = 0, nl;
	const struct ctl_opt *jrow = json_row(table);
	int c, idx;

	memset(parsed, 0, sizeof(*parsed));
	if (n >= MAX_OPTIONS) {
		fprintf(stderr, "sluicectl %s: too many options in its table\n", doc->name);
		return CTL_FAIL;
	}
	/* '-': positional arguments come back as option 1, in order, so they
	 * may sit anywhere; ':' first: a missing value is reported as ':'. */
	shorts[ns++] = '-';
	shorts[ns++] = ':';
	for (size_t i = 0; i < n; i++) {
		longs[i] = (struct option){table[i].name, takes_value(&table[i]) ? required_argument : no_argument,
					   NULL, 256 + (int)i};
		if (table[i].short_name) {
			shorts[ns++] = table[i].short_name;
			if (takes_value(&table[i]))
				shorts[ns++] = ':';
		}
	}
	nl = n;
	longs[nl++] = (struct option){"help", no_argument, NULL, 'h'};
	longs[nl++] = (struct option){"pretty", no_argument, NULL, 'p'};
	if (!jrow)
		longs[nl++] = (struct option){"json", no_argument, NULL, 'j'};
	longs[nl] = (struct option){0};
	shorts[ns++] = 'h';
	shorts[ns++] = 'p';
	if (!jrow)
		shorts[ns++] = 'j';
	shorts[ns] = '\0';

	/* Positional arguments are moved, in order, to the end of argv. */
	char **args = calloc((size_t)argc + 1, sizeof(*args));
	int n_args = 0, rc = CTL_PARSE_RUN;

	if (!args) {
		fprintf(stderr, "sluicectl %s: out of memory\n", doc->name);
		return CTL_FAIL;
	}
	/* 0, not 1: glibc then forgets a scan that stopped inside a bundle of
	 * short options (-abc) of an earlier argv (the fuzzer found it). */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, longs, &idx)) != -1) {
		const struct ctl_opt *o = NULL;

		if (c == 1) {
			args[n_args++] = optarg;
			continue;
		}
		if (c == 'h') {
			ctl_print_usage(stdout, doc, table);
			rc = CTL_OK;
			goto out;
		}
		if (c == 'p') {
			ctl_global.pretty = ctl_global.json = true;
			continue;
		}
		if (c == 'j' && !jrow) {
			ctl_global.json = true;
			continue;
		}
		if (c == '?' || c == ':') {
			const char *bad = argv[optind - 1];

			if (c == '?')
				fprintf(stderr, "sluicectl %s: unknown option '%s'\n", doc->name, bad);
			else
				fprintf(stderr, "sluicectl %s: option '%s' needs a value\n", doc->name, bad);
			usage_error(doc);
			rc = CTL_USAGE;
			goto out;
		}
		/* Long options come back as 256 + their row; a short one is a
		 * character getopt only returns when a row declared it. */
		if (c >= 256)
			o = &table[c - 256];
		else
			for (size_t i = 0; i < n && !o; i++)
				if (table[i].short_name == c)
					o = &table[i];
		parsed->given |= 1ull << (o - table);
		if (o == jrow)
			ctl_global.json = true;
		why[0] = '\0';
		if (store(o, optarg, values, why, sizeof(why))) {
			fprintf(stderr, "sluicectl %s: --%s: %s\n", doc->name, o->name, why);
			usage_error(doc);
			rc = CTL_USAGE;
			goto out;
		}
	}
	for (size_t i = 0; i < n; i++) {
		if ((table[i].flags & CTL_OPT_REQUIRED) && !(parsed->given & (1ull << i))) {
			fprintf(stderr, "sluicectl %s: --%s %s is required\n", doc->name, table[i].name,
				table[i].metavar ? table[i].metavar : "");
			usage_error(doc);
			rc = CTL_USAGE;
			goto out;
		}
	}
	if (ctl_global.json && jrow)
		*(bool *)((char *)values + jrow->offset) = true; /* -j before the command */
	/* After "--" everything left is positional. */
	while (optind < argc)
		args[n_args++] = argv[optind++];
	if (n_args < doc->min_args) {
		fprintf(stderr, "sluicectl %s: needs %s\n", doc->name, doc->args ? doc->args : "arguments");
		usage_error(doc);
		rc = CTL_USAGE;
		goto out;
	}
	if (doc->max_args != CTL_ARGS_ANY && n_args > doc->max_args) {
		fprintf(stderr, "sluicectl %s: unexpected argument '%s'\n", doc->name, args[doc->max_args]);
		usage_error(doc);
		rc = CTL_USAGE;
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

bool ctl_option_given(const struct ctl_opt *table, const struct ctl_parsed *parsed, const char *name)
{
	for (size_t i = 0; table[i].name; i++)
		if (!strcmp(table[i].name, name))
			return parsed->given & (1ull << i);
	return false;
}

/* "  -c, --config FILE" or "      --json", padded to the help column. */
#define HELP_COLUMN 30

static void print_option(FILE *f, const struct ctl_opt *o)
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

void ctl_print_usage(FILE *f, const struct ctl_command_doc *doc, const struct ctl_opt *table)
{
	char word[96];
	int col = fprintf(f, "Usage: sluicectl %s", doc->name), indent = col + 1;

	for (size_t i = 0; table[i].name; i++) {
		const struct ctl_opt *o = &table[i];
		bool req = o->flags & CTL_OPT_REQUIRED;

		snprintf(word, sizeof(word), "%s--%s%s%s%s", req ? "" : "[", o->name, takes_value(o) ? " " : "",
			 takes_value(o) && o->metavar ? o->metavar : "", req ? "" : "]");
		synopsis_word(f, &col, indent, word);
	}
	if (doc->args)
		synopsis_word(f, &col, indent, doc->args);
	fprintf(f, "\n\n%s", doc->description);
	fprintf(f, "\nOptions:\n");
	for (size_t i = 0; table[i].name; i++)
		print_option(f, &table[i]);
	if (!json_row(table))
		print_option(f, &json_builtin_row);
	print_option(f, &pretty_row);
	print_option(f, &(struct ctl_opt){.name = "help", .short_name = 'h', .kind = CTL_OPT_FLAG,
					  .help = "show this help and exit"});
	if (doc->epilogue)
		fprintf(f, "\n%s", doc->epilogue);
}
