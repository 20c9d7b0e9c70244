// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * sluicectl schema [KIND]: every configuration field validate knows, with
 * its type, the values it takes and its default, read from the loader's
 * own tables (config/schema.c).  --man writes the roff that becomes the
 * FIELDS section of sluice.yaml(5).
 */
#include <stdio.h>
#include <string.h>

#include "config/schema.h"
#include "ctl/ctl.h"
#include "ctl/options.h"
#include "lib/json_out.h"

struct schema_opts {
	bool json, man;
};

static const struct sl_opt schema_options[] = {
	CTL_JSON(struct schema_opts, json, "[{\"kind\", \"field\", \"type\", \"range\", \"default\", \"required\"}]"),
	SL_ROW_FLAG(0, "man", struct schema_opts, man, "roff for sluice.yaml(5) (its FIELDS section)"),
	SL_ROW_END,
};

static const struct sl_opt_doc schema_doc = {
	.prog = "sluicectl", .command = "schema",
	.args = "[KIND]",
	.max_args = 1,
	.description =
		"Every field of the configuration that validate knows, object by object:\n"
		"where it sits, its type, the values it takes and its default.  KIND keeps\n"
		"one object (Server, PriorityLevelConfiguration, FlowSchema,\n"
		"ConnectionLabels, AverageLatencySchedulingPolicy); \"*\" rows are fields of\n"
		"every object, \"*label matcher\" the matcher that FlowSchema subjects of\n"
		"kind Labels and policies' selectors and workloads share.\n",
};

struct walk {
	const struct schema_opts *o;
	const char *only;
	const char *last_kind;
	struct json_out jo;
};

/* "spec.limited" + "queuing" */
static void full_name(const struct sl_schema_field *f, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", f->parent, *f->parent ? "." : "", f->name);
}

/* roff: a backslash is \e, a line may not start with . or '; in a field
 * path every dot may break the line (\:), as the longest are wider than
 * a terminal. */
static void roff_write(const char *s, bool path)
{
	if (*s == '.' || *s == '\'')
		fputs("\\&", stdout);
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\e", stdout);
		else if (*s == '-')
			fputs("\\-", stdout);
		else
			putchar(*s);
		if (path && *s == '.')
			fputs("\\:", stdout);
	}
}

static void roff_text(const char *s)
{
	roff_write(s, false);
}

static const char *kind_title(const char *kind)
{
	if (!strcmp(kind, "*"))
		return "Every object";
	if (!strcmp(kind, "*label matcher"))
		return "Label matchers (label_matcher, Aperture's)";
	return kind;
}

static void one(const struct sl_schema_field *f, void *arg)
{
	struct walk *w = arg;
	char name[256];

	if (w->only && strcmp(w->only, f->kind))
		return;
	full_name(f, name, sizeof(name));
	if (w->o->json) {
		jo_obj_begin(&w->jo, NULL);
		jo_str(&w->jo, "kind", f->kind);
		jo_str(&w->jo, "field", name);
		jo_str(&w->jo, "type", f->type);
		jo_str(&w->jo, "range", *f->range ? f->range : NULL);
		jo_str(&w->jo, "default", *f->dflt ? f->dflt : NULL);
		jo_bool(&w->jo, "required", f->required);
		jo_obj_end(&w->jo);
		return;
	}
	if (w->o->man) {
		if (!w->last_kind || strcmp(w->last_kind, f->kind)) {
			printf(".SS ");
			roff_text(kind_title(f->kind));
			putchar('\n');
		}
		printf(".TP\n.B ");
		roff_write(name, true);
		printf("\n");
		roff_text(f->type);
		if (*f->range) {
			printf("; ");
			roff_text(f->range);
		}
		printf(".%s", f->required ? "  Required." : "");
		if (*f->dflt) {
			printf("  Default: ");
			roff_text(f->dflt);
			putchar('.');
		}
		putchar('\n');
	} else {
		if (!w->last_kind || strcmp(w->last_kind, f->kind))
			printf("%s%s\n", w->last_kind ? "\n" : "", kind_title(f->kind));
		printf("  %-44s %s%s%s%s%s%s\n", name, f->type, *f->range ? "; " : "", f->range,
		       f->required ? "; required" : "", *f->dflt ? "; default " : "", f->dflt);
	}
	w->last_kind = f->kind;
}

int ctl_schema(int argc, char **argv)
{
	struct schema_opts o = {0};
	struct sl_opt_parsed parsed;
	struct walk w = {.o = &o};
	int rc;

	rc = ctl_parse_options(&schema_doc, schema_options, &o, argc, argv, &parsed);
	if (rc != CTL_PARSE_RUN)
		return rc;
	if (parsed.first_arg < argc)
		w.only = argv[parsed.first_arg];
	if (o.json) {
		jo_init(&w.jo, stdout, false);
		jo_arr_begin(&w.jo, NULL);
	}
	if (sl_schema_walk(one, &w)) {
		fprintf(stderr, "sluicectl schema: out of memory\n");
		return CTL_FAIL;
	}
	if (o.json) {
		jo_arr_end(&w.jo);
		jo_finish(&w.jo);
	}
	if (w.only && !w.last_kind) {
		fprintf(stderr, "sluicectl schema: no object kind '%s'\n", w.only);
		return CTL_USAGE;
	}
	return CTL_OK;
}
