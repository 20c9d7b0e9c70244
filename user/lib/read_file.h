/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Whole files read into memory, never more than a bound (lib): a trace or
 * a configuration named /dev/zero or a FIFO must not hang or exhaust us. */
#ifndef SLUICE_READ_FILE_H
#define SLUICE_READ_FILE_H

#include <stddef.h>

/* Not a regular file (nor a directory): a FIFO, a device, a socket.
 * Beyond every errno; sl_read_file_strerror names it. */
#define SL_ENOTREG (-4095)

/* Read path ("-" = standard input) into a malloc'd, NUL-terminated *buf.
 * 0, or a negative errno: -EISDIR, SL_ENOTREG, -EFBIG (more than max
 * bytes), -ENOMEM, or what open/read said. */
int sl_read_file(const char *path, size_t max, char **buf, size_t *len);
/* What an error of sl_read_file means, for a message. */
const char *sl_read_file_strerror(int err);

#endif
