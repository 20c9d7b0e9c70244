/*
 * APF QueueSet for connections (spec/apf.md §2.4, §3, §9).  See queueset.h.
 *
 * Layout: an array of pointers to queues (a queue keeps its address when
 * the array is renumbered); each queue has a FIFO of waiting requests and a
 * list of executing ones; queue-less executing requests (exempt, Reject-type)
 * are on their own list; every waiting request is also on one global list
 * in arrival order (for the expiry sweep); an open-addressing table maps ids
 * to requests.  The R meter's inputs (NEQ and Σ seatsInUse + Σ MaxSeats
 * waiting over the queues) are kept as running totals.
 */
#include "engine/queueset.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/shuffle.h"

typedef unsigned __int128 u128;
typedef __int128 i128;

#define MAX_QUEUES     10000000u         /* API validation: queues <= 10^7 (§2.2) */
#define MAX_INCR_R     (UINT64_C(1) << 62) /* one sync never advances R further */
/* One request's work is at most SL_QS_MAX_SEATS × SL_QS_MAX_GUESS_NS / 10
 * ≈ 6.3e16 < 2^56.  Readings (nextDispatchR) are kept <= READING_CAP so that
 * adding one request's work never wraps. */
#define MAX_WORK       (UINT64_C(1) << 56)
#define READING_CAP    (UINT64_MAX - MAX_WORK)
_Static_assert((uint64_t)SL_QS_MAX_SEATS * (SL_QS_MAX_GUESS_NS / 10 + 1) < MAX_WORK,
	       "work bound");

struct req {
	uint64_t id;
	uint64_t flow_hash;
	uint64_t arrival_ns;
	uint64_t start_ns;
	uint64_t guess_ns;  /* G at arrival */
	uint64_t work;      /* totalWork = seats × G (no final phase) */
	uint64_t arrival_r;
	uint32_t seats;     /* InitialSeats = FinalSeats = MaxSeats */
	bool executing;
	struct queue *q;    /* NULL: queue-less */
	struct req *prev, *next;   /* queue FIFO, or an executing list */
	struct req *gprev, *gnext; /* global waiting list */
};

struct rlist {
	struct req *head, *tail;
	uint32_t n;
};

struct queue {
	uint32_t index;
	struct rlist waiting;
	struct rlist executing;
	uint64_t seats_in_use;
	uint64_t next_r;           /* nextDispatchR */
	uint64_t sum_initial;      /* Σ InitialSeats of waiting */
	uint64_t sum_max;          /* Σ MaxSeats of waiting */
	uint64_t sum_work;         /* Σ totalWork of waiting */
};

struct pending {
	uint64_t id, now;
};

struct sl_qs {
	struct sl_qs_config cfg;
	uint32_t cl;
	sl_qs_dispatch_fn on_dispatch;
	void *ctx;

	struct queue **queues;
	uint32_t nq, cap_q;

	uint64_t r, last_ns;
	int64_t robin;
	uint64_t enqueues;

	uint64_t tot_waiting, tot_executing;
	uint64_t seats_in_use;     /* all executing requests */
	uint64_t seats_waiting;    /* Σ MaxSeats waiting (all in queues) */
	uint64_t q_seats_in_use;   /* Σ over queues of seatsInUse */
	uint32_t active;           /* NEQ */

	struct rlist qless;        /* queue-less executing */
	struct req *ghead, *gtail; /* waiting, arrival order */

	struct req **slots;        /* id table, power-of-two size */
	size_t slot_cap, slot_count;

	struct pending *pend;      /* dispatch notifications not yet delivered */
	size_t pend_len, pend_head, pend_cap;
	bool flushing;

	uint64_t dispatched, rej_qf, rej_cl, rej_to, epochs, epoch_fail, no_accom;
};

/* ---- SeatSeconds ------------------------------------------------------------ */

static uint64_t sat64(u128 v)
{
	return v > UINT64_MAX ? UINT64_MAX : (uint64_t)v;
}

uint64_t sl_ss_from_seats_ns(uint64_t seats, uint64_t ns)
{
	return sat64(((u128)seats * ns + 5) / 10);
}

uint64_t sl_ss_per_seat_ns(uint64_t units, uint64_t seats)
{
	if (!seats)
		return UINT64_MAX;
	return sat64((u128)units * 10 / seats);
}

int sl_ss_format(uint64_t units, char *buf, size_t len)
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

static int invalid(char *why, size_t why_len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int invalid(char *why, size_t why_len, const char *fmt, ...)
{
	va_list ap;

	if (why && why_len) {
		va_start(ap, fmt);
		vsnprintf(why, why_len, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

int sl_qs_config_validate(const struct sl_qs_config *cfg, char *why, size_t why_len)
{
	if (!cfg)
		return invalid(why, why_len, "no configuration");
	if (cfg->queues < SL_QS_EXEMPT)
		return invalid(why, why_len, "queues %" PRId32 " is invalid (-1 exempt, 0 Reject, >= 1 Queue)",
			       cfg->queues);
	if (cfg->guess_ns < 1 || cfg->guess_ns > SL_QS_MAX_GUESS_NS)
		return invalid(why, why_len, "guessed duration %" PRIu64 " ns is outside 1 ns .. 600 s",
			       cfg->guess_ns);
	if (cfg->queues >= 1) {
		int rc;

		if ((uint32_t)cfg->queues > MAX_QUEUES)
			return invalid(why, why_len, "queues %" PRId32 " is more than %u", cfg->queues,
				       MAX_QUEUES);
		if (cfg->queue_length_limit < 1)
			return invalid(why, why_len, "queueLengthLimit must be at least 1");
		if (cfg->queues == 1 && cfg->hand_size != 1)
			return invalid(why, why_len, "handSize must be 1 with a single queue");
		rc = sl_shuffle_validate((uint32_t)cfg->queues, cfg->hand_size, why, why_len);
		if (rc)
			return rc;
	}
	if (why && why_len)
		why[0] = '\0';
	return 0;
}

/* ---- lists --------------------------------------------------------------------- */

static void rl_append(struct rlist *l, struct req *r)
{
	r->next = NULL;
	r->prev = l->tail;
	if (l->tail)
		l->tail->next = r;
	else
		l->head = r;
	l->tail = r;
	l->n++;
}

static void rl_remove(struct rlist *l, struct req *r)
{
	if (r->prev)
		r->prev->next = r->next;
	else
		l->head = r->next;
	if (r->next)
		r->next->prev = r->prev;
	else
		l->tail = r->prev;
	r->prev = r->next = NULL;
	l->n--;
}

static void gl_append(struct sl_qs *qs, struct req *r)
{
	r->gnext = NULL;
	r->gprev = qs->gtail;
	if (qs->gtail)
		qs->gtail->gnext = r;
	else
		qs->ghead = r;
	qs->gtail = r;
}

static void gl_remove(struct sl_qs *qs, struct req *r)
{
	if (r->gprev)
		r->gprev->gnext = r->gnext;
	else
		qs->ghead = r->gnext;
	if (r->gnext)
		r->gnext->gprev = r->gprev;
	else
		qs->gtail = r->gprev;
	r->gprev = r->gnext = NULL;
}

/* ---- id table (open addressing, linear probing, backward-shift delete) ------- */

static size_t id_home(uint64_t id, size_t mask)
{
	/* splitmix64 finaliser */
	id ^= id >> 30;
	id *= 0xbf58476d1ce4e5b9ull;
	id ^= id >> 27;
	id *= 0x94d049bb133111ebull;
	id ^= id >> 31;
	return (size_t)id & mask;
}

static struct req *map_find(const struct sl_qs *qs, uint64_t id)
{
	size_t mask = qs->slot_cap - 1;

	if (!qs->slot_cap)
		return NULL;
	for (size_t i = id_home(id, mask);; i = (i + 1) & mask) {
		struct req *r = qs->slots[i];

		if (!r)
			return NULL;
		if (r->id == id)
			return r;
	}
}

static void map_put(struct req **slots, size_t cap, struct req *r)
{
	size_t mask = cap - 1, i = id_home(r->id, mask);

	while (slots[i])
		i = (i + 1) & mask;
	slots[i] = r;
}

/* Room for one more entry at load <= 1/2.  0 or -ENOMEM. */
static int map_reserve(struct sl_qs *qs)
{
	size_t cap;
	struct req **slots;

	if ((qs->slot_count + 1) * 2 <= qs->slot_cap)
		return 0;
	cap = qs->slot_cap ? qs->slot_cap * 2 : 16;
	slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < qs->slot_cap; i++)
		if (qs->slots[i])
			map_put(slots, cap, qs->slots[i]);
	free(qs->slots);
	qs->slots = slots;
	qs->slot_cap = cap;
	return 0;
}

static void map_insert(struct sl_qs *qs, struct req *r)
{
	map_put(qs->slots, qs->slot_cap, r);
	qs->slot_count++;
}

static void map_delete(struct sl_qs *qs, uint64_t id)
{
	size_t mask = qs->slot_cap - 1, i = id_home(id, mask);

	while (qs->slots[i]->id != id)
		i = (i + 1) & mask;
	qs->slots[i] = NULL;
	qs->slot_count--;
	/* Shift back the entries of the cluster that probed past slot i. */
	for (size_t j = (i + 1) & mask; qs->slots[j]; j = (j + 1) & mask) {
		size_t k = id_home(qs->slots[j]->id, mask);
		/* Entry j may move to i unless its home lies cyclically in (i, j]. */
		bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);

		if (!stays) {
			qs->slots[i] = qs->slots[j];
			qs->slots[j] = NULL;
			i = j;
		}
	}
}

/* ---- dispatch notifications ---------------------------------------------------- */

/* Invariant: pend_cap >= pend_len + tot_waiting, so the dispatch loop never
 * allocates.  Called before a request is enqueued. */
static int pend_reserve(struct sl_qs *qs)
{
	size_t need = qs->pend_len + (size_t)qs->tot_waiting + 1, cap;
	struct pending *p;

	if (!qs->on_dispatch || need <= qs->pend_cap)
		return 0;
	cap = qs->pend_cap ? qs->pend_cap : 16;
	while (cap < need)
		cap *= 2;
	p = realloc(qs->pend, cap * sizeof(*p));
	if (!p)
		return -ENOMEM;
	qs->pend = p;
	qs->pend_cap = cap;
	return 0;
}

static void pend_push(struct sl_qs *qs, uint64_t id, uint64_t now)
{
	if (!qs->on_dispatch)
		return;
	qs->pend[qs->pend_len].id = id;
	qs->pend[qs->pend_len].now = now;
	qs->pend_len++;
}

/* Deliver the notifications once the state is consistent.  A nested call
 * (from inside a callback) leaves delivery to the outermost one. */
static void flush(struct sl_qs *qs)
{
	if (qs->flushing)
		return;
	qs->flushing = true;
	while (qs->pend_head < qs->pend_len) {
		struct pending p = qs->pend[qs->pend_head++];

		qs->on_dispatch(qs->ctx, p.id, p.now);
	}
	qs->pend_head = qs->pend_len = 0;
	qs->flushing = false;
}

/* ---- queues -------------------------------------------------------------------- */

static bool q_active(const struct queue *q)
{
	return q->waiting.n || q->executing.n;
}

static bool is_exempt(const struct sl_qs *qs)
{
	return qs->cfg.queues == SL_QS_EXEMPT;
}

/* §3.6 anti-windup: dispatch in the virtual world never precedes arrival. */
static void anti_windup(struct queue *q)
{
	if (q->waiting.head && q->next_r < q->waiting.head->arrival_r)
		q->next_r = q->waiting.head->arrival_r;
}

/* §3.5 step 4: remove queue idx and renumber the ones after it. */
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

/* ---- the R meter (§3.2) ----------------------------------------------------------- */

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
	for (struct req *r = qs->ghead; r; r = r->gnext)
		r->arrival_r = sub_reading(r->arrival_r, &fail);
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

/* ---- dispatch (§3.4) -------------------------------------------------------------- */

static bool fits(const struct sl_qs *qs, uint64_t seats)
{
	if (is_exempt(qs))
		return true;
	if (seats > qs->cl)
		return qs->tot_executing == 0;
	return qs->seats_in_use + seats <= qs->cl;
}

/* §3.4 step 1: the queue whose head has the least virtual finish time,
 * scanning round-robin from robinIndex + 1; ties go to the first scanned. */
static struct queue *choose_queue(const struct sl_qs *qs)
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
		f = q->next_r + q->waiting.head->work; /* next_r <= READING_CAP */
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
		rl_append(&r->q->executing, r);
		r->q->seats_in_use += r->seats;
		qs->q_seats_in_use += r->seats;
	} else {
		rl_append(&qs->qless, r);
	}
}

/* Take a waiting request out of its queue (sums, totals, NEQ, global list). */
static void unlink_waiting(struct sl_qs *qs, struct req *r)
{
	struct queue *q = r->q;

	rl_remove(&q->waiting, r);
	gl_remove(qs, r);
	q->sum_initial -= r->seats;
	q->sum_max -= r->seats;
	q->sum_work -= r->work;
	qs->tot_waiting--;
	qs->seats_waiting -= r->seats;
	if (!q_active(q))
		qs->active--;
}

/* Dispatch as much as possible.  `self` (the request of the arrival in
 * progress, or NULL) is not notified through on_dispatch. */
static void dispatch_loop(struct sl_qs *qs, uint64_t now, const struct req *self)
{
	while (qs->tot_waiting && (is_exempt(qs) || qs->seats_in_use < qs->cl)) {
		struct queue *q = choose_queue(qs);
		struct req *h;

		if (!q)
			break; /* cannot happen: waiting requests are in queues */
		h = q->waiting.head;
		if (!fits(qs, h->seats)) {
			/* Wait for seats; nothing else goes first, robinIndex stays. */
			qs->no_accom++;
			break;
		}
		/* q stays active: h moves from its FIFO to its executing set. */
		rl_remove(&q->waiting, h);
		gl_remove(qs, h);
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
			pend_push(qs, h->id, now);
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
		 sl_qs_dispatch_fn on_dispatch, void *ctx, char *why, size_t why_len)
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
	qs->on_dispatch = on_dispatch;
	qs->ctx = ctx;
	qs->last_ns = now;
	qs->robin = -1;
	if (cfg->queues >= 1 && add_queues(qs, (uint32_t)cfg->queues)) {
		sl_qs_free(qs);
		return -ENOMEM;
	}
	*out = qs;
	return 0;
}

static void free_list(struct req *r)
{
	while (r) {
		struct req *n = r->next;

		free(r);
		r = n;
	}
}

void sl_qs_free(struct sl_qs *qs)
{
	if (!qs)
		return;
	for (uint32_t i = 0; i < qs->nq; i++) {
		free_list(qs->queues[i]->waiting.head);
		free_list(qs->queues[i]->executing.head);
		free(qs->queues[i]);
	}
	free_list(qs->qless.head);
	free(qs->queues);
	free(qs->slots);
	free(qs->pend);
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
		/* §3.9: the old queuing parameters stay while the queues drain. */
		c.hand_size = qs->cfg.hand_size;
		c.queue_length_limit = qs->cfg.queue_length_limit;
	}
	qs->cfg = c;
	dispatch_loop(qs, now, NULL);
	flush(qs);
	return 0;
}

void sl_qs_set_cl(struct sl_qs *qs, uint64_t now, uint32_t cl)
{
	now = sync_r(qs, now);
	qs->cl = cl;
	dispatch_loop(qs, now, NULL);
	flush(qs);
}

/* ---- requests ----------------------------------------------------------------------- */

/* §2.4: deal a hand, visit it from offset enqueues mod H, least Σ totalWork
 * of waiting requests wins (strict <). */
static struct queue *pick_queue(struct sl_qs *qs, uint64_t flow_hash)
{
	uint32_t hand[SL_SHUFFLE_MAX_HAND], h = qs->cfg.hand_size, deck = (uint32_t)qs->cfg.queues;
	struct queue *best = NULL;
	uint32_t o;

	if (deck == 1) {
		hand[0] = 0; /* one FIFO, no hashing (§3.8) */
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
	if (map_find(qs, id))
		return -EEXIST;
	/* Every allocation first: a failure changes nothing. */
	if (map_reserve(qs) || pend_reserve(qs))
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
		/* Exempt: always.  Reject-type: fits() or concurrency-limit (§3.8). */
		if (!fits(qs, seats)) {
			free(r);
			qs->rej_cl++;
			return SL_QS_REJECT_CONCURRENCY;
		}
		start_executing(qs, r, now);
		map_insert(qs, r);
		return SL_QS_DISPATCHED;
	}

	r->work = sl_ss_from_seats_ns(seats, r->guess_ns);
	q = pick_queue(qs, flow_hash);
	if (qs->seats_in_use >= qs->cl && q->waiting.n >= qs->cfg.queue_length_limit) {
		/* §3.3: the newest request is the one rejected */
		free(r);
		qs->rej_qf++;
		return SL_QS_REJECT_QUEUE_FULL;
	}
	if (!q_active(q)) {
		q->next_r = qs->r;
		qs->active++;
	}
	r->q = q;
	rl_append(&q->waiting, r);
	gl_append(qs, r);
	q->sum_initial += seats;
	q->sum_max += seats;
	q->sum_work += r->work;
	qs->tot_waiting++;
	qs->seats_waiting += seats;
	map_insert(qs, r);
	anti_windup(q);
	dispatch_loop(qs, now, r);
	flush(qs);
	/* r is still live: nothing above can complete or cancel it. */
	return r->executing ? SL_QS_DISPATCHED : SL_QS_QUEUED;
}

int sl_qs_complete(struct sl_qs *qs, uint64_t now, uint64_t id, uint64_t service_ns)
{
	struct req *r = map_find(qs, id);
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

		rl_remove(&q->executing, r);
		/* §3.5 step 2: nextDispatchR −= InitialSeats × (G − S) */
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
		rl_remove(&qs->qless, r);
	}
	map_delete(qs, id);
	free(r);
	dispatch_loop(qs, now, NULL);
	flush(qs);
	return 0;
}

int sl_qs_cancel(struct sl_qs *qs, uint64_t now, uint64_t id)
{
	struct req *r = map_find(qs, id);
	struct queue *q;

	if (!r)
		return -ENOENT;
	if (r->executing)
		return -EALREADY;
	now = sync_r(qs, now);
	q = r->q;
	unlink_waiting(qs, r);
	anti_windup(q);
	qs->rej_to++;
	map_delete(qs, id);
	free(r);
	dispatch_loop(qs, now, NULL);
	flush(qs);
	return 0;
}

size_t sl_qs_expire(struct sl_qs *qs, uint64_t now, uint64_t wait_limit_ns,
		    sl_qs_expired_fn on_expired, void *ctx)
{
	struct req *gone = NULL, **tail = &gone;
	size_t n = 0;

	now = sync_r(qs, now);
	while (qs->ghead && now - qs->ghead->arrival_ns > wait_limit_ns) {
		struct req *r = qs->ghead;
		struct queue *q = r->q;

		unlink_waiting(qs, r);
		anti_windup(q);
		qs->rej_to++;
		map_delete(qs, r->id);
		*tail = r; /* r->next is free now */
		tail = &r->next;
		n++;
	}
	dispatch_loop(qs, now, NULL);
	while (gone) {
		struct req *r = gone;
		uint64_t id = r->id;

		gone = r->next;
		free(r);
		if (on_expired)
			on_expired(ctx, id);
	}
	flush(qs);
	return n;
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
	const struct req *r = map_find(qs, id);
	int32_t pos = 0;

	if (!r)
		return -ENOENT;
	if (!r->executing)
		for (const struct req *p = r->prev; p; p = p->prev)
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

		for (const struct req *r = qs->queues[i]->waiting.head; r; r = r->next) {
			fill_info(r, pos++, &info);
			if ((rc = fn(ctx, &info)))
				return rc;
		}
		for (const struct req *r = qs->queues[i]->executing.head; r; r = r->next) {
			fill_info(r, -1, &info);
			if ((rc = fn(ctx, &info)))
				return rc;
		}
	}
	for (const struct req *r = qs->qless.head; r; r = r->next) {
		fill_info(r, -1, &info);
		if ((rc = fn(ctx, &info)))
			return rc;
	}
	return 0;
}

/* ---- invariants --------------------------------------------------------------------------- */

static int broken(char *why, size_t why_len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int broken(char *why, size_t why_len, const char *fmt, ...)
{
	va_list ap;

	if (why && why_len) {
		va_start(ap, fmt);
		vsnprintf(why, why_len, fmt, ap);
		va_end(ap);
	}
	return -EPROTO;
}

/* Links, count, membership and flags of one list; adds seats (and work). */
static int check_list(const struct sl_qs *qs, const struct rlist *l, const struct queue *q,
		      bool executing, uint64_t *seats, uint64_t *work, char *why, size_t why_len)
{
	const struct req *prev = NULL;
	uint32_t n = 0;

	for (const struct req *r = l->head; r; prev = r, r = r->next) {
		if (r->prev != prev)
			return broken(why, why_len, "request %" PRIu64 ": bad prev link", r->id);
		if (r->q != q || r->executing != executing)
			return broken(why, why_len, "request %" PRIu64 ": on the wrong list", r->id);
		if (map_find(qs, r->id) != r)
			return broken(why, why_len, "request %" PRIu64 ": not in the id table", r->id);
		if (r->seats < 1 || r->seats > SL_QS_MAX_SEATS)
			return broken(why, why_len, "request %" PRIu64 ": seats %u", r->id, r->seats);
		if (q && r->work != sl_ss_from_seats_ns(r->seats, r->guess_ns))
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
		return broken(why, why_len, "list count %u, found %u", l->n, n);
	return 0;
}

int sl_qs_check(const struct sl_qs *qs, char *why, size_t why_len)
{
	uint64_t waiting = 0, executing = 0, seats_wait = 0, q_seats = 0, seats = 0;
	uint32_t active = 0;
	size_t in_table = 0, n_global = 0;
	const struct req *prev = NULL;
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
		if (q->waiting.head && q->next_r < q->waiting.head->arrival_r)
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
	for (const struct req *r = qs->ghead; r; prev = r, r = r->gnext) {
		if (r->gprev != prev || r->executing || !r->q)
			return broken(why, why_len, "global waiting list at %" PRIu64, r->id);
		if (prev && prev->arrival_ns > r->arrival_ns)
			return broken(why, why_len, "global waiting list out of arrival order");
		n_global++;
	}
	if (qs->gtail != prev || n_global != qs->tot_waiting)
		return broken(why, why_len, "global waiting list: %zu of %" PRIu64, n_global,
			      qs->tot_waiting);
	for (size_t i = 0; i < qs->slot_cap; i++)
		in_table += qs->slots[i] != NULL;
	if (in_table != qs->slot_count || in_table != waiting + executing)
		return broken(why, why_len, "id table holds %zu, %zu counted, %" PRIu64 " tracked",
			      in_table, qs->slot_count, waiting + executing);
	if (qs->slot_cap && qs->slot_count * 2 > qs->slot_cap)
		return broken(why, why_len, "id table over half full");
	/* The dispatch loop ran to its end. */
	if (!qs->flushing && qs->pend_len)
		return broken(why, why_len, "undelivered dispatch notifications");
	if (qs->tot_waiting && (is_exempt(qs) || qs->seats_in_use < qs->cl)) {
		const struct queue *q = choose_queue(qs);

		if (!q || fits(qs, q->waiting.head->seats))
			return broken(why, why_len, "the dispatch loop stopped with a head that fits");
	}
	if (qs->on_dispatch && qs->pend_cap < qs->pend_len + qs->tot_waiting)
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
