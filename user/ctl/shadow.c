// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * sluicectl shadow [on|off]: shadow mode computes every verdict and
 * enforces none (a safe way to see what a configuration would do to real
 * traffic).  Without an argument: the current mode, from the pinned maps.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/control.h"
#include "ctl/ctl.h"
#include "ctl/daemon_paths.h"
#include "ctl/options.h"

struct shadow_opts {
	const char *config;
	const char *socket;
	const char *pin_dir;
	bool json;
};

static const struct sl_opt shadow_options[] = {
	CTL_CONFIG(struct shadow_opts, config),
	CTL_SOCKET(struct shadow_opts, socket),
	CTL_PIN_DIR(struct shadow_opts, pin_dir),
	CTL_JSON(struct shadow_opts, json, "{\"shadow\": true|false, ...}"),
	SL_ROW_END,
};

static const struct sl_opt_doc shadow_doc = {
	.prog = "sluicectl", .command = "shadow",
	.args = "[on|off]",
	.max_args = 1,
	.description =
		"Shadow mode: the data path computes every verdict and counts it as usual\n"
		"(deferred, rejected, policy deferrals, failsafe), but enforces none: a SYN\n"
		"that would be deferred or reset is admitted and counted as shadow-passed.\n"
		"Seats then show the real concurrency, above the limits if need be.  Use it\n"
		"to see what a configuration would do before it does it.\n\n"
		"  on | off        switch it (asks sluiced; it holds until switched again, or\n"
		"                  until a reload whose file changes Server spec.shadow)\n"
		"  (no argument)   show the current mode, read from the pinned maps\n",
};

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
	struct shadow_opts o = {0};
	struct sl_opt_parsed parsed;
	char *answer = NULL;
	const char *arg;
	json_t *root;
	bool ok;
	int rc;

	rc = ctl_parse_options(&shadow_doc, shadow_options, &o, argc, argv, &parsed);
	if (rc != CTL_PARSE_RUN)
		return rc;
	if (ctl_daemon_paths("shadow", o.config, &o.pin_dir, &o.socket))
		return CTL_FAIL;
	if (parsed.first_arg == argc)
		return show(o.pin_dir, o.json);
	arg = argv[parsed.first_arg];
	if (strcmp(arg, "on") && strcmp(arg, "off")) {
		fprintf(stderr, "sluicectl shadow: expected on or off, got '%s'\n", arg);
		return CTL_USAGE;
	}
	if (ctl_request("shadow", o.socket, SL_CTL_SHADOW, arg, &answer))
		return CTL_FAIL;
	root = json_loads(answer, 0, NULL);
	ok = root && json_is_true(json_object_get(root, SL_OUTCOME_KEY(OK)));
	if (o.json)
		fputs(answer, stdout);
	else
		printf("sluiced: %s\n", root ? json_string_value(json_object_get(root, SL_OUTCOME_KEY(MESSAGE))) ?: "?" : answer);
	json_decref(root);
	free(answer);
	return ok ? CTL_OK : CTL_FAIL;
}
