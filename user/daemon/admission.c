#include "daemon/admission.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dataplane/tickets.h"
#include "engine/borrowing.h"
#include "engine/classifier.h"
#include "lib/flowhash.h"
#include "lib/fmt.h"
#include "lib/json_out.h"
#include "engine/loadsched.h"
#include "lib/log.h"
#include "daemon/metrics.h"
#include "engine/pending.h"
#include "daemon/policy_rt.h"
#include "engine/queueset.h"

#define PENDING_CAPACITY  65536
/* G, the guessed seat-holding time of a dispatched connection: it holds
 * its seats from the dispatch (the admit ticket), through the client's
 * retransmit (up to a second later), until it closes. */
#define GUESS_NS          (1000ULL * 1000000ULL)
#define SWEEP_INTERVAL_NS 1000000000ULL

struct level_rt {
	struct sl_admission *adm;
	unsigned slot;
	bool active;            /* in the current configuration */
	char name[SLUICE_LEVEL_NAME_LEN];
	enum sl_level_type type;
	enum sl_limit_response response;
	uint64_t wait_limit_ns; /* queueWaitLimit */
	struct sl_qs *qs;       /* Queue-type levels (and ones draining) */
	struct sl_level_limits lim;
	uint32_t current_cl;    /* after borrowing */
	uint64_t ticket_seats;  /* seats held by connections we dispatched */
	uint64_t dispatched_total; /* seats dispatched on admit tickets, cumulative */
	/* Of dispatched connections that closed: how long the ticket waited
	 * for its claim and how long the connection then held its seats
	 * (moving averages, ns; 0 = no sample yet): overbook_cap(). */
	double claim_delay_ns, hold_ns;
	struct sl_demand demand;
	uint64_t tickets_admit, tickets_reject;
};

struct sl_admission {
	struct sl_dataplane *dp;
	const struct sl_config *cfg;
	uint8_t hash_key[16];
	struct level_rt levels[SLUICE_MAX_LEVELS];
	struct sl_pending_table *pending;
	struct sl_policies *policies; /* the load-scheduler gate, or NULL */
	uint32_t server_cl;
	double overbooking;     /* Server spec.ticketOverbooking */
	uint64_t borrow_period_ns, last_borrow_ns, last_sweep_ns;
	uint64_t now;           /* of the tick in progress (for callbacks) */
	struct sl_borrow_result last_borrow;
};

/* ---- tickets -------------------------------------------------------------- */

static struct sluice_ticket ticket_of(const struct sl_pending *p, uint32_t verdict, uint64_t now)
{
	return (struct sluice_ticket){
		.issued_ns = now, .verdict = verdict, .level = p->level, .seats = p->seats,
		.schema = p->schema, .policy = p->policy, .workload = p->workload,
	};
}

static void reject(struct level_rt *l, struct sl_pending *p, uint64_t now)
{
	struct sl_admission *adm = l->adm;
	struct sluice_ticket t;

	/* Refused after its policy admitted it: the tokens go back
	 * (spec/aimd.md §3.2 item 7). */
	if (p->policy_admitted && adm->policies)
		sl_policies_return(adm->policies, p->policy, p->workload, now);
	p->policy_admitted = false;
	p->state = SL_PENDING_REJECTED;
	p->ticket_ns = now;
	p->deadline_ns = now + SL_TICKET_TTL_NS;
	l->tickets_reject++;
	t = ticket_of(p, SLUICE_TICKET_REJECT, now);
	sl_ticket_reject(adm->dp, &p->key, &t);
}

uint64_t sl_next_syn_retransmit(uint64_t first_syn_ns, uint64_t now)
{
	uint64_t at = first_syn_ns, rto = 1000000000ULL;

	for (int i = 0; i < 8 && at <= now; i++) {
		at += rto;
		rto *= 2;
	}
	return at > now ? at : now + rto;
}

/* The QueueSet started this request (or its level had room): reserve its
 * seats in the data path, unless already reserved, and let the client's
 * next SYN retransmit in. */
static void admit(struct level_rt *l, struct sl_pending *p, uint64_t now, bool reserved)
{
	struct sl_admission *adm = l->adm;
	struct sluice_ticket t;

	l->ticket_seats += p->seats;
	l->dispatched_total += p->seats;
	p->state = SL_PENDING_ADMITTED;
	p->ticket_ns = now;
	p->deadline_ns = sl_next_syn_retransmit(p->arrival_ns, now);
	if (p->deadline_ns > now + 1000000000ULL)
		p->deadline_ns = now + 1000000000ULL;
	p->deadline_ns += SL_TICKET_SLACK_NS;
	l->tickets_admit++;
	t = ticket_of(p, SLUICE_TICKET_ADMIT, now);
	if (sl_ticket_admit(adm->dp, &p->key, &t, reserved)) {
		/* No ticket, no admission (its seats went back with it). */
		l->ticket_seats -= p->seats;
		l->dispatched_total -= p->seats;
		if (p->in_queueset && l->qs)
			sl_qs_complete(l->qs, now, p->id, 0);
		sl_pending_remove(adm->pending, p);
	}
}

static void on_dispatch(void *ctx, uint64_t id, uint64_t now)
{
	struct level_rt *l = ctx;
	struct sl_pending *p = sl_pending_by_id(l->adm->pending, id);

	if (p)
		admit(l, p, now, false);
}

static void on_expired(void *ctx, uint64_t id)
{
	struct level_rt *l = ctx;
	struct sl_pending *p = sl_pending_by_id(l->adm->pending, id);

	if (p)
		reject(l, p, l->adm->now);
}

/* ---- keeping the QueueSet and the data path in step ------------------------ */

static uint64_t bpf_seats(const struct level_rt *l)
{
	return sl_seats_in_use(l->adm->dp, l->slot);
}

static uint64_t unclaimed_seats(const struct level_rt *l)
{
	return sl_seats_unclaimed(l->adm->dp, l->slot);
}

/*
 * How far the QueueSet may dispatch beyond the limit while tickets wait
 * for their claim: at most ticketOverbooking x the limit (1 by default),
 * and no more than the level needs to keep its seats busy: Little's law,
 * limit x mean claim delay / mean holding time (both measured on the
 * dispatched connections that closed).  More overbooking buys throughput
 * at the cost of claims that bunch: the claimed concurrency overshoots the
 * limit, and later dispatches (mice included) wait for it to drain
 * (measured in docs/BENCHMARKS.md).
 */
static uint64_t overbook_cap(const struct level_rt *l)
{
	double cap = floor(l->adm->overbooking * l->current_cl);

	if (l->claim_delay_ns > 0 && l->hold_ns > 0)
		cap = fmin(cap, ceil(l->current_cl * l->claim_delay_ns / fmax(l->hold_ns, 1e6)));
	return cap > 0 ? (uint64_t)cap : 0;
}

static void ewma(double *avg, double sample)
{
	*avg = *avg > 0 ? 0.9 * *avg + 0.1 * sample : sample;
}

/* The QueueSet owns the seats it dispatched; connections the data path
 * admitted inline hold the rest.  Give the QueueSet what is left of the
 * level's limit, publish how many wait (while anyone waits, the data path
 * admits nobody inline), and feed the demand integrator.
 *
 * Overbooking: a dispatched connection's seats sit idle until the client's
 * SYN retransmit claims its ticket, up to a second later, while the
 * service has room.  So the QueueSet may dispatch beyond the limit by the
 * seats of tickets not claimed yet, up to overbook_cap(): the limit bounds
 * the connections the service really holds, on average. */
static void sync_level(struct level_rt *l, uint64_t now)
{
	uint64_t in_use = bpf_seats(l), inline_seats = in_use > l->ticket_seats ? in_use - l->ticket_seats : 0;
	uint64_t waiting = 0, seats_waiting = 0;

	if (l->qs) {
		uint64_t over = unclaimed_seats(l), cap = overbook_cap(l), cl;

		if (over > cap)
			over = cap;
		cl = l->current_cl > inline_seats ? l->current_cl - inline_seats : 0;
		sl_qs_set_cl(l->qs, now, (uint32_t)(cl + over > UINT32_MAX ? UINT32_MAX : cl + over));
		waiting = sl_qs_waiting(l->qs);
		seats_waiting = sl_qs_seats_waiting(l->qs);
	}
	sl_seats_publish_waiting(l->adm->dp, l->slot, waiting);
	sl_demand_set(&l->demand, now, (double)(in_use + seats_waiting));
}

/* ---- events ----------------------------------------------------------------- */

static uint64_t flow_hash(struct sl_admission *adm, const struct sluice_event *ev)
{
	const struct sl_flow_schema *fs;
	struct sl_conn_tuple t = {0};
	char dist[64];

	if (!adm->cfg || ev->schema >= adm->cfg->n_schemas)
		return 0;
	fs = &adm->cfg->schemas[ev->schema];
	memcpy(t.saddr, ev->key.saddr, 16);
	memcpy(t.daddr, ev->key.daddr, 16);
	sl_flow_distinguisher(fs, &t, dist, sizeof(dist));
	return sl_flow_hash(adm->hash_key, fs->name, dist);
}

/* Seats on a level without queues (Reject), taken by the data path's rule. */
static bool reserve_now(struct level_rt *l, uint32_t seats)
{
	return sl_seats_reserve(l->adm->dp, l->slot, seats, l->current_cl);
}

/* The priority level's gate for a deferred connection (its policy, if
 * any, admitted it already): Queue levels through their QueueSet, exempt
 * levels at once, Reject levels when a seat is free. */
static void level_gate(struct sl_admission *adm, struct sl_pending *p, uint64_t now)
{
	struct level_rt *l = &adm->levels[p->level];
	int outcome;

	if (!l->active) {
		/* Its level went away in a reload: the next retransmit is
		 * classified afresh. */
		if (p->policy_admitted && adm->policies)
			sl_policies_return(adm->policies, p->policy, p->workload, now);
		sl_pending_remove(adm->pending, p);
		return;
	}
	if (l->type == SL_LEVEL_EXEMPT) {
		admit(l, p, now, false);
		return;
	}
	if (!l->qs || l->response != SL_RESP_QUEUE) {
		if (reserve_now(l, p->seats))
			admit(l, p, now, true);
		else
			reject(l, p, now);
		return;
	}
	p->state = SL_PENDING_QUEUED;
	p->in_queueset = true;
	sync_level(l, now);
	outcome = sl_qs_arrive(l->qs, now, p->id, p->seats, p->flow_hash);
	switch (outcome) {
	case SL_QS_DISPATCHED:
		admit(l, p, now, false);
		break;
	case SL_QS_QUEUED:
		break;
	case SL_QS_REJECT_QUEUE_FULL:
	case SL_QS_REJECT_CONCURRENCY:
		p->in_queueset = false;
		reject(l, p, now);
		break;
	default:
		p->in_queueset = false;
		if (p->policy_admitted && adm->policies)
			sl_policies_return(adm->policies, p->policy, p->workload, now);
		sl_pending_remove(adm->pending, p);
		break;
	}
	sync_level(l, now);
}

static void on_defer(struct sl_admission *adm, const struct sluice_event *ev, uint64_t now)
{
	bool policy = adm->policies && ev->policy < sl_policies_count(adm->policies);
	struct level_rt *l;
	struct sl_pending *p;
	bool exists;

	if (ev->level >= SLUICE_MAX_LEVELS)
		return;
	l = &adm->levels[ev->level];
	/* A level held it back: only Queue levels queue (failsafe drops and
	 * Reject levels do not).  A policy held it back: both gates decide. */
	if (ev->gate != SLUICE_GATE_POLICY &&
	    (!l->qs || !l->active || l->type != SL_LEVEL_LIMITED || l->response != SL_RESP_QUEUE))
		return;
	p = sl_pending_add(adm->pending, &ev->key, &exists);
	if (!p)
		return; /* a retransmit of a connection we already hold, or full */
	p->level = ev->level;
	p->seats = ev->seats ? ev->seats : 1;
	p->schema = ev->schema;
	p->policy = ev->policy;
	p->workload = ev->workload;
	p->arrival_ns = now;
	p->flow_hash = flow_hash(adm, ev);
	if (!policy) {
		level_gate(adm, p, now);
		return;
	}
	/* Gate 1, the policy's load scheduler; gate 2 when it admits. */
	p->state = SL_PENDING_POLICY;
	switch (sl_policies_arrive(adm->policies, p->policy, p->workload, p->id, now)) {
	case SL_LS_ADMITTED:
		p->policy_admitted = true;
		level_gate(adm, p, now);
		break;
	case SL_LS_QUEUED:
		break; /* sl_adm_policy_admit / _reject tell */
	case SL_LS_REJECTED:
		reject(l, p, now);
		break;
	default:
		sl_pending_remove(adm->pending, p);
		break;
	}
}

static void on_policy_admit(void *ctx, uint64_t id, uint64_t now)
{
	struct sl_admission *adm = ctx;
	struct sl_pending *p = sl_pending_by_id(adm->pending, id);

	if (!p || p->state != SL_PENDING_POLICY)
		return;
	p->policy_admitted = true;
	level_gate(adm, p, now);
}

static void on_policy_reject(void *ctx, uint64_t id, uint64_t now)
{
	struct sl_admission *adm = ctx;
	struct sl_pending *p = sl_pending_by_id(adm->pending, id);

	if (!p || p->state != SL_PENDING_POLICY)
		return;
	reject(&adm->levels[p->level], p, now);
}

void sl_adm_policy_hooks(struct sl_admission *adm, struct sl_policy_hooks *h)
{
	h->admit = on_policy_admit;
	h->reject = on_policy_reject;
	h->ctx = adm;
}

void sl_adm_set_policies(struct sl_admission *adm, struct sl_policies *ps)
{
	adm->policies = ps;
}

static void on_close(struct sl_admission *adm, const struct sluice_event *ev, uint64_t now)
{
	struct sl_pending *p = sl_pending_by_key(adm->pending, &ev->key);
	struct level_rt *l;

	if (ev->level < SLUICE_MAX_LEVELS) {
		l = &adm->levels[ev->level];
		if (p && p->state == SL_PENDING_ADMITTED && p->level == ev->level) {
			uint64_t claim_ns = ev->ts_ns - ev->duration_ns;

			if (ev->duration_ns < ev->ts_ns && claim_ns >= p->ticket_ns) {
				ewma(&l->claim_delay_ns, (double)(claim_ns - p->ticket_ns));
				ewma(&l->hold_ns, (double)ev->duration_ns);
			}
			/* The seats were held from the dispatch, not just from
			 * the claim: charge the flow for all of it (§3.5). */
			if (p->in_queueset && l->qs)
				sl_qs_complete(l->qs, now, p->id, now - p->ticket_ns);
			l->ticket_seats -= l->ticket_seats >= p->seats ? p->seats : l->ticket_seats;
			sl_pending_remove(adm->pending, p);
		}
		/* A seat came back: the QueueSet may dispatch now. */
		sync_level(l, now);
	}
}

void sl_adm_on_event(struct sl_admission *adm, const void *event, size_t size, uint64_t now)
{
	const struct sluice_event *ev = event;

	if (size < sizeof(*ev))
		return;
	if (ev->type == SLUICE_EV_DEFER)
		on_defer(adm, ev, now);
	else if (ev->type == SLUICE_EV_CLOSE)
		on_close(adm, ev, now);
}

/* ---- tick: time-outs, unclaimed tickets, borrowing ---------------------------- */

struct sweep_ctx {
	struct sl_admission *adm;
	uint64_t now;
	bool full; /* also look at records whose deadline has not passed */
};

static void sweep_one(struct sl_pending *p, void *ctx)
{
	struct sweep_ctx *s = ctx;
	struct sl_admission *adm = s->adm;
	struct level_rt *l = &adm->levels[p->level];
	bool ticket;

	/* Cheap test first: this runs every tick. */
	if (p->state == SL_PENDING_QUEUED || p->state == SL_PENDING_POLICY ||
	    (s->now < p->deadline_ns && !s->full))
		return;
	ticket = sl_ticket_exists(adm->dp, &p->key);
	if (p->state == SL_PENDING_ADMITTED) {
		if (ticket && s->now >= p->deadline_ns) {
			/* Never claimed: whoever deletes the ticket owns its seats. */
			if (!sl_ticket_withdraw(adm->dp, &p->key, p->level, p->seats))
				return;
			/* The seats sat idle from the dispatch until now: that
			 * is what the flow used (charging nothing would let a
			 * flow of clients that gave up keep the front). */
			if (p->in_queueset && l->qs)
				sl_qs_complete(l->qs, s->now, p->id, s->now - p->ticket_ns);
			l->ticket_seats -= l->ticket_seats >= p->seats ? p->seats : l->ticket_seats;
			sl_pending_remove(adm->pending, p);
		} else if (!ticket && !sl_conn_tracked(adm->dp, &p->key) &&
			   s->now - p->ticket_ns > SWEEP_INTERVAL_NS) {
			/* Claimed, then gone without a close event we saw (lost
			 * event, or a handshake that expired). */
			if (p->in_queueset && l->qs)
				sl_qs_complete(l->qs, s->now, p->id, s->now - p->ticket_ns);
			l->ticket_seats -= l->ticket_seats >= p->seats ? p->seats : l->ticket_seats;
			sl_pending_remove(adm->pending, p);
		}
	} else if (p->state == SL_PENDING_REJECTED) {
		if (!ticket) {
			sl_pending_remove(adm->pending, p);
		} else if (s->now >= p->deadline_ns) {
			sl_ticket_drop(adm->dp, &p->key);
			sl_pending_remove(adm->pending, p);
		}
	}
}

static void write_limit(struct sl_admission *adm, struct level_rt *l)
{
	sl_level_write_limit(adm->dp, l->slot, l->current_cl);
}

static void borrow(struct sl_admission *adm, uint64_t now)
{
	struct sl_borrow_level in[SLUICE_MAX_LEVELS];
	uint32_t cl[SLUICE_MAX_LEVELS];
	unsigned slots[SLUICE_MAX_LEVELS];
	size_t n = 0;
	int err;

	for (unsigned s = 0; s < SLUICE_MAX_LEVELS; s++) {
		struct level_rt *l = &adm->levels[s];

		if (!l->active)
			continue;
		sl_demand_period_end(&l->demand, now, NULL);
		in[n] = (struct sl_borrow_level){
			.exempt = l->type == SL_LEVEL_EXEMPT, .nominal = l->lim.nominal,
			.lendable = l->lim.lendable, .min = l->lim.min, .max = l->lim.max,
			.hwm = l->demand.hwm, .smoothed = l->demand.smoothed,
		};
		slots[n++] = s;
	}
	if (!n)
		return;
	err = sl_borrow_allocate(adm->server_cl, SL_BORROW_READING_KEP, in, n, cl, &adm->last_borrow);
	if (err) {
		pr_warn("borrowing: allocation failed (%s); limits unchanged", strerror(-err));
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct level_rt *l = &adm->levels[slots[i]];

		if (l->type == SL_LEVEL_EXEMPT || l->current_cl == cl[i])
			continue;
		pr_info("borrowing: level %s limit %u -> %u seats (nominal %u, demand hwm %.0f, smoothed %.1f)",
			l->name, l->current_cl, cl[i], l->lim.nominal, l->demand.hwm, l->demand.smoothed);
		l->current_cl = cl[i];
		write_limit(adm, l);
		sync_level(l, now);
	}
}

void sl_adm_tick(struct sl_admission *adm, uint64_t now)
{
	adm->now = now;
	for (unsigned s = 0; s < SLUICE_MAX_LEVELS; s++) {
		struct level_rt *l = &adm->levels[s];

		if (!l->active && !l->qs)
			continue;
		if (l->qs && l->wait_limit_ns)
			sl_qs_expire(l->qs, now, l->wait_limit_ns, on_expired, l);
		sync_level(l, now);
		/* A removed level whose queues have drained goes away. */
		if (!l->active && l->qs && !sl_qs_waiting(l->qs) && !sl_qs_seats_in_use(l->qs)) {
			sl_qs_free(l->qs);
			l->qs = NULL;
		}
	}
	{
		/* Deadlines every tick; the claimed-then-vanished check once a
		 * second. */
		struct sweep_ctx sc = {.adm = adm, .now = now,
				       .full = now - adm->last_sweep_ns >= SWEEP_INTERVAL_NS};

		if (sc.full)
			adm->last_sweep_ns = now;
		sl_pending_each(adm->pending, sweep_one, &sc);
	}
	if (now - adm->last_borrow_ns >= adm->borrow_period_ns) {
		adm->last_borrow_ns = now;
		borrow(adm, now);
	}
}

/* ---- configuration ----------------------------------------------------------- */

int sl_adm_create(struct sl_admission **out, struct sl_dataplane *dp, const uint8_t hash_key[16],
		  uint64_t now)
{
	struct sl_admission *adm = calloc(1, sizeof(*adm));

	if (!adm)
		return -ENOMEM;
	adm->pending = sl_pending_new(PENDING_CAPACITY);
	if (!adm->pending) {
		free(adm);
		return -ENOMEM;
	}
	adm->dp = dp;
	memcpy(adm->hash_key, hash_key, 16);
	adm->borrow_period_ns = SL_BORROW_PERIOD_NS;
	adm->last_borrow_ns = now;
	adm->last_sweep_ns = now;
	{
		unsigned n = sl_tickets_clear_stale(dp);

		if (n)
			pr_info("dropped %u ticket%s left by a previous daemon", n, n == 1 ? "" : "s");
	}
	for (unsigned s = 0; s < SLUICE_MAX_LEVELS; s++) {
		adm->levels[s].adm = adm;
		adm->levels[s].slot = s;
	}
	*out = adm;
	return 0;
}

void sl_adm_free(struct sl_admission *adm)
{
	if (!adm)
		return;
	for (unsigned s = 0; s < SLUICE_MAX_LEVELS; s++)
		sl_qs_free(adm->levels[s].qs);
	sl_pending_free(adm->pending);
	free(adm);
}

void sl_adm_set_borrow_period(struct sl_admission *adm, uint64_t period_ns)
{
	adm->borrow_period_ns = period_ns ? period_ns : SL_BORROW_PERIOD_NS;
}

static void qs_config_of(const struct sl_level_cfg *lc, struct sl_qs_config *qc)
{
	memset(qc, 0, sizeof(*qc));
	qc->guess_ns = GUESS_NS;
	if (lc->type == SL_LEVEL_EXEMPT) {
		qc->queues = SL_QS_EXEMPT;
	} else if (lc->limit_response == SL_RESP_REJECT) {
		qc->queues = SL_QS_REJECT;
	} else {
		qc->queues = (int32_t)lc->queues;
		qc->hand_size = lc->queues == 1 ? 1 : lc->hand_size;
		qc->queue_length_limit = lc->queue_length_limit;
	}
}

int sl_adm_configure(struct sl_admission *adm, const struct sl_config *cfg,
		     const struct sl_plan *plan, uint64_t now)
{
	bool keep[SLUICE_MAX_LEVELS] = {false};
	char why[160];

	adm->cfg = cfg;
	adm->server_cl = cfg->server.server_concurrency_limit;
	adm->overbooking = cfg->server.ticket_overbooking;
	for (size_t i = 0; i < cfg->n_levels; i++) {
		const struct sl_level_cfg *lc = &cfg->levels[i];
		unsigned s = plan->slot_of[i];
		struct level_rt *l = &adm->levels[s];
		struct sl_qs_config qc;
		bool fresh = !l->active;

		keep[s] = true;
		qs_config_of(lc, &qc);
		l->active = true;
		snprintf(l->name, sizeof(l->name), "%s", lc->name);
		l->type = lc->type;
		l->response = lc->limit_response;
		l->wait_limit_ns = lc->queue_wait_limit_ns;
		l->lim = plan->limits[s];
		l->current_cl = plan->levels[s].seat_limit;
		if (fresh)
			sl_demand_init(&l->demand, now, (double)bpf_seats(l));
		if (qc.queues >= 1 && !l->qs) {
			if (sl_qs_create(&l->qs, &qc, l->current_cl, now, on_dispatch, l, why, sizeof(why))) {
				pr_err("level %s: queues: %s", lc->name, why);
				return -EINVAL;
			}
		} else if (l->qs) {
			/* §3.9: queue count changes, Reject (queues 0) drains. */
			if (sl_qs_set_config(l->qs, now, &qc, why, sizeof(why)))
				pr_warn("level %s: queues: %s", lc->name, why);
		}
		sync_level(l, now);
	}
	for (unsigned s = 0; s < SLUICE_MAX_LEVELS; s++) {
		struct level_rt *l = &adm->levels[s];

		if (keep[s] || !l->active)
			continue;
		/* Removed: what is queued still drains through its QueueSet. */
		l->active = false;
	}
	return 0;
}

/* ---- metrics ------------------------------------------------------------------- */

struct level_sample {
	struct sluice_level_stats st;
	struct sluice_seats seats;
	struct sl_qs_stats qs;
};

enum { M_GAUGE, M_COUNTER };

enum level_metric_id {
	LM_LIMIT, LM_NOMINAL, LM_SEATS, LM_WAITING, LM_SYNS, LM_ADMITTED, LM_DEFERRED,
	LM_REJECTED, LM_RETRANSMITS, LM_CLOSED, LM_FAILSAFE, LM_EXPIRED, LM_DISPATCHED,
	LM_REJ_FULL, LM_REJ_TIMEOUT, LM_SHADOW,
};

static const struct level_metric {
	enum level_metric_id id;
	int type;
	const char *name, *help;
} level_metrics[] = {
	{LM_LIMIT, M_GAUGE, "seat_limit", "Current concurrency limit in seats (after borrowing)."},
	{LM_NOMINAL, M_GAUGE, "nominal_seats", "Nominal concurrency limit in seats."},
	{LM_SEATS, M_GAUGE, "seats_in_use", "Seats held by admitted connections and dispatched tickets."},
	{LM_WAITING, M_GAUGE, "waiting", "Deferred connections waiting in the level's queues."},
	{LM_SYNS, M_COUNTER, "syns_total", "SYNs classified into the level."},
	{LM_ADMITTED, M_COUNTER, "admitted_total", "Connections admitted (inline or on a ticket)."},
	{LM_DEFERRED, M_COUNTER, "deferred_total", "SYNs dropped to defer the connection."},
	{LM_REJECTED, M_COUNTER, "rejected_total", "SYNs answered with a RST."},
	{LM_RETRANSMITS, M_COUNTER, "retransmits_total", "SYN retransmits of admitted connections."},
	{LM_CLOSED, M_COUNTER, "closed_total", "Admitted connections closed (seats returned)."},
	{LM_FAILSAFE, M_COUNTER, "failsafe_total", "SYNs decided by the failsafe (stale heartbeat)."},
	{LM_EXPIRED, M_COUNTER, "expired_total", "Admitted connections whose handshake never completed."},
	{LM_DISPATCHED, M_COUNTER, "dispatched_total", "Deferred connections dispatched from the queues."},
	{LM_REJ_FULL, M_COUNTER, "rejected_queue_full_total", "Deferred connections rejected: queue full."},
	{LM_REJ_TIMEOUT, M_COUNTER, "rejected_time_out_total", "Deferred connections rejected: queueWaitLimit."},
	{LM_SHADOW, M_COUNTER, "shadow_passed_total", "Shadow mode: SYNs a gate refused, admitted anyway."},
};

static double level_value(enum level_metric_id id, const struct level_rt *l,
			  const struct level_sample *s)
{
	switch (id) {
	case LM_LIMIT: return l->current_cl;
	case LM_NOMINAL: return l->lim.nominal;
	case LM_SEATS: return (double)s->seats.seats_in_use;
	case LM_WAITING: return (double)s->qs.waiting;
	case LM_SYNS: return (double)s->st.syns;
	case LM_ADMITTED: return (double)s->st.admitted;
	case LM_DEFERRED: return (double)s->st.deferred;
	case LM_REJECTED: return (double)s->st.rejected;
	case LM_RETRANSMITS: return (double)s->st.retransmits;
	case LM_CLOSED: return (double)s->st.closed;
	case LM_FAILSAFE: return (double)s->st.failsafe;
	case LM_EXPIRED: return (double)s->seats.expired;
	case LM_DISPATCHED: return (double)l->tickets_admit;
	case LM_REJ_FULL: return (double)s->qs.rejected_queue_full;
	case LM_REJ_TIMEOUT: return (double)s->qs.rejected_time_out;
	case LM_SHADOW: return (double)s->st.shadow_passed;
	}
	return 0;
}

void sl_adm_metrics(struct sl_admission *adm, FILE *f)
{
	struct level_sample *samples = calloc(SLUICE_MAX_LEVELS, sizeof(*samples));

	if (!samples)
		return;
	for (unsigned s = 0; s < SLUICE_MAX_LEVELS; s++) {
		struct level_rt *l = &adm->levels[s];

		if (!l->active)
			continue;
		sl_maps_level_stats(&adm->dp->maps, s, &samples[s].st);
		samples[s].seats = adm->dp->seats[s];
		if (l->qs)
			sl_qs_get_stats(l->qs, &samples[s].qs);
	}
	for (size_t m = 0; m < sizeof(level_metrics) / sizeof(level_metrics[0]); m++) {
		const struct level_metric *lm = &level_metrics[m];

		fprintf(f, "# HELP sluice_level_%s %s\n# TYPE sluice_level_%s %s\n", lm->name,
			lm->help, lm->name, lm->type == M_GAUGE ? "gauge" : "counter");
		for (unsigned s = 0; s < SLUICE_MAX_LEVELS; s++) {
			const struct level_rt *l = &adm->levels[s];

			if (!l->active)
				continue;
			fprintf(f, "sluice_level_%s{level=\"", lm->name);
			sl_metrics_label(f, l->name);
			fputs("\"} ", f);
			sl_metrics_value(f, level_value(lm->id, l, &samples[s]));
			fputc('\n', f);
		}
	}
	free(samples);
}

/* ---- dumps -------------------------------------------------------------------- */

static const char *level_kind(const struct level_rt *l)
{
	if (l->type == SL_LEVEL_EXEMPT)
		return "Exempt";
	return l->response == SL_RESP_QUEUE ? "Queue" : "Reject";
}

static void dump_level(struct sl_admission *adm, struct json_out *jo, struct level_rt *l)
{
	struct sluice_level_stats st = {0};
	struct sl_qs_stats qs = {0};

	sl_maps_level_stats(&adm->dp->maps, l->slot, &st);
	if (l->qs)
		sl_qs_get_stats(l->qs, &qs);
	jo_obj_begin(jo, NULL);
	jo_str(jo, "name", l->name);
	jo_str(jo, "type", level_kind(l));
	jo_bool(jo, "active", l->active);
	jo_u64(jo, "nominal", l->lim.nominal);
	jo_u64(jo, "lendable", l->lim.lendable);
	jo_u64(jo, "min", l->lim.min);
	jo_u64(jo, "max", l->lim.max);
	jo_u64(jo, "limit", l->current_cl);
	jo_u64(jo, "seats_in_use", bpf_seats(l));
	jo_u64(jo, "seats_dispatched", l->ticket_seats);
	jo_u64(jo, "seats_unclaimed", unclaimed_seats(l));
	jo_u64(jo, "overbook_cap", l->qs ? overbook_cap(l) : 0);
	jo_double(jo, "claim_delay_ms", l->claim_delay_ns / 1e6);
	jo_double(jo, "hold_ms", l->hold_ns / 1e6);
	jo_u64(jo, "waiting", qs.waiting);
	jo_u64(jo, "queues", qs.queues);
	jo_u64(jo, "admitted", st.admitted);
	jo_u64(jo, "deferred", st.deferred);
	jo_u64(jo, "rejected", st.rejected);
	jo_u64(jo, "dispatched_from_queue", l->tickets_admit);
	jo_u64(jo, "rejected_queue_full", qs.rejected_queue_full);
	jo_u64(jo, "rejected_time_out", qs.rejected_time_out);
	jo_double(jo, "demand_hwm", l->demand.hwm);
	jo_double(jo, "demand_avg", l->demand.avg);
	jo_double(jo, "demand_smoothed", l->demand.smoothed);
	jo_obj_end(jo);
}

struct flows_ctx {
	struct sl_admission *adm;
	struct json_out *jo;
	struct level_rt *l;
};

static int dump_request(void *ctx, const struct sl_qs_req_info *r)
{
	struct flows_ctx *fc = ctx;
	struct sl_pending *p = sl_pending_by_id(fc->adm->pending, r->id);
	char buf[64];

	jo_obj_begin(fc->jo, NULL);
	jo_str(fc->jo, "level", fc->l->name);
	if (p) {
		const struct sl_config *cfg = fc->adm->cfg;

		jo_str(fc->jo, "flowSchema", cfg && p->schema < cfg->n_schemas ? cfg->schemas[p->schema].name : NULL);
		jo_str(fc->jo, "client", sl_fmt_endpoint(p->key.saddr, p->key.sport, buf, sizeof(buf)));
		jo_str(fc->jo, "local", sl_fmt_endpoint(p->key.daddr, p->key.dport, buf, sizeof(buf)));
	}
	jo_i64(fc->jo, "queue", r->queue);
	jo_i64(fc->jo, "position", r->position);
	jo_bool(fc->jo, "executing", r->executing);
	snprintf(buf, sizeof(buf), "0x%016llx", (unsigned long long)r->flow_hash);
	jo_str(fc->jo, "flow_hash", buf);
	jo_u64(fc->jo, "seats", r->seats);
	jo_u64(fc->jo, "arrival_ns", r->arrival_ns);
	jo_u64(fc->jo, "start_ns", r->start_ns);
	jo_obj_end(fc->jo);
	return 0;
}

/* A dump in progress: where it stands, by slot and queue index, never by
 * pointer (a reload between two parts may free a level's queues). */
struct sl_adm_dump {
	struct sl_admission *adm;
	struct json_out jo;
	char what[8];
	char level[SLUICE_LEVEL_NAME_LEN]; /* "" = every level */
	unsigned slot;
	uint32_t queue;
};

/* Queues per part of a queues dump: a few milliseconds of rendering. */
#define DUMP_QUEUES_PER_PART 1024

static void dump_queue(struct json_out *jo, const struct level_rt *l,
		       const struct sl_qs_queue_info *qi)
{
	char buf[40];

	jo_obj_begin(jo, NULL);
	jo_str(jo, "level", l->name);
	jo_u64(jo, "index", qi->index);
	jo_u64(jo, "waiting", qi->waiting);
	jo_u64(jo, "executing", qi->executing);
	jo_u64(jo, "seats_in_use", qi->seats_in_use);
	sl_ss_format(qi->next_dispatch_r, buf, sizeof(buf));
	jo_str(jo, "next_dispatch_r", buf);
	jo_u64(jo, "max_seats_sum", qi->max_seats_sum);
	sl_ss_format(qi->total_work_sum, buf, sizeof(buf));
	jo_str(jo, "total_work_sum", buf);
	jo_obj_end(jo);
}

/* Write the dump's next part; false once it is complete. */
static bool dump_part(struct sl_adm_dump *d, FILE *f)
{
	struct sl_admission *adm = d->adm;
	unsigned budget = DUMP_QUEUES_PER_PART;

	d->jo.f = f;
	for (; d->slot < SLUICE_MAX_LEVELS; d->slot++, d->queue = 0) {
		struct level_rt *l = &adm->levels[d->slot];

		if (!l->active && !l->qs)
			continue;
		if (d->level[0] && strcmp(d->level, l->name))
			continue;
		if (!strcmp(d->what, "levels")) {
			dump_level(adm, &d->jo, l);
		} else if (!strcmp(d->what, "queues") && l->qs) {
			struct sl_qs_queue_info qi;

			for (; !sl_qs_queue_info(l->qs, d->queue, &qi); d->queue++) {
				if (!budget--)
					return true; /* resume at this queue */
				dump_queue(&d->jo, l, &qi);
			}
		} else if (!strcmp(d->what, "flows") && l->qs) {
			struct flows_ctx fc = {.adm = adm, .jo = &d->jo, .l = l};

			sl_qs_foreach_request(l->qs, dump_request, &fc);
		}
	}
	jo_arr_end(&d->jo);
	jo_obj_end(&d->jo);
	jo_finish(&d->jo);
	return false;
}

struct sl_adm_dump *sl_adm_dump_begin(struct sl_admission *adm, FILE *f, const char *what,
				      const char *level)
{
	struct sl_adm_dump *d = calloc(1, sizeof(*d));

	if (!d) {
		fputs("{\"error\":\"out of memory\"}\n", f);
		return NULL;
	}
	d->adm = adm;
	snprintf(d->what, sizeof(d->what), "%s", what);
	snprintf(d->level, sizeof(d->level), "%s", level ? level : "");
	jo_init(&d->jo, f, false);
	jo_obj_begin(&d->jo, NULL);
	jo_str(&d->jo, "what", what);
	if (!strcmp(what, "levels")) {
		jo_str(&d->jo, "borrowing_regime", sl_borrow_regime_name(adm->last_borrow.regime));
		jo_double(&d->jo, "fair_prop", adm->last_borrow.fair_prop);
	}
	jo_arr_begin(&d->jo, what);
	if (dump_part(d, f))
		return d;
	free(d);
	return NULL;
}

bool sl_adm_dump_next(struct sl_adm_dump *d, FILE *f)
{
	return dump_part(d, f);
}

void sl_adm_dump_free(struct sl_adm_dump *d)
{
	free(d);
}

void sl_adm_dump(struct sl_admission *adm, FILE *f, const char *what, const char *level)
{
	struct sl_adm_dump *d = sl_adm_dump_begin(adm, f, what, level);

	while (d && sl_adm_dump_next(d, f))
		;
	sl_adm_dump_free(d);
}
