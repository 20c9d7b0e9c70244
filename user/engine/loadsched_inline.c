// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The load scheduler's side of the data path's inline admissions
 * (loadsched.h): the tokens XDP may spend without asking (a grant, and
 * what it gives back unspent), the flows it admitted with them, and the
 * tokens of connections refused after their admission.  The queue these
 * credit is loadsched.c's.
 */
#include "engine/loadsched.h"
#include "engine/loadsched_int.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

double sl_ls_grant(struct sl_ls *ls, uint64_t now)
{
	double g = 0;

	now = ls_clamp_now(ls, now);
	ls_run_until(ls, now);
	if (ls_bypass(ls)) {
		g = INFINITY;
	} else if (!ls->waiting && ls->bucket.available > 0) {
		g = ls->bucket.available;
		ls->bucket.available = 0;
	}
	ls_deliver(ls);
	return g;
}

/*
 * Tokens come back to the bucket at now (events up to now processed):
 * capped at capacity.  A waiting head computed its admission time from the
 * deficit it saw; with the deficit smaller its admission comes forward (to
 * now if the deficit is gone), as if the tokens had never left.
 */
static void credit(struct sl_ls *ls, uint64_t now, double tokens)
{
	struct sl_ls_bucket *b = &ls->bucket;

	sl_ls_bucket_refund(b, tokens);
	if (ls->head && b->fill > 0) {
		uint64_t wns = 0, at;

		if (b->available < 0) {
			double w = ceil(-b->available / b->fill * 1e9);

			wns = w >= (double)WAIT_CAP ? WAIT_CAP : (uint64_t)w;
		}
		at = add_sat(now, wns);
		if (at < ls->head_admit_at)
			ls->head_admit_at = at;
		ls_run_until(ls, now);
	}
}

void sl_ls_ungrant(struct sl_ls *ls, uint64_t now, double tokens)
{
	if (!(tokens > 0) || !isfinite(tokens))
		return;
	now = ls_clamp_now(ls, now);
	ls_run_until(ls, now);
	credit(ls, now, tokens);
	ls_deliver(ls);
}

/* A workload's tokens counted at now: the workload known, the tokens a
 * finite amount not below 0, the queue's events up to now processed. */
static int begin(struct sl_ls *ls, uint64_t *now, int workload, double tokens, uint32_t *wl)
{
	if (ls_wl_index(ls, workload, wl) || !(tokens >= 0) || !isfinite(tokens))
		return -EINVAL;
	*now = ls_clamp_now(ls, *now);
	ls_run_until(ls, *now);
	return 0;
}

int sl_ls_observe_inline(struct sl_ls *ls, uint64_t now, int workload, uint64_t flows,
			 double tokens)
{
	struct flow *f;
	uint32_t wl;

	if (begin(ls, &now, workload, tokens, &wl))
		return -EINVAL;
	f = &ls->flows[wl];
	if (tokens > 0) {
		ls->inc_tokens += tokens;
		if (sl_ls_ring_add(&ls->ring, now, tokens) && !ls->booting) {
			ls->booting = true; /* idle: fail open again */
			ls_drain(ls, now);
		}
		f->accepted_tokens += tokens;
		ls->acc_tokens += tokens;
		ls->period_acc += tokens;
	}
	f->admitted += flows;
	ls->admitted += flows;
	f->inline_admitted += flows;
	ls->inline_admitted += flows;
	ls_deliver(ls);
	return 0;
}

/* x − y, not below 0 (a return may follow the period its flow was counted in). */
static double sub_floor0(double x, double y)
{
	return x > y ? x - y : 0;
}

int sl_ls_return(struct sl_ls *ls, uint64_t now, int workload, double tokens)
{
	struct flow *f;
	uint32_t wl;

	if (begin(ls, &now, workload, tokens, &wl))
		return -EINVAL;
	if (tokens > 0) {
		f = &ls->flows[wl];
		f->accepted_tokens = sub_floor0(f->accepted_tokens, tokens);
		f->rejected_tokens += tokens;
		ls->acc_tokens = sub_floor0(ls->acc_tokens, tokens);
		ls->rej_tokens += tokens;
		ls->period_acc = sub_floor0(ls->period_acc, tokens);
		ls->period_rej += tokens;
		credit(ls, now, tokens);
	}
	ls_deliver(ls);
	return 0;
}
