#include "control.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define CONTROL_TIMEOUT_MS 10000

static int fill_addr(struct sockaddr_un *sa, const char *path)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	strcpy(sa->sun_path, path);
	return 0;
}

int sl_control_listen(const char *path)
{
	struct sockaddr_un sa;
	char dir[sizeof(sa.sun_path)];
	char *slash;
	int fd, err;

	if ((err = fill_addr(&sa, path)))
		return err;
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0700) && errno != EEXIST)
			return -errno;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	unlink(path); /* a socket left by a daemon that died */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || chmod(path, 0600) || listen(fd, 8)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

int sl_control_accept(int listen_fd, char *buf, size_t len)
{
	struct pollfd pfd;
	size_t got = 0;
	int fd;

	fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return -errno;
	pfd.fd = fd;
	pfd.events = POLLIN;
	/* A request is one short line; never let a silent client stall the
	 * daemon's loop for long. */
	while (got + 1 < len && poll(&pfd, 1, 1000) > 0) {
		ssize_t n = read(fd, buf + got, len - 1 - got);

		if (n <= 0)
			break;
		got += (size_t)n;
		if (memchr(buf, '\n', got))
			break;
	}
	buf[got] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	return fd;
}

int sl_control_request(const char *path, const char *request, char **answer)
{
	struct sockaddr_un sa;
	size_t len = 0, cap = 4096;
	char *buf;
	int fd, err;

	*answer = NULL;
	if ((err = fill_addr(&sa, path)))
		return err;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    write(fd, request, strlen(request)) < 0 || write(fd, "\n", 1) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	buf = malloc(cap);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (poll(&pfd, 1, CONTROL_TIMEOUT_MS) <= 0) {
			err = -ETIMEDOUT;
			break;
		}
		if (len + 1 == cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb) {
				err = -ENOMEM;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - 1 - len);
		if (n < 0) {
			err = -errno;
			break;
		}
		if (n == 0) {
			err = 0;
			break;
		}
		len += (size_t)n;
	}
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	buf[len] = '\0';
	*answer = buf;
	return 0;
}
