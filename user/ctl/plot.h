/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Pictures for people (gnuplot): what replay decided, what simulate ran, over time. */
#ifndef SLUICE_CTL_PLOT_H
#define SLUICE_CTL_PLOT_H

#include <stdbool.h>
#include <stddef.h>

/* One control period as replay --plot draws it; NaN: no value. */
struct ctl_plot_point {
	double t_s, signal, setpoint;
	double multiplier; /* what was applied: 1 in pass-through */
	bool overload;
	double admitted, deferred, rejected; /* per second, from the trace */
};

/* Write a PNG to path: latency against setpoint (overloaded periods
 * marked), the load multiplier, and admitted/deferred/rejected per second
 * when any point has them.  0, or -1 after one line on stderr (gnuplot
 * missing or failing, the file not writable). */
int ctl_plot_replay(const char *path, const char *title, const struct ctl_plot_point *p, size_t n);

/* One second of a simulate arm; NaN: no value (no completion, no limit). */
struct ctl_sim_second {
	double completed, refused, median_ms, in_flight, waiting, limit;
};

struct ctl_plot_arm {
	const char *name;
	const struct ctl_sim_second *s;
	size_t n;
};

/* Write a PNG to path: completions per second, the median time in service
 * (log scale) and the connections in flight (with the limit) of each arm,
 * second by second.  0, or -1 after one line on stderr. */
int ctl_plot_simulate(const char *path, const char *title, const struct ctl_plot_arm *arms,
		      size_t n_arms);

#endif
