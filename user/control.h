/*
 * The daemon's control socket (adapter): a Unix stream socket on which
 * `sluicectl reload` asks for a reload and gets the outcome back.
 *
 * Protocol: the client writes one line ("reload\n"); the daemon answers
 * with one JSON object {"ok": bool, "message": "...", "diagnostics": [...]}
 * and closes.  Root only (mode 0600).
 */
#ifndef SLUICE_CONTROL_H
#define SLUICE_CONTROL_H

#include <stddef.h>

#define SL_DEFAULT_CONTROL_SOCKET "/run/sluice/sluiced.sock"

/* Listen on path (its directory is created; a stale socket replaced).
 * Returns the listening fd or a negative errno. */
int sl_control_listen(const char *path);

/* Accept one client and read its request line into buf (NUL-terminated,
 * newline stripped).  Returns the client fd or a negative errno. */
int sl_control_accept(int listen_fd, char *buf, size_t len);

/* Client side: send request, read the whole answer into a malloc'd
 * string (*answer).  0 or a negative errno. */
int sl_control_request(const char *path, const char *request, char **answer);

#endif
