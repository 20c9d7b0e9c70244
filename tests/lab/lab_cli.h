/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Command-line helpers shared by the lab tools (lab_load, lab_service):
 * one message format for usage errors ("PROG: ... (see --help)", exit 2)
 * and runtime failures.  Define PROG before including.
 */
#ifndef SLUICE_LAB_CLI_H
#define SLUICE_LAB_CLI_H

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PROG
#error "define PROG before including lab_cli.h"
#endif

static void usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn, unused));

static void usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, PROG ": ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, " (see --help)\n");
	va_end(ap);
	exit(2);
}

/* Runtime failure of a system call: name it, give strerror. */
static inline void warn_errno(const char *what)
{
	fprintf(stderr, PROG ": %s: %s\n", what, strerror(errno));
}

static inline long parse_long(const char *name, const char *text, long min, long max)
{
	char *end;

	errno = 0;
	long value = strtol(text, &end, 10);
	if (errno || end == text || *end || value < min || value > max)
		usage_error("--%s: invalid value '%s' (expected an integer"
			    " %ld..%ld)", name, text, min, max);
	return value;
}

static inline double parse_double(const char *name, const char *text, double min, double max)
{
	char *end;

	errno = 0;
	double value = strtod(text, &end);
	if (errno || end == text || *end || !isfinite(value) || value < min || value > max)
		usage_error("--%s: invalid value '%s' (expected a number"
			    " %g..%g)", name, text, min, max);
	return value;
}

/* getopt_long returned '?': say which option and why. */
static inline void report_bad_option(const char *arg)
{
	if (strncmp(arg, "--", 2) != 0)
		usage_error("unknown option '-%c'", optopt);
	if (strchr(arg, '='))
		usage_error("option '%s' takes no value (or is unknown)", arg);
	usage_error("unknown option '%s'", arg);
}

#endif
