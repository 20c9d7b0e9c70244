// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "dataplane/policy_gate.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sluice_seats.h"

static struct sluice_policy_gate *gate(const struct sl_dataplane *dp, unsigned policy)
{
	return dp && dp->gates && policy < SLUICE_MAX_POLICIES ? &dp->gates[policy] : NULL;
}

static uint32_t clamp32(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

bool sl_gate_present(const struct sl_dataplane *dp, unsigned policy)
{
	return gate(dp, policy) != NULL;
}

int64_t sl_gate_take_back(struct sl_dataplane *dp, unsigned policy)
{
	struct sluice_policy_gate *g = gate(dp, policy);

	return g ? __atomic_exchange_n(&g->credit_mtok, 0, __ATOMIC_SEQ_CST) : 0;
}

void sl_gate_pass(struct sl_dataplane *dp, unsigned policy, uint64_t waiting)
{
	struct sluice_policy_gate *g = gate(dp, policy);

	if (!g)
		return;
	__atomic_store_n(&g->mode, SLUICE_POLICY_PASS, __ATOMIC_SEQ_CST);
	__atomic_store_n(&g->waiting, clamp32(waiting), __ATOMIC_SEQ_CST);
}

void sl_gate_throttle(struct sl_dataplane *dp, unsigned policy, uint64_t waiting,
		      int64_t grant_mtok)
{
	struct sluice_policy_gate *g = gate(dp, policy);

	if (!g)
		return;
	__atomic_store_n(&g->waiting, clamp32(waiting), __ATOMIC_SEQ_CST);
	if (grant_mtok > 0) {
		__atomic_fetch_add(&g->credit_mtok, grant_mtok, __ATOMIC_SEQ_CST);
		__atomic_fetch_add(&g->grants, 1, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&g->mode, SLUICE_POLICY_THROTTLE, __ATOMIC_SEQ_CST);
}

void sl_gate_limit(struct sl_dataplane *dp, unsigned policy, uint64_t waiting, uint64_t limit)
{
	struct sluice_policy_gate *g = gate(dp, policy);
	int64_t l = limit > INT64_MAX ? INT64_MAX : (int64_t)limit;

	if (!g)
		return;
	__atomic_store_n(&g->waiting, clamp32(waiting), __ATOMIC_SEQ_CST);
	if (__atomic_exchange_n(&g->slot_limit, l, __ATOMIC_SEQ_CST) != l)
		__atomic_fetch_add(&g->grants, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&g->mode, SLUICE_POLICY_LIMIT, __ATOMIC_SEQ_CST);
}

bool sl_gate_take_slot(struct sl_dataplane *dp, unsigned policy)
{
	struct sluice_policy_gate *g = gate(dp, policy);

	return g && sluice_hold_slot(&g->slots_held, __atomic_load_n(&g->slot_limit, __ATOMIC_SEQ_CST));
}

void sl_gate_give_slot(struct sl_dataplane *dp, unsigned policy)
{
	struct sluice_policy_gate *g = gate(dp, policy);

	if (g)
		__atomic_fetch_add(&g->slots_held, -1, __ATOMIC_SEQ_CST);
}

void sl_gate_open(struct sl_dataplane *dp, unsigned policy)
{
	struct sluice_policy_gate *g = gate(dp, policy);

	if (!g)
		return;
	/* slots_held stays: the connections holding slots give them back
	 * here, whoever the gate serves next. */
	__atomic_store_n(&g->mode, SLUICE_POLICY_PASS, __ATOMIC_SEQ_CST);
	__atomic_store_n(&g->waiting, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&g->credit_mtok, 0, __ATOMIC_SEQ_CST);
}

void sl_gate_set_policy(struct sl_dataplane *dp, unsigned index, const char *name)
{
	struct sluice_policy_gate *g = gate(dp, index);

	/* XDP never reads it: plain stores are enough. */
	if (g)
		snprintf(g->policy, sizeof(g->policy), "%s", name);
}

int sl_gate_set_tokens(struct sl_dataplane *dp, unsigned policy, unsigned slot, uint32_t mtok)
{
	uint32_t key = policy * SLUICE_WL_SLOTS + slot;

	if (!dp || policy >= SLUICE_MAX_POLICIES || slot >= SLUICE_WL_SLOTS)
		return -EINVAL;
	return bpf_map_update_elem(dp->maps.fd[SL_MAP_WL_TOKENS], &key, &mtok, BPF_ANY) ? -errno : 0;
}

int sl_gate_read(const struct sl_dataplane *dp, unsigned policy, struct sl_gate_view *out)
{
	const struct sluice_policy_gate *g = gate(dp, policy);

	if (!g)
		return -ENOENT;
	out->throttle = __atomic_load_n(&g->mode, __ATOMIC_RELAXED) == SLUICE_POLICY_THROTTLE;
	out->limit = __atomic_load_n(&g->mode, __ATOMIC_RELAXED) == SLUICE_POLICY_LIMIT;
	out->credit_mtok = __atomic_load_n(&g->credit_mtok, __ATOMIC_RELAXED);
	out->slots_held = __atomic_load_n(&g->slots_held, __ATOMIC_RELAXED);
	out->slot_limit = __atomic_load_n(&g->slot_limit, __ATOMIC_RELAXED);
	memcpy(out->policy, g->policy, sizeof(out->policy));
	out->policy[sizeof(out->policy) - 1] = '\0';
	out->grants = __atomic_load_n(&g->grants, __ATOMIC_RELAXED);
	return 0;
}
