// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Daemon engine throughput: QueueSet enqueue+dispatch cycles per second
 * with 1, 64 and 1024 queues, and shuffle-sharding deals per second, with
 * ratios to the single-FIFO QueueSet measured in the same run.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/aimd.h"
#include "engine/loadsched.h"
#include "engine/queueset.h"
#include "lib/shuffle.h"

#define CL 64

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t rng = 0x123456789abcdefULL;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Executing ids in dispatch order (a ring), so completions go oldest first. */
static uint64_t ring[1 << 16];
static size_t head, tail;

/* What the last operation dispatched, taken as the daemon does. */
static void take_dispatched(struct sl_qs *qs)
{
	uint64_t id, at;

	while (sl_qs_next_dispatch(qs, &id, &at))
		ring[tail++ & 0xffff] = id;
}

/* One cycle: a new connection arrives (queued: all seats busy), the
 * oldest executing one completes, the dispatch loop starts the next. */
static double qs_cycles_per_sec(int32_t queues, uint32_t hand, uint64_t cycles)
{
	struct sl_qs_config cfg = {.queues = queues, .hand_size = hand, .queue_length_limit = 1u << 20,
				   .guess_ns = 1000000000ULL};
	struct sl_qs *qs;
	char why[128];
	uint64_t id = 1, t = 1, start, end;

	head = tail = 0;
	if (sl_qs_create(&qs, &cfg, CL, t, why, sizeof(why))) {
		fprintf(stderr, "bench: %s\n", why);
		exit(1);
	}
	for (int i = 0; i < CL; i++, id++)
		if (sl_qs_arrive(qs, t, id, 1, rnd()) == SL_QS_DISPATCHED)
			ring[tail++ & 0xffff] = id;
	/* A standing backlog of 4 waiting per queue (at least 256). */
	for (uint64_t i = 0; i < (uint64_t)(queues > 64 ? queues : 64) * 4; i++, id++)
		sl_qs_arrive(qs, t, id, 1, rnd());
	start = now_ns();
	for (uint64_t c = 0; c < cycles; c++, id++) {
		t += 1000;
		sl_qs_arrive(qs, t, id, 1, rnd());
		sl_qs_complete(qs, t, ring[head++ & 0xffff], 500000000ULL);
		take_dispatched(qs);
	}
	end = now_ns();
	sl_qs_free(qs);
	return (double)cycles / ((double)(end - start) / 1e9);
}

static double deals_per_sec(uint32_t deck, uint32_t hand, uint64_t n)
{
	uint32_t cards[SL_SHUFFLE_MAX_HAND], sink = 0;
	uint64_t start = now_ns(), end;

	for (uint64_t i = 0; i < n; i++) {
		sl_shuffle_deal(deck, hand, rnd(), cards);
		sink += cards[0];
	}
	end = now_ns();
	if (sink == 0xffffffff)
		printf(" ");
	return (double)n / ((double)(end - start) / 1e9);
}

/* Controller periods per second: one AIMD period (gradient, integrator, multiplier) per call. */
static double controller_steps_per_sec(uint64_t n)
{
	struct sl_aimd_params p;
	struct sl_aimd st;
	struct sl_aimd_out out;
	uint64_t start, end;
	double sink = 0;

	sl_aimd_params_default(&p);
	sl_aimd_init(&st, &p);
	start = now_ns();
	for (uint64_t i = 0; i < n; i++) {
		double signal = 100.0 + (double)(rnd() % 100);

		sl_aimd_step(&st, signal, 125.0, 0.9, &out);
		sink += out.load_multiplier;
	}
	end = now_ns();
	sl_aimd_free(&st);
	if (sink < 0)
		printf(" ");
	return (double)n / ((double)(end - start) / 1e9);
}

static uint64_t ls_admitted;

static void ls_on_admit(void *ctx, uint64_t id, uint64_t now)
{
	(void)ctx;
	(void)id;
	(void)now;
	ls_admitted++;
}

/* Workload scheduler admissions per second while throttled: arrivals over
 * n workloads (priorities 1..n) at 4x the fill rate, queued and admitted in
 * WFQ order as the bucket fills; counts admissions (immediate + queued).
 * delay: every workload with sluice's controlled delay (the defaults,
 * 100 ms in 1 s), as a configuration gets it; without, Aperture's. */
static double scheduler_admissions_per_sec(size_t n, uint64_t arrivals, bool delay)
{
	struct sl_ls_workload *w = calloc(n, sizeof(*w));
	struct sl_ls_params p = {.workloads = w, .n_workloads = n,
				 .default_workload = {.priority = 1, .tokens = 1, .queue_timeout_ns = SL_LS_NO_TIMEOUT}};
	struct sl_ls *ls;
	char why[128];
	uint64_t t = 1, start, end, step = 1000000; /* 1 ms between arrivals */

	for (size_t i = 0; i < n; i++)
		w[i] = (struct sl_ls_workload){.priority = (double)(i + 1), .tokens = 1,
					       .queue_timeout_ns = 5ULL * 1000000000ULL,
					       .delay_target_ns = delay ? 100000000ULL : 0,
					       .delay_interval_ns = delay ? 1000000000ULL : 0};
	if (sl_ls_create(&ls, &p, t, ls_on_admit, NULL, NULL, why, sizeof(why))) {
		fprintf(stderr, "bench: %s\n", why);
		exit(1);
	}
	/* Past the bootstrap window with a steady incoming rate of 1000/s. */
	for (uint64_t i = 0; i < 31000; i++, t += step)
		sl_ls_arrive(ls, t, i, (int)(i % n), SL_LS_TOKENS_AUTO, SL_LS_NO_TIMEOUT);
	sl_ls_set_multiplier(ls, t, 0.25, false);
	ls_admitted = 0;
	start = now_ns();
	for (uint64_t i = 0; i < arrivals; i++, t += step) {
		if (sl_ls_arrive(ls, t, 1000000 + i, (int)(rnd() % n), SL_LS_TOKENS_AUTO,
				 SL_LS_NO_TIMEOUT) == SL_LS_ADMITTED)
			ls_admitted++;
		sl_ls_tick(ls, t);
		if (i % 1000 == 0)
			sl_ls_set_multiplier(ls, t, 0.25, false);
	}
	end = now_ns();
	sl_ls_free(ls);
	free(w);
	return (double)ls_admitted / ((double)(end - start) / 1e9);
}

/* Many waiting flows: one head blocks (1e12 tokens) and `waiting` flows
 * queue behind it over 16 workloads.  One cycle = an arrival + either the
 * cancel of a random waiting flow (cancel) or, with client timeouts spread
 * over [waiting/2, 3 waiting/2] us at one arrival per us, the expiry of
 * about one flow (expire) + a tick.  Cycles per second. */
static double scheduler_waiting_cycles_per_sec(size_t waiting, uint64_t cycles, bool cancel)
{
	const size_t n = 16;
	struct sl_ls_workload w[16];
	struct sl_ls_params p = {.workloads = w, .n_workloads = n,
				 .default_workload = {.priority = 1, .tokens = 1, .queue_timeout_ns = SL_LS_NO_TIMEOUT}};
	uint64_t *live = calloc(waiting, sizeof(*live));
	uint64_t t = 1, start, end, id = 1, step = 1000; /* 1 us */
	struct sl_ls *ls;
	char why[128];

	for (size_t i = 0; i < n; i++)
		w[i] = (struct sl_ls_workload){.priority = (double)(i + 1), .tokens = 1,
					       .queue_timeout_ns = SL_LS_NO_TIMEOUT};
	if (!live || sl_ls_create(&ls, &p, t, NULL, NULL, NULL, why, sizeof(why))) {
		fprintf(stderr, "bench: cannot create\n");
		exit(1);
	}
	for (uint64_t i = 0; i < 31000; i++, t += 1000000)
		sl_ls_arrive(ls, t, id++, (int)(i % n), SL_LS_TOKENS_AUTO, SL_LS_NO_TIMEOUT);
	sl_ls_set_multiplier(ls, t, 0.25, false);
	sl_ls_arrive(ls, t, id++, -1, 1e12, SL_LS_NO_TIMEOUT); /* the head */
	for (size_t i = 0; i < waiting; i++, t += step) {
		uint64_t to = cancel ? SL_LS_NO_TIMEOUT :
				       10000000 + (waiting / 2 + rnd() % (waiting + 1)) * step;

		live[i] = id;
		sl_ls_arrive(ls, t, id++, (int)(rnd() % n), SL_LS_TOKENS_AUTO, to);
	}
	start = now_ns();
	for (uint64_t c = 0; c < cycles; c++, t += step) {
		if (cancel) {
			size_t k = rnd() % waiting;

			if (sl_ls_cancel(ls, t, live[k])) {
				fprintf(stderr, "bench: cancel failed\n");
				exit(1);
			}
			live[k] = id;
			sl_ls_arrive(ls, t, id++, (int)(rnd() % n), SL_LS_TOKENS_AUTO, SL_LS_NO_TIMEOUT);
		} else {
			sl_ls_arrive(ls, t, id++, (int)(rnd() % n), SL_LS_TOKENS_AUTO,
				     10000000 + (waiting / 2 + rnd() % (waiting + 1)) * step);
			sl_ls_tick(ls, t);
		}
	}
	end = now_ns();
	sl_ls_free(ls);
	free(live);
	return (double)cycles / ((double)(end - start) / 1e9);
}

int main(int argc, char **argv)
{
	const uint64_t cycles = 2000000;

	if (argc > 1) {
		bool help = !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h");

		fprintf(help ? stdout : stderr,
			"usage: bench_engines   (no options: the daemon's engines at full speed, each\n"
			"  against its own baseline in the same run: QueueSet cycles against a FIFO,\n"
			"  the shuffle-sharding dealer, the schedulers)\n");
		return help ? 0 : 2;
	}
	double fifo = qs_cycles_per_sec(1, 1, cycles);
	double q64 = qs_cycles_per_sec(64, 8, cycles);
	double q1024 = qs_cycles_per_sec(1024, 6, cycles / 4);
	double d64 = deals_per_sec(64, 8, 5000000), d1024 = deals_per_sec(1024, 6, 5000000);

	printf("QueueSet: one cycle = arrival (queued) + completion + dispatch, CL %d, backlog >= 4 per queue\n", CL);
	printf("%-34s %14s %10s\n", "configuration", "cycles/s", "vs FIFO");
	printf("%-34s %14.0f %10s\n", "1 queue (FIFO, baseline)", fifo, "1.00x");
	printf("%-34s %14.0f %9.2fx\n", "64 queues, handSize 8", q64, q64 / fifo);
	printf("%-34s %14.0f %9.2fx\n", "1024 queues, handSize 6", q1024, q1024 / fifo);
	printf("\nDealer (Kubernetes shufflesharding.go DealIntoHand)\n");
	printf("%-34s %14.0f\n", "deals/s, 64 queues, hand 8", d64);
	printf("%-34s %14.0f\n", "deals/s, 1024 queues, hand 6", d1024);

	printf("\nAIMD controller (Aperture aimd-load-scheduler.go)\n");
	printf("%-34s %14.0f\n", "periods/s", controller_steps_per_sec(5000000));

	{
		static const size_t sizes[] = {2, 16, 256};
		double plain[3], delayed[3];

		for (int i = 0; i < 3; i++) {
			plain[i] = scheduler_admissions_per_sec(sizes[i], 60000, false);
			delayed[i] = scheduler_admissions_per_sec(sizes[i], 60000, true);
		}
		printf("\nWorkload scheduler, throttled to 1/4 of a 1000/s arrival rate (Aperture workload-scheduler/scheduler.go)\n");
		printf("%-20s %14s %8s %22s %8s\n", "workloads", "admissions/s", "vs 2",
		       "with controlled delay", "vs 2");
		for (int i = 0; i < 3; i++)
			printf("%-20zu %14.0f %7.2fx %22.0f %7.2fx\n", sizes[i], plain[i], plain[i] / plain[0],
			       delayed[i], delayed[i] / plain[0]);
	}
	{
		static const size_t sizes[] = {1000, 10000, 100000};

		printf("\nWorkload scheduler, many waiting flows behind a blocked head, 16 workloads\n");
		printf("%-34s %14s %14s\n", "waiting flows", "cancel+arrive/s", "expire+arrive/s");
		for (size_t i = 0; i < 3; i++) {
			double c = scheduler_waiting_cycles_per_sec(sizes[i], 500000, true);
			double e = scheduler_waiting_cycles_per_sec(sizes[i], 500000, false);

			printf("%-34zu %14.0f %14.0f\n", sizes[i], c, e);
		}
	}
	return 0;
}
