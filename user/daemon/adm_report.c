// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What admission reports: Prometheus text per level and the JSON dumps
 * (levels, queues, flows) of sluicectl.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/admission.h"
#include "daemon/admission_int.h"
#include "daemon/control.h"
#include "dataplane/ledger.h"
#include "lib/flowhash.h"
#include "lib/fmt.h"
#include "lib/json_out.h"
#include "lib/prom.h"
#include "lib/shuffle.h"

/* ---- metrics ------------------------------------------------------------------- */

struct level_sample {
	struct sluice_level_stats st;
	struct sluice_seats seats;
	uint64_t held_frames, held_bytes;
};

static const char *const fallback_names[SL_FALLBACK_N] = {
	[SL_FALLBACK_NO_FRAME] = "no-frame",
	[SL_FALLBACK_UNPARSED] = "unparsed",
	[SL_FALLBACK_CHECKSUM] = "checksum",
	[SL_FALLBACK_BUDGET] = "budget",
	[SL_FALLBACK_INJECT] = "inject-failed",
};
/* The same as JSON keys (snake_case, as every key sluicectl shows): the
 * contract's (control.h), in the same order. */
_Static_assert(SL_FALLBACK_N == (int)SL_FALLBACK_NKEYS, "a fallback reason without its key");
_Static_assert(SL_FALLBACK_NO_FRAME == (int)SL_FALLBACK_K_NO_FRAME && SL_FALLBACK_UNPARSED == (int)SL_FALLBACK_K_UNPARSED &&
	       SL_FALLBACK_CHECKSUM == (int)SL_FALLBACK_K_CHECKSUM && SL_FALLBACK_BUDGET == (int)SL_FALLBACK_K_BUDGET &&
	       SL_FALLBACK_INJECT == (int)SL_FALLBACK_K_INJECT_FAILED,
	       "fallback reasons and their keys in different orders");

enum level_metric_id {
	LM_NOMINAL, LM_LIMIT, LM_LOWER, LM_UPPER, LM_DEMAND_AVG, LM_DEMAND_STDEV, LM_DEMAND_HWM,
	LM_DEMAND_SMOOTHED, LM_SEATS, LM_SYNS, LM_DEFERRED, LM_RETRANSMITS, LM_CLOSED, LM_FAILSAFE,
	LM_EXPIRED, LM_SHADOW, LM_HELD, LM_HELD_BYTES, LM_REINJECTED, LM_RESET_HELD, LM_RESET_FAILED,
	LM_RELEASED_UNSEATED, LM_CLOSED_UNSERVED, LM_STALLS, LM_DROPPED_GONE, LM_AFTER_CLOSE,
	LM_AFTER_CLOSE_1MS,
};

/* The first eight are Kubernetes APF's, with its names
 * (apiserver_flowcontrol_NAME); the level_ ones are sluice's own. */
static const struct level_metric {
	enum level_metric_id id;
	enum sl_prom_type type;
	const char *name, *help;
} level_metrics[] = {
	{LM_NOMINAL, SL_PROM_GAUGE, "nominal_limit_seats", "Nominal concurrency limit in seats (NominalCL)."},
	{LM_LIMIT, SL_PROM_GAUGE, "current_limit_seats", "Current concurrency limit in seats, after borrowing (CurrentCL)."},
	{LM_LOWER, SL_PROM_GAUGE, "lower_limit_seats", "Lowest limit borrowing may set: NominalCL - LendableCL."},
	{LM_UPPER, SL_PROM_GAUGE, "upper_limit_seats", "Highest limit borrowing may set: NominalCL + BorrowingCL."},
	{LM_DEMAND_AVG, SL_PROM_GAUGE, "demand_seats_average", "Seat demand (seats in use and waiting), time average over the last borrowing period."},
	{LM_DEMAND_STDEV, SL_PROM_GAUGE, "demand_seats_stdev", "Seat demand, standard deviation over the last borrowing period."},
	{LM_DEMAND_HWM, SL_PROM_GAUGE, "demand_seats_high_watermark", "Seat demand, highest over the last borrowing period."},
	{LM_DEMAND_SMOOTHED, SL_PROM_GAUGE, "demand_seats_smoothed", "Seat demand, smoothed envelope the borrowing allocation reads."},
	{LM_SEATS, SL_PROM_GAUGE, "level_seats_in_use", "Seats held now: admitted connections and tickets not yet claimed (exact, unlike the sampled current_executing_seats)."},
	{LM_SYNS, SL_PROM_COUNTER, "level_syns_total", "SYNs classified into the level."},
	{LM_DEFERRED, SL_PROM_COUNTER, "level_deferred_total", "SYNs dropped to defer their connection."},
	{LM_RETRANSMITS, SL_PROM_COUNTER, "level_retransmits_total", "SYN retransmits of admitted connections."},
	{LM_CLOSED, SL_PROM_COUNTER, "level_closed_total", "Admitted connections closed (seats returned)."},
	{LM_FAILSAFE, SL_PROM_COUNTER, "level_failsafe_total", "SYNs decided by the failsafe (stale heartbeat)."},
	{LM_EXPIRED, SL_PROM_COUNTER, "level_expired_total", "Admitted connections whose handshake never completed."},
	{LM_SHADOW, SL_PROM_COUNTER, "level_shadow_passed_total", "Shadow mode: SYNs a gate refused, admitted anyway."},
	{LM_HELD, SL_PROM_GAUGE, "level_held_syns", "Waiting connections whose SYN the daemon holds."},
	{LM_HELD_BYTES, SL_PROM_GAUGE, "level_held_syn_bytes", "Bytes the held SYNs take (counted against heldSyns)."},
	{LM_REINJECTED, SL_PROM_COUNTER, "level_reinjected_total", "Held SYNs re-injected when their turn came."},
	{LM_RESET_HELD, SL_PROM_COUNTER, "level_reset_held_total", "Held SYNs answered with their RST when rejected."},
	{LM_RESET_FAILED, SL_PROM_COUNTER, "level_reset_failed_total",
	 "Held SYNs rejected whose RST could not be sent (a reject ticket answers their retransmit)."},
	{LM_RELEASED_UNSEATED, SL_PROM_COUNTER, "level_released_unseated_total",
	 "Connections deferred at their SYN whose turn came once the level seated at the ACK: let through without a seat."},
	{LM_CLOSED_UNSERVED, SL_PROM_COUNTER, "level_closed_unserved_total",
	 "Admitted connections that never established (the client's RST or an ICMP error in the handshake): no latency sample."},
	{LM_STALLS, SL_PROM_COUNTER, "level_stalls_total",
	 "Times the level was found stalled (full, nothing closing) and its waiters were refused."},
	{LM_DROPPED_GONE, SL_PROM_COUNTER, "level_dropped_gone_total",
	 "Held SYNs dropped when their turn came: no retransmit since their first SYN, their client had given up."},
	{LM_AFTER_CLOSE, SL_PROM_COUNTER, "level_dispatched_after_close_total",
	 "Waiting connections started by a close of one of the level's connections."},
	{LM_AFTER_CLOSE_1MS, SL_PROM_COUNTER, "level_dispatched_after_close_within_1ms_total",
	 "Of those, the ones started within a millisecond of the close (in the data path's clock)."},
};

static double level_value(enum level_metric_id id, const struct level_rt *l,
			  const struct level_sample *s)
{
	bool exempt = l->type == SL_LEVEL_EXEMPT;

	switch (id) {
	case LM_NOMINAL: return exempt ? l->current_cl : l->lim.nominal;
	case LM_LIMIT: return l->current_cl;
	case LM_LOWER: return exempt ? l->current_cl : l->lim.min;
	case LM_UPPER: return exempt ? l->current_cl : l->lim.max;
	case LM_DEMAND_AVG: return l->demand.avg;
	case LM_DEMAND_STDEV: return l->demand.stddev;
	case LM_DEMAND_HWM: return l->demand.hwm;
	case LM_DEMAND_SMOOTHED: return l->demand.smoothed;
	case LM_SEATS: return (double)s->seats.seats_in_use;
	case LM_SYNS: return (double)s->st.syns;
	case LM_DEFERRED: return (double)s->st.deferred;
	case LM_RETRANSMITS: return (double)s->st.retransmits;
	case LM_CLOSED: return (double)s->st.closed;
	case LM_FAILSAFE: return (double)s->st.failsafe;
	case LM_EXPIRED: return (double)s->seats.expired;
	case LM_SHADOW: return (double)s->st.shadow_passed;
	case LM_HELD: return (double)s->held_frames;
	case LM_HELD_BYTES: return (double)s->held_bytes;
	case LM_REINJECTED: return (double)s->seats.reinjected;
	case LM_RESET_HELD: return (double)s->seats.reset_held;
	case LM_RESET_FAILED: return (double)s->seats.reset_failed;
	case LM_RELEASED_UNSEATED: return (double)l->released_unseated;
	case LM_CLOSED_UNSERVED: return (double)s->st.closed_unserved;
	case LM_STALLS: return (double)l->stalls;
	case LM_DROPPED_GONE: return (double)l->dropped_gone;
	case LM_AFTER_CLOSE: return (double)l->after_close;
	case LM_AFTER_CLOSE_1MS: return (double)l->after_close_1ms;
	}
	return 0;
}

static void count_inqueue(struct sl_pending *p, void *ctx)
{
	struct sl_flow_series *s = sl_fm_at(ctx, p->schema);

	if (s && (p->state == SL_PENDING_QUEUED || p->state == SL_PENDING_POLICY))
		s->inqueue++;
}

/* Per (priority_level, flow_schema): the gauges set now, then the series. */
static void flow_metrics(struct sl_admission *adm, FILE *f)
{
	struct sl_flow_metrics *fm = &adm->flows;
	size_t n = fm->n < SLUICE_FS_STATS ? fm->n : SLUICE_FS_STATS;
	struct sl_fs_reading *reading = calloc(n ? n : 1, sizeof(*reading));

	for (size_t i = 0; i < fm->n; i++) {
		struct sl_flow_series *s = &fm->series[i];

		s->inqueue = 0;
		s->executing = i < adm->n_executing ? adm->executing[i] : 0;
		s->executing_seats = i < adm->n_executing ? adm->executing_seats[i] : 0;
	}
	sl_pending_each(adm->pending, count_inqueue, fm);
	if (reading && sl_maps_fs_reading(&adm->dp->maps, n, reading)) {
		free(reading);
		reading = NULL;
	}
	sl_fm_render(fm, f, reading, reading ? n : 0);
	free(reading);
}

void sl_adm_metrics(struct sl_admission *adm, FILE *f)
{
	struct level_sample *samples = calloc(SLUICE_MAX_LEVELS, sizeof(*samples));

	struct sl_held_stats hs;

	if (!samples)
		return;
	sl_held_get_stats(adm->held, &hs);
	for (unsigned s = 0; s < SLUICE_MAX_LEVELS; s++) {
		struct level_rt *l = &adm->levels[s];

		if (!l->active)
			continue;
		samples[s].held_frames = hs.level_frames[s];
		samples[s].held_bytes = hs.level_bytes[s];
		sl_maps_level_stats(&adm->dp->maps, s, &samples[s].st);
		sl_seats_read(adm->dp, s, &samples[s].seats);
	}
	for (size_t m = 0; m < sizeof(level_metrics) / sizeof(level_metrics[0]); m++) {
		const struct level_metric *lm = &level_metrics[m];

		sl_prom_family(f, lm->name, lm->type, lm->help);
		for (unsigned s = 0; s < SLUICE_MAX_LEVELS; s++) {
			const struct level_rt *l = &adm->levels[s];

			if (l->active)
				sl_prom_sample(f, lm->name, level_value(lm->id, l, &samples[s]),
					       "priority_level", l->name, NULL);
		}
	}
	sl_prom_family(f, "level_ticket_fallbacks_total", SL_PROM_COUNTER,
		       "Deferred connections left to a ticket (their client's retransmit), by why "
		       "their SYN was not held or not re-injected.");
	for (unsigned s = 0; s < SLUICE_MAX_LEVELS; s++) {
		const struct level_rt *l = &adm->levels[s];

		if (!l->active)
			continue;
		for (int r = 0; r < SL_FALLBACK_N; r++)
			sl_prom_sample_u64(f, "level_ticket_fallbacks_total", l->fallback[r],
					   "priority_level", l->name, "reason", fallback_names[r], NULL);
	}
	sl_prom_single(f, "held_syn_bytes_limit", SL_PROM_GAUGE, "heldSyns.maxBytes.",
		       adm->cfg ? adm->cfg->server.held_syns.max_bytes : 0);
	sl_prom_single(f, "held_syn_over_budget_total", SL_PROM_COUNTER,
		       "SYNs not held: a heldSyns budget was full.", hs.over_budget);
	free(samples);
	flow_metrics(adm, f);
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
	struct sl_held_stats hs;
	struct sluice_seats seats;
	uint64_t reinjected, reset;

	sl_held_get_stats(adm->held, &hs);
	sl_seats_read(adm->dp, l->slot, &seats);
	reinjected = seats.reinjected;
	reset = seats.reset_held;
	sl_maps_level_stats(&adm->dp->maps, l->slot, &st);
	if (l->qs)
		sl_qs_get_stats(l->qs, &qs);
	jo_obj_begin(jo, NULL);
	jo_str(jo, SL_LEVEL_KEY(NAME), l->name);
	jo_str(jo, SL_LEVEL_KEY(TYPE), level_kind(l));
	jo_bool(jo, SL_LEVEL_KEY(ACTIVE), l->active);
	jo_u64(jo, SL_LEVEL_KEY(NOMINAL), l->lim.nominal);
	jo_u64(jo, SL_LEVEL_KEY(LENDABLE), l->lim.lendable);
	jo_u64(jo, SL_LEVEL_KEY(MIN), l->lim.min);
	jo_u64(jo, SL_LEVEL_KEY(MAX), l->lim.max);
	jo_u64(jo, SL_LEVEL_KEY(LIMIT), l->current_cl);
	jo_u64(jo, SL_LEVEL_KEY(SEATS_IN_USE), lr_seats_in_use(l));
	jo_u64(jo, SL_LEVEL_KEY(SEATS_DISPATCHED), l->dispatched_seats);
	jo_u64(jo, SL_LEVEL_KEY(SEATS_UNCLAIMED), lr_unclaimed(l));
	jo_u64(jo, SL_LEVEL_KEY(OVERBOOK_CAP), l->qs ? lr_overbook_cap(l) : 0);
	jo_double(jo, SL_LEVEL_KEY(CLAIM_DELAY_MS), l->claim_delay_ns / 1e6);
	jo_double(jo, SL_LEVEL_KEY(HOLD_MS), l->hold_ns / 1e6);
	jo_u64(jo, SL_LEVEL_KEY(WAITING), qs.waiting);
	jo_u64(jo, SL_LEVEL_KEY(QUEUES), qs.queues);
	jo_u64(jo, SL_LEVEL_KEY(ADMITTED), st.admitted + reinjected);
	jo_u64(jo, SL_LEVEL_KEY(DEFERRED), st.deferred);
	jo_u64(jo, SL_LEVEL_KEY(REJECTED), st.rejected + reset);
	jo_u64(jo, SL_LEVEL_KEY(DISPATCHED_FROM_QUEUE), l->tickets_admit + l->reinjected);
	jo_u64(jo, SL_LEVEL_KEY(HELD_SYNS), hs.level_frames[l->slot]);
	jo_u64(jo, SL_LEVEL_KEY(HELD_SYN_BYTES), hs.level_bytes[l->slot]);
	jo_u64(jo, SL_LEVEL_KEY(REINJECTED), l->reinjected);
	jo_u64(jo, SL_LEVEL_KEY(RESET_HELD), l->reset_sent);
	jo_u64(jo, SL_LEVEL_KEY(RELEASED_UNSEATED), l->released_unseated);
	jo_obj_begin(jo, SL_LEVEL_KEY(TICKET_FALLBACKS));
	for (int r = 0; r < SL_FALLBACK_N; r++)
		jo_u64(jo, sl_fallback_keys[r], l->fallback[r]);
	jo_obj_end(jo);
	jo_u64(jo, SL_LEVEL_KEY(REJECTED_QUEUE_FULL), qs.rejected_queue_full);
	jo_u64(jo, SL_LEVEL_KEY(REJECTED_TIME_OUT), qs.rejected_time_out);
	jo_u64(jo, SL_LEVEL_KEY(REJECTED_SHED), qs.rejected_shed);
	jo_u64(jo, SL_LEVEL_KEY(REJECTED_STALLED), qs.rejected_stalled);
	jo_u64(jo, SL_LEVEL_KEY(STALLS), l->stalls);
	jo_u64(jo, SL_LEVEL_KEY(CLOSED_UNSERVED), st.closed_unserved);
	jo_u64(jo, SL_LEVEL_KEY(DROPPED_GONE), l->dropped_gone);
	jo_u64(jo, SL_LEVEL_KEY(DISPATCHED_AFTER_CLOSE), l->after_close);
	jo_u64(jo, SL_LEVEL_KEY(DISPATCHED_AFTER_CLOSE_1MS), l->after_close_1ms);
	/* The bounds of a wait: the hard limit, the controlled delay, and how
	 * long without a close makes the level stalled (0: no lifetime yet). */
	jo_double(jo, SL_LEVEL_KEY(QUEUE_WAIT_LIMIT_MS), l->wait_limit_ns / 1e6);
	jo_double(jo, SL_LEVEL_KEY(DELAY_TARGET_MS), l->delay_target_ns / 1e6);
	jo_double(jo, SL_LEVEL_KEY(DELAY_INTERVAL_MS), l->delay_interval_ns / 1e6);
	jo_double(jo, SL_LEVEL_KEY(STALL_AFTER_MS), sl_stall_after_ns(&l->stall) / 1e6);
	jo_double(jo, SL_LEVEL_KEY(DEMAND_HWM), l->demand.hwm);
	jo_double(jo, SL_LEVEL_KEY(DEMAND_AVG), l->demand.avg);
	jo_double(jo, SL_LEVEL_KEY(DEMAND_SMOOTHED), l->demand.smoothed);
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
	jo_str(fc->jo, SL_FLOW_KEY(LEVEL), fc->l->name);
	if (p) {
		const struct sl_config *cfg = fc->adm->cfg;

		jo_str(fc->jo, SL_FLOW_KEY(FLOW_SCHEMA), cfg && p->schema < cfg->n_schemas ? cfg->schemas[p->schema].name : NULL);
		jo_str(fc->jo, SL_FLOW_KEY(CLIENT), sl_fmt_endpoint(p->key.saddr, p->key.sport, buf, sizeof(buf)));
		jo_str(fc->jo, SL_FLOW_KEY(LOCAL), sl_fmt_endpoint(p->key.daddr, p->key.dport, buf, sizeof(buf)));
	}
	jo_i64(fc->jo, SL_FLOW_KEY(QUEUE), r->queue);
	jo_i64(fc->jo, SL_FLOW_KEY(POSITION), r->position);
	jo_bool(fc->jo, SL_FLOW_KEY(EXECUTING), r->executing);
	/* waiting with its SYN held: re-injected the moment its turn comes */
	jo_bool(fc->jo, SL_FLOW_KEY(HELD), sl_held_has(fc->adm->held, r->id));
	snprintf(buf, sizeof(buf), "0x%016llx", (unsigned long long)r->flow_hash);
	jo_str(fc->jo, SL_FLOW_KEY(FLOW_HASH), buf);
	jo_u64(fc->jo, SL_FLOW_KEY(SEATS), r->seats);
	jo_u64(fc->jo, SL_FLOW_KEY(ARRIVAL_NS), r->arrival_ns);
	jo_u64(fc->jo, SL_FLOW_KEY(START_NS), r->start_ns);
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
	jo_str(jo, SL_QUEUE_KEY(LEVEL), l->name);
	jo_u64(jo, SL_QUEUE_KEY(INDEX), qi->index);
	jo_u64(jo, SL_QUEUE_KEY(WAITING), qi->waiting);
	jo_u64(jo, SL_QUEUE_KEY(EXECUTING), qi->executing);
	jo_u64(jo, SL_QUEUE_KEY(SEATS_IN_USE), qi->seats_in_use);
	sl_seatsec_format(qi->next_dispatch_r, buf, sizeof(buf));
	jo_str(jo, SL_QUEUE_KEY(NEXT_DISPATCH_R), buf);
	jo_u64(jo, SL_QUEUE_KEY(MAX_SEATS_SUM), qi->max_seats_sum);
	sl_seatsec_format(qi->total_work_sum, buf, sizeof(buf));
	jo_str(jo, SL_QUEUE_KEY(TOTAL_WORK_SUM), buf);
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
	/* "what" is the same first key of every dump (SL_*_REPLY_KEYS) */
	jo_str(&d->jo, SL_LEVELS_REPLY_KEY(WHAT), what);
	if (!strcmp(what, "levels")) {
		jo_str(&d->jo, SL_LEVELS_REPLY_KEY(BORROWING_REGIME),
		       sl_borrow_regime_name(adm->last_borrow.regime));
		jo_double(&d->jo, SL_LEVELS_REPLY_KEY(FAIR_PROP), adm->last_borrow.fair_prop);
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

/* ---- a flow's hand, with the daemon's own key ---------------------------------- */

int sl_adm_hand(struct sl_admission *adm, FILE *f, const char *schema, const char *dist,
		const char **why)
{
	const struct sl_config *cfg = adm->cfg;
	const struct sl_flow_schema *fs = NULL;
	const struct sl_level_cfg *lc;
	uint32_t hand[SL_SHUFFLE_MAX_HAND];
	struct json_out jo;
	uint64_t hash;
	char buf[24];
	bool dealt;

	for (size_t i = 0; cfg && i < cfg->n_schemas && !fs; i++)
		if (!strcmp(cfg->schemas[i].name, schema))
			fs = &cfg->schemas[i];
	if (!fs) {
		*why = "no FlowSchema of that name in the running configuration";
		return -ENOENT;
	}
	lc = &cfg->levels[fs->level];
	hash = sl_flow_hash(adm->hash_key, fs->name, dist);
	dealt = lc->type == SL_LEVEL_LIMITED && lc->limit_response == SL_RESP_QUEUE && lc->queues > 1 &&
		!sl_shuffle_deal(lc->queues, lc->hand_size, hash, hand);
	jo_init(&jo, f, false);
	jo_obj_begin(&jo, NULL);
	jo_bool(&jo, SL_HAND_KEY(OK), true);
	jo_str(&jo, SL_HAND_KEY(FLOW_SCHEMA), fs->name);
	jo_str(&jo, SL_HAND_KEY(PRIORITY_LEVEL), lc->name);
	jo_str(&jo, SL_HAND_KEY(DISTINGUISHER), dist);
	snprintf(buf, sizeof(buf), "0x%016llx", (unsigned long long)hash);
	jo_str(&jo, SL_HAND_KEY(HASH), buf);
	jo_u64(&jo, SL_HAND_KEY(QUEUES), lc->queues);
	jo_arr_begin(&jo, SL_HAND_KEY(HAND));
	for (uint32_t i = 0; dealt && i < lc->hand_size; i++)
		jo_u64(&jo, NULL, hand[i]);
	jo_arr_end(&jo);
	jo_obj_end(&jo);
	jo_finish(&jo);
	return 0;
}
