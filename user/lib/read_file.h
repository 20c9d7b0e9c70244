/* Whole files read into memory, never more than a bound (lib): a trace or
 * a configuration named /dev/zero or a FIFO must not hang or exhaust us. */
#ifndef SLUICE_READ_FILE_H
#define SLUICE_READ_FILE_H

#include <stddef.h>

/* Read path ("-" = standard input) into a malloc'd, NUL-terminated *buf.
 * 0, or a negative errno: -EISDIR, -EFBIG (more than max bytes), -ENOMEM,
 * or what open/read said. */
int sl_read_file(const char *path, size_t max, char **buf, size_t *len);

#endif
