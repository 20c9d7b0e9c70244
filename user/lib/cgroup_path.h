/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Find the cgroup v2 mount point (pure parser + /proc/mounts reader). */
#ifndef SLUICE_CGROUP_PATH_H
#define SLUICE_CGROUP_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Scan a mounts table (the format of /proc/mounts) for the first cgroup2
 * mount; octal escapes (\040) in the path are decoded.  0 or -ENOENT. */
int sl_cgroup2_find(FILE *mounts, char *out, size_t len);
/* Same, reading /proc/mounts.  On hybrid hosts this is
 * /sys/fs/cgroup/unified, never assume /sys/fs/cgroup (Debian 12 with a systemd in hybrid mode mounts it there). */
int sl_cgroup2_root(char *out, size_t len);
/* Whether path is a cgroup v2 hierarchy's root (every socket of the host
 * is under it): a cgroup (it has cgroup.procs) without cgroup.type, which
 * every other cgroup has.  False for what is no cgroup. */
bool sl_cgroup2_is_root(const char *path);

#endif
