/*
 * sluicectl shadow [on|off]: shadow mode computes every verdict and
 * enforces none (a safe way to see what a configuration would do to real
 * traffic).  Without an argument: the current mode, from the pinned maps.
 */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/control.h"
#include "ctl/ctl.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: sluicectl shadow [on|off] [--socket PATH] [--pin-dir DIR] [--json]\n\n"
		"Shadow mode: the data path computes every verdict and counts it as usual\n"
		"(deferred, rejected, policy deferrals, failsafe), but enforces none: a SYN\n"
		"that would be deferred or reset is admitted and counted as shadow-passed.\n"
		"Seats then show the real concurrency, above the limits if need be.  Use it\n"
		"to see what a configuration would do before it does it.\n\n"
		"  on | off        switch it (asks sluiced; it holds until switched again, or\n"
		"                  until a reload whose file changes Server spec.shadow)\n"
		"  (no argument)   show the current mode, read from the pinned maps\n"
		"  --socket PATH   the daemon's control socket (default %s)\n"
		"  --pin-dir DIR   where sluiced pinned its maps (default %s)\n"
		"  --json          {\"shadow\": true|false, ...}\n",
		SL_DEFAULT_CONTROL_SOCKET, SL_DEFAULT_PIN_DIR);
}

static int show(const char *pin_dir, bool json)
{
	struct sluice_settings c;
	struct sluice_stats gs;
	struct sl_maps m;
	bool on;

	if (ctl_open_maps(pin_dir, &m))
		return CTL_FAIL;
	if (sl_maps_config(&m, &c) || sl_maps_global_stats(&m, &gs)) {
		fprintf(stderr, "sluicectl shadow: cannot read %s/maps\n", pin_dir);
		sl_maps_close(&m);
		return CTL_FAIL;
	}
	sl_maps_close(&m);
	on = c.flags & SLUICE_CFG_SHADOW;
	if (json)
		printf("{\"shadow\":%s,\"shadow_passed\":%llu}\n", on ? "true" : "false",
		       (unsigned long long)gs.shadow_passed);
	else
		printf("shadow mode %s (%llu SYNs admitted that a gate refused)\n", on ? "on" : "off",
		       (unsigned long long)gs.shadow_passed);
	return CTL_OK;
}

int ctl_shadow(int argc, char **argv)
{
	static const struct option opts[] = {
		{"socket", required_argument, NULL, 's'},
		{"pin-dir", required_argument, NULL, 'p'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{},
	};
	const char *sock = SL_DEFAULT_CONTROL_SOCKET, *pin_dir = SL_DEFAULT_PIN_DIR, *arg;
	char *answer = NULL, req[16];
	json_t *root;
	bool json = false, ok;
	int c, err;

	optind = 1;
	while ((c = getopt_long(argc, argv, "s:p:jh", opts, NULL)) != -1) {
		switch (c) {
		case 's': sock = optarg; break;
		case 'p': pin_dir = optarg; break;
		case 'j': json = true; break;
		case 'h': usage(stdout); return CTL_OK;
		default: usage(stderr); return CTL_USAGE;
		}
	}
	if (optind == argc)
		return show(pin_dir, json);
	arg = argv[optind++];
	if ((strcmp(arg, "on") && strcmp(arg, "off")) || optind < argc) {
		fprintf(stderr, "sluicectl shadow: expected on or off, got '%s'\n", arg);
		return CTL_USAGE;
	}
	snprintf(req, sizeof(req), "shadow %s", arg);
	err = sl_control_request(sock, req, &answer);
	if (err) {
		fprintf(stderr, "sluicectl shadow: %s: %s (is sluiced running? --socket)\n", sock,
			strerror(-err));
		return CTL_FAIL;
	}
	root = json_loads(answer, 0, NULL);
	ok = root && json_is_true(json_object_get(root, "ok"));
	if (json)
		fputs(answer, stdout);
	else
		printf("sluiced: %s\n", root ? json_string_value(json_object_get(root, "message")) ?: "?" : answer);
	json_decref(root);
	free(answer);
	return ok ? CTL_OK : CTL_FAIL;
}
