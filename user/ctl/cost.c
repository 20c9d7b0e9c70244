// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * sluicectl cost: what sluice costs this host per connection, measured
 * now (issue 25: "what sluice costs per connection on a normal day is a
 * feature with a number").  Over an interval it holds the kernel's BPF
 * run-time statistics on, and divides the programs' run time and the
 * daemon's CPU time by the connections admitted meanwhile.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctl/ctl.h"
#include "ctl/daemon_paths.h"
#include "ctl/options.h"
#include "dataplane/prog_stats.h"
#include "lib/clock.h"
#include "lib/cost.h"
#include "lib/json_out.h"
#include "lib/task_cpu.h"

struct cost_opts {
	const char *config;
	const char *pin_dir;
	double interval;
	bool json;
};

static const struct sl_opt cost_options[] = {
	CTL_CONFIG(struct cost_opts, config),
	CTL_PIN_DIR(struct cost_opts, pin_dir),
	SL_ROW_NUMBER(SL_OPT_DOUBLE, 0, "window", struct cost_opts, interval, "SECONDS", 0.2, 3600,
		   "how long to measure (default 10)", 0),
	SL_ROW_RENAMED(0, "interval", "window"),
	CTL_JSON(struct cost_opts, json, "one JSON object: {\"seconds\", \"connections\", \"programs\": [...],\n"
		 "\"daemon\", \"bpf_ns_per_connection\", \"ns_per_connection\"}"),
	SL_ROW_END,
};

static const struct sl_opt_doc cost_doc = {
	.prog = "sluicectl", .command = "cost",
	.description =
		"What sluice costs this host per connection, measured now.  For SECONDS it\n"
		"holds the kernel's BPF run-time statistics on (BPF_ENABLE_STATS: they cost\n"
		"two clock reads a run, and go off again when it exits unless\n"
		"kernel.bpf_stats_enabled is 1), then divides each program's run time\n"
		"(sluice_xdp, sluice_sockops) and the daemon's CPU time (every thread,\n"
		"/proc/PID/task/*/schedstat) by the connections admitted meanwhile (every\n"
		"level).  The programs' figures include the hooks' own call and the\n"
		"statistics' clock reads, which `make bench` measures apart with empty\n"
		"hooks (docs/BENCHMARKS.md).  The daemon's share includes its ticks, which\n"
		"run whether connections come or not: at a low connection rate it is most\n"
		"of the figure.  A restart during the interval voids the measurement.\n"
		"With a terminal on stderr, a live line counts the connections so far.\n",
	.epilogue = "Exit status: 0 measured (even with no connection: the per-connection\n"
		    "figures are then 0); 1 nothing pinned, sluice restarted or stopped during\n"
		    "the interval, or the statistics cannot be turned on (root, or\n"
		    "CAP_SYS_ADMIN, is needed).\n",
};

/* Connections admitted so far, every level: by the data path, and by the
 * daemon re-injecting a held SYN (as status counts them). */
static uint64_t admitted_now(const struct sl_maps *m)
{
	uint64_t sum = 0;

	for (unsigned slot = 0; slot < SLUICE_MAX_LEVELS; slot++) {
		struct sluice_level_stats st;
		struct sluice_seats seats;

		if (!sl_maps_level_stats(m, slot, &st))
			sum += st.admitted;
		if (!sl_maps_seats(m, slot, &seats))
			sum += seats.reinjected;
	}
	return sum;
}

/* Everything at one moment, from maps opened anew (a daemon restarted
 * meanwhile pins new ones).  Only a missing pin is an error: the daemon
 * may be gone (its pid 0 then). */
static int read_now(const char *pin_dir, struct sl_cost_reading *r)
{
	struct sluice_heartbeat hb;
	struct sl_maps m;

	memset(r, 0, sizeof(*r));
	for (int i = 0; i < SL_COST_PROGS; i++) {
		struct sl_prog_stats ps;
		int err = sl_prog_stats_read(pin_dir, sl_cost_prog_names[i], &ps);

		if (err) {
			fprintf(stderr, "sluicectl cost: %s/progs/%s: %s (is sluiced running? --pin-dir)\n",
				pin_dir, sl_cost_prog_names[i], strerror(-err));
			return err;
		}
		r->prog[i].id = ps.id;
		r->prog[i].runs = ps.runs;
		r->prog[i].run_ns = ps.run_ns;
	}
	if (ctl_open_maps(pin_dir, &m))
		return -ENOENT;
	if (!sl_maps_heartbeat(&m, &hb) && hb.pid &&
	    !sl_task_cpu_ns("/proc", (pid_t)hb.pid, &r->daemon_ns))
		r->daemon_pid = hb.pid;
	r->admitted = admitted_now(&m);
	r->mono_ns = sl_mono_ns();
	sl_maps_close(&m);
	return 0;
}

/* A restart between the readings: their counts are of different programs
 * or processes, and no difference of them means anything. */
static bool restarted(const struct sl_cost *c, const struct sl_cost_reading *a,
		      const struct sl_cost_reading *b)
{
	bool any = c->daemon_replaced;

	for (int i = 0; i < SL_COST_PROGS; i++)
		any |= c->prog_replaced[i];
	if (!any)
		return false;
	fprintf(stderr, "sluicectl cost: sluice restarted or stopped during the interval (daemon pid %u -> %u, "
			"%s id %u -> %u): measure again\n", a->daemon_pid, b->daemon_pid, sl_cost_prog_names[0],
		a->prog[0].id, b->prog[0].id);
	return true;
}

static bool stats_on_by_sysctl(void)
{
	FILE *f = fopen("/proc/sys/kernel/bpf_stats_enabled", "re");
	int v = 0;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v == 1;
}

/* Sleep out the interval; with a terminal, one live line a second. */
static void wait_interval(const struct sl_maps *m, double seconds, uint64_t admitted0, bool live)
{
	unsigned long long end = sl_mono_ns() + (unsigned long long)(seconds * 1e9), now;

	while ((now = sl_mono_ns()) < end) {
		unsigned long long left = end - now, step = left < 1000000000ULL ? left : 1000000000ULL;
		struct timespec ts = {.tv_sec = (time_t)(step / 1000000000ULL),
				      .tv_nsec = (long)(step % 1000000000ULL)};

		if (live)
			fprintf(stderr, "\rmeasuring: %.0f s left, %llu connections admitted so far ",
				(double)left / 1e9, (unsigned long long)(admitted_now(m) - admitted0));
		nanosleep(&ts, NULL);
	}
	if (live)
		fprintf(stderr, "\r%60s\r", "");
}

static void print_json(const struct sl_cost *c, const struct sl_cost_reading *b, bool by_sysctl)
{
	struct json_out jo;

	jo_init(&jo, stdout, false);
	jo_obj_begin(&jo, NULL);
	jo_double(&jo, "seconds", c->seconds);
	jo_u64(&jo, "connections", c->connections);
	jo_double(&jo, "connections_per_second", c->seconds > 0 ? (double)c->connections / c->seconds : 0);
	jo_str(&jo, "stats_enabled_by", by_sysctl ? "sysctl" : "sluicectl");
	jo_arr_begin(&jo, "programs");
	for (int i = 0; i < SL_COST_PROGS; i++) {
		jo_obj_begin(&jo, NULL);
		jo_str(&jo, "name", sl_cost_prog_names[i]);
		jo_u64(&jo, "id", b->prog[i].id);
		jo_u64(&jo, "runs", c->prog[i].runs);
		jo_u64(&jo, "run_time_ns", c->prog[i].run_ns);
		jo_double(&jo, "runs_per_connection", c->prog[i].runs_per_conn);
		jo_double(&jo, "ns_per_run", c->prog[i].ns_per_run);
		jo_double(&jo, "ns_per_connection", c->prog[i].ns_per_conn);
		jo_obj_end(&jo);
	}
	jo_arr_end(&jo);
	jo_obj_begin(&jo, "daemon");
	jo_u64(&jo, "pid", b->daemon_pid);
	jo_u64(&jo, "cpu_ns", c->daemon_ns);
	jo_double(&jo, "ns_per_connection", c->daemon_ns_per_conn);
	jo_obj_end(&jo);
	jo_double(&jo, "bpf_ns_per_connection", c->bpf_ns_per_conn);
	jo_double(&jo, "ns_per_connection", c->ns_per_conn);
	jo_obj_end(&jo);
	jo_finish(&jo);
}

static void print_text(const struct sl_cost *c, const struct sl_cost_reading *b, bool by_sysctl)
{
	printf("over %.1f s: %llu connections admitted (%.0f/s); statistics on by %s\n", c->seconds,
	       (unsigned long long)c->connections, c->seconds > 0 ? (double)c->connections / c->seconds : 0,
	       by_sysctl ? "kernel.bpf_stats_enabled" : "sluicectl, for the interval");
	printf("%-16s %8s %12s %10s %11s %12s\n", "PROGRAM", "ID", "RUNS", "PER_CONN", "NS_PER_RUN",
	       "NS_PER_CONN");
	for (int i = 0; i < SL_COST_PROGS; i++) {
		printf("%-16s %8u %12llu %10.2f %11.0f %12.0f\n", sl_cost_prog_names[i], b->prog[i].id,
		       (unsigned long long)c->prog[i].runs, c->prog[i].runs_per_conn, c->prog[i].ns_per_run,
		       c->prog[i].ns_per_conn);
	}
	if (!b->daemon_pid)
		printf("%-16s %8s  not running: not counted\n", "sluiced", "-");
	else
		printf("%-16s %8u %12s %10s %11s %12.0f   (%.1f ms of CPU)\n", "sluiced", b->daemon_pid, "-",
		       "-", "-", c->daemon_ns_per_conn, (double)c->daemon_ns / 1e6);
	if (c->connections)
		printf("CPU per connection: %.2f us (BPF %.2f us, daemon %.2f us)\n", c->ns_per_conn / 1000,
		       c->bpf_ns_per_conn / 1000, c->daemon_ns_per_conn / 1000);
	else
		printf("no connection was admitted: nothing to divide by\n");
}

int ctl_cost(int argc, char **argv)
{
	struct cost_opts o = {.interval = 10};
	struct sl_cost_reading a, b;
	struct sl_opt_parsed parsed;
	bool by_sysctl;
	struct sl_maps m;
	struct sl_cost c;
	int rc, stats_fd = -1;

	rc = ctl_parse_options(&cost_doc, cost_options, &o, argc, argv, &parsed);
	if (rc != CTL_PARSE_RUN)
		return rc;
	if (ctl_daemon_paths("cost", o.config, &o.pin_dir, NULL))
		return CTL_FAIL;
	if (ctl_open_maps(o.pin_dir, &m)) /* for the live line */
		return CTL_FAIL;
	rc = CTL_FAIL;
	by_sysctl = stats_on_by_sysctl();
	if (!by_sysctl) {
		stats_fd = sl_prog_stats_enable();
		if (stats_fd < 0) {
			fprintf(stderr, "sluicectl cost: cannot turn the BPF run-time statistics on: %s "
					"(needs root; or set kernel.bpf_stats_enabled=1)\n", strerror(-stats_fd));
			goto out;
		}
	}
	if (read_now(o.pin_dir, &a))
		goto out;
	wait_interval(&m, o.interval, a.admitted, !o.json && isatty(STDERR_FILENO));
	if (read_now(o.pin_dir, &b))
		goto out;
	sl_cost_between(&a, &b, &c);
	if (restarted(&c, &a, &b))
		goto out;
	if (o.json)
		print_json(&c, &b, by_sysctl);
	else
		print_text(&c, &b, by_sysctl);
	rc = CTL_OK;
out:
	if (stats_fd >= 0)
		close(stats_fd);
	sl_maps_close(&m);
	return rc;
}
