// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "daemon/config_watch.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/read_file.h"

/* As much as the configuration loader reads (config.c): a larger file is
 * refused by the reload anyway. */
#define MAX_CONFIG_BYTES (16u << 20)

/* FNV-1a over the file's bytes; 0 when it cannot be read (a reload then
 * says why). */
static uint64_t digest_of(const char *path)
{
	uint64_t h = 14695981039346656037ULL; /* FNV-1a 64 offset basis */
	char *buf = NULL;
	size_t len = 0;

	if (sl_read_file(path, MAX_CONFIG_BYTES, &buf, &len))
		return 0;
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)buf[i];
		h *= 1099511628211ULL;
	}
	free(buf);
	return h ? h : 1;
}

int sl_config_watch_open(struct sl_config_watch *w, const char *path, int epoll_fd)
{
	char dir[PATH_MAX], base[PATH_MAX];
	struct epoll_event ev = {.events = EPOLLIN};
	int err;

	memset(w, 0, sizeof(*w));
	w->fd = -1;
	if (strlen(path) >= sizeof(w->path))
		return -ENAMETOOLONG;
	snprintf(w->path, sizeof(w->path), "%s", path);
	snprintf(dir, sizeof(dir), "%s", path);
	snprintf(base, sizeof(base), "%s", path);
	snprintf(w->base, sizeof(w->base), "%s", basename(base));
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd < 0)
		goto fail;
	if (inotify_add_watch(w->fd, dirname(dir), IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE |
			      IN_DELETE | IN_ATTRIB | IN_MOVED_FROM) < 0)
		goto fail;
	ev.data.fd = w->fd;
	if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, w->fd, &ev))
		goto fail;
	w->digest = digest_of(path);
	return 0;
fail:
	err = -errno;
	pr_err("--watch-config %s: %s", path, sl_read_file_strerror(err));
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	return err;
}

void sl_config_watch_close(struct sl_config_watch *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
}

bool sl_config_watch_handle(struct sl_config_watch *w, int fd, uint64_t now_ns)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool relevant = false;
	ssize_t n;

	if (w->fd < 0 || fd != w->fd)
		return false;
	while ((n = read(w->fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *e = (const struct inotify_event *)p;

			/* The file itself, or the kubelet's ..data swap. */
			if ((e->mask & IN_Q_OVERFLOW) ||
			    (e->len && (!strcmp(e->name, w->base) || !strncmp(e->name, "..", 2))))
				relevant = true;
			p += sizeof(*e) + e->len;
		}
	}
	if (relevant)
		w->due_ns = now_ns + SL_WATCH_SETTLE_NS; /* a burst of events settles first */
	return true;
}

bool sl_config_watch_due(struct sl_config_watch *w, uint64_t now_ns)
{
	uint64_t d;

	if (w->fd < 0 || !w->due_ns || now_ns < w->due_ns)
		return false;
	w->due_ns = 0;
	d = digest_of(w->path);
	if (d && d == w->digest)
		return false; /* touched, not changed */
	return true;
}

void sl_config_watch_loaded(struct sl_config_watch *w)
{
	if (w->fd >= 0)
		w->digest = digest_of(w->path);
}
