/*
 * sluiced: the sluice daemon.  Loads the data path, writes the
 * configuration into its maps, keeps the heartbeat, returns the seats of
 * handshakes that never completed, and reports what happens.
 *
 * One epoll loop over: signals (SIGTERM/SIGINT stop, SIGHUP reload), a
 * timerfd tick, and the ring buffer of data path events.
 */
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <stddef.h>
#include <getopt.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "daemon/admission.h"
#include "dataplane/apply.h"
#include "config/config.h"
#include "daemon/control.h"
#include "daemon/events.h"
#include "lib/json_out.h"
#include "lib/prom.h"
#include "dataplane/expiry.h"
#include "dataplane/loader.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/version.h"
#include "daemon/metrics.h"
#include "daemon/privileges.h"
#include "dataplane/policy_gate.h"
#include "engine/plan.h"
#include "daemon/halfopen_rt.h"
#include "daemon/policy_rt.h"
#include "daemon/request_server.h"
#include "daemon/config_watch.h"
#include "daemon/reload_job.h"
#include "daemon/service_manager.h"
#include "dataplane/tickets.h"

#define SWEEP_INTERVAL_NS 1000000000ULL
/* sl_conns against the kernel's sockets: at start (a restart with
 * --keep-maps left connections that closed unseen) and then this often, for
 * anything sock_ops missed.  An entry established less than the grace ago
 * may have a socket younger than the snapshot. */
#define RECONCILE_INTERVAL_NS (30ull * 1000000000ULL)
#define RECONCILE_GRACE_NS    1000000000ULL
/* The periodic listing is read at most this long per tick: a namespace
 * of very many sockets takes several ticks, never a late heartbeat. */
#define RECONCILE_BUDGET_NS   (2ull * 1000000ULL)
#define REPORT_INTERVAL_NS 1000000000ULL

struct daemon_opts {
	const char *config_path;
	const char *ifnames[SL_DP_MAX_IFACES]; /* --iface, repeated; else Server spec.interfaces */
	size_t n_ifnames;
	const char *pin_dir;
	const char *cgroup;
	const char *control_path;
	bool xdp_generic;
	bool keep_maps;
	bool keep_attached;
	bool keep_privileges;
	bool force;
	bool verbose;
	bool watch_config;
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
	int sig_fd, timer_fd, epoll_fd;
	unsigned long long ticks;
	unsigned long long last_sweep_ns, last_report_ns, last_reconcile_ns;
	bool sweep_backlog; /* the last sweep expired a full batch: again next tick */
	unsigned long long reconciled; /* connections released by reconcile() */
	struct level_report report[SLUICE_MAX_LEVELS];
	struct sl_halfopen_rt halfopen; /* half-open time-out, where levels seat */
	struct sl_sock_dump sock_dump;  /* the periodic reconcile's listing, read a tick at a time */
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

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: sluiced --config FILE --iface IFNAME [OPTIONS]\n\n"
		"Protect the TCP services of this host from connection overload: load the\n"
		"sluice data path (XDP on IFNAME, sock_ops on the cgroup v2 root), apply the\n"
		"configuration, and keep it running.  SIGHUP reloads FILE (all or nothing);\n"
		"SIGTERM/SIGINT detach and remove the pins.\n\n"
		"  -c, --config FILE        YAML configuration (required)\n"
		"  -i, --iface IFNAME       an interface to attach XDP to; repeat it for more\n"
		"                           (default: every one of Server spec.interfaces)\n"
		"  -m, --xdp-mode MODE      native (default) or generic\n"
		"  -g, --cgroup PATH        cgroup v2 directory for sock_ops (default: the\n"
		"                           cgroup2 mount found in /proc/mounts)\n"
		"  -p, --pin-dir DIR        where to pin maps, programs and links (default:\n"
		"                           Server spec.pinDir, else %s)\n"
		"  -k, --keep-maps          leave the maps pinned on exit, so a restarted\n"
		"                           daemon keeps seat counts and counters\n"
		"  -K, --keep-attached      leave XDP and sock_ops attached on exit too (and\n"
		"                           every pin): for a planned restart; while no daemon\n"
		"                           runs the heartbeat rules decide (no deferral,\n"
		"                           then the failsafe), and closes still return seats\n"
		"  -s, --control PATH       control socket for `sluicectl reload` (default:\n"
		"                           Server spec.controlSocket, else %s)\n"
		"  -f, --force              replace an XDP program that sluice did not attach\n"
		"  -P, --keep-privileges    keep every capability (by default, once started,\n"
		"                           only CAP_BPF and CAP_NET_ADMIN remain, NoNewPrivs)\n"
		"  -W, --watch-config       reload when FILE changes (a Kubernetes ConfigMap\n"
		"                           volume's update, an editor's save); unchanged\n"
		"                           bytes are not reloaded\n"
		"  -l, --log-level LEVEL    error, warning, info (default) or debug; under\n"
		"                           systemd each line carries its priority (<3>...)\n"
		"  -v, --verbose            debug logging, including libbpf's messages\n"
		"  -h, --help               this text\n"
		"  -V, --version            the version, the commit built and the map ABI\n",
		SL_DEFAULT_PIN_DIR, SL_DEFAULT_CONTROL_SOCKET);
}

static int parse_args(int argc, char **argv, struct daemon_opts *o)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'},
		{"iface", required_argument, NULL, 'i'},
		{"xdp-mode", required_argument, NULL, 'm'},
		{"cgroup", required_argument, NULL, 'g'},
		{"pin-dir", required_argument, NULL, 'p'},
		{"keep-maps", no_argument, NULL, 'k'},
		{"keep-attached", no_argument, NULL, 'K'},
		{"control", required_argument, NULL, 's'},
		{"force", no_argument, NULL, 'f'},
		{"keep-privileges", no_argument, NULL, 'P'},
		{"verbose", no_argument, NULL, 'v'},
		{"log-level", required_argument, NULL, 'l'},
		{"watch-config", no_argument, NULL, 'W'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{},
	};
	int c;

	while ((c = getopt_long(argc, argv, "c:i:m:g:p:s:l:kKfPvhVW", opts, NULL)) != -1) {
		switch (c) {
		case 'c': o->config_path = optarg; break;
		case 'i':
			if (o->n_ifnames == SL_DP_MAX_IFACES) {
				fprintf(stderr, "sluiced: --iface: at most %d interfaces\n", SL_DP_MAX_IFACES);
				return -EINVAL;
			}
			o->ifnames[o->n_ifnames++] = optarg;
			break;
		case 'm':
			if (!strcmp(optarg, "generic") || !strcmp(optarg, "skb")) {
				o->xdp_generic = true;
			} else if (!strcmp(optarg, "native") || !strcmp(optarg, "drv")) {
				o->xdp_generic = false;
			} else {
				fprintf(stderr, "sluiced: --xdp-mode: '%s' is not native or generic\n", optarg);
				return -EINVAL;
			}
			break;
		case 'g': o->cgroup = optarg; break;
		case 'p': o->pin_dir = optarg; break;
		case 's': o->control_path = optarg; break;
		case 'k': o->keep_maps = true; break;
		case 'K': o->keep_attached = o->keep_maps = true; break;
		case 'P': o->keep_privileges = true; break;
		case 'f': o->force = true; break;
		case 'v': o->verbose = true; o->log_level = SL_LOG_DEBUG; break;
		case 'W': o->watch_config = true; break;
		case 'l':
			if (sl_log_parse_level(optarg, &o->log_level)) {
				fprintf(stderr, "sluiced: --log-level: '%s' is not error, warning, info or debug\n",
					optarg);
				return -EINVAL;
			}
			break;
		case 'h': usage(stdout); exit(0);
		case 'V': printf("sluiced %s (%s, map ABI %d)\n", sl_version(), sl_version_git(),
				 SLUICE_ABI_VERSION); exit(0);
		default: usage(stderr); return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "sluiced: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if (!o->config_path) {
		fprintf(stderr, "sluiced: --config FILE is required (see --help)\n");
		return -EINVAL;
	}
	return 0;
}

/* Load a config; every diagnostic is logged and left in diags. */
static int load_config(const char *path, struct sl_config **out, struct sl_diags *diags)
{
	size_t first = diags->count;
	int err = sl_config_load_file(path, out, diags);

	/* Diagnostics are already "file:line:col: severity: ..." lines. */
	for (size_t i = first; i < diags->count; i++) {
		char line[1024];

		sl_diag_format(&diags->items[i], line, sizeof(line));
		sl_log(diags->items[i].severity == SL_SEV_ERROR ? SL_LOG_ERROR : SL_LOG_WARN,
		       "%s", line);
	}
	if (err)
		pr_err("%s: configuration not applied (%zu error%s)", path,
		       sl_diags_error_count(diags), sl_diags_error_count(diags) == 1 ? "" : "s");
	return err;
}

/* The shares of levels the new configuration removes (or an earlier one
 * removed) that still hold connections or have some waiting: they stay in
 * the share sum while they drain, as a quiescing APF level's do. */
/* Slots that hold or queue connections now. */
static uint64_t busy_slots(const struct daemon *d)
{
	uint64_t busy = 0;

	for (unsigned s = 0; d->dp.seats && s < SLUICE_MAX_LEVELS; s++)
		if (d->dp.seats[s].seats_in_use || d->dp.seats[s].waiting)
			busy |= 1ull << s;
	return busy;
}

static uint32_t quiescing_shares(const struct daemon *d, const struct sl_config *cfg,
				 const char names[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN],
				 uint64_t *slots)
{
	return sl_plan_quiescing_shares(cfg, names, busy_slots(d), d->slot_shares, slots);
}

static int apply_config(struct daemon *d, const struct sl_config *cfg, struct sl_diags *diags);

/* A quiescing level that has drained leaves the share sum: the
 * configuration is applied again without it (APF digests its
 * configuration again when a quiescing level goes idle). */
static void check_quiescing(struct daemon *d)
{
	struct sl_diags diags = SL_DIAGS_INIT;
	bool drained = false;

	for (unsigned s = 0; s < SLUICE_MAX_LEVELS && !drained; s++)
		drained = (d->quiescing & (1ull << s)) && !d->dp.seats[s].seats_in_use &&
			  !d->dp.seats[s].waiting;
	if (!drained || d->job)
		return; /* a reload on its way applies it anyway */
	if (apply_config(d, d->cfg, &diags)) {
		/* Said once: the limits stay as they are until the next reload. */
		pr_warn("a removed level drained; applying the configuration again failed, "
			"limits keep counting its shares until the next reload");
		d->quiescing = 0;
	} else
		pr_info("a removed level drained: limits reallocated without its shares");
	sl_diags_free(&diags);
}

/* Print the diagnostics from index first on: as errors, or (failed false)
 * the warnings of a configuration that is applied. */
static void print_diags(const struct sl_diags *diags, size_t first, bool failed)
{
	for (size_t i = first; i < diags->count; i++) {
		char line[1024];

		sl_diag_format(&diags->items[i], line, sizeof(line));
		sl_log(failed || diags->items[i].severity == SL_SEV_ERROR ? SL_LOG_ERROR : SL_LOG_WARN,
		       "%s", line);
	}
}

/* Keep the applied plan's tables for the next plan to reuse (not while a
 * job may be reading the ones kept). */
static void remember_classes(struct daemon *d, struct sl_plan *plan)
{
	if (d->job)
		return;
	sl_compiled_free(&d->classes);
	d->classes = plan->classes;
	memset(&plan->classes, 0, sizeof(plan->classes));
}

/* A built plan into the data path (committed, if the job staged it in
 * staged_gen; else written whole), then admission and policies. */
static int apply_plan(struct daemon *d, const struct sl_config *cfg, struct sl_plan *plan,
		      int staged_gen, uint64_t quiescing)
{
	int err;

	/* Shadow mode as running: the file's value, unless `sluicectl shadow`
	 * changed it since (reload_finish() decides). */
	if (d->shadow)
		plan->config.flags |= SLUICE_CFG_SHADOW;
	else
		plan->config.flags &= ~(__u32)SLUICE_CFG_SHADOW;
	/* A surviving level keeps its current (borrowed) limit until the
	 * allocation that sl_adm_configure runs right after the flip. */
	for (unsigned slot = 0; d->adm && slot < SLUICE_MAX_LEVELS; slot++) {
		uint32_t cur = sl_adm_level_limit(d->adm, slot);

		if (cur && plan->levels[slot].type == SLUICE_LEVEL_LIMITED)
			plan->levels[slot].seat_limit = cur;
	}
	/* Where levels seat survives a reload (a flood does not stop for
	 * one); seatAt: ack applies at once. */
	plan->config.ack_watch_levels = 0;
	for (unsigned slot = 0; slot < SLUICE_MAX_LEVELS; slot++) {
		struct sluice_level *l = &plan->levels[slot];

		if (l->type != SLUICE_LEVEL_LIMITED)
			continue;
		l->flags = sl_halfopen_rt_flags(&d->halfopen, slot);
		if (cfg->server.half_open.seat_at == SL_SEAT_AT_ACK)
			l->flags |= SLUICE_LVL_SEAT_AT_ACK | SLUICE_LVL_ACK_WATCH;
		if (l->flags & SLUICE_LVL_ACK_WATCH)
			plan->config.ack_watch_levels++;
	}
	/* What can fail comes before the data path switches generation. */
	err = d->policies ? sl_policies_prepare(d->policies, cfg, sl_mono_ns()) : 0;
	if (!err)
		err = staged_gen >= 0 ? sl_apply_commit(&d->dp.maps, plan, (uint8_t)staged_gen)
				      : sl_apply_plan(&d->dp.maps, plan);
	if (!err && d->adm)
		err = sl_adm_configure(d->adm, cfg, plan, sl_mono_ns());
	if (d->policies) {
		if (!err)
			sl_policies_commit(d->policies, sl_mono_ns());
		else
			sl_policies_abort(d->policies);
	}
	if (!err) {
		for (size_t i = 0; i < plan->n_levels; i++)
			d->slot_shares[plan->slot_of[i]] = (uint32_t)cfg->levels[i].shares;
		d->quiescing = quiescing;
		pr_info("classification%s: %zu source and %zu local prefixes, %u client-port and "
			"%u local-port classes, %zu table entries",
			plan->classes_reused ? " unchanged, its tables kept" : "", plan->classes.n_src,
			plan->classes.n_dst, plan->classes.n_sport_cls, plan->classes.n_dport_cls,
			plan->classes.n_entries);
		for (size_t i = 0; i < plan->n_levels; i++) {
			const struct sluice_level *l = &plan->levels[plan->slot_of[i]];

			pr_info("level %s (slot %u): %s, limit %u seats, over limit: %s", l->name,
				plan->slot_of[i], l->type == SLUICE_LEVEL_EXEMPT ? "exempt" : "limited",
				l->seat_limit, l->limit_response == SLUICE_RESP_QUEUE ? "defer (queue)" : "reject (RST)");
		}
		remember_classes(d, plan);
	}
	return err;
}

/* The plan failed: the diagnostics say why, or else the errno. */
static void say_not_applied(const struct sl_config *cfg, const struct sl_diags *diags, size_t first,
			    int err)
{
	print_diags(diags, first, true);
	/* An errno's words ("Argument list too long") would not say why. */
	if (diags->count > first)
		pr_err("%s: configuration cannot be applied (see above)", cfg->source_file);
	else
		pr_err("%s: configuration cannot be applied: %s", cfg->source_file,
		       err == -ENOMEM ? "out of memory" : strerror(-err));
}

/* At start: a policy keeps the gate the last daemon ran it on (adopted
 * maps), whose count holds its connections still in flight. */
static int keep_gate_policies(struct daemon *d)
{
	char in_use[SLUICE_MAX_POLICIES][SL_LEVEL_NAME_SIZE];
	struct sl_gate_view gv;
	int err;

	for (unsigned i = 0; i < SLUICE_MAX_POLICIES; i++)
		snprintf(in_use[i], sizeof(in_use[i]), "%s", sl_gate_read(&d->dp, i, &gv) ? "" : gv.policy);
	err = sl_config_keep_policy_indices(d->cfg, in_use, SLUICE_MAX_POLICIES);
	if (err)
		pr_err("policies: %s", strerror(-err));
	return err;
}

/* Build the whole plan, then write it, here and now (at start, and when a
 * quiescing level drained): a config that cannot be applied leaves the
 * maps as they were.  Reloads build theirs off the loop (reload_start). */
static int apply_config(struct daemon *d, const struct sl_config *cfg, struct sl_diags *diags)
{
	char names[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN];
	size_t first = diags->count;
	uint64_t quiescing;
	struct sl_plan plan;
	int err;

	err = sl_maps_level_names(&d->dp.maps, names);
	if (err) {
		pr_err("read level names: %s", strerror(-err));
		return err;
	}
	err = sl_plan_build_quiescing(cfg, names, d->opts.ifnames[0],
				      quiescing_shares(d, cfg, names, &quiescing), &d->classes, &plan,
				      diags);
	if (!err && !plan.classes_reused) /* kept tables passed it already */
		err = sl_plan_check_interfaces(cfg, &plan, d->opts.ifnames, d->opts.n_ifnames, diags);
	if (err) {
		say_not_applied(cfg, diags, first, err);
		sl_plan_free(&plan);
		return err;
	}
	print_diags(diags, first, false);
	err = apply_plan(d, cfg, &plan, -1, quiescing);
	sl_plan_free(&plan);
	return err;
}

/*
 * Reloads, off the loop.  reload_start() numbers the request; start_job()
 * snapshots what the plan needs and starts a job (daemon/reload_job.h):
 * load, plan, stage into the idle generation.  The loop goes on ticking; reload_finish() runs when the
 * job's eventfd fires and commits in one short turn.  A reload asked while
 * a job runs replaces it: the running one's result is dropped when it
 * ends, and a new job reads the file as it is then.  Every request gets a
 * number; `reload-status N` answers once a job covering N has ended.
 */
/* A job for every request up to d->reload_seq, with what the plan needs
 * snapshot now.  A job that cannot start ends those requests at once. */
static void start_job(struct daemon *d)
{
	struct sl_reload_input in = {
		.config_path = d->opts.config_path, .maps = &d->dp.maps,
		.ifnames = d->opts.ifnames, .n_ifnames = d->opts.n_ifnames,
		.busy_slots = busy_slots(d), .reuse = &d->classes,
	};
	struct epoll_event ev = {.events = EPOLLIN};
	const char *reason = d->reload_reason;
	char file[512];
	int err;

	memcpy(in.slot_shares, d->slot_shares, sizeof(in.slot_shares));
	for (size_t i = 0; d->cfg && i < d->cfg->n_policies && i < SLUICE_MAX_POLICIES; i++)
		snprintf(in.policy_names[i], sizeof(in.policy_names[i]), "%s", d->cfg->policies[i].name);
	in.n_policy_names = d->cfg ? d->cfg->n_policies : 0;
	err = sl_maps_level_names(&d->dp.maps, in.names);
	if (!err)
		err = sl_reload_job_start(&d->job, &in);
	if (!err) {
		ev.data.fd = sl_reload_job_fd(d->job);
		if (epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, ev.data.fd, &ev))
			pr_warn("reload: epoll: %s (its end is seen at the next tick)", strerror(errno));
	}
	if (err) {
		pr_err("event=reload result=failed file=%s reason=%s error=%s",
		       sl_logfmt_value(file, sizeof(file), d->opts.config_path), reason, strerror(-err));
		d->job = NULL;
		d->reloads[0]++;
		d->last_reload_ok = false;
		d->outcome_seq = d->reload_seq;
		d->outcome_err = err;
		snprintf(d->outcome_msg, sizeof(d->outcome_msg), "reload could not start: %s",
			 strerror(-err));
		return;
	}
	d->job_seq = d->reload_seq;
	pr_info("event=reload_started file=%s reason=%s",
		sl_logfmt_value(file, sizeof(file), d->opts.config_path), reason);
	sl_svcmgr_reloading(&d->svcmgr);
}

/* A reload request: its number, and a job (or, while one runs, the
 * promise of a new one when it ends: the running one is replaced). */
static unsigned long long reload_start(struct daemon *d, const char *reason)
{
	char file[512];

	d->reload_seq++;
	snprintf(d->reload_reason, sizeof(d->reload_reason), "%s", reason);
	if (d->job) {
		d->reload_again = true;
		pr_info("event=reload_queued file=%s reason=%s: the running reload is replaced",
			sl_logfmt_value(file, sizeof(file), d->opts.config_path), reason);
	} else {
		start_job(d);
	}
	return d->reload_seq;
}

static void reload_finish(struct daemon *d)
{
	struct sl_reload_result r;
	bool was_shadow = d->shadow;
	char file[512];
	int err;

	epoll_ctl(d->epoll_fd, EPOLL_CTL_DEL, sl_reload_job_fd(d->job), NULL);
	sl_reload_job_finish(d->job, &r);
	d->job = NULL;
	if (d->reload_again) {
		/* A newer request came: its job covers every request so far. */
		d->reload_again = false;
		pr_info("event=reload result=replaced file=%s seconds=%.3f",
			sl_logfmt_value(file, sizeof(file), d->opts.config_path), r.seconds);
		sl_reload_result_free(&r);
		start_job(d);
		return;
	}
	err = r.err;
	if (!err) {
		print_diags(&r.diags, 0, false);
		/* A changed `shadow` in the file wins over `sluicectl shadow`. */
		if (r.cfg->server.shadow != d->cfg->server.shadow)
			d->shadow = r.cfg->server.shadow;
		err = apply_plan(d, r.cfg, &r.plan, r.gen, r.quiescing_slots);
		if (err)
			d->shadow = was_shadow;
	} else if (r.cfg) {
		say_not_applied(r.cfg, &r.diags, 0, err);
	} else {
		print_diags(&r.diags, 0, true);
		pr_err("%s: configuration not applied (%zu error%s)", d->opts.config_path,
		       sl_diags_error_count(&r.diags), sl_diags_error_count(&r.diags) == 1 ? "" : "s");
	}
	d->last_reload_ok = !err;
	d->reloads[!err]++;
	d->outcome_seq = d->job_seq;
	d->outcome_err = err;
	sl_diags_free(&d->outcome_diags);
	d->outcome_diags = r.diags;
	sl_diags_init(&r.diags);
	if (err) {
		char status[832];

		snprintf(d->outcome_msg, sizeof(d->outcome_msg), "%s",
			 "reload failed; the previous configuration keeps running");
		pr_err("event=reload result=failed file=%s reason=%s error=%s seconds=%.3f",
		       sl_logfmt_value(file, sizeof(file), d->opts.config_path), d->reload_reason,
		       err == -ENOMEM ? "no-memory" : "invalid-configuration", r.seconds);
		snprintf(status, sizeof(status), "%s; last reload failed", d->status);
		sl_svcmgr_ready(&d->svcmgr, status);
		sl_reload_result_free(&r);
		return;
	}
	d->last_reload_ok_at = sl_wall_s();
	if (strcmp(r.cfg->server.metrics_address ? r.cfg->server.metrics_address : "",
		   d->cfg->server.metrics_address ? d->cfg->server.metrics_address : ""))
		pr_warn("metricsAddress changed: it takes effect when sluiced restarts");
	if (strcmp(r.cfg->server.read_group ? r.cfg->server.read_group : "",
		   d->cfg->server.read_group ? d->cfg->server.read_group : ""))
		pr_warn("readGroup changed: it takes effect when sluiced restarts");
	sl_config_free(d->cfg);
	d->cfg = r.cfg; /* admission points at it now */
	r.cfg = NULL;
	snprintf(d->outcome_msg, sizeof(d->outcome_msg), "%s", "reloaded");
	pr_info("event=reload result=ok file=%s reason=%s levels=%zu flow_schemas=%zu policies=%zu "
		"classification=%s seconds=%.3f", sl_logfmt_value(file, sizeof(file), d->opts.config_path),
		d->reload_reason, d->cfg->n_levels, d->cfg->n_schemas, d->cfg->n_policies,
		r.plan.classes_reused ? "kept" : "compiled", r.seconds);
	sl_config_watch_loaded(&d->watch);
	sl_svcmgr_ready(&d->svcmgr, d->status);
	sl_reload_result_free(&r);
}

/* `sluicectl shadow on|off`: flip the data path's shadow flag now (one
 * map update); it holds until the next toggle, or a reload whose file
 * changes `shadow`. */
static int set_shadow(struct daemon *d, bool on, const char **msg)
{
	struct sluice_settings c;
	__u32 zero = 0;

	if (sl_maps_config(&d->dp.maps, &c)) {
		*msg = "cannot read sl_config";
		return -EIO;
	}
	if (on)
		c.flags |= SLUICE_CFG_SHADOW;
	else
		c.flags &= ~(__u32)SLUICE_CFG_SHADOW;
	if (bpf_map_update_elem(d->dp.maps.fd[SL_MAP_CONFIG], &zero, &c, BPF_ANY)) {
		*msg = "cannot write sl_config";
		return -errno;
	}
	if (d->shadow != on)
		pr_info("shadow mode %s: verdicts are %s", on ? "on" : "off",
			on ? "counted, not enforced" : "enforced again");
	d->shadow = on;
	*msg = on ? "shadow mode on: verdicts counted, not enforced" : "shadow mode off: verdicts enforced";
	return 0;
}

/* The reply of reload and shadow requests (and of a bad request). */
static void write_outcome(FILE *f, const struct daemon *d, int err, const char *msg,
			  const struct sl_diags *diags);

/* The reload that covers request seq: pending while a job runs for it (or
 * a newer one waits), then the outcome of the last one that ended. */
static void write_reload_status(FILE *f, const struct daemon *d, unsigned long long seq)
{
	struct json_out jo;

	if (d->outcome_seq >= seq && seq) {
		write_outcome(f, d, d->outcome_err, d->outcome_msg, &d->outcome_diags);
		return;
	}
	jo_init(&jo, f, false);
	jo_obj_begin(&jo, NULL);
	jo_bool(&jo, "ok", true);
	jo_bool(&jo, "pending", true);
	jo_u64(&jo, "generation", seq);
	jo_str(&jo, "message", seq > d->reload_seq ? "no such reload" : "reloading");
	jo_str(&jo, "config", d->opts.config_path);
	jo_obj_end(&jo);
	jo_finish(&jo);
}

static void write_outcome(FILE *f, const struct daemon *d, int err, const char *msg,
			  const struct sl_diags *diags)
{
	struct json_out jo;

	jo_init(&jo, f, false);
	jo_obj_begin(&jo, NULL);
	jo_bool(&jo, "ok", !err);
	jo_str(&jo, "message", msg);
	jo_bool(&jo, "shadow", d->shadow);
	jo_str(&jo, "config", d->opts.config_path);
	fputs(",\"diagnostics\":", f);
	sl_diags_json(diags, f);
	jo_obj_end(&jo);
	jo_finish(&jo);
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
static struct sl_reqsrv_more *answer_control(void *ctx, const struct sl_reqsrv_peer *peer,
					     char *request, size_t len, FILE *out)
{
	struct sl_diags diags = SL_DIAGS_INIT;
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
			unsigned long long seq = reload_start(d, "control-socket");

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
	write_outcome(out, d, err, msg, &diags);
	sl_diags_free(&diags);
	return NULL;
}

/* A request is one line. */
static size_t control_request_complete(const char *buf, size_t len)
{
	const char *nl = memchr(buf, '\n', len);

	return nl ? (size_t)(nl - buf) + 1 : 0;
}

/* The CLI sends its line at once and reads its answer at once; a client
 * that does neither loses its slot, never the loop's time. */
static const struct sl_reqsrv_limits control_limits = {
	.max_clients = 16,
	.request_max = SL_CONTROL_REQUEST_MAX,
	.request_ns = 1000000000ULL,
	.total_ns = 5000000000ULL,
};

static int on_event(void *ctx, void *data, size_t size)
{
	struct daemon *d = ctx;

	sl_events_route(d->adm, d->policies, data, size, sl_mono_ns());
	return 0;
}

/* One line per level whose numbers moved since the last report. */
static void report(struct daemon *d)
{
	for (unsigned slot = 0; slot < SLUICE_MAX_LEVELS; slot++) {
		struct level_report *r = &d->report[slot];
		struct sluice_level_stats st;
		struct sluice_level lvl;
		unsigned long long seats;

		if (sl_maps_level(&d->dp.maps, slot, &lvl) || lvl.type == SLUICE_LEVEL_UNUSED)
			continue;
		if (sl_maps_level_stats(&d->dp.maps, slot, &st))
			continue;
		seats = d->dp.seats[slot].seats_in_use;
		if (st.admitted != r->last.admitted || st.deferred != r->last.deferred ||
		    st.rejected != r->last.rejected || seats != r->last_seats) {
			/* Per second: metrics say it, the log only at debug. */
			pr_debug("level %.*s: seats %llu/%u, +%llu admitted, +%llu deferred, +%llu rejected",
				SLUICE_LEVEL_NAME_LEN, lvl.name, seats, lvl.seat_limit,
				(unsigned long long)(st.admitted - r->last.admitted),
				(unsigned long long)(st.deferred - r->last.deferred),
				(unsigned long long)(st.rejected - r->last.rejected));
		}
		r->last = st;
		r->last_seats = seats;
	}
}

/* Return the seats of tracked connections the kernel no longer has. */
static void reconciled(struct daemon *d, const char *when, int n, uint64_t took_ms)
{
	if (n < 0) {
		pr_warn("reconcile connections with the kernel's sockets: %s", strerror(-n));
		return;
	}
	d->reconciled += (unsigned)n;
	if (n > 0)
		pr_info("%s: released %d connection%s that closed while sock_ops did not see it (%llu ms)",
			when, n, n == 1 ? "" : "s", (unsigned long long)took_ms);
	else if (took_ms > 20)
		pr_info("%s: reconciling connections took %llu ms", when, (unsigned long long)took_ms);
}

/* At start, before attaching: all at once. */
static void reconcile(struct daemon *d, const char *when)
{
	uint64_t t0 = sl_mono_ns();
	int n = sl_reconcile_conns(&d->dp, RECONCILE_GRACE_NS);

	d->last_reconcile_ns = t0;
	reconciled(d, when, n, (sl_mono_ns() - t0) / 1000000);
}

/* Periodically, from the loop: the kernel's listing read within
 * RECONCILE_BUDGET_NS a tick, then one walk of sl_conns against it. */
static void reconcile_step(struct daemon *d, uint64_t now)
{
	int r;

	if (!sl_sock_dump_running(&d->sock_dump)) {
		if (now - d->last_reconcile_ns < RECONCILE_INTERVAL_NS)
			return;
		d->last_reconcile_ns = now;
		r = sl_sock_dump_begin(&d->sock_dump);
		if (r) {
			pr_warn("reconcile: cannot list the kernel's sockets: %s", strerror(-r));
			return;
		}
	}
	r = sl_sock_dump_continue(&d->sock_dump, RECONCILE_BUDGET_NS);
	if (r < 0) {
		pr_warn("reconcile: listing the kernel's sockets: %s", strerror(-r));
		return;
	}
	if (r == 0)
		return; /* more at the next tick */
	r = sl_reconcile_with(&d->dp, &d->sock_dump.s, d->sock_dump.begun_ns, RECONCILE_GRACE_NS);
	sl_live_sockets_free(&d->sock_dump.s);
	reconciled(d, "periodic", r, (sl_mono_ns() - d->sock_dump.begun_ns) / 1000000);
}

static void sweep(struct daemon *d, uint64_t now)
{
	int n = sl_expire_handshakes(&d->dp, now, d->halfopen.level_timeout_ns,
				     d->cfg->server.half_open.min_timeout_ns, d->halfopen.lingering,
				     d->census.conns ? &d->census : NULL);

	if (d->census.conns)
		sl_adm_census(d->adm, &d->census);
	d->last_sweep_ns = now;
	d->sweep_backlog = n >= SL_EXPIRE_BATCH;
	if (n > 0)
		pr_info("expired %d admitted connection%s that never established", n, n == 1 ? "" : "s");
}

static void tick(struct daemon *d)
{
	unsigned long long now = sl_mono_ns();

	if (sl_write_heartbeat(&d->dp.maps, ++d->ticks))
		pr_warn("heartbeat write failed: %s", strerror(errno));
	sl_svcmgr_tick(&d->svcmgr, now);
	if (sl_config_watch_due(&d->watch, now))
		reload_start(d, "file-changed");
	if (d->job && sl_reload_job_done(d->job))
		reload_finish(d); /* in case its eventfd was not in the epoll set */
	sl_adm_tick(d->adm, now);
	sl_policies_tick(d->policies, now);
	sl_metrics_sweep(d->metrics, now);
	sl_reqsrv_sweep(d->control, now);
	/* The sweep first: the seating decision reads what it found
	 * lingering. */
	if (d->sweep_backlog || now - d->last_sweep_ns >= SWEEP_INTERVAL_NS)
		sweep(d, now);
	if (now - d->last_halfopen_ns >= SWEEP_INTERVAL_NS) {
		d->last_halfopen_ns = now;
		/* A level that moved to the ACK: its half-open seats older
		 * than minTimeout go now (a late ACK is seated there), not at
		 * the next sweep, and its queue drains with them. */
		if (sl_halfopen_rt_step(&d->halfopen, &d->dp, &d->cfg->server, now) > 0)
			sweep(d, now);
	}
	reconcile_step(d, now);
	if (now - d->last_report_ns >= REPORT_INTERVAL_NS) {
		d->last_report_ns = now;
		report(d);
		if (d->quiescing)
			check_quiescing(d);
	}
}

/* How the control socket and the metrics listener treated their clients:
 * evictions and time-outs say someone holds connections without using them. */
static void render_clients(FILE *f, const struct daemon *d)
{
	static const struct {
		const char *name, *help;
		size_t off;
	} c[] = {
#define C(field, help) { #field, help, offsetof(struct sl_reqsrv_stats, field) }
		C(accepted, "Client connections accepted."),
		C(answered, "Answers written completely."),
		C(evicted, "Clients closed to make room for a newer one (every slot busy)."),
		C(timed_out, "Clients closed past their request or answer deadline."),
		C(oversized, "Clients closed for a request over the byte budget."),
		C(hung_up, "Clients that closed or reset before the end of their answer."),
#undef C
	};
	struct sl_reqsrv_stats st[2];
	const char *listener[2] = {"control", "metrics"};

	sl_reqsrv_stats(d->control, &st[0]);
	sl_reqsrv_stats(sl_metrics_server(d->metrics), &st[1]);
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char name[64];

		snprintf(name, sizeof(name), "clients_%s_total", c[i].name);
		sl_prom_family(f, name, SL_PROM_COUNTER, c[i].help);
		for (int l = 0; l < 2; l++)
			sl_prom_sample_u64(f, name, *(const uint64_t *)((const char *)&st[l] + c[i].off),
					   "listener", listener[l], NULL);
	}
}

/* GET /metrics: the data path's global counters, then per level and per
 * policy (admission.c, policy_rt.c). */
static void render_metrics(void *ctx, FILE *f)
{
	static const struct {
		const char *name, *help;
		size_t off;
	} g[] = {
#define G(field, help) { #field, help, offsetof(struct sluice_stats, field) }
		G(syns, "Well-formed SYNs seen by XDP."),
		G(unprotected, "SYNs whose class names no configured level (passed)."),
		G(malformed, "Truncated or invalid packets (passed)."),
		G(fragments, "IP fragments (passed)."),
		G(failsafe_open, "SYNs admitted because the heartbeat was stale."),
		G(failsafe_closed, "SYNs dropped because the heartbeat was stale."),
		G(conn_table_full, "Admissions that found the connection table full."),
		G(events_lost, "Ring buffer events suppressed or not reserved."),
		G(rst_failed, "RSTs that could not be built (SYN dropped)."),
		G(tickets_admitted, "Retransmits admitted on a daemon ticket."),
		G(tickets_rejected, "Retransmits answered with a RST on a daemon ticket."),
		G(established, "Tracked connections established (sock_ops)."),
		G(released, "Seats released on close (sock_ops)."),
		G(policy_deferred, "SYNs dropped by a throttled policy's gate."),
		G(policy_refunds, "Policy tokens given back because the level refused."),
		G(shadow_passed, "Shadow mode: SYNs a gate refused, admitted anyway."),
		G(undispatched, "SYNs over their level's limit while no daemon dispatched (dropped, not queued)."),
		G(frames_copied, "Deferral events that carry their SYN's frame."),
		G(frames_too_long, "Deferred SYNs too long to carry (left to the client's retransmit)."),
		G(rst_released, "Half-open connections whose client's RST returned the seats."),
		G(icmp_released, "Half-open connections whose SYN-ACK drew an ICMP error that aborts the handshake."),
		G(acks_unproved, "Unseated ACKs in a level seating at the ACK that proved nothing (passed to the kernel)."),
#undef G
	};
	struct daemon *d = ctx;
	struct sluice_stats gs = {0};
	uint64_t now = sl_mono_ns();

	struct sluice_heartbeat hb = {0};
	char abi[16];

	snprintf(abi, sizeof(abi), "%d", SLUICE_ABI_VERSION);
	sl_prom_family(f, "build_info", SL_PROM_GAUGE,
		       "1, labelled with the version, the commit built and the map ABI.");
	sl_prom_sample(f, "build_info", 1, "version", sl_version(), "revision", sl_version_git(),
		       "abi", abi, NULL);
	sl_prom_single(f, "up", SL_PROM_GAUGE, "1 while sluiced serves metrics.", 1);
	sl_prom_single(f, "heartbeats_total", SL_PROM_COUNTER, "Heartbeats written (daemon ticks).", d->ticks);
	/* The same loop serves this scrape: a stalled loop answers no scrape
	 * at all, and the age shows the loop's lag otherwise. */
	sl_maps_heartbeat(&d->dp.maps, &hb);
	sl_prom_family(f, "heartbeat_age_seconds", SL_PROM_GAUGE,
		       "Age of the heartbeat the data path reads (its failsafe acts past heartbeatTimeout).");
	sl_prom_sample(f, "heartbeat_age_seconds",
		       hb.mono_ns && now > hb.mono_ns ? (double)(now - hb.mono_ns) / 1e9 : 0, NULL);
	sl_prom_family(f, "heartbeat_timeout_seconds", SL_PROM_GAUGE, "Server spec.heartbeatTimeout.");
	sl_prom_sample(f, "heartbeat_timeout_seconds",
		       (double)d->cfg->server.heartbeat_timeout_ns / 1e9, NULL);
	sl_prom_single(f, "config_last_reload_successful", SL_PROM_GAUGE,
		       "1 when the last load of the configuration (start or reload) was applied.",
		       d->last_reload_ok);
	sl_prom_family(f, "config_last_reload_success_timestamp_seconds", SL_PROM_GAUGE,
		       "When the running configuration was applied (Unix time).");
	sl_prom_sample(f, "config_last_reload_success_timestamp_seconds", d->last_reload_ok_at, NULL);
	sl_prom_family(f, "config_reloads_total", SL_PROM_COUNTER, "Reloads, by result.");
	sl_prom_sample_u64(f, "config_reloads_total", d->reloads[1], "result", "success", NULL);
	sl_prom_sample_u64(f, "config_reloads_total", d->reloads[0], "result", "failure", NULL);
	sl_prom_single(f, "conns_reconciled_total", SL_PROM_COUNTER,
		       "Tracked connections released because the kernel had no socket for them "
		       "(they closed while sock_ops did not see it).", d->reconciled);
	sl_prom_single(f, "shadow", SL_PROM_GAUGE,
		       "1 while shadow mode counts verdicts without enforcing them.", d->shadow);
	sl_maps_global_stats(&d->dp.maps, &gs);
	for (size_t i = 0; i < sizeof(g) / sizeof(g[0]); i++) {
		char name[64];

		snprintf(name, sizeof(name), "%s_total", g[i].name);
		sl_prom_single(f, name, SL_PROM_COUNTER, g[i].help,
			       *(const uint64_t *)((const char *)&gs + g[i].off));
	}
	render_clients(f, d);
	sl_halfopen_rt_metrics(&d->halfopen, f);
	sl_adm_metrics(d->adm, f);
	sl_policies_metrics(d->policies, f, now);
}

/*
 * The probes.  Alive (/healthz): the loop answers, and the heartbeat it
 * writes is younger than heartbeatTimeout, so the data path is not on its
 * failsafe.  Ready (/readyz): alive, with a configuration applied.
 */
static int health(void *ctx, bool ready, char *why, size_t why_len)
{
	struct daemon *d = ctx;
	struct sluice_heartbeat hb = {0};
	uint64_t now = sl_mono_ns(), timeout = d->cfg->server.heartbeat_timeout_ns;

	if (sl_maps_heartbeat(&d->dp.maps, &hb) || !hb.mono_ns) {
		snprintf(why, why_len, "no heartbeat in %s", d->dp.pin_dir);
		return -EIO;
	}
	if (timeout && now > hb.mono_ns && now - hb.mono_ns > timeout) {
		snprintf(why, why_len, "heartbeat %.1f s old (heartbeatTimeout %.1f s): the failsafe decides",
			 (double)(now - hb.mono_ns) / 1e9, (double)timeout / 1e9);
		return -ETIME;
	}
	if (ready && !d->last_reload_ok_at) {
		snprintf(why, why_len, "no configuration applied");
		return -EAGAIN;
	}
	return 0;
}

/* The signals the loop reads from its signalfd. */
static void loop_signals(sigset_t *mask)
{
	sigemptyset(mask);
	sigaddset(mask, SIGTERM);
	sigaddset(mask, SIGINT);
	sigaddset(mask, SIGHUP);
}

/* Before anything is loaded or pinned: a stop or reload signal that
 * arrives during start-up waits for the loop (which then detaches
 * cleanly) instead of killing the daemon with its pins in place; a client
 * that hangs up never raises SIGPIPE. */
static int block_signals(void)
{
	sigset_t mask;

	loop_signals(&mask);
	if (sigprocmask(SIG_BLOCK, &mask, NULL))
		return -errno;
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

static int setup_loop(struct daemon *d)
{
	struct epoll_event ev = {.events = EPOLLIN};
	uint64_t tick_ns = d->cfg->server.tick_ns;
	struct itimerspec its = {
		.it_interval = {.tv_sec = (time_t)(tick_ns / 1000000000ULL), .tv_nsec = (long)(tick_ns % 1000000000ULL)},
	};
	sigset_t mask;

	its.it_value = its.it_interval;
	loop_signals(&mask);
	d->sig_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	d->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	d->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (d->sig_fd < 0 || d->timer_fd < 0 || d->epoll_fd < 0)
		return -errno;
	if (timerfd_settime(d->timer_fd, 0, &its, NULL))
		return -errno;
	d->events = ring_buffer__new(d->dp.maps.fd[SL_MAP_EVENTS], on_event, d, NULL);
	if (!d->events)
		return -errno;
	ev.data.fd = d->sig_fd;
	if (epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, d->sig_fd, &ev))
		return -errno;
	ev.data.fd = d->timer_fd;
	if (epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, d->timer_fd, &ev))
		return -errno;
	ev.data.fd = ring_buffer__epoll_fd(d->events);
	if (epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, ev.data.fd, &ev))
		return -errno;
	{
		int err = sl_reqsrv_open(&d->control, d->control_fd, d->epoll_fd, &control_limits,
					 control_request_complete, answer_control, d);

		if (err)
			return err;
		d->control_fd = -1; /* the request server's now */
	}
	if (d->cfg->server.metrics_address) {
		const struct sl_metrics_handlers h = {
			.render = render_metrics, .health = health, .ctx = d,
		};
		int err = sl_metrics_open(&d->metrics, d->cfg->server.metrics_address, d->epoll_fd, &h);

		if (err)
			return err;
		pr_info("metrics on http://%s/metrics", d->cfg->server.metrics_address);
	}
	if (d->opts.watch_config) {
		int err = sl_config_watch_open(&d->watch, d->opts.config_path, d->epoll_fd);

		if (err)
			return err;
		pr_info("watching %s: a change is reloaded", d->opts.config_path);
	}
	return 0;
}

static int run_loop(struct daemon *d)
{
	int rb_fd = ring_buffer__epoll_fd(d->events);

	for (;;) {
		struct epoll_event evs[4];
		/* Between ticks, admission's own deadline (a level that may be
		 * stalled) wakes the loop when it is due, not at the next tick. */
		uint64_t due = sl_adm_next_deadline(d->adm), now = sl_mono_ns();
		int wait_ms = due == UINT64_MAX ? -1 : due <= now ? 0 : due - now >= 1000000000ULL ? 1000
			      : (int)((due - now + 999999) / 1000000);
		int n = epoll_wait(d->epoll_fd, evs, 4, wait_ms);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (due != UINT64_MAX && sl_mono_ns() >= due)
			sl_adm_deadlines(d->adm, sl_mono_ns());
		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;

			if (fd == d->timer_fd) {
				uint64_t expirations;

				if (read(fd, &expirations, sizeof(expirations)) > 0)
					tick(d);
			} else if (fd == rb_fd) {
				ring_buffer__consume(d->events);
			} else if (d->job && fd == sl_reload_job_fd(d->job)) {
				if (sl_reload_job_done(d->job))
					reload_finish(d);
			} else if (sl_config_watch_handle(&d->watch, fd, sl_mono_ns())) {
				/* a change: the tick reloads once it settles */
			} else if (sl_reqsrv_handle(d->control, fd, evs[i].events)) {
				/* answered (or progressed) */
			} else if (sl_metrics_handle(d->metrics, fd, evs[i].events)) {
				/* served (or progressed) */
			} else if (fd == d->sig_fd) {
				struct signalfd_siginfo si;

				if (read(fd, &si, sizeof(si)) != sizeof(si))
					continue;
				if (si.ssi_signo == SIGHUP) {
					reload_start(d, "sighup");
				} else {
					pr_info("%s: detaching", strsignal((int)si.ssi_signo));
					sl_svcmgr_stopping(&d->svcmgr);
					return 0;
				}
			}
		}
	}
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

int main(int argc, char **argv)
{
	struct daemon d = {.sig_fd = -1, .timer_fd = -1, .epoll_fd = -1, .control_fd = -1,
			   .watch = {.fd = -1}, .read_gid = -1,
			   .sock_dump = SL_SOCK_DUMP_INIT};
	struct sl_dataplane_opts dpo = {0};
	struct sl_diags diags = SL_DIAGS_INIT;
	int err;

	sl_log_init("sluiced", SL_LOG_INFO);
	if (block_signals()) {
		pr_err("cannot block signals: %s", strerror(errno));
		return 1;
	}
	d.opts.log_level = SL_LOG_INFO;
	if (parse_args(argc, argv, &d.opts))
		return 2;
	sl_log_set_level(d.opts.log_level);
	sl_libbpf_log(d.opts.verbose);
	sl_svcmgr_init(&d.svcmgr);

	err = load_config(d.opts.config_path, &d.cfg, &diags);
	sl_diags_free(&diags);
	if (err)
		return 1;
	sl_halfopen_rt_init(&d.halfopen, &d.cfg->server);
	if (!d.opts.n_ifnames)
		for (size_t i = 0; i < d.cfg->server.n_interfaces && i < SL_DP_MAX_IFACES; i++)
			d.opts.ifnames[d.opts.n_ifnames++] = d.cfg->server.interfaces[i];
	if (!d.opts.n_ifnames) {
		pr_err("no interface: pass --iface IFNAME or set Server spec.interfaces");
		err = -EINVAL;
		goto out_cfg;
	}
	if (!d.opts.pin_dir)
		d.opts.pin_dir = d.cfg->server.pin_dir ? d.cfg->server.pin_dir : SL_DEFAULT_PIN_DIR;
	if (!d.opts.control_path)
		d.opts.control_path = d.cfg->server.control_socket ? d.cfg->server.control_socket
								   : SL_DEFAULT_CONTROL_SOCKET;
	if (geteuid() != 0)
		pr_warn("not running as root: loading BPF will most likely fail");
	if (d.cfg->server.read_group) {
		struct group *g = getgrnam(d.cfg->server.read_group);

		if (!g) {
			pr_err("%s: Server spec.readGroup: no group '%s' on this host (groupadd --system %s)",
			       d.opts.config_path, d.cfg->server.read_group, d.cfg->server.read_group);
			err = -ENOENT;
			goto out_cfg;
		}
		d.read_gid = (int)g->gr_gid;
	}
	{
		/* Before the data path: a socket that cannot be ours changes
		 * nothing on the host. */
		char why[256];

		d.control_fd = sl_control_listen(d.opts.control_path, d.read_gid, why, sizeof(why));
		if (d.control_fd < 0) {
			pr_err("control socket %s: %s", d.opts.control_path, why);
			err = d.control_fd;
			goto out_cfg;
		}
		d.control_listening = true;
	}

	dpo.pin_dir = d.opts.pin_dir;
	dpo.ifnames = d.opts.ifnames;
	dpo.n_ifnames = d.opts.n_ifnames;
	dpo.xdp_generic = d.opts.xdp_generic;
	dpo.cgroup = d.opts.cgroup;
	dpo.force = d.opts.force;
	dpo.conn_table_size = d.cfg->server.table_sizes.connections;
	dpo.class_table_size = d.cfg->server.table_sizes.classes;
	dpo.read_gid = d.read_gid;
	err = sl_dataplane_start(&d.dp, &dpo);
	if (err)
		goto out_cfg;

	{
		uint8_t key[16];

		/* A per-boot random flow-hash key: clients cannot aim at queues. */
		if (getrandom(key, sizeof(key), 0) != sizeof(key))
			memset(key, 0x5a, sizeof(key));
		err = sl_adm_create(&d.adm, &d.dp, key, sl_mono_ns());
		if (!err) {
			struct sl_policy_hooks hooks;

			sl_adm_policy_hooks(d.adm, &hooks);
			err = sl_policies_create(&d.policies, &d.dp, &hooks);
		}
		if (!err)
			sl_adm_set_policies(d.adm, d.policies);
		if (err) {
			pr_err("admission: %s", strerror(-err));
			goto out_dp;
		}
	}
	d.shadow = d.cfg->server.shadow;
	d.census.n = SLUICE_FS_STATS;
	d.census.conns = calloc(d.census.n, sizeof(*d.census.conns));
	d.census.seats = calloc(d.census.n, sizeof(*d.census.seats));
	if (!d.census.conns || !d.census.seats) {
		free(d.census.conns);
		free(d.census.seats);
		d.census.conns = d.census.seats = NULL; /* the executing gauges stay 0 */
	}
	err = keep_gate_policies(&d);
	if (!err)
		err = apply_config(&d, d.cfg, &diags);
	sl_diags_free(&diags);
	d.last_reload_ok = !err;
	d.last_reload_ok_at = err ? 0 : sl_wall_s();
	/* The heartbeat before the programs: adopted maps carry the dead
	 * daemon's, and the new XDP program would hand its first SYNs to the
	 * failsafe. */
	if (!err)
		err = sl_write_heartbeat(&d.dp.maps, 0);
	if (!err)
		reconcile(&d, "on start");
	if (!err)
		err = sl_dataplane_attach(&d.dp, &dpo);
	if (!err)
		err = setup_loop(&d);
	if (!err && !d.opts.keep_privileges) {
		char why[128];

		/* Everything is loaded, attached and open: what is left needs
		 * no more than this. */
		err = sl_privileges_drop(why, sizeof(why));
		if (err)
			pr_err("drop privileges: %s (--keep-privileges runs without dropping)", why);
	}
	if (err) {
		pr_err("start-up failed: %s", strerror(-err));
		goto out_dp;
	}
	pr_info("protecting %s (XDP %s, sock_ops on %s), pins in %s, fail mode %s", d.dp.ifnames,
		d.opts.xdp_generic ? "generic" : "native", d.dp.cgroup, d.dp.pin_dir,
		d.cfg->server.fail_mode == SL_FAIL_CLOSED ? "closed" : "open");
	snprintf(d.status, sizeof(d.status), "protecting %s (XDP %s), fail mode %s", d.dp.ifnames,
		 d.opts.xdp_generic ? "generic" : "native",
		 d.cfg->server.fail_mode == SL_FAIL_CLOSED ? "closed" : "open");
	sl_svcmgr_ready(&d.svcmgr, d.status);
	err = run_loop(&d);

out_dp:
	sl_sock_dump_abort(&d.sock_dump);
	sl_metrics_close(d.metrics);
	ring_buffer__free(d.events);
	sl_policies_free(d.policies);
	sl_adm_free(d.adm);
	free(d.census.conns);
	free(d.census.seats);
	sl_config_watch_close(&d.watch);
	if (d.job) {
		struct sl_reload_result r;

		sl_reload_job_finish(d.job, &r); /* waits: it writes the maps */
		sl_reload_result_free(&r);
	}
	sl_diags_free(&d.outcome_diags);
	close_fd(&d.sig_fd);
	close_fd(&d.timer_fd);
	sl_reqsrv_close(d.control);
	close_fd(&d.epoll_fd);
	/* Only a clean stop keeps the programs attached: after a failed start
	 * nothing of ours is left running. */
	sl_dataplane_stop(&d.dp, d.opts.keep_attached && !err ? SL_STOP_KEEP_ATTACHED :
				 d.opts.keep_maps ? SL_STOP_KEEP_MAPS : SL_STOP_REMOVE);
	if (!err)
		pr_info("stopped%s", d.opts.keep_attached ? "; XDP and sock_ops left attached, pins kept" :
				     d.opts.keep_maps ? "; maps kept pinned" : "; nothing left attached or pinned");
out_cfg:
	close_fd(&d.control_fd);
	if (d.control_listening)
		unlink(d.opts.control_path);
	sl_config_free(d.cfg);
	sl_compiled_free(&d.classes);
	return err ? 1 : 0;
}
