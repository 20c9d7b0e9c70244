// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * APF QueueSet for connections (Kubernetes queueset.go).  See queueset.h.
 *
 * Layout: an array of pointers to queues (a queue keeps its address when
 * the array is renumbered); each queue has a FIFO of waiting requests and a
 * list of executing ones; queue-less executing requests (exempt, Reject-type)
 * are on their own list; every waiting request is also on one global list
 * in arrival order (for the expiry sweep); an id index (lib/id_index.h)
 * maps ids to requests.  Lists are lib/list.h, dispatch notifications
 * lib/notify.h.  The R meter's inputs (NEQ and Σ seatsInUse + Σ MaxSeats
 * waiting over the queues) are kept as running totals.
 */
#include "engine/queueset.h"
#include "engine/queueset_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/id_index.h"
#include "lib/list.h"
#include "lib/notify.h"
#include "lib/shuffle.h"
#include "lib/why.h"

/* ---- SeatSeconds ------------------------------------------------------------ */

static uint64_t sat64(u128 v)
{
	return v > UINT64_MAX ? UINT64_MAX : (uint64_t)v;
}

uint64_t sl_seatsec_from_seats_ns(uint64_t seats, uint64_t ns)
{
	return sat64(((u128)seats * ns + 5) / 10);
}

uint64_t sl_seatsec_per_seat_ns(uint64_t units, uint64_t seats)
{
	if (!seats)
		return UINT64_MAX;
	return sat64((u128)units * 10 / seats);
}

int sl_seatsec_format(uint64_t units, char *buf, size_t len)
{
	return snprintf(buf, len, "%" PRIu64 ".%08" PRIu64 "ss", units / SL_SS_PER_SEAT_SECOND,
			units % SL_SS_PER_SEAT_SECOND);
}

/* round(d / 10), half away from zero, for a signed d. */
static i128 div10_round(i128 d)
{
	return d >= 0 ? (d + 5) / 10 : -((-d + 5) / 10);
}

/* ---- configuration ------------------------------------------------------------- */

int sl_qs_config_validate(const struct sl_qs_config *cfg, char *why, size_t why_len)
{
	if (!cfg)
		return sl_invalid(why, why_len, "no configuration");
	if (cfg->queues < SL_QS_EXEMPT)
		return sl_invalid(why, why_len, "queues %" PRId32 " is invalid (-1 exempt, 0 Reject, >= 1 Queue)",
			       cfg->queues);
	if (cfg->guess_ns < 1 || cfg->guess_ns > SL_QS_MAX_GUESS_NS)
		return sl_invalid(why, why_len, "guessed duration %" PRIu64 " ns is outside 1 ns .. 600 s",
			       cfg->guess_ns);
	if (cfg->queues >= 1) {
		int rc;

		if ((uint32_t)cfg->queues > MAX_QUEUES)
			return sl_invalid(why, why_len, "queues %" PRId32 " is more than %u", cfg->queues,
				       MAX_QUEUES);
		if (cfg->queue_length_limit < 1)
			return sl_invalid(why, why_len, "queueLengthLimit must be at least 1");
		if (cfg->queues == 1 && cfg->hand_size != 1)
			return sl_invalid(why, why_len, "handSize must be 1 with a single queue");
		rc = sl_shuffle_validate((uint32_t)cfg->queues, cfg->hand_size, why, why_len);
		if (rc)
			return rc;
	}
	if ((cfg->delay_target_ns == 0) != (cfg->delay_interval_ns == 0))
		return sl_invalid(why, why_len, "controlled delay needs both a target and an interval, or neither");
	if (cfg->delay_target_ns > cfg->delay_interval_ns)
		return sl_invalid(why, why_len, "the delay target (%" PRIu64 " ns) exceeds its interval (%" PRIu64 " ns)",
			       cfg->delay_target_ns, cfg->delay_interval_ns);
	if (why && why_len)
		why[0] = '\0';
	return 0;
}

/* ---- lists, ids, notifications ------------------------------------------------- */

/* Invariant: room for a note per waiting request, so the dispatch loop
 * never allocates.  Called before a request is enqueued. */
static int notes_reserve(struct sl_qs *qs)
{
	return sl_notes_reserve(&qs->notes, qs->notes.len + (size_t)qs->tot_waiting + 1);
}

static void note_dispatch(struct sl_qs *qs, uint64_t id, uint64_t now)
{
	sl_notes_push(&qs->notes, id, now, 0);
}

bool sl_qs_next_dispatch(struct sl_qs *qs, uint64_t *id, uint64_t *at)
{
	struct sl_note n;

	if (!sl_notes_next(&qs->notes, &n))
		return false;
	*id = n.id;
	*at = n.now;
	return true;
}

/* ---- queues -------------------------------------------------------------------- */

/* Kubernetes queueset.go boundNextDispatchLocked anti-windup: dispatch in the virtual world never precedes arrival. */
static void anti_windup(struct queue *q)
{
	struct req *h = first_waiting(q);

	if (h && q->next_r < h->arrival_r)
		q->next_r = h->arrival_r;
}

/* Kubernetes queueset.go finishRequestLocked: remove queue idx and renumber the ones after it. */
static void remove_queue(struct sl_qs *qs, uint32_t idx)
{
	free(qs->queues[idx]);
	memmove(&qs->queues[idx], &qs->queues[idx + 1], (qs->nq - idx - 1) * sizeof(*qs->queues));
	qs->nq--;
	for (uint32_t i = idx; i < qs->nq; i++)
		qs->queues[i]->index = i;
	/* keep (robinIndex + 1) mod nq the queue after the last one dispatched from */
	if (qs->robin >= (int64_t)idx)
		qs->robin--;
}

/* ---- the R meter (Kubernetes queueset.go syncTimeLocked) ----------------------------------------------------------- */

static uint64_t sub_reading(uint64_t v, bool *fail)
{
	if (v >= SL_QS_EPOCH_DECREMENT)
		return v - SL_QS_EPOCH_DECREMENT;
	*fail = true;
	return 0;
}

static void advance_epoch(struct sl_qs *qs)
{
	bool fail = false;

	qs->r -= SL_QS_EPOCH_DECREMENT;
	for (uint32_t i = 0; i < qs->nq; i++) {
		struct queue *q = qs->queues[i];

		if (!q_active(q))
			q->next_r = 0; /* overwritten with R by the next arrival */
		else
			q->next_r = sub_reading(q->next_r, &fail);
	}
	for (struct sl_link *e = qs->arrivals.head; e; e = e->next)
		arrival_at(e)->arrival_r = sub_reading(arrival_at(e)->arrival_r, &fail);
	/* A clamped reading must not break the anti-windup bound. */
	for (uint32_t i = 0; i < qs->nq; i++)
		anti_windup(qs->queues[i]);
	qs->epochs++;
	if (fail)
		qs->epoch_fail++;
}

/* R += SeatSecondsOf(min(Σ demand, CL) / NEQ, now − lastRealTime), exactly
 * (integer rational, rounded half up).  Returns the effective now: a clock
 * reading older than the last one counts as the last one. */
static uint64_t sync_r(struct sl_qs *qs, uint64_t now)
{
	uint64_t dt, demand, use;
	u128 num, den, incr;

	if (now < qs->last_ns)
		now = qs->last_ns;
	dt = now - qs->last_ns;
	qs->last_ns = now;
	if (!dt || !qs->active)
		return now;
	demand = qs->q_seats_in_use + qs->seats_waiting;
	use = demand < qs->cl ? demand : qs->cl;
	num = (u128)use * dt;
	den = (u128)qs->active * 10;
	incr = (2 * num + den) / (2 * den);
	if (incr > MAX_INCR_R)
		incr = MAX_INCR_R;
	qs->r += (uint64_t)incr; /* r < highR, incr <= 2^62: no wrap */
	if (qs->r >= SL_QS_EPOCH_HIGH_R)
		advance_epoch(qs);
	return now;
}

/* ---- dispatch (Kubernetes queueset.go dispatchLocked) -------------------------------------------------------------- */

/* Kubernetes queueset.go dispatchLocked: the queue whose head has the least virtual finish time,
 * scanning round-robin from robinIndex + 1; ties go to the first scanned. */
struct queue *qs_choose_queue(const struct sl_qs *qs)
{
	struct queue *best = NULL;
	uint64_t best_f = 0;
	uint32_t start;

	if (!qs->nq)
		return NULL;
	start = (uint32_t)((qs->robin + 1) % (int64_t)qs->nq);
	for (uint32_t k = 0; k < qs->nq; k++) {
		struct queue *q = qs->queues[(start + k) % qs->nq];
		uint64_t f;

		if (!q->waiting.head)
			continue;
		f = q->next_r + first_waiting(q)->work; /* next_r <= READING_CAP */
		if (!best || f < best_f) {
			best = q;
			best_f = f;
		}
	}
	return best;
}

static void start_executing(struct sl_qs *qs, struct req *r, uint64_t now)
{
	r->executing = true;
	r->start_ns = now;
	qs->tot_executing++;
	qs->seats_in_use += r->seats;
	qs->dispatched++;
	if (r->q) {
		sl_list_append(&r->q->executing, &r->link);
		r->q->seats_in_use += r->seats;
		qs->q_seats_in_use += r->seats;
	} else {
		sl_list_append(&qs->qless, &r->link);
	}
}

/* Take a waiting request out of its queue (sums, totals, NEQ, global list). */
static void unlink_waiting(struct sl_qs *qs, struct req *r)
{
	struct queue *q = r->q;

	sl_list_remove(&q->waiting, &r->link);
	sl_list_remove(&qs->arrivals, &r->glink);
	q->sum_initial -= r->seats;
	q->sum_max -= r->seats;
	q->sum_work -= r->work;
	qs->tot_waiting--;
	qs->seats_waiting -= r->seats;
	if (!q_active(q))
		qs->active--;
}

/* Dispatch as much as possible.  `self` (the request of the arrival in
 * progress, or NULL) is not noted: its dispatch is the arrival's return
 * value. */
static void dispatch_loop(struct sl_qs *qs, uint64_t now, const struct req *self)
{
	while (qs->tot_waiting && (is_exempt(qs) || qs->seats_in_use < qs->cl)) {
		struct queue *q = qs_choose_queue(qs);
		struct req *h;

		if (!q)
			break; /* cannot happen: waiting requests are in queues */
		h = first_waiting(q);
		if (!fits(qs, h->seats)) {
			/* Wait for seats; nothing else goes first, robinIndex stays. */
			qs->no_accom++;
			break;
		}
		/* q stays active: h moves from its FIFO to its executing set. */
		sl_list_remove(&q->waiting, &h->link);
		sl_list_remove(&qs->arrivals, &h->glink);
		q->sum_initial -= h->seats;
		q->sum_max -= h->seats;
		q->sum_work -= h->work;
		qs->tot_waiting--;
		qs->seats_waiting -= h->seats;
		qs->robin = q->index;
		start_executing(qs, h, now);
		q->next_r += h->work;
		if (q->next_r > READING_CAP)
			q->next_r = READING_CAP;
		anti_windup(q);
		if (h != self)
			note_dispatch(qs, h->id, now);
	}
}

/* ---- life cycle ------------------------------------------------------------------- */

static int grow_queues(struct sl_qs *qs, uint32_t want, struct queue ***arr, uint32_t *cap)
{
	*arr = qs->queues;
	*cap = qs->cap_q;
	if (want > *cap) {
		struct queue **a = realloc(qs->queues, (size_t)want * sizeof(*a));

		if (!a)
			return -ENOMEM;
		*arr = a;
		*cap = want;
	}
	return 0;
}

/* Create queues nq..want-1 (all or nothing). */
static int add_queues(struct sl_qs *qs, uint32_t want)
{
	struct queue **arr;
	uint32_t cap, i;

	if (want <= qs->nq)
		return 0;
	if (grow_queues(qs, want, &arr, &cap))
		return -ENOMEM;
	qs->queues = arr;
	qs->cap_q = cap;
	for (i = qs->nq; i < want; i++) {
		arr[i] = calloc(1, sizeof(**arr));
		if (!arr[i]) {
			while (i-- > qs->nq)
				free(arr[i]);
			return -ENOMEM;
		}
		arr[i]->index = i;
	}
	qs->nq = want;
	return 0;
}

int sl_qs_create(struct sl_qs **out, const struct sl_qs_config *cfg, uint32_t cl, uint64_t now,
		 char *why, size_t why_len)
{
	struct sl_qs *qs;
	int rc;

	if (!out)
		return -EINVAL;
	*out = NULL;
	rc = sl_qs_config_validate(cfg, why, why_len);
	if (rc)
		return rc;
	qs = calloc(1, sizeof(*qs));
	if (!qs)
		return -ENOMEM;
	qs->cfg = *cfg;
	qs->cl = cl;
	qs->last_ns = now;
	qs->robin = -1;
	sl_idx_init(&qs->ids, offsetof(struct req, id));
	if (cfg->queues >= 1 && add_queues(qs, (uint32_t)cfg->queues)) {
		sl_qs_free(qs);
		return -ENOMEM;
	}
	*out = qs;
	return 0;
}

static void free_list(struct sl_list *l)
{
	while (l->head) {
		struct req *r = req_at(l->head);

		sl_list_remove(l, &r->link);
		free(r);
	}
}

void sl_qs_free(struct sl_qs *qs)
{
	if (!qs)
		return;
	for (uint32_t i = 0; i < qs->nq; i++) {
		free_list(&qs->queues[i]->waiting);
		free_list(&qs->queues[i]->executing);
		free(qs->queues[i]);
	}
	free_list(&qs->qless);
	free(qs->queues);
	sl_idx_free(&qs->ids);
	sl_notes_free(&qs->notes);
	free(qs);
}

int sl_qs_set_config(struct sl_qs *qs, uint64_t now, const struct sl_qs_config *cfg, char *why,
		     size_t why_len)
{
	struct sl_qs_config c;
	int rc = sl_qs_config_validate(cfg, why, why_len);

	if (rc)
		return rc;
	c = *cfg;
	now = sync_r(qs, now);
	if (c.queues >= 1) {
		if (add_queues(qs, (uint32_t)c.queues))
			return -ENOMEM;
	} else {
		/* Kubernetes queueset.go setConfiguration: the old queuing parameters stay while the queues drain. */
		c.hand_size = qs->cfg.hand_size;
		c.queue_length_limit = qs->cfg.queue_length_limit;
	}
	qs->cfg = c;
	dispatch_loop(qs, now, NULL);
	return 0;
}

void sl_qs_set_cl(struct sl_qs *qs, uint64_t now, uint32_t cl)
{
	now = sync_r(qs, now);
	qs->cl = cl;
	dispatch_loop(qs, now, NULL);
}

/* ---- requests ----------------------------------------------------------------------- */

/* Kubernetes queueset.go shuffleShardLocked: deal a hand, visit it from offset enqueues mod H, least Σ totalWork
 * of waiting requests wins (strict <). */
static struct queue *pick_queue(struct sl_qs *qs, uint64_t flow_hash)
{
	uint32_t hand[SL_SHUFFLE_MAX_HAND], h = qs->cfg.hand_size, deck = (uint32_t)qs->cfg.queues;
	struct queue *best = NULL;
	uint32_t o;

	if (deck == 1) {
		hand[0] = 0; /* one FIFO, no hashing (Kubernetes queueset.go dispatchSansQueueLocked) */
		h = 1;
	} else if (sl_shuffle_deal(deck, h, flow_hash, hand)) {
		hand[0] = (uint32_t)(flow_hash % deck); /* unreachable: config validated */
		h = 1;
	}
	o = (uint32_t)(qs->enqueues % h);
	qs->enqueues++;
	for (uint32_t k = 0; k < h; k++) {
		struct queue *q = qs->queues[hand[(o + k) % h]];

		if (!best || q->sum_work < best->sum_work)
			best = q;
	}
	return best;
}

int sl_qs_arrive(struct sl_qs *qs, uint64_t now, uint64_t id, uint32_t seats, uint64_t flow_hash)
{
	struct req *r;
	struct queue *q;

	if (seats < 1 || seats > SL_QS_MAX_SEATS)
		return -EINVAL;
	if (find(qs, id))
		return -EEXIST;
	/* Every allocation first: a failure changes nothing. */
	if (sl_idx_reserve(&qs->ids, 1) || notes_reserve(qs))
		return -ENOMEM;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	now = sync_r(qs, now);
	r->id = id;
	r->flow_hash = flow_hash;
	r->seats = seats;
	r->arrival_ns = now;
	r->arrival_r = qs->r;
	r->guess_ns = qs->cfg.guess_ns;

	if (qs->cfg.queues < 1) {
		/* Exempt: always.  Reject-type: fits() or concurrency-limit (Kubernetes queueset.go dispatchSansQueueLocked). */
		if (!fits(qs, seats)) {
			free(r);
			qs->rej_cl++;
			return SL_QS_REJECT_CONCURRENCY;
		}
		start_executing(qs, r, now);
		sl_idx_put(&qs->ids, r);
		return SL_QS_DISPATCHED;
	}

	r->work = sl_seatsec_from_seats_ns(seats, r->guess_ns);
	q = pick_queue(qs, flow_hash);
	if (qs->seats_in_use >= qs->cl && q->waiting.n >= qs->cfg.queue_length_limit) {
		/* Kubernetes queueset.go rejectOrEnqueueToBoundLocked: the newest request is the one rejected */
		free(r);
		qs->rej_qf++;
		return SL_QS_REJECT_QUEUE_FULL;
	}
	if (!q_active(q)) {
		q->next_r = qs->r;
		qs->active++;
	}
	r->q = q;
	if (!q->waiting.n)
		q->backlog_since_ns = now; /* a backlog starts */
	sl_list_append(&q->waiting, &r->link);
	sl_list_append(&qs->arrivals, &r->glink);
	q->sum_initial += seats;
	q->sum_max += seats;
	q->sum_work += r->work;
	qs->tot_waiting++;
	qs->seats_waiting += seats;
	sl_idx_put(&qs->ids, r);
	anti_windup(q);
	dispatch_loop(qs, now, r);
	/* r is still live: nothing above can complete or cancel it. */
	return r->executing ? SL_QS_DISPATCHED : SL_QS_QUEUED;
}

int sl_qs_complete(struct sl_qs *qs, uint64_t now, uint64_t id, uint64_t service_ns)
{
	struct req *r = find(qs, id);
	struct queue *q;

	if (!r)
		return -ENOENT;
	if (!r->executing)
		return -EBUSY;
	now = sync_r(qs, now);
	if (service_ns == SL_QS_SERVICE_FROM_CLOCK)
		service_ns = now - r->start_ns;
	q = r->q;
	qs->tot_executing--;
	qs->seats_in_use -= r->seats;
	if (q) {
		i128 corr, v;

		sl_list_remove(&q->executing, &r->link);
		/* Kubernetes queueset.go finishRequestLocked: nextDispatchR −= InitialSeats × (G − S) */
		corr = div10_round((i128)r->seats * ((i128)r->guess_ns - (i128)service_ns));
		v = (i128)q->next_r - corr;
		q->next_r = v < 0 ? 0 : v > (i128)READING_CAP ? READING_CAP : (uint64_t)v;
		anti_windup(q);
		/* step 3: no final phase, release now */
		q->seats_in_use -= r->seats;
		qs->q_seats_in_use -= r->seats;
		if (!q_active(q)) {
			qs->active--;
			/* step 4 */
			if ((int64_t)qs->nq > (int64_t)qs->cfg.queues)
				remove_queue(qs, q->index);
		}
	} else {
		sl_list_remove(&qs->qless, &r->link);
	}
	sl_idx_del(&qs->ids, r);
	free(r);
	dispatch_loop(qs, now, NULL);
	return 0;
}

static int remove_waiting(struct sl_qs *qs, uint64_t now, uint64_t id, uint64_t *counter)
{
	struct req *r = find(qs, id);
	struct queue *q;

	if (!r)
		return -ENOENT;
	if (r->executing)
		return -EALREADY;
	now = sync_r(qs, now);
	q = r->q;
	unlink_waiting(qs, r);
	anti_windup(q);
	if (counter)
		(*counter)++;
	sl_idx_del(&qs->ids, r);
	free(r);
	dispatch_loop(qs, now, NULL);
	return 0;
}

int sl_qs_cancel(struct sl_qs *qs, uint64_t now, uint64_t id)
{
	return remove_waiting(qs, now, id, &qs->rej_to);
}

int sl_qs_withdraw(struct sl_qs *qs, uint64_t now, uint64_t id)
{
	return remove_waiting(qs, now, id, NULL);
}

/* Remove waiting requests that `drop` picks, oldest first, then dispatch
 * (noted), then tell: the one path of sl_qs_expire, sl_qs_shed and sl_qs_shed_flows.
 * drop returns false to keep a request, and may end the walk (*stop). */
struct drop_rule {
	bool (*drop)(const struct sl_qs *qs, const struct req *r, uint64_t now,
		     const struct drop_rule *rule, bool *stop);
	uint64_t limit_ns;          /* expiry: the wait limit */
	sl_qs_flow_pick_fn pick;    /* flows: which (NULL: all) */
	void *pick_ctx;
};

static size_t drop_waiting(struct sl_qs *qs, uint64_t now, const struct drop_rule *rule,
			   uint64_t *counter, sl_qs_expired_fn on_removed, void *ctx)
{
	struct sl_list gone = {0};
	struct sl_link *e, *next;
	size_t n = 0;
	bool stop = false;

	now = sync_r(qs, now);
	for (e = qs->arrivals.head; e && !stop; e = next) {
		struct req *r = arrival_at(e);
		struct queue *q = r->q;

		next = e->next;
		if (!rule->drop(qs, r, now, rule, &stop))
			continue;
		unlink_waiting(qs, r);
		anti_windup(q);
		(*counter)++;
		sl_idx_del(&qs->ids, r);
		sl_list_append(&gone, &r->link); /* off its queue now */
		n++;
	}
	dispatch_loop(qs, now, NULL);
	while (gone.head) {
		struct req *r = req_at(gone.head);
		uint64_t id = r->id;

		sl_list_remove(&gone, &r->link);
		free(r);
		if (on_removed)
			on_removed(ctx, id);
	}
	return n;
}

static bool drop_expired(const struct sl_qs *qs, const struct req *r, uint64_t now,
			 const struct drop_rule *rule, bool *stop)
{
	(void)qs;
	/* Arrival order: the first one still in time ends the walk. */
	*stop = now - r->arrival_ns <= rule->limit_ns;
	return !*stop;
}

size_t sl_qs_expire(struct sl_qs *qs, uint64_t now, uint64_t wait_limit_ns,
		    sl_qs_expired_fn on_expired, void *ctx)
{
	const struct drop_rule rule = {.drop = drop_expired, .limit_ns = wait_limit_ns};

	return drop_waiting(qs, now, &rule, &qs->rej_to, on_expired, ctx);
}

static bool drop_standing(const struct sl_qs *qs, const struct req *r, uint64_t now,
			  const struct drop_rule *rule, bool *stop)
{
	const struct queue *q = r->q;

	(void)rule;
	if (now - r->arrival_ns <= qs->cfg.delay_target_ns) {
		*stop = true; /* everyone after it is younger still */
		return false;
	}
	return now - q->backlog_since_ns >= qs->cfg.delay_interval_ns && /* standing */
	       &r->link != q->waiting.tail;                              /* not its newest */
}

size_t sl_qs_shed(struct sl_qs *qs, uint64_t now, sl_qs_expired_fn on_shed, void *ctx)
{
	const struct drop_rule rule = {.drop = drop_standing};

	if (!qs->cfg.delay_target_ns)
		return 0;
	return drop_waiting(qs, now, &rule, &qs->rej_shed, on_shed, ctx);
}

static bool drop_flow(const struct sl_qs *qs, const struct req *r, uint64_t now,
		      const struct drop_rule *rule, bool *stop)
{
	(void)qs, (void)now, (void)stop;
	return !rule->pick || rule->pick(rule->pick_ctx, r->flow_hash);
}

size_t sl_qs_shed_flows(struct sl_qs *qs, uint64_t now, sl_qs_flow_pick_fn pick, void *pick_ctx,
			sl_qs_expired_fn on_shed, void *ctx)
{
	const struct drop_rule rule = {.drop = drop_flow, .pick = pick, .pick_ctx = pick_ctx};

	return drop_waiting(qs, now, &rule, &qs->rej_stall, on_shed, ctx);
}

/* ---- introspection ---------------------------------------------------------------------- */

void sl_qs_get_stats(const struct sl_qs *qs, struct sl_qs_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->desired_queues = qs->cfg.queues;
	st->queues = qs->nq;
	st->hand_size = qs->cfg.hand_size;
	st->queue_length_limit = qs->cfg.queue_length_limit;
	st->guess_ns = qs->cfg.guess_ns;
	st->cl = qs->cl;
	st->r = qs->r;
	st->last_ns = qs->last_ns;
	st->robin_index = qs->robin;
	st->enqueues = qs->enqueues;
	st->waiting = qs->tot_waiting;
	st->executing = qs->tot_executing;
	st->seats_in_use = qs->seats_in_use;
	st->seats_waiting = qs->seats_waiting;
	st->active_queues = qs->active;
	st->dispatched = qs->dispatched;
	st->rejected_queue_full = qs->rej_qf;
	st->rejected_concurrency_limit = qs->rej_cl;
	st->rejected_time_out = qs->rej_to;
	st->rejected_shed = qs->rej_shed;
	st->rejected_stalled = qs->rej_stall;
	st->epochs = qs->epochs;
	st->epoch_failures = qs->epoch_fail;
	st->no_accommodation = qs->no_accom;
}

uint64_t sl_qs_demand(const struct sl_qs *qs)
{
	return qs->seats_in_use + qs->seats_waiting;
}

uint64_t sl_qs_seats_in_use(const struct sl_qs *qs)
{
	return qs->seats_in_use;
}

uint64_t sl_qs_waiting(const struct sl_qs *qs)
{
	return qs->tot_waiting;
}

uint64_t sl_qs_seats_waiting(const struct sl_qs *qs)
{
	return qs->seats_waiting;
}

uint32_t sl_qs_queue_count(const struct sl_qs *qs)
{
	return qs->nq;
}

int sl_qs_queue_info(const struct sl_qs *qs, uint32_t index, struct sl_qs_queue_info *out)
{
	const struct queue *q;

	if (index >= qs->nq)
		return -ENOENT;
	q = qs->queues[index];
	out->index = index;
	out->waiting = q->waiting.n;
	out->executing = q->executing.n;
	out->seats_in_use = q->seats_in_use;
	out->next_dispatch_r = q->next_r;
	out->initial_seats_sum = q->sum_initial;
	out->max_seats_sum = q->sum_max;
	out->total_work_sum = q->sum_work;
	return 0;
}

static void fill_info(const struct req *r, int32_t position, struct sl_qs_req_info *out)
{
	out->id = r->id;
	out->flow_hash = r->flow_hash;
	out->seats = r->seats;
	out->queue = r->q ? (int32_t)r->q->index : -1;
	out->position = r->executing ? -1 : position;
	out->executing = r->executing;
	out->arrival_ns = r->arrival_ns;
	out->start_ns = r->executing ? r->start_ns : 0;
	out->guess_ns = r->guess_ns;
	out->work = r->work;
}

int sl_qs_lookup(const struct sl_qs *qs, uint64_t id, struct sl_qs_req_info *out)
{
	const struct req *r = find(qs, id);
	int32_t pos = 0;

	if (!r)
		return -ENOENT;
	if (!r->executing)
		for (const struct sl_link *p = r->link.prev; p; p = p->prev)
			pos++; /* O(position); the rest is O(1) */
	fill_info(r, pos, out);
	return 0;
}

int sl_qs_foreach_request(const struct sl_qs *qs, sl_qs_req_fn fn, void *ctx)
{
	struct sl_qs_req_info info;
	int rc;

	for (uint32_t i = 0; i < qs->nq; i++) {
		int32_t pos = 0;

		for (const struct sl_link *e = qs->queues[i]->waiting.head; e; e = e->next) {
			fill_info(req_at(e), pos++, &info);
			if ((rc = fn(ctx, &info)))
				return rc;
		}
		for (const struct sl_link *e = qs->queues[i]->executing.head; e; e = e->next) {
			fill_info(req_at(e), -1, &info);
			if ((rc = fn(ctx, &info)))
				return rc;
		}
	}
	for (const struct sl_link *e = qs->qless.head; e; e = e->next) {
		fill_info(req_at(e), -1, &info);
		if ((rc = fn(ctx, &info)))
			return rc;
	}
	return 0;
}
