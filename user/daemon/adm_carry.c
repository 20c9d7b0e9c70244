// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Carrying out admission's verdicts on a deferred connection (admission.c
 * decides): its held SYN put back into the stack with its sl_conns record
 * (or, without one, a ticket for its retransmit), its RST sent, or its
 * place given up when its client has gone or its source proved nothing;
 * and the bookkeeping each leaves (its policy's tokens or slot, its
 * FlowSchema's series, its record forgotten).  A room of admission
 * (admission_int.h) that calls nothing of admission.c's.
 */
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

/* The connection's per-FlowSchema series, and how long it has waited. */
struct sl_flow_series *adm_series_of(struct sl_admission *adm, const struct sl_pending *p)
{
	return sl_fm_at(&adm->flows, p->schema);
}

double adm_waited_s(const struct sl_pending *p, uint64_t now)
{
	return now > p->arrival_ns ? (double)(now - p->arrival_ns) / 1e9 : 0;
}

/* A deferred connection is done with: its record and its held frame. */
void adm_forget(struct sl_admission *adm, struct sl_pending *p)
{
	sl_held_drop(adm->held, p->id);
	sl_pending_remove(adm->pending, p);
}

/* Keep the deferral's frame with its connection (a retransmit's replaces
 * the held copy), its TCP checksum made whole.  Without one the
 * connection queues all the same and its retransmit claims a ticket. */
void adm_hold_frame(struct sl_admission *adm, const struct sl_pending *p,
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
void adm_policy_give_back(struct sl_admission *adm, struct sl_pending *p, uint64_t now)
{
	if (p->policy_admitted && adm->policies)
		sl_policies_return(adm->policies, p->policy, p->workload, p->policy_slot, now);
	p->policy_admitted = false;
	p->policy_slot = false;
}

void adm_policy_admitted(struct sl_admission *adm, struct sl_pending *p, uint64_t now)
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
	 * comes back to this record (SLUICE_CONNF_DAEMON).  Generic XDP will
	 * see the re-injected SYN: not a retransmit (SLUICE_CONNF_REINJECTED). */
	sluice_conn_admitted(&c, now, p->level, p->seats, p->schema, p->policy, p->workload,
			     (uint16_t)((f.ack ? SLUICE_CONNF_AT_ACK : 0) | slot_flags(p) | SLUICE_CONNF_DAEMON |
					(!f.ack && sl_dataplane_generic(adm->dp) ? SLUICE_CONNF_REINJECTED : 0)),
			     htonl(f.ack ? f.seq - 1 : f.seq));
	err = sl_conn_admit(adm->dp, &p->key, &c, *reserved);
	*reserved = false; /* given back on failure; the connection's on success */
	if (err == -EEXIST) {
		/* Its retransmit was admitted inline, with seats (and a slot)
		 * of its own: the QueueSet's dispatch is void. */
		if (p->in_queueset && l->qs)
			sl_qs_complete(l->qs, now, p->id, 0);
		adm_policy_give_back(adm, p, now);
		adm_forget(adm, p);
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
			adm_forget(adm, p);
			return true;
		}
		return false;
	}
	p->policy_slot = false; /* the entry holds it */
	l->dispatched_seats += p->seats;
	l->dispatched_total += p->seats;
	l->reinjected++;
	sl_seats_count_reinjected(adm->dp, p->level);
	sl_fm_dispatched(adm_series_of(adm, p), adm_waited_s(p, now));
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

void adm_reject(struct level_rt *l, struct sl_pending *p, uint64_t now,
		   enum sl_reject_reason why)
{
	struct sl_admission *adm = l->adm;
	struct sluice_ticket t;

	sl_fm_rejected(adm_series_of(adm, p), why, adm_waited_s(p, now));
	/* Refused after its policy admitted it: the tokens go back
	 * (Aperture workload-scheduler/scheduler.go). */
	adm_policy_give_back(adm, p, now);
	if (reset_held(l, p)) {
		adm_forget(adm, p);
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
	adm_policy_give_back(adm, p, now);
	l->released_unseated++;
	sl_fm_dispatched(adm_series_of(adm, p), adm_waited_s(p, now));
	if (p->in_queueset && l->qs)
		sl_qs_complete(l->qs, now, p->id, 0);
	adm_forget(adm, p);
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
	adm_policy_give_back(adm, p, now);
	l->dropped_gone++;
	sl_fm_rejected(adm_series_of(adm, p), SL_REJ_CANCELLED, adm_waited_s(p, now));
	if (p->in_queueset && l->qs)
		sl_qs_complete(l->qs, now, p->id, 0);
	adm_forget(adm, p);
}

/* The QueueSet started this request (or its level had room): re-inject
 * its held SYN, or else reserve its seats in the data path, unless already
 * reserved, and let the client's next SYN retransmit in on a ticket.  A
 * held SYN whose client is gone is dropped instead. */
void adm_admit(struct level_rt *l, struct sl_pending *p, uint64_t now, bool reserved)
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
		adm_policy_give_back(adm, p, now);
		adm_forget(adm, p);
		return;
	}
	p->policy_slot = false; /* the ticket holds it */
	sl_fm_dispatched(adm_series_of(adm, p), adm_waited_s(p, now));
}
