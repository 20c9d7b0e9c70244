// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "daemon/ext_signal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define DRAIN_MAX 4096 /* datagrams per call: a flood waits for the next tick */

/* A latency in ms, 0 to SL_EXT_MAX_MS: a number past it (1e308, say) is
 * no latency a service has, and would throw the controller's averages. */
static bool parse_ms(const char *buf, double *out)
{
	char *end;
	double v = strtod(buf, &end);

	while (*end == ' ' || *end == '\n' || *end == '\r' || *end == '\t')
		end++;
	if (end == buf || *end || !isfinite(v) || v < 0 || v > SL_EXT_MAX_MS)
		return false;
	*out = v;
	return true;
}

/* The socket's directory: a directory nobody else may write into (unless
 * its sticky bit keeps them from removing or replacing what is ours). */
static int private_dir(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	const char *slash = strrchr(path, '/');
	struct stat st;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	if (lstat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
		return -EPERM;
	return 0;
}

/* Bind signal.external_socket.  A stale socket file (a previous daemon)
 * is replaced; any other file at the path is an error, not removed. */
int sl_ext_open(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat st;
	int fd, err;

	mode_t old_mask;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	err = private_dir(path);
	if (err)
		return err;
	if (!lstat(path, &st)) {
		if (!S_ISSOCK(st.st_mode))
			return -EEXIST;
		unlink(path);
	}
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* Owner only from the start, whatever the umask: whoever may send
	 * here drives the policy's cuts (issue 26). */
	old_mask = umask(0177);
	err = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ? -errno : 0;
	umask(old_mask);
	if (!err && chmod(path, 0600))
		err = -errno;
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

unsigned sl_ext_drain(int fd, double *sum, uint64_t *n)
{
	unsigned bad = 0;
	char buf[64];

	for (int i = 0; fd >= 0 && i < DRAIN_MAX; i++) {
		ssize_t got = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
		double v;

		if (got < 0)
			break;
		buf[got] = '\0';
		if (!parse_ms(buf, &v)) {
			bad++;
			continue;
		}
		*sum += v;
		(*n)++;
	}
	return bad;
}

double sl_ext_read_file(const char *path, const char **why)
{
	double v = NAN;
	struct stat pre, st;
	char buf[64];
	ssize_t got;
	int fd;

	*why = NULL;
	/* Checked before it is opened (opening a device may do something),
	 * and again once open (the path may have changed in between). */
	if (stat(path, &pre)) {
		*why = strerror(errno);
		return NAN;
	}
	if (!S_ISREG(pre.st_mode)) {
		*why = "not a regular file";
		return NAN;
	}
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		*why = strerror(errno);
		return NAN;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_ino != pre.st_ino || st.st_dev != pre.st_dev) {
		*why = "not a regular file";
		close(fd);
		return NAN;
	}
	got = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (got > 0) {
		buf[got] = '\0';
		if (!parse_ms(buf, &v))
			v = NAN;
	}
	return v;
}
