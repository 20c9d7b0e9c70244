// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * sluicectl detach: take sluice off this host when no daemon runs.  What
 * `systemctl stop sluiced`, the package's removal and the Kubernetes
 * cleanup run, and what an operator runs after `sluiced --keep-attached`
 * or a crash.  Stopping twice is fine: nothing pinned is success.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ctl/ctl.h"
#include "ctl/daemon_paths.h"
#include "ctl/options.h"
#include "dataplane/detach.h"
#include "lib/json_out.h"

struct detach_opts {
	const char *config;
	const char *pin_dir;
	bool json;
};

static const struct sl_opt detach_options[] = {
	CTL_CONFIG(struct detach_opts, config),
	CTL_PIN_DIR(struct detach_opts, pin_dir),
	CTL_JSON(struct detach_opts, json, "{\"found\", \"xdp\": [{\"ifname\", \"mode\"}], \"root_slots\", \"sockops\", \"links\", \"pins_removed\", \"failed\"}"),
	SL_ROW_END,
};

static const struct sl_opt_doc detach_doc = {
	.prog = "sluicectl", .command = "detach",
	.max_args = 0,
	.description =
		"Take sluice off this host, when no sluiced runs: XDP comes off every\n"
		"interface of this network namespace that runs the pinned program (and only\n"
		"where it is still that program; a root program's array slot taken with\n"
		"xdpChain.rootArray is emptied), the pinned sock_ops link is detached, and\n"
		"every pin under the pin directory is removed, so the maps are freed.\n"
		"Connections then reach the service with nothing in front.\n\n"
		"A running sluiced holds the pin directory and is never pulled from under:\n"
		"stop it (SIGTERM without --keep-attached detaches by itself).  Nothing\n"
		"pinned is success, so it is safe to run twice; the systemd unit runs it\n"
		"after a stop that is not a restart, and the Debian package on removal.\n",
};

static void print_json(const struct sl_detach_report *r)
{
	struct json_out jo;

	jo_init(&jo, stdout, false);
	jo_obj_begin(&jo, NULL);
	jo_bool(&jo, "found", r->found);
	jo_arr_begin(&jo, "xdp");
	for (size_t i = 0; i < r->n_xdp; i++) {
		jo_obj_begin(&jo, NULL);
		jo_str(&jo, "ifname", r->xdp[i]);
		jo_str(&jo, "mode", r->xdp_mode[i]);
		jo_obj_end(&jo);
	}
	jo_arr_end(&jo);
	jo_u64(&jo, "root_slots", r->n_root_slots);
	jo_bool(&jo, "sockops", r->sockops);
	jo_u64(&jo, "links", r->n_links);
	jo_u64(&jo, "pins_removed", r->n_pins);
	jo_u64(&jo, "failed", r->n_failed);
	jo_obj_end(&jo);
	jo_finish(&jo);
}

static void print_table(const struct sl_detach_report *r, const char *pin_dir)
{
	if (!r->found) {
		printf("nothing to detach: %s does not exist\n", pin_dir);
		return;
	}
	for (size_t i = 0; i < r->n_xdp; i++)
		printf("XDP detached from %s (%s)\n", r->xdp[i], r->xdp_mode[i]);
	if (r->n_root_slots)
		printf("XDP: left %zu slot%s of a root program's array (xdpChain.rootArray)\n", r->n_root_slots,
		       r->n_root_slots == 1 ? "" : "s");
	else if (!r->n_xdp)
		printf("XDP: attached nowhere in this network namespace\n");
	printf("sock_ops: %s\n", r->sockops ? "link detached" : "no pinned link");
	printf("tc hand-off and drop tracepoints: %zu link%s detached\n", r->n_links,
	       r->n_links == 1 ? "" : "s");
	printf("%zu pins removed under %s%s\n", r->n_pins, pin_dir,
	       r->n_failed ? "" : "; sluice is off this host");
}

int ctl_detach(int argc, char **argv)
{
	struct detach_opts o = {0};
	struct sl_detach_report r;
	struct sl_opt_parsed parsed;
	int rc, err;

	rc = ctl_parse_options(&detach_doc, detach_options, &o, argc, argv, &parsed);
	if (rc != CTL_PARSE_RUN)
		return rc;
	if (ctl_daemon_paths("detach", o.config, &o.pin_dir, NULL))
		return CTL_FAIL;
	err = sl_detach_pinned(o.pin_dir, &r);
	if (err == -EBUSY) {
		fprintf(stderr, "sluicectl detach: a running sluiced holds %s; stop it instead "
				"(SIGTERM detaches unless it runs with --keep-attached)\n", o.pin_dir);
		return CTL_FAIL;
	}
	if (err) {
		fprintf(stderr, "sluicectl detach: %s: %s\n", o.pin_dir, strerror(-err));
		return CTL_FAIL;
	}
	if (o.json)
		print_json(&r);
	else
		print_table(&r, o.pin_dir);
	if (r.n_failed) {
		fprintf(stderr, "sluicectl detach: %zu pins or attachments under %s could not be removed\n",
			r.n_failed, o.pin_dir);
		return CTL_FAIL;
	}
	return CTL_OK;
}
