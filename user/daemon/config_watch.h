/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Watching the configuration file (adapter, inotify): `sluiced
 * --watch-config` reloads when the file changes, as a Kubernetes ConfigMap
 * volume changes it (the kubelet swaps the directory's `..data` symlink),
 * or an editor writes it (often through a rename).  The directory is
 * watched, not the file, so a file replaced by a rename is still seen.
 * Events are settled for SL_WATCH_SETTLE_NS before the reload, and a file
 * whose bytes did not change is not reloaded.
 */
#ifndef SLUICE_CONFIG_WATCH_H
#define SLUICE_CONFIG_WATCH_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#define SL_WATCH_SETTLE_NS (500ULL * 1000000ULL)

struct sl_config_watch {
	int fd;             /* inotify, in the daemon's epoll set; -1: not watching */
	char path[PATH_MAX];
	char base[NAME_MAX + 1];
	uint64_t due_ns;    /* 0: nothing pending */
	uint64_t digest;    /* of the bytes last loaded (0: none) */
};

/* Watch path's directory; register the inotify fd with epoll_fd.  0, or a
 * negative errno (logged). */
int sl_config_watch_open(struct sl_config_watch *w, const char *path, int epoll_fd);
void sl_config_watch_close(struct sl_config_watch *w);
/* Whether fd is the watch's; if so drain its events (a change to the file,
 * or to a `..`-named entry such as `..data`, makes a reload due). */
bool sl_config_watch_handle(struct sl_config_watch *w, int fd, uint64_t now_ns);
/* At a tick: true, once, when a change has settled and the file's bytes
 * differ from the last ones loaded. */
bool sl_config_watch_due(struct sl_config_watch *w, uint64_t now_ns);
/* Record the bytes of the file as loaded now (at start and every reload). */
void sl_config_watch_loaded(struct sl_config_watch *w);

#endif
