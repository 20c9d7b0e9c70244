// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Admission decides (admission.h): a deferred connection's journey through
 * its policy's scheduler and its level's queues, the verdict when its turn
 * comes or its wait runs out, what a close, a tick or a stall changes.
 * Carrying a verdict out (the held SYN, the ticket, the RST) is
 * adm_carry.c's.
 */
#include "daemon/admission.h"
#include "daemon/admission_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/policy_rt.h"
#include "dataplane/ledger.h"
#include "engine/classifier.h"
#include "engine/held.h"
#include "engine/loadsched.h"
#include "lib/conn_end.h"
#include "lib/flowhash.h"
#include "lib/frame.h"
#include "lib/grow.h"
#include "lib/log.h"
#include "lib/syn_retransmit.h"

/* The requests the level's QueueSet started since the last look, in the
 * order it started them: each one's held SYN goes back in (or its ticket
 * is issued).  Admitting one may complete it in the QueueSet at once
 * (its client is gone, its ticket failed): what that starts joins the
 * same list, and this loop takes it too. */
static void start_dispatched(struct level_rt *l)
{
	uint64_t id, at;

	while (l->qs && sl_qs_next_dispatch(l->qs, &id, &at)) {
		struct sl_pending *p = sl_pending_by_id(l->adm->pending, id);

		if (!p)
			continue;
		if (l->settling_close_ns) {
			l->after_close++;
			l->after_close_1ms += at <= l->settling_close_ns + 1000000ULL;
		}
		adm_admit(l, p, at, false);
	}
}

/* A level after anything moved its seats or its waiters (a close, a
 * refusal, a time-out, a new limit): the QueueSet gets the capacity left,
 * what it starts is admitted here, then the data path learns how many
 * still wait. */
void adm_level_settle(struct level_rt *l, uint64_t now)
{
	lr_give_capacity(l, now);
	start_dispatched(l);
	lr_publish(l, now);
}

void adm_settle_levels(struct sl_admission *adm, uint64_t changed, uint64_t now)
{
	for (unsigned s = 0; s < SLUICE_MAX_LEVELS; s++)
		if (changed & (UINT64_C(1) << s))
			adm_level_settle(&adm->levels[s], now);
}

void adm_refuse_removed(struct level_rt *l, uint64_t id, enum sl_reject_reason why)
{
	struct sl_pending *p = sl_pending_by_id(l->adm->pending, id);

	if (p)
		adm_reject(l, p, l->adm->now, why);
}

static void on_expired(void *ctx, uint64_t id)
{
	adm_refuse_removed(ctx, id, SL_REJ_TIME_OUT);
}

static void on_shed(void *ctx, uint64_t id)
{
	adm_refuse_removed(ctx, id, SL_REJ_SHED);
}

/* ---- events ----------------------------------------------------------------- */

uint64_t adm_flow_hash(const struct sl_admission *adm, unsigned schema, const struct sluice_conn_key *key)
{
	const struct sl_flow_schema *fs;
	struct sl_conn_tuple t = {0};
	char dist[64];

	if (!adm->cfg || schema >= adm->cfg->n_schemas)
		return 0;
	fs = &adm->cfg->schemas[schema];
	memcpy(t.saddr, key->saddr, 16);
	memcpy(t.daddr, key->daddr, 16);
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
		adm_policy_give_back(adm, p, now);
		sl_fm_rejected(adm_series_of(adm, p), SL_REJ_CANCELLED, adm_waited_s(p, now));
		adm_forget(adm, p);
		return;
	}
	if (l->type == SL_LEVEL_EXEMPT) {
		adm_admit(l, p, now, false);
		return;
	}
	if (!l->qs || l->response != SL_RESP_QUEUE) {
		if (reserve_now(l, p->seats))
			adm_admit(l, p, now, true);
		else
			adm_reject(l, p, now, SL_REJ_CONCURRENCY);
		return;
	}
	p->state = SL_PENDING_QUEUED;
	p->in_queueset = true;
	/* The capacity as the data path has it now; those already waiting
	 * that it lets start go before this one. */
	lr_give_capacity(l, now);
	start_dispatched(l);
	outcome = sl_qs_arrive(l->qs, now, p->id, p->seats, p->flow_hash);
	switch (outcome) {
	case SL_QS_DISPATCHED:
		adm_admit(l, p, now, false);
		break;
	case SL_QS_QUEUED:
		break;
	case SL_QS_REJECT_QUEUE_FULL:
	case SL_QS_REJECT_CONCURRENCY:
		p->in_queueset = false;
		adm_reject(l, p, now, outcome == SL_QS_REJECT_QUEUE_FULL ? SL_REJ_QUEUE_FULL
								      : SL_REJ_CONCURRENCY);
		break;
	default:
		p->in_queueset = false;
		adm_policy_give_back(adm, p, now);
		sl_fm_rejected(adm_series_of(adm, p), SL_REJ_CANCELLED, adm_waited_s(p, now));
		adm_forget(adm, p);
		break;
	}
	start_dispatched(l);
	lr_publish(l, now);
}

void sl_adm_defer(struct sl_admission *adm, const struct sluice_defer_event *de, uint64_t now)
{
	const struct sluice_event *ev = &de->ev;
	bool policy = adm->policies && ev->policy < sl_policies_count(adm->policies);
	struct level_rt *l;
	struct sl_pending *p;
	bool exists;

	now = adm_clock(adm, now);
	if (ev->level >= SLUICE_MAX_LEVELS)
		return;
	l = &adm->levels[ev->level];
	/* A level held it back: only Queue levels queue (failsafe drops and
	 * Reject levels do not).  A policy held it back: both gates decide. */
	if (ev->gate != SLUICE_GATE_POLICY &&
	    (!l->qs || !l->active || l->type != SL_LEVEL_LIMITED || l->response != SL_RESP_QUEUE))
		return;
	p = sl_pending_add(adm->pending, &ev->key, &exists);
	if (!p) {
		/* A retransmit of a connection that still waits: its frame
		 * replaces the held copy.  (Or the table is full.) */
		p = exists ? sl_pending_by_key(adm->pending, &ev->key) : NULL;
		if (p && (p->state == SL_PENDING_QUEUED || p->state == SL_PENDING_POLICY)) {
			p->last_syn_ns = now; /* its client is still there */
			adm_hold_frame(adm, p, de);
		}
		return;
	}
	p->level = ev->level;
	p->seats = ev->seats ? ev->seats : 1;
	p->schema = ev->schema;
	p->policy = ev->policy;
	p->workload = ev->workload;
	p->arrival_ns = p->last_syn_ns = now;
	p->lost_at_arrival = adm->events_lost;
	p->flow_hash = adm_flow_hash(adm, ev->schema, &ev->key);
	adm_hold_frame(adm, p, de);
	if (!policy) {
		level_gate(adm, p, now);
		return;
	}
	/* Gate 1, the policy's load scheduler; gate 2 when it admits. */
	p->state = SL_PENDING_POLICY;
	switch (sl_policies_arrive_flow(adm->policies, p->policy, p->workload, p->id, p->flow_hash, now)) {
	case SL_LS_ADMITTED:
		adm_policy_admitted(adm, p, now);
		level_gate(adm, p, now);
		break;
	case SL_LS_QUEUED:
		break; /* its scheduler tells later: on_policy_admit / _reject (sl_adm_policy_hooks) */
	case SL_LS_REJECTED:
		/* Its wait would pass queue_timeout (or the load is cut to 0). */
		adm_reject(l, p, now, SL_REJ_TIME_OUT);
		break;
	default:
		adm_forget(adm, p);
		break;
	}
}

static bool on_policy_admit(void *ctx, uint64_t id, uint64_t now)
{
	struct sl_admission *adm = ctx;
	struct sl_pending *p = sl_pending_by_id(adm->pending, id);

	if (!p || p->state != SL_PENDING_POLICY)
		return false;
	adm_policy_admitted(adm, p, now);
	level_gate(adm, p, now);
	return true;
}

static void on_policy_reject(void *ctx, uint64_t id, uint64_t now, enum sl_ss_why why)
{
	struct sl_admission *adm = ctx;
	struct sl_pending *p = sl_pending_by_id(adm->pending, id);

	if (!p || p->state != SL_PENDING_POLICY)
		return;
	adm_reject(&adm->levels[p->level], p, now, why == SL_SS_SHED ? SL_REJ_SHED : SL_REJ_TIME_OUT);
}

/* ---- a policy's cut ------------------------------------------------------------ */

struct recall_pick {
	unsigned policy;
	struct recall_cand { uint64_t id, policy_ns; } *v;
	size_t n, cap;
};

/* Waiting in a level's queue, on a slot of the policy's limit. */
static bool recallable(const struct sl_pending *p, unsigned policy)
{
	return p->policy == policy && p->state == SL_PENDING_QUEUED && p->in_queueset &&
	       p->policy_admitted && p->policy_slot;
}

static void collect_recallable(struct sl_pending *p, void *ctx)
{
	struct recall_pick *rp = ctx;

	if (!recallable(p, rp->policy))
		return;
	/* Short of memory: fewer come back, the rest drain in the level. */
	if (sl_grow((void **)&rp->v, &rp->cap, rp->n + 1, sizeof(*rp->v)))
		return;
	rp->v[rp->n].id = p->id;
	rp->v[rp->n++].policy_ns = p->policy_ns;
}

static int younger_first(const void *a, const void *b)
{
	uint64_t x = ((const struct recall_cand *)a)->policy_ns, y = ((const struct recall_cand *)b)->policy_ns;

	return x > y ? -1 : x < y;
}

/* The policy's limit fell `want` below what it holds.  Its youngest
 * admissions still waiting for a seat in a level's queue go back to its
 * own queue, slot returned, where its workloads' priorities and flows
 * order them again with what waits there: the excess of the last limit
 * does not stay in front of a light client until the level drains it
 * (issue 23: mice waited up to 0.8 s after the storm's first cut).  Ids,
 * not pointers, between the walk and the moves: a withdrawal dispatches,
 * and a dispatch may forget records. */
static size_t on_policy_recall(void *ctx, unsigned policy, size_t want, uint64_t now)
{
	struct sl_admission *adm = ctx;
	struct recall_pick rp = {.policy = policy};
	size_t done = 0;

	if (!adm->policies)
		return 0;
	sl_pending_each(adm->pending, collect_recallable, &rp);
	if (rp.n)
		qsort(rp.v, rp.n, sizeof(*rp.v), younger_first);
	for (size_t i = 0; i < rp.n && done < want; i++) {
		struct sl_pending *p = sl_pending_by_id(adm->pending, rp.v[i].id);
		struct level_rt *l;
		int r;

		if (!p || !recallable(p, policy))
			continue;
		/* Past its policy's bound already: coming back would refuse it
		 * at once; it keeps its place under the level's own bound. */
		if (!sl_policies_can_requeue(adm->policies, policy, p->workload, p->arrival_ns, now))
			continue;
		l = &adm->levels[p->level];
		if (!l->qs || sl_qs_withdraw(l->qs, now, p->id))
			continue; /* dispatched meanwhile */
		p->in_queueset = false;
		adm_policy_give_back(adm, p, now);
		p->state = SL_PENDING_POLICY;
		r = sl_policies_requeue(adm->policies, policy, p->workload, p->id, p->flow_hash,
					p->arrival_ns, now);
		if (r == SL_LS_QUEUED)
			done++;
		else
			adm_reject(l, p, now, r == SL_LS_REJECTED ? SL_REJ_QUEUE_FULL : SL_REJ_CANCELLED);
		adm_level_settle(l, now);
	}
	free(rp.v);
	return done;
}

void sl_adm_policy_hooks(struct sl_admission *adm, struct sl_policy_hooks *h)
{
	h->admit = on_policy_admit;
	h->reject = on_policy_reject;
	h->recall = on_policy_recall;
	h->ctx = adm;
}

void sl_adm_set_policies(struct sl_admission *adm, struct sl_policies *ps)
{
	adm->policies = ps;
}

/* A dispatched connection's seats are back (it closed, or its ticket or
 * its entry went): they were held from the dispatch, not just from the
 * claim, so the flow is charged for all of it (Kubernetes queueset.go
 * finishRequestLocked), and the record goes.  The caller settles the
 * level. */
static void dispatched_done(struct level_rt *l, struct sl_pending *p, uint64_t now)
{
	if (p->in_queueset && l->qs)
		sl_qs_complete(l->qs, now, p->id, now - p->ticket_ns);
	l->dispatched_seats -= l->dispatched_seats >= p->seats ? p->seats : l->dispatched_seats;
	adm_forget(l->adm, p);
}

uint64_t sl_adm_close(struct sl_admission *adm, const struct sluice_event *ev, uint64_t now)
{
	struct sl_pending *p = sl_pending_by_key(adm->pending, &ev->key);
	bool served = sl_conn_end_served(ev->end);
	uint64_t queued_ns = 0;
	struct level_rt *l;

	now = adm_clock(adm, now);
	/* Its policy admitted it, then it waited in the level's queue until
	 * its dispatch.  Not until the seat: an admit ticket waits for the
	 * client's next retransmit, a second or more that no load caused
	 * (counted, the policy would cut on every ticket). */
	if (p && p->state == SL_PENDING_ADMITTED && p->policy_admitted && p->ticket_ns > p->policy_ns)
		queued_ns = p->ticket_ns - p->policy_ns;

	/* The data path counted its lifetime already (per FlowSchema and per
	 * level, for every close: most never reach the daemon); what is left
	 * here is what the close lets happen.  A connection that never
	 * established is no sample of anything (lib/conn_end.h). */
	if (ev->level < SLUICE_MAX_LEVELS) {
		l = &adm->levels[ev->level];
		sl_stall_closed(&l->stall, now);
		if (p && p->state == SL_PENDING_ADMITTED && p->level == ev->level) {
			uint64_t claim_ns = ev->ts_ns - ev->duration_ns;

			if (served && ev->duration_ns < ev->ts_ns && claim_ns >= p->ticket_ns) {
				lr_ewma(&l->claim_delay_ns, (double)(claim_ns - p->ticket_ns));
				lr_ewma(&l->hold_ns, (double)ev->duration_ns);
			}
			dispatched_done(l, p, now);
		}
		/* A seat came back: the QueueSet may dispatch now. */
		l->settling_close_ns = ev->ts_ns ? ev->ts_ns : now;
		adm_level_settle(l, now);
		l->settling_close_ns = 0;
	}
	return queued_ns;
}


/* ---- tick: time-outs, unclaimed tickets, borrowing ---------------------------- */

struct sweep_ctx {
	struct sl_admission *adm;
	uint64_t now;
	bool full; /* also look at records whose deadline has not passed */
	bool resync[SLUICE_MAX_LEVELS]; /* seats came back: sync after the sweep */
};

static void sweep_one(struct sl_pending *p, void *ctx)
{
	struct sweep_ctx *s = ctx;
	struct sl_admission *adm = s->adm;
	struct level_rt *l = &adm->levels[p->level];
	bool ticket;

	/* Cheap tests first: this runs every tick. */
	if (p->state == SL_PENDING_QUEUED) {
		/* The level's bound runs from the first deferral, not from the
		 * arrival in its queue that the QueueSet's own expiry counts
		 * from: one that waited in its policy's queue first has that
		 * much less left here (the two waits in series must not add up
		 * past a client's patience). */
		if (p->in_queueset && l->wait_limit_ns && s->now - p->arrival_ns > l->wait_limit_ns &&
		    !sl_grow((void **)&adm->late, &adm->late_cap, adm->n_late + 1, sizeof(*adm->late)))
			adm->late[adm->n_late++] = p->id;
		return;
	}
	if (p->state == SL_PENDING_POLICY || (s->now < p->deadline_ns && !s->full))
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
			dispatched_done(l, p, s->now);
			s->resync[l->slot] = true;
			sl_stall_closed(&l->stall, s->now); /* seats came back */
		} else if (!ticket && !sl_conn_tracked(adm->dp, &p->key) &&
			   s->now - p->ticket_ns > SWEEP_INTERVAL_NS) {
			/* Claimed, then gone without a close event we saw (lost
			 * event, or a handshake that expired). */
			dispatched_done(l, p, s->now);
			s->resync[l->slot] = true;
			sl_stall_closed(&l->stall, s->now); /* seats came back */
		}
	} else if (p->state == SL_PENDING_REJECTED) {
		if (!ticket) {
			adm_forget(adm, p);
		} else if (s->now >= p->deadline_ns) {
			sl_ticket_drop(adm->dp, &p->key);
			adm_forget(adm, p);
		}
	}
}

static void refuse_stalled(struct level_rt *l, uint64_t id)
{
	adm_refuse_removed(l, id, SL_REJ_STALLED);
}

static const struct adm_stall_hooks stall_hooks = {
	.flow_hash = adm_flow_hash,
	.refuse = refuse_stalled,
};

void sl_adm_tick(struct sl_admission *adm, uint64_t now)
{
	struct sluice_stats gs;

	now = adm_clock(adm, now);
	adm->now = now;
	/* What the data path could not tell us (client_gone()): one read a tick. */
	if (!sl_maps_global_stats(&adm->dp->maps, &gs)) {
		adm->events_lost = gs.events_lost;
		adm->events_lost_read_ns = now;
	}
	for (unsigned s = 0; s < SLUICE_MAX_LEVELS; s++) {
		struct level_rt *l = &adm->levels[s];

		if (!l->active && !l->qs)
			continue;
		if (l->qs) /* the stall rule's samples: what closed since the last tick */
			lr_take_lifetimes(l, true);
		if (l->qs && l->wait_limit_ns)
			sl_qs_expire(l->qs, now, l->wait_limit_ns, on_expired, l);
		if (l->qs) /* controlled delay: a standing backlog is shed */
			sl_qs_shed(l->qs, now, on_shed, l);
		adm_level_settle(l, now);
		/* The stall breaker reads the clock just published; the
		 * refused waiters' places go to the next in line. */
		if (adm_stall_step(l, now, &stall_hooks))
			adm_level_settle(l, now);
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
		adm->n_late = 0;
		sl_pending_each(adm->pending, sweep_one, &sc);
		/* After the walk: a refusal dispatches, a dispatch may forget
		 * records. */
		for (size_t i = 0; i < adm->n_late; i++) {
			struct sl_pending *p = sl_pending_by_id(adm->pending, adm->late[i]);
			struct level_rt *l;

			if (!p || p->state != SL_PENDING_QUEUED || !p->in_queueset)
				continue;
			l = &adm->levels[p->level];
			if (!l->qs || sl_qs_cancel(l->qs, now, p->id))
				continue;
			p->in_queueset = false;
			adm_reject(l, p, now, SL_REJ_TIME_OUT);
			sc.resync[l->slot] = true;
		}
		/* Seats a sweep freed go to the next in line now, and the
		 * waiting count says so before the next tick. */
		for (unsigned s = 0; s < SLUICE_MAX_LEVELS; s++)
			if (sc.resync[s])
				adm_level_settle(&adm->levels[s], now);
	}
	if (now - adm->last_borrow_ns >= adm->borrow_period_ns) {
		adm->last_borrow_ns = now;
		adm_settle_levels(adm, lr_borrow(adm, now, true), now);
	}
}

uint64_t sl_adm_next_deadline(const struct sl_admission *adm)
{
	uint64_t next = UINT64_MAX;

	for (unsigned s = 0; s < SLUICE_MAX_LEVELS; s++) {
		const struct level_rt *l = &adm->levels[s];
		uint64_t due = l->qs ? sl_stall_due_ns(&l->stall) : UINT64_MAX;

		if (due < next)
			next = due;
	}
	return next;
}

void sl_adm_deadlines(struct sl_admission *adm, uint64_t now)
{
	now = adm_clock(adm, now);
	adm->now = now;
	for (unsigned s = 0; s < SLUICE_MAX_LEVELS; s++)
		if (adm_stall_step(&adm->levels[s], now, &stall_hooks))
			adm_level_settle(&adm->levels[s], now);
}

void sl_adm_level_seating(struct sl_admission *adm, unsigned slot, uint32_t flags)
{
	if (slot < SLUICE_MAX_LEVELS)
		sl_stall_set_retransmit_waits(&adm->levels[slot].stall, flags & SLUICE_LVL_SEAT_AT_ACK);
}
