/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What sluice costs per connection, from two readings (lib, pure): each
 * program's kernel statistics (runs, run time), the daemon's CPU time and
 * the connections admitted, at the start and the end of an interval.
 * `sluicectl cost` reads; this divides.
 */
#ifndef SLUICE_COST_H
#define SLUICE_COST_H

#include <stdbool.h>
#include <stdint.h>

#define SL_COST_PROGS 2 /* sluice_xdp, sluice_sockops */

struct sl_cost_reading {
	uint64_t mono_ns;
	struct {
		uint32_t id; /* 0: not loaded */
		uint64_t runs, run_ns;
	} prog[SL_COST_PROGS];
	uint32_t daemon_pid; /* 0: no daemon */
	uint64_t daemon_ns;
	uint64_t admitted; /* connections admitted, every level */
};

struct sl_cost {
	double seconds;
	uint64_t connections;
	struct {
		uint64_t runs, run_ns;
		double runs_per_conn, ns_per_run, ns_per_conn;
	} prog[SL_COST_PROGS];
	uint64_t daemon_ns;
	double daemon_ns_per_conn;
	double bpf_ns_per_conn, ns_per_conn; /* the programs; and the daemon too */
	/* What makes the figures partial: a program or the daemon replaced
	 * (a restart) between the readings; its share then counts as 0. */
	bool prog_replaced[SL_COST_PROGS], daemon_replaced;
};

/* b is the later reading.  Per-connection figures are 0 without a
 * connection in between. */
void sl_cost_between(const struct sl_cost_reading *a, const struct sl_cost_reading *b,
		     struct sl_cost *out);

#endif
