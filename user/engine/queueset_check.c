// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The QueueSet's invariants, checked from scratch (sl_qs_check: the
 * tests and the fuzzers call it after every step), and the tests' hooks
 * into its state.  queueset.c runs it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "engine/queueset.h"
#include "engine/queueset_int.h"
#include "lib/why.h"

/* ---- invariants --------------------------------------------------------------------------- */

static int broken(char *why, size_t why_len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int broken(char *why, size_t why_len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sl_vwhy(why, why_len, fmt, ap);
	va_end(ap);
	return -EPROTO;
}

/* Links, count, membership and flags of one list; adds seats (and work). */
static int check_list(const struct sl_qs *qs, const struct sl_list *l, const struct queue *q,
		      bool executing, uint64_t *seats, uint64_t *work, char *why, size_t why_len)
{
	const struct sl_link *prev = NULL;
	size_t n = 0;

	for (const struct sl_link *e = l->head; e; prev = e, e = e->next) {
		const struct req *r = req_at(e);

		if (e->prev != prev)
			return broken(why, why_len, "request %" PRIu64 ": bad prev link", r->id);
		if (r->q != q || r->executing != executing)
			return broken(why, why_len, "request %" PRIu64 ": on the wrong list", r->id);
		if (find(qs, r->id) != r)
			return broken(why, why_len, "request %" PRIu64 ": not in the id table", r->id);
		if (r->seats < 1 || r->seats > SL_QS_MAX_SEATS)
			return broken(why, why_len, "request %" PRIu64 ": seats %u", r->id, r->seats);
		if (q && r->work != sl_seatsec_from_seats_ns(r->seats, r->guess_ns))
			return broken(why, why_len, "request %" PRIu64 ": work", r->id);
		if (!executing && r->arrival_r > qs->r)
			return broken(why, why_len, "request %" PRIu64 ": arrivalR > R", r->id);
		*seats += r->seats;
		if (work)
			*work += r->work;
		n++;
	}
	if (l->tail != prev)
		return broken(why, why_len, "bad list tail");
	if (l->n != n)
		return broken(why, why_len, "list count %zu, found %zu", l->n, n);
	return 0;
}

int sl_qs_check(const struct sl_qs *qs, char *why, size_t why_len)
{
	uint64_t waiting = 0, executing = 0, seats_wait = 0, q_seats = 0, seats = 0;
	uint32_t active = 0;
	size_t in_table = 0, n_global = 0;
	const struct sl_link *prev = NULL;
	int rc;

	if (qs->cfg.queues >= 1 && qs->nq < (uint32_t)qs->cfg.queues)
		return broken(why, why_len, "%u queues, %d desired", qs->nq, qs->cfg.queues);
	if (qs->robin < -1 || qs->robin > (int64_t)qs->nq - 1)
		return broken(why, why_len, "robinIndex %" PRId64 " with %u queues", qs->robin, qs->nq);
	if (qs->r >= SL_QS_EPOCH_HIGH_R)
		return broken(why, why_len, "R %" PRIu64 " at or above the epoch threshold", qs->r);
	for (uint32_t i = 0; i < qs->nq; i++) {
		const struct queue *q = qs->queues[i];
		uint64_t s_wait = 0, w_wait = 0, s_exec = 0;

		if (q->index != i)
			return broken(why, why_len, "queue %u has index %u", i, q->index);
		rc = check_list(qs, &q->waiting, q, false, &s_wait, &w_wait, why, why_len);
		if (!rc)
			rc = check_list(qs, &q->executing, q, true, &s_exec, NULL, why, why_len);
		if (rc)
			return rc;
		if (s_wait != q->sum_initial || s_wait != q->sum_max || w_wait != q->sum_work)
			return broken(why, why_len, "queue %u: waiting sums", i);
		if (s_exec != q->seats_in_use)
			return broken(why, why_len, "queue %u: seats in use %" PRIu64 ", sum %" PRIu64, i,
				      q->seats_in_use, s_exec);
		if (q->waiting.head && q->backlog_since_ns > first_waiting(q)->arrival_ns)
			return broken(why, why_len, "queue %u: its backlog starts after its head arrived", i);
		if (q->waiting.head && q->next_r < first_waiting(q)->arrival_r)
			return broken(why, why_len, "queue %u: nextDispatchR below the head's arrivalR", i);
		if (q->next_r > READING_CAP)
			return broken(why, why_len, "queue %u: nextDispatchR too large", i);
		waiting += q->waiting.n;
		executing += q->executing.n;
		seats_wait += s_wait;
		q_seats += s_exec;
		active += q_active(q);
	}
	rc = check_list(qs, &qs->qless, NULL, true, &seats, NULL, why, why_len);
	if (rc)
		return rc;
	executing += qs->qless.n;
	seats += q_seats;
	if (waiting != qs->tot_waiting || executing != qs->tot_executing)
		return broken(why, why_len, "totals: waiting %" PRIu64 "/%" PRIu64 ", executing %" PRIu64
			      "/%" PRIu64, qs->tot_waiting, waiting, qs->tot_executing, executing);
	if (seats != qs->seats_in_use || q_seats != qs->q_seats_in_use || seats_wait != qs->seats_waiting)
		return broken(why, why_len, "seat totals: in use %" PRIu64 "/%" PRIu64 ", waiting %" PRIu64
			      "/%" PRIu64, qs->seats_in_use, seats, qs->seats_waiting, seats_wait);
	if (active != qs->active)
		return broken(why, why_len, "NEQ %u, counted %u", qs->active, active);
	for (const struct sl_link *e = qs->arrivals.head; e; prev = e, e = e->next) {
		const struct req *r = arrival_at(e);

		if (e->prev != prev || r->executing || !r->q)
			return broken(why, why_len, "global waiting list at %" PRIu64, r->id);
		if (prev && arrival_at(prev)->arrival_ns > r->arrival_ns)
			return broken(why, why_len, "global waiting list out of arrival order");
		n_global++;
	}
	if (qs->arrivals.tail != prev || n_global != qs->tot_waiting || qs->arrivals.n != n_global)
		return broken(why, why_len, "global waiting list: %zu of %" PRIu64, n_global,
			      qs->tot_waiting);
	for (size_t i = 0; i < qs->ids.cap; i++)
		in_table += qs->ids.slots[i] != NULL;
	if (in_table != qs->ids.count || in_table != waiting + executing)
		return broken(why, why_len, "id table holds %zu, %zu counted, %" PRIu64 " tracked",
			      in_table, qs->ids.count, waiting + executing);
	if (qs->ids.cap && qs->ids.count * 2 > qs->ids.cap)
		return broken(why, why_len, "id table over half full");
	if (qs->tot_waiting && (is_exempt(qs) || qs->seats_in_use < qs->cl)) {
		const struct queue *q = qs_choose_queue(qs);

		if (!q || fits(qs, first_waiting(q)->seats))
			return broken(why, why_len, "the dispatch loop stopped with a head that fits");
	}
	if (qs->notes.cap < qs->notes.len + qs->tot_waiting)
		return broken(why, why_len, "notification buffer too small");
	return 0;
}

/* ---- test hooks ----------------------------------------------------------------------------- */

int sl_qs_test_set_r(struct sl_qs *qs, uint64_t r)
{
	if (r >= SL_QS_EPOCH_HIGH_R)
		return -EINVAL;
	if (qs->active)
		return -EBUSY;
	qs->r = r;
	return 0;
}

void sl_qs_test_set_enqueues(struct sl_qs *qs, uint64_t enqueues)
{
	qs->enqueues = enqueues;
}
