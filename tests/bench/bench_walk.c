// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The daemon's walk of the connection table (dataplane/expiry.c
 * sl_conns_each: the handshake sweep and the census at every sweep, the
 * flows holding seats at a stall verdict) at N tracked connections.  The
 * baseline, measured in the same run, is the walk one key at a time
 * (bpf_map_get_next_key and a lookup per entry, two syscalls each), which
 * is what the daemon did before; sluice reads the table in batches.
 * Reports, asserts nothing (docs/BENCHMARKS.md).
 *
 *   bench_walk [N ...]     default 1000 10000 100000
 */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dataplane/expiry.h"
#include "dataplane/dataplane.h"
#include "sluice.skel.h"

#define TABLE 131072
#define RUNS 5

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int count_one(void *ctx, const struct sluice_conn_key *k, const struct sluice_conn *c)
{
	(void)k;
	*(size_t *)ctx += c->seats;
	return 0;
}

static size_t walk_by_key(int fd)
{
	struct sluice_conn_key key, next;
	struct sluice_conn c;
	void *prev = NULL;
	size_t seats = 0;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		if (!bpf_map_lookup_elem(fd, &next, &c))
			seats += c.seats;
		key = next;
		prev = &key;
	}
	return seats;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void fill(int fd, unsigned from, unsigned to)
{
	struct sluice_conn c = { .level = 1, .seats = 1, .state = SLUICE_CONN_ESTABLISHED };
	struct sluice_conn_key k;

	memset(&k, 0, sizeof(k));
	k.saddr[0] = 0xfd;
	k.family = 6;
	k.dport = htons(5432);
	for (unsigned i = from; i < to; i++) {
		memcpy(k.saddr + 12, &i, 4);
		if (bpf_map_update_elem(fd, &k, &c, BPF_ANY)) {
			perror("bench_walk: filling sl_conns");
			exit(1);
		}
	}
}

int main(int argc, char **argv)
{
	unsigned sizes[16] = { 1000, 10000, 100000 }, nsizes = 3, have = 0;
	struct sl_dataplane dp = { 0 };
	struct sluice *skel;
	int fd;

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: bench_walk [N ...]   (root; N <= %u, default 1000 10000 100000)\n", TABLE);
		return 0;
	}
	if (argc > 1) {
		nsizes = 0;
		for (int i = 1; i < argc && nsizes < 16; i++) {
			sizes[nsizes] = (unsigned)strtoul(argv[i], NULL, 10);
			if (!sizes[nsizes] || sizes[nsizes] > TABLE) {
				fprintf(stderr, "bench_walk: N must be 1..%u: %s\n", TABLE, argv[i]);
				return 2;
			}
			nsizes++;
		}
	}
	skel = sluice__open();
	if (!skel || bpf_map__set_max_entries(skel->maps.sl_conns, TABLE) || sluice__load(skel)) {
		fprintf(stderr, "bench_walk: cannot load the BPF object (root?)\n");
		return 1;
	}
	fd = bpf_map__fd(skel->maps.sl_conns);
	dp.skel = skel;
	dp.maps.fd[SL_MAP_CONNS] = fd;

	printf("# walk of sl_conns (table of %u): median of %d walks\n", TABLE, RUNS);
	printf("%10s %14s %14s %12s %8s\n", "conns", "by key (ms)", "batched (ms)", "ns/conn", "speed-up");
	for (unsigned s = 0; s < nsizes; s++) {
		double by_key[RUNS], batched[RUNS];
		size_t a = 0, b;

		if (sizes[s] > have) {
			fill(fd, have, sizes[s]);
			have = sizes[s];
		}
		for (int r = 0; r < RUNS; r++) {
			double t0 = now_s();

			b = walk_by_key(fd);
			by_key[r] = now_s() - t0;
			a = 0;
			t0 = now_s();
			if (sl_conns_each(&dp.maps, count_one, &a)) {
				fprintf(stderr, "bench_walk: the batched walk failed\n");
				return 1;
			}
			batched[r] = now_s() - t0;
			if (a != b || a < sizes[s]) {
				fprintf(stderr, "bench_walk: the walks disagree (%zu, %zu)\n", a, b);
				return 1;
			}
		}
		qsort(by_key, RUNS, sizeof(double), cmp_double);
		qsort(batched, RUNS, sizeof(double), cmp_double);
		printf("%10zu %14.2f %14.2f %12.0f %7.1fx\n", a, by_key[RUNS / 2] * 1e3,
		       batched[RUNS / 2] * 1e3, batched[RUNS / 2] * 1e9 / (double)a,
		       by_key[RUNS / 2] / batched[RUNS / 2]);
	}
	sluice__destroy(skel);
	return 0;
}
