// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The daemon's start-up and stop, in the order that keeps the host safe:
 * the control socket before anything changes on the host, the data path
 * loaded and its maps adopted, the configuration written and the heartbeat
 * fresh before the programs attach, privileges dropped once everything is
 * open; and on the way out, the loop's parts closed before the data path
 * is detached (or, for a planned restart, left attached).
 */
#include <errno.h>
#include <bpf/libbpf.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "daemon/admission.h"
#include "daemon/control.h"
#include "daemon/daemon.h"
#include "daemon/metrics.h"
#include "daemon/policy_rt.h"
#include "daemon/privileges.h"
#include "daemon/reload_job.h"
#include "dataplane/settings.h"
#include "lib/cgroup_path.h"
#include "lib/clock.h"
#include "lib/log.h"

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

int daemon_start(struct daemon *d)
{
	struct sl_dataplane_opts dpo = {0};
	struct sl_diags diags = SL_DIAGS_INIT;
	int err = 0;

	if (geteuid() != 0)
		pr_warn("not running as root: loading BPF will most likely fail");
	if (d->cfg->server.read_group) {
		struct group *g = getgrnam(d->cfg->server.read_group);

		if (!g) {
			pr_err("%s: Server spec.readGroup: no group '%s' on this host (groupadd --system %s)",
			       d->opts.config_path, d->cfg->server.read_group, d->cfg->server.read_group);
			return -ENOENT;
		}
		d->read_gid = (int)g->gr_gid;
	}
	/* From the first change to the host on, a stop waits for the loop;
	 * until here (reading the configuration, which could be slow or
	 * stuck) it ends the daemon at once (issue 26). */
	err = daemon_block_signals();
	if (err) {
		pr_err("cannot block signals: %s", strerror(-err));
		return err;
	}
	{
		/* Before the data path: a socket that cannot be ours changes
		 * nothing on the host. */
		char why[256];

		d->control_fd = sl_control_listen(d->opts.control_path, d->read_gid, why, sizeof(why));
		if (d->control_fd < 0) {
			pr_err("control socket %s: %s", d->opts.control_path, why);
			return d->control_fd;
		}
		d->control_listening = true;
	}

	dpo.pin_dir = d->opts.pin_dir;
	dpo.ifnames = d->opts.ifnames;
	dpo.n_ifnames = d->opts.n_ifnames;
	dpo.xdp_generic = d->opts.xdp_generic;
	dpo.veth_peer_xdp = d->opts.veth_peer_xdp;
	dpo.cgroup = d->opts.cgroup;
	dpo.force = d->opts.force;
	dpo.conn_table_size = d->cfg->server.table_sizes.connections;
	dpo.class_table_size = d->cfg->server.table_sizes.classes;
	dpo.read_gid = d->read_gid;
	dpo.xdp_next = d->cfg->server.xdp_chain.next;
	dpo.root_array = d->cfg->server.xdp_chain.root_array;
	dpo.root_slot = d->cfg->server.xdp_chain.slot;
	err = sl_dataplane_start(&d->dp, &dpo);
	if (err)
		return err;
	d->dp_started = true;

	{
		uint8_t key[16];

		/* A per-boot random flow-hash key: clients cannot aim at queues. */
		if (getrandom(key, sizeof(key), 0) != sizeof(key))
			memset(key, 0x5a, sizeof(key));
		err = sl_adm_create(&d->adm, &d->dp, key, sl_mono_ns());
		if (!err) {
			struct sl_policy_hooks hooks;

			sl_adm_policy_hooks(d->adm, &hooks);
			err = sl_policies_create(&d->policies, &d->dp, &hooks);
		}
		if (!err)
			sl_adm_set_policies(d->adm, d->policies);
		if (err) {
			pr_err("admission: %s", strerror(-err));
			return err;
		}
	}
	d->shadow = d->cfg->server.shadow;
	d->census.n = SLUICE_FS_STATS;
	d->census.conns = calloc(d->census.n, sizeof(*d->census.conns));
	d->census.seats = calloc(d->census.n, sizeof(*d->census.seats));
	if (!d->census.conns || !d->census.seats || sl_expiry_init(&d->expiry, d->census.n)) {
		free(d->census.conns);
		free(d->census.seats);
		d->census.conns = d->census.seats = NULL; /* the executing gauges stay 0 */
	}
	err = daemon_keep_gate_policies(d);
	if (!err)
		err = daemon_apply_config(d, d->cfg, &diags);
	sl_diags_free(&diags);
	d->last_reload_ok = !err;
	d->last_reload_ok_at = err ? 0 : sl_wall_s();
	/* The heartbeat before the programs: adopted maps carry the dead
	 * daemon's, and the new XDP program would hand its first SYNs to the
	 * failsafe. */
	if (!err)
		err = sl_write_heartbeat(&d->dp.maps, 0);
	if (!err)
		daemon_reconcile_all(d, "on start");
	if (!err)
		err = sl_dataplane_attach(&d->dp, &dpo);
	/* Every socket of the host is under a root: only another cgroup can
	 * miss the service's. */
	if (!err && !sl_cgroup2_is_root(d->dp.cgroup))
		sl_halfopen_rt_watch_sight(&d->halfopen, d->dp.cgroup);
	if (!err)
		err = daemon_setup_loop(d);
	if (!err && !d->opts.keep_privileges) {
		char why[128];

		/* Everything is loaded, attached and open: what is left needs
		 * no more than this. */
		err = sl_privileges_drop(why, sizeof(why));
		if (err)
			pr_err("drop privileges: %s (--keep-privileges runs without dropping)", why);
	}
	if (err) {
		pr_err("start-up failed: %s", strerror(-err));
		return err;
	}
	pr_info("protecting %s (XDP %s, sock_ops on %s), pins in %s, fail mode %s", d->dp.ifnames,
		d->opts.xdp_generic ? "generic" : "native", d->dp.cgroup, d->dp.pin_dir,
		sl_fail_mode_name(d->cfg->server.fail_mode));
	daemon_say_enforcement(d);
	snprintf(d->status, sizeof(d->status), "protecting %s (XDP %s), fail mode %s", d->dp.ifnames,
		 d->opts.xdp_generic ? "generic" : "native",
		 sl_fail_mode_name(d->cfg->server.fail_mode));
	sl_svcmgr_ready(&d->svcmgr, d->status);
	return 0;
}

void daemon_stop(struct daemon *d, int err)
{
	if (d->dp_started) {
		sl_sock_dump_abort(&d->sock_dump);
		sl_metrics_close(d->metrics);
		ring_buffer__free(d->events);
		sl_policies_free(d->policies);
		sl_adm_free(d->adm);
		free(d->census.conns);
		free(d->census.seats);
		sl_expiry_free(&d->expiry);
		sl_config_watch_close(&d->watch);
		if (d->job) {
			struct sl_reload_result r;

			sl_reload_job_finish(d->job, &r); /* waits: it writes the maps */
			sl_reload_result_free(&r);
		}
		sl_diags_free(&d->outcome_diags);
		close_fd(&d->sig_fd);
		close_fd(&d->timer_fd);
		sl_reqsrv_close(d->control);
		close_fd(&d->epoll_fd);
		/* Only a clean stop keeps the programs attached: after a
		 * failed start nothing of ours is left running. */
		sl_dataplane_stop(&d->dp, d->opts.keep_attached && !err ? SL_STOP_KEEP_ATTACHED :
					 d->opts.keep_maps ? SL_STOP_KEEP_MAPS : SL_STOP_REMOVE);
		if (!err)
			pr_info("stopped%s", d->opts.keep_attached ? "; XDP and sock_ops left attached, pins kept"
					     : d->opts.keep_maps ? "; maps kept pinned"
					     : "; nothing left attached or pinned");
	}
	close_fd(&d->control_fd);
	if (d->control_listening)
		unlink(d->opts.control_path);
	sl_config_free(d->cfg);
	sl_compiled_free(&d->classes);
}
