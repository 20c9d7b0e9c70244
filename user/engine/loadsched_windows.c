// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The load scheduler's windows over time (loadsched.h, loadsched_int.h):
 * Aperture's incoming-rate ring and its token bucket, and the workloads'
 * latency windows (workload_latency_based_tokens).  Pure arithmetic on
 * slots of time; loadsched.c runs the scheduler over them.
 */
#include <math.h>
#include <string.h>

#include "engine/loadsched.h"
#include "engine/loadsched_int.h"

/* ---- windows ------------------------------------------------------------------ */

/* Σ v[cur − k] over k in [0, n) whose age after advancing `adv` slots,
 * k + adv, lies in [lo, hi]. */
static double win_sum(const double *v, unsigned n, unsigned cur, uint64_t adv, unsigned lo,
		      unsigned hi)
{
	double s = 0;

	if (adv > hi)
		return 0;
	for (unsigned k = 0; k < n; k++) {
		uint64_t age = k + adv;

		if (age >= lo && age <= hi)
			s += v[(cur + n - k) % n];
	}
	return s;
}

static uint64_t slots_since(uint64_t start, uint64_t now, uint64_t slot_ns)
{
	return now > start ? (now - start) / slot_ns : 0;
}

/* ---- incoming-rate ring --------------------------------------------------------- */

#define RING_N (SL_LS_RING_SLOTS + 1)

void sl_ls_ring_init(struct sl_ls_ring *r, uint64_t now)
{
	memset(r, 0, sizeof(*r));
	r->cur_start = now;
	r->boot_until = add_sat(now, (uint64_t)SL_LS_RING_SLOTS * SL_LS_RING_SLOT_NS);
}

bool sl_ls_ring_bootstrapping(const struct sl_ls_ring *r, uint64_t now)
{
	return now < r->boot_until;
}

bool sl_ls_ring_add(struct sl_ls_ring *r, uint64_t now, double tokens)
{
	uint64_t adv = slots_since(r->cur_start, now, SL_LS_RING_SLOT_NS);

	if (adv > SL_LS_RING_SLOTS) {
		sl_ls_ring_init(r, now); /* the whole window is stale: bootstrap again */
	} else if (adv) {
		for (uint64_t i = 0; i < adv; i++) {
			r->cur = (r->cur + 1) % RING_N;
			r->slot[r->cur] = 0;
		}
		r->cur_start += adv * SL_LS_RING_SLOT_NS;
	}
	if (tokens > 0)
		r->slot[r->cur] += tokens;
	return sl_ls_ring_bootstrapping(r, now);
}

double sl_ls_ring_rate(const struct sl_ls_ring *r, uint64_t now)
{
	uint64_t adv = slots_since(r->cur_start, now, SL_LS_RING_SLOT_NS);

	return win_sum(r->slot, RING_N, r->cur, adv, 1, SL_LS_RING_SLOTS) /
	       ((double)SL_LS_RING_SLOTS * SL_LS_RING_SLOT_NS / SL_LS_NS_PER_S);
}

/* ---- token bucket ---------------------------------------------------------------- */

void sl_ls_bucket_init(struct sl_ls_bucket *b, uint64_t now)
{
	memset(b, 0, sizeof(*b));
	b->last_ns = now;
}

void sl_ls_bucket_advance(struct sl_ls_bucket *b, uint64_t now)
{
	if (now <= b->last_ns)
		return;
	if (b->fill > 0) {
		b->available += (double)(now - b->last_ns) / 1e9 * b->fill;
		if (b->available > b->capacity)
			b->available = b->capacity;
	}
	b->last_ns = now;
}

void sl_ls_bucket_set_fill(struct sl_ls_bucket *b, uint64_t now, double fill)
{
	sl_ls_bucket_advance(b, now);
	if (!(fill > 0) || !isfinite(fill))
		fill = 0; /* callers never pass +inf (that is pass-through) */
	b->fill = fill;
	b->capacity = fill;
	if (b->available > b->capacity)
		b->available = b->capacity;
}

bool sl_ls_bucket_take_if_available(struct sl_ls_bucket *b, uint64_t now, double tokens)
{
	sl_ls_bucket_advance(b, now);
	if (b->available > tokens) {
		b->available -= tokens;
		return true;
	}
	return false;
}

enum sl_ls_reserve sl_ls_bucket_reserve(struct sl_ls_bucket *b, uint64_t now, double tokens,
					uint64_t timeout_ns, uint64_t *wait_ns)
{
	double wait_s, w;
	uint64_t wns;

	sl_ls_bucket_advance(b, now);
	if (wait_ns)
		*wait_ns = 0;
	if (!(b->fill > 0))
		return SL_LS_RESERVE_REJECT;
	b->available -= tokens;
	wait_s = b->available < 0 ? -b->available / b->fill : 0;
	w = ceil(wait_s * 1e9);
	wns = w >= (double)WAIT_CAP ? WAIT_CAP : (uint64_t)w;
	if (wait_ns)
		*wait_ns = wns;
	if (timeout_ns != SL_LS_NO_TIMEOUT && (double)timeout_ns < wait_s * 1e9) {
		b->available += tokens;
		return SL_LS_RESERVE_REJECT;
	}
	return wns ? SL_LS_RESERVE_WAIT : SL_LS_RESERVE_NOW;
}

void sl_ls_bucket_refund(struct sl_ls_bucket *b, double tokens)
{
	b->available += tokens;
	if (b->available > b->capacity)
		b->available = b->capacity;
}

/* ---- latency estimate ------------------------------------------------------------ */

void ls_lat_init(struct lat_win *w, uint64_t now)
{
	memset(w, 0, sizeof(*w));
	w->cur_start = now;
}

void ls_lat_add(struct lat_win *w, uint64_t now, double ms)
{
	uint64_t adv = slots_since(w->cur_start, now, SL_LS_LAT_SLOT_NS);

	if (adv >= SL_LS_LAT_SLOTS) {
		ls_lat_init(w, now);
	} else if (adv) {
		for (uint64_t i = 0; i < adv; i++) {
			w->cur = (w->cur + 1) % SL_LS_LAT_SLOTS;
			w->sum[w->cur] = 0;
			w->cnt[w->cur] = 0;
		}
		w->cur_start += adv * SL_LS_LAT_SLOT_NS;
	}
	w->sum[w->cur] += ms;
	w->cnt[w->cur] += 1;
}

double ls_lat_mean(const struct lat_win *w, uint64_t now)
{
	uint64_t adv = slots_since(w->cur_start, now, SL_LS_LAT_SLOT_NS);
	double c = win_sum(w->cnt, SL_LS_LAT_SLOTS, w->cur, adv, 0, SL_LS_LAT_SLOTS - 1);

	if (!(c > 0))
		return NAN;
	return win_sum(w->sum, SL_LS_LAT_SLOTS, w->cur, adv, 0, SL_LS_LAT_SLOTS - 1) / c;
}
