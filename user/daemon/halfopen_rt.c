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

void sl_halfopen_rt_watch_sight(struct sl_halfopen_rt *rt, const char *path)
{
	memset(&rt->sight, 0, sizeof(rt->sight));
	rt->scope = path;
}

/* Whether sock_ops on the cgroup given sees the admitted connections: said
 * once when it stops, once when it sees again. */
static void judge_sight(struct sl_halfopen_rt *rt, struct sl_dataplane *dp,
			struct sl_sight_counters *c)
{
	const struct sl_sight_counters *w = &rt->sight.window;
	struct sluice_stats gs;

	if (!rt->scope || sl_maps_global_stats(&dp->maps, &gs))
		return;
	c->established = gs.established;
	switch (sl_sight_step(&rt->sight, c)) {
	case SL_SIGHT_LOST:
		pr_warn("event=sockops_blind cgroup=%s expired=%llu proved=%llu established=0 window_s=%d "
			"(sock_ops sees none of the connections XDP admits: their seats wait for the "
			"half-open time-out.  A socket belongs to the cgroup of the task that created "
			"it, an accepted one to its listener's: a service started elsewhere and moved "
			"into this cgroup, or one whose listener systemd created (socket activation), "
			"is not in it.  Give the cgroup that created the listener, or none (the whole "
			"host)%s)",
			rt->scope, (unsigned long long)w->expired, (unsigned long long)w->proved,
			SL_SIGHT_WINDOW,
			w->proved ? "" : ".  Or a SYN flood that completes no handshake");
		break;
	case SL_SIGHT_REGAINED:
		pr_info("event=sockops_sees cgroup=%s (a connection admitted was seen established again)",
			rt->scope);
		break;
	default:
		break;
	}
}

int sl_halfopen_rt_step(struct sl_halfopen_rt *rt, struct sl_dataplane *dp,
			const struct sl_server_cfg *srv, uint64_t now_ns)
{
	struct sl_seat_policy pol = policy_of(srv);
	struct sl_sight_counters sight = {0};
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
		sight.expired += c.expired;
		sight.proved += c.proved;
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
	judge_sight(rt, dp, &sight);
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
	if (rt->scope)
		sl_prom_single(f, "sockops_blind", SL_PROM_GAUGE,
			       "1 while sock_ops, on the cgroup given, has seen none of the connections "
			       "admitted established for 10 s while their handshakes expired or ended.",
			       rt->sight.blind);
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
