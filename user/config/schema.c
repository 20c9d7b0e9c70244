// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "config/schema.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/decode.h"

static const struct cd_schema *const schemas[] = {
	cd_schema_object, cd_schema_server, cd_schema_level, cd_schema_flow_schema,
	cd_schema_labels, cd_schema_policy, cd_schema_fleet,
};

/* A bound that only says "any" (INT32_MAX and the like) is not shown. */
static bool unbounded(int64_t max)
{
	return max == INT32_MAX || max == UINT32_MAX || max == INT64_MAX;
}

static int64_t read_int(const void *p, size_t size)
{
	switch (size) {
	case 1: return *(const int8_t *)p;
	case 2: return *(const int16_t *)p;
	case 4: return *(const int32_t *)p;
	default: return *(const int64_t *)p;
	}
}

static void describe(const struct fdesc *d, struct sl_schema_field *f)
{
	size_t used;

	switch (d->kind) {
	case FK_INT:
		snprintf(f->type, sizeof(f->type), "integer");
		if (unbounded(d->max))
			snprintf(f->range, sizeof(f->range), "at least %" PRId64, d->min);
		else
			snprintf(f->range, sizeof(f->range), "%" PRId64 " to %" PRId64, d->min, d->max);
		break;
	case FK_DURATION:
		snprintf(f->type, sizeof(f->type), "duration (\"500ms\", \"2s\", \"1m30s\")");
		used = (size_t)snprintf(f->range, sizeof(f->range), "%s", d->min ? cd_dur((uint64_t)d->min).s : "0");
		snprintf(f->range + used, sizeof(f->range) - used, " to %.40s", cd_dur((uint64_t)d->max).s);
		break;
	case FK_ENUM:
		used = (size_t)snprintf(f->type, sizeof(f->type), "one of:");
		for (const struct enumval *e = d->enums; e->name && used < sizeof(f->type); e++)
			used += (size_t)snprintf(f->type + used, sizeof(f->type) - used, "%s %s",
						 e == d->enums ? "" : ",", e->name);
		break;
	case FK_STRING:
		snprintf(f->type, sizeof(f->type), "string");
		break;
	case FK_BOOL:
		snprintf(f->type, sizeof(f->type), "boolean");
		break;
	case FK_NUMBER:
		snprintf(f->type, sizeof(f->type), "number");
		if (d->dmax >= 1e300 && d->dmin <= -1e300)
			break;
		if (d->dmax >= 1e300)
			snprintf(f->range, sizeof(f->range), "%s %g", d->dmin_open ? "above" : "at least", d->dmin);
		else
			snprintf(f->range, sizeof(f->range), "%s%g to %g", d->dmin_open ? "above " : "", d->dmin,
				 d->dmax);
		break;
	case FK_CUSTOM:
		snprintf(f->type, sizeof(f->type), "%s", d->type ? d->type : "see the description");
		break;
	}
	if (d->type && d->kind != FK_CUSTOM)
		snprintf(f->type, sizeof(f->type), "%s", d->type);
}

static void default_of(const struct fdesc *d, const void *obj, struct sl_schema_field *f)
{
	const char *p = (const char *)obj + d->off;

	if (d->dflt) {
		snprintf(f->dflt, sizeof(f->dflt), "%s", d->dflt);
		return;
	}
	/* A required field has no default to show (its struct holds a
	 * placeholder until the file gives it). */
	if (!obj || d->kind == FK_CUSTOM || d->required)
		return;
	switch (d->kind) {
	case FK_INT:
		snprintf(f->dflt, sizeof(f->dflt), "%" PRId64, read_int(p, d->size));
		break;
	case FK_DURATION:
		snprintf(f->dflt, sizeof(f->dflt), "%s", cd_dur(*(const uint64_t *)p).s);
		break;
	case FK_ENUM:
		for (const struct enumval *e = d->enums; e->name; e++)
			if (e->value == (int)read_int(p, d->size))
				snprintf(f->dflt, sizeof(f->dflt), "%s", e->name);
		break;
	case FK_STRING:
		if (*(const char *const *)p)
			snprintf(f->dflt, sizeof(f->dflt), "%s", *(const char *const *)p);
		break;
	case FK_BOOL:
		snprintf(f->dflt, sizeof(f->dflt), "%s", *(const bool *)p ? "true" : "false");
		break;
	case FK_NUMBER:
		snprintf(f->dflt, sizeof(f->dflt), "%g", *(const double *)p);
		break;
	case FK_CUSTOM:
		break;
	}
}

int sl_schema_walk(sl_schema_fn fn, void *arg)
{
	for (size_t s = 0; s < ARRAY_SIZE(schemas); s++) {
		for (const struct cd_schema *t = schemas[s]; t->kind; t++) {
			void *obj = NULL;

			if (t->defaults) {
				obj = calloc(1, t->obj_size);
				if (!obj)
					return -ENOMEM;
				t->defaults(obj);
			}
			for (size_t i = 0; i < t->n; i++) {
				struct sl_schema_field f = {
					.kind = t->kind,
					.parent = t->path,
					.name = t->fields[i].name,
					.required = t->fields[i].required,
				};

				describe(&t->fields[i], &f);
				default_of(&t->fields[i], obj, &f);
				fn(&f, arg);
			}
			free(obj);
		}
	}
	return 0;
}
