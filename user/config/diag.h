/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Diagnostics: positioned errors and warnings collected while loading a
 * configuration (or anything else that reads operator input).
 *
 * A diagnostic names where (file, 1-based line and column), what (an object
 * context such as "PriorityLevelConfiguration/web" and a field path such as
 * "spec.limited.limitResponse.queuing.handSize"), how bad (error or warning)
 * and why (a one-line message).  Printed, one per line:
 *
 *   FILE:LINE:COLUMN: SEVERITY: OBJECT: PATH: MESSAGE
 *
 * Empty parts are left out together with their separator: no position gives
 * "FILE: error: ...", no object gives "FILE:1:1: error: PATH: MESSAGE", and
 * so on.  sl_diags_json() prints the same data as a JSON array.
 *
 * A struct sl_diags is a plain value: zero-initialise it (or use
 * sl_diags_init()), pass it to any number of loaders, then sl_diags_free().
 * No global state.
 */
#ifndef SLUICE_DIAG_H
#define SLUICE_DIAG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum sl_severity {
	SL_SEV_ERROR   = 0,
	SL_SEV_WARNING = 1,
};

struct sl_diag {
	enum sl_severity severity;
	char *file;       /* display name of the input, "" if none */
	unsigned line;    /* 1-based; 0 = no position (e.g. unreadable file) */
	unsigned column;  /* 1-based, in characters; 0 = unknown */
	char *object;     /* "Kind/name" context, "" if none */
	char *path;       /* field path inside the object, "" if none */
	char *message;
};

struct sl_diags {
	struct sl_diag *items;
	size_t count;      /* stored diagnostics */
	size_t cap;
	size_t n_errors;   /* errors reported (stored or not, see oom) */
	size_t n_warnings; /* warnings reported (stored or not) */
	bool oom;          /* a diagnostic could not be stored: out of memory */
};

#define SL_DIAGS_INIT { 0 }

void sl_diags_init(struct sl_diags *d);
/* Frees every diagnostic; leaves d empty and reusable. */
void sl_diags_free(struct sl_diags *d);

/*
 * Adds a diagnostic.  file, object and path may be NULL (treated as "").
 * The counters are updated even when memory runs out, so a caller that
 * checks sl_diags_error_count() never mistakes a failed add for success.
 * Returns 0, or -ENOMEM if the diagnostic could not be stored.
 */
int sl_diags_add(struct sl_diags *d, enum sl_severity sev, const char *file,
		 unsigned line, unsigned column, const char *object,
		 const char *path, const char *fmt, ...)
	__attribute__((format(printf, 8, 9)));
int sl_diags_vadd(struct sl_diags *d, enum sl_severity sev, const char *file,
		  unsigned line, unsigned column, const char *object,
		  const char *path, const char *fmt, va_list ap)
	__attribute__((format(printf, 8, 0)));

size_t sl_diags_error_count(const struct sl_diags *d);
size_t sl_diags_warning_count(const struct sl_diags *d);

/* Stable sort of items[from..count) by (line, column). */
void sl_diags_sort(struct sl_diags *d, size_t from);

const char *sl_severity_name(enum sl_severity sev); /* "error", "warning" */

/* Formats one diagnostic as its human line (no trailing newline), with
 * snprintf semantics: returns the length it needed. */
int sl_diag_format(const struct sl_diag *g, char *buf, size_t size);

/* One human line per diagnostic. */
void sl_diags_print(const struct sl_diags *d, FILE *f);

/*
 * JSON array, one object per diagnostic:
 *   {"file": "...", "line": 14, "column": 7, "object": "...", "path": "...",
 *    "severity": "error", "message": "..."}
 * line and column are null when unknown.  Strings are escaped per RFC 8259;
 * bytes that are not valid UTF-8 become U+FFFD, so the output is always
 * valid UTF-8 JSON.
 */
void sl_diags_json(const struct sl_diags *d, FILE *f);
/* Its keys, for whoever reads it (sluicectl reload reads the daemon's
 * outcome: daemon/control.h). */
#define SL_DIAG_KEY_FILE     "file"
#define SL_DIAG_KEY_LINE     "line"
#define SL_DIAG_KEY_COLUMN   "column"
#define SL_DIAG_KEY_OBJECT   "object"
#define SL_DIAG_KEY_PATH     "path"
#define SL_DIAG_KEY_SEVERITY "severity"
#define SL_DIAG_KEY_MESSAGE  "message"
#define SL_DIAG_N_KEYS 7

#endif /* SLUICE_DIAG_H */
