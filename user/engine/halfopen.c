// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "engine/halfopen.h"

#include <string.h>

void sl_hs_meter_push(struct sl_hs_meter *m, const uint64_t cumulative[SLUICE_HS_BUCKETS])
{
	m->head = (m->head + 1) % (SL_HS_WINDOW + 1);
	memcpy(m->snap[m->head], cumulative, sizeof(m->snap[m->head]));
	if (m->n < SL_HS_WINDOW + 1)
		m->n++;
}

uint64_t sl_hs_meter_p99_ns(const struct sl_hs_meter *m, uint64_t *samples)
{
	uint64_t d[SLUICE_HS_BUCKETS], total = 0, below = 0;
	unsigned oldest;

	*samples = 0;
	if (m->n < 2)
		return 0;
	oldest = (m->head + SL_HS_WINDOW + 2 - m->n) % (SL_HS_WINDOW + 1);
	for (unsigned b = 0; b < SLUICE_HS_BUCKETS; b++) {
		/* A counter that went back (the maps were recreated) counts
		 * from zero. */
		uint64_t now = m->snap[m->head][b], then = m->snap[oldest][b];

		d[b] = now >= then ? now - then : now;
		total += d[b];
	}
	*samples = total;
	if (total < SL_HS_MIN_SAMPLES)
		return 0;
	for (unsigned b = 0; b < SLUICE_HS_BUCKETS; b++) {
		below += d[b];
		/* The first bucket by which 99 % of the handshakes are done:
		 * below / total >= 0.99, in integers. */
		if (below * 100 >= total * 99)
			return (2ull << b) * 1000ull; /* [2^b, 2^(b+1)) us: its upper bound */
	}
	return (2ull << (SLUICE_HS_BUCKETS - 1)) * 1000ull;
}

uint64_t sl_halfopen_timeout_ns(uint64_t p99_ns, uint64_t floor_ns, uint64_t ceiling_ns)
{
	uint64_t t;

	if (!p99_ns)
		return ceiling_ns;
	t = p99_ns > ceiling_ns / SL_HS_FACTOR ? ceiling_ns : p99_ns * SL_HS_FACTOR;
	if (t < floor_ns)
		t = floor_ns;
	return t < ceiling_ns ? t : ceiling_ns;
}

static uint64_t delta(uint64_t now, uint64_t then)
{
	return now >= then ? now - then : now;
}

uint64_t sl_seat_mode_pressure(const struct sl_seat_mode *s)
{
	uint64_t sum = s->last.lingering;

	for (unsigned i = 0; i < SL_PRESSURE_WINDOW; i++)
		sum += s->unfinished[i];
	return sum;
}

uint32_t sl_seat_mode_step(struct sl_seat_mode *s, const struct sl_seat_policy *p, uint64_t now_ns,
			   const struct sl_seat_counters *c)
{
	uint64_t unfinished = 0, unseated, proved;
	bool was = s->at_ack;

	if (s->primed) {
		/* Unfinished: a seat that timed out, or an unseated SYN no
		 * proving ACK followed (a retransmitted SYN counts as its own;
		 * an ACK proved twice, a deferred one's duplicate, offsets
		 * nothing beyond zero). */
		unseated = delta(c->unseated, s->last.unseated);
		proved = delta(c->proved, s->last.proved);
		unfinished = delta(c->expired, s->last.expired) +
			     (unseated > proved ? unseated - proved : 0);
	}
	s->last = *c;
	s->primed = true;
	s->head = (s->head + 1) % SL_PRESSURE_WINDOW;
	s->unfinished[s->head] = unfinished;
	s->unfinished_total += unfinished;

	switch (p->seat_at) {
	case SL_SEAT_AT_SYN:
		s->at_ack = false;
		break;
	case SL_SEAT_AT_ACK:
		s->at_ack = true;
		break;
	case SL_SEAT_AT_AUTO:
	default:
		if (sl_seat_mode_pressure(s) >= p->engage_after && p->engage_after) {
			s->at_ack = true;
			s->hold_until_ns = now_ns + p->hold_ns;
		} else if (s->at_ack && now_ns >= s->hold_until_ns) {
			s->at_ack = false;
		}
		break;
	}
	if (s->at_ack && !was)
		s->engaged++;
	if (was && !s->at_ack)
		s->watch_until_ns = now_ns + SL_WATCH_GRACE_NS;
	if (s->at_ack)
		return SLUICE_LVL_SEAT_AT_ACK | SLUICE_LVL_ACK_WATCH;
	return now_ns < s->watch_until_ns ? SLUICE_LVL_ACK_WATCH : 0;
}

enum sl_sight_change sl_sight_step(struct sl_sight *s, const struct sl_sight_counters *c)
{
	const struct sl_sight_counters *last = &s->snap[s->head];
	bool moved;
	unsigned oldest;

	/* A counter that went back (the maps were recreated): start over. */
	if (s->n && (c->established < last->established || c->expired < last->expired ||
		     c->proved < last->proved))
		s->n = 0;
	moved = s->n && c->established > last->established;
	s->head = (s->head + 1) % (SL_SIGHT_WINDOW + 1);
	s->snap[s->head] = *c;
	if (s->n < SL_SIGHT_WINDOW + 1)
		s->n++;
	oldest = (s->head + SL_SIGHT_WINDOW + 2 - s->n) % (SL_SIGHT_WINDOW + 1);
	s->window.established = c->established - s->snap[oldest].established;
	s->window.expired = c->expired - s->snap[oldest].expired;
	s->window.proved = c->proved - s->snap[oldest].proved;
	if (s->blind) {
		if (!moved)
			return SL_SIGHT_SAME;
		s->blind = false;
		return SL_SIGHT_REGAINED;
	}
	if (s->n < SL_SIGHT_WINDOW + 1 || s->window.established ||
	    s->window.expired + s->window.proved < SL_SIGHT_MIN_UNSEEN)
		return SL_SIGHT_SAME;
	s->blind = true;
	return SL_SIGHT_LOST;
}
