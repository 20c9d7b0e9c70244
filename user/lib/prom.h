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
};

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

/* A family with one unlabelled sample. */
void sl_prom_single(FILE *f, const char *name, enum sl_prom_type type, const char *help,
		    uint64_t value);

#endif
