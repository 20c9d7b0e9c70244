#include "daemon/ext_signal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define DRAIN_MAX 4096 /* datagrams per call: a flood waits for the next tick */

static bool parse_ms(const char *buf, double *out)
{
	char *end;
	double v = strtod(buf, &end);

	if (end == buf || !isfinite(v) || v < 0)
		return false;
	*out = v;
	return true;
}

/* Bind signal.external_socket.  A stale socket file (a previous daemon)
 * is replaced; any other file at the path is an error, not removed. */
int sl_ext_open(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat st;
	int fd, err;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (!lstat(path, &st)) {
		if (!S_ISSOCK(st.st_mode))
			return -EEXIST;
		unlink(path);
	}
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
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
	struct stat st;
	char buf[64];
	ssize_t got;
	int fd;

	*why = NULL;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		*why = strerror(errno);
		return NAN;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
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
