// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * sluiced's command line, and the options the configuration completes:
 * the interfaces (Server spec.interfaces, --iface auto: the default
 * route's device), the pin directory and the control socket.
 */
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "daemon/control.h"
#include "daemon/daemon.h"
#include "lib/default_route.h"
#include "lib/hostport.h"
#include "lib/log.h"
#include "lib/read_file.h"
#include "lib/version.h"

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

int daemon_parse_args(int argc, char **argv, struct daemon_opts *o)
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
