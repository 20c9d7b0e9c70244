// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * sluiced: the sluice daemon.  Loads the data path, writes the
 * configuration into its maps, keeps the heartbeat, returns the seats of
 * handshakes that never completed, and reports what happens.
 *
 * main is the order of things: options (daemon_opts.c), the configuration
 * (reload.c), start-up (startup.c), the loop (loop.c, whose timer runs the
 * tick: tick.c) and the stop (startup.c).
 */
#include <stdlib.h>

#include "daemon/daemon.h"
#include "daemon/journal.h"
#include "lib/log.h"

int main(int argc, char **argv)
{
	struct daemon d = {.sig_fd = -1, .timer_fd = -1, .epoll_fd = -1, .control_fd = -1,
			   .watch = {.fd = -1}, .read_gid = -1,
			   .sock_dump = SL_SOCK_DUMP_INIT};
	struct sl_diags diags = SL_DIAGS_INIT;
	int err;

	sl_log_init("sluiced", SL_LOG_INFO);
	d.opts.log_level = SL_LOG_INFO;
	err = daemon_parse_args(argc, argv, &d.opts);
	if (err)
		return err == DAEMON_ANSWERED ? 0 : err == DAEMON_ANSWERED_NO ? 1 : 2;
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

	err = daemon_complete_opts(&d.opts, d.cfg);
	if (!err)
		err = daemon_start(&d);
	if (!err)
		err = daemon_run_loop(&d);
	daemon_stop(&d, err);
	return err ? 1 : 0;
}
