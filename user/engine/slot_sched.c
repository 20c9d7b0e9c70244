// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "engine/slot_sched.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/id_index.h"
#include "lib/list.h"

/* A waiting connection: in its workload's arrival order (for time-outs)
 * and in its flow's FIFO. */
struct req {
	uint64_t id;          /* first: the id index's key */
	struct sl_link by_arrival, in_flow;
	struct subq *flow;
	uint64_t arrival_ns, deadline_ns;
};

/* One flow's waiting connections, in its workload's round robin while it
 * has any. */
struct subq {
	uint64_t key;         /* first: the flow index's key (flow ^ workload) */
	uint64_t flow;
	unsigned w;
	struct sl_list fifo;
	struct sl_link rr;
	uint64_t backlog_since_ns; /* its FIFO went from empty to not */
};

struct wl {
	struct sl_ss_workload p;
	uint64_t next_shed_ns;   /* the controlled delay looks again then */
	struct sl_list arrival;  /* every waiting request, oldest first */
	struct sl_list rr;       /* flows with requests, in turn */
	double last_finish;      /* start-time fair queuing between workloads */
	struct sl_ss_stats st;
};

struct sl_ss {
	struct wl *w;
	size_t n_w, max_waiting, waiting;
	double vt;
	struct sl_idx ids, flows;
	sl_ss_fn on_admit;
	sl_ss_reject_fn on_reject;
	void *ctx;
};

static uint64_t flow_key(uint64_t flow, unsigned w)
{
	return flow ^ ((uint64_t)(w + 1) * 0x9e3779b97f4a7c15ULL);
}

int sl_ss_create(struct sl_ss **out, const struct sl_ss_workload *w, size_t n, size_t max_waiting,
		 sl_ss_fn on_admit, sl_ss_reject_fn on_reject, void *ctx)
{
	struct sl_ss *ss;

	if (!n)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!(w[i].priority > 0) || !isfinite(w[i].priority))
			return -EINVAL;
	ss = calloc(1, sizeof(*ss));
	if (!ss || !(ss->w = calloc(n, sizeof(*ss->w)))) {
		free(ss);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		ss->w[i].p = w[i];
	ss->n_w = n;
	ss->max_waiting = max_waiting;
	ss->on_admit = on_admit;
	ss->on_reject = on_reject;
	ss->ctx = ctx;
	sl_idx_init(&ss->ids, offsetof(struct req, id));
	sl_idx_init(&ss->flows, offsetof(struct subq, key));
	*out = ss;
	return 0;
}

/* Unlink a request; its flow goes when it is the last. */
static void unlink_req(struct sl_ss *ss, struct req *r)
{
	struct subq *f = r->flow;
	struct wl *q = &ss->w[f->w];

	sl_list_remove(&q->arrival, &r->by_arrival);
	sl_list_remove(&f->fifo, &r->in_flow);
	sl_idx_del(&ss->ids, r);
	ss->waiting--;
	if (!f->fifo.n) {
		sl_list_remove(&q->rr, &f->rr);
		sl_idx_del(&ss->flows, f);
		free(f);
	}
}

void sl_ss_free(struct sl_ss *ss)
{
	if (!ss)
		return;
	for (size_t i = 0; i < ss->n_w; i++) {
		struct req *r;

		while ((r = sl_list_entry(ss->w[i].arrival.head, struct req, by_arrival))) {
			unlink_req(ss, r);
			free(r);
		}
	}
	sl_idx_free(&ss->ids);
	sl_idx_free(&ss->flows);
	free(ss->w);
	free(ss);
}

static struct subq *find_flow(struct sl_ss *ss, uint64_t flow, unsigned w)
{
	uint64_t key = flow_key(flow, w);
	struct subq *f;
	size_t pos = 0;

	while ((f = sl_idx_next(&ss->flows, key, &pos)))
		if (f->flow == flow && f->w == w)
			return f;
	return NULL;
}

/* Where a request that arrived at t goes in its workload's arrival list
 * and in its flow's FIFO: after the last one that arrived at or before t
 * (NULL: first). */
static struct sl_link *arrival_pos(const struct wl *q, uint64_t t)
{
	struct sl_link *e = q->arrival.tail;

	while (e && sl_container_of(e, struct req, by_arrival)->arrival_ns > t)
		e = e->prev;
	return e;
}

static struct sl_link *flow_pos(const struct subq *f, uint64_t t)
{
	struct sl_link *e = f->fifo.tail;

	while (e && sl_container_of(e, struct req, in_flow)->arrival_ns > t)
		e = e->prev;
	return e;
}

static int enqueue_at(struct sl_ss *ss, uint64_t now, uint64_t id, unsigned w, uint64_t flow,
		      uint64_t arrival_ns)
{
	struct subq *f;
	struct wl *q;
	struct req *r;

	if (w >= ss->n_w)
		return -EINVAL;
	q = &ss->w[w];
	if (ss->waiting >= ss->max_waiting) {
		q->st.refused++;
		return -ENOSPC;
	}
	if (sl_idx_reserve(&ss->ids, 1) || sl_idx_reserve(&ss->flows, 1) ||
	    !(r = calloc(1, sizeof(*r))))
		return -ENOMEM;
	f = find_flow(ss, flow, w);
	if (!f) {
		if (!(f = calloc(1, sizeof(*f)))) {
			free(r);
			return -ENOMEM;
		}
		f->key = flow_key(flow, w);
		f->flow = flow;
		f->w = w;
		sl_idx_put(&ss->flows, f);
		sl_list_append(&q->rr, &f->rr);
		f->backlog_since_ns = now; /* a backlog starts */
	}
	r->id = id;
	r->flow = f;
	r->arrival_ns = arrival_ns;
	r->deadline_ns = q->p.queue_timeout_ns == UINT64_MAX || arrival_ns > UINT64_MAX - q->p.queue_timeout_ns
				 ? UINT64_MAX : arrival_ns + q->p.queue_timeout_ns;
	/* Both lists stay in arrival order (the time-outs and the controlled
	 * delay walk them oldest first): a new arrival goes last, one that
	 * comes back goes where it arrived. */
	sl_list_insert_after(&q->arrival, arrival_pos(q, arrival_ns), &r->by_arrival);
	sl_list_insert_after(&f->fifo, flow_pos(f, arrival_ns), &r->in_flow);
	sl_idx_put(&ss->ids, r);
	ss->waiting++;
	return 0;
}

int sl_ss_enqueue(struct sl_ss *ss, uint64_t now, uint64_t id, unsigned w, uint64_t flow)
{
	return enqueue_at(ss, now, id, w, flow, now);
}

int sl_ss_requeue(struct sl_ss *ss, uint64_t now, uint64_t id, unsigned w, uint64_t flow,
		  uint64_t arrival_ns)
{
	return enqueue_at(ss, now, id, w, flow, arrival_ns < now ? arrival_ns : now);
}

int sl_ss_cancel(struct sl_ss *ss, uint64_t id)
{
	struct req *r = sl_idx_find(&ss->ids, id);

	if (!r)
		return -ENOENT;
	unlink_req(ss, r);
	free(r);
	return 0;
}

/* Start-time fair queuing between workloads, with tags taken at dispatch:
 * a backlogged workload's next start is max(virtual time, where its last
 * dispatch finished), and it finishes 1 / priority later.  The lowest
 * start goes (ties: the lowest finish, the higher priority). */
static struct wl *next_workload(struct sl_ss *ss, double *start)
{
	struct wl *best = NULL;
	double best_s = INFINITY, best_f = INFINITY;

	for (size_t i = 0; i < ss->n_w; i++) {
		struct wl *q = &ss->w[i];
		double s, f;

		if (!q->arrival.n)
			continue;
		s = fmax(ss->vt, q->last_finish);
		f = s + 1.0 / q->p.priority;
		if (s < best_s || (s == best_s && f < best_f)) {
			best = q;
			best_s = s;
			best_f = f;
		}
	}
	*start = best_s;
	return best;
}

static void reject_req(struct sl_ss *ss, struct req *r, uint64_t now, enum sl_ss_why why)
{
	struct wl *q = &ss->w[r->flow->w];
	uint64_t id = r->id;

	unlink_req(ss, r);
	free(r);
	if (why == SL_SS_SHED)
		q->st.shed++;
	else
		q->st.rejected++;
	if (ss->on_reject)
		ss->on_reject(ss->ctx, id, now, why);
}

/* Controlled delay: oldest first, those past the target whose flow's
 * backlog has stood for the interval, but never a flow's newest (the
 * queue stays able to serve it: a flow is shed down to one).  The walk
 * passes over the old requests it keeps (a burst within its interval), and
 * sl_ss_run() runs at every arrival and close: it looks at most every
 * SHED_PERIOD_NS, so a burst costs the loop a walk a period, not one an
 * event. */
#define SHED_PERIOD_NS (10ULL * 1000000ULL)

static void shed(struct sl_ss *ss, struct wl *q, uint64_t now)
{
	struct req *r, *next;

	if (!q->p.delay_target_ns || now < q->next_shed_ns)
		return;
	q->next_shed_ns = now + SHED_PERIOD_NS;
	for (r = sl_list_entry(q->arrival.head, struct req, by_arrival); r; r = next) {
		struct subq *f = r->flow;

		next = sl_list_entry(r->by_arrival.next, struct req, by_arrival);
		/* A reading older than an arrival (a caller's clock read before
		 * the arrival was stamped) makes it young, not 2^64 ns old. */
		if (now < r->arrival_ns || now - r->arrival_ns < q->p.delay_target_ns)
			break; /* everyone after it is younger still */
		if (now >= f->backlog_since_ns && now - f->backlog_since_ns >= q->p.delay_interval_ns &&
		    &r->in_flow != f->fifo.tail)
			reject_req(ss, r, now, SL_SS_SHED);
	}
}

size_t sl_ss_run(struct sl_ss *ss, uint64_t now, sl_ss_take_fn take, void *take_ctx)
{
	size_t admitted = 0;

	/* One timeout per workload: its oldest request is the first due. */
	for (size_t i = 0; i < ss->n_w; i++) {
		struct wl *q = &ss->w[i];
		struct req *r;

		while ((r = sl_list_entry(q->arrival.head, struct req, by_arrival)) && r->deadline_ns <= now)
			reject_req(ss, r, now, SL_SS_TIME_OUT);
		shed(ss, q, now);
	}
	for (;;) {
		double start;
		struct wl *q = next_workload(ss, &start);
		struct subq *f;
		struct req *r;
		uint64_t id;

		if (!q || !take(take_ctx))
			break;
		ss->vt = start;
		q->last_finish = start + 1.0 / q->p.priority;
		/* Round robin over the workload's flows: a flow's next waits
		 * until every other flow of the workload had its turn. */
		f = sl_list_entry(q->rr.head, struct subq, rr);
		r = sl_list_entry(f->fifo.head, struct req, in_flow);
		sl_list_remove(&q->rr, &f->rr);
		sl_list_append(&q->rr, &f->rr);
		id = r->id;
		unlink_req(ss, r);
		free(r);
		q->st.admitted++;
		admitted++;
		if (ss->on_admit)
			ss->on_admit(ss->ctx, id, now);
	}
	return admitted;
}

size_t sl_ss_waiting(const struct sl_ss *ss)
{
	return ss->waiting;
}

size_t sl_ss_workloads(const struct sl_ss *ss)
{
	return ss->n_w;
}

bool sl_ss_same(const struct sl_ss *ss, const struct sl_ss_workload *w, size_t n)
{
	if (n != ss->n_w)
		return false;
	for (size_t i = 0; i < n; i++)
		if (w[i].priority != ss->w[i].p.priority || w[i].queue_timeout_ns != ss->w[i].p.queue_timeout_ns ||
		    w[i].delay_target_ns != ss->w[i].p.delay_target_ns ||
		    w[i].delay_interval_ns != ss->w[i].p.delay_interval_ns)
			return false;
	return true;
}

bool sl_ss_within_timeout(const struct sl_ss *ss, unsigned w, uint64_t arrival_ns, uint64_t now)
{
	uint64_t t;

	if (w >= ss->n_w)
		return false;
	t = ss->w[w].p.queue_timeout_ns;
	return t == UINT64_MAX || now < arrival_ns || now - arrival_ns < t;
}

size_t sl_ss_waiting_in(const struct sl_ss *ss, unsigned w)
{
	return w < ss->n_w ? ss->w[w].arrival.n : 0;
}

void sl_ss_stats(const struct sl_ss *ss, unsigned w, struct sl_ss_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (w < ss->n_w)
		*out = ss->w[w].st;
}
