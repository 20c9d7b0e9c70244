/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Prometheus text exposition (format 0.0.4), written in one place: every
 * metric family's HELP and TYPE lines, samples with their label sets, label
 * values and help text escaped as the format asks, and values as
 * Prometheus reads them (NaN, +Inf, -Inf; counters exact as integers).
 * Names are given without the "sluice_" prefix, which is added here.
 */
#ifndef SLUICE_LIB_PROM_H
#define SLUICE_LIB_PROM_H

#include <stdint.h>
#include <stdio.h>

#define SL_PROM_PREFIX "sluice_"

enum sl_prom_type {
	SL_PROM_COUNTER,
	SL_PROM_GAUGE,
	SL_PROM_HISTOGRAM,
};

/* A histogram with fixed upper bounds (ascending, finite; +Inf is
 * implied), as Prometheus client libraries keep one: a count per bucket,
 * the number of observations and their sum. */
#define SL_HIST_MAX_BOUNDS 24
struct sl_hist {
	const double *bounds;
	unsigned n_bounds;
	uint64_t bucket[SL_HIST_MAX_BOUNDS + 1]; /* not cumulative; [n_bounds]: above the last */
	uint64_t count;
	double sum;
};

/* bounds (>= 0, ascending) must outlive h; more than SL_HIST_MAX_BOUNDS
 * are cut. */
void sl_hist_init(struct sl_hist *h, const double *bounds, unsigned n_bounds);
/* v falls into the first bucket whose bound is >= v (Prometheus' le). */
void sl_hist_observe(struct sl_hist *h, double v);

/* "# HELP sluice_NAME HELP" and "# TYPE sluice_NAME TYPE": once per family,
 * before its samples. */
void sl_prom_family(FILE *f, const char *name, enum sl_prom_type type, const char *help);

/* One sample.  After the value: label pairs (const char *key, const char
 * *value), ended by NULL.  sl_prom_sample(f, "level_seats", 3, "level",
 * "web", NULL) writes: sluice_level_seats{level="web"} 3 */
void sl_prom_sample(FILE *f, const char *name, double value, ...)
	__attribute__((sentinel));
/* The same for a counter kept as an integer: printed exactly. */
void sl_prom_sample_u64(FILE *f, const char *name, uint64_t value, ...)
	__attribute__((sentinel));

/* A histogram's samples: NAME_bucket{LABELS,le="B"} (cumulative, +Inf last),
 * NAME_sum and NAME_count, with the label pairs given as above.  extra_zeros
 * adds that many observations of 0 (counted elsewhere: connections that
 * did not wait at all) to every bucket and the count. */
void sl_prom_histogram(FILE *f, const char *name, const struct sl_hist *h, uint64_t extra_zeros,
		       ...) __attribute__((sentinel));

/* A family with one unlabelled sample. */
void sl_prom_single(FILE *f, const char *name, enum sl_prom_type type, const char *help,
		    uint64_t value);

#endif
