/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The daemon's clock (lib). */
#ifndef SLUICE_CLOCK_H
#define SLUICE_CLOCK_H

/* CLOCK_MONOTONIC in ns: the clock of bpf_ktime_get_ns(), so times the
 * data path writes compare with times userspace reads. */
unsigned long long sl_mono_ns(void);
/* CLOCK_REALTIME in seconds: for timestamps people and Prometheus read. */
double sl_wall_s(void);

#endif
