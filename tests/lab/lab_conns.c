/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * lab_conns: a large connection table for the daemon's sweeps, and a
 * stopwatch on its heartbeat, for the hardening tests (issue 26: a sweep
 * over a million entries must never make the heartbeat late).
 *
 *   lab_conns fill --pin-dir D --count N --level NAME [--stale K]
 *       writes N entries into D/maps/sl_conns (bpf_map_update_batch):
 *       N - K established just now, K admitted an hour ago (the
 *       handshake sweep expires them).  They hold no seats and no policy
 *       slot, so expiring or reconciling them changes no count but the
 *       level's expired total.  Sources are 198.19.0.0/16, ports from
 *       1024, the destination 198.18.0.1:1 (no service listens there).
 *   lab_conns heartbeat --pin-dir D --seconds S [--json]
 *       reads D/maps/sl_heartbeat every millisecond for S seconds and
 *       reports the oldest it saw it (now - its mono_ns: what the BPF
 *       failsafe compares with heartbeatTimeout) and how many ticks went by.
 *
 * Exit 0, 1 on a runtime failure, 2 on a usage error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sluice_abi.h"

#define PROG "lab_conns"
#include "lab_cli.h"

#define FILL_BATCH 65536

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int open_map(const char *pin_dir, const char *name)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/maps/%s", pin_dir, name);
	fd = bpf_obj_get(path);
	if (fd < 0) {
		fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno));
		exit(1);
	}
	return fd;
}

/* Entry i: source 198.19.(i / 64512 / 256).(i / 64512 % 256)... spread
 * over addresses and ports so no two are the same 4-tuple. */
static void key_of(uint64_t i, struct sluice_conn_key *k)
{
	uint32_t addr = (198u << 24) | (19u << 16) | (uint32_t)(i / 64512);
	uint16_t port = (uint16_t)(1024 + i % 64512);

	memset(k, 0, sizeof(*k));
	k->saddr[10] = k->saddr[11] = 0xff; /* v4-mapped */
	k->saddr[12] = addr >> 24;
	k->saddr[13] = addr >> 16;
	k->saddr[14] = addr >> 8;
	k->saddr[15] = addr;
	k->daddr[10] = k->daddr[11] = 0xff;
	k->daddr[12] = 198;
	k->daddr[13] = 18;
	k->daddr[15] = 1;
	k->sport = htons(port);
	k->dport = htons(1);
	k->family = 4;
}

/* The slot of the level named name, from D/maps/sl_levels. */
static unsigned level_slot(const char *pin_dir, const char *name)
{
	int fd = open_map(pin_dir, "sl_levels");
	struct sluice_level lvl;

	for (__u32 slot = 0; slot < SLUICE_MAX_LEVELS; slot++)
		if (!bpf_map_lookup_elem(fd, &slot, &lvl) && lvl.type &&
		    !strncmp(lvl.name, name, sizeof(lvl.name))) {
			close(fd);
			return slot;
		}
	fprintf(stderr, PROG ": no level named '%s' in %s\n", name, pin_dir);
	exit(1);
}

static int fill(const char *pin_dir, long count, long stale, unsigned level)
{
	int fd = open_map(pin_dir, "sl_conns");
	struct sluice_conn_key *keys = calloc(FILL_BATCH, sizeof(*keys));
	struct sluice_conn *vals = calloc(FILL_BATCH, sizeof(*vals));
	uint64_t now = mono_ns(), hour = 3600ULL * 1000000000ULL;
	long done = 0;
	LIBBPF_OPTS(bpf_map_batch_opts, opts);

	if (!keys || !vals) {
		fprintf(stderr, PROG ": out of memory\n");
		return 1;
	}
	while (done < count) {
		__u32 n = 0;

		for (; n < FILL_BATCH && done + n < count; n++) {
			long i = done + n;
			struct sluice_conn *c = &vals[n];

			key_of((uint64_t)i, &keys[n]);
			memset(c, 0, sizeof(*c));
			c->level = (__u32)level;
			c->schema = 0xffff; /* no FlowSchema: counted by no census */
			if (i < stale) {
				c->state = SLUICE_CONN_ADMITTED;
				c->admitted_ns = now > hour ? now - hour : 1;
			} else {
				c->state = SLUICE_CONN_ESTABLISHED;
				c->admitted_ns = c->established_ns = now;
			}
		}
		if (bpf_map_update_batch(fd, keys, vals, &n, &opts)) {
			fprintf(stderr, PROG ": sl_conns: %ld of %ld written: %s\n", done + (long)n,
				count, strerror(errno));
			return 1;
		}
		done += n;
	}
	printf("{\"written\": %ld, \"stale\": %ld}\n", done, stale < count ? stale : count);
	free(keys);
	free(vals);
	close(fd);
	return 0;
}

static int heartbeat(const char *pin_dir, double seconds, bool json)
{
	int fd = open_map(pin_dir, "sl_heartbeat");
	uint64_t end = mono_ns() + (uint64_t)(seconds * 1e9), max_age = 0, first_seq = 0;
	struct sluice_heartbeat hb;
	unsigned long samples = 0;
	__u32 zero = 0;

	while (mono_ns() < end) {
		uint64_t now;

		if (bpf_map_lookup_elem(fd, &zero, &hb)) {
			warn_errno("sl_heartbeat");
			return 1;
		}
		now = mono_ns();
		if (!samples++)
			first_seq = hb.seq;
		if (hb.mono_ns && now > hb.mono_ns && now - hb.mono_ns > max_age)
			max_age = now - hb.mono_ns;
		usleep(1000);
	}
	if (json)
		printf("{\"seconds\": %g, \"samples\": %lu, \"max_age_ms\": %.1f, \"ticks\": %llu}\n",
		       seconds, samples, (double)max_age / 1e6,
		       (unsigned long long)(hb.seq - first_seq));
	else
		printf("%lu samples in %g s: the heartbeat was at most %.1f ms old; %llu ticks\n",
		       samples, seconds, (double)max_age / 1e6,
		       (unsigned long long)(hb.seq - first_seq));
	close(fd);
	return 0;
}

static void help(void)
{
	printf("usage: lab_conns fill --pin-dir DIR --count N --level NAME [--stale K]\n"
	       "       lab_conns heartbeat --pin-dir DIR --seconds S [--json]\n"
	       "\n"
	       "fill       write N entries into DIR/maps/sl_conns: K admitted an hour ago\n"
	       "           (the handshake sweep expires them), the rest established now;\n"
	       "           none holds a seat; all are the level NAME's.  Sources\n"
	       "           198.19.0.0/16.\n"
	       "heartbeat  read DIR/maps/sl_heartbeat every millisecond for S seconds and\n"
	       "           report the oldest it was seen (what the failsafe compares with\n"
	       "           heartbeatTimeout) and the ticks that went by.\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"pin-dir", required_argument, NULL, 'd'},
		{"count", required_argument, NULL, 'n'},
		{"stale", required_argument, NULL, 'k'},
		{"level", required_argument, NULL, 'l'},
		{"seconds", required_argument, NULL, 's'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *cmd, *pin_dir = NULL;
	long count = -1, stale = 0;
	const char *level = NULL;
	double seconds = -1;
	bool json = false;
	int c;

	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		help();
		return 0;
	}
	if (argc < 2 || argv[1][0] == '-')
		usage_error("a command first: fill or heartbeat");
	cmd = argv[1];
	optind = 2;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'd': pin_dir = optarg; break;
		case 'n': count = parse_long("count", optarg, 1, 16777216); break;
		case 'k': stale = parse_long("stale", optarg, 0, 16777216); break;
		case 'l': level = optarg; break;
		case 's': seconds = parse_double("seconds", optarg, 0.01, 600); break;
		case 'j': json = true; break;
		case 'h': help(); return 0;
		default: report_bad_option(argv[optind - 1]);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (!pin_dir)
		usage_error("--pin-dir is required");
	if (!strcmp(cmd, "fill")) {
		if (count < 0)
			usage_error("fill: --count is required");
		if (!level)
			usage_error("fill: --level is required");
		return fill(pin_dir, count, stale, level_slot(pin_dir, level));
	}
	if (!strcmp(cmd, "heartbeat")) {
		if (seconds < 0)
			usage_error("heartbeat: --seconds is required");
		return heartbeat(pin_dir, seconds, json);
	}
	usage_error("unknown command '%s' (fill or heartbeat)", cmd);
}
