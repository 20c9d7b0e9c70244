/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* A process's CPU time, every thread (lib): what the daemon costs, for
 * `sluicectl cost`. */
#ifndef SLUICE_TASK_CPU_H
#define SLUICE_TASK_CPU_H

#include <stdint.h>
#include <sys/types.h>

/* The time pid's threads have run, in ns (the first field of each
 * /proc/PID/task/TID/schedstat: on-CPU time, user and system, as the
 * scheduler counts it, without the tick sampling of utime and stime).
 * proc is the procfs mount ("/proc"; tests pass a directory of their own).
 * 0, or a negative errno (-ESRCH: no such process). */
int sl_task_cpu_ns(const char *proc, pid_t pid, uint64_t *ns);

#endif
