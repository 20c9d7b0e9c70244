// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "engine/plan.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "engine/level_slots.h"

uint64_t sl_dispatch_timeout_ns(uint64_t tick_ns, uint64_t heartbeat_timeout_ns)
{
	uint64_t t = 3 * tick_ns;

	if (t < SL_DISPATCH_TIMEOUT_MIN_NS)
		t = SL_DISPATCH_TIMEOUT_MIN_NS;
	if (heartbeat_timeout_ns && t > heartbeat_timeout_ns)
		t = heartbeat_timeout_ns;
	return t;
}

static void plan_config(const struct sl_config *cfg, struct sluice_settings *c)
{
	memset(c, 0, sizeof(*c));
	c->heartbeat_timeout_ns = cfg->server.heartbeat_timeout_ns;
	c->dispatch_timeout_ns = sl_dispatch_timeout_ns(cfg->server.tick_ns,
							cfg->server.heartbeat_timeout_ns);
	c->fail_mode = cfg->server.fail_mode == SL_FAIL_CLOSED ? SLUICE_FAIL_CLOSED
		     : cfg->server.fail_mode == SL_FAIL_STATIC ? SLUICE_FAIL_STATIC : SLUICE_FAIL_OPEN;
	c->halfopen_timeout_ns = cfg->server.handshake_timeout_ns;
	c->events_per_sec = cfg->server.events_per_second;
	c->abi_version = SLUICE_ABI_VERSION;
	c->flags = SLUICE_CFG_ACTIVE | (cfg->server.shadow ? SLUICE_CFG_SHADOW : 0);
	if (!cfg->server.held_syns.max_bytes || !cfg->server.held_syns.max_bytes_per_level)
		c->flags |= SLUICE_CFG_NO_FRAMES;
}

/* quiescing_shares: the shares of levels removed from the configuration
 * that still hold connections; they stay in the sum, as a deleted APF
 * priority level's do until it is idle (apf_controller.go: sum_ncs over
 * every level, quiescing ones included). */
static int plan_limits(const struct sl_config *cfg, uint32_t quiescing_shares, struct sl_plan *plan)
{
	struct sl_limit_input in[SLUICE_MAX_LEVELS + 1];
	struct sl_level_limits out[SLUICE_MAX_LEVELS + 1];
	size_t n = cfg->n_levels;
	int err;

	if (!cfg->n_levels)
		return 0;
	for (size_t i = 0; i < cfg->n_levels; i++) {
		const struct sl_level_cfg *l = &cfg->levels[i];

		in[i].exempt = l->type == SL_LEVEL_EXEMPT;
		in[i].shares = (uint32_t)l->shares;
		in[i].lendable_percent = (uint32_t)l->lendable_percent;
		in[i].borrowing_limit_percent = l->borrowing_limit_percent;
	}
	if (quiescing_shares)
		in[n++] = (struct sl_limit_input){.shares = quiescing_shares, .borrowing_limit_percent = -1};
	err = sl_limits_compute(cfg->server.server_concurrency_limit, in, n, out);
	if (err)
		return err;
	for (size_t i = 0; i < cfg->n_levels; i++)
		plan->limits[plan->slot_of[i]] = out[i];
	return 0;
}

/* Kubernetes max_seats.go: the widest request a Queue level takes is
 * max(1, min(ceil(0.15 x NominalCL), NominalCL / handSize)), so that one
 * wide flow cannot hold a level whose queues share it thinly.  0: no cap
 * (Reject and exempt levels; APF's work estimator applies it to Queue
 * levels only). */
uint32_t sl_level_max_seats(const struct sl_level_cfg *l, uint32_t nominal)
{
	uint32_t by_share, by_hand, m;

	if (l->type != SL_LEVEL_LIMITED || l->limit_response != SL_RESP_QUEUE || !l->hand_size)
		return 0;
	by_share = (uint32_t)(((uint64_t)nominal * 15 + 99) / 100);
	by_hand = nominal / l->hand_size;
	m = by_share < by_hand ? by_share : by_hand;
	return m ? m : 1;
}

/* Connections of a class take at most their level's max seats (the
 * compile applies plan->seat_cap); a FlowSchema asking for more is told
 * once. */
static void seat_caps(const struct sl_config *cfg, struct sl_plan *plan)
{
	for (size_t i = 0; i < cfg->n_levels; i++) {
		unsigned slot = plan->slot_of[i];

		plan->seat_cap[slot] = sl_level_max_seats(&cfg->levels[i], plan->limits[slot].nominal);
	}
}

static void warn_capped_seats(const struct sl_config *cfg, const struct sl_plan *plan,
			      struct sl_diags *diags)
{
	for (size_t i = 0; i < cfg->n_schemas; i++) {
		const struct sl_flow_schema *fs = &cfg->schemas[i];
		const struct sl_level_cfg *l;
		uint32_t cap;
		unsigned slot;
		char object[SL_LEVEL_NAME_SIZE + 16];

		if (fs->level >= cfg->n_levels)
			continue;
		l = &cfg->levels[fs->level];
		slot = plan->slot_of[fs->level];
		cap = plan->seat_cap[slot];
		if (!cap || fs->seats_per_conn <= cap)
			continue;
		snprintf(object, sizeof(object), "FlowSchema/%s", fs->name);
		/* At the field (the object's line if it was not in the file). */
		sl_diags_add(diags, SL_SEV_WARNING, fs->file, fs->seats_line ? fs->seats_line : fs->line,
			     fs->seats_line ? fs->seats_column : fs->column, object,
			     "spec.seatsPerConnection",
			     "seatsPerConnection %u exceeds what level %s lets one connection take, %u "
			     "(max(1, min(ceil(0.15 x its nominal %u seats), %u / handSize %u)), as Kubernetes "
			     "caps a request): its connections take %u",
			     fs->seats_per_conn, l->name, cap, plan->limits[slot].nominal,
			     plan->limits[slot].nominal, l->hand_size, cap);
	}
}

static void class_inputs(const struct sl_config *cfg, const struct sl_plan *plan, const char *iface,
			 struct sl_class_inputs *in)
{
	*in = (struct sl_class_inputs){
		.cfg = cfg,
		.level_slot = plan->slot_of,
		.seat_cap = plan->seat_cap,
		.iface = iface,
		.max_entries = cfg->server.table_sizes.classes ? cfg->server.table_sizes.classes
							       : SLUICE_DEFAULT_CLASSES,
	};
}

int sl_plan_build(const struct sl_config *cfg,
		  const char old_names[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN],
		  const char *iface, struct sl_plan *plan, struct sl_diags *diags)
{
	return sl_plan_build_quiescing(cfg, old_names, iface, 0, NULL, plan, diags);
}

int sl_plan_build_quiescing(const struct sl_config *cfg,
			    const char old_names[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN],
			    const char *iface, uint32_t quiescing_shares,
			    const struct sl_compiled *reuse, struct sl_plan *plan,
			    struct sl_diags *diags)
{
	const char *names[SLUICE_MAX_LEVELS];
	struct sl_class_inputs in;
	int err;

	memset(plan, 0, sizeof(*plan));
	if (cfg->n_levels > SLUICE_MAX_LEVELS) {
		sl_diags_add(diags, SL_SEV_ERROR, cfg->source_file, 0, 0, NULL, NULL,
			     "%zu priority levels; the data path holds at most %d",
			     cfg->n_levels, SLUICE_MAX_LEVELS);
		return -ENOSPC;
	}
	for (size_t i = 0; i < cfg->n_levels; i++)
		names[i] = cfg->levels[i].name;
	err = sl_assign_level_slots(old_names, names, cfg->n_levels, plan->slot_of);
	if (err)
		return err;
	plan->n_levels = cfg->n_levels;
	err = plan_limits(cfg, quiescing_shares, plan);
	if (err) {
		sl_diags_add(diags, SL_SEV_ERROR, cfg->source_file, 0, 0, NULL, NULL,
			     "cannot compute concurrency limits (serverConcurrencyLimit %u)",
			     cfg->server.server_concurrency_limit);
		return err;
	}
	plan_config(cfg, &plan->config);
	for (size_t i = 0; i < cfg->n_levels; i++) {
		const struct sl_level_cfg *l = &cfg->levels[i];
		unsigned slot = plan->slot_of[i];
		struct sluice_level *bl = &plan->levels[slot];

		bl->type = l->type == SL_LEVEL_EXEMPT ? SLUICE_LEVEL_EXEMPT : SLUICE_LEVEL_LIMITED;
		bl->limit_response = l->limit_response == SL_RESP_QUEUE ? SLUICE_RESP_QUEUE
									  : SLUICE_RESP_REJECT;
		/* Until borrowing runs (the APF issue), a level's current limit
		 * is its nominal limit; exempt levels are never limited. */
		bl->seat_limit = plan->limits[slot].nominal;
		snprintf(bl->name, sizeof(bl->name), "%s", l->name);
	}
	seat_caps(cfg, plan);
	class_inputs(cfg, plan, iface, &in);
	/* The running tables, when nothing they depend on changed (a reload
	 * of levels or shares): no compile, and the stage writes nothing. */
	if (reuse && reuse->digest && reuse->digest == sl_class_digest(&in)) {
		err = sl_compiled_copy(&plan->classes, reuse);
		plan->classes_reused = !err;
	} else {
		err = sl_compile_classes(&in, &plan->classes, diags);
	}
	if (err)
		return err;
	warn_capped_seats(cfg, plan, diags);
	plan->config.class_digest = plan->classes.digest;
	plan->config.default_class = plan->classes.default_class;
	plan->config.masks = plan->classes.masks;
	return 0;
}

void sl_plan_free(struct sl_plan *plan)
{
	sl_compiled_free(&plan->classes);
}

int sl_plan_check_interfaces(const struct sl_config *cfg, const struct sl_plan *plan,
			     const char *const *ifaces, size_t n_ifaces, struct sl_diags *diags)
{
	for (size_t i = 1; i < n_ifaces; i++) {
		struct sl_compiled other;
		bool same;
		int err;

		struct sl_class_inputs in;

		class_inputs(cfg, plan, ifaces[i], &in);
		err = sl_compile_classes(&in, &other, diags);
		if (err)
			return err;
		same = sl_compiled_equal(&plan->classes, &other);
		sl_compiled_free(&other);
		if (!same) {
			sl_diags_add(diags, SL_SEV_ERROR, cfg->source_file, cfg->server.interfaces_line,
				     cfg->server.interfaces_column, "Server", "spec.interfaces",
				     "connections classify differently on %s than on %s (a FlowSchema subject "
				     "or a policy selector on the `iface` label); one sluiced applies one set of "
				     "tables to all its interfaces: protect them with separate "
				     "configurations, or match on addresses and ports instead",
				     ifaces[i], ifaces[0]);
			return -EINVAL;
		}
	}
	return 0;
}

uint32_t sl_plan_quiescing_shares(const struct sl_config *cfg,
				  const char names[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN],
				  uint64_t busy_slots, const uint32_t slot_shares[SLUICE_MAX_LEVELS],
				  uint64_t *slots)
{
	uint32_t sum = 0;

	*slots = 0;
	for (unsigned s = 0; s < SLUICE_MAX_LEVELS; s++) {
		bool kept = false;

		if (!names[s][0] || !(busy_slots & (1ull << s)))
			continue;
		for (size_t i = 0; i < cfg->n_levels && !kept; i++)
			kept = !strncmp(cfg->levels[i].name, names[s], SLUICE_LEVEL_NAME_LEN);
		if (!kept && slot_shares[s]) {
			sum += slot_shares[s];
			*slots |= 1ull << s;
		}
	}
	return sum;
}
