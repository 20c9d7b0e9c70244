// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Agent-side load scheduler (Aperture workload-scheduler/scheduler.go).  See loadsched.h.
 *
 * Layout: one WFQ flow per workload (priority comes from the workload, so
 * (label, priority, generation) is (workload, generation)); each flow has a
 * FIFO of waiting flows ("requests").  The flow heads sit in a virtual heap:
 * workloads are few, so the next head is found by a scan in index order
 * (ties: lowest workload index).  The global head is detached from its
 * FIFO and holds a token reservation until its admission time.
 *
 * Two indexes over the waiting flows keep the per-flow work logarithmic:
 *  - a binary min-heap of the FIFO members with a deadline, keyed by
 *    (deadline, workload, arrival sequence) with a back-pointer (hpos) in
 *    each flow: the expire sweep pops exactly the expired flows, in the
 *    order the old full sweep reported them (workload, then FIFO order);
 *  - an open-addressing hash table (linear probing, backward-shift
 *    deletion, load <= 1/2) from the caller's id to every waiting flow,
 *    the head included: sl_ls_cancel() finds its flow in O(1) expected.
 *    Ids are not required to be unique: duplicates live side by side and
 *    cancel picks the one the old linear search found first.
 * Both grow before any state changes (so -ENOMEM leaves nothing changed)
 * and never shrink.
 */
#include "engine/loadsched.h"
#include "engine/loadsched_int.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "lib/grow.h"
#include "lib/id_index.h"
#include "lib/list.h"
#include "lib/notify.h"
#include "lib/why.h"

_Static_assert(SL_LS_NO_TIMEOUT == SL_QUEUE_TIMEOUT_UNSET, "timeout sentinel");

/* ---- a flow's tokens ------------------------------------------------------------ */

double ls_flow_tokens(const struct sl_ls *ls, const struct flow *f, uint64_t now)
{
	if (ls->latency_based) {
		double est = ls_lat_mean(&f->lat, now);

		if (!isnan(est))
			return est;
	}
	return f->cfg.tokens > 0 ? f->cfg.tokens : 1.0;
}

/* ---- configuration ----------------------------------------------------------------- */

struct sl_ls_workload sl_ls_workload_from_cfg(const struct sl_workload_params *p)
{
	struct sl_ls_workload w = {
		.priority = p->priority > 0 ? p->priority : 1.0,
		.tokens = p->tokens_set && p->tokens > 0 ? p->tokens : 0,
		.queue_timeout_ns = p->queue_timeout_set ? p->queue_timeout_ns : SL_LS_NO_TIMEOUT,
		.delay_target_ns = p->queue_delay_target_ns,
		.delay_interval_ns = p->queue_delay_interval_ns,
	};
	return w;
}

static int check_workload(const struct sl_ls_workload *w, const char *name, size_t i, char *why,
			  size_t why_len)
{
	if (!(w->priority > 0) || !isfinite(w->priority)) {
		sl_why(why, why_len, "%s %zu: priority must be > 0 and finite", name, i);
		return -EINVAL;
	}
	if (!(w->tokens >= 0) || !isfinite(w->tokens)) {
		sl_why(why, why_len, "%s %zu: tokens must be >= 0 and finite", name, i);
		return -EINVAL;
	}
	if (w->delay_target_ns && (!w->delay_interval_ns || w->delay_target_ns > w->delay_interval_ns)) {
		sl_why(why, why_len, "%s %zu: the delay target must be within a non-zero interval", name, i);
		return -EINVAL;
	}
	return 0;
}

int sl_ls_params_validate(const struct sl_ls_params *p, char *why, size_t why_len)
{
	int rc;

	if (!p) {
		sl_why(why, why_len, "no parameters");
		return -EINVAL;
	}
	if (p->n_workloads > MAX_WORKLOADS || (p->n_workloads && !p->workloads)) {
		sl_why(why, why_len, "bad workload list (%zu)", p->n_workloads);
		return -EINVAL;
	}
	for (size_t i = 0; i < p->n_workloads; i++)
		if ((rc = check_workload(&p->workloads[i], "workload", i, why, why_len)))
			return rc;
	return check_workload(&p->default_workload, "default workload", 0, why, why_len);
}

/* ---- notifications ---------------------------------------------------------------- */

/* What a note says about its flow. */
enum note_kind { NOTE_REJECTED = 0, NOTE_ADMITTED = 1, NOTE_SHED = 2 };

/* Room for one note per waiting flow is kept at all times. */
static int reserve_notes(struct sl_ls *ls, size_t extra)
{
	return sl_notes_reserve(&ls->notes, ls->notes.len + ls->waiting + extra);
}

static void push_note(struct sl_ls *ls, uint64_t id, uint64_t t, enum note_kind kind)
{
	sl_notes_push(&ls->notes, id, t, kind);
}

static void deliver_note(void *ctx, const struct sl_note *n)
{
	struct sl_ls *ls = ctx;

	if (n->kind == NOTE_ADMITTED) {
		if (ls->on_admit)
			ls->on_admit(ls->ctx, n->id, n->now);
	} else if (ls->on_reject) {
		ls->on_reject(ls->ctx, n->id, n->now, n->kind == NOTE_SHED ? SL_LS_SHED : SL_LS_TIME_OUT);
	}
}

void ls_deliver(struct sl_ls *ls)
{
	sl_notes_deliver(&ls->notes, deliver_note, ls);
}

/* ---- deadline heap ------------------------------------------------------------------- */

static void dheap_set(struct sl_ls *ls, size_t i, struct req *r)
{
	ls->dheap[i] = r;
	r->hpos = i;
}

static void dheap_sift_up(struct sl_ls *ls, size_t i)
{
	struct req *r = ls->dheap[i];

	while (i) {
		size_t parent = (i - 1) / 2;

		if (!dl_before(r, ls->dheap[parent]))
			break;
		dheap_set(ls, i, ls->dheap[parent]);
		i = parent;
	}
	dheap_set(ls, i, r);
}

static void dheap_sift_down(struct sl_ls *ls, size_t i)
{
	struct req *r = ls->dheap[i];
	size_t n = ls->dheap_n;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && dl_before(ls->dheap[c + 1], ls->dheap[c]))
			c++;
		if (!dl_before(ls->dheap[c], r))
			break;
		dheap_set(ls, i, ls->dheap[c]);
		i = c;
	}
	dheap_set(ls, i, r);
}

static int dheap_reserve(struct sl_ls *ls, size_t extra)
{
	return sl_grow((void **)&ls->dheap, &ls->dheap_cap, ls->dheap_n + extra, sizeof(*ls->dheap));
}

/* r joins a FIFO: indexed by deadline if it has one (room reserved). */
static void dheap_push(struct sl_ls *ls, struct req *r)
{
	if (r->deadline == NONE) {
		r->hpos = NOPOS;
		return;
	}
	ls->dheap[ls->dheap_n++] = r;
	dheap_sift_up(ls, ls->dheap_n - 1);
}

static void dheap_remove(struct sl_ls *ls, struct req *r)
{
	size_t i = r->hpos, last;

	if (i == NOPOS)
		return;
	r->hpos = NOPOS;
	last = --ls->dheap_n;
	if (i == last)
		return;
	dheap_set(ls, i, ls->dheap[last]);
	if (i && dl_before(ls->dheap[i], ls->dheap[(i - 1) / 2]))
		dheap_sift_up(ls, i);
	else
		dheap_sift_down(ls, i);
}

/* ---- id index ------------------------------------------------------------------------ */

/* The queued (non-head) flow with this id that comes first in workload,
 * then FIFO order, or NULL. */
static struct req *ids_find_queued(const struct sl_ls *ls, uint64_t id)
{
	struct req *best = NULL, *r;
	size_t pos = 0;

	while ((r = sl_idx_next(&ls->ids, id, &pos))) {
		if (r == ls->head)
			continue;
		if (!best || r->wl < best->wl || (r->wl == best->wl && r->seq < best->seq))
			best = r;
	}
	return best;
}

/* A waiting flow is decided or cancelled: out of the indexes, freed. */
static void req_release(struct sl_ls *ls, struct req *r)
{
	dheap_remove(ls, r);
	sl_idx_del(&ls->ids, r);
	free(r);
}

/* ---- accounting ---------------------------------------------------------------------- */

static void count_admit(struct sl_ls *ls, struct flow *f, double tokens)
{
	f->admitted++;
	ls->admitted++;
	if (tokens > 0) {
		f->accepted_tokens += tokens;
		ls->acc_tokens += tokens;
		ls->period_acc += tokens;
	}
}

static void count_reject(struct sl_ls *ls, struct flow *f, double tokens)
{
	f->rejected++;
	ls->rejected++;
	if (tokens > 0) {
		f->rejected_tokens += tokens;
		ls->rej_tokens += tokens;
		ls->period_rej += tokens;
	}
}

/* ---- WFQ ----------------------------------------------------------------------------- */

static struct flow *touch_flow(struct sl_ls *ls, uint32_t wl)
{
	struct flow *f = &ls->flows[wl];

	if (f->gen != ls->gen) { /* new flow in this generation */
		f->gen = ls->gen;
		f->vt = ls->vt;
		f->in_heap = false;
		f->serving = false;
	} else if (!f->fifo.head && !f->serving && !f->in_heap) {
		/* Empty since its last request left: Aperture deletes such a flow
		 * (workload-scheduler/scheduler.go), so it comes back at the
		 * scheduler's virtual time, without the credit it would have
		 * banked while away. */
		f->vt = ls->vt;
	}
	return f;
}

static double cost(const struct flow *f, const struct req *r)
{
	return r->tokens / f->cfg.priority;
}

static struct req *fifo_first(const struct flow *f)
{
	return sl_list_entry(f->fifo.head, struct req, link);
}

static void fifo_remove(struct flow *f, struct req *r)
{
	sl_list_remove(&f->fifo, &r->link);
}

static void fifo_push(struct flow *f, struct req *r)
{
	if (!f->fifo.head)
		f->backlog_since = r->arrival;
	sl_list_append(&f->fifo, &r->link);
}

/* The flow's first waiting flow becomes its head: vft = flow.vt + cost. */
static void flow_requeue(struct flow *f)
{
	if (f->fifo.head && !f->serving) {
		f->head_vft = f->vt + cost(f, fifo_first(f));
		f->in_heap = true;
	} else {
		f->in_heap = false;
	}
}

/* The global head left (admitted or rejected). */
static void head_done(struct sl_ls *ls, struct req *r, bool admitted)
{
	struct flow *f = &ls->flows[r->wl];

	if (admitted) {
		f->vt += cost(f, r);
		ls->vt = f->vt;
	}
	if (ls->head_popped && f->serving) {
		f->serving = false;
		flow_requeue(f);
	}
	ls->head = NULL;
	ls->head_popped = false;
}

static struct flow *heap_min(struct sl_ls *ls)
{
	struct flow *best = NULL;

	for (size_t i = 0; i < ls->n_flows; i++) {
		struct flow *f = &ls->flows[i];

		/* ties (within float noise): lowest workload index */
		if (f->in_heap && (!best || f->head_vft < best->head_vft -
						      1e-12 * fmax(fabs(f->head_vft), fabs(best->head_vft))))
			best = f;
	}
	return best;
}

static uint64_t remaining(uint64_t deadline, uint64_t t)
{
	if (deadline == NONE)
		return SL_LS_NO_TIMEOUT;
	return deadline > t ? deadline - t : 0;
}

bool ls_bypass(const struct sl_ls *ls)
{
	return ls->pass_through || ls->booting;
}

/*
 * r is the global head at time t (already detached and set as ls->head).
 * Reserve its tokens.  Returns true if it stays head (waiting), false if
 * it was decided now (noted, freed).
 */
static bool head_start(struct sl_ls *ls, struct req *r, uint64_t t)
{
	struct flow *f = &ls->flows[r->wl];
	enum sl_ls_reserve res;
	uint64_t wait;

	if (ls_bypass(ls)) {
		res = SL_LS_RESERVE_NOW;
		wait = 0;
	} else {
		res = sl_ls_bucket_reserve(&ls->bucket, t, r->tokens, remaining(r->deadline, t), &wait);
	}
	if (res == SL_LS_RESERVE_WAIT) {
		ls->head_admit_at = add_sat(t, wait);
		return true;
	}
	ls->waiting--;
	if (res == SL_LS_RESERVE_NOW)
		count_admit(ls, f, r->tokens);
	else
		count_reject(ls, f, r->tokens);
	push_note(ls, r->id, t, res == SL_LS_RESERVE_NOW ? NOTE_ADMITTED : NOTE_REJECTED);
	head_done(ls, r, res == SL_LS_RESERVE_NOW);
	req_release(ls, r);
	return false;
}

/* No head: make the flow with the lowest vft's first waiting flow the head,
 * until one waits or nothing is left. */
static void advance_queue(struct sl_ls *ls, uint64_t t)
{
	while (!ls->head) {
		struct flow *f = heap_min(ls);
		struct req *r;

		if (!f)
			return;
		r = fifo_first(f);
		fifo_remove(f, r);
		dheap_remove(ls, r);
		f->in_heap = false;
		f->serving = true;
		ls->head = r;
		ls->head_popped = true;
		ls->head_vft = f->head_vft;
		head_start(ls, r, t);
	}
}

static void admit_head(struct sl_ls *ls, uint64_t t)
{
	struct req *r = ls->head;
	struct flow *f = &ls->flows[r->wl];

	ls->waiting--;
	count_admit(ls, f, r->tokens);
	push_note(ls, r->id, t, NOTE_ADMITTED);
	head_done(ls, r, true);
	req_release(ls, r);
}

/* Pass-through or bootstrap: everything waiting is admitted now, WFQ order. */
void ls_drain(struct sl_ls *ls, uint64_t t)
{
	if (!ls_bypass(ls))
		return;
	if (ls->head) {
		/* admitted without tokens: give its reservation back */
		sl_ls_bucket_refund(&ls->bucket, ls->head->tokens);
		admit_head(ls, t);
	}
	advance_queue(ls, t);
}

/* A queued (non-head) flow is rejected at t: out of its FIFO, its
 * workload's next first competes in its place. */
static void reject_queued(struct sl_ls *ls, struct req *r, uint64_t t, enum note_kind kind)
{
	struct flow *f = &ls->flows[r->wl];
	bool was_first = r == fifo_first(f);

	fifo_remove(f, r);
	ls->waiting--;
	count_reject(ls, f, r->tokens);
	if (kind == NOTE_SHED) {
		f->shed++;
		ls->shed++;
	}
	push_note(ls, r->id, t, kind);
	req_release(ls, r);
	if (was_first && f->in_heap)
		flow_requeue(f);
}

/* Rejects every non-head waiting flow whose deadline is <= t, in workload
 * then FIFO order: O(k log waiting) for k expired flows. */
static void expire(struct sl_ls *ls, uint64_t t)
{
	while (ls->dheap_n && ls->dheap[0]->deadline <= t)
		reject_queued(ls, ls->dheap[0], t, NOTE_REJECTED);
	advance_queue(ls, t);
}

/* When controlled delay sheds the workload's oldest queued flow: once its
 * queue has stood for the interval and it has waited the target; never
 * the queue's last (its newest), so a standing queue keeps one to serve.
 * NONE: not while it waits at most a target, or holds one flow. */
static uint64_t shed_due(const struct flow *f)
{
	const struct req *first = fifo_first(f);
	uint64_t stood, waited;

	if (!f->cfg.delay_target_ns || !first || &first->link == f->fifo.tail)
		return NONE;
	stood = add_sat(f->backlog_since, f->cfg.delay_interval_ns);
	waited = add_sat(first->arrival, f->cfg.delay_target_ns);
	return stood > waited ? stood : waited;
}

/* The next shed, over every workload: workloads are few (the next head is
 * found by the same scan). */
static uint64_t next_shed(const struct sl_ls *ls)
{
	uint64_t t = NONE;

	if (!ls->n_delayed)
		return NONE;
	for (size_t i = 0; i < ls->n_flows; i++)
		t = min_u64(t, shed_due(&ls->flows[i]));
	return t;
}

/* Sheds what is due at t, oldest first within each workload. */
static void shed(struct sl_ls *ls, uint64_t t)
{
	for (size_t i = 0; ls->n_delayed && i < ls->n_flows; i++) {
		struct flow *f = &ls->flows[i];

		while (shed_due(f) <= t)
			reject_queued(ls, fifo_first(f), t, NOTE_SHED);
	}
	advance_queue(ls, t);
}

static void go_pass_through(struct sl_ls *ls, uint64_t t)
{
	ls->pass_through = true;
	ls->lm = NAN;
	sl_ls_bucket_set_fill(&ls->bucket, t, 0);
	ls_drain(ls, t);
}

/* Processes every due event up to now in time order. */
void ls_run_until(struct sl_ls *ls, uint64_t now)
{
	for (;;) {
		uint64_t t_boot = ls->booting ? ls->ring.boot_until : NONE;
		uint64_t t_stale = !ls->pass_through && ls->ttl_ns ? add_sat(ls->valid_until, 1) : NONE;
		uint64_t t_head = ls->head ? ls->head_admit_at : NONE;
		uint64_t t_exp = next_deadline(ls);
		uint64_t t_shed = next_shed(ls);
		uint64_t t = min_u64(min_u64(min_u64(t_boot, t_stale), min_u64(t_head, t_exp)), t_shed);

		if (t > now || t == NONE)
			break;
		sl_ls_bucket_advance(&ls->bucket, t);
		if (t == t_boot) {
			ls->booting = false;
			if (!ls->pass_through) {
				/* leaving bootstrap: compute the fill, grant 1 s of tokens */
				sl_ls_bucket_set_fill(&ls->bucket, t, ls->lm * sl_ls_ring_rate(&ls->ring, t));
				ls->bucket.available = ls->bucket.capacity;
			}
		} else if (t == t_stale) {
			go_pass_through(ls, t);
		} else if (t == t_head) {
			admit_head(ls, t);
			advance_queue(ls, t);
		} else if (t == t_exp) {
			expire(ls, t);
		} else {
			shed(ls, t);
		}
	}
	sl_ls_bucket_advance(&ls->bucket, now);
}

uint64_t ls_clamp_now(struct sl_ls *ls, uint64_t now)
{
	if (now < ls->last_now)
		now = ls->last_now;
	ls->last_now = now;
	return now;
}

/* ---- life cycle --------------------------------------------------------------------- */

int sl_ls_create(struct sl_ls **out, const struct sl_ls_params *p, uint64_t now,
		 sl_ls_admit_fn on_admit, sl_ls_reject_fn on_reject, void *ctx,
		 char *why, size_t why_len)
{
	struct sl_ls *ls;
	int rc;

	*out = NULL;
	if ((rc = sl_ls_params_validate(p, why, why_len)))
		return rc;
	ls = calloc(1, sizeof(*ls));
	if (!ls)
		return -ENOMEM;
	sl_idx_init(&ls->ids, offsetof(struct req, id));
	ls->n_flows = p->n_workloads + 1;
	ls->flows = calloc(ls->n_flows, sizeof(*ls->flows));
	if (!ls->flows) {
		free(ls);
		return -ENOMEM;
	}
	for (size_t i = 0; i < ls->n_flows; i++) {
		struct flow *f = &ls->flows[i];

		f->cfg = i < p->n_workloads ? p->workloads[i] : p->default_workload;
		f->gen = UINT64_MAX; /* not in any generation yet */
		ls->n_delayed += f->cfg.delay_target_ns != 0;
		ls_lat_init(&f->lat, now);
	}
	ls->latency_based = p->latency_based_tokens;
	ls->ttl_ns = p->decision_ttl_ns;
	ls->on_admit = on_admit;
	ls->on_reject = on_reject;
	ls->ctx = ctx;
	ls->last_now = now;
	sl_ls_ring_init(&ls->ring, now);
	sl_ls_bucket_init(&ls->bucket, now);
	ls->booting = true;
	ls->pass_through = true;
	ls->lm = NAN;
	*out = ls;
	return 0;
}

uint64_t sl_ls_decision_ttl_ns(uint64_t control_period_ns)
{
	if (!control_period_ns || control_period_ns > UINT64_MAX / SL_LS_DECISION_PERIODS)
		return SL_LS_DECISION_TTL_NS;
	return SL_LS_DECISION_PERIODS * control_period_ns;
}

int sl_ls_create_for_policy(struct sl_ls **out, const struct sl_policy_cfg *cfg, uint64_t now,
			    sl_ls_admit_fn on_admit, sl_ls_reject_fn on_reject, void *ctx,
			    char *why, size_t why_len)
{
	struct sl_ls_params p = { 0 };
	struct sl_ls_workload *w = NULL;
	int rc;

	*out = NULL;
	if (cfg->n_workloads) {
		w = calloc(cfg->n_workloads, sizeof(*w));
		if (!w)
			return -ENOMEM;
	}
	for (size_t i = 0; i < cfg->n_workloads; i++)
		w[i] = sl_ls_workload_from_cfg(&cfg->workloads[i].params);
	p.workloads = w;
	p.n_workloads = cfg->n_workloads;
	p.default_workload = sl_ls_workload_from_cfg(&cfg->default_params);
	p.latency_based_tokens = cfg->workload_latency_based_tokens;
	p.decision_ttl_ns = sl_ls_decision_ttl_ns(cfg->period_ns);
	rc = sl_ls_create(out, &p, now, on_admit, on_reject, ctx, why, why_len);
	free(w);
	return rc;
}

void sl_ls_free(struct sl_ls *ls)
{
	if (!ls)
		return;
	free(ls->head);
	for (size_t i = 0; i < ls->n_flows; i++) {
		struct flow *f = &ls->flows[i];

		while (f->fifo.head) {
			struct req *r = fifo_first(f);

			fifo_remove(f, r);
			free(r);
		}
	}
	free(ls->flows);
	sl_notes_free(&ls->notes);
	free(ls->dheap);
	sl_idx_free(&ls->ids);
	free(ls);
}

void sl_ls_set_multiplier(struct sl_ls *ls, uint64_t now, double lm, bool pass_through)
{
	now = ls_clamp_now(ls, now);
	ls_run_until(ls, now);
	if (pass_through || isnan(lm) || (isinf(lm) && lm > 0)) {
		go_pass_through(ls, now);
	} else {
		ls->pass_through = false;
		ls->lm = lm > 0 ? lm : 0;
		ls->valid_until = add_sat(now, ls->ttl_ns);
		sl_ls_bucket_set_fill(&ls->bucket, now, ls->lm * sl_ls_ring_rate(&ls->ring, now));
	}
	ls_deliver(ls);
}

/* ---- flows --------------------------------------------------------------------------- */

int ls_wl_index(const struct sl_ls *ls, int workload, uint32_t *out)
{
	if (workload == -1) {
		*out = (uint32_t)(ls->n_flows - 1);
		return 0;
	}
	if (workload < 0 || (size_t)workload >= ls->n_flows - 1)
		return -EINVAL;
	*out = (uint32_t)workload;
	return 0;
}

int sl_ls_arrive(struct sl_ls *ls, uint64_t now, uint64_t id, int workload, double tokens,
		 uint64_t client_timeout_ns)
{
	struct flow *f;
	struct req *r;
	uint64_t timeout, deadline;
	uint32_t wl;
	int rc;

	if (ls_wl_index(ls, workload, &wl))
		return -EINVAL;
	if (isnan(tokens) || isinf(tokens) || (tokens < 0 && tokens != SL_LS_TOKENS_AUTO))
		return -EINVAL;
	if (reserve_notes(ls, 1) || dheap_reserve(ls, 1) || sl_idx_reserve(&ls->ids, 1))
		return -ENOMEM;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	now = ls_clamp_now(ls, now);
	ls_run_until(ls, now);
	f = &ls->flows[wl];
	if (tokens == SL_LS_TOKENS_AUTO)
		tokens = ls_flow_tokens(ls, f, now);

	/* step 4: tokens 0 ⇒ admit, not counted */
	if (!(tokens > 0)) {
		f->admitted++;
		ls->admitted++;
		free(r);
		ls_deliver(ls);
		return SL_LS_ADMITTED;
	}
	ls->inc_tokens += tokens;
	if (sl_ls_ring_add(&ls->ring, now, tokens) && !ls->booting) {
		ls->booting = true; /* idle: fail open again */
		ls_drain(ls, now);
	}
	if (ls_bypass(ls)) {
		count_admit(ls, f, tokens);
		rc = SL_LS_ADMITTED;
		goto out_free;
	}
	/* step 5 */
	if (!ls->head && sl_ls_bucket_take_if_available(&ls->bucket, now, tokens)) {
		count_admit(ls, f, tokens);
		rc = SL_LS_ADMITTED;
		goto out_free;
	}
	/* step 3: timeout */
	timeout = f->cfg.queue_timeout_ns;
	if (client_timeout_ns != SL_LS_NO_TIMEOUT) {
		uint64_t c = client_timeout_ns > SL_LS_DEADLINE_MARGIN_NS ?
				     client_timeout_ns - SL_LS_DEADLINE_MARGIN_NS : 0;
		timeout = min_u64(timeout, c);
	}
	deadline = timeout == SL_LS_NO_TIMEOUT ? NONE : add_sat(now, timeout);
	if (deadline == NONE && timeout != SL_LS_NO_TIMEOUT)
		deadline = NONE - 1;
	r->id = id;
	r->tokens = tokens;
	r->deadline = deadline;
	r->seq = ls->next_seq++;
	r->arrival = now;
	r->hpos = NOPOS;
	r->wl = wl;
	ls->waiting++;
	sl_idx_put(&ls->ids, r);

	if (!ls->head) {
		/* step 6 into an idle queue: new generation, vt 0, head without the heap */
		ls->gen++;
		ls->vt = 0;
		f = touch_flow(ls, wl);
		ls->head = r;
		ls->head_popped = false;
		ls->head_vft = NAN;
		if (head_start(ls, r, now)) {
			f->deferred++;
			ls->deferred++;
			ls_deliver(ls);
			return SL_LS_QUEUED;
		}
		/* decided now: report by return value, not by callback */
		struct sl_note n = sl_notes_pop(&ls->notes);

		ls_deliver(ls);
		return n.kind == NOTE_ADMITTED ? SL_LS_ADMITTED : SL_LS_REJECTED;
	}
	f = touch_flow(ls, wl);
	fifo_push(f, r);
	dheap_push(ls, r);
	if (!f->in_heap && !f->serving)
		flow_requeue(f);
	f->deferred++;
	ls->deferred++;
	ls_deliver(ls);
	return SL_LS_QUEUED;

out_free:
	free(r);
	ls_deliver(ls);
	return rc;
}

int sl_ls_cancel(struct sl_ls *ls, uint64_t now, uint64_t id)
{
	struct req *r;

	now = ls_clamp_now(ls, now);
	ls_run_until(ls, now);
	if (ls->head && ls->head->id == id) {
		r = ls->head;
		sl_ls_bucket_refund(&ls->bucket, r->tokens);
		ls->waiting--;
		count_reject(ls, &ls->flows[r->wl], r->tokens);
		head_done(ls, r, false);
		req_release(ls, r);
		advance_queue(ls, now);
		ls_deliver(ls);
		return 0;
	}
	r = ids_find_queued(ls, id);
	if (r) {
		struct flow *f = &ls->flows[r->wl];
		bool was_first = r == fifo_first(f);

		fifo_remove(f, r);
		ls->waiting--;
		count_reject(ls, f, r->tokens);
		req_release(ls, r);
		if (was_first && f->in_heap)
			flow_requeue(f);
		ls_deliver(ls);
		return 0;
	}
	ls_deliver(ls);
	return -ENOENT;
}

int sl_ls_complete(struct sl_ls *ls, uint64_t now, int workload, uint64_t duration_ns)
{
	uint32_t wl;

	if (ls_wl_index(ls, workload, &wl))
		return -EINVAL;
	now = ls_clamp_now(ls, now);
	ls_lat_add(&ls->flows[wl].lat, now, (double)duration_ns / 1e6);
	ls->flows[wl].completions++;
	return 0;
}

double sl_ls_workload_tokens(const struct sl_ls *ls, int workload)
{
	uint32_t wl;

	if (ls_wl_index(ls, workload, &wl))
		return NAN;
	return ls_flow_tokens(ls, &ls->flows[wl], ls->last_now);
}

uint64_t sl_ls_next_due(const struct sl_ls *ls)
{
	uint64_t t = min_u64(next_deadline(ls), next_shed(ls));

	if (ls->booting)
		t = min_u64(t, ls->ring.boot_until);
	if (!ls->pass_through && ls->ttl_ns)
		t = min_u64(t, add_sat(ls->valid_until, 1));
	if (ls->head)
		t = min_u64(t, ls->head_admit_at);
	return t;
}

uint64_t sl_ls_tick(struct sl_ls *ls, uint64_t now)
{
	now = ls_clamp_now(ls, now);
	ls_run_until(ls, now);
	ls_deliver(ls);
	return sl_ls_next_due(ls);
}
