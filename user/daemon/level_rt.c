// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The level runtime of admission: each priority level's QueueSet kept in
 * step with the data path's seats (capacity, waiting, demand), ticket
 * overbooking, and borrowing between levels.
 */
#include <math.h>
#include <string.h>

#include "daemon/admission_int.h"
#include "dataplane/ledger.h"
#include "dataplane/settings.h"
#include "lib/log.h"

/* ---- keeping the QueueSet and the data path in step ------------------------ */

uint64_t lr_seats_in_use(const struct level_rt *l)
{
	return sl_seats_in_use(l->adm->dp, l->slot);
}

uint64_t lr_unclaimed(const struct level_rt *l)
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
uint64_t lr_overbook_cap(const struct level_rt *l)
{
	double cap = floor(l->adm->overbooking * l->current_cl);

	if (l->claim_delay_ns > 0 && l->hold_ns > 0)
		cap = fmin(cap, ceil(l->current_cl * l->claim_delay_ns / fmax(l->hold_ns, 1e6)));
	return cap > 0 ? (uint64_t)cap : 0;
}

void lr_ewma(double *avg, double sample)
{
	*avg = *avg > 0 ? 0.9 * *avg + 0.1 * sample : sample;
}

/* The QueueSet owns the seats it dispatched; connections the data path
 * admitted inline hold the rest.  Give the QueueSet what is left of the
 * level's limit: it may start waiting requests, which it notes for the
 * caller to take (admission.c start_dispatched).
 *
 * Overbooking: a dispatched connection's seats sit idle until the client's
 * SYN retransmit claims its ticket, up to a second later, while the
 * service has room.  So the QueueSet may dispatch beyond the limit by the
 * seats of tickets not claimed yet, up to lr_overbook_cap(): the limit bounds
 * the connections the service really holds, on average. */
void lr_give_capacity(struct level_rt *l, uint64_t now)
{
	uint64_t in_use = lr_seats_in_use(l), inline_seats = in_use > l->dispatched_seats ? in_use - l->dispatched_seats : 0;
	uint64_t over, cap, cl;

	if (!l->qs)
		return;
	over = lr_unclaimed(l);
	cap = lr_overbook_cap(l);
	if (over > cap)
		over = cap;
	cl = l->current_cl > inline_seats ? l->current_cl - inline_seats : 0;
	sl_qs_set_cl(l->qs, now, (uint32_t)(cl + over > UINT32_MAX ? UINT32_MAX : cl + over));
}

/* What the data path and the level's clocks learn once the QueueSet's
 * dispatches are taken: how many wait (while anyone waits, the data path
 * admits nobody inline), the stall clock, the held frames, and the demand
 * integrator's sample. */
void lr_publish(struct level_rt *l, uint64_t now)
{
	uint64_t in_use = lr_seats_in_use(l);
	uint64_t waiting = l->qs ? sl_qs_waiting(l->qs) : 0, seats_waiting = l->qs ? sl_qs_seats_waiting(l->qs) : 0;
	uint64_t frames, bytes;

	/* Only a Queue level has waiting connections go first: a level turned
	 * Reject drains its old queue, and new SYNs meet only its seats. */
	sl_seats_publish_waiting(l->adm->dp, l->slot, l->response == SL_RESP_QUEUE ? waiting : 0);
	/* Full with waiters: the stall clock runs from here or the last close. */
	sl_stall_observe(&l->stall, now, in_use >= l->current_cl, waiting);
	sl_held_level(l->adm->held, l->slot, &frames, &bytes);
	sl_seats_publish_held(l->adm->dp, l->slot, frames, bytes);
	sl_demand_set(&l->demand, now, (double)(in_use + seats_waiting));
}

void lr_take_lifetimes(struct level_rt *l, bool sample)
{
	struct sluice_level_stats st;
	uint64_t n, sum;

	if (sl_maps_level_stats(&l->adm->dp->maps, l->slot, &st))
		return;
	n = st.served - l->seen_served;
	sum = st.served_log2 - l->seen_served_log2;
	l->seen_served = st.served;
	l->seen_served_log2 = st.served_log2;
	if (sample && n)
		sl_stall_lifetimes(&l->stall, n, (double)sum / (double)n / SLUICE_LOG2_ONE * M_LN2);
}

void lr_write_limit(struct sl_admission *adm, struct level_rt *l)
{
	sl_level_write_limit(adm->dp, l->slot, l->current_cl);
}

uint64_t lr_borrow(struct sl_admission *adm, uint64_t now, bool period_end)
{
	struct sl_borrow_level in[SLUICE_MAX_LEVELS];
	uint32_t cl[SLUICE_MAX_LEVELS];
	unsigned slots[SLUICE_MAX_LEVELS];
	uint64_t changed = 0;
	size_t n = 0;
	int err;

	_Static_assert(SLUICE_MAX_LEVELS <= 64, "one bit per level");

	for (unsigned s = 0; s < SLUICE_MAX_LEVELS; s++) {
		struct level_rt *l = &adm->levels[s];

		if (!l->active)
			continue;
		/* A configuration change allocates from the statistics as they
		 * stand (Kubernetes apf_controller.go digestConfigObjects); only
		 * the periodic run closes a period. */
		if (period_end)
			sl_demand_period_end(&l->demand, now, NULL);
		in[n] = (struct sl_borrow_level){
			.exempt = l->type == SL_LEVEL_EXEMPT, .nominal = l->lim.nominal,
			.lendable = l->lim.lendable, .min = l->lim.min, .max = l->lim.max,
			.hwm = l->demand.hwm, .smoothed = l->demand.smoothed,
		};
		slots[n++] = s;
	}
	if (!n)
		return 0;
	err = sl_borrow_allocate(adm->server_cl, SL_BORROW_READING_KEP, in, n, cl, &adm->last_borrow);
	if (err) {
		pr_warn("borrowing: allocation failed (%s); limits unchanged", strerror(-err));
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		struct level_rt *l = &adm->levels[slots[i]];

		if (l->type == SL_LEVEL_EXEMPT || l->current_cl == cl[i])
			continue;
		pr_info("event=limit_changed priority_level=%s from=%u to=%u reason=%s nominal=%u "
			"demand_hwm=%.0f demand_smoothed=%.1f",
			l->name, l->current_cl, cl[i], period_end ? "borrowing" : "configuration",
			l->lim.nominal, l->demand.hwm, l->demand.smoothed);
		l->current_cl = cl[i];
		lr_write_limit(adm, l);
		changed |= UINT64_C(1) << slots[i];
	}
	return changed;
}

void lr_qs_config_of(const struct sl_level_cfg *lc, struct sl_qs_config *qc)
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
		qc->delay_target_ns = lc->delay_target_ns;
		qc->delay_interval_ns = lc->delay_interval_ns;
	}
}
