// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * sluiced's command line (a table read by lib/options.c, the parser
 * sluicectl's commands use), and the options the configuration completes:
 * the interfaces (Server spec.interfaces, --iface auto: the default
 * route's device), the pin directory and the control socket.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/utsname.h>

#include "daemon/control.h"
#include "daemon/daemon.h"
#include "dataplane/kernel_features.h"
#include "lib/default_route.h"
#include "lib/hostport.h"
#include "lib/log.h"
#include "lib/options.h"
#include "lib/read_file.h"
#include "lib/version.h"

/* --iface: appended to the NULL-terminated list. */
static int parse_iface(const char *arg, void *field, char *why, size_t len)
{
	const char **names = field;
	size_t n = 0;

	while (names[n])
		n++;
	if (n == SL_DP_MAX_IFACES) {
		snprintf(why, len, "at most %d interfaces", SL_DP_MAX_IFACES);
		return -EINVAL;
	}
	names[n] = arg;
	return 0;
}

static int parse_xdp_mode(const char *arg, void *field, char *why, size_t len)
{
	bool *generic = field;

	if (!strcmp(arg, "generic") || !strcmp(arg, "skb"))
		*generic = true;
	else if (!strcmp(arg, "native") || !strcmp(arg, "drv"))
		*generic = false;
	else {
		snprintf(why, len, "'%s' is not native or generic", arg);
		return -EINVAL;
	}
	return 0;
}

static int parse_log_level(const char *arg, void *field, char *why, size_t len)
{
	if (sl_log_parse_level(arg, field)) {
		snprintf(why, len, "'%s' is not error, warning, info or debug", arg);
		return -EINVAL;
	}
	return 0;
}

static int parse_metrics_address(const char *arg, void *field, char *why, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t ss_len;
	char reason[128];

	if (sl_parse_hostport(arg, &ss, &ss_len, reason, sizeof(reason))) {
		snprintf(why, len, "'%s': %s", arg, reason);
		return -EINVAL;
	}
	*(const char **)field = arg;
	return 0;
}

#define T struct daemon_opts
static const struct sl_opt daemon_options[] = {
	SL_ROW_STRING('c', "config", T, config_path, "FILE", "YAML configuration", SL_OPT_REQUIRED),
	SL_ROW_CUSTOM('i', "iface", T, ifnames, "IFNAME", parse_iface,
		      "an interface to attach XDP to; repeat it for more\n"
		      "(default: every one of Server spec.interfaces);\n"
		      "auto: the device of the default route", 0),
	SL_ROW_CUSTOM('m', "xdp-mode", T, xdp_generic, "MODE", parse_xdp_mode,
		      "native (default) or generic", 0),
	SL_ROW_FLAG(0, "veth-peer-xdp", T, veth_peer_xdp,
		    "every protected veth's peer runs an XDP program, so\n"
		    "native XDP_TX reaches the client (by default a veth's\n"
		    "refusals go by the tc hand-off: with only GRO on\n"
		    "the peer, XDP_TX frames are never delivered)"),
	SL_ROW_STRING('g', "cgroup", T, cgroup, "PATH",
		      "cgroup v2 directory for sock_ops (default: the\n"
		      "cgroup2 mount found in /proc/mounts)", 0),
	SL_ROW_STRING(0, "pin-dir", T, pin_dir, "DIR",
		      "where to pin maps, programs and links (default:\n"
		      "Server spec.pinDir, else " SL_DEFAULT_PIN_DIR ")", 0),
	/* Long names only: -k and -K differed by case alone. */
	{.name = "keep-maps", .kind = SL_OPT_FLAG, .offset = offsetof(T, keep_maps), .old_short = 'k',
	 .help = "leave the maps pinned on exit, so a restarted\n"
		 "daemon keeps seat counts and counters"},
	{.name = "keep-attached", .kind = SL_OPT_FLAG, .offset = offsetof(T, keep_attached), .old_short = 'K',
	 .help = "leave XDP and sock_ops attached on exit too (and\n"
		 "every pin): for a planned restart; while no daemon\n"
		 "runs the heartbeat rules decide (no deferral,\n"
		 "then the failsafe), and closes still return seats"},
	SL_ROW_STRING('s', "control-socket", T, control_path, "PATH",
		      "control socket for sluicectl (default:\n"
		      "Server spec.controlSocket, else " SL_DEFAULT_CONTROL_SOCKET ")", 0),
	SL_ROW_RENAMED(0, "control", "control-socket"),
	SL_ROW_CUSTOM(0, "metrics-address", T, metrics_address, "HOST:PORT", parse_metrics_address,
		      "serve /metrics, /healthz and /readyz there (over\n"
		      "Server spec.metricsAddress): the node's own address\n"
		      "under Kubernetes, e.g. $(NODE_IP):9464", 0),
	SL_ROW_FLAG('f', "force", T, force, "replace an XDP program that sluice did not attach"),
	SL_ROW_FLAG(0, "keep-privileges", T, keep_privileges,
		    "keep every capability (by default, once started,\n"
		    "only CAP_BPF and CAP_NET_ADMIN remain, NoNewPrivs)"),
	SL_ROW_FLAG('W', "watch-config", T, watch_config,
		    "reload when FILE changes (a Kubernetes ConfigMap\n"
		    "volume's update, an editor's save); unchanged\n"
		    "bytes are not reloaded"),
	SL_ROW_CUSTOM(0, "log-level", T, log_level, "LEVEL", parse_log_level,
		      "error, warning, info (default) or debug; under\n"
		      "systemd each line carries its priority (<3>...)", 0),
	SL_ROW_FLAG('v', "verbose", T, verbose,
		    "debug logging, including libbpf's messages\n"
		    "(unless --log-level says otherwise)"),
	{.name = "version", .short_name = 'V', .kind = SL_OPT_FLAG, .offset = offsetof(T, version),
	 .help = "the version, the commit built and the map ABI", .flags = SL_OPT_ANSWERS},
	{.name = "check", .kind = SL_OPT_FLAG, .offset = offsetof(T, check),
	 .help = "the kernel features sluice uses, whether this host has\n"
		 "each and the way taken where it does not; exit 1\n"
		 "where sluice cannot protect this host (root: it loads\n"
		 "the programs once, attaching nothing)", .flags = SL_OPT_ANSWERS},
	{.name = "requirements", .kind = SL_OPT_FLAG, .offset = offsetof(T, requirements),
	 .help = "the same features as a Markdown table (README.md's)", .flags = SL_OPT_ANSWERS},
	SL_ROW_END,
};
#undef T

static const struct sl_opt_doc daemon_doc = {
	.prog = "sluiced",
	/* help2man makes the man page's SYNOPSIS of this one line */
	.synopsis = "--config FILE [OPTIONS]",
	.description =
		"Protect the TCP services of this host from connection overload: load the\n"
		"sluice data path (XDP on IFNAME, sock_ops on the cgroup v2 root), apply the\n"
		"configuration, and keep it running.  SIGHUP reloads FILE (all or nothing);\n"
		"SIGTERM/SIGINT detach and remove the pins.\n",
	.epilogue = "Exit status: 0 after a clean stop, 1 when start-up or the loop failed\n"
		    "(or --check found that sluice cannot protect this host), 2 for a bad\n"
		    "command line.\n",
};

int daemon_parse_args(int argc, char **argv, struct daemon_opts *o)
{
	struct sl_opt_parsed parsed;
	int rc = sl_opt_parse(&daemon_doc, daemon_options, o, NULL, argc, argv, &parsed);

	if (rc == SL_OPT_HELPED)
		return DAEMON_ANSWERED;
	if (rc < 0)
		return rc;
	if (o->version) {
		printf("sluiced %s (%s, map ABI %d)\n", sl_version(), sl_version_git(), SLUICE_ABI_VERSION);
		return DAEMON_ANSWERED;
	}
	if (o->requirements) {
		sl_features_print_markdown(stdout);
		return DAEMON_ANSWERED;
	}
	if (o->check) {
		struct sl_feature_probe probe;
		struct utsname u;

		sl_features_probe(&probe, true);
		sl_features_print(stdout, &probe, uname(&u) ? "(unknown)" : u.release);
		return sl_features_sufficient(&probe) ? DAEMON_ANSWERED : DAEMON_ANSWERED_NO;
	}
	while (o->n_ifnames < SL_DP_MAX_IFACES && o->ifnames[o->n_ifnames])
		o->n_ifnames++;
	if (o->keep_attached)
		o->keep_maps = true; /* attached programs need their maps */
	if (o->verbose && !sl_opt_given(daemon_options, &parsed, "log-level"))
		o->log_level = SL_LOG_DEBUG;
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

int daemon_complete_opts(struct daemon_opts *o, const struct sl_config *cfg)
{
	if (!o->n_ifnames)
		for (size_t i = 0; i < cfg->server.n_interfaces && i < SL_DP_MAX_IFACES; i++)
			o->ifnames[o->n_ifnames++] = cfg->server.interfaces[i];
	if (!o->n_ifnames) {
		pr_err("no interface: pass --iface IFNAME or set Server spec.interfaces");
		return -EINVAL;
	}
	if (!o->pin_dir)
		o->pin_dir = cfg->server.pin_dir ? cfg->server.pin_dir : SL_DEFAULT_PIN_DIR;
	if (!o->control_path)
		o->control_path = cfg->server.control_socket ? cfg->server.control_socket
							     : SL_DEFAULT_CONTROL_SOCKET;
	return resolve_auto_iface(o);
}
