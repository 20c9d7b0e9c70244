/*
 * The daemon's control socket: its protocol (both sides) and the socket's
 * set-up (adapter).  A Unix stream socket, mode 0600, in a directory that
 * belongs to the daemon's user and that nobody else may write.
 *
 * Protocol: one request line per connection, at most
 * SL_CONTROL_REQUEST_MAX bytes with its "\n"; the daemon answers with one
 * JSON object and closes.  Words match exactly (no prefixes):
 *
 *   levels [LEVEL]    {"what":"levels","borrowing_regime":..,"fair_prop":..,"levels":[..]}
 *   queues [LEVEL]    {"what":"queues","queues":[{"level","index","waiting",..}]}
 *   flows  [LEVEL]    {"what":"flows","flows":[{"level","queue","state",..}]}
 *   controller        {"policies":[..]}  (policy_rt.c's dump)
 *   hand SCHEMA=DIST  {"ok","flow_schema","priority_level","distinguisher","hash","queues","hand"}
 *                     a flow's queues under the daemon's own (per-boot) hash key
 *   reload            {"ok":true,"pending":true,"generation":N,..}: started (or
 *                     replacing the one running); the outcome comes from
 *   reload-status N   the same, pending, until a reload covering request N
 *                     ended: {"ok","message","shadow","config","diagnostics":[..]}
 *   shadow on|off     {"ok","message","shadow","config","diagnostics":[]}
 *
 * Anything else is answered {"ok":false,"message":"<why>",...} in the
 * reload/shadow shape; so is a change asked by anyone but the daemon's user.
 */
#ifndef SLUICE_CONTROL_H
#define SLUICE_CONTROL_H

#include <stddef.h>

#define SL_DEFAULT_CONTROL_SOCKET "/run/sluice/sluiced.sock"
#define SL_CONTROL_REQUEST_MAX    256

enum sl_control_cmd {
	SL_CTL_LEVELS,
	SL_CTL_QUEUES,
	SL_CTL_FLOWS,
	SL_CTL_CONTROLLER,
	SL_CTL_RELOAD,
	SL_CTL_SHADOW,
	SL_CTL_HAND,
	SL_CTL_RELOAD_STATUS,
};

struct sl_control_req {
	enum sl_control_cmd cmd;
	const char *word;  /* the request word, as in the table above */
	const char *arg;   /* LEVEL, "on"/"off", SCHEMA=DIST, N, or NULL */
};

/* Parse one request line (its "\n" stripped or not; the buffer is
 * modified).  0, or -EINVAL with *why saying what is wrong. */
int sl_control_parse(char *line, struct sl_control_req *out, const char **why);

/* Listen on path.  Its directory is created 0700 when missing; an existing
 * one must be a directory owned by this user and writable by nobody else,
 * a socket left by a daemon that died is replaced, anything else at path
 * (a file, a live daemon's socket) is refused.  gid >= 0 (Server
 * spec.readGroup): the directory becomes 0750 and the socket 0660, both of
 * that group, whose members may then ask (the daemon answers changes only
 * to its own user: SL_CONTROL_CHANGES).  Returns the listening fd
 * (non-blocking) or a negative errno with why filled in. */
int sl_control_listen(const char *path, int gid, char *why, size_t why_len);
/* Whether a request changes the daemon (reload, shadow): for the daemon's
 * own user only; the read group gets the reports. */
#define SL_CONTROL_CHANGES(cmd) ((cmd) == SL_CTL_RELOAD || (cmd) == SL_CTL_SHADOW || \
				 (cmd) == SL_CTL_RELOAD_STATUS)

/* Client side: send request, read the whole answer into a malloc'd
 * string (*answer).  0 or a negative errno. */
int sl_control_request(const char *path, const char *request, char **answer);

#endif
