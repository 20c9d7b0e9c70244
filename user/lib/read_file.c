// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "lib/read_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int read_fd(int fd, size_t max, char **out, size_t *out_len)
{
	size_t len = 0, cap = 0;
	char *buf = NULL;
	int err = 0;

	for (;;) {
		ssize_t n;

		if (cap - len < 2) { /* room for a byte and the NUL */
			size_t ncap = cap ? cap * 2 : 16384;
			char *nb;

			if (cap > max) {
				err = -EFBIG;
				break;
			}
			if (ncap > max + 2)
				ncap = max + 2; /* room for one byte too many and the NUL */
			nb = realloc(buf, ncap);
			if (!nb) {
				err = -ENOMEM;
				break;
			}
			buf = nb;
			cap = ncap;
		}
		n = read(fd, buf + len, cap - 1 - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > max) {
			err = -EFBIG;
			break;
		}
	}
	if (err) {
		free(buf);
		return err;
	}
	if (!buf && !(buf = malloc(1)))
		return -ENOMEM;
	buf[len] = '\0';
	*out = buf;
	*out_len = len;
	return 0;
}

int sl_read_file(const char *path, size_t max, char **buf, size_t *len)
{
	struct stat st;
	int fd, err;

	*buf = NULL;
	*len = 0;
	if (!strcmp(path, "-"))
		return read_fd(STDIN_FILENO, max, buf, len);
	/* O_NONBLOCK: opening a FIFO waits for a writer otherwise; only a
	 * regular file is read (a FIFO or a device may never end). */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st))
		err = -errno;
	else if (S_ISDIR(st.st_mode))
		err = -EISDIR;
	else if (!S_ISREG(st.st_mode))
		err = SL_ENOTREG;
	else
		err = read_fd(fd, max, buf, len);
	close(fd);
	return err;
}

const char *sl_read_file_strerror(int err)
{
	return err == SL_ENOTREG ? "not a regular file (a FIFO or a device is never read)" : strerror(-err);
}
