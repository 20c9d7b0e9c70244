// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What GET /metrics writes, and the probes' verdicts (daemon.h): the data
 * path's global counters and the listeners' here, then each runtime's own
 * (admission, half-open, policies).  The listener is metrics.c.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "daemon/admission.h"
#include "daemon/metrics.h"
#include "daemon/policy_rt.h"
#include "dataplane/prog_stats.h"
#include "lib/clock.h"
#include "lib/prom.h"
#include "lib/task_cpu.h"
#include "lib/version.h"

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
		C(refused, "Clients from the network closed at once: every slot they may take "
			   "is held by this host's own (the probes' reserve)."),
#undef C
	};
	struct sl_reqsrv_stats st[2];
	const char *listener[2] = {"control", "metrics"};
	struct sl_metrics_pages pages;

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
	sl_metrics_pages(d->metrics, &pages);
	sl_prom_family(f, "metrics_pages_served_total", SL_PROM_COUNTER,
		       "GET /metrics answered with a page.");
	sl_prom_sample_u64(f, "metrics_pages_served_total", pages.served, NULL);
	sl_prom_family(f, "metrics_pages_rendered_total", SL_PROM_COUNTER,
		       "Pages rendered for them (at most one per 10 ms; the rest are copies).");
	sl_prom_sample_u64(f, "metrics_pages_rendered_total", pages.rendered, NULL);
}

/* What sluice costs (issue 25): the programs' kernel statistics, counted
 * only while run-time statistics are on (kernel.bpf_stats_enabled=1, or a
 * `sluicectl cost` measuring), and the daemon's own CPU time; divided by
 * the rate of admissions, the CPU a connection costs. */
static void render_cost(FILE *f, const struct daemon *d)
{
	struct sl_prog_stats ps[SL_COST_PROGS];
	uint64_t cpu_ns;

	if (!sl_dataplane_prog_stats(&d->dp, ps)) {
		sl_prom_family(f, "bpf_program_runs_total", SL_PROM_COUNTER,
			       "Runs of sluice's BPF programs, counted while kernel.bpf_stats_enabled is 1.");
		for (int i = 0; i < SL_COST_PROGS; i++)
			sl_prom_sample_u64(f, "bpf_program_runs_total", ps[i].runs, "program",
					   sl_cost_prog_names[i], NULL);
		sl_prom_family(f, "bpf_program_run_seconds_total", SL_PROM_COUNTER,
			       "CPU time in sluice's BPF programs, counted while kernel.bpf_stats_enabled is 1.");
		for (int i = 0; i < SL_COST_PROGS; i++)
			sl_prom_sample(f, "bpf_program_run_seconds_total", (double)ps[i].run_ns / 1e9, "program",
				       sl_cost_prog_names[i], NULL);
	}
	if (!sl_task_cpu_ns("/proc", getpid(), &cpu_ns)) {
		sl_prom_family(f, "daemon_cpu_seconds_total", SL_PROM_COUNTER,
			       "CPU time sluiced has run, every thread (schedstat).");
		sl_prom_sample(f, "daemon_cpu_seconds_total", (double)cpu_ns / 1e9, NULL);
	}
}

/* GET /metrics: the data path's global counters, then per level and per
 * policy (admission.c, policy_rt.c). */
void daemon_render_metrics(void *ctx, FILE *f)
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
		G(failsafe_static, "SYNs judged against their level's limit by the kernel alone (stale heartbeat, failMode static)."),
		G(static_sweeps, "Runs of the kernel's half-open sweep while no daemon runs (failMode static)."),
		G(static_expired, "Half-open connections the kernel's sweep expired (failMode static)."),
		G(static_walks, "Runs of the kernel's half-open sweep that walked the whole connection table (failMode static)."),
		G(conn_table_full, "Admissions that found the connection table full."),
		G(events_lost, "Ring buffer events suppressed or not reserved."),
		G(rst_failed, "RSTs the data path could not build (SYN dropped; a RST the driver dropped: interface_refusals_lost_total, one the daemon could not send: level_reset_failed_total)."),
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
		G(closes_quiet, "Closes counted in the data path alone: no level waited and no policy took the sample, so no event woke the daemon."),
		G(martians, "SYNs with a loopback source on a device (spoofed): passed to the kernel, which drops them, never seated."),
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
	/* How full the connection table is, as the last whole sweep found it
	 * (the alert "connection table near full" divides the two). */
	sl_prom_single(f, "connection_table_entries", SL_PROM_GAUGE,
		       "Tracked connections the last complete sweep of the connection table found.",
		       d->expiry.last_entries);
	sl_prom_single(f, "connection_table_size", SL_PROM_GAUGE,
		       "The connection table's capacity (Server spec.tableSizes.connections).",
		       sl_conns_capacity(&d->dp.maps));
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
	render_cost(f, d);
	sl_halfopen_rt_metrics(&d->halfopen, f);
	sl_tx_path_rt_metrics(&d->tx_path, &d->dp, f);
	sl_adm_metrics(d->adm, f);
	sl_policies_metrics(d->policies, f, now);
}

/*
 * The probes.  Alive (/healthz): the loop answers, and the heartbeat it
 * writes is younger than heartbeatTimeout, so the data path is not on its
 * failsafe.  Ready (/readyz): alive, with a configuration applied.
 */
int daemon_health(void *ctx, bool ready, char *why, size_t why_len)
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

