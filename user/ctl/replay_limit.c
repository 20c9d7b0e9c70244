// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * sluicectl replay --connections: sluice's own controller
 * (engine/seat_gradient.c, with the policy's parameters as the daemon
 * derives them, daemon/policy_limit.c) run offline over a trace of
 * connections: CSV with a header naming admitted_s (when each connection
 * was admitted, seconds) and duration_ms (admission to close), in any
 * order, other columns ignored.  Time advances in the daemon's 100 ms
 * ticks; each tick the connections that closed are completions (with
 * their admission times, so only those admitted since the limit last moved
 * are judged) and the count in flight is what the trace has open.  Open
 * loop: the trace's connections do not wait for the limit, so this shows
 * what the controller would decide on that behaviour (as replay --trace
 * does for Aperture's), not what the service would then do.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/ctl.h"
#include "ctl/replay_limit.h"
#include "engine/seat_gradient.h"
#include "lib/grow.h"
#include "lib/json_out.h"
#include "lib/read_file.h"

#define MAX_CONN_TRACE_BYTES (256u << 20)
#define TICK_NS 100000000ULL

struct conn_row {
	uint64_t admitted_ns, closed_ns;
};

/* The column index of name in a header line, or -1. */
static int column_of(const char *header, const char *name)
{
	size_t n = strlen(name);
	int col = 0;

	for (const char *p = header;; col++) {
		const char *end = strchr(p, ',');
		const char *e = end ? end : p + strlen(p);

		while (p < e && (*p == ' ' || *p == '\t'))
			p++;
		while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
			e--;
		if ((size_t)(e - p) == n && !memcmp(p, name, n))
			return col;
		if (!end)
			return -1;
		p = end + 1;
	}
}

/* Field col of a CSV line as a number, or NaN. */
static double field(const char *line, int col)
{
	const char *p = line;
	char *end;
	double v;

	for (int i = 0; i < col; i++) {
		p = strchr(p, ',');
		if (!p)
			return NAN;
		p++;
	}
	v = strtod(p, &end);
	while (*end == ' ' || *end == '\t' || *end == '\r')
		end++;
	return end == p || (*end && *end != ',') ? NAN : v;
}

static int parse(const char *path, char *text, struct conn_row **out, size_t *n_out)
{
	char *line = text, *next;
	int c_adm = -1, c_dur = -1;
	unsigned lineno = 0;
	size_t n = 0, cap = 0;
	struct conn_row *rows = NULL;

	for (; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		if (!*line || *line == '#')
			continue;
		if (c_adm < 0) {
			c_adm = column_of(line, "admitted_s");
			c_dur = column_of(line, "duration_ms");
			if (c_adm < 0 || c_dur < 0) {
				fprintf(stderr, "%s:%u:1: the header must name admitted_s and duration_ms\n", path,
					lineno);
				free(rows);
				return -1;
			}
			continue;
		}
		{
			double a = field(line, c_adm), d = field(line, c_dur);

			if (!(a >= 0) || !(d >= 0) || a > 1e9 || d > 1e9) {
				fprintf(stderr, "%s:%u:1: admitted_s and duration_ms must be numbers >= 0\n", path,
					lineno);
				free(rows);
				return -1;
			}
			if (sl_grow((void **)&rows, &cap, n + 1, sizeof(*rows))) {
				free(rows);
				fprintf(stderr, "sluicectl replay: out of memory\n");
				return -1;
			}
			rows[n].admitted_ns = (uint64_t)llround(a * 1e9);
			rows[n].closed_ns = rows[n].admitted_ns + (uint64_t)llround(d * 1e6);
			n++;
		}
	}
	if (c_adm < 0) {
		fprintf(stderr, "%s:1:1: empty trace (no header)\n", path);
		return -1;
	}
	*out = rows;
	*n_out = n;
	return 0;
}

static int by_admitted(const void *a, const void *b)
{
	const struct conn_row *x = a, *y = b;

	return x->admitted_ns < y->admitted_ns ? -1 : x->admitted_ns > y->admitted_ns;
}

static int by_closed(const void *a, const void *b)
{
	const struct conn_row *x = a, *y = b;

	return x->closed_ns < y->closed_ns ? -1 : x->closed_ns > y->closed_ns;
}

static const char *cell(double v, char *buf)
{
	if (!isfinite(v))
		return "-";
	snprintf(buf, 32, "%.4g", v);
	return buf;
}

int ctl_replay_limit(const struct sl_policy_cfg *pol, const char *path, bool json, bool verbose)
{
	struct conn_row *rows = NULL, *closes = NULL;
	struct sl_sg_params p;
	struct json_out jo;
	struct sl_sg sg;
	size_t n = 0, ia = 0, ic = 0, text_len;
	char *text = NULL;
	uint64_t t0, t_end;
	int err = sl_read_file(path, MAX_CONN_TRACE_BYTES, &text, &text_len);

	if (err) {
		fprintf(stderr, "sluicectl replay: %s: %s\n", path, sl_read_file_strerror(err));
		return CTL_FAIL;
	}
	err = parse(path, text, &rows, &n);
	free(text);
	if (err)
		return CTL_FAIL;
	closes = malloc((n ? n : 1) * sizeof(*closes));
	if (!closes) {
		free(rows);
		return CTL_FAIL;
	}
	qsort(rows, n, sizeof(*rows), by_admitted);
	memcpy(closes, rows, n * sizeof(*rows));
	qsort(closes, n, sizeof(*closes), by_closed);
	/* The daemon's parameters for this policy. */
	sl_sg_params_from_policy(&p, pol);
	t0 = n ? rows[0].admitted_ns : 0;
	t_end = n ? closes[n - 1].closed_ns + TICK_NS : 0;
	sl_sg_init(&sg, &p, t0);
	if (json) {
		jo_init(&jo, stdout, false);
		jo_arr_begin(&jo, NULL);
	} else {
		printf("%8s %-13s %8s %9s %10s %10s %10s %11s\n", "t_s", "reason", "limit", "in_flight",
		       "signal_ms", "target_ms", "base_ms", "completed/s");
	}
	for (uint64_t t = t0; t <= t_end; t += TICK_NS) {
		struct sl_sg_decision d;
		uint32_t in_flight;

		while (ic < n && closes[ic].closed_ns <= t) {
			sl_sg_complete(&sg, closes[ic].admitted_ns, 0, closes[ic].closed_ns - closes[ic].admitted_ns);
			ic++;
		}
		while (ia < n && rows[ia].admitted_ns <= t)
			ia++;
		in_flight = (uint32_t)(ia - ic);
		if (!sl_sg_step(&sg, t, in_flight, 0, &d))
			continue;
		if (!verbose && d.limit_before == d.limit_after && d.reason != SL_SG_OVERLOAD)
			continue; /* a decision that changed nothing */
		if (json) {
			jo_obj_begin(&jo, NULL);
			jo_double(&jo, "t_s", (double)(t - t0) / 1e9);
			jo_str(&jo, "reason", sl_sg_reason_names[d.reason]);
			if (d.pass_through)
				jo_null(&jo, "limit");
			else
				jo_u64(&jo, "limit", d.limit_after);
			jo_double(&jo, "in_flight", d.in_flight);
			jo_double(&jo, "signal_ms", d.signal_ms);
			jo_double(&jo, "fresh_ms", d.fresh_ms);
			jo_double(&jo, "little_ms", d.little_ms);
			jo_double(&jo, "baseline_ms", d.baseline_ms);
			jo_double(&jo, "target_ms", d.target_ms);
			jo_double(&jo, "throughput", d.throughput);
			jo_double(&jo, "gradient", d.gradient);
			jo_obj_end(&jo);
		} else {
			char b[5][32], lim[16];

			if (d.pass_through)
				snprintf(lim, sizeof(lim), "pass");
			else
				snprintf(lim, sizeof(lim), "%u", d.limit_after);
			printf("%8.1f %-13s %8s %9.0f %10s %10s %10s %11s\n", (double)(t - t0) / 1e9,
			       sl_sg_reason_names[d.reason], lim, d.in_flight, cell(d.signal_ms, b[0]),
			       cell(d.target_ms, b[1]), cell(d.baseline_ms, b[2]), cell(d.throughput, b[3]));
		}
	}
	if (json) {
		jo_arr_end(&jo);
		jo_finish(&jo);
	}
	free(rows);
	free(closes);
	return 0;
}
