// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "engine/stall.h"

#include <math.h>
#include <string.h>

/* The moving average's weight: about the last 16 closes. */
#define LIFETIME_WEIGHT (1.0 / 16)

void sl_stall_init(struct sl_stall *s, uint64_t now)
{
	memset(s, 0, sizeof(*s));
	s->progress_ns = now;
	s->first_floor_ns = SL_STALL_MIN_NS;
}

void sl_stall_set_retransmit_waits(struct sl_stall *s, bool waits)
{
	s->first_floor_ns = waits ? SL_STALL_RETRANSMIT_NS : SL_STALL_MIN_NS;
}

void sl_stall_closed(struct sl_stall *s, uint64_t now)
{
	s->progress_ns = now;
	s->stalled = false;
}

void sl_stall_lifetimes(struct sl_stall *s, uint64_t n, double mean_log)
{
	if (!n)
		return;
	if (!s->have_lifetime) {
		s->log_lifetime = mean_log;
		s->have_lifetime = true;
		return;
	}
	/* n steps of the moving average, each toward a sample of the mean:
	 * the old value keeps (1 - w)^n of its weight. */
	s->log_lifetime = mean_log + pow(1 - LIFETIME_WEIGHT, (double)n) * (s->log_lifetime - mean_log);
}

uint64_t sl_stall_after_ns(const struct sl_stall *s)
{
	double ns;

	if (!s->have_lifetime)
		return 0;
	if (s->stalled)
		return SL_STALL_MIN_NS;
	ns = SL_STALL_LIFETIMES * exp(s->log_lifetime);
	if (ns < (double)s->first_floor_ns)
		return s->first_floor_ns;
	return ns > 1e18 ? (uint64_t)1e18 : (uint64_t)ns;
}

void sl_stall_observe(struct sl_stall *s, uint64_t now, bool full, bool waiting)
{
	bool blocked = full && waiting;

	/* A close long before the level became blocked is no evidence
	 * against it: the clock starts when it does. */
	if (blocked && !s->blocked && now > s->progress_ns)
		s->progress_ns = now;
	s->blocked = blocked;
	if (!full)
		s->stalled = false;
}

uint64_t sl_stall_due_ns(const struct sl_stall *s)
{
	uint64_t after = sl_stall_after_ns(s);

	return s->blocked && after ? s->progress_ns + after : UINT64_MAX;
}

bool sl_stall_due(struct sl_stall *s, uint64_t now)
{
	uint64_t after = sl_stall_after_ns(s);

	if (!s->blocked || !after || now < s->progress_ns || now - s->progress_ns < after)
		return false;
	s->progress_ns = now;
	s->stalled = true;
	return true;
}

bool sl_stall_stalled(const struct sl_stall *s)
{
	return s->stalled;
}
