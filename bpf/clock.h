/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Time in the data path: bpf_ktime_get_ns(), nanoseconds of
 * CLOCK_MONOTONIC, as the daemon's heartbeat and deadlines are written.
 */
#ifndef SLUICE_BPF_CLOCK_H
#define SLUICE_BPF_CLOCK_H


#define NSEC_PER_SEC 1000000000ULL
#define CLOCK_MONOTONIC 1

#endif /* SLUICE_BPF_CLOCK_H */
