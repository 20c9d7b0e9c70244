// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The control socket's answers (daemon.h; requests and their words:
 * control.h).  Each is written into memory and sent by the request server
 * without ever waiting on the client; a dump too long for one answer is
 * rendered in parts as the client reads it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "daemon/admission.h"
#include "daemon/control.h"
#include "daemon/policy_rt.h"
#include "dataplane/settings.h"
#include "lib/clock.h"

/* `sluicectl shadow on|off`: flip the data path's shadow flag now (one
 * map update, dataplane/settings.h); it holds until the next toggle, or a
 * reload whose file changes `shadow`. */
static int set_shadow(struct daemon *d, bool on, const char **msg)
{
	int err = sl_apply_shadow(&d->dp.maps, on);

	if (err) {
		*msg = "cannot write the data path's settings (sl_config)";
		return err;
	}
	if (d->shadow != on) {
		d->shadow = on;
		daemon_say_enforcement(d);
	}
	*msg = on ? "shadow mode on: verdicts counted, not enforced" : "shadow mode off: verdicts enforced";
	return 0;
}

/* The reload that covers request seq: pending while a job runs for it (or
 * a newer one waits), then the outcome of the last one that ended. */
static void write_reload_status(FILE *f, const struct daemon *d, unsigned long long seq)
{
	if (d->outcome_seq >= seq && seq)
		sl_control_write_outcome(f, !d->outcome_err, d->outcome_msg, d->shadow, d->opts.config_path,
					 &d->outcome_diags);
	else
		sl_control_write_pending(f, seq, seq > d->reload_seq ? "no such reload" : "reloading",
					 d->opts.config_path);
}

/* A dump rendered in parts, as the client reads it. */
struct dump_more {
	struct sl_reqsrv_more more;
	struct sl_adm_dump *dump;
};

static bool dump_more_next(struct sl_reqsrv_more *m, FILE *out)
{
	struct dump_more *dm = (struct dump_more *)m;

	return sl_adm_dump_next(dm->dump, out);
}

static void dump_more_release(struct sl_reqsrv_more *m)
{
	struct dump_more *dm = (struct dump_more *)m;

	sl_adm_dump_free(dm->dump);
	free(dm);
}

static struct sl_reqsrv_more *dump_answer(struct daemon *d, FILE *out, const char *what,
					  const char *level)
{
	struct sl_adm_dump *dump = sl_adm_dump_begin(d->adm, out, what, level);
	struct dump_more *dm;

	if (!dump)
		return NULL;
	dm = malloc(sizeof(*dm));
	if (!dm) {
		sl_adm_dump_free(dump);
		return NULL; /* the client gets a truncated dump, not a stall */
	}
	dm->more = (struct sl_reqsrv_more){.next = dump_more_next, .release = dump_more_release};
	dm->dump = dump;
	return &dm->more;
}

/* One control request (control.h), answered into memory: the request
 * server sends it without ever waiting on the client. */
struct sl_reqsrv_more *daemon_answer_control(void *ctx, const struct sl_reqsrv_peer *peer,
					     char *request, size_t len, FILE *out)
{
	struct daemon *d = ctx;
	struct sl_control_req req;
	const char *msg;
	int err;

	(void)len;
	err = sl_control_parse(request, &req, &msg);
	/* The read group reaches the socket; changes stay the daemon's user's. */
	if (!err && SL_CONTROL_CHANGES(req.cmd) && (!peer->known || peer->uid != geteuid())) {
		err = -EPERM;
		msg = "changes (reload, shadow) are for the daemon's user; the read group may ask for "
		      "reports only";
	}
	if (!err) {
		switch (req.cmd) {
		case SL_CTL_LEVELS:
		case SL_CTL_QUEUES:
		case SL_CTL_FLOWS:
			return dump_answer(d, out, req.word, req.arg);
		case SL_CTL_CONTROLLER:
			sl_policies_dump(d->policies, out, sl_mono_ns());
			return NULL;
		case SL_CTL_RELOAD: {
			/* Started, not done: `reload-status N` tells the end. */
			unsigned long long seq = daemon_reload_start(d, "control-socket");

			write_reload_status(out, d, seq);
			return NULL;
		}
		case SL_CTL_RELOAD_STATUS:
			write_reload_status(out, d, strtoull(req.arg, NULL, 10));
			return NULL;
		case SL_CTL_SHADOW:
			err = set_shadow(d, !strcmp(req.arg, "on"), &msg);
			break;
		case SL_CTL_HAND: {
			char *eq = strchr(req.arg, '=');

			*eq = '\0';
			err = sl_adm_hand(d->adm, out, req.arg, eq + 1, &msg);
			if (!err)
				return NULL;
			break;
		}
		}
	}
	sl_control_write_outcome(out, !err, msg, d->shadow, d->opts.config_path, NULL);
	return NULL;
}

/* A request is one line. */
size_t daemon_control_request_complete(const char *buf, size_t len)
{
	const char *nl = memchr(buf, '\n', len);

	return nl ? (size_t)(nl - buf) + 1 : 0;
}

/* The CLI sends its line at once and reads its answer at once; a client
 * that does neither loses its slot, never the loop's time. */
const struct sl_reqsrv_limits daemon_control_limits = {
	.max_clients = 16,
	.request_max = SL_CONTROL_REQUEST_MAX,
	.request_ns = 1000000000ULL,
	.total_ns = 5000000000ULL,
};

