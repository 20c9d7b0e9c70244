// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Diagnostics collection and output.  See diag.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "config/diag.h"

#include "lib/grow.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void sl_diags_init(struct sl_diags *d)
{
	memset(d, 0, sizeof(*d));
}

static void diag_release(struct sl_diag *g)
{
	free(g->file);
	free(g->object);
	free(g->path);
	free(g->message);
}

void sl_diags_free(struct sl_diags *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->count; i++)
		diag_release(&d->items[i]);
	free(d->items);
	memset(d, 0, sizeof(*d));
}

static char *dup_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

int sl_diags_vadd(struct sl_diags *d, enum sl_severity sev, const char *file,
		  unsigned line, unsigned column, const char *object,
		  const char *path, const char *fmt, va_list ap)
{
	struct sl_diag g = {
		.severity = sev,
		.line = line,
		.column = line ? column : 0,
	};

	if (sev == SL_SEV_ERROR)
		d->n_errors++;
	else
		d->n_warnings++;

	if (sl_grow((void **)&d->items, &d->cap, d->count + 1, sizeof(*d->items)))
		goto oom;
	if (vasprintf(&g.message, fmt, ap) < 0) {
		g.message = NULL;
		goto oom;
	}
	g.file = dup_or_empty(file);
	g.object = dup_or_empty(object);
	g.path = dup_or_empty(path);
	if (!g.file || !g.object || !g.path) {
		diag_release(&g);
		goto oom;
	}
	d->items[d->count++] = g;
	return 0;
oom:
	d->oom = true;
	return -ENOMEM;
}

int sl_diags_add(struct sl_diags *d, enum sl_severity sev, const char *file,
		 unsigned line, unsigned column, const char *object,
		 const char *path, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = sl_diags_vadd(d, sev, file, line, column, object, path, fmt, ap);
	va_end(ap);
	return r;
}

size_t sl_diags_error_count(const struct sl_diags *d)
{
	return d ? d->n_errors : 0;
}

size_t sl_diags_warning_count(const struct sl_diags *d)
{
	return d ? d->n_warnings : 0;
}

struct sort_ent {
	struct sl_diag g;
	size_t seq;
};

static int sort_cmp(const void *a, const void *b)
{
	const struct sort_ent *x = a, *y = b;

	if (x->g.line != y->g.line)
		return x->g.line < y->g.line ? -1 : 1;
	if (x->g.column != y->g.column)
		return x->g.column < y->g.column ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void sl_diags_sort(struct sl_diags *d, size_t from)
{
	size_t n;
	struct sort_ent *tmp;

	if (!d || from >= d->count || d->count - from < 2)
		return;
	n = d->count - from;
	tmp = calloc(n, sizeof(*tmp));
	if (!tmp)
		return; /* order is cosmetic */
	for (size_t i = 0; i < n; i++) {
		tmp[i].g = d->items[from + i];
		tmp[i].seq = i;
	}
	qsort(tmp, n, sizeof(*tmp), sort_cmp);
	for (size_t i = 0; i < n; i++)
		d->items[from + i] = tmp[i].g;
	free(tmp);
}

const char *sl_severity_name(enum sl_severity sev)
{
	return sev == SL_SEV_ERROR ? "error" : "warning";
}

static void diag_fprint(const struct sl_diag *g, FILE *f)
{
	if (g->file && *g->file) {
		fputs(g->file, f);
		if (g->line) {
			fprintf(f, ":%u", g->line);
			if (g->column)
				fprintf(f, ":%u", g->column);
		}
		fputs(": ", f);
	}
	fprintf(f, "%s: ", sl_severity_name(g->severity));
	if (g->object && *g->object)
		fprintf(f, "%s: ", g->object);
	if (g->path && *g->path)
		fprintf(f, "%s: ", g->path);
	fputs(g->message ? g->message : "", f);
}

int sl_diag_format(const struct sl_diag *g, char *buf, size_t size)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);
	int n;

	if (!f)
		return -1;
	diag_fprint(g, f);
	if (fclose(f) != 0 || !s) {
		free(s);
		return -1;
	}
	n = snprintf(buf, size, "%s", s);
	free(s);
	return n;
}

void sl_diags_print(const struct sl_diags *d, FILE *f)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->count; i++) {
		diag_fprint(&d->items[i], f);
		fputc('\n', f);
	}
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if invalid. */
static size_t utf8_seq_len(const unsigned char *s, size_t n)
{
	uint32_t cp;
	size_t len;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

static void json_string(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	size_t n = strlen((const char *)s);

	fputc('"', f);
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		size_t len;

		switch (c) {
		case '"':  fputs("\\\"", f); i++; continue;
		case '\\': fputs("\\\\", f); i++; continue;
		case '\b': fputs("\\b", f); i++; continue;
		case '\f': fputs("\\f", f); i++; continue;
		case '\n': fputs("\\n", f); i++; continue;
		case '\r': fputs("\\r", f); i++; continue;
		case '\t': fputs("\\t", f); i++; continue;
		default: break;
		}
		if (c < 0x20 || c == 0x7f) {
			fprintf(f, "\\u%04x", c);
			i++;
			continue;
		}
		len = utf8_seq_len(s + i, n - i);
		if (!len) {
			fputs("\\ufffd", f);
			i++;
			continue;
		}
		fwrite(s + i, 1, len, f);
		i += len;
	}
	fputc('"', f);
}

void sl_diags_json(const struct sl_diags *d, FILE *f)
{
	size_t n = d ? d->count : 0;

	if (!n) {
		fputs("[]\n", f);
		return;
	}
	fputs("[\n", f);
	for (size_t i = 0; i < n; i++) {
		const struct sl_diag *g = &d->items[i];

		fputs("  {\"" SL_DIAG_KEY_FILE "\": ", f);
		json_string(f, g->file);
		if (g->line)
			fprintf(f, ", \"" SL_DIAG_KEY_LINE "\": %u", g->line);
		else
			fputs(", \"" SL_DIAG_KEY_LINE "\": null", f);
		if (g->line && g->column)
			fprintf(f, ", \"" SL_DIAG_KEY_COLUMN "\": %u", g->column);
		else
			fputs(", \"" SL_DIAG_KEY_COLUMN "\": null", f);
		fputs(", \"" SL_DIAG_KEY_OBJECT "\": ", f);
		json_string(f, g->object);
		fputs(", \"" SL_DIAG_KEY_PATH "\": ", f);
		json_string(f, g->path);
		fputs(", \"" SL_DIAG_KEY_SEVERITY "\": ", f);
		json_string(f, sl_severity_name(g->severity));
		fputs(", \"" SL_DIAG_KEY_MESSAGE "\": ", f);
		json_string(f, g->message);
		fputs(i + 1 < n ? "},\n" : "}\n", f);
	}
	fputs("]\n", f);
}
