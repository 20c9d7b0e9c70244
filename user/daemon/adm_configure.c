// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Admission's life cycle: created with the data path, configured from each
 * compiled configuration (levels, their QueueSets, borrowing, the held-SYN
 * budget, the per-FlowSchema series), adopted after a restart (census),
 * freed.  The journey of a connection is admission.c's.
 */
#include "daemon/admission.h"
#include "daemon/admission_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dataplane/expiry.h"
#include "dataplane/ledger.h"
#include "engine/held.h"
#include "lib/log.h"

/* ---- configuration ----------------------------------------------------------- */

int sl_adm_create(struct sl_admission **out, struct sl_dataplane *dp, const uint8_t hash_key[16],
		  uint64_t now)
{
	struct sl_admission *adm = calloc(1, sizeof(*adm));

	if (!adm)
		return -ENOMEM;
	{
		/* The per-boot secret, apart from the flow hash's own use of it. */
		uint8_t key[16];

		for (int i = 0; i < 16; i++)
			key[i] = hash_key[i] ^ 0x5c;
		adm->pending = sl_pending_new(PENDING_CAPACITY, key);
	}
	{
		/* No frame is held until a configuration says how much may be. */
		struct sl_held_limits none = {0};

		if (!adm->pending || sl_held_create(&adm->held, &none)) {
			sl_pending_free(adm->pending);
			free(adm);
			return -ENOMEM;
		}
	}
	adm->dp = dp;
	memcpy(adm->hash_key, hash_key, 16);
	adm->borrow_period_ns = SL_BORROW_PERIOD_NS;
	adm->last_borrow_ns = now;
	adm->last_sweep_ns = now;
	adm->clock_ns = now;
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
	sl_held_free(adm->held);
	sl_fm_free(&adm->flows);
	free(adm->executing);
	free(adm->executing_seats);
	free(adm->late);
	for (unsigned s = 0; s < SLUICE_MAX_LEVELS; s++)
		free(adm->levels[s].stall_flows.hash);
	free(adm);
}

void sl_adm_census(struct sl_admission *adm, const struct sl_conn_census *c)
{
	if (!c->complete)
		return; /* a partial walk would show too few */
	if (!adm->executing) {
		adm->executing = calloc(SLUICE_FS_STATS, sizeof(*adm->executing));
		adm->executing_seats = calloc(SLUICE_FS_STATS, sizeof(*adm->executing_seats));
		if (!adm->executing || !adm->executing_seats) {
			free(adm->executing);
			free(adm->executing_seats);
			adm->executing = adm->executing_seats = NULL;
			return;
		}
	}
	adm->n_executing = c->n < SLUICE_FS_STATS ? c->n : SLUICE_FS_STATS;
	if (!adm->n_executing)
		return; /* an empty census may carry no arrays */
	memcpy(adm->executing, c->conns, adm->n_executing * sizeof(*adm->executing));
	memcpy(adm->executing_seats, c->seats, adm->n_executing * sizeof(*adm->executing_seats));
}

/* The per-FlowSchema series follow the configuration's schemas, with the
 * data path's counters read at once for both the old and the new indices. */
static void configure_flows(struct sl_admission *adm, const struct sl_config *cfg)
{
	size_t n = adm->flows.n > cfg->n_schemas ? adm->flows.n : cfg->n_schemas;
	struct sl_fs_reading *reading;

	if (n > SLUICE_FS_STATS)
		n = SLUICE_FS_STATS;
	reading = calloc(n ? n : 1, sizeof(*reading));
	if (reading && sl_maps_fs_reading(&adm->dp->maps, n, reading)) {
		free(reading);
		reading = NULL; /* no reading: the series count from here */
	}
	if (sl_fm_reconfigure(&adm->flows, cfg, reading, reading ? n : 0)) {
		/* Old series under new indices would be mislabelled. */
		sl_fm_free(&adm->flows);
		pr_warn("per-FlowSchema metrics: no memory; they start again at the next reload");
	}
	free(reading);
}

void sl_adm_set_borrow_period(struct sl_admission *adm, uint64_t period_ns)
{
	adm->borrow_period_ns = period_ns ? period_ns : SL_BORROW_PERIOD_NS;
}

int sl_adm_configure(struct sl_admission *adm, const struct sl_config *cfg,
		     const struct sl_plan *plan, uint64_t now)
{
	bool keep[SLUICE_MAX_LEVELS] = {false};
	char why[160];

	now = adm_clock(adm, now);
	adm->cfg = cfg;
	adm->server_cl = cfg->server.server_concurrency_limit;
	adm->overbooking = cfg->server.ticket_overbooking;
	{
		struct sl_held_limits lim = {
			.max_bytes = cfg->server.held_syns.max_bytes,
			.max_bytes_per_level = cfg->server.held_syns.max_bytes_per_level,
		};

		sl_held_set_limits(adm->held, &lim);
	}
	for (size_t i = 0; i < cfg->n_levels; i++) {
		const struct sl_level_cfg *lc = &cfg->levels[i];
		unsigned s = plan->slot_of[i];
		struct level_rt *l = &adm->levels[s];
		struct sl_qs_config qc;
		bool fresh = !l->active;

		keep[s] = true;
		lr_qs_config_of(lc, &qc);
		l->active = true;
		snprintf(l->name, sizeof(l->name), "%s", lc->name);
		l->type = lc->type;
		l->response = lc->limit_response;
		l->wait_limit_ns = lc->queue_wait_limit_ns;
		l->delay_target_ns = lc->delay_target_ns;
		l->delay_interval_ns = lc->delay_interval_ns;
		l->lim = plan->limits[s];
		/* A new level starts provisionally at NominalCL - LendableCL/2; a
		 * surviving one keeps what it has; both are reallocated below,
		 * at once, as APF does after every configuration change. */
		if (fresh) {
			sl_stall_init(&l->stall, now);
			l->current_cl = lc->type == SL_LEVEL_EXEMPT ? plan->levels[s].seat_limit
								    : plan->limits[s].initial;
			sl_demand_init(&l->demand, now, (double)lr_seats_in_use(l));
			lr_take_lifetimes(l, false); /* the slot's earlier closes are not its */
		}
		if (qc.queues >= 1 && !l->qs) {
			if (sl_qs_create(&l->qs, &qc, l->current_cl, now, why, sizeof(why))) {
				pr_err("level %s: queues: %s", lc->name, why);
				return -EINVAL;
			}
		} else if (l->qs) {
			/* Kubernetes queueset.go setConfiguration: queue count changes, Reject (queues 0) drains. */
			if (sl_qs_set_config(l->qs, now, &qc, why, sizeof(why)))
				pr_warn("level %s: queues: %s", lc->name, why);
		}
		sl_adm_level_seating(adm, s, plan->levels[s].flags);
		adm_level_settle(l, now);
	}
	for (unsigned s = 0; s < SLUICE_MAX_LEVELS; s++) {
		struct level_rt *l = &adm->levels[s];

		if (keep[s] || !l->active)
			continue;
		/* Removed: what is queued still drains through its QueueSet. */
		l->active = false;
	}
	adm_settle_levels(adm, lr_borrow(adm, now, false), now);
	for (unsigned s = 0; s < SLUICE_MAX_LEVELS; s++) {
		struct level_rt *l = &adm->levels[s];

		/* What the plan wrote (a provisional value) becomes what was
		 * allocated, also where the allocation kept the limit. */
		if (l->active && l->type != SL_LEVEL_EXEMPT)
			lr_write_limit(adm, l);
	}
	configure_flows(adm, cfg);
	return 0;
}

uint32_t sl_adm_level_limit(const struct sl_admission *adm, unsigned slot)
{
	const struct level_rt *l = slot < SLUICE_MAX_LEVELS ? &adm->levels[slot] : NULL;

	return l && l->active && l->type != SL_LEVEL_EXEMPT ? l->current_cl : 0;
}

