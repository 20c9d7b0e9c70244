// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Configurations into the data path (daemon.h): applied here and now at
 * start and when a removed level drained; a reload's slow half (load,
 * plan, stage) runs in a job off the loop (reload_job.c), and its result
 * is committed here in one short turn of the loop.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>

#include "daemon/daemon.h"
#include "daemon/admission.h"
#include "daemon/policy_rt.h"
#include "daemon/reload_job.h"
#include "dataplane/settings.h"
#include "dataplane/policy_gate.h"
#include "lib/clock.h"
#include "lib/log.h"

/* Load a config; every diagnostic is logged and left in diags. */
int daemon_load_config(const char *path, struct sl_config **out, struct sl_diags *diags)
{
	size_t first = diags->count;
	int err = sl_config_check_file_mode(path, diags);

	if (!err)
		err = sl_config_load_file(path, out, diags);
	if (!err)
		err = daemon_config_runnable(path, out, diags);

	/* Diagnostics are already "file:line:col: severity: ..." lines. */
	for (size_t i = first; i < diags->count; i++) {
		char line[1024];

		sl_diag_format(&diags->items[i], line, sizeof(line));
		sl_log(diags->items[i].severity == SL_SEV_ERROR ? SL_LOG_ERROR : SL_LOG_WARN,
		       "%s", line);
	}
	if (err)
		pr_err("%s: configuration not applied (%zu error%s)", path,
		       sl_diags_error_count(diags), sl_diags_error_count(diags) == 1 ? "" : "s");
	return err;
}

/* The shares of levels the new configuration removes (or an earlier one
 * removed) that still hold connections or have some waiting: they stay in
 * the share sum while they drain, as a quiescing APF level's do. */
/* Whether a slot holds or queues connections now. */
static bool slot_busy(const struct daemon *d, unsigned s)
{
	struct sluice_seats seats;

	sl_seats_read(&d->dp, s, &seats);
	return seats.seats_in_use || seats.waiting;
}

/* Slots that hold or queue connections now. */
static uint64_t busy_slots(const struct daemon *d)
{
	uint64_t busy = 0;

	for (unsigned s = 0; s < SLUICE_MAX_LEVELS; s++)
		if (slot_busy(d, s))
			busy |= 1ull << s;
	return busy;
}

static uint32_t quiescing_shares(const struct daemon *d, const struct sl_config *cfg,
				 const char names[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN],
				 uint64_t *slots)
{
	return sl_plan_quiescing_shares(cfg, names, busy_slots(d), d->slot_shares, slots);
}

/* A quiescing level that has drained leaves the share sum: the
 * configuration is applied again without it (APF digests its
 * configuration again when a quiescing level goes idle). */
void daemon_check_quiescing(struct daemon *d)
{
	struct sl_diags diags = SL_DIAGS_INIT;
	bool drained = false;

	for (unsigned s = 0; s < SLUICE_MAX_LEVELS && !drained; s++)
		drained = (d->quiescing & (1ull << s)) && !slot_busy(d, s);
	if (!drained || d->job)
		return; /* a reload on its way applies it anyway */
	if (daemon_apply_config(d, d->cfg, &diags)) {
		/* Said once: the limits stay as they are until the next reload. */
		pr_warn("a removed level drained; applying the configuration again failed, "
			"limits keep counting its shares until the next reload");
		d->quiescing = 0;
	} else
		pr_info("a removed level drained: limits reallocated without its shares");
	sl_diags_free(&diags);
}

/* Print the diagnostics from index first on: as errors, or (failed false)
 * the warnings of a configuration that is applied. */
static void print_diags(const struct sl_diags *diags, size_t first, bool failed)
{
	for (size_t i = first; i < diags->count; i++) {
		char line[1024];

		sl_diag_format(&diags->items[i], line, sizeof(line));
		sl_log(failed || diags->items[i].severity == SL_SEV_ERROR ? SL_LOG_ERROR : SL_LOG_WARN,
		       "%s", line);
	}
}

/* Keep the applied plan's tables for the next plan to reuse (not while a
 * job may be reading the ones kept). */
static void remember_classes(struct daemon *d, struct sl_plan *plan)
{
	if (d->job)
		return;
	sl_compiled_free(&d->classes);
	d->classes = plan->classes;
	memset(&plan->classes, 0, sizeof(plan->classes));
}

/* A built plan into the data path (committed, if the job staged it in
 * staged_gen; else written whole), then admission and policies. */
static int apply_plan(struct daemon *d, const struct sl_config *cfg, struct sl_plan *plan,
		      int staged_gen, uint64_t quiescing)
{
	int err;

	/* Shadow mode as running: the file's value, unless `sluicectl shadow`
	 * changed it since (daemon_reload_finish() decides). */
	if (d->shadow)
		plan->config.flags |= SLUICE_CFG_SHADOW;
	else
		plan->config.flags &= ~(__u32)SLUICE_CFG_SHADOW;
	/* A surviving level keeps its current (borrowed) limit until the
	 * allocation that sl_adm_configure runs right after the flip. */
	for (unsigned slot = 0; d->adm && slot < SLUICE_MAX_LEVELS; slot++) {
		uint32_t cur = sl_adm_level_limit(d->adm, slot);

		if (cur && plan->levels[slot].type == SLUICE_LEVEL_LIMITED)
			plan->levels[slot].seat_limit = cur;
	}
	/* Where levels seat survives a reload (a flood does not stop for
	 * one); seatAt: ack applies at once. */
	plan->config.ack_watch_levels = 0;
	for (unsigned slot = 0; slot < SLUICE_MAX_LEVELS; slot++) {
		struct sluice_level *l = &plan->levels[slot];

		if (l->type != SLUICE_LEVEL_LIMITED)
			continue;
		l->flags = sl_halfopen_rt_flags(&d->halfopen, slot);
		if (cfg->server.half_open.seat_at == SL_SEAT_AT_ACK)
			l->flags |= SLUICE_LVL_SEAT_AT_ACK | SLUICE_LVL_ACK_WATCH;
		if (l->flags & SLUICE_LVL_ACK_WATCH)
			plan->config.ack_watch_levels++;
	}
	/* What can fail comes before the data path switches generation. */
	err = d->policies ? sl_policies_prepare(d->policies, cfg, sl_mono_ns()) : 0;
	if (!err)
		err = staged_gen >= 0 ? sl_apply_commit(&d->dp.maps, plan, (uint8_t)staged_gen)
				      : sl_apply_plan(&d->dp.maps, plan);
	if (!err && d->adm)
		err = sl_adm_configure(d->adm, cfg, plan, sl_mono_ns());
	if (d->policies) {
		if (!err)
			sl_policies_commit(d->policies, sl_mono_ns());
		else
			sl_policies_abort(d->policies);
	}
	if (!err) {
		for (size_t i = 0; i < plan->n_levels; i++)
			d->slot_shares[plan->slot_of[i]] = (uint32_t)cfg->levels[i].shares;
		d->quiescing = quiescing;
		pr_info("classification%s: %zu source and %zu local prefixes, %u client-port and "
			"%u local-port classes, %zu table entries",
			plan->classes_reused ? " unchanged, its tables kept" : "", plan->classes.n_src,
			plan->classes.n_dst, plan->classes.n_sport_cls, plan->classes.n_dport_cls,
			plan->classes.n_entries);
		for (size_t i = 0; i < plan->n_levels; i++) {
			const struct sluice_level *l = &plan->levels[plan->slot_of[i]];

			pr_info("level %s (slot %u): %s, limit %u seats, over limit: %s", l->name,
				plan->slot_of[i], l->type == SLUICE_LEVEL_EXEMPT ? "exempt" : "limited",
				l->seat_limit, l->limit_response == SLUICE_RESP_QUEUE ? "defer (queue)" : "reject (RST)");
		}
		remember_classes(d, plan);
	}
	return err;
}

/* The plan failed: the diagnostics say why, or else the errno. */
static void say_not_applied(const struct sl_config *cfg, const struct sl_diags *diags, size_t first,
			    int err)
{
	print_diags(diags, first, true);
	/* An errno's words ("Argument list too long") would not say why. */
	if (diags->count > first)
		pr_err("%s: configuration cannot be applied (see above)", cfg->source_file);
	else
		pr_err("%s: configuration cannot be applied: %s", cfg->source_file,
		       err == -ENOMEM ? "out of memory" : strerror(-err));
}

/* At start: a policy keeps the gate the last daemon ran it on (adopted
 * maps), whose count holds its connections still in flight. */
int daemon_keep_gate_policies(struct daemon *d)
{
	char in_use[SLUICE_MAX_POLICIES][SL_LEVEL_NAME_SIZE];
	struct sl_gate_view gv;
	int err;

	for (unsigned i = 0; i < SLUICE_MAX_POLICIES; i++)
		snprintf(in_use[i], sizeof(in_use[i]), "%s", sl_gate_read(&d->dp, i, &gv) ? "" : gv.policy);
	err = sl_config_keep_policy_indices(d->cfg, in_use, SLUICE_MAX_POLICIES);
	if (err)
		pr_err("policies: %s", strerror(-err));
	return err;
}

/* Build the whole plan, then write it, here and now (at start, and when a
 * quiescing level drained): a config that cannot be applied leaves the
 * maps as they were.  Reloads build theirs off the loop (reload_start). */
int daemon_apply_config(struct daemon *d, const struct sl_config *cfg, struct sl_diags *diags)
{
	char names[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN];
	size_t first = diags->count;
	uint64_t quiescing;
	struct sl_plan plan;
	int err;

	err = sl_maps_level_names(&d->dp.maps, names);
	if (err) {
		pr_err("read level names: %s", strerror(-err));
		return err;
	}
	err = sl_plan_build_quiescing(cfg, names, d->opts.ifnames[0],
				      quiescing_shares(d, cfg, names, &quiescing), &d->classes, &plan,
				      diags);
	if (!err && !plan.classes_reused) /* kept tables passed it already */
		err = sl_plan_check_interfaces(cfg, &plan, d->opts.ifnames, d->opts.n_ifnames, diags);
	if (err) {
		say_not_applied(cfg, diags, first, err);
		sl_plan_free(&plan);
		return err;
	}
	print_diags(diags, first, false);
	err = apply_plan(d, cfg, &plan, -1, quiescing);
	sl_plan_free(&plan);
	return err;
}

/*
 * Reloads, off the loop.  daemon_reload_start() numbers the request; start_job()
 * snapshots what the plan needs and starts a job (daemon/reload_job.h):
 * load, plan, stage into the idle generation.  The loop goes on ticking; daemon_reload_finish() runs when the
 * job's eventfd fires and commits in one short turn.  A reload asked while
 * a job runs replaces it: the running one's result is dropped when it
 * ends, and a new job reads the file as it is then.  Every request gets a
 * number; `reload-status N` answers once a job covering N has ended.
 */
/* A job for every request up to d->reload_seq, with what the plan needs
 * snapshot now.  A job that cannot start ends those requests at once. */
static void start_job(struct daemon *d)
{
	struct sl_reload_input in = {
		.config_path = d->opts.config_path, .maps = &d->dp.maps,
		.ifnames = d->opts.ifnames, .n_ifnames = d->opts.n_ifnames,
		.busy_slots = busy_slots(d), .reuse = &d->classes,
	};
	struct epoll_event ev = {.events = EPOLLIN};
	const char *reason = d->reload_reason;
	char file[512];
	int err;

	memcpy(in.slot_shares, d->slot_shares, sizeof(in.slot_shares));
	for (size_t i = 0; d->cfg && i < d->cfg->n_policies && i < SLUICE_MAX_POLICIES; i++)
		snprintf(in.policy_names[i], sizeof(in.policy_names[i]), "%s", d->cfg->policies[i].name);
	in.n_policy_names = d->cfg ? d->cfg->n_policies : 0;
	err = sl_maps_level_names(&d->dp.maps, in.names);
	if (!err)
		err = sl_reload_job_start(&d->job, &in);
	if (!err) {
		ev.data.fd = sl_reload_job_fd(d->job);
		if (epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, ev.data.fd, &ev))
			pr_warn("reload: epoll: %s (its end is seen at the next tick)", strerror(errno));
	}
	if (err) {
		pr_err("event=reload result=failed file=%s reason=%s error=%s",
		       sl_logfmt_value(file, sizeof(file), d->opts.config_path), reason, strerror(-err));
		d->job = NULL;
		d->reloads[0]++;
		d->last_reload_ok = false;
		d->outcome_seq = d->reload_seq;
		d->outcome_err = err;
		snprintf(d->outcome_msg, sizeof(d->outcome_msg), "reload could not start: %s",
			 strerror(-err));
		return;
	}
	d->job_seq = d->reload_seq;
	pr_info("event=reload_started file=%s reason=%s",
		sl_logfmt_value(file, sizeof(file), d->opts.config_path), reason);
	sl_svcmgr_reloading(&d->svcmgr);
}

/* A reload request: its number, and a job (or, while one runs, the
 * promise of a new one when it ends: the running one is replaced). */
unsigned long long daemon_reload_start(struct daemon *d, const char *reason)
{
	char file[512];

	d->reload_seq++;
	snprintf(d->reload_reason, sizeof(d->reload_reason), "%s", reason);
	if (d->job) {
		d->reload_again = true;
		pr_info("event=reload_queued file=%s reason=%s: the running reload is replaced",
			sl_logfmt_value(file, sizeof(file), d->opts.config_path), reason);
	} else {
		start_job(d);
	}
	return d->reload_seq;
}

/* One line on what the verdicts do, at start and whenever shadow mode
 * changes: an operator reading the journal learns whether sluice
 * protects anything, and how to change it. */
void daemon_say_enforcement(const struct daemon *d)
{
	const struct sl_config *cfg = d->cfg;
	size_t exempt = 0;
	char file[512];

	for (size_t i = 0; i < cfg->n_schemas; i++)
		exempt += cfg->levels[cfg->schemas[i].level].type == SL_LEVEL_EXEMPT;
	sl_logfmt_value(file, sizeof(file), d->opts.config_path);
	if (d->shadow)
		pr_warn("event=enforcement shadow=on interfaces=%s file=%s (nothing is enforced: every new "
			"connection is judged and its verdict counted, and admitted; `sluicectl status` shows "
			"what would have been deferred or refused.  To enforce: `shadow: false` in the file's "
			"Server, then `systemctl reload sluiced`, or `sluicectl shadow off` until the next reload)",
			d->dp.ifnames, file);
	else
		pr_info("event=enforcement shadow=off interfaces=%s file=%s levels=%zu flow_schemas=%zu "
			"exempt_flow_schemas=%zu policies=%zu (every new TCP connection on these interfaces "
			"is admitted, deferred or refused by its level; those of an exempt FlowSchema are "
			"never limited; `sluicectl explain` shows where one goes.  To count without "
			"enforcing: `shadow: true`, or `sluicectl shadow on`)", d->dp.ifnames, file,
			cfg->n_levels, cfg->n_schemas, exempt, cfg->n_policies);
}

void daemon_reload_finish(struct daemon *d)
{
	struct sl_reload_result r;
	bool was_shadow = d->shadow;
	char file[512];
	int err;

	epoll_ctl(d->epoll_fd, EPOLL_CTL_DEL, sl_reload_job_fd(d->job), NULL);
	sl_reload_job_finish(d->job, &r);
	d->job = NULL;
	if (d->reload_again) {
		/* A newer request came: its job covers every request so far. */
		d->reload_again = false;
		pr_info("event=reload result=replaced file=%s seconds=%.3f",
			sl_logfmt_value(file, sizeof(file), d->opts.config_path), r.seconds);
		sl_reload_result_free(&r);
		start_job(d);
		return;
	}
	err = r.err;
	if (!err) {
		print_diags(&r.diags, 0, false);
		/* A changed `shadow` in the file wins over `sluicectl shadow`. */
		if (r.cfg->server.shadow != d->cfg->server.shadow)
			d->shadow = r.cfg->server.shadow;
		err = apply_plan(d, r.cfg, &r.plan, r.gen, r.quiescing_slots);
		if (err)
			d->shadow = was_shadow;
	} else if (r.cfg) {
		say_not_applied(r.cfg, &r.diags, 0, err);
	} else {
		print_diags(&r.diags, 0, true);
		pr_err("%s: configuration not applied (%zu error%s)", d->opts.config_path,
		       sl_diags_error_count(&r.diags), sl_diags_error_count(&r.diags) == 1 ? "" : "s");
	}
	d->last_reload_ok = !err;
	d->reloads[!err]++;
	d->outcome_seq = d->job_seq;
	d->outcome_err = err;
	sl_diags_free(&d->outcome_diags);
	d->outcome_diags = r.diags;
	sl_diags_init(&r.diags);
	if (err) {
		char status[832];

		snprintf(d->outcome_msg, sizeof(d->outcome_msg), "%s",
			 "reload failed; the previous configuration keeps running");
		pr_err("event=reload result=failed file=%s reason=%s error=%s seconds=%.3f",
		       sl_logfmt_value(file, sizeof(file), d->opts.config_path), d->reload_reason,
		       err == -ENOMEM ? "no-memory" : "invalid-configuration", r.seconds);
		snprintf(status, sizeof(status), "%s; last reload failed", d->status);
		sl_svcmgr_ready(&d->svcmgr, status);
		sl_reload_result_free(&r);
		return;
	}
	d->last_reload_ok_at = sl_wall_s();
	if (strcmp(daemon_metrics_address(d, r.cfg) ? daemon_metrics_address(d, r.cfg) : "",
		   daemon_metrics_address(d, d->cfg) ? daemon_metrics_address(d, d->cfg) : ""))
		pr_warn("metricsAddress changed: it takes effect when sluiced restarts");
	if (strcmp(r.cfg->server.read_group ? r.cfg->server.read_group : "",
		   d->cfg->server.read_group ? d->cfg->server.read_group : ""))
		pr_warn("readGroup changed: it takes effect when sluiced restarts");
	if (strcmp(r.cfg->server.xdp_chain.next ? r.cfg->server.xdp_chain.next : "",
		   d->cfg->server.xdp_chain.next ? d->cfg->server.xdp_chain.next : "") ||
	    strcmp(r.cfg->server.xdp_chain.root_array ? r.cfg->server.xdp_chain.root_array : "",
		   d->cfg->server.xdp_chain.root_array ? d->cfg->server.xdp_chain.root_array : "") ||
	    r.cfg->server.xdp_chain.slot != d->cfg->server.xdp_chain.slot)
		pr_warn("xdpChain changed: it takes effect when sluiced restarts");
	sl_config_free(d->cfg);
	d->cfg = r.cfg; /* admission points at it now */
	r.cfg = NULL;
	snprintf(d->outcome_msg, sizeof(d->outcome_msg), "%s", "reloaded");
	pr_info("event=reload result=ok file=%s reason=%s levels=%zu flow_schemas=%zu policies=%zu "
		"classification=%s seconds=%.3f", sl_logfmt_value(file, sizeof(file), d->opts.config_path),
		d->reload_reason, d->cfg->n_levels, d->cfg->n_schemas, d->cfg->n_policies,
		r.plan.classes_reused ? "kept" : "compiled", r.seconds);
	if (d->shadow != was_shadow)
		daemon_say_enforcement(d);
	sl_config_watch_loaded(&d->watch);
	sl_svcmgr_ready(&d->svcmgr, d->status);
	sl_reload_result_free(&r);
}

