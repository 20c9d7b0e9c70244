/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The daemon's state, shared by the rooms of sluiced (internal to
 * user/daemon/; nothing outside it includes this):
 *
 *   sluiced.c          main: options, configuration, start, loop, stop
 *   daemon_opts.c      the command line, completed from the configuration
 *   startup.c          start-up and stop, in the order that keeps the host safe
 *   loop.c             the epoll loop: signals, timer, events, sockets
 *   tick.c             what each tick does (heartbeat, events, reports)
 *   sweep.c            the handshake sweep, a little of sl_conns a tick
 *   reload.c           configurations into the data path: at start, a
 *                      reload's result (its job runs off the loop,
 *                      reload_job.c), and again when a removed level drained
 *   control_answers.c  the control socket's answers (protocol: control.h)
 *   metrics_text.c     what GET /metrics writes, and the probes' verdicts
 *                      (the listener itself: metrics.c)
 */
#ifndef SLUICE_DAEMON_H
#define SLUICE_DAEMON_H

#include <stdbool.h>
#include <stdio.h>

#include "config/config.h"
#include "daemon/config_watch.h"
#include "daemon/halfopen_rt.h"
#include "daemon/request_server.h"
#include "daemon/tx_path_rt.h"
#include "daemon/service_manager.h"
#include "dataplane/expiry.h"
#include "dataplane/dataplane.h"
#include "dataplane/sockets.h"
#include "dataplane/ledger.h"
#include "dataplane/reconcile.h"
#include "engine/plan.h"
#include "lib/log.h"

struct ring_buffer;
struct sl_admission;
struct sl_policies;
struct sl_metrics;
struct sl_reload_job;

struct daemon_opts {
	const char *config_path;
	const char *ifnames[SL_DP_MAX_IFACES + 1]; /* --iface, repeated; else Server spec.interfaces; NULL-terminated */
	size_t n_ifnames;
	const char *pin_dir;
	const char *cgroup;
	const char *control_path;
	const char *metrics_address; /* --metrics-address: over Server spec.metricsAddress */
	bool xdp_generic;
	bool veth_peer_xdp;  /* --veth-peer-xdp */
	bool keep_maps;
	bool keep_attached;
	bool keep_privileges;
	bool force;
	bool verbose;
	bool watch_config;
	bool version;        /* --version: print it and stop */
	bool check;          /* --check: this kernel's features, and whether sluice can protect */
	bool requirements;   /* --requirements: the features table as Markdown (README.md's) */
	enum sl_log_level log_level;
};

struct level_report {
	struct sluice_level_stats last;
	unsigned long long last_seats;
};

struct daemon {
	struct daemon_opts opts;
	struct sl_config *cfg;
	/* The tables in use, compiled: a plan whose classification inputs
	 * are theirs (a reload of levels or shares) copies them instead of
	 * compiling.  A reload job reads them, so they change only while no
	 * job runs. */
	struct sl_compiled classes;
	struct sl_dataplane dp;
	struct ring_buffer *events;
	struct sl_admission *adm;
	struct sl_policies *policies;
	struct sl_metrics *metrics; /* Server spec.metricsAddress, or NULL */
	bool shadow;                /* shadow mode as running (file, or sluicectl shadow) */
	struct sl_reqsrv *control;  /* the control socket's clients */
	int control_fd;             /* listening, until the request server takes it */
	bool control_listening;     /* the socket file is ours to remove */
	bool dp_started;            /* the data path was loaded: daemon_stop takes it down */
	int sig_fd, timer_fd, epoll_fd;
	unsigned long long ticks;
	unsigned long long last_sweep_ns, last_report_ns, last_reconcile_ns;
	struct sl_expiry expiry; /* the handshake sweep's pass, over several ticks */
	bool sweep_again;        /* a pass asked for while one ran: at once after it */
	unsigned long long reconciled; /* connections released by reconcile() */
	struct level_report report[SLUICE_MAX_LEVELS];
	struct sl_halfopen_rt halfopen; /* half-open time-out, where levels seat */
	struct sl_tx_path_rt tx_path;   /* how each interface's refusals leave */
	struct sl_sock_dump sock_dump;  /* the periodic reconcile's listing, read a tick at a time */
	struct sl_reconcile_pass reconcile_pass; /* then sl_conns against it, a tick at a time */
	bool reconcile_walking;
	uint32_t slot_shares[SLUICE_MAX_LEVELS]; /* shares of the level last applied in each slot */
	uint64_t quiescing;             /* slots of removed levels whose shares the limits count */
	unsigned long long last_halfopen_ns;
	struct sl_conn_census census;   /* what the sweep counted per FlowSchema */
	/* Reloads, as Prometheus reports its own (config_last_reload_*). */
	bool last_reload_ok;
	double last_reload_ok_at;       /* wall-clock seconds of the last good load */
	unsigned long long reloads[2];  /* failed, succeeded */
	struct sl_svcmgr svcmgr;        /* systemd's notifications and watchdog */
	struct sl_config_watch watch;   /* --watch-config (fd -1 without) */
	/* Reloads (reload_start, reload_finish): the job off the loop, the
	 * numbered requests, the outcome of the last one that ended. */
	struct sl_reload_job *job;
	bool reload_again;
	char reload_reason[32];
	unsigned long long reload_seq, job_seq, outcome_seq;
	int outcome_err;
	char outcome_msg[128];
	struct sl_diags outcome_diags;
	int read_gid;                   /* Server spec.readGroup at start, -1: none */
	char status[768];               /* what STATUS= said last when ready */
};

/* daemon_opts.c: the command line (0: run; DAEMON_ANSWERED: --help,
 * --version, --requirements or --check said what was asked, exit 0;
 * DAEMON_ANSWERED_NO: --check found that sluice cannot protect this host,
 * exit 1; a negative errno: a line on stderr, exit 2), then what the
 * configuration completes: interfaces, pin directory, control socket (0,
 * or a negative errno, logged). */
enum { DAEMON_ANSWERED = 1, DAEMON_ANSWERED_NO = 3 };
int daemon_parse_args(int argc, char **argv, struct daemon_opts *o);
int daemon_complete_opts(struct daemon_opts *o, const struct sl_config *cfg);

/* startup.c: start (0, or a negative errno, logged) and stop (err: how
 * the run ended; only a clean one keeps the programs attached). */
int daemon_start(struct daemon *d);
void daemon_stop(struct daemon *d, int err);

/* loop.c: signals blocked from the first change to the host on; the loop's
 * descriptors; the loop itself (0 on a stop signal). */
int daemon_block_signals(void);
int daemon_setup_loop(struct daemon *d);
int daemon_run_loop(struct daemon *d);

/* tick.c */
void daemon_tick(struct daemon *d);
/* sweep.c: go on with the handshake sweep's pass, or start one when it is
 * due (force: now). */
void daemon_sweep(struct daemon *d, uint64_t now, bool force);

/* reload.c */
/* Load a config; every diagnostic is logged and left in diags. */
int daemon_load_config(const char *path, struct sl_config **out, struct sl_diags *diags);
/* Build the whole plan and write it, here and now (at start, and when a
 * quiescing level drained); a config that cannot be applied changes nothing. */
int daemon_apply_config(struct daemon *d, const struct sl_config *cfg, struct sl_diags *diags);
/* At start: each policy keeps the gate of the maps adopted. */
int daemon_keep_gate_policies(struct daemon *d);
/* A removed level that drained leaves the share sum (once a second). */
void daemon_check_quiescing(struct daemon *d);
/* A reload request (SIGHUP, the control socket, the file's watch): its
 * number; the job runs off the loop, daemon_reload_finish() commits it
 * when its eventfd fires. */
unsigned long long daemon_reload_start(struct daemon *d, const char *reason);
void daemon_reload_finish(struct daemon *d);

/* reconcile_rt.c: return the seats of tracked connections the kernel no
 * longer has.  All at once (at start, before attaching), logged with
 * when; or a step of the periodic one (the kernel's listing read a little
 * a tick, then one walk of sl_conns against it). */
void daemon_reconcile_all(struct daemon *d, const char *when);
/* event=enforcement: whether the verdicts hold (shadow mode), said at
 * start and when shadow mode changes (reload.c). */
void daemon_say_enforcement(const struct daemon *d);
void daemon_reconcile_step(struct daemon *d, uint64_t now);

/* The metrics listener's address: --metrics-address, else the
 * configuration's metricsAddress, else NULL (none).  Inline: the loop
 * (sluiced.c) and a reload (reload.c) both ask, and neither owns it. */
static inline const char *daemon_metrics_address(const struct daemon *d, const struct sl_config *cfg)
{
	return d->opts.metrics_address ? d->opts.metrics_address : cfg->server.metrics_address;
}

/* control_answers.c: the request server's handlers (request_server.h). */
extern const struct sl_reqsrv_limits daemon_control_limits;
size_t daemon_control_request_complete(const char *buf, size_t len);
struct sl_reqsrv_more *daemon_answer_control(void *ctx, const struct sl_reqsrv_peer *peer,
					     char *request, size_t len, FILE *out);

/* metrics_text.c: the metrics listener's handlers (metrics.h). */
void daemon_render_metrics(void *ctx, FILE *f);
int daemon_health(void *ctx, bool ready, char *why, size_t why_len);

#endif
