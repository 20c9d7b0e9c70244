#include "daemon/policy_rt.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/aimd.h"
#include "dataplane/dataplane.h"
#include "dataplane/policy_gate.h"
#include "engine/loadsched.h"
#include "lib/log.h"
#include "lib/syn_retransmit.h"
#include "daemon/ext_signal.h"
#include "daemon/policy_limit.h"
#include "daemon/policy_rt_int.h"
#include "sluice_abi.h"

/* A flow waits in a policy's scheduler at most its workload's bound
 * (sl_workload_wait_limit_ns: queue_timeout, else SL_DEFERRED_WAIT_NS):
 * then it is rejected while its client still waits (Aperture bounds a
 * request's queue time by its caller's deadline as well). */

/* ---- the data path's gate ------------------------------------------------------- */

static bool has_gate(const struct policy_rt *p)
{
	return sl_gate_present(p->ps->dp, p->index);
}

static int ls_workload(unsigned workload)
{
	return workload == SLUICE_NONE16 || workload >= SLUICE_MAX_WORKLOADS ? -1 : (int)workload;
}

static const struct sl_workload_params *workload_params(const struct sl_policy_cfg *pc, unsigned workload)
{
	int w = ls_workload(workload);

	return w >= 0 && (size_t)w < pc->n_workloads ? &pc->workloads[w].params : &pc->default_params;
}

unsigned policy_wl_slot(int workload)
{
	return workload < 0 ? SLUICE_WL_DEFAULT : (unsigned)workload;
}

/* What is left of the credit comes back into the bucket.  An exchange:
 * tokens the data path takes after it find no credit (and defer), tokens
 * it gives back after it are collected the next time. */
static void reclaim(struct policy_rt *p, uint64_t now)
{
	int64_t left;

	if (!has_gate(p) || !p->ls)
		return;
	left = sl_gate_take_back(p->ps->dp, p->index);
	if (left > 0)
		sl_ls_ungrant(p->ls, now, (double)left / SLUICE_MTOK);
}

/* Grant the bucket's tokens to the data path, and say how many wait. */
static void publish(struct policy_rt *p, uint64_t now)
{
	struct sl_ls_stats st;
	double grant;

	if (!has_gate(p) || !p->ls)
		return;
	grant = sl_ls_grant(p->ls, now);
	sl_ls_get_stats(p->ls, now, &st);
	if (isinf(grant))
		sl_gate_pass(p->ps->dp, p->index, st.waiting);
	else
		sl_gate_throttle(p->ps->dp, p->index, st.waiting,
				 grant > 0 ? (int64_t)(grant * SLUICE_MTOK) : 0);
}

static void gate_open(struct sl_policies *ps, unsigned index)
{
	struct sl_gate_view gv;

	sl_gate_open(ps->dp, index);
	/* A gate nobody holds slots of forgets its policy (the one that runs
	 * it next names itself); one still held keeps the name of the policy
	 * whose connections drain (sluicectl status shows them). */
	if (!sl_gate_read(ps->dp, index, &gv) && gv.slots_held == 0)
		sl_gate_set_policy(ps->dp, index, "");
}

void policy_read_wl_stats(const struct policy_rt *p, unsigned slot, struct sluice_wl_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (p->ps->dp)
		sl_maps_wl_stats(&p->ps->dp->maps, p->index, slot, out);
}

/* Connections the data path admitted inline since the last tick: the
 * incoming rate (in pass-through the scheduler sees nothing else) and
 * accepted tokens. */
static void feed_inline(struct policy_rt *p, uint64_t now)
{
	size_t n = p->cfg->n_workloads;

	for (size_t i = 0; i <= n; i++) {
		int wl = i < n ? (int)i : -1;
		unsigned slot = policy_wl_slot(wl);
		struct sluice_wl_stats cur;
		uint64_t flows, mtok;

		policy_read_wl_stats(p, slot, &cur);
		flows = cur.inline_admitted - p->seen[slot].inline_admitted;
		mtok = cur.inline_mtok - p->seen[slot].inline_mtok;
		p->seen[slot] = cur;
		if (flows)
			sl_ls_observe_inline(p->ls, now, wl, flows, (double)mtok / SLUICE_MTOK);
	}
}

/* Each workload's token cost, for the data path (written when it moves). */
static void write_tokens(struct policy_rt *p)
{
	size_t n = p->cfg->n_workloads;

	if (!p->ps->dp || !p->ls) /* a limit in flight counts connections, not tokens */
		return;
	for (size_t i = 0; i <= n; i++) {
		int wl = i < n ? (int)i : -1;
		unsigned slot = policy_wl_slot(wl);
		double t = sl_ls_workload_tokens(p->ls, wl);
		uint32_t mtok;

		if (!isfinite(t) || t < 0)
			t = 1;
		mtok = t * SLUICE_MTOK > UINT32_MAX - 1 ? UINT32_MAX - 1 : (uint32_t)llround(t * SLUICE_MTOK);
		if (p->tokens_written[slot] == mtok + 1)
			continue;
		if (!sl_gate_set_tokens(p->ps->dp, p->index, slot, mtok))
			p->tokens_written[slot] = mtok + 1;
	}
}

/* ---- the external signal over a Unix datagram socket ------------------------ */

/* The running policy whose bound socket is at path, or NULL. */
static struct policy_rt *ext_owner(struct sl_policies *ps, const char *path)
{
	for (size_t j = 0; j < ps->n; j++)
		if (ps->v[j].ext_fd >= 0 && ps->v[j].cfg->external_socket &&
		    !strcmp(ps->v[j].cfg->external_socket, path))
			return &ps->v[j];
	return NULL;
}

static void ext_close(struct policy_rt *p)
{
	if (p->ext_fd < 0)
		return;
	close(p->ext_fd);
	p->ext_fd = -1;
	if (p->cfg && p->cfg->external_socket)
		unlink(p->cfg->external_socket);
}

/* Everything the application sent since the last tick. */
static void ext_drain(struct policy_rt *p)
{
	if (sl_ext_drain(p->ext_fd, &p->ext_sum, &p->ext_n) && !p->external_warned) {
		pr_warn("policy %s: external signal: ignoring a datagram that is not a number of ms",
			p->name);
		p->external_warned = true;
	}
}

/* ---- life cycle ------------------------------------------------------------------- */

/* The schedulers' ctx is the policy set (stable across reloads, when a
 * scheduler moves to the new record). */
static void on_ls_admit(void *ctx, uint64_t id, uint64_t now)
{
	struct sl_policies *ps = ctx;

	if (ps->hooks.admit)
		ps->hooks.admit(ps->hooks.ctx, id, now); /* its tokens are spent either way */
}

static void on_limit_reject(void *ctx, uint64_t id, uint64_t now, enum sl_ss_why why)
{
	struct sl_policies *ps = ctx;

	if (ps->hooks.reject)
		ps->hooks.reject(ps->hooks.ctx, id, now, why);
}

/* Aperture's scheduler rejects when the wait passed, or sheds. */
static void on_ls_reject(void *ctx, uint64_t id, uint64_t now, enum sl_ls_why why)
{
	on_limit_reject(ctx, id, now, why == SL_LS_SHED ? SL_SS_SHED : SL_SS_TIME_OUT);
}

static bool on_limit_admit(void *ctx, uint64_t id, uint64_t now)
{
	struct sl_policies *ps = ctx;

	return !ps->hooks.admit || ps->hooks.admit(ps->hooks.ctx, id, now);
}

static size_t on_limit_recall(void *ctx, unsigned policy, size_t n, uint64_t now)
{
	struct sl_policies *ps = ctx;

	return ps->hooks.recall ? ps->hooks.recall(ps->hooks.ctx, policy, n, now) : 0;
}

static const struct sl_plimit_hooks limit_hooks = {
	.admit = on_limit_admit, .reject = on_limit_reject, .recall = on_limit_recall,
};

int sl_policies_create(struct sl_policies **out, struct sl_dataplane *dp,
		       const struct sl_policy_hooks *hooks)
{
	struct sl_policies *ps = calloc(1, sizeof(*ps));

	if (!ps)
		return -ENOMEM;
	ps->dp = dp;
	if (hooks)
		ps->hooks = *hooks;
	for (unsigned i = 0; i < SLUICE_MAX_POLICIES; i++)
		gate_open(ps, i);
	*out = ps;
	return 0;
}

/* Everything still waiting in a scheduler that goes away is admitted
 * (fail-open), then the scheduler is freed. */
static void drop_scheduler(struct policy_rt *p, uint64_t now)
{
	if (!p->ls)
		return;
	sl_ls_set_multiplier(p->ls, now, NAN, true);
	sl_ls_tick(p->ls, now);
	sl_ls_free(p->ls);
	p->ls = NULL;
}

/* The same for a limit of slots: what waits is admitted without one. */
static void drop_limit(struct policy_rt *p, uint64_t now)
{
	if (!p->lim)
		return;
	p->ps->dropping = true;
	sl_plimit_release_all(p->lim, now);
	p->ps->dropping = false;
	sl_plimit_free(p->lim);
	p->lim = NULL;
}

static void free_all(struct policy_rt *v, size_t n, uint64_t now)
{
	for (size_t i = 0; i < n; i++) {
		ext_close(&v[i]);
		drop_scheduler(&v[i], now);
		drop_limit(&v[i], now);
		sl_aimd_free(&v[i].aimd);
	}
	free(v);
}

void sl_policies_free(struct sl_policies *ps)
{
	if (!ps)
		return;
	/* No hooks on the way out: the caller is tearing down. */
	ps->hooks = (struct sl_policy_hooks){0};
	sl_policies_abort(ps);
	free_all(ps->v, ps->n, 0);
	free(ps);
}

size_t sl_policies_count(const struct sl_policies *ps)
{
	return ps->n;
}

bool sl_policies_take_slots(const struct sl_policies *ps, unsigned policy)
{
	return policy < ps->n && ps->v[policy].lim && !ps->dropping;
}

static bool same_scheduler(const struct sl_policy_cfg *a, const struct sl_policy_cfg *b)
{
	struct sl_ls_workload x, y;

	if (a->n_workloads != b->n_workloads ||
	    a->workload_latency_based_tokens != b->workload_latency_based_tokens)
		return false;
	for (size_t i = 0; i <= a->n_workloads; i++) {
		x = sl_ls_workload_from_cfg(i < a->n_workloads ? &a->workloads[i].params : &a->default_params);
		y = sl_ls_workload_from_cfg(i < b->n_workloads ? &b->workloads[i].params : &b->default_params);
		if (memcmp(&x, &y, sizeof(x)))
			return false;
	}
	return true;
}

void sl_policies_abort(struct sl_policies *ps)
{
	if (ps->next)
		free_all(ps->next, ps->next_n, 0);
	free(ps->next_old);
	ps->next = NULL;
	ps->next_old = NULL;
	ps->next_n = 0;
}

int sl_policies_prepare(struct sl_policies *ps, const struct sl_config *cfg, uint64_t now)
{
	size_t n = cfg->n_policies;
	struct policy_rt *v = calloc(n ? n : 1, sizeof(*v));
	struct policy_rt **old = calloc(n ? n : 1, sizeof(*old));
	char why[160];
	int err = 0;

	sl_policies_abort(ps);
	if (!v || !old) {
		err = -ENOMEM;
		goto fail;
	}
	/* Phase 1, which may fail: create what cannot be kept; the old set
	 * is not touched. */
	for (size_t i = 0; i < n; i++) {
		const struct sl_policy_cfg *pc = &cfg->policies[i];
		struct policy_rt *p = &v[i];
		struct sl_aimd_params ap;

		for (size_t j = 0; j < ps->n && !old[i]; j++)
			if (!strcmp(ps->v[j].name, pc->name))
				old[i] = &ps->v[j];
		snprintf(p->name, sizeof(p->name), "%s", pc->name);
		p->cfg = pc;
		p->ps = ps;
		p->index = (unsigned)i;
		p->ext_fd = -1;
		for (size_t k = 0; k < i && pc->external_socket; k++) {
			if (cfg->policies[k].external_socket &&
			    !strcmp(cfg->policies[k].external_socket, pc->external_socket)) {
				pr_err("policy %s: external signal socket %s is policy %s's too",
				       pc->name, pc->external_socket, cfg->policies[k].name);
				err = -EADDRINUSE;
				goto fail;
			}
		}
		if (pc->external_socket && !ext_owner(ps, pc->external_socket)) {
			p->ext_fd = sl_ext_open(pc->external_socket);
			if (p->ext_fd < 0) {
				err = p->ext_fd;
				p->ext_fd = -1;
				pr_err("policy %s: external signal socket %s: %s", pc->name,
				       pc->external_socket, strerror(-err));
				goto fail;
			}
		}
		if (pc->mode == SL_POLICY_SLUICE) {
			if (!old[i] || !old[i]->lim || !sl_plimit_same(old[i]->lim, pc)) {
				struct sl_plimit_hooks h = limit_hooks;

				h.ctx = ps;
				err = sl_plimit_create(&p->lim, pc, ps->dp, &h, now);
				if (err)
					goto fail;
			}
			continue;
		}
		sl_aimd_params_from_policy(&ap, pc);
		if (!old[i] || memcmp(&old[i]->aimd.p, &ap, sizeof(ap))) {
			err = sl_aimd_init(&p->aimd, &ap);
			if (err) {
				pr_err("policy %s: controller parameters rejected", pc->name);
				goto fail;
			}
			p->aimd_made = true;
			p->next_period_ns = now + ap.period_ns;
		}
		if (!old[i] || !old[i]->ls || !same_scheduler(old[i]->cfg, pc)) {
			err = sl_ls_create_for_policy(&p->ls, pc, now, on_ls_admit, on_ls_reject, ps,
						      why, sizeof(why));
			if (err) {
				pr_err("policy %s: scheduler: %s", pc->name, why);
				goto fail;
			}
		}
	}
	ps->next = v;
	ps->next_old = old;
	ps->next_n = n;
	return 0;

fail:
	if (v)
		free_all(v, n, now);
	free(old);
	return err;
}

void sl_policies_commit(struct sl_policies *ps, uint64_t now)
{
	struct policy_rt *v = ps->next, **old = ps->next_old;
	size_t n = ps->next_n;

	if (!v)
		return;
	ps->next = NULL;
	ps->next_old = NULL;
	ps->next_n = 0;
	/* Keep the history of policies whose name (and parameters) survive;
	 * take back outstanding credit; open every gate (the indexes may have
	 * moved) and re-learn the counters' baselines. */
	for (size_t j = 0; j < ps->n; j++)
		reclaim(&ps->v[j], now);
	for (size_t i = 0; i < n; i++) {
		struct policy_rt *p = &v[i];

		if (!old[i])
			continue;
		if (p->cfg->mode == SL_POLICY_SLUICE) {
			if (!p->lim) {
				p->lim = old[i]->lim;
				old[i]->lim = NULL;
			}
			continue;
		}
		if (!p->aimd_made) {
			p->aimd = old[i]->aimd;
			memset(&old[i]->aimd, 0, sizeof(old[i]->aimd));
			p->have_out = old[i]->have_out;
			p->out = old[i]->out;
			p->next_period_ns = old[i]->next_period_ns;
		}
		if (!p->ls) {
			p->ls = old[i]->ls;
			old[i]->ls = NULL;
		}
	}
	for (size_t i = 0; i < n; i++) {
		struct policy_rt *p = &v[i], *o;

		if (!p->cfg->external_socket || p->ext_fd >= 0)
			continue;
		/* A socket already bound at this path: keep it (and what it
		 * received), whichever policy had it. */
		o = ext_owner(ps, p->cfg->external_socket);
		p->ext_fd = o->ext_fd;
		p->ext_sum = o->ext_sum;
		p->ext_n = o->ext_n;
		o->ext_fd = -1;
	}
	/* Every gate but a limit's starts open; a limit's gate keeps the
	 * count of the slots held through it (sl_plimit_start). */
	for (unsigned i = 0; i < SLUICE_MAX_POLICIES; i++)
		if (!(i < n && v[i].lim))
			gate_open(ps, i);
	free_all(ps->v, ps->n, now); /* replaced schedulers admit their waiting flows */
	ps->v = v;
	ps->n = n;
	for (size_t i = 0; i < n; i++) {
		sl_gate_set_policy(ps->dp, (unsigned)i, v[i].name);
		if (v[i].lim)
			sl_plimit_start(v[i].lim, (unsigned)i);
	}
	for (size_t i = 0; i < n; i++) {
		struct policy_rt *p = &v[i];

		for (unsigned s = 0; s < SLUICE_WL_SLOTS; s++)
			policy_read_wl_stats(p, s, &p->seen[s]);
		memset(p->tokens_written, 0, sizeof(p->tokens_written));
		write_tokens(p);
		publish(p, now);
	}
	free(old);
}

int sl_policies_configure(struct sl_policies *ps, const struct sl_config *cfg, uint64_t now)
{
	int err = sl_policies_prepare(ps, cfg, now);

	if (!err)
		sl_policies_commit(ps, now);
	return err;
}

/* ---- flows -------------------------------------------------------------------------- */

bool sl_policies_can_requeue(const struct sl_policies *ps, unsigned policy, unsigned workload,
			     uint64_t arrival_ns, uint64_t now)
{
	return policy < ps->n && ps->v[policy].lim &&
	       sl_plimit_can_requeue(ps->v[policy].lim, workload, arrival_ns, now);
}

int sl_policies_requeue(struct sl_policies *ps, unsigned policy, unsigned workload, uint64_t id,
			uint64_t flow, uint64_t arrival_ns, uint64_t now)
{
	if (policy >= ps->n || !ps->v[policy].lim)
		return -ENOENT;
	return sl_plimit_requeue(ps->v[policy].lim, now, id, workload, flow, arrival_ns);
}

int sl_policies_arrive(struct sl_policies *ps, unsigned policy, unsigned workload, uint64_t id,
		       uint64_t now)
{
	return sl_policies_arrive_flow(ps, policy, workload, id, id, now);
}

int sl_policies_arrive_flow(struct sl_policies *ps, unsigned policy, unsigned workload, uint64_t id,
			    uint64_t flow, uint64_t now)
{
	struct policy_rt *p;
	int r;

	if (policy < ps->n && ps->v[policy].lim)
		return sl_plimit_arrive(ps->v[policy].lim, now, id, workload, flow);
	if (policy >= ps->n || !ps->v[policy].ls)
		return -ENOENT;
	p = &ps->v[policy];
	/* The arrival sees the whole bucket: the credit comes back first and
	 * what is left goes out again after. */
	reclaim(p, now);
	r = sl_ls_arrive(p->ls, now, id, ls_workload(workload), SL_LS_TOKENS_AUTO,
			 sl_workload_wait_limit_ns(workload_params(p->cfg, workload)));
	publish(p, now);
	return r;
}

void sl_policies_return(struct sl_policies *ps, unsigned policy, unsigned workload, bool slot,
			uint64_t now)
{
	struct policy_rt *p;
	int wl = ls_workload(workload);

	if (slot) {
		sl_gate_give_slot(ps->dp, policy);
		return;
	}
	if (policy >= ps->n || !ps->v[policy].ls)
		return;
	p = &ps->v[policy];
	sl_ls_return(p->ls, now, wl, sl_ls_workload_tokens(p->ls, wl));
}

void sl_policies_on_close(struct sl_policies *ps, unsigned policy, unsigned workload,
			  uint64_t duration_ns, uint64_t queued_ns, uint32_t srtt_us, bool served,
			  uint64_t now)
{
	struct policy_rt *p;

	if (policy >= ps->n)
		return;
	p = &ps->v[policy];
	if (p->lim) {
		sl_plimit_complete(p->lim, now, duration_ns, queued_ns, served);
		return;
	}
	/* Nothing a client that gave up leaves behind steers a controller. */
	if (!p->ls || !served)
		return;
	/* The policy's signal: the connection's duration, or its smoothed
	 * RTT (network-side latency); the external signal is read per period. */
	if (p->cfg->signal == SL_SIGNAL_DURATION)
		sl_aimd_observe_latency(&p->aimd, now, duration_ns);
	else if (p->cfg->signal == SL_SIGNAL_SRTT && srtt_us)
		sl_aimd_observe_latency(&p->aimd, now, (uint64_t)srtt_us * 1000);
	/* Aperture workload_latency_based_tokens: the workload's token estimate is its mean connection time. */
	if (p->ls)
		sl_ls_complete(p->ls, now, ls_workload(workload), duration_ns);
}

/* The external signal: one number (milliseconds) the application keeps in
 * a file; NaN (no valid value this period) when it is missing or not a
 * number, which the controller treats like an empty window. */
static double read_external(struct policy_rt *p)
{
	const char *why = NULL;
	double v;

	if (!p->cfg->external_path)
		return NAN;
	v = sl_ext_read_file(p->cfg->external_path, &why);
	if (why && !p->external_warned)
		pr_warn("policy %s: external signal %s: %s", p->name, p->cfg->external_path, why);
	p->external_warned = why != NULL;
	return v;
}

/* One control period: the controller's decision goes to the scheduler. */
static void control_period(struct policy_rt *p, uint64_t now)
{
	bool was = p->have_out ? p->out.pass_through : true;
	double was_lm = p->have_out ? p->out.load_multiplier : 1;
	double accepted = 0, rejected = 0;

	sl_ls_take_period(p->ls, &accepted, &rejected);
	sl_aimd_observe_tokens(&p->aimd, accepted, rejected);
	if (p->cfg->signal == SL_SIGNAL_EXTERNAL && p->cfg->external_socket) {
		ext_drain(p);
		sl_aimd_period_external(&p->aimd, p->ext_n ? p->ext_sum / (double)p->ext_n : NAN,
					&p->out);
		p->ext_sum = 0;
		p->ext_n = 0;
	} else if (p->cfg->signal == SL_SIGNAL_EXTERNAL)
		sl_aimd_period_external(&p->aimd, read_external(p), &p->out);
	else
		sl_aimd_period(&p->aimd, now, &p->out);
	p->have_out = true;
	sl_ls_set_multiplier(p->ls, now, p->out.load_multiplier, p->out.pass_through);
	/* logfmt, one line per change: what an operator greps for after an
	 * incident (the per-period numbers are metrics). */
	if (was != p->out.pass_through || was_lm != p->out.load_multiplier)
		pr_info("event=load_multiplier policy=%s from=%.3f to=%.3f reason=%s signal_ms=%.1f "
			"setpoint_ms=%.1f pass_through=%s",
			p->name, was_lm, p->out.load_multiplier,
			p->out.overload ? "overload" : p->out.pass_through ? "pass-through" : "increase",
			p->out.signal, p->out.setpoint, p->out.pass_through ? "true" : "false");
}

void sl_policies_tick(struct sl_policies *ps, uint64_t now)
{
	for (size_t i = 0; i < ps->n; i++) {
		struct policy_rt *p = &ps->v[i];

		if (p->lim)
			sl_plimit_tick(p->lim, now);
		if (!p->ls)
			continue;
		reclaim(p, now);
		feed_inline(p, now);
		ext_drain(p);
		sl_ls_tick(p->ls, now);
		if (now >= p->next_period_ns) {
			p->next_period_ns = now + p->aimd.p.period_ns;
			control_period(p, now);
		}
		write_tokens(p);
		publish(p, now);
	}
}
