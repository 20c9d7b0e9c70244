// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
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
#include <net/if.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "daemon/admission.h"
#include "dataplane/settings.h"
#include "config/config.h"
#include "daemon/control.h"
#include "daemon/events.h"
#include "dataplane/expiry.h"
#include "dataplane/dataplane.h"
#include "lib/cgroup_path.h"
#include "lib/clock.h"
#include "lib/default_route.h"
#include "lib/hostport.h"
#include "lib/log.h"
#include "lib/read_file.h"
#include "lib/version.h"
#include "daemon/metrics.h"
#include "daemon/privileges.h"
#include "engine/plan.h"
#include "daemon/halfopen_rt.h"
#include "daemon/policy_rt.h"
#include "daemon/request_server.h"
#include "daemon/config_watch.h"
#include "daemon/reload_job.h"
#include "daemon/journal.h"
#include "daemon/service_manager.h"
#include "dataplane/ledger.h"

#define SWEEP_INTERVAL_NS 1000000000ULL
#define REPORT_INTERVAL_NS 1000000000ULL

#include "daemon/daemon.h"


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
		"                           (default: every one of Server spec.interfaces);\n"
		"                           auto: the device of the default route\n"
		"  -m, --xdp-mode MODE      native (default) or generic\n"
		"      --veth-peer-xdp      every protected veth's peer runs an XDP program, so\n"
		"                           native XDP_TX reaches the client (by default a veth's\n"
		"                           refusals go by the tc hand-off: with only GRO on\n"
		"                           the peer, XDP_TX frames are never delivered)\n"
		"  -g, --cgroup PATH        cgroup v2 directory for sock_ops (default: the\n"
		"                           cgroup2 mount found in /proc/mounts)\n"
		"      --pin-dir DIR        where to pin maps, programs and links (default:\n"
		"                           Server spec.pinDir, else %s)\n"
		"  -k, --keep-maps          leave the maps pinned on exit, so a restarted\n"
		"                           daemon keeps seat counts and counters\n"
		"  -K, --keep-attached      leave XDP and sock_ops attached on exit too (and\n"
		"                           every pin): for a planned restart; while no daemon\n"
		"                           runs the heartbeat rules decide (no deferral,\n"
		"                           then the failsafe), and closes still return seats\n"
		"  -s, --control PATH       control socket for `sluicectl reload` (default:\n"
		"                           Server spec.controlSocket, else %s)\n"
		"      --metrics-address HOST:PORT\n"
		"                           serve /metrics, /healthz and /readyz there (over\n"
		"                           Server spec.metricsAddress): the node's own address\n"
		"                           under Kubernetes, e.g. $(NODE_IP):9464\n"
		"  -f, --force              replace an XDP program that sluice did not attach\n"
		"      --keep-privileges    keep every capability (by default, once started,\n"
		"                           only CAP_BPF and CAP_NET_ADMIN remain, NoNewPrivs)\n"
		"  -W, --watch-config       reload when FILE changes (a Kubernetes ConfigMap\n"
		"                           volume's update, an editor's save); unchanged\n"
		"                           bytes are not reloaded\n"
		"      --log-level LEVEL    error, warning, info (default) or debug; under\n"
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
		{"veth-peer-xdp", no_argument, NULL, 'X'},
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
		{"metrics-address", required_argument, NULL, 'M'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{},
	};
	int c;

	opterr = 0; /* our messages, below */
	while ((c = getopt_long(argc, argv, ":c:i:m:g:s:kKfvhVW", opts, NULL)) != -1) {
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
		case 'X': o->veth_peer_xdp = true; break;
		case 'f': o->force = true; break;
		case 'v': o->verbose = true; o->log_level = SL_LOG_DEBUG; break;
		case 'W': o->watch_config = true; break;
		case 'M': {
			struct sockaddr_storage ss;
			socklen_t len;
			char why[128];

			if (sl_parse_hostport(optarg, &ss, &len, why, sizeof(why))) {
				fprintf(stderr, "sluiced: --metrics-address: '%s': %s\n", optarg, why);
				return -EINVAL;
			}
			o->metrics_address = optarg;
			break;
		}
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
		case ':':
			fprintf(stderr, "sluiced: option '%s' needs a value (see --help)\n", argv[optind - 1]);
			return -EINVAL;
		default:
			/* One line that starts with our name, not getopt's argv[0]
			 * and forty lines of help. */
			if (optopt && optopt != '?')
				fprintf(stderr, "sluiced: unknown option '-%c' (see --help)\n", optopt);
			else
				fprintf(stderr, "sluiced: unknown option '%s' (see --help)\n", argv[optind - 1]);
			return -EINVAL;
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

/* --iface auto (or "auto" in Server spec.interfaces): the device of this
 * host's default route, so one DaemonSet protects nodes whose uplinks are
 * named differently.  Resolved once at start: a route that moves later
 * does not move the data path. */
static int resolve_auto_iface(struct daemon_opts *o)
{
	static char dev[IF_NAMESIZE + 1];
	char *v4 = NULL, *v6 = NULL;
	size_t len;
	int err = -ENOENT;

	for (size_t i = 0; i < o->n_ifnames; i++) {
		if (strcmp(o->ifnames[i], "auto"))
			continue;
		if (!dev[0]) {
			(void)sl_read_file("/proc/net/route", 1 << 20, &v4, &len);
			(void)sl_read_file("/proc/net/ipv6_route", 1 << 20, &v6, &len);
			err = sl_default_route_dev(v4, v6, dev, sizeof(dev));
			free(v4);
			free(v6);
			if (err) {
				pr_err("--iface auto: this host has no default route (IPv4 or IPv6) to take "
				       "the interface from; name it: --iface IFNAME");
				return err;
			}
			pr_info("--iface auto: the default route's device, %s", dev);
		}
		o->ifnames[i] = dev;
	}
	return 0;
}

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
		seats = sl_seats_in_use(&d->dp, slot);
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

/* A pass of the handshake sweep reads the connection table for at most
 * this long a tick (about 24,000 entries: a million take some 40 ticks),
 * so no table size makes the heartbeat late. */
#define SWEEP_BUDGET_NS (10ull * 1000000ULL)

/* Go on with the sweep's pass, or start one when it is due (force: now). */
static void sweep(struct daemon *d, uint64_t now, bool force)
{
	int n = 0, r;

	if (!d->expiry.running) {
		if (!force && !d->sweep_again && now - d->last_sweep_ns < SWEEP_INTERVAL_NS)
			return;
		d->last_sweep_ns = now;
		d->sweep_again = false;
	} else if (force) {
		d->sweep_again = true; /* what the running pass passed is seen next pass */
	}
	r = sl_expiry_step(&d->expiry, &d->dp, now, now + SWEEP_BUDGET_NS,
			   d->halfopen.level_timeout_ns, d->cfg->server.half_open.min_timeout_ns,
			   d->halfopen.lingering, d->census.conns ? &d->census : NULL, &n);
	if (r < 0)
		pr_warn("handshake sweep: %s", strerror(-r));
	else if (r == 1 && d->census.conns)
		sl_adm_census(d->adm, &d->census);
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
		daemon_reload_start(d, "file-changed");
	if (d->job && sl_reload_job_done(d->job))
		daemon_reload_finish(d); /* in case its eventfd was not in the epoll set */
	ring_buffer__consume(d->events); /* the tick judges waits and stalls: on what happened */
	/* Each event was stamped as it was handled, after the reading above:
	 * what judges their waits reads the clock again (an arrival later
	 * than "now" would be late by 2^64 ns). */
	now = sl_mono_ns();
	sl_adm_tick(d->adm, now);
	sl_policies_tick(d->policies, now);
	sl_metrics_sweep(d->metrics, now);
	sl_reqsrv_sweep(d->control, now);
	/* The sweep first: the seating decision reads what it found
	 * lingering. */
	sweep(d, now, false);
	if (now - d->last_halfopen_ns >= SWEEP_INTERVAL_NS) {
		d->last_halfopen_ns = now;
		/* A level that moved to the ACK: its half-open seats older
		 * than minTimeout go now (a late ACK is seated there), not at
		 * the next sweep, and its queue drains with them. */
		if (sl_halfopen_rt_step(&d->halfopen, &d->dp, &d->cfg->server, now) > 0)
			sweep(d, now, true);
		for (unsigned slot = 0; slot < SLUICE_MAX_LEVELS; slot++)
			sl_adm_level_seating(d->adm, slot, sl_halfopen_rt_flags(&d->halfopen, slot));
	}
	sl_tx_path_rt_step(&d->tx_path, &d->dp, now);
	daemon_reconcile_step(d, now);
	if (now - d->last_report_ns >= REPORT_INTERVAL_NS) {
		d->last_report_ns = now;
		report(d);
		if (d->quiescing)
			daemon_check_quiescing(d);
	}
}

/* The signals the loop reads from its signalfd. */
static void loop_signals(sigset_t *mask)
{
	sigemptyset(mask);
	sigaddset(mask, SIGTERM);
	sigaddset(mask, SIGINT);
	sigaddset(mask, SIGHUP);
}

/* Before anything is created, loaded or pinned (but after the
 * configuration is read: a stop while it is read ends the daemon at once):
 * a stop or reload signal that arrives during the rest of start-up waits
 * for the loop (which then detaches cleanly) instead of killing the daemon
 * with its pins in place; a client that hangs up never raises SIGPIPE. */
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
		int err = sl_reqsrv_open(&d->control, d->control_fd, d->epoll_fd, &daemon_control_limits,
					 daemon_control_request_complete, daemon_answer_control, d);

		if (err)
			return err;
		d->control_fd = -1; /* the request server's now */
	}
	if (daemon_metrics_address(d, d->cfg)) {
		const struct sl_metrics_handlers h = {
			.render = daemon_render_metrics, .health = daemon_health, .ctx = d,
		};
		const char *address = daemon_metrics_address(d, d->cfg);
		int err = sl_metrics_open(&d->metrics, address, d->epoll_fd, &h);

		if (err)
			return err;
		pr_info("metrics on http://%s/metrics", address);
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
		if (due != UINT64_MAX && sl_mono_ns() >= due) {
			/* A verdict of "nothing closed" reads every close the
			 * data path sent first: a loop that woke late (a busy
			 * host) would otherwise judge before its own backlog. */
			ring_buffer__consume(d->events);
			sl_adm_deadlines(d->adm, sl_mono_ns());
		}
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
					daemon_reload_finish(d);
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
					daemon_reload_start(d, "sighup");
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
	d.opts.log_level = SL_LOG_INFO;
	if (parse_args(argc, argv, &d.opts))
		return 2;
	sl_log_set_level(d.opts.log_level);
	sl_journal_fields_init();
	sl_libbpf_log(d.opts.verbose);
	sl_svcmgr_init(&d.svcmgr);

	err = daemon_load_config(d.opts.config_path, &d.cfg, &diags);
	sl_diags_free(&diags);
	if (err)
		return 1;
	sl_halfopen_rt_init(&d.halfopen, &d.cfg->server);
	sl_tx_path_rt_init(&d.tx_path);
	if (!d.opts.n_ifnames)
		for (size_t i = 0; i < d.cfg->server.n_interfaces && i < SL_DP_MAX_IFACES; i++)
			d.opts.ifnames[d.opts.n_ifnames++] = d.cfg->server.interfaces[i];
	if (!d.opts.n_ifnames) {
		pr_err("no interface: pass --iface IFNAME or set Server spec.interfaces");
		err = -EINVAL;
		goto out_cfg;
	}
	err = resolve_auto_iface(&d.opts);
	if (err)
		goto out_cfg;
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
	/* From the first change to the host on, a stop waits for the loop;
	 * until here (reading the configuration, which could be slow or
	 * stuck) it ends the daemon at once (issue 26). */
	if (block_signals()) {
		pr_err("cannot block signals: %s", strerror(errno));
		err = -errno;
		goto out_cfg;
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
	dpo.veth_peer_xdp = d.opts.veth_peer_xdp;
	dpo.cgroup = d.opts.cgroup;
	dpo.force = d.opts.force;
	dpo.conn_table_size = d.cfg->server.table_sizes.connections;
	dpo.class_table_size = d.cfg->server.table_sizes.classes;
	dpo.read_gid = d.read_gid;
	dpo.xdp_next = d.cfg->server.xdp_chain.next;
	dpo.root_array = d.cfg->server.xdp_chain.root_array;
	dpo.root_slot = d.cfg->server.xdp_chain.slot;
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
	if (!d.census.conns || !d.census.seats || sl_expiry_init(&d.expiry, d.census.n)) {
		free(d.census.conns);
		free(d.census.seats);
		d.census.conns = d.census.seats = NULL; /* the executing gauges stay 0 */
	}
	err = daemon_keep_gate_policies(&d);
	if (!err)
		err = daemon_apply_config(&d, d.cfg, &diags);
	sl_diags_free(&diags);
	d.last_reload_ok = !err;
	d.last_reload_ok_at = err ? 0 : sl_wall_s();
	/* The heartbeat before the programs: adopted maps carry the dead
	 * daemon's, and the new XDP program would hand its first SYNs to the
	 * failsafe. */
	if (!err)
		err = sl_write_heartbeat(&d.dp.maps, 0);
	if (!err)
		daemon_reconcile_all(&d, "on start");
	if (!err)
		err = sl_dataplane_attach(&d.dp, &dpo);
	/* Every socket of the host is under a root: only another cgroup can
	 * miss the service's. */
	if (!err && !sl_cgroup2_is_root(d.dp.cgroup))
		sl_halfopen_rt_watch_sight(&d.halfopen, d.dp.cgroup);
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
		sl_fail_mode_name(d.cfg->server.fail_mode));
	snprintf(d.status, sizeof(d.status), "protecting %s (XDP %s), fail mode %s", d.dp.ifnames,
		 d.opts.xdp_generic ? "generic" : "native",
		 sl_fail_mode_name(d.cfg->server.fail_mode));
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
	sl_expiry_free(&d.expiry);
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
