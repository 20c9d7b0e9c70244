// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The load scheduler's reports (loadsched.h: its periods' tokens, its
 * stats and its workloads') and its invariants, checked from scratch
 * (sl_ls_check: the tests call it after every step).  loadsched.c runs
 * the scheduler.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "engine/loadsched.h"
#include "engine/loadsched_int.h"
#include "lib/why.h"

/* ---- introspection ---------------------------------------------------------------------- */

void sl_ls_take_period(struct sl_ls *ls, double *accepted, double *rejected)
{
	if (accepted)
		*accepted = ls->period_acc;
	if (rejected)
		*rejected = ls->period_rej;
	ls->period_acc = ls->period_rej = 0;
}

void sl_ls_get_stats(const struct sl_ls *ls, uint64_t now, struct sl_ls_stats *st)
{
	struct sl_ls_bucket b = ls->bucket;

	if (now < ls->last_now)
		now = ls->last_now;
	sl_ls_bucket_advance(&b, now);
	memset(st, 0, sizeof(*st));
	st->pass_through = ls->pass_through;
	st->bootstrapping = ls->booting;
	st->load_multiplier = ls->lm;
	st->fill_rate = b.fill;
	st->capacity = b.capacity;
	st->available = b.available;
	st->incoming_rate = sl_ls_ring_rate(&ls->ring, now);
	st->waiting = ls->waiting;
	st->head = ls->head != NULL;
	st->head_id = ls->head ? ls->head->id : 0;
	st->head_admit_at = ls->head ? ls->head_admit_at : 0;
	st->head_vft = ls->head ? ls->head_vft : NAN;
	st->vt = ls->vt;
	st->generation = ls->gen;
	st->accepted_tokens = ls->acc_tokens;
	st->rejected_tokens = ls->rej_tokens;
	st->incoming_tokens = ls->inc_tokens;
	st->admitted = ls->admitted;
	st->deferred = ls->deferred;
	st->rejected = ls->rejected;
	st->inline_admitted = ls->inline_admitted;
	st->shed = ls->shed;
}

size_t sl_ls_workload_count(const struct sl_ls *ls)
{
	return ls->n_flows;
}

int sl_ls_get_workload_stats(const struct sl_ls *ls, uint64_t now, size_t index,
			     struct sl_ls_workload_stats *st)
{
	const struct flow *f;

	if (index >= ls->n_flows)
		return -ENOENT;
	if (now < ls->last_now)
		now = ls->last_now;
	f = &ls->flows[index];
	memset(st, 0, sizeof(*st));
	st->priority = f->cfg.priority;
	st->configured_tokens = f->cfg.tokens;
	st->queue_timeout_ns = f->cfg.queue_timeout_ns;
	st->token_estimate = ls_lat_mean(&f->lat, now);
	st->tokens = ls_flow_tokens(ls, f, now);
	st->admitted = f->admitted;
	st->deferred = f->deferred;
	st->rejected = f->rejected;
	st->inline_admitted = f->inline_admitted;
	st->shed = f->shed;
	st->waiting = f->fifo.n + (ls->head && ls->head->wl == index ? 1 : 0);
	st->accepted_tokens = f->accepted_tokens;
	st->rejected_tokens = f->rejected_tokens;
	st->flow_vt = f->gen == ls->gen ? f->vt : ls->vt;
	st->flow_head_vft = f->gen == ls->gen && f->in_heap ? f->head_vft : NAN;
	st->completions = f->completions;
	return 0;
}

/* r is reachable in the id index from its home slot. */
static bool ids_has(const struct sl_ls *ls, const struct req *r)
{
	const struct req *e;
	size_t pos = 0;

	while ((e = sl_idx_next(&ls->ids, r->id, &pos)))
		if (e == r)
			return true;
	return false;
}

static int check_indexes(const struct sl_ls *ls, char *why, size_t why_len)
{
	size_t used = 0;

	for (size_t i = 0; i < ls->dheap_n; i++) {
		const struct req *r = ls->dheap[i];

		if (r->hpos != i || r->deadline == NONE || r == ls->head) {
			sl_why(why, why_len, "deadline heap: bad entry %zu", i);
			return -EPROTO;
		}
		if (i && dl_before(r, ls->dheap[(i - 1) / 2])) {
			sl_why(why, why_len, "deadline heap: order broken at %zu", i);
			return -EPROTO;
		}
	}
	if (ls->ids.cap & (ls->ids.cap - 1) || 2 * ls->ids.count > ls->ids.cap) {
		sl_why(why, why_len, "id index: capacity %zu for %zu", ls->ids.cap, ls->ids.count);
		return -EPROTO;
	}
	for (size_t i = 0; i < ls->ids.cap; i++)
		used += ls->ids.slots[i] != NULL;
	if (used != ls->ids.count || ls->ids.count != ls->waiting) {
		sl_why(why, why_len, "id index: %zu entries, %zu counted, %" PRIu64 " waiting", used,
			ls->ids.count, ls->waiting);
		return -EPROTO;
	}
	if (ls->head && (ls->head->hpos != NOPOS || !ids_has(ls, ls->head))) {
		sl_why(why, why_len, "head: badly indexed");
		return -EPROTO;
	}
	return 0;
}

int sl_ls_check(const struct sl_ls *ls, char *why, size_t why_len)
{
	uint64_t waiting = ls->head ? 1 : 0, dl = NONE;
	size_t serving = 0, timed = 0;
	const struct sl_ls_bucket *b = &ls->bucket;
	int rc;

	if ((rc = check_indexes(ls, why, why_len)))
		return rc;
	for (size_t i = 0; i < ls->n_flows; i++) {
		const struct flow *f = &ls->flows[i];
		uint64_t n = 0;
		const struct req *prev = NULL;
		const struct sl_link *prev_link = NULL;

		for (const struct sl_link *e = f->fifo.head; e; prev_link = e, e = e->next) {
			const struct req *r = sl_list_entry(e, struct req, link);

			if (e->prev != prev_link || r->wl != i || (prev && prev->seq >= r->seq)) {
				sl_why(why, why_len, "flow %zu: broken FIFO", i);
				return -EPROTO;
			}
			if (r->deadline != NONE ? r->hpos >= ls->dheap_n || ls->dheap[r->hpos] != r
						: r->hpos != NOPOS) {
				sl_why(why, why_len, "flow %zu: id %" PRIu64 " not in the deadline heap", i,
					r->id);
				return -EPROTO;
			}
			if (!ids_has(ls, r)) {
				sl_why(why, why_len, "flow %zu: id %" PRIu64 " not in the id index", i, r->id);
				return -EPROTO;
			}
			timed += r->deadline != NONE;
			dl = min_u64(dl, r->deadline);
			n++;
			prev = r;
		}
		if (prev_link != f->fifo.tail || n != f->fifo.n) {
			sl_why(why, why_len, "flow %zu: length %" PRIu64 " != %zu", i, n, f->fifo.n);
			return -EPROTO;
		}
		waiting += n;
		if (f->in_heap && (!f->fifo.head || f->serving || f->gen != ls->gen)) {
			sl_why(why, why_len, "flow %zu: in heap without a head", i);
			return -EPROTO;
		}
		if (f->fifo.head && !f->in_heap && !(f->serving && f->gen == ls->gen)) {
			sl_why(why, why_len, "flow %zu: waiting flows but no head", i);
			return -EPROTO;
		}
		if (f->serving && f->gen == ls->gen)
			serving++;
		if (n && !ls->head) {
			sl_why(why, why_len, "flow %zu: waiting flows but no global head", i);
			return -EPROTO;
		}
	}
	if (waiting != ls->waiting) {
		sl_why(why, why_len, "waiting %" PRIu64 " != %" PRIu64, waiting, ls->waiting);
		return -EPROTO;
	}
	if (serving > (ls->head && ls->head_popped ? 1u : 0u)) {
		sl_why(why, why_len, "%zu flows serving", serving);
		return -EPROTO;
	}
	if (timed != ls->dheap_n || next_deadline(ls) != dl) {
		sl_why(why, why_len, "deadline heap: %zu entries for %zu timed flows", ls->dheap_n,
			timed);
		return -EPROTO;
	}
	if (isnan(b->available) || b->available > b->capacity || b->fill != b->capacity ||
	    !(b->capacity >= 0)) {
		sl_why(why, why_len, "bucket: available %g, capacity %g, fill %g", b->available,
			b->capacity, b->fill);
		return -EPROTO;
	}
	if (ls->notes.cap < ls->notes.len + ls->waiting && ls->waiting) {
		sl_why(why, why_len, "notification room");
		return -EPROTO;
	}
	if (ls->head && (ls->pass_through || ls->booting)) {
		sl_why(why, why_len, "a head waits in pass-through/bootstrap");
		return -EPROTO;
	}
	return 0;
}
