// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libFuzzer target for sluicectl's option parser (ctl_parse_options): the
 * input, split at NUL bytes, is argv.  Invariants: the verdict is one of
 * run / help / usage error; on run, the positionals are the words that
 * were not options, required options are present and numbers are inside
 * their bounds.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/ctl.h"
#include "ctl/options.h"

#define CHECK(x) do { if (!(x)) { fprintf(stderr, "invariant failed: %s (%s:%d)\n", #x, __FILE__, __LINE__); abort(); } } while (0)

struct opts {
	const char *config;
	bool json;
	uint16_t port;
	uint32_t count;
	uint64_t hash;
	double interval;
};

static const struct sl_opt table[] = {
	SL_ROW_STRING('c', "config", struct opts, config, "FILE", "a file", SL_OPT_REQUIRED),
	CTL_JSON(struct opts, json, "JSON"),
	SL_ROW_NUMBER(SL_OPT_U16, 'P', "port", struct opts, port, "PORT", 0, 65535, "a port", 0),
	SL_ROW_NUMBER(SL_OPT_U32, 'n', "count", struct opts, count, "N", 1, 100, "a count", 0),
	SL_ROW_NUMBER(SL_OPT_U64, 'x', "hash", struct opts, hash, "V", 0, (double)UINT64_MAX, "a hash", 0),
	SL_ROW_NUMBER(SL_OPT_DOUBLE, 'i', "interval", struct opts, interval, "S", 0.5, 10, "seconds", 0),
	SL_ROW_END,
};

static const struct sl_opt_doc doc = {.prog = "sluicectl", .command = "fuzz", .args = "[ARG]", .max_args = 2,
					   .description = "fuzzing\n"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *argv[34];
	struct opts o = {.count = 1, .interval = 1};
	struct sl_opt_parsed parsed;
	int argc = 1, rc;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	argv[0] = "fuzz";
	for (char *p = buf; p < buf + size && argc < 33; p += strlen(p) + 1)
		argv[argc++] = p;
	argv[argc] = NULL;
	rc = ctl_parse_options(&doc, table, &o, argc, argv, &parsed);
	CHECK(rc == CTL_PARSE_RUN || rc == CTL_OK || rc == CTL_USAGE);
	if (rc == CTL_PARSE_RUN) {
		CHECK(parsed.first_arg >= 1 && parsed.first_arg <= argc);
		CHECK(argc - parsed.first_arg <= 2);
		CHECK(o.config && *o.config);
		CHECK(o.count >= 1 && o.count <= 100);
		CHECK(o.interval >= 0.5 && o.interval <= 10);
	}
	free(buf);
	return 0;
}
