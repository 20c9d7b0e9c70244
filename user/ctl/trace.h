/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The replay trace format, parsed from a buffer (pure: no I/O but the
 * diagnostic line on stderr). */
#ifndef SLUICE_CTL_TRACE_H
#define SLUICE_CTL_TRACE_H

#include <stdbool.h>
#include <stddef.h>

/* Optional columns admitted, deferred, rejected (connections per second
 * in the period) are not the controller's input: replay --plot draws them. */
struct ctl_trace_row {
	double t_s, signal, setpoint; /* NaN: no valid value (t_s never) */
	double admitted, deferred, rejected; /* NaN when absent */
};

/* Parse text (text_len bytes, modified in place; NUL bytes are an error).
 * Returns 0 with *rows_out (malloc'd, *n_out rows; NULL when none), or -1
 * after printing one "PATH:LINE:COL: why" line.  *has_setpoint says
 * whether the header had a setpoint column. */
int ctl_trace_parse(const char *path, char *text, size_t text_len, struct ctl_trace_row **rows_out,
		    size_t *n_out, bool *has_setpoint);

#endif
