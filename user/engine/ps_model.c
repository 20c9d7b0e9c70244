// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* A processor-sharing service in closed loop.  See ps_model.h. */
#include "engine/ps_model.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Every job in service progresses at the same rate (its share of the
 * cores) and needs the same work, so they finish in the order they came:
 * a FIFO over the service's attained work (virtual time), O(1) a step
 * whatever the pile-up. */
struct psm_job {
	double v_start;    /* the service's attained work when it entered, ms */
	uint64_t admitted; /* when it entered the service */
};

struct psm_ring {
	void *v;
	size_t head, tail, cap, size; /* size: of an element */
};

struct sl_psm {
	struct sl_psm_params p;
	struct sl_sg *sg;
	struct psm_ring jobs;  /* struct psm_job, in service */
	struct psm_ring queue; /* uint64_t arrival times, waiting for the limit */
	double v;              /* work each job in service has had since the start, ms */
	uint64_t rng;
	uint64_t arrived, refused, completed;
};

static size_t ring_len(const struct psm_ring *r) { return r->tail - r->head; }

static void *ring_at(const struct psm_ring *r, size_t i)
{
	return (char *)r->v + (i % r->cap) * r->size;
}

/* A slot at the tail (the ring doubles when full), or NULL. */
static void *ring_push(struct psm_ring *r)
{
	if (ring_len(r) == r->cap) {
		size_t ncap = r->cap ? 2 * r->cap : 1024;
		char *nv = calloc(ncap, r->size);

		if (!nv)
			return NULL;
		for (size_t i = r->head; i < r->tail; i++)
			memcpy(nv + (i - r->head) * r->size, ring_at(r, i), r->size);
		free(r->v);
		r->v = nv;
		r->tail -= r->head;
		r->head = 0;
		r->cap = ncap;
	}
	return ring_at(r, r->tail++);
}

int sl_psm_create(struct sl_psm **out, const struct sl_psm_params *p, struct sl_sg *sg)
{
	struct sl_psm *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->p = *p;
	m->sg = sg;
	m->rng = p->seed ? p->seed : 42;
	m->jobs.size = sizeof(struct psm_job);
	m->queue.size = sizeof(uint64_t);
	*out = m;
	return 0;
}

void sl_psm_free(struct sl_psm *m)
{
	if (!m)
		return;
	free(m->jobs.v);
	free(m->queue.v);
	free(m);
}

/* 64-bit LCG (Knuth's MMIX constants): uniform in [0, 1). */
static double uniform(struct sl_psm *m)
{
	m->rng = m->rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(m->rng >> 11) / 9007199254740992.0;
}

/* Arrivals in one step: Poisson with mean rate x step (Knuth's method,
 * exact for the small means of a millisecond). */
static int arrivals(struct sl_psm *m, double rate)
{
	double l = exp(-rate * ((double)SL_PSM_STEP_NS / 1e9)), prod = 1;
	int k = 0;

	if (rate <= 0)
		return 0;
	do {
		k++;
		prod *= uniform(m);
	} while (prod > l);
	return k - 1;
}

int sl_psm_step(struct sl_psm *m, uint64_t now, double rate, double cores, sl_psm_done_fn done,
		void *ctx)
{
	uint64_t limit = m->sg ? sl_sg_limit(m->sg) : UINT64_MAX;
	int a = arrivals(m, rate);
	size_t n;

	for (int i = 0; i < a; i++) {
		uint64_t *t = ring_push(&m->queue);

		if (!t)
			return -ENOMEM;
		*t = now;
		m->arrived++;
	}
	while (ring_len(&m->queue) && now - *(uint64_t *)ring_at(&m->queue, m->queue.head) > m->p.patience_ns) {
		m->queue.head++;
		m->refused++;
	}
	while (ring_len(&m->queue) && ring_len(&m->jobs) < limit) {
		struct psm_job *j = ring_push(&m->jobs);

		if (!j)
			return -ENOMEM;
		m->queue.head++;
		*j = (struct psm_job){.v_start = m->v, .admitted = now};
	}
	/* Each job progresses at its share of the cores, a whole core at most
	 * (a request runs on one). */
	n = ring_len(&m->jobs);
	if (n)
		m->v += fmin(1.0, cores / (double)n) * ((double)SL_PSM_STEP_NS / 1e6);
	while (ring_len(&m->jobs)) {
		const struct psm_job *j = ring_at(&m->jobs, m->jobs.head);

		if (m->v - j->v_start < m->p.work_ms - 1e-9)
			break;
		if (m->sg)
			sl_sg_complete(m->sg, j->admitted, 0, now - j->admitted);
		if (done)
			done(ctx, j->admitted, now - j->admitted);
		m->completed++;
		m->jobs.head++;
	}
	if (m->sg && m->p.decide_ns && now % m->p.decide_ns == 0)
		sl_sg_step(m->sg, now, (uint32_t)fmin((double)ring_len(&m->jobs), UINT32_MAX),
			   (uint32_t)fmin((double)ring_len(&m->queue), UINT32_MAX), NULL);
	return 0;
}

size_t sl_psm_in_flight(const struct sl_psm *m) { return ring_len(&m->jobs); }
size_t sl_psm_waiting(const struct sl_psm *m) { return ring_len(&m->queue); }
uint64_t sl_psm_arrived(const struct sl_psm *m) { return m->arrived; }
uint64_t sl_psm_refused(const struct sl_psm *m) { return m->refused; }
uint64_t sl_psm_completed(const struct sl_psm *m) { return m->completed; }
