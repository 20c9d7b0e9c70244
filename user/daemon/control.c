// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "daemon/control.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "config/diag.h"
#include "lib/json_out.h"

#define CONTROL_TIMEOUT_MS 10000

enum arg_rule { ARG_NONE, ARG_LEVEL, ARG_ON_OFF, ARG_FLOW, ARG_NUMBER };

static const struct {
	const char *word;
	enum sl_control_cmd cmd;
	enum arg_rule arg;
} requests[] = {
	{"levels", SL_CTL_LEVELS, ARG_LEVEL},
	{"queues", SL_CTL_QUEUES, ARG_LEVEL},
	{"flows", SL_CTL_FLOWS, ARG_LEVEL},
	{"controller", SL_CTL_CONTROLLER, ARG_NONE},
	{"reload", SL_CTL_RELOAD, ARG_NONE},
	{"shadow", SL_CTL_SHADOW, ARG_ON_OFF},
	{"hand", SL_CTL_HAND, ARG_FLOW},
	{"reload-status", SL_CTL_RELOAD_STATUS, ARG_NUMBER},
};

int sl_control_format(char *buf, size_t len, enum sl_control_cmd cmd, const char *arg,
		      const char **why)
{
	char copy[SL_CONTROL_REQUEST_MAX];
	struct sl_control_req back;
	const char *word = NULL;
	int n;

	for (size_t i = 0; i < sizeof(requests) / sizeof(requests[0]) && !word; i++)
		if (requests[i].cmd == cmd)
			word = requests[i].word;
	if (!word) {
		*why = "no such request";
		return -EINVAL;
	}
	n = arg ? snprintf(buf, len, "%s %s", word, arg) : snprintf(buf, len, "%s", word);
	if (n < 0 || (size_t)n >= len || (size_t)n >= sizeof(copy)) { /* its "\n" must fit too */
		*why = "the request is longer than the daemon reads";
		return -ENAMETOOLONG;
	}
	/* What the daemon will make of it, here: one parser for both sides. */
	memcpy(copy, buf, (size_t)n + 1);
	if (sl_control_parse(copy, &back, why))
		return -EINVAL;
	return 0;
}

/* The replies' keys (control.h). */
#define SL_CTL_KEY_STR(P, id, key) key,
#define SL_CTL_TABLE(ID, id) \
	const char *const sl_##id##_keys[SL_##ID##_NKEYS] = { SL_##ID##_KEYS(SL_CTL_KEY_STR, _) };
SL_CTL_OBJECTS(SL_CTL_TABLE)
#undef SL_CTL_TABLE
#undef SL_CTL_KEY_STR

int sl_control_parse(char *line, struct sl_control_req *out, const char **why)
{
	char *word = line, *arg, *extra;

	line[strcspn(line, "\r\n")] = '\0';
	arg = strchr(word, ' ');
	if (arg) {
		*arg++ = '\0';
		extra = strchr(arg, ' ');
		if (extra || !*arg) {
			*why = "a request is a word and at most one argument, separated by one space";
			return -EINVAL;
		}
	}
	for (size_t i = 0; i < sizeof(requests) / sizeof(requests[0]); i++) {
		if (strcmp(word, requests[i].word))
			continue;
		switch (requests[i].arg) {
		case ARG_NONE:
			if (arg) {
				*why = "this request takes no argument";
				return -EINVAL;
			}
			break;
		case ARG_LEVEL:
			break;
		case ARG_ON_OFF:
			if (!arg || (strcmp(arg, "on") && strcmp(arg, "off"))) {
				*why = "expected \"shadow on\" or \"shadow off\"";
				return -EINVAL;
			}
			break;
		case ARG_NUMBER:
			if (!arg || strspn(arg, "0123456789") != strlen(arg) || strlen(arg) > 19) {
				*why = "expected \"reload-status N\" (the number reload answered)";
				return -EINVAL;
			}
			break;
		case ARG_FLOW:
			/* A distinguisher may be empty: "hand web=". */
			if (!arg || !strchr(arg, '=') || arg[0] == '=') {
				*why = "expected \"hand SCHEMA=DISTINGUISHER\"";
				return -EINVAL;
			}
			break;
		}
		out->cmd = requests[i].cmd;
		out->word = requests[i].word;
		out->arg = arg;
		return 0;
	}
	*why = "unknown request; the daemon answers levels, queues, flows, controller, reload, "
	       "shadow on|off, hand SCHEMA=DIST, reload-status N";
	return -EINVAL;
}

static int fill_addr(struct sockaddr_un *sa, const char *path)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	strcpy(sa->sun_path, path);
	return 0;
}

/* The socket's directory: made 0700 when missing; otherwise it must be a
 * real directory of ours that nobody else can write (else another user
 * could replace the socket under the CLI's feet). */
static int check_dir(const char *path, int gid, char *why, size_t why_len)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct stat st;
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	if (!mkdir(dir, 0700))
		goto group;
	if (errno != EEXIST) {
		int err = -errno;

		snprintf(why, why_len, "cannot create directory %s: %s", dir, strerror(-err));
		return err;
	}
	if (lstat(dir, &st)) {
		int err = -errno;

		snprintf(why, why_len, "directory %s: %s", dir, strerror(-err));
		return err;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, why_len, "%s is not a directory (a symbolic link is not accepted)", dir);
		return -ENOTDIR;
	}
	if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(why, why_len,
			 "directory %s is owned by uid %u with mode %04o: it must belong to uid %u "
			 "and be writable by nobody else (chmod go-w, or choose another --control path)",
			 dir, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), (unsigned)geteuid());
		return -EPERM;
	}
group:
	/* The read group may enter (0750), never write. */
	if (gid >= 0 && (chown(dir, (uid_t)-1, (gid_t)gid) || chmod(dir, 0750))) {
		int err = -errno;

		snprintf(why, why_len, "directory %s: giving it to group %d: %s%s", dir, gid, strerror(-err),
			 err == -EPERM ? " (needs membership of the group or CAP_CHOWN: "
					 "SupplementaryGroups= in the systemd unit)" : "");
		return err;
	}
	return 0;
}

/* What is at path already: nothing, a dead daemon's socket (removed), or
 * something we must not replace. */
static int clear_path(const char *path, const struct sockaddr_un *sa, char *why, size_t why_len)
{
	struct stat st;
	int fd, live;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(why, why_len, "%s exists and is not a socket; not replacing it", path);
		return -EEXIST;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	live = !connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) || errno == EAGAIN;
	close(fd);
	if (live) {
		snprintf(why, why_len, "%s: another daemon is listening on it", path);
		return -EADDRINUSE;
	}
	unlink(path); /* a socket left by a daemon that died */
	return 0;
}

int sl_control_listen(const char *path, int gid, char *why, size_t why_len)
{
	struct sockaddr_un sa;
	int fd, err;

	snprintf(why, why_len, "%s", "");
	if ((err = fill_addr(&sa, path))) {
		snprintf(why, why_len, "path is longer than a Unix socket path can be");
		return err;
	}
	if ((err = check_dir(path, gid, why, why_len)) || (err = clear_path(path, &sa, why, why_len)))
		return err;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || chmod(path, gid >= 0 ? 0660 : 0600) ||
	    (gid >= 0 && chown(path, (uid_t)-1, (gid_t)gid)) || listen(fd, 16)) {
		err = -errno;
		snprintf(why, why_len, "%s", strerror(-err));
		close(fd);
		return err;
	}
	return fd;
}

int sl_control_request(const char *path, const char *request, char **answer)
{
	struct timeval send_timeout = {.tv_sec = CONTROL_TIMEOUT_MS / 1000};
	struct sockaddr_un sa;
	size_t len = 0, cap = 4096;
	char line[SL_CONTROL_REQUEST_MAX];
	int n_line;
	char *buf;
	int fd, err;

	*answer = NULL;
	if ((err = fill_addr(&sa, path)))
		return err;
	n_line = snprintf(line, sizeof(line), "%s\n", request);
	if (n_line < 0 || (size_t)n_line >= sizeof(line))
		return -E2BIG;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* A daemon whose backlog is full must not hang the CLI either. */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof(send_timeout));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    send(fd, line, (size_t)n_line, MSG_NOSIGNAL) != n_line) {
		err = errno ? -errno : -EIO;
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
			err = len ? 0 : -ECONNRESET; /* closed without an answer */
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

void sl_control_write_pending(FILE *f, unsigned long long generation, const char *message,
			      const char *config)
{
	struct json_out jo;

	jo_init(&jo, f, false);
	jo_obj_begin(&jo, NULL);
	jo_bool(&jo, SL_PENDING_KEY(OK), true);
	jo_bool(&jo, SL_PENDING_KEY(PENDING), true);
	jo_u64(&jo, SL_PENDING_KEY(GENERATION), generation);
	jo_str(&jo, SL_PENDING_KEY(MESSAGE), message);
	jo_str(&jo, SL_PENDING_KEY(CONFIG), config);
	jo_obj_end(&jo);
	jo_finish(&jo);
}

void sl_control_write_outcome(FILE *f, bool ok, const char *message, bool shadow, const char *config,
			      const struct sl_diags *diags)
{
	struct sl_diags none = SL_DIAGS_INIT;
	struct json_out jo;

	jo_init(&jo, f, false);
	jo_obj_begin(&jo, NULL);
	jo_bool(&jo, SL_OUTCOME_KEY(OK), ok);
	jo_str(&jo, SL_OUTCOME_KEY(MESSAGE), message);
	jo_bool(&jo, SL_OUTCOME_KEY(SHADOW), shadow);
	jo_str(&jo, SL_OUTCOME_KEY(CONFIG), config);
	fprintf(f, ",\"%s\":", SL_OUTCOME_KEY(DIAGNOSTICS));
	sl_diags_json(diags ? diags : &none, f);
	jo_obj_end(&jo);
	jo_finish(&jo);
}
