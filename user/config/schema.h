/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Every field the configuration loader knows, from the loader's own field
 * tables: its object kind, where it sits, its type, the values it takes
 * and its default.  sluice.yaml(5) and `sluicectl schema` are written from
 * it, so the reference cannot drift from what `validate` accepts.
 */
#ifndef SLUICE_CONFIG_SCHEMA_H
#define SLUICE_CONFIG_SCHEMA_H

#include <stdbool.h>

struct sl_schema_field {
	const char *kind;   /* "Server"; "*" every object; "*label matcher" the shared matcher */
	const char *parent; /* "spec.heldSyns"; "[]" marks a list's items */
	const char *name;   /* "maxBytes" */
	char type[192];     /* "integer", "duration", "one of: open, closed, static", ... */
	char range[96];     /* "1 to 100", "1ms to 24h", "" */
	char dflt[96];      /* "" when the field has none to show */
	bool required;
};

typedef void (*sl_schema_fn)(const struct sl_schema_field *f, void *arg);

/* Calls fn for every field, object by object, in the order of the tables.
 * 0, or -ENOMEM. */
int sl_schema_walk(sl_schema_fn fn, void *arg);

#endif
