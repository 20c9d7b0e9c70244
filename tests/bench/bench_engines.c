/*
 * Daemon engine throughput: QueueSet enqueue+dispatch cycles per second
 * with 1, 64 and 1024 queues, and shuffle-sharding deals per second, with
 * ratios to the single-FIFO QueueSet measured in the same run.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "queueset.h"
#include "shuffle.h"

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

static void on_dispatch(void *ctx, uint64_t id, uint64_t now)
{
	(void)ctx;
	(void)now;
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
	if (sl_qs_create(&qs, &cfg, CL, t, on_dispatch, NULL, why, sizeof(why))) {
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

int main(void)
{
	const uint64_t cycles = 2000000;
	double fifo = qs_cycles_per_sec(1, 1, cycles);
	double q64 = qs_cycles_per_sec(64, 8, cycles);
	double q1024 = qs_cycles_per_sec(1024, 6, cycles / 4);
	double d64 = deals_per_sec(64, 8, 5000000), d1024 = deals_per_sec(1024, 6, 5000000);

	printf("QueueSet: one cycle = arrival (queued) + completion + dispatch, CL %d, backlog >= 4 per queue\n", CL);
	printf("%-34s %14s %10s\n", "configuration", "cycles/s", "vs FIFO");
	printf("%-34s %14.0f %10s\n", "1 queue (FIFO, baseline)", fifo, "1.00x");
	printf("%-34s %14.0f %9.2fx\n", "64 queues, handSize 8", q64, q64 / fifo);
	printf("%-34s %14.0f %9.2fx\n", "1024 queues, handSize 6", q1024, q1024 / fifo);
	printf("\nDealer (spec/apf.md §2.3)\n");
	printf("%-34s %14.0f\n", "deals/s, 64 queues, hand 8", d64);
	printf("%-34s %14.0f\n", "deals/s, 1024 queues, hand 6", d1024);
	return 0;
}
