/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* A small streaming JSON writer: correct escaping and commas, nothing else. */
#ifndef SLUICE_JSON_OUT_H
#define SLUICE_JSON_OUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>

#define JO_MAX_DEPTH 16

struct json_out {
	FILE *f;
	int depth;
	bool pretty;
	bool first[JO_MAX_DEPTH];
};

void jo_init(struct json_out *jo, FILE *f, bool pretty);
/* key is NULL inside arrays and for the top-level value. */
void jo_obj_begin(struct json_out *jo, const char *key);
void jo_obj_end(struct json_out *jo);
void jo_arr_begin(struct json_out *jo, const char *key);
void jo_arr_end(struct json_out *jo);
void jo_str(struct json_out *jo, const char *key, const char *val); /* NULL -> null */
/* Integers above 2^53 (where a double, which most JSON readers use, stops
 * being exact) are written as decimal strings. */
#define JO_MAX_SAFE_INTEGER (1ULL << 53)
void jo_u64(struct json_out *jo, const char *key, uint64_t val);
void jo_i64(struct json_out *jo, const char *key, int64_t val);
void jo_double(struct json_out *jo, const char *key, double val); /* non-finite -> null */
void jo_bool(struct json_out *jo, const char *key, bool val);
void jo_null(struct json_out *jo, const char *key);
/* Ends the document with a newline. */
void jo_finish(struct json_out *jo);

/* The shortest decimal spelling of v that reads back as v exactly. */
const char *json_double_shortest(double v, char *buf, size_t len);

/* Write s as a JSON string literal (with quotes). */
void json_write_string(FILE *f, const char *s);

#endif
