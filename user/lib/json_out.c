// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "lib/json_out.h"

#include <math.h>
#include <inttypes.h>
#include <stdlib.h>

void json_write_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	for (; *p; p++) {
		switch (*p) {
		case '"':  fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		case '\b': fputs("\\b", f); break;
		case '\f': fputs("\\f", f); break;
		default:
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

void jo_init(struct json_out *jo, FILE *f, bool pretty)
{
	jo->f = f;
	jo->depth = 0;
	jo->pretty = pretty;
	jo->first[0] = true;
}

static void indent(struct json_out *jo)
{
	if (!jo->pretty)
		return;
	fputc('\n', jo->f);
	for (int i = 0; i < jo->depth; i++)
		fputs("  ", jo->f);
}

/* Comma, indentation and key before a value. */
static void prefix(struct json_out *jo, const char *key)
{
	if (jo->depth > 0) {
		if (!jo->first[jo->depth])
			fputc(',', jo->f);
		indent(jo);
	}
	jo->first[jo->depth] = false;
	if (key) {
		json_write_string(jo->f, key);
		fputs(jo->pretty ? ": " : ":", jo->f);
	}
}

static void open(struct json_out *jo, const char *key, char c)
{
	prefix(jo, key);
	fputc(c, jo->f);
	if (jo->depth + 1 < JO_MAX_DEPTH)
		jo->depth++;
	jo->first[jo->depth] = true;
}

static void close_(struct json_out *jo, char c)
{
	bool empty = jo->first[jo->depth];

	if (jo->depth > 0)
		jo->depth--;
	if (!empty)
		indent(jo);
	fputc(c, jo->f);
}

void jo_obj_begin(struct json_out *jo, const char *key) { open(jo, key, '{'); }
void jo_obj_end(struct json_out *jo) { close_(jo, '}'); }
void jo_arr_begin(struct json_out *jo, const char *key) { open(jo, key, '['); }
void jo_arr_end(struct json_out *jo) { close_(jo, ']'); }

void jo_str(struct json_out *jo, const char *key, const char *val)
{
	prefix(jo, key);
	if (val)
		json_write_string(jo->f, val);
	else
		fputs("null", jo->f);
}

void jo_u64(struct json_out *jo, const char *key, uint64_t val)
{
	prefix(jo, key);
	/* Past 2^53 a JSON reader's double would round it: a string. */
	if (val > JO_MAX_SAFE_INTEGER)
		fprintf(jo->f, "\"%" PRIu64 "\"", val);
	else
		fprintf(jo->f, "%" PRIu64, val);
}

void jo_i64(struct json_out *jo, const char *key, int64_t val)
{
	prefix(jo, key);
	if (val > (int64_t)JO_MAX_SAFE_INTEGER || val < -(int64_t)JO_MAX_SAFE_INTEGER)
		fprintf(jo->f, "\"%" PRId64 "\"", val);
	else
		fprintf(jo->f, "%" PRId64, val);
}

const char *json_double_shortest(double v, char *buf, size_t len)
{
	/* Integers print as integers ("10", not "1e+01"). */
	if (v == (double)(long long)v && v > -1e15 && v < 1e15) {
		snprintf(buf, len, "%lld", (long long)v);
		return buf;
	}
	/* Otherwise the shortest spelling that reads back as the same double. */
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, len, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	return buf;
}

void jo_double(struct json_out *jo, const char *key, double val)
{
	char buf[32];

	prefix(jo, key);
	if (isfinite(val))
		fputs(json_double_shortest(val, buf, sizeof(buf)), jo->f);
	else
		fputs("null", jo->f);
}

void jo_bool(struct json_out *jo, const char *key, bool val)
{
	prefix(jo, key);
	fputs(val ? "true" : "false", jo->f);
}

void jo_null(struct json_out *jo, const char *key)
{
	prefix(jo, key);
	fputs("null", jo->f);
}

void jo_finish(struct json_out *jo)
{
	fputc('\n', jo->f);
	fflush(jo->f);
}
