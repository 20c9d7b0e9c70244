// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The replay trace format (sluicectl replay --trace): CSV with a header
 * naming t_s, signal and optionally setpoint (and admitted, deferred,
 * rejected, which replay --plot draws) in any order, one row per
 * control period, an empty cell for "no valid value".  See trace.h.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/trace.h"

enum { COL_T, COL_SIGNAL, COL_SETPOINT, COL_ADMITTED, COL_DEFERRED, COL_REJECTED, COL_N };
static const char *const col_names[COL_N] = {"t_s", "signal", "setpoint", "admitted", "deferred",
					     "rejected"};

static char *trim(char *s, char **end_out)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
		e--;
	*e = 0;
	if (end_out)
		*end_out = e;
	return s;
}

int ctl_trace_parse(const char *path, char *text, size_t text_len, struct ctl_trace_row **rows_out,
		    size_t *n_out, bool *has_setpoint)
{
	char *line, *next;
	size_t n = 0, rcap = 0;
	struct ctl_trace_row *rows = NULL;
	int colidx[16]; /* field -> COL_*, header order */
	int nfields = 0, ret = -1;
	unsigned lineno = 0;
	bool header = false;
	size_t len;

	*has_setpoint = false;
	for (line = text; line < text + text_len; line = next) {
		char *nl = memchr(line, '\n', (size_t)(text + text_len - line));
		char *p = line, *blank;
		int field = 0;
		struct ctl_trace_row r = {NAN, NAN, NAN, NAN, NAN, NAN};

		next = nl ? nl + 1 : text + text_len;
		len = (size_t)(next - line);
		if (nl)
			*nl = '\0';
		lineno++;
		if (len - (nl != NULL) != strlen(line)) {
			fprintf(stderr, "%s:%u:%zu: NUL byte in the trace\n", path, lineno,
				strlen(line) + 1);
			goto out;
		}
		blank = trim(line, NULL);
		if (!*blank)
			continue; /* blank lines are ignored */
		if (!header) {
			bool seen[COL_N] = {false};

			for (;;) {
				char *comma = strchr(p, ','), *cell;
				size_t col = (size_t)(p - line) + 1;
				int c;

				if (comma)
					*comma = 0;
				cell = trim(p, NULL);
				if (nfields >= (int)(sizeof(colidx) / sizeof(colidx[0]))) {
					fprintf(stderr, "%s:%u:%zu: too many columns\n", path, lineno, col);
					goto out;
				}
				for (c = 0; c < COL_N; c++)
					if (!strcmp(cell, col_names[c]))
						break;
				if (c == COL_N) {
					fprintf(stderr, "%s:%u:%zu: column %d: unknown column '%s' (expected t_s, signal, setpoint, admitted, deferred, rejected)\n",
						path, lineno, col, nfields + 1, cell);
					goto out;
				}
				if (seen[c]) {
					fprintf(stderr, "%s:%u:%zu: column %d: duplicate column '%s'\n",
						path, lineno, col, nfields + 1, cell);
					goto out;
				}
				seen[c] = true;
				colidx[nfields++] = c;
				if (!comma)
					break;
				p = comma + 1;
			}
			if (!seen[COL_T] || !seen[COL_SIGNAL]) {
				fprintf(stderr, "%s:%u:1: the header needs columns t_s and signal (and optionally setpoint)\n",
					path, lineno);
				goto out;
			}
			*has_setpoint = seen[COL_SETPOINT];
			header = true;
			continue;
		}
		for (;;) {
			char *comma = strchr(p, ','), *cell, *end;
			size_t col = (size_t)(p - line) + 1;
			double v;

			if (comma)
				*comma = 0;
			if (field >= nfields) {
				fprintf(stderr, "%s:%u:%zu: more fields than the header's %d\n",
					path, lineno, col - 1, nfields);
				goto out;
			}
			cell = trim(p, NULL);
			col += (size_t)(cell - p);
			if (!*cell) {
				v = NAN; /* no valid value */
			} else {
				errno = 0;
				v = strtod(cell, &end);
				if (*end || end == cell || (errno == ERANGE && isinf(v))) {
					fprintf(stderr, "%s:%u:%zu: column %d (%s): '%s' is not a number\n",
						path, lineno, col, field + 1, col_names[colidx[field]], cell);
					goto out;
				}
			}
			switch (colidx[field]) {
			case COL_T: r.t_s = v; break;
			case COL_SIGNAL: r.signal = v; break;
			case COL_SETPOINT: r.setpoint = v; break;
			case COL_ADMITTED: r.admitted = v; break;
			case COL_DEFERRED: r.deferred = v; break;
			default: r.rejected = v; break;
			}
			if (colidx[field] == COL_T && !isfinite(v)) {
				fprintf(stderr, "%s:%u:%zu: column %d (t_s): a time in seconds is required\n",
					path, lineno, col, field + 1);
				goto out;
			}
			if (colidx[field] == COL_T && n && v < rows[n - 1].t_s) {
				fprintf(stderr, "%s:%u:%zu: column %d (t_s): time runs backwards (%g after %g)\n",
					path, lineno, col, field + 1, v, rows[n - 1].t_s);
				goto out;
			}
			/* A latency or a rate: a finite number, not below 0 (an
			 * empty cell is "no valid value"). */
			if (colidx[field] != COL_T && *cell && (!isfinite(v) || v < 0)) {
				fprintf(stderr, "%s:%u:%zu: column %d (%s): '%s' is not a latency or a rate "
					"(a finite number, 0 or more)\n",
					path, lineno, col, field + 1, col_names[colidx[field]], cell);
				goto out;
			}
			field++;
			if (!comma)
				break;
			p = comma + 1;
		}
		if (field < nfields) {
			fprintf(stderr, "%s:%u:%zu: %d field%s, the header has %d (missing column %d, %s)\n",
				path, lineno, strlen(line) + 1, field, field == 1 ? "" : "s", nfields,
				field + 1, col_names[colidx[field]]);
			goto out;
		}
		if (n == rcap) {
			struct ctl_trace_row *nr;

			rcap = rcap ? 2 * rcap : 256;
			nr = realloc(rows, rcap * sizeof(*rows));
			if (!nr) {
				fprintf(stderr, "sluicectl replay: out of memory\n");
				goto out;
			}
			rows = nr;
		}
		rows[n++] = r;
	}
	if (!header) {
		fprintf(stderr, "%s:1:1: empty trace: expected the header t_s,signal[,setpoint]\n", path);
		goto out;
	}
	ret = 0;
out:
	if (ret) {
		free(rows);
		rows = NULL;
		n = 0;
	}
	*rows_out = rows;
	*n_out = n;
	return ret;
}

