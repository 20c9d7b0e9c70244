// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* sluicectl status: what the data path is doing, read from pinned maps. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl/ctl.h"
#include "ctl/daemon_paths.h"
#include "ctl/options.h"
#include "dataplane/attachments.h"
#include "engine/tx_path.h"
#include "lib/json_out.h"

struct status_level {
	unsigned slot;
	struct sluice_level cfg;
	struct sluice_seats seats;
	struct sluice_level_stats st;
};

struct status {
	struct sluice_settings cfg;
	struct sluice_heartbeat hb;
	struct sluice_stats gs;
	long long heartbeat_age_ms; /* -1: never written */
	bool stale;        /* the failsafe decides */
	bool undispatched; /* nobody dispatches: deferral is off */
	struct status_level levels[SLUICE_MAX_LEVELS];
	uint32_t xdp_prog_id;                 /* the pinned program's, 0: none */
	struct sl_xdp_attachment ifaces[64]; /* where it is attached */
	size_t n_ifaces;
	/* How each protected interface's refusals leave (sl_ifaces). */
	struct status_refusals {
		uint32_t ifindex;
		struct sluice_iface e;
		struct sluice_if_stats st;
	} refusals[SLUICE_MAX_IFACES];
	size_t n_refusals;
	/* Refusals lost, by cause: the data path could not build its RST,
	 * a driver dropped it, the daemon could not send a held SYN's. */
	uint64_t lost_build, lost_tx_dropped, lost_daemon_send;
	unsigned n_levels;
	/* The policy gates that name a policy or still count slots held. */
	struct status_gate {
		unsigned index;
		struct sluice_policy_gate g;
	} gates[SLUICE_MAX_POLICIES];
	unsigned n_gates;
};

static const char *gate_mode_name(__u32 mode)
{
	return mode == SLUICE_POLICY_LIMIT ? "limit" : mode == SLUICE_POLICY_THROTTLE ? "throttle" : "open";
}

static const char *level_type_name(__u32 type)
{
	return type == SLUICE_LEVEL_EXEMPT ? "Exempt" :
	       type == SLUICE_LEVEL_LIMITED ? "Limited" : "Removed";
}

static const char *fail_mode_name(__u32 mode)
{
	return mode == SLUICE_FAIL_CLOSED ? "closed" : mode == SLUICE_FAIL_STATIC ? "static" : "open";
}

/* A heartbeat at hb_ns (0: never written) older than limit (0: none). */
static bool older_than(unsigned long long hb_ns, unsigned long long now, unsigned long long limit)
{
	return limit && (!hb_ns || (now > hb_ns && now - hb_ns > limit));
}

static void read_refusals(const struct sl_maps *m, struct status *s)
{
	uint32_t ifindex[SLUICE_MAX_IFACES];
	struct sluice_iface e[SLUICE_MAX_IFACES];
	size_t n = 0;

	s->lost_build = s->gs.rst_failed;
	if (sl_maps_ifaces(m, ifindex, e, SLUICE_MAX_IFACES, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		struct status_refusals *r = &s->refusals[s->n_refusals];

		r->ifindex = ifindex[i];
		r->e = e[i];
		if (sl_maps_if_stats(m, e[i].slot, &r->st))
			continue;
		s->lost_tx_dropped += r->st.tx_dropped + r->e.tx_dropped_driver;
		s->n_refusals++;
	}
}

static const struct status_refusals *refusals_of(const struct status *s, uint32_t ifindex)
{
	for (size_t i = 0; i < s->n_refusals; i++)
		if (s->refusals[i].ifindex == ifindex)
			return &s->refusals[i];
	return NULL;
}

static int read_status(const struct sl_maps *m, const char *pin_dir, struct status *s)
{
	unsigned long long now;
	int err;

	memset(s, 0, sizeof(*s));
	/* Not fatal: the levels are worth showing without it. */
	sl_xdp_attachments(pin_dir, &s->xdp_prog_id, s->ifaces,
			   sizeof(s->ifaces) / sizeof(s->ifaces[0]), &s->n_ifaces);
	if ((err = sl_maps_config(m, &s->cfg)) || (err = sl_maps_heartbeat(m, &s->hb)) ||
	    (err = sl_maps_global_stats(m, &s->gs)))
		return err;
	/* After the read: a clock read before it could be older than a beat
	 * written meanwhile, and the age would come out negative ("never"). */
	now = sl_mono_ns();
	if (now < s->hb.mono_ns)
		now = s->hb.mono_ns;
	s->heartbeat_age_ms = s->hb.mono_ns ? (long long)(now - s->hb.mono_ns) / 1000000 : -1;
	/* The same tests the data path makes (bpf/heartbeat.h older_than). */
	s->stale = older_than(s->hb.mono_ns, now, s->cfg.heartbeat_timeout_ns);
	s->undispatched = older_than(s->hb.mono_ns, now, s->cfg.dispatch_timeout_ns);
	for (unsigned slot = 0; slot < SLUICE_MAX_LEVELS; slot++) {
		struct status_level *l = &s->levels[s->n_levels];

		if ((err = sl_maps_level(m, slot, &l->cfg)))
			return err;
		if (!l->cfg.name[0])
			continue; /* never used */
		l->cfg.name[SLUICE_LEVEL_NAME_LEN - 1] = '\0';
		l->slot = slot;
		if ((err = sl_maps_seats(m, slot, &l->seats)) ||
		    (err = sl_maps_level_stats(m, slot, &l->st)))
			return err;
		/* A removed level is shown while it still holds seats. */
		s->lost_daemon_send += l->seats.reset_failed;
		if (l->cfg.type == SLUICE_LEVEL_UNUSED && !l->seats.seats_in_use)
			continue;
		s->n_levels++;
	}
	read_refusals(m, s);
	for (unsigned i = 0; i < SLUICE_MAX_POLICIES; i++) {
		struct status_gate *g = &s->gates[s->n_gates];

		if ((err = sl_maps_policy_gate(m, i, &g->g)))
			return err;
		g->g.policy[sizeof(g->g.policy) - 1] = '\0';
		if (!g->g.policy[0] && !g->g.slots_held)
			continue;
		g->index = i;
		s->n_gates++;
	}
	return 0;
}

/* Where the level's connections take their seats (sluice_abi.h). */
static const char *seats_at_name(const struct sluice_level *l)
{
	if (l->type != SLUICE_LEVEL_LIMITED)
		return "syn";
	return l->flags & SLUICE_LVL_SEAT_AT_ACK ? "ack" : "syn";
}

static void print_refusals_json(struct json_out *jo, const struct status_refusals *r)
{
	if (!r) {
		jo_null(jo, "refusals");
		return;
	}
	jo_obj_begin(jo, "refusals");
	jo_str(jo, "path", r->e.flags & SLUICE_IF_RST_HANDOFF ? "handoff" : "xdp_tx");
	jo_str(jo, "reason", sl_tx_reason_name(r->e.reason));
	jo_bool(jo, "handoff_ready", r->e.flags & SLUICE_IF_HANDOFF_READY);
	jo_str(jo, "handoff_via", !(r->e.flags & SLUICE_IF_HANDOFF_READY) ? "none" :
				  r->e.flags & SLUICE_IF_HANDOFF_CLSACT ? "clsact" : "tcx");
	jo_u64(jo, "xdp_features", r->e.xdp_features);
	jo_u64(jo, "rst_xdp_tx", r->st.rst_xdp_tx);
	jo_u64(jo, "rst_handoff", r->st.rst_handoff);
	jo_u64(jo, "handoff_out", r->st.handoff_out);
	jo_u64(jo, "handoff_in", r->st.handoff_in);
	jo_u64(jo, "handoff_foreign", r->st.handoff_foreign);
	/* Lost: as the kernel's tracepoints saw them, and as only the
	 * driver's own counters did (virtio_net). */
	jo_u64(jo, "tx_dropped", r->st.tx_dropped);
	jo_u64(jo, "tx_dropped_driver", r->e.tx_dropped_driver);
	jo_obj_end(jo);
}

static void print_json(const struct status *s, const char *pin_dir)
{
	struct json_out jo;

	jo_init(&jo, stdout, false);
	jo_obj_begin(&jo, NULL);
	jo_str(&jo, "pin_dir", pin_dir);
	jo_bool(&jo, "configured", s->cfg.flags & SLUICE_CFG_ACTIVE);
	if (s->heartbeat_age_ms >= 0)
		jo_i64(&jo, "heartbeat_age_ms", s->heartbeat_age_ms);
	else
		jo_null(&jo, "heartbeat_age_ms");
	jo_u64(&jo, "daemon_pid", s->hb.pid);
	jo_bool(&jo, "dispatching", !s->undispatched);
	jo_u64(&jo, "dispatch_timeout_ms", s->cfg.dispatch_timeout_ns / 1000000);
	jo_bool(&jo, "shadow", s->cfg.flags & SLUICE_CFG_SHADOW);
	jo_u64(&jo, "xdp_prog_id", s->xdp_prog_id);
	jo_arr_begin(&jo, "interfaces");
	for (size_t i = 0; i < s->n_ifaces; i++) {
		jo_obj_begin(&jo, NULL);
		jo_str(&jo, "name", s->ifaces[i].ifname);
		jo_u64(&jo, "ifindex", (uint64_t)s->ifaces[i].ifindex);
		jo_str(&jo, "xdp_mode", s->ifaces[i].mode);
		jo_u64(&jo, "prog_id", s->ifaces[i].prog_id);
		print_refusals_json(&jo, refusals_of(s, (uint32_t)s->ifaces[i].ifindex));
		jo_obj_end(&jo);
	}
	jo_arr_end(&jo);
	jo_obj_begin(&jo, "classification");
	jo_u64(&jo, "generation", s->cfg.generation & 1);
	{
		char digest[24];

		snprintf(digest, sizeof(digest), "%016llx", (unsigned long long)s->cfg.class_digest);
		jo_str(&jo, "digest", digest);
	}
	jo_u64(&jo, "masks", s->cfg.masks);
	jo_obj_end(&jo);
	jo_obj_begin(&jo, "failsafe");
	jo_str(&jo, "mode", fail_mode_name(s->cfg.fail_mode));
	jo_bool(&jo, "active", s->stale);
	jo_u64(&jo, "heartbeat_timeout_ms", s->cfg.heartbeat_timeout_ns / 1000000);
	jo_u64(&jo, "opened", s->gs.failsafe_open);
	jo_u64(&jo, "closed", s->gs.failsafe_closed);
	jo_u64(&jo, "static", s->gs.failsafe_static);
	jo_u64(&jo, "static_sweeps", s->gs.static_sweeps);
	jo_u64(&jo, "static_expired", s->gs.static_expired);
	jo_u64(&jo, "static_walks", s->gs.static_walks);
	jo_obj_end(&jo);
	jo_arr_begin(&jo, "levels");
	for (unsigned i = 0; i < s->n_levels; i++) {
		const struct status_level *l = &s->levels[i];

		jo_obj_begin(&jo, NULL);
		jo_str(&jo, "name", l->cfg.name);
		jo_str(&jo, "type", level_type_name(l->cfg.type));
		jo_u64(&jo, "seats_in_use", l->seats.seats_in_use);
		jo_u64(&jo, "limit", l->cfg.seat_limit);
		jo_u64(&jo, "admitted", l->st.admitted + l->seats.reinjected);
		jo_u64(&jo, "admitted_inline", l->st.admitted);
		jo_u64(&jo, "reinjected", l->seats.reinjected);
		jo_u64(&jo, "deferred", l->st.deferred);
		jo_u64(&jo, "rejected", l->st.rejected + l->seats.reset_held);
		jo_u64(&jo, "reset_held", l->seats.reset_held);
		jo_u64(&jo, "reset_failed", l->seats.reset_failed);
		jo_u64(&jo, "syns", l->st.syns);
		jo_u64(&jo, "retransmits", l->st.retransmits);
		jo_u64(&jo, "closed", l->st.closed);
		jo_u64(&jo, "expired", l->seats.expired);
		jo_u64(&jo, "waiting", l->seats.waiting);
		jo_u64(&jo, "held_syns", l->seats.held_syns);
		jo_u64(&jo, "held_bytes", l->seats.held_bytes);
		jo_u64(&jo, "failsafe", l->st.failsafe);
		jo_u64(&jo, "shadow_passed", l->st.shadow_passed);
		jo_str(&jo, "seats_at", seats_at_name(&l->cfg));
		jo_bool(&jo, "acks_watched", l->cfg.flags & SLUICE_LVL_ACK_WATCH);
		jo_u64(&jo, "unseated_syns", l->st.unseated);
		jo_u64(&jo, "acks_proved", l->st.acks_proved);
		jo_obj_end(&jo);
	}
	jo_arr_end(&jo);
	jo_arr_begin(&jo, "policy_gates");
	for (unsigned i = 0; i < s->n_gates; i++) {
		const struct status_gate *g = &s->gates[i];

		jo_obj_begin(&jo, NULL);
		jo_u64(&jo, "index", g->index);
		if (g->g.policy[0])
			jo_str(&jo, "policy", g->g.policy);
		else
			jo_null(&jo, "policy");
		jo_str(&jo, "mode", gate_mode_name(g->g.mode));
		jo_i64(&jo, "slots_held", g->g.slots_held);
		if (g->g.mode == SLUICE_POLICY_LIMIT)
			jo_i64(&jo, "slot_limit", g->g.slot_limit);
		else
			jo_null(&jo, "slot_limit");
		jo_u64(&jo, "waiting", g->g.waiting);
		jo_double(&jo, "credit_tokens", (double)g->g.credit_mtok / SLUICE_MTOK);
		jo_obj_end(&jo);
	}
	jo_arr_end(&jo);
	jo_obj_begin(&jo, "stats");
	jo_u64(&jo, "syns", s->gs.syns);
	jo_u64(&jo, "unprotected", s->gs.unprotected);
	jo_u64(&jo, "malformed", s->gs.malformed);
	jo_u64(&jo, "fragments", s->gs.fragments);
	jo_u64(&jo, "conn_table_full", s->gs.conn_table_full);
	jo_u64(&jo, "events_lost", s->gs.events_lost);
	/* Every refusal that did not reach its client, whatever the cause. */
	jo_u64(&jo, "rst_failed", s->lost_build + s->lost_tx_dropped + s->lost_daemon_send);
	jo_obj_begin(&jo, "rst_failed_by_cause");
	jo_u64(&jo, "build", s->lost_build);
	jo_u64(&jo, "xdp_tx_dropped", s->lost_tx_dropped);
	jo_u64(&jo, "daemon_send", s->lost_daemon_send);
	jo_obj_end(&jo);
	jo_u64(&jo, "established", s->gs.established);
	jo_u64(&jo, "released", s->gs.released);
	jo_u64(&jo, "tickets_admitted", s->gs.tickets_admitted);
	jo_u64(&jo, "tickets_rejected", s->gs.tickets_rejected);
	jo_u64(&jo, "policy_deferred", s->gs.policy_deferred);
	jo_u64(&jo, "shadow_passed", s->gs.shadow_passed);
	jo_u64(&jo, "undispatched", s->gs.undispatched);
	jo_u64(&jo, "frames_copied", s->gs.frames_copied);
	jo_u64(&jo, "frames_too_long", s->gs.frames_too_long);
	jo_u64(&jo, "rst_released", s->gs.rst_released);
	jo_u64(&jo, "icmp_released", s->gs.icmp_released);
	jo_u64(&jo, "acks_unproved", s->gs.acks_unproved);
	jo_u64(&jo, "closes_quiet", s->gs.closes_quiet);
	jo_u64(&jo, "martians", s->gs.martians);
	jo_obj_end(&jo);
	jo_obj_end(&jo);
	jo_finish(&jo);
}

static void print_table(const struct status *s, const char *pin_dir)
{
	char hb[64];

	if (s->heartbeat_age_ms < 0)
		snprintf(hb, sizeof(hb), "never");
	else
		snprintf(hb, sizeof(hb), "%lld.%03llds ago", s->heartbeat_age_ms / 1000,
			 s->heartbeat_age_ms % 1000);
	printf("sluice  %s  daemon pid %u  heartbeat %s  fail mode %s%s%s\n", pin_dir, s->hb.pid, hb,
	       fail_mode_name(s->cfg.fail_mode),
	       s->stale ? "  FAILSAFE ACTIVE (heartbeat stale)" :
	       s->undispatched ? "  NOT DISPATCHING (daemon silent: nothing deferred)" : "",
	       s->cfg.flags & SLUICE_CFG_SHADOW ? "  SHADOW MODE (verdicts counted, not enforced)" : "");
	printf("interfaces ");
	for (size_t i = 0; i < s->n_ifaces; i++)
		printf(" %s (%s, prog %u)%s", s->ifaces[i].ifname, s->ifaces[i].mode, s->ifaces[i].prog_id,
		       i + 1 < s->n_ifaces ? "," : "");
	if (!s->n_ifaces)
		printf(" none: XDP is not attached%s", s->xdp_prog_id ? "" : " (no program pinned)");
	printf("\n");
	for (size_t i = 0; i < s->n_ifaces; i++) {
		const struct status_refusals *r = refusals_of(s, (uint32_t)s->ifaces[i].ifindex);

		if (!r)
			continue;
		printf("  %s refusals by %s (%s%s): xdp_tx %llu  handoff %llu  held SYNs in %llu  "
		       "lost %llu\n", s->ifaces[i].ifname,
		       r->e.flags & SLUICE_IF_RST_HANDOFF ? "tc hand-off" : "XDP_TX",
		       sl_tx_reason_name(r->e.reason),
		       !(r->e.flags & SLUICE_IF_HANDOFF_READY) ? ", no hand-off" :
		       r->e.flags & SLUICE_IF_HANDOFF_CLSACT ? ", hand-off on clsact" : "",
		       (unsigned long long)r->st.rst_xdp_tx, (unsigned long long)r->st.rst_handoff,
		       (unsigned long long)r->st.handoff_in,
		       (unsigned long long)(r->st.tx_dropped + r->e.tx_dropped_driver));
	}
	printf("%-24s %-8s %9s %7s %10s %10s %10s %8s %-4s\n", "LEVEL", "TYPE", "SEATS", "LIMIT",
	       "ADMITTED", "DEFERRED", "REJECTED", "EXPIRED", "AT");
	for (unsigned i = 0; i < s->n_levels; i++) {
		const struct status_level *l = &s->levels[i];
		char limit[16];

		if (l->cfg.type == SLUICE_LEVEL_EXEMPT)
			snprintf(limit, sizeof(limit), "-");
		else
			snprintf(limit, sizeof(limit), "%u", l->cfg.seat_limit);
		printf("%-24s %-8s %9llu %7s %10llu %10llu %10llu %8llu %-4s\n", l->cfg.name,
		       level_type_name(l->cfg.type), (unsigned long long)l->seats.seats_in_use,
		       limit, (unsigned long long)(l->st.admitted + l->seats.reinjected),
		       (unsigned long long)l->st.deferred,
		       (unsigned long long)(l->st.rejected + l->seats.reset_held),
		       (unsigned long long)l->seats.expired, seats_at_name(&l->cfg));
	}
	if (!s->n_levels)
		printf("(no levels configured)\n");
	if (s->n_gates)
		printf("%-24s %4s %-8s %9s %9s %8s\n", "POLICY", "GATE", "MODE", "HELD", "LIMIT", "WAITING");
	for (unsigned i = 0; i < s->n_gates; i++) {
		const struct status_gate *g = &s->gates[i];
		char limit[24];

		if (g->g.mode != SLUICE_POLICY_LIMIT)
			snprintf(limit, sizeof(limit), "-");
		else if (g->g.slot_limit >= SLUICE_SLOT_LIMIT_PASS)
			snprintf(limit, sizeof(limit), "none");
		else
			snprintf(limit, sizeof(limit), "%lld", (long long)g->g.slot_limit);
		printf("%-24s %4u %-8s %9lld %9s %8u\n", g->g.policy[0] ? g->g.policy : "(removed)", g->index,
		       gate_mode_name(g->g.mode), (long long)g->g.slots_held, limit, g->g.waiting);
	}
	printf("syns %llu  unprotected %llu  malformed %llu  fragments %llu  failsafe open/closed/static %llu/%llu/%llu"
	       "  table full %llu  events lost %llu  refusals lost %llu\n",
	       (unsigned long long)s->gs.syns, (unsigned long long)s->gs.unprotected,
	       (unsigned long long)s->gs.malformed, (unsigned long long)s->gs.fragments,
	       (unsigned long long)s->gs.failsafe_open, (unsigned long long)s->gs.failsafe_closed,
	       (unsigned long long)s->gs.failsafe_static,
	       (unsigned long long)s->gs.conn_table_full, (unsigned long long)s->gs.events_lost,
	       (unsigned long long)(s->lost_build + s->lost_tx_dropped + s->lost_daemon_send));
}

struct status_opts {
	const char *config;
	const char *pin_dir;
	bool json;
	double watch;
	uint32_t count;
};

static const struct sl_opt status_options[] = {
	CTL_CONFIG(struct status_opts, config),
	CTL_PIN_DIR(struct status_opts, pin_dir),
	CTL_JSON(struct status_opts, json, "one JSON object (with --watch: one per line and interval)"),
	SL_ROW_NUMBER(SL_OPT_DOUBLE, 'w', "watch", struct status_opts, watch, "SECONDS", 0.01, 86400,
		   "redraw every SECONDS until interrupted (live view)", 0),
	SL_ROW_NUMBER(SL_OPT_U32, 0, "count", struct status_opts, count, "N", 1, UINT32_MAX,
		   "with --watch, stop after N updates", 0),
	SL_ROW_END,
};

static const struct sl_opt_doc status_doc = {
	.prog = "sluicectl", .command = "status",
	.description =
		"Per priority level: seats in use and limit, connections admitted, deferred\n"
		"(SYN dropped, client retransmits) and rejected (RST); the daemon heartbeat\n"
		"and the failsafe; per policy gate (the scheduling policy that runs it; a\n"
		"removed one, mode open, while its connections still hold slots): its mode,\n"
		"slots held against its limit in flight (mode sluice) and flows waiting.\n"
		"Reads the pinned maps; the daemon need not run.\n\n"
		"A heartbeat older than the dispatch timeout (3 ticks) means no daemon\n"
		"dispatches: the data path stops deferring (admits within the limit, the\n"
		"client's retransmit retries over it: NOT DISPATCHING, \"dispatching\": false).\n"
		"Older than heartbeatTimeout, the failsafe decides (FAILSAFE ACTIVE).\n",
};

int ctl_status(int argc, char **argv)
{
	struct status_opts o = {0};
	struct sl_opt_parsed parsed;
	struct sl_maps m;
	struct status s;
	int err;

	err = ctl_parse_options(&status_doc, status_options, &o, argc, argv, &parsed);
	if (err != CTL_PARSE_RUN)
		return err;
	if (ctl_daemon_paths("status", o.config, &o.pin_dir, NULL))
		return CTL_FAIL;
	if (ctl_open_maps(o.pin_dir, &m))
		return CTL_FAIL;
	for (long n = 0;; n++) {
		err = read_status(&m, o.pin_dir, &s);
		if (err) {
			fprintf(stderr, "sluicectl status: reading maps in %s: %s\n", o.pin_dir, strerror(-err));
			break;
		}
		if (o.watch && !o.json && isatty(STDOUT_FILENO))
			printf("\033[H\033[2J");
		if (o.json) {
			/* Compact (one object per line with --watch: JSON Lines);
			 * -p indents, as for every command. */
			print_json(&s, o.pin_dir);
		} else {
			print_table(&s, o.pin_dir);
		}
		fflush(stdout);
		if (!o.watch || (o.count && n + 1 >= o.count))
			break;
		if (!o.json && !isatty(STDOUT_FILENO))
			printf("\n");
		usleep((useconds_t)(o.watch * 1e6));
	}
	sl_maps_close(&m);
	return err ? CTL_FAIL : CTL_OK;
}
