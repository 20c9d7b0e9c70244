/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The external latency signal (daemon): what an application tells a
 * policy's controller, as numbers of milliseconds, over a Unix datagram
 * socket (signal.external_socket) or in a file it keeps rewriting
 * (signal.external_path).  Nothing here may wait: the socket is
 * non-blocking and drained a bounded number of datagrams per call, the file
 * is opened O_NONBLOCK and read only when it is a regular file.
 */
#ifndef SLUICE_EXT_SIGNAL_H
#define SLUICE_EXT_SIGNAL_H

#include <stdint.h>

/* The largest latency a sample may say (an hour, in ms). */
#define SL_EXT_MAX_MS 3600000.0

/* Bind a datagram socket at path, mode 0600 (only the daemon's user may
 * send), in a directory nobody else may write into (-EPERM otherwise,
 * unless it is sticky).  A stale socket file (a previous daemon) is
 * replaced; any other file at the path is -EEXIST, not removed.  Returns
 * the fd or a negative errno. */
int sl_ext_open(const char *path);
/* Add every number waiting on fd to *sum, *n.  Returns how many
 * datagrams were not a number of ms from 0 to SL_EXT_MAX_MS (ignored). */
unsigned sl_ext_drain(int fd, double *sum, uint64_t *n);
/* The number in the file, or NaN (missing, not a number: *why says why
 * when it could not be read at all; NULL otherwise). */
double sl_ext_read_file(const char *path, const char **why);

#endif
