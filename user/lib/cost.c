// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "lib/cost.h"

#include <string.h>

static uint64_t grew(uint64_t a, uint64_t b)
{
	return b > a ? b - a : 0;
}

static double per(double x, uint64_t n)
{
	return n ? x / (double)n : 0;
}

void sl_cost_between(const struct sl_cost_reading *a, const struct sl_cost_reading *b,
		     struct sl_cost *out)
{
	memset(out, 0, sizeof(*out));
	out->seconds = (double)grew(a->mono_ns, b->mono_ns) / 1e9;
	out->connections = grew(a->admitted, b->admitted);
	for (int i = 0; i < SL_COST_PROGS; i++) {
		/* A program loaded anew starts its counts at 0: the difference
		 * of two programs' counts means nothing. */
		if (a->prog[i].id != b->prog[i].id) {
			out->prog_replaced[i] = true;
			continue;
		}
		out->prog[i].runs = grew(a->prog[i].runs, b->prog[i].runs);
		out->prog[i].run_ns = grew(a->prog[i].run_ns, b->prog[i].run_ns);
		out->prog[i].runs_per_conn = per((double)out->prog[i].runs, out->connections);
		out->prog[i].ns_per_run = per((double)out->prog[i].run_ns, out->prog[i].runs);
		out->prog[i].ns_per_conn = per((double)out->prog[i].run_ns, out->connections);
		out->bpf_ns_per_conn += out->prog[i].ns_per_conn;
	}
	if (a->daemon_pid != b->daemon_pid)
		out->daemon_replaced = true;
	else
		out->daemon_ns = grew(a->daemon_ns, b->daemon_ns);
	out->daemon_ns_per_conn = per((double)out->daemon_ns, out->connections);
	out->ns_per_conn = out->bpf_ns_per_conn + out->daemon_ns_per_conn;
}
