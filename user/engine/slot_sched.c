#include "engine/slot_sched.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/id_index.h"
#include "lib/list.h"

struct flow {
	uint64_t id;       /* first: the index's key */
	struct sl_link link;
	unsigned w;
	double start, finish; /* tags: start-time fair queuing */
	uint64_t deadline_ns;
};

struct wl {
	struct sl_ss_workload p;
	struct sl_list fifo;
	double last_finish;
	struct sl_ss_stats st;
};

struct sl_ss {
	struct wl *w;
	size_t n_w, max_waiting, waiting;
	double vt;
	struct sl_idx ids;
	sl_ss_fn on_admit, on_reject;
	void *ctx;
};

int sl_ss_create(struct sl_ss **out, const struct sl_ss_workload *w, size_t n, size_t max_waiting,
		 sl_ss_fn on_admit, sl_ss_fn on_reject, void *ctx)
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
	sl_idx_init(&ss->ids, offsetof(struct flow, id));
	*out = ss;
	return 0;
}

void sl_ss_free(struct sl_ss *ss)
{
	if (!ss)
		return;
	for (size_t i = 0; i < ss->n_w; i++) {
		struct sl_link *l = ss->w[i].fifo.head;

		while (l) {
			struct sl_link *next = l->next;

			free(sl_container_of(l, struct flow, link));
			l = next;
		}
	}
	sl_idx_free(&ss->ids);
	free(ss->w);
	free(ss);
}

int sl_ss_enqueue(struct sl_ss *ss, uint64_t now, uint64_t id, unsigned w)
{
	struct wl *q;
	struct flow *f;

	if (w >= ss->n_w)
		return -EINVAL;
	q = &ss->w[w];
	if (ss->waiting >= ss->max_waiting) {
		q->st.refused++;
		return -ENOSPC;
	}
	if (sl_idx_reserve(&ss->ids, 1) || !(f = calloc(1, sizeof(*f))))
		return -ENOMEM;
	f->id = id;
	f->w = w;
	/* Start-time fair queuing: a workload that was idle starts at the
	 * virtual time, one with a backlog where its last flow finishes. */
	f->start = fmax(ss->vt, q->last_finish);
	f->finish = f->start + 1.0 / q->p.priority;
	q->last_finish = f->finish;
	f->deadline_ns = q->p.queue_timeout_ns == UINT64_MAX || now > UINT64_MAX - q->p.queue_timeout_ns
				 ? UINT64_MAX : now + q->p.queue_timeout_ns;
	sl_list_append(&q->fifo, &f->link);
	sl_idx_put(&ss->ids, f);
	ss->waiting++;
	return 0;
}

static void unlink_flow(struct sl_ss *ss, struct flow *f)
{
	sl_list_remove(&ss->w[f->w].fifo, &f->link);
	sl_idx_del(&ss->ids, f);
	ss->waiting--;
}

int sl_ss_cancel(struct sl_ss *ss, uint64_t id)
{
	struct flow *f = sl_idx_find(&ss->ids, id);

	if (!f)
		return -ENOENT;
	unlink_flow(ss, f);
	free(f);
	return 0;
}

/* The workload whose head has the lowest start tag (ties: the lowest
 * finish, the higher priority), or NULL. */
static struct wl *next_workload(struct sl_ss *ss)
{
	struct flow *best = NULL;

	for (size_t i = 0; i < ss->n_w; i++) {
		struct flow *h = sl_list_entry(ss->w[i].fifo.head, struct flow, link);

		if (h && (!best || h->start < best->start ||
			  (h->start == best->start && h->finish < best->finish)))
			best = h;
	}
	return best ? &ss->w[best->w] : NULL;
}

size_t sl_ss_run(struct sl_ss *ss, uint64_t now, sl_ss_take_fn take, void *take_ctx)
{
	size_t admitted = 0;

	/* Each FIFO is in deadline order (one timeout per workload): only
	 * heads can be due. */
	for (size_t i = 0; i < ss->n_w; i++) {
		struct wl *q = &ss->w[i];
		struct flow *h;

		while ((h = sl_list_entry(q->fifo.head, struct flow, link)) && h->deadline_ns <= now) {
			uint64_t id = h->id;

			unlink_flow(ss, h);
			free(h);
			q->st.rejected++;
			if (ss->on_reject)
				ss->on_reject(ss->ctx, id, now);
		}
	}
	for (;;) {
		struct wl *q = next_workload(ss);
		struct flow *h;
		uint64_t id;

		if (!q || !take(take_ctx))
			break;
		h = sl_list_entry(q->fifo.head, struct flow, link);
		ss->vt = h->start;
		id = h->id;
		unlink_flow(ss, h);
		free(h);
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
		if (w[i].priority != ss->w[i].p.priority || w[i].queue_timeout_ns != ss->w[i].p.queue_timeout_ns)
			return false;
	return true;
}

size_t sl_ss_waiting_in(const struct sl_ss *ss, unsigned w)
{
	return w < ss->n_w ? ss->w[w].fifo.n : 0;
}

void sl_ss_stats(const struct sl_ss *ss, unsigned w, struct sl_ss_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (w < ss->n_w)
		*out = ss->w[w].st;
}
