// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The daemon's tick (Server spec.tick, 100 ms by default): the heartbeat,
 * the events read, admission's and the policies' time, the handshake
 * sweep, the seating decision, the refusal path's watch, the reconcile
 * with the kernel's sockets and the once-a-second report.
 */
#include <errno.h>
#include <bpf/libbpf.h>
#include <string.h>

#include "daemon/admission.h"
#include "daemon/daemon.h"
#include "daemon/metrics.h"
#include "daemon/policy_rt.h"
#include "daemon/reload_job.h"
#include "dataplane/settings.h"
#include "lib/clock.h"
#include "lib/log.h"

#define REPORT_INTERVAL_NS 1000000000ULL
#define HALFOPEN_INTERVAL_NS 1000000000ULL

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

void daemon_tick(struct daemon *d)
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
	daemon_sweep(d, now, false);
	if (now - d->last_halfopen_ns >= HALFOPEN_INTERVAL_NS) {
		d->last_halfopen_ns = now;
		/* A level that moved to the ACK: its half-open seats older
		 * than minTimeout go now (a late ACK is seated there), not at
		 * the next sweep, and its queue drains with them. */
		if (sl_halfopen_rt_step(&d->halfopen, &d->dp, &d->cfg->server, now) > 0)
			daemon_sweep(d, now, true);
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

