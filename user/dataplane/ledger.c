// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "dataplane/ledger.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <string.h>

#include "dataplane/policy_gate.h"
#include "lib/log.h"
#include "sluice_seats.h"

static struct sluice_seats *seats_of(const struct sl_dataplane *dp, unsigned level)
{
	return dp->seats && level < SLUICE_MAX_LEVELS ? &dp->seats[level] : NULL;
}

static void add(__u64 *counter, int64_t delta)
{
	if (delta >= 0)
		__atomic_fetch_add(counter, (uint64_t)delta, __ATOMIC_SEQ_CST);
	else
		__atomic_fetch_sub(counter, (uint64_t)-delta, __ATOMIC_SEQ_CST);
}

int sl_ticket_admit(struct sl_dataplane *dp, const struct sluice_conn_key *key,
		    const struct sluice_ticket *t, bool seats_reserved)
{
	struct sluice_seats *s = seats_of(dp, t->level);
	int err;

	if (!s)
		return -EINVAL;
	/* Seats and the unclaimed count first: the data path may claim the
	 * ticket the moment it exists. */
	if (!seats_reserved)
		add(&s->seats_in_use, t->seats);
	add(&s->unclaimed, t->seats);
	add(&s->tickets, 1);
	if (!bpf_map_update_elem(dp->maps.fd[SL_MAP_TICKETS], key, t, BPF_ANY))
		return 0;
	err = -errno;
	pr_warn("write admit ticket: %s", strerror(-err));
	add(&s->tickets, -1);
	add(&s->unclaimed, -(int64_t)t->seats);
	add(&s->seats_in_use, -(int64_t)t->seats);
	return err;
}

int sl_ticket_reject(struct sl_dataplane *dp, const struct sluice_conn_key *key,
		     const struct sluice_ticket *t)
{
	struct sluice_seats *s = seats_of(dp, t->level);

	if (!s)
		return -EINVAL;
	/* Counted first: the data path looks only while the count says so. */
	add(&s->tickets, 1);
	if (bpf_map_update_elem(dp->maps.fd[SL_MAP_TICKETS], key, t, BPF_ANY)) {
		int err = -errno;

		add(&s->tickets, -1);
		pr_warn("write reject ticket: %s", strerror(-err));
		return err;
	}
	return 0;
}

/* We deleted a ticket of this level. */
static void ticket_gone(struct sl_dataplane *dp, unsigned level)
{
	struct sluice_seats *s = seats_of(dp, level);

	if (s)
		add(&s->tickets, -1);
}

/* What a connection (or an admit ticket) holds goes back: its seats, and
 * its policy slot when it has one. */
static void give_back(struct sl_dataplane *dp, unsigned level, uint32_t seats, uint16_t policy,
		      uint16_t flags)
{
	sl_seats_release(dp, level, seats);
	if (flags & SLUICE_CONNF_POLICY_SLOT)
		sl_gate_give_slot(dp, policy);
}

bool sl_ticket_withdraw(struct sl_dataplane *dp, const struct sluice_conn_key *key, unsigned level,
			uint32_t seats)
{
	struct sluice_seats *s = seats_of(dp, level);
	struct sluice_ticket t = {0};

	/* Read first for its policy slot: a claim between the read and the
	 * delete makes the delete fail, and the connection owns it all. */
	bpf_map_lookup_elem(dp->maps.fd[SL_MAP_TICKETS], key, &t);
	if (bpf_map_delete_elem(dp->maps.fd[SL_MAP_TICKETS], key))
		return false; /* claimed (or gone): the connection owns the seats */
	ticket_gone(dp, level);
	if (s)
		add(&s->unclaimed, -(int64_t)seats);
	give_back(dp, level, seats, t.policy, t.flags);
	return true;
}

void sl_ticket_drop(struct sl_dataplane *dp, const struct sluice_conn_key *key)
{
	struct sluice_ticket t;

	if (!bpf_map_lookup_elem(dp->maps.fd[SL_MAP_TICKETS], key, &t) &&
	    !bpf_map_delete_elem(dp->maps.fd[SL_MAP_TICKETS], key))
		ticket_gone(dp, t.level);
}

bool sl_ticket_exists(const struct sl_dataplane *dp, const struct sluice_conn_key *key)
{
	struct sluice_ticket t;

	return !bpf_map_lookup_elem(dp->maps.fd[SL_MAP_TICKETS], key, &t);
}

int sl_conn_admit(struct sl_dataplane *dp, const struct sluice_conn_key *key,
		  const struct sluice_conn *c, bool seats_reserved)
{
	struct sluice_seats *s = seats_of(dp, c->level);
	int err;

	if (!s)
		return -EINVAL;
	if (!seats_reserved)
		add(&s->seats_in_use, c->seats);
	if (!bpf_map_update_elem(dp->maps.fd[SL_MAP_CONNS], key, c, BPF_NOEXIST))
		return 0;
	err = -errno;
	add(&s->seats_in_use, -(int64_t)c->seats);
	return err;
}

/* The handshake sweep expired one of the level's connections. */
static void count_expired(struct sl_dataplane *dp, unsigned level)
{
	struct sluice_seats *s = seats_of(dp, level);

	if (s)
		__atomic_fetch_add(&s->expired, 1, __ATOMIC_RELAXED);
}

bool sl_conn_release(struct sl_dataplane *dp, const struct sluice_conn_key *key,
		     const struct sluice_conn *seen)
{
	struct sluice_conn c;

	/* Whoever deletes the entry releases its seats. */
	if (bpf_map_lookup_elem(dp->maps.fd[SL_MAP_CONNS], key, &c))
		return false;
	if (seen && c.admitted_ns != seen->admitted_ns)
		return false; /* a newer connection on the same 4-tuple */
	if (bpf_map_delete_elem(dp->maps.fd[SL_MAP_CONNS], key))
		return false;
	give_back(dp, c.level, c.seats, c.policy, c.flags);
	return true;
}

bool sl_conn_unadmit(struct sl_dataplane *dp, const struct sluice_conn_key *key)
{
	struct sluice_conn c;

	if (bpf_map_lookup_elem(dp->maps.fd[SL_MAP_CONNS], key, &c) ||
	    bpf_map_delete_elem(dp->maps.fd[SL_MAP_CONNS], key))
		return false;
	sl_seats_release(dp, c.level, c.seats); /* its policy slot stays the caller's */
	return true;
}

bool sl_conn_expire(struct sl_dataplane *dp, const struct sluice_conn_key *key)
{
	int fd = dp->maps.fd[SL_MAP_CONNS];
	struct sluice_conn c;

	if (bpf_map_lookup_elem(fd, key, &c) || c.state != SLUICE_CONN_ADMITTED ||
	    bpf_map_delete_elem(fd, key))
		return false;
	give_back(dp, c.level, c.seats, c.policy, c.flags);
	count_expired(dp, c.level);
	return true;
}

bool sl_conn_tracked(const struct sl_dataplane *dp, const struct sluice_conn_key *key)
{
	struct sluice_conn c;

	return !bpf_map_lookup_elem(dp->maps.fd[SL_MAP_CONNS], key, &c);
}

unsigned sl_tickets_clear_stale(struct sl_dataplane *dp)
{
	int fd = dp->maps.fd[SL_MAP_TICKETS];
	struct sluice_conn_key key;
	struct sluice_ticket t;
	unsigned n = 0, tries = 0;

	/* Bounded: the table holds at most its size, and each round deletes
	 * the first key (or the data path claimed it meanwhile). */
	while (!bpf_map_get_next_key(fd, NULL, &key) && tries++ < 2 * SLUICE_DEFAULT_TICKETS) {
		if (bpf_map_lookup_elem(fd, &key, &t) || bpf_map_delete_elem(fd, &key))
			continue;
		n++;
		ticket_gone(dp, t.level);
		if (t.verdict == SLUICE_TICKET_ADMIT && seats_of(dp, t.level)) {
			add(&dp->seats[t.level].unclaimed, -(int64_t)t.seats);
			give_back(dp, t.level, t.seats, t.policy, t.flags);
		}
	}
	/* No ticket left: nothing is unclaimed and no ticket is counted,
	 * whatever a daemon that died between its count and its ticket write
	 * left behind. */
	if (dp->seats && bpf_map_get_next_key(fd, NULL, &key))
		for (unsigned s = 0; s < SLUICE_MAX_LEVELS; s++) {
			__atomic_store_n(&dp->seats[s].unclaimed, 0, __ATOMIC_SEQ_CST);
			__atomic_store_n(&dp->seats[s].tickets, 0, __ATOMIC_SEQ_CST);
		}
	return n;
}

bool sl_seats_reserve(struct sl_dataplane *dp, unsigned level, uint32_t seats, uint64_t limit)
{
	struct sluice_seats *s = seats_of(dp, level);

	return s && sluice_reserve(&s->seats_in_use, seats, limit);
}

void sl_seats_release(struct sl_dataplane *dp, unsigned level, uint32_t seats)
{
	struct sluice_seats *s = seats_of(dp, level);

	if (s)
		add(&s->seats_in_use, -(int64_t)seats);
}

void sl_seats_read(const struct sl_dataplane *dp, unsigned level, struct sluice_seats *out)
{
	const struct sluice_seats *s = seats_of(dp, level);

	memset(out, 0, sizeof(*out));
	if (!s)
		return;
	/* Field by field: XDP and sock_ops move them all the time. */
	out->seats_in_use = __atomic_load_n(&s->seats_in_use, __ATOMIC_RELAXED);
	out->waiting = __atomic_load_n(&s->waiting, __ATOMIC_RELAXED);
	out->expired = __atomic_load_n(&s->expired, __ATOMIC_RELAXED);
	out->unclaimed = __atomic_load_n(&s->unclaimed, __ATOMIC_RELAXED);
	out->reinjected = __atomic_load_n(&s->reinjected, __ATOMIC_RELAXED);
	out->reset_held = __atomic_load_n(&s->reset_held, __ATOMIC_RELAXED);
	out->held_syns = __atomic_load_n(&s->held_syns, __ATOMIC_RELAXED);
	out->held_bytes = __atomic_load_n(&s->held_bytes, __ATOMIC_RELAXED);
	out->reset_failed = __atomic_load_n(&s->reset_failed, __ATOMIC_RELAXED);
	out->tickets = __atomic_load_n(&s->tickets, __ATOMIC_RELAXED);
}

uint64_t sl_seats_in_use(const struct sl_dataplane *dp, unsigned level)
{
	const struct sluice_seats *s = seats_of(dp, level);

	return s ? __atomic_load_n(&s->seats_in_use, __ATOMIC_RELAXED) : 0;
}

uint64_t sl_seats_unclaimed(const struct sl_dataplane *dp, unsigned level)
{
	const struct sluice_seats *s = seats_of(dp, level);

	return s ? __atomic_load_n(&s->unclaimed, __ATOMIC_RELAXED) : 0;
}

void sl_seats_publish_waiting(struct sl_dataplane *dp, unsigned level, uint64_t waiting)
{
	struct sluice_seats *s = seats_of(dp, level);

	if (s)
		__atomic_store_n(&s->waiting, waiting, __ATOMIC_RELAXED);
}

void sl_seats_publish_held(struct sl_dataplane *dp, unsigned level, uint64_t frames,
			   uint64_t bytes)
{
	struct sluice_seats *s = seats_of(dp, level);

	if (s) {
		__atomic_store_n(&s->held_syns, frames, __ATOMIC_RELAXED);
		__atomic_store_n(&s->held_bytes, bytes, __ATOMIC_RELAXED);
	}
}

void sl_seats_count_reinjected(struct sl_dataplane *dp, unsigned level)
{
	struct sluice_seats *s = seats_of(dp, level);

	if (s)
		add(&s->reinjected, 1);
}

void sl_seats_count_reset(struct sl_dataplane *dp, unsigned level)
{
	struct sluice_seats *s = seats_of(dp, level);

	if (s)
		add(&s->reset_held, 1);
}

void sl_seats_count_reset_failed(struct sl_dataplane *dp, unsigned level)
{
	struct sluice_seats *s = seats_of(dp, level);

	if (s)
		add(&s->reset_failed, 1);
}
