// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* A fleet's seats for one priority level.  See fleet_share.h. */
#include "engine/fleet_share.h"

#include <errno.h>
#include <string.h>

#include "lib/lease_margin.h"


uint32_t sl_fleet_budget(const struct sl_fleet_member *m, size_t n, uint32_t own)
{
	uint32_t b = own;

	for (size_t i = 0; i < n; i++)
		if (m[i].live && m[i].budget && m[i].budget < b)
			b = m[i].budget;
	return b;
}

static uint64_t floors(const struct sl_fleet_member *m, size_t n)
{
	uint64_t f = 0;

	for (size_t i = 0; i < n; i++)
		f += m[i].floor;
	return f;
}

uint32_t sl_fleet_room(const struct sl_fleet_member *m, size_t n, uint32_t budget)
{
	uint64_t held = floors(m, n);

	for (size_t i = 0; i < n; i++)
		if (m[i].live)
			held += m[i].extra;
	return held >= budget ? 0 : (uint32_t)(budget - held);
}

/* Give each of the k members left (left[] their indexes, in the members'
 * order) an equal part of pool, the remainder one seat each to the first. */
static void spread(uint32_t *target, const size_t *left, size_t k, uint64_t pool)
{
	for (size_t j = 0; j < k; j++)
		target[left[j]] += (uint32_t)(pool / k + (j < pool % k));
}

int sl_fleet_targets(const struct sl_fleet_member *m, size_t n, uint32_t budget, uint32_t *target)
{
	uint64_t f, pool;
	size_t left[SL_FLEET_MAX_MEMBERS], live_idx[SL_FLEET_MAX_MEMBERS], k = 0, live = 0;

	if (n > SL_FLEET_MAX_MEMBERS)
		return -E2BIG;
	memset(target, 0, n * sizeof(*target));
	f = floors(m, n);
	if (f > budget)
		return -ERANGE;
	pool = budget - f;
	for (size_t i = 0; i < n; i++)
		if (m[i].live) {
			live_idx[live++] = i;
			if (m[i].wants > m[i].floor)
				left[k++] = i;
		}
	/* Water-filling: while the smallest unmet demand fits an equal part
	 * of what is left, it is met; then the rest split equally. */
	while (k && pool) {
		uint64_t part = pool / k;
		size_t small = 0;

		for (size_t j = 1; j < k; j++)
			if (m[left[j]].wants - m[left[j]].floor < m[left[small]].wants - m[left[small]].floor)
				small = j;
		if (m[left[small]].wants - m[left[small]].floor > part) {
			spread(target, left, k, pool);
			return 0;
		}
		target[left[small]] = m[left[small]].wants - m[left[small]].floor;
		pool -= target[left[small]];
		memmove(&left[small], &left[small + 1], (k - small - 1) * sizeof(left[0]));
		k--;
	}
	if (live)
		spread(target, live_idx, live, pool);
	return 0;
}

uint32_t sl_fleet_next_claim(uint32_t current, uint32_t target, uint32_t in_use_over_floor, uint32_t room)
{
	if (target > current)
		return target - current > room ? current + room : target;
	if (target < in_use_over_floor)
		target = in_use_over_floor < current ? in_use_over_floor : current;
	return target;
}

uint64_t sl_fleet_margin_ns(uint64_t lease_ttl_ns)
{
	return sl_lease_margin_ns(lease_ttl_ns);
}

uint64_t sl_fleet_grant_deadline_ns(uint64_t last_keepalive_sent_ns, uint64_t lease_ttl_ns,
				     uint64_t drain_ns)
{
	uint64_t give_up = sl_fleet_margin_ns(lease_ttl_ns) + drain_ns;

	return lease_ttl_ns > give_up ? last_keepalive_sent_ns + lease_ttl_ns - give_up : last_keepalive_sent_ns;
}
