// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "daemon/halfopen_rt.h"

#include <string.h>

#include "dataplane/pinned_maps.h"
#include "dataplane/ledger.h"
#include "dataplane/settings.h"
#include "lib/log.h"
#include "lib/prom.h"

void sl_halfopen_rt_init(struct sl_halfopen_rt *rt, const struct sl_server_cfg *srv)
{
	memset(rt, 0, sizeof(*rt));
	rt->timeout_ns = srv->handshake_timeout_ns;
	for (unsigned slot = 0; slot < SLUICE_MAX_LEVELS; slot++)
		rt->level_timeout_ns[slot] = rt->timeout_ns;
}

static struct sl_seat_policy policy_of(const struct sl_server_cfg *srv)
{
	return (struct sl_seat_policy){
		.seat_at = srv->half_open.seat_at,
		.engage_after = srv->half_open.engage_after,
		.hold_ns = srv->half_open.hold_ns,
	};
}

static void measure(struct sl_halfopen_rt *rt, struct sl_dataplane *dp,
		    const struct sl_server_cfg *srv)
{
	uint64_t hist[SLUICE_HS_BUCKETS];

	if (!sl_maps_hs_hist(&dp->maps, hist))
		sl_hs_meter_push(&rt->meter, hist);
	rt->p99_ns = sl_hs_meter_p99_ns(&rt->meter, &rt->samples);
	rt->timeout_ns = sl_halfopen_timeout_ns(rt->p99_ns, srv->half_open.min_timeout_ns,
						srv->handshake_timeout_ns);
}

int sl_halfopen_rt_step(struct sl_halfopen_rt *rt, struct sl_dataplane *dp,
			const struct sl_server_cfg *srv, uint64_t now_ns)
{
	struct sl_seat_policy pol = policy_of(srv);
	uint32_t watched = 0;
	int moved = 0;

	measure(rt, dp, srv);
	for (unsigned slot = 0; slot < SLUICE_MAX_LEVELS; slot++) {
		struct sluice_level_stats st;
		struct sluice_seats seats;
		struct sluice_level lvl;
		struct sl_seat_counters c;
		uint32_t flags = 0;

		if (sl_maps_level(&dp->maps, slot, &lvl) || lvl.type != SLUICE_LEVEL_LIMITED ||
		    sl_maps_level_stats(&dp->maps, slot, &st)) {
			/* Exempt, unused or unreadable: seats at the SYN, and a
			 * slot that comes back starts afresh. */
			memset(&rt->mode[slot], 0, sizeof(rt->mode[slot]));
			rt->flags[slot] = 0;
			continue;
		}
		memcpy(rt->name[slot], lvl.name, sizeof(rt->name[slot]));
		sl_seats_read(dp, slot, &seats);
		c.expired = seats.expired;
		c.unseated = st.unseated;
		c.proved = st.acks_proved;
		c.lingering = rt->lingering[slot];
		flags = sl_seat_mode_step(&rt->mode[slot], &pol, now_ns, &c);
		if (flags != lvl.flags) {
			int err = sl_level_write_flags(dp, slot, flags);

			if (err)
				pr_warn("level %.*s: cannot write its seating: %s", SLUICE_LEVEL_NAME_LEN,
					lvl.name, strerror(-err));
			if (!err && (flags & ~lvl.flags & SLUICE_LVL_SEAT_AT_ACK))
				moved++;
			if (!err && ((flags ^ lvl.flags) & SLUICE_LVL_SEAT_AT_ACK))
				pr_info("level %.*s: seats at the %s (%llu unfinished handshakes in %d s)",
					SLUICE_LEVEL_NAME_LEN, lvl.name,
					flags & SLUICE_LVL_SEAT_AT_ACK ? "final ACK" : "SYN again",
					(unsigned long long)sl_seat_mode_pressure(&rt->mode[slot]),
					SL_PRESSURE_WINDOW);
		}
		rt->flags[slot] = flags;
		if (flags & SLUICE_LVL_ACK_WATCH)
			watched++;
	}
	for (unsigned slot = 0; slot < SLUICE_MAX_LEVELS; slot++) {
		uint64_t t = rt->timeout_ns;

		if ((rt->flags[slot] & SLUICE_LVL_ACK_WATCH) && srv->half_open.min_timeout_ns < t)
			t = srv->half_open.min_timeout_ns;
		rt->level_timeout_ns[slot] = t;
	}
	/* Watch count after the levels: a level's ACKs are never watched by
	 * its flag alone while the global count says none (no stale gap). */
	if (sl_settings_write_ack_watch(dp, watched))
		pr_warn("cannot write the watched-ACK level count");
	return rt->timeout_ns;
}

uint32_t sl_halfopen_rt_flags(const struct sl_halfopen_rt *rt, unsigned slot)
{
	return slot < SLUICE_MAX_LEVELS ? rt->flags[slot] : 0;
}

void sl_halfopen_rt_metrics(const struct sl_halfopen_rt *rt, FILE *f)
{
	sl_prom_family(f, "halfopen_timeout_seconds", SL_PROM_GAUGE,
		       "How long a seat waits for its handshake: 4 x the p99 handshake, within "
		       "halfOpen.minTimeout and handshakeTimeout.");
	sl_prom_sample(f, "halfopen_timeout_seconds", (double)rt->timeout_ns / 1e9, NULL);
	sl_prom_family(f, "handshake_p99_seconds", SL_PROM_GAUGE,
		       "The 99th percentile handshake of the last 60 s (its log2 bucket's upper "
		       "bound; 0 with too few).");
	sl_prom_sample(f, "handshake_p99_seconds", (double)rt->p99_ns / 1e9, NULL);
	sl_prom_single(f, "handshake_samples", SL_PROM_GAUGE,
		       "Handshakes measured in the last 60 s (the time-out needs 20).", rt->samples);
	sl_prom_family(f, "level_seat_at_ack", SL_PROM_GAUGE,
		       "1 while the level seats its connections at the handshake's final ACK.");
	for (unsigned slot = 0; slot < SLUICE_MAX_LEVELS; slot++)
		if (rt->name[slot][0])
			sl_prom_sample(f, "level_seat_at_ack",
				       !!(rt->flags[slot] & SLUICE_LVL_SEAT_AT_ACK), "priority_level",
				       rt->name[slot], NULL);
	sl_prom_family(f, "level_unfinished_handshakes_total", SL_PROM_COUNTER,
		       "Half-open seats that timed out, and unseated SYNs no proving ACK followed.");
	for (unsigned slot = 0; slot < SLUICE_MAX_LEVELS; slot++)
		if (rt->name[slot][0])
			sl_prom_sample_u64(f, "level_unfinished_handshakes_total",
					   rt->mode[slot].unfinished_total, "priority_level",
					   rt->name[slot], NULL);
	sl_prom_family(f, "level_seat_at_ack_engaged_total", SL_PROM_COUNTER,
		       "Times the level moved its seats to the final ACK.");
	for (unsigned slot = 0; slot < SLUICE_MAX_LEVELS; slot++)
		if (rt->name[slot][0])
			sl_prom_sample_u64(f, "level_seat_at_ack_engaged_total", rt->mode[slot].engaged,
					   "priority_level", rt->name[slot], NULL);
}
