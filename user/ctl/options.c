// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* sluicectl's global options around the one option parser.  See options.h. */
#include <errno.h>
#include <string.h>

#include "ctl/ctl.h"
#include "ctl/options.h"

struct ctl_global ctl_global;

static const struct sl_opt global_rows[] = {
	SL_ROW_FLAG('j', "json", struct ctl_global, json, "JSON output: the command's report as one object"),
	SL_ROW_FLAG('p', "pretty", struct ctl_global, pretty, "JSON, indented (implies --json)"),
	SL_ROW_END,
};
static const struct sl_opt_globals globals = {.table = global_rows, .values = &ctl_global};

int ctl_parse_options(const struct sl_opt_doc *doc, const struct sl_opt *table, void *values,
		      int argc, char **argv, struct sl_opt_parsed *parsed)
{
	const struct sl_opt *json = sl_opt_row(table, "json");
	int rc = sl_opt_parse(doc, table, values, &globals, argc, argv, parsed);

	if (rc == SL_OPT_HELPED)
		return CTL_OK;
	if (rc == -EINVAL)
		return CTL_USAGE;
	if (rc < 0)
		return CTL_FAIL;
	if (ctl_global.pretty)
		ctl_global.json = true;
	if (json && json->kind == SL_OPT_FLAG) {
		bool *field = (bool *)((char *)values + json->offset);

		if (*field)
			ctl_global.json = true;
		else if (ctl_global.json)
			*field = true; /* -j or -p before the command, or -p after it */
	}
	return CTL_PARSE_RUN;
}

void ctl_print_usage(FILE *f, const struct sl_opt_doc *doc, const struct sl_opt *table)
{
	sl_opt_print_usage(f, doc, table, &globals);
}
