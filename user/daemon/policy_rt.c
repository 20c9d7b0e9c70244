// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The policy runtime (policy_rt.h): the set of policies a configuration
 * names, its reloads, and each flow's way through its policy.  Each
 * policy runs in its mode behind one interface (policy_rt_int.h:
 * policy_aperture.c, policy_sluice.c); what is here runs the set: the
 * data path's gates, the external signal's sockets, and the handover of a
 * reload.  What the modes call is in policy_common.c, so that the modes
 * depend on it and this file on them, never round.
 */
#include "daemon/policy_rt.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/ext_signal.h"
#include "daemon/policy_rt_int.h"
#include "dataplane/dataplane.h"
#include "dataplane/policy_gate.h"
#include "lib/log.h"
#include "sluice_abi.h"

/* A flow waits in a policy's scheduler at most its workload's bound
 * (sl_workload_wait_limit_ns: queue_timeout, else SL_DEFERRED_WAIT_NS):
 * then it is rejected while its client still waits (Aperture bounds a
 * request's queue time by its caller's deadline as well). */

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

/* ---- life cycle ------------------------------------------------------------------- */

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

static void free_all(struct policy_rt *v, size_t n, uint64_t now)
{
	for (size_t i = 0; i < n; i++) {
		ext_close(&v[i]);
		if (v[i].mode)
			v[i].mode->release(&v[i], now);
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
	return policy < ps->n && ps->v[policy].mode->takes_slots && !ps->dropping;
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

		for (size_t j = 0; j < ps->n && !old[i]; j++)
			if (!strcmp(ps->v[j].name, pc->name))
				old[i] = &ps->v[j];
		snprintf(p->name, sizeof(p->name), "%s", pc->name);
		p->cfg = pc;
		p->ps = ps;
		p->index = (unsigned)i;
		p->mode = pc->mode == SL_POLICY_SLUICE ? &policy_mode_sluice : &policy_mode_aperture;
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
				       pc->external_socket,
				       err == -EPERM ? "its directory is writable by others, who could replace "
						       "the socket: use a private directory"
						     : strerror(-err));
				goto fail;
			}
		}
		err = p->mode->prepare(p, old[i], now);
		if (err)
			goto fail;
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
		ps->v[j].mode->reclaim(&ps->v[j], now);
	for (size_t i = 0; i < n; i++)
		if (old[i])
			v[i].mode->adopt(&v[i], old[i]);
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
	 * count of the slots held through it (its mode's start). */
	for (unsigned i = 0; i < SLUICE_MAX_POLICIES; i++)
		if (!(i < n && v[i].mode->takes_slots))
			gate_open(ps, i);
	free_all(ps->v, ps->n, now); /* replaced schedulers admit their waiting flows */
	ps->v = v;
	ps->n = n;
	for (size_t i = 0; i < n; i++)
		sl_gate_set_policy(ps->dp, (unsigned)i, v[i].name);
	for (size_t i = 0; i < n; i++)
		v[i].mode->start(&v[i], now);
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
	return policy < ps->n && ps->v[policy].mode->can_requeue(&ps->v[policy], workload, arrival_ns, now);
}

int sl_policies_requeue(struct sl_policies *ps, unsigned policy, unsigned workload, uint64_t id,
			uint64_t flow, uint64_t arrival_ns, uint64_t now)
{
	if (policy >= ps->n)
		return -ENOENT;
	return ps->v[policy].mode->requeue(&ps->v[policy], now, id, workload, flow, arrival_ns);
}

int sl_policies_arrive(struct sl_policies *ps, unsigned policy, unsigned workload, uint64_t id,
		       uint64_t now)
{
	return sl_policies_arrive_flow(ps, policy, workload, id, id, now);
}

int sl_policies_arrive_flow(struct sl_policies *ps, unsigned policy, unsigned workload, uint64_t id,
			    uint64_t flow, uint64_t now)
{
	if (policy >= ps->n)
		return -ENOENT;
	return ps->v[policy].mode->arrive(&ps->v[policy], now, id, workload, flow);
}

void sl_policies_return(struct sl_policies *ps, unsigned policy, unsigned workload, bool slot,
			uint64_t now)
{
	if (slot) {
		sl_gate_give_slot(ps->dp, policy);
		return;
	}
	if (policy < ps->n)
		ps->v[policy].mode->give_back(&ps->v[policy], workload, now);
}

void sl_policies_on_close(struct sl_policies *ps, unsigned policy, unsigned workload,
			  uint64_t duration_ns, uint64_t queued_ns, uint32_t srtt_us, bool served,
			  uint64_t now)
{
	if (policy < ps->n)
		ps->v[policy].mode->closed(&ps->v[policy], workload, duration_ns, queued_ns, srtt_us,
					   served, now);
}

void sl_policies_tick(struct sl_policies *ps, uint64_t now)
{
	for (size_t i = 0; i < ps->n; i++)
		ps->v[i].mode->tick(&ps->v[i], now);
}
