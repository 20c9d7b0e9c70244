// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "daemon/admission.h"
#include "daemon/admission_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/policy_rt.h"
#include "sluice_conn.h"
#include "dataplane/inject.h"
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

/* ---- held frames and tickets ------------------------------------------------ */

/* The connection's per-FlowSchema series, and how long it has waited. */
static struct sl_flow_series *series_of(struct sl_admission *adm, const struct sl_pending *p)
{
	return sl_fm_at(&adm->flows, p->schema);
}

static double waited_s(const struct sl_pending *p, uint64_t now)
{
	return now > p->arrival_ns ? (double)(now - p->arrival_ns) / 1e9 : 0;
}

/* A deferred connection is done with: its record and its held frame. */
static void forget(struct sl_admission *adm, struct sl_pending *p)
{
	sl_held_drop(adm->held, p->id);
	sl_pending_remove(adm->pending, p);
}

/* Keep the deferral's frame with its connection (a retransmit's replaces
 * the held copy), its TCP checksum made whole.  Without one the
 * connection queues all the same and its retransmit claims a ticket. */
static void hold_frame(struct sl_admission *adm, const struct sl_pending *p,
		       const struct sluice_defer_event *de)
{
	struct level_rt *l = &adm->levels[p->level];
	uint8_t frame[SLUICE_FRAME_MAX];
	struct sl_frame f;
	int err;

	if (!de->frame_len || de->frame_len > SLUICE_FRAME_MAX) {
		l->fallback[SL_FALLBACK_NO_FRAME]++;
		return;
	}
	memcpy(frame, de->frame, de->frame_len);
	if (sl_frame_parse(frame, de->frame_len, &f)) {
		l->fallback[SL_FALLBACK_UNPARSED]++;
		return;
	}
	if (sl_frame_fix_tcp_csum(frame, &f) == SL_CSUM_BAD) {
		l->fallback[SL_FALLBACK_CHECKSUM]++;
		return;
	}
	err = sl_held_put(adm->held, p->id, p->level, de->ifindex, frame,
			  de->frame_len);
	/* -ENOSPC: a budget is full; -ENOMEM counts the same (no memory to
	 * hold it); the event's length was checked above. */
	if (err)
		l->fallback[SL_FALLBACK_BUDGET]++;
}

/* Its policy admitted it; refused or dropped after, what the policy gave
 * goes back: Aperture's tokens (workload-scheduler/scheduler.go), or
 * sluice's slot of the in-flight limit. */
static void policy_give_back(struct sl_admission *adm, struct sl_pending *p, uint64_t now)
{
	if (p->policy_admitted && adm->policies)
		sl_policies_return(adm->policies, p->policy, p->workload, p->policy_slot, now);
	p->policy_admitted = false;
	p->policy_slot = false;
}

static void policy_admitted(struct sl_admission *adm, struct sl_pending *p, uint64_t now)
{
	p->policy_admitted = true;
	p->policy_ns = now;
	p->policy_slot = adm->policies && sl_policies_take_slots(adm->policies, p->policy);
}

/* A policy slot goes with an admit ticket or entry: theirs from now on. */
static uint16_t slot_flags(struct sl_pending *p)
{
	return p->policy_slot ? SLUICE_CONNF_POLICY_SLOT : 0;
}

/* The connection's turn came and its SYN is held: record it as admitted,
 * the way the data path does inline, then put the SYN back into the
 * stack.  True when that is done (or a retransmit of it got in inline
 * meanwhile); false to fall back to a ticket, *reserved saying whether
 * the seats are still reserved. */
static bool admit_held(struct level_rt *l, struct sl_pending *p, const struct sl_held_frame *h,
		       uint64_t now, bool *reserved)
{
	struct sl_admission *adm = l->adm;
	struct sluice_conn c;
	struct sl_frame f;
	int err;

	if (sl_frame_parse(h->frame, h->len, &f))
		return false;
	/* A held ACK carries the client's SYN sequence + 1.  Its close event
	 * comes back to this record (SLUICE_CONNF_DAEMON). */
	sluice_conn_admitted(&c, now, p->level, p->seats, p->schema, p->policy, p->workload,
			     (uint16_t)((f.ack ? SLUICE_CONNF_AT_ACK : 0) | slot_flags(p) | SLUICE_CONNF_DAEMON),
			     htonl(f.ack ? f.seq - 1 : f.seq));
	err = sl_conn_admit(adm->dp, &p->key, &c, *reserved);
	*reserved = false; /* given back on failure; the connection's on success */
	if (err == -EEXIST) {
		/* Its retransmit was admitted inline, with seats (and a slot)
		 * of its own: the QueueSet's dispatch is void. */
		if (p->in_queueset && l->qs)
			sl_qs_complete(l->qs, now, p->id, 0);
		policy_give_back(adm, p, now);
		forget(adm, p);
		return true;
	}
	if (err)
		return false;
	err = sl_inject_syn(adm->dp, h->frame, h->len, h->ifindex);
	if (err) {
		l->fallback[SL_FALLBACK_INJECT]++;
		if (!sl_conn_unadmit(adm->dp, &p->key)) {
			/* The data path closed it already (it cannot really
			 * happen this fast), its slot with it: nothing is left
			 * to admit. */
			p->policy_slot = false;
			if (p->in_queueset && l->qs)
				sl_qs_complete(l->qs, now, p->id, 0);
			forget(adm, p);
			return true;
		}
		return false;
	}
	p->policy_slot = false; /* the entry holds it */
	l->dispatched_seats += p->seats;
	l->dispatched_total += p->seats;
	l->reinjected++;
	sl_seats_count_reinjected(adm->dp, p->level);
	sl_fm_dispatched(series_of(adm, p), waited_s(p, now));
	p->state = SL_PENDING_ADMITTED;
	p->ticket_ns = now;
	p->deadline_ns = now; /* no ticket to withdraw */
	return true;
}

/* A held SYN the daemon rejects gets its RST now. */
static bool reset_held(struct level_rt *l, struct sl_pending *p)
{
	struct sl_held_frame *h = sl_held_take(l->adm->held, p->id);
	bool sent = false;

	if (h) {
		if (!sl_inject_reset(l->adm->dp, h->frame, h->len, h->ifindex)) {
			l->reset_sent++;
			sl_seats_count_reset(l->adm->dp, p->level);
			sent = true;
		} else {
			l->fallback[SL_FALLBACK_INJECT]++;
			sl_seats_count_reset_failed(l->adm->dp, p->level);
		}
		free(h);
	}
	return sent;
}

static struct sluice_ticket ticket_of(const struct sl_pending *p, uint32_t verdict, uint64_t now)
{
	return (struct sluice_ticket){
		.issued_ns = now, .verdict = verdict, .level = p->level, .seats = p->seats,
		.schema = p->schema, .policy = p->policy, .workload = p->workload,
		.flags = verdict == SLUICE_TICKET_ADMIT && p->policy_slot ? SLUICE_CONNF_POLICY_SLOT : 0,
	};
}

static void reject(struct level_rt *l, struct sl_pending *p, uint64_t now,
		   enum sl_reject_reason why)
{
	struct sl_admission *adm = l->adm;
	struct sluice_ticket t;

	sl_fm_rejected(series_of(adm, p), why, waited_s(p, now));
	/* Refused after its policy admitted it: the tokens go back
	 * (Aperture workload-scheduler/scheduler.go). */
	policy_give_back(adm, p, now);
	if (reset_held(l, p)) {
		forget(adm, p);
		return;
	}
	p->state = SL_PENDING_REJECTED;
	p->ticket_ns = now;
	p->deadline_ns = now + SL_TICKET_TTL_NS;
	l->tickets_reject++;
	t = ticket_of(p, SLUICE_TICKET_REJECT, now);
	sl_ticket_reject(adm->dp, &p->key, &t);
}

/* Whether the connection waited from its SYN (not its proving ACK) in a
 * level that now seats at the ACK. */
static bool deferred_unproved(const struct level_rt *l, const struct sl_held_frame *h)
{
	struct sluice_level lvl;
	struct sl_frame f;

	if (sl_maps_level(&l->adm->dp->maps, l->slot, &lvl) || !(lvl.flags & SLUICE_LVL_SEAT_AT_ACK))
		return false;
	return !h || sl_frame_parse(h->frame, h->len, &f) || !f.ack;
}

/* Its turn came, but its level seats at the ACK now and its source has
 * proved nothing (a flood's spoofed SYNs queue like real ones until the
 * level moves): no seat.  The held SYN goes to the kernel unseated (a real
 * client's ACK then meets the level like any other; without a held SYN its
 * retransmit passes unseated) and its place in the queue is given up at
 * once, so the next in line is dispatched. */
static void release_unseated(struct level_rt *l, struct sl_pending *p, struct sl_held_frame *h,
			     uint64_t now, bool reserved)
{
	struct sl_admission *adm = l->adm;

	if (h && sl_inject_syn(adm->dp, h->frame, h->len, h->ifindex))
		l->fallback[SL_FALLBACK_INJECT]++;
	if (reserved)
		sl_seats_release(adm->dp, l->slot, p->seats);
	policy_give_back(adm, p, now);
	l->released_unseated++;
	sl_fm_dispatched(series_of(adm, p), waited_s(p, now));
	if (p->in_queueset && l->qs)
		sl_qs_complete(l->qs, now, p->id, 0);
	forget(adm, p);
}

/*
 * Its client has gone: a client that still waits retransmits its SYN
 * about a second after the first (lib/syn_retransmit.h), and each
 * retransmit of a waiting connection reaches the daemon as a deferral.
 * None seen well after it was due, while the data path lost no event
 * (a deferral capped under a flood would look the same): the client gave
 * up its connect before that retransmit.  Re-injecting its SYN would only
 * draw a SYN-ACK and the gone client's RST, and hold a seat for it.
 */
static bool client_gone(const struct sl_admission *adm, const struct sl_pending *p, uint64_t now)
{
	uint64_t due = sl_syn_next_retransmit(p->arrival_ns, p->arrival_ns) + SL_TICKET_SLACK_NS;

	return p->last_syn_ns < due - SL_TICKET_SLACK_NS && now >= due &&
	       adm->events_lost_read_ns >= due && adm->events_lost == p->lost_at_arrival;
}

/* Its turn came, but its client is gone: its SYN is dropped, its place
 * given up at once (APF's reason cancelled: the client went away). */
static void drop_gone(struct level_rt *l, struct sl_pending *p, uint64_t now, bool reserved)
{
	struct sl_admission *adm = l->adm;

	if (reserved)
		sl_seats_release(adm->dp, l->slot, p->seats);
	policy_give_back(adm, p, now);
	l->dropped_gone++;
	sl_fm_rejected(series_of(adm, p), SL_REJ_CANCELLED, waited_s(p, now));
	if (p->in_queueset && l->qs)
		sl_qs_complete(l->qs, now, p->id, 0);
	forget(adm, p);
}

/* The QueueSet started this request (or its level had room): re-inject
 * its held SYN, or else reserve its seats in the data path, unless already
 * reserved, and let the client's next SYN retransmit in on a ticket.  A
 * held SYN whose client is gone is dropped instead. */
static void admit(struct level_rt *l, struct sl_pending *p, uint64_t now, bool reserved)
{
	struct sl_admission *adm = l->adm;
	struct sl_held_frame *h = sl_held_take(adm->held, p->id);
	struct sluice_ticket t;

	if (h && client_gone(adm, p, now)) {
		free(h);
		drop_gone(l, p, now, reserved);
		return;
	}
	if (deferred_unproved(l, h)) {
		release_unseated(l, p, h, now, reserved);
		free(h);
		return;
	}
	if (h) {
		bool done = admit_held(l, p, h, now, &reserved);

		free(h);
		if (done)
			return;
	}

	l->dispatched_seats += p->seats;
	l->dispatched_total += p->seats;
	p->state = SL_PENDING_ADMITTED;
	p->ticket_ns = now;
	p->deadline_ns = sl_syn_next_retransmit(p->arrival_ns, now);
	if (p->deadline_ns > now + 1000000000ULL)
		p->deadline_ns = now + 1000000000ULL;
	p->deadline_ns += SL_TICKET_SLACK_NS;
	l->tickets_admit++;
	t = ticket_of(p, SLUICE_TICKET_ADMIT, now);
	if (sl_ticket_admit(adm->dp, &p->key, &t, reserved)) {
		/* No ticket, no admission (its seats went back with it). */
		l->dispatched_seats -= p->seats;
		l->dispatched_total -= p->seats;
		if (p->in_queueset && l->qs)
			sl_qs_complete(l->qs, now, p->id, 0);
		policy_give_back(adm, p, now);
		forget(adm, p);
		return;
	}
	p->policy_slot = false; /* the ticket holds it */
	sl_fm_dispatched(series_of(adm, p), waited_s(p, now));
}

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
		admit(l, p, at, false);
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
		reject(l, p, l->adm->now, why);
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
		policy_give_back(adm, p, now);
		sl_fm_rejected(series_of(adm, p), SL_REJ_CANCELLED, waited_s(p, now));
		forget(adm, p);
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
			reject(l, p, now, SL_REJ_CONCURRENCY);
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
		admit(l, p, now, false);
		break;
	case SL_QS_QUEUED:
		break;
	case SL_QS_REJECT_QUEUE_FULL:
	case SL_QS_REJECT_CONCURRENCY:
		p->in_queueset = false;
		reject(l, p, now, outcome == SL_QS_REJECT_QUEUE_FULL ? SL_REJ_QUEUE_FULL
								      : SL_REJ_CONCURRENCY);
		break;
	default:
		p->in_queueset = false;
		policy_give_back(adm, p, now);
		sl_fm_rejected(series_of(adm, p), SL_REJ_CANCELLED, waited_s(p, now));
		forget(adm, p);
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
			hold_frame(adm, p, de);
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
	hold_frame(adm, p, de);
	if (!policy) {
		level_gate(adm, p, now);
		return;
	}
	/* Gate 1, the policy's load scheduler; gate 2 when it admits. */
	p->state = SL_PENDING_POLICY;
	switch (sl_policies_arrive_flow(adm->policies, p->policy, p->workload, p->id, p->flow_hash, now)) {
	case SL_LS_ADMITTED:
		policy_admitted(adm, p, now);
		level_gate(adm, p, now);
		break;
	case SL_LS_QUEUED:
		break; /* its scheduler tells later: on_policy_admit / _reject (sl_adm_policy_hooks) */
	case SL_LS_REJECTED:
		/* Its wait would pass queue_timeout (or the load is cut to 0). */
		reject(l, p, now, SL_REJ_TIME_OUT);
		break;
	default:
		forget(adm, p);
		break;
	}
}

static bool on_policy_admit(void *ctx, uint64_t id, uint64_t now)
{
	struct sl_admission *adm = ctx;
	struct sl_pending *p = sl_pending_by_id(adm->pending, id);

	if (!p || p->state != SL_PENDING_POLICY)
		return false;
	policy_admitted(adm, p, now);
	level_gate(adm, p, now);
	return true;
}

static void on_policy_reject(void *ctx, uint64_t id, uint64_t now, enum sl_ss_why why)
{
	struct sl_admission *adm = ctx;
	struct sl_pending *p = sl_pending_by_id(adm->pending, id);

	if (!p || p->state != SL_PENDING_POLICY)
		return;
	reject(&adm->levels[p->level], p, now, why == SL_SS_SHED ? SL_REJ_SHED : SL_REJ_TIME_OUT);
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
		policy_give_back(adm, p, now);
		p->state = SL_PENDING_POLICY;
		r = sl_policies_requeue(adm->policies, policy, p->workload, p->id, p->flow_hash,
					p->arrival_ns, now);
		if (r == SL_LS_QUEUED)
			done++;
		else
			reject(l, p, now, r == SL_LS_REJECTED ? SL_REJ_QUEUE_FULL : SL_REJ_CANCELLED);
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
	forget(l->adm, p);
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
			forget(adm, p);
		} else if (s->now >= p->deadline_ns) {
			sl_ticket_drop(adm->dp, &p->key);
			forget(adm, p);
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
			reject(l, p, now, SL_REJ_TIME_OUT);
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
