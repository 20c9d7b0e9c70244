// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The admission journey (daemon/admission.c) over real BPF maps, without
 * programs: the maps admission writes (tickets, levels) are created in the
 * kernel with the ABI's layouts, the seats array is plain memory (the
 * daemon mmaps it; the atomics are the same).  The test plays the data
 * path: it sends the events XDP and sock_ops would send, and claims
 * tickets the way XDP does.  Time is simulated.
 *
 * Journey: deferred connections queue on a full level and the waiting
 * count is published; a freed seat dispatches the first one with an admit
 * ticket carrying its seats; a claimed ticket's connection closing
 * dispatches the next; a ticket nobody claims is withdrawn and its seats
 * come back; a connection that waits past queueWaitLimit gets a reject
 * ticket; a ticket that cannot be written gives its seats back.
 * Needs root (BPF maps).
 */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "config/config.h"
#include "frames.h"
#include "daemon/admission.h"
#include "contract_keys.h"
#include "daemon/control.h"
#include "daemon/policy_rt.h"
#include "dataplane/dataplane.h"
#include "engine/plan.h"
#include "lib/log.h"
#include "sluice_abi.h"

#define SEC  1000000000ull
#define MSEC 1000000ull
#define T0   (1000 * SEC)

/* web: ceil(2 x 40 / (40 + 5)) = 2 seats; no overbooking of the ticket
 * path, so every dispatch is one freed seat. */
static const char yaml[] =
	"apiVersion: sluice/v1\n"
	"kind: Server\n"
	"metadata: {name: t}\n"
	"spec: {serverConcurrencyLimit: 2, ticketOverbooking: 0}\n"
	"---\n"
	"apiVersion: sluice/v1\n"
	"kind: PriorityLevelConfiguration\n"
	"metadata: {name: web}\n"
	"spec:\n"
	"  type: Limited\n"
	"  limited:\n"
	"    nominalConcurrencyShares: 40\n"
	"    limitResponse:\n"
	"      type: Queue\n"
	"      queuing: {queues: 8, handSize: 2, queueLengthLimit: 4, queueWaitLimit: 3s}\n"
	"---\n"
	"apiVersion: sluice/v1\n"
	"kind: FlowSchema\n"
	"metadata: {name: web}\n"
	"spec:\n"
	"  priorityLevelConfiguration: {name: web}\n"
	"  distinguisherMethod: {type: BySource}\n"
	"  rules:\n"
	"  - subjects: [{kind: Network, network: {cidrs: [0.0.0.0/0]}}]\n"
	"    destinations: [{ports: [\"8080\"]}]\n";

struct rig {
	struct sl_config *cfg;
	struct sl_plan plan;
	struct sl_dataplane dp;
	struct sluice_seats seats[SLUICE_MAX_LEVELS];
	struct sl_admission *adm;
	unsigned web; /* its slot */
	int schema;   /* the web FlowSchema's index */
};

static int map(enum bpf_map_type type, size_t key, size_t value, unsigned entries)
{
	int fd = bpf_map_create(type, NULL, (uint32_t)key, (uint32_t)value, entries, NULL);

	if (fd < 0)
		fail_msg("bpf_map_create: %s (the test needs root)", strerror(errno));
	return fd;
}

static void rig_up_with(struct rig *r, unsigned ticket_entries, const char *text)
{
	char names[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN] = {{0}};

	memset(r, 0, sizeof(*r));
	assert_int_equal(sl_config_load_buffer("t.yaml", text, strlen(text), &r->cfg, NULL), 0);
	assert_int_equal(sl_plan_build(r->cfg, names, "eth0", &r->plan, NULL), 0);
	for (size_t i = 0; i < SL_MAP__COUNT; i++)
		r->dp.maps.fd[i] = -1;
	r->dp.maps.fd[SL_MAP_TICKETS] = map(BPF_MAP_TYPE_HASH, sizeof(struct sluice_conn_key),
					    sizeof(struct sluice_ticket), ticket_entries);
	r->dp.maps.fd[SL_MAP_CONNS] = map(BPF_MAP_TYPE_HASH, sizeof(struct sluice_conn_key),
					  sizeof(struct sluice_conn), 64);
	r->dp.maps.fd[SL_MAP_LEVELS] = map(BPF_MAP_TYPE_ARRAY, 4, sizeof(struct sluice_level),
					   SLUICE_MAX_LEVELS);
	r->dp.maps.fd[SL_MAP_LVL_STATS] = map(BPF_MAP_TYPE_PERCPU_ARRAY, 4,
					      sizeof(struct sluice_level_stats), SLUICE_MAX_LEVELS);
	r->dp.maps.owned = true;
	r->dp.seats = r->seats;
	for (unsigned s = 0; s < SLUICE_MAX_LEVELS; s++)
		assert_int_equal(bpf_map_update_elem(r->dp.maps.fd[SL_MAP_LEVELS], &s,
						     &r->plan.levels[s], BPF_ANY), 0);
	for (size_t i = 0; i < r->cfg->n_levels; i++)
		if (!strcmp(r->cfg->levels[i].name, "web"))
			r->web = r->plan.slot_of[i];
	for (size_t i = 0; i < r->cfg->n_schemas; i++)
		if (!strcmp(r->cfg->schemas[i].name, "web"))
			r->schema = (int)i;
	{
		uint8_t key[16] = {1, 2, 3};

		assert_int_equal(sl_adm_create(&r->adm, &r->dp, key, T0), 0);
	}
	assert_int_equal(sl_adm_configure(r->adm, r->cfg, &r->plan, T0), 0);
}

static void rig_up(struct rig *r, unsigned ticket_entries)
{
	rig_up_with(r, ticket_entries, yaml);
	assert_int_equal(r->plan.levels[r->web].seat_limit, 2);
}

static uint32_t map_limit(const struct rig *r, unsigned slot)
{
	struct sluice_level l;

	assert_int_equal(bpf_map_lookup_elem(r->dp.maps.fd[SL_MAP_LEVELS], &slot, &l), 0);
	return l.seat_limit;
}

static void rig_down(struct rig *r)
{
	sl_adm_free(r->adm);
	for (size_t i = 0; i < SL_MAP__COUNT; i++)
		if (r->dp.maps.fd[i] >= 0)
			close(r->dp.maps.fd[i]);
	sl_plan_free(&r->plan);
	sl_config_free(r->cfg);
}

/* The 4-tuple of client 198.18.0.<host>:<port> -> 198.18.0.1:8080. */
static struct sluice_conn_key key_of(uint8_t host, uint16_t port)
{
	struct sluice_conn_key k = {.family = 4};

	k.saddr[10] = k.saddr[11] = k.daddr[10] = k.daddr[11] = 0xff;
	k.saddr[12] = k.daddr[12] = 198;
	k.saddr[13] = k.daddr[13] = 18;
	k.saddr[15] = host;
	k.daddr[15] = 1;
	k.sport = htons(port);
	k.dport = htons(8080);
	return k;
}

static struct sluice_event event(const struct rig *r, uint32_t type, struct sluice_conn_key k,
				 uint64_t ts)
{
	return (struct sluice_event){
		.ts_ns = ts, .key = k, .type = type, .level = r->web, .schema = (uint16_t)r->schema,
		.policy = SLUICE_NONE16, .workload = SLUICE_NONE16, .seats = 1,
		.gate = SLUICE_GATE_LEVEL,
	};
}

/* A deferral without a held frame (the ticket path). */
static void defer(struct rig *r, struct sluice_conn_key k, uint64_t now)
{
	struct sluice_defer_event de = {.ev = event(r, SLUICE_EV_DEFER, k, now)};

	sl_adm_defer(r->adm, &de, now);
}

/* A deferral carrying its frame: a segment from 198.18.0.<host>:<port> to
 * 198.18.0.1:8080 with these TCP flags (a SYN, or a seat-at-ACK level's
 * final ACK).  Returns the frame's length. */
static size_t defer_frame(struct rig *r, struct sluice_conn_key k, uint8_t host, uint16_t port,
			  uint8_t tcp_flags, uint64_t now)
{
	struct sluice_defer_event de = {.ev = event(r, SLUICE_EV_DEFER, k, now), .ifindex = 1};
	static uint8_t buf[FR_MAX_LEN];
	struct fr_spec sp;
	size_t n;

	fr_default_v4_syn(&sp);
	memcpy(sp.saddr4, (uint8_t[]){198, 18, 0, host}, 4);
	memcpy(sp.daddr4, (uint8_t[]){198, 18, 0, 1}, 4);
	sp.sport = port;
	sp.dport = 8080;
	sp.tcp_flags = tcp_flags;
	n = fr_build(&sp, buf, NULL);
	assert_true(n <= SLUICE_FRAME_MAX);
	memcpy(de.frame, buf, n);
	de.frame_len = (uint16_t)n;
	sl_adm_defer(r->adm, &de, now);
	return n;
}

/* Whether the daemon's dump WHAT of level web contains needle. */
static bool dump_has(const struct rig *r, const char *what, const char *needle)
{
	char *dump = NULL;
	size_t dump_len = 0;
	FILE *f = open_memstream(&dump, &dump_len);
	bool found;

	assert_non_null(f);
	sl_adm_dump(r->adm, f, what, "web");
	fclose(f);
	found = dump && strstr(dump, needle);
	free(dump);
	return found;
}

/* sock_ops closing a connection: seats back, then the close event.
 * Returns what admission says it waited in the level after its policy. */
static uint64_t close_conn(struct rig *r, struct sluice_conn_key k, uint64_t admitted, uint64_t now)
{
	struct sluice_event ev = event(r, SLUICE_EV_CLOSE, k, now);

	bpf_map_delete_elem(r->dp.maps.fd[SL_MAP_CONNS], &k);
	__atomic_fetch_sub(&r->seats[r->web].seats_in_use, 1, __ATOMIC_SEQ_CST);
	ev.duration_ns = now - admitted;
	ev.end = SLUICE_END_CLOSED;
	return sl_adm_close(r->adm, &ev, now);
}

static bool ticket(const struct rig *r, struct sluice_conn_key k, struct sluice_ticket *t)
{
	return !bpf_map_lookup_elem(r->dp.maps.fd[SL_MAP_TICKETS], &k, t);
}

/* XDP claiming an admit ticket: delete it, the seats are the connection's. */
static void claim(struct rig *r, struct sluice_conn_key k, uint64_t now)
{
	struct sluice_conn c = {.admitted_ns = now, .level = r->web, .seats = 1,
				.state = SLUICE_CONN_ADMITTED};

	assert_int_equal(bpf_map_delete_elem(r->dp.maps.fd[SL_MAP_TICKETS], &k), 0);
	__atomic_fetch_sub(&r->seats[r->web].unclaimed, 1, __ATOMIC_SEQ_CST);
	__atomic_fetch_sub(&r->seats[r->web].tickets, 1, __ATOMIC_SEQ_CST);
	assert_int_equal(bpf_map_update_elem(r->dp.maps.fd[SL_MAP_CONNS], &k, &c, BPF_NOEXIST), 0);
}

/* Which of the queued connections holds a ticket: exactly one must.
 * (Among flows of equal virtual finish time the QueueSet's round robin
 * decides, and the queues they were dealt depend on the hash key.) */
static int ticketed(const struct rig *r, const struct sluice_conn_key *keys, const bool *done,
		    int n, struct sluice_ticket *t)
{
	int found = -1;

	for (int i = 0; i < n; i++) {
		struct sluice_ticket x;

		if (done[i] || !ticket(r, keys[i], &x))
			continue;
		if (found >= 0)
			fail_msg("two queued connections got a ticket for one seat");
		found = i;
		*t = x;
	}
	return found;
}

static void test_queue_dispatch_claim_close(void **state)
{
	struct sluice_conn_key inline1 = key_of(50, 1000);
	struct sluice_conn_key q[3] = {key_of(10, 1), key_of(11, 1), key_of(12, 1)};
	bool done[3] = {false};
	struct sluice_ticket t;
	int first, second, third;
	struct rig r;

	(void)state;
	rig_up(&r, 64);
	/* Two connections admitted inline hold both seats. */
	r.seats[r.web].seats_in_use = 2;
	for (int i = 0; i < 3; i++)
		defer(&r, q[i], T0 + (uint64_t)(i + 1) * MSEC);
	assert_int_equal(r.seats[r.web].waiting, 3);
	assert_int_equal(ticketed(&r, q, done, 3, &t), -1);
	/* A retransmit of a queued connection does not queue it twice. */
	defer(&r, q[0], T0 + 4 * MSEC);
	assert_int_equal(r.seats[r.web].waiting, 3);

	/* An inline connection closes: its seat goes to one in line. */
	close_conn(&r, inline1, T0, T0 + 100 * MSEC);
	first = ticketed(&r, q, done, 3, &t);
	assert_true(first >= 0);
	assert_int_equal(t.verdict, SLUICE_TICKET_ADMIT);
	assert_int_equal(t.level, r.web);
	assert_int_equal(t.seats, 1);
	assert_int_equal(t.schema, r.schema);
	assert_int_equal(r.seats[r.web].seats_in_use, 2); /* reserved for the ticket */
	assert_int_equal(r.seats[r.web].unclaimed, 1);
	assert_int_equal(r.seats[r.web].tickets, 1); /* counted: XDP looks it up */
	assert_int_equal(r.seats[r.web].waiting, 2);

	/* Its retransmit claims it; it closes: the next one's turn. */
	claim(&r, q[first], T0 + 1001 * MSEC);
	done[first] = true;
	sl_adm_tick(r.adm, T0 + 1002 * MSEC);
	assert_int_equal(ticketed(&r, q, done, 3, &t), -1); /* no seat freed yet */
	assert_int_equal(r.seats[r.web].tickets, 0);
	close_conn(&r, q[first], T0 + 1001 * MSEC, T0 + 1200 * MSEC);
	second = ticketed(&r, q, done, 3, &t);
	assert_true(second >= 0);
	assert_int_equal(t.verdict, SLUICE_TICKET_ADMIT);
	assert_int_equal(r.seats[r.web].waiting, 1);
	assert_int_equal(r.seats[r.web].unclaimed, 1);

	/* The second never claims: withdrawn once its retransmit was due
	 * (+1 s, plus slack); its seat comes back and goes to the third. */
	sl_adm_tick(r.adm, T0 + 1900 * MSEC);
	assert_true(ticket(&r, q[second], &t)); /* not yet due */
	sl_adm_tick(r.adm, T0 + 2600 * MSEC);
	assert_false(ticket(&r, q[second], &t));
	done[second] = true;
	third = ticketed(&r, q, done, 3, &t);
	assert_true(third >= 0);
	assert_int_equal(t.verdict, SLUICE_TICKET_ADMIT);
	assert_int_equal(r.seats[r.web].seats_in_use, 2); /* one seat back, one taken */
	assert_int_equal(r.seats[r.web].unclaimed, 1);
	assert_int_equal(r.seats[r.web].tickets, 1); /* the withdrawn one uncounted */
	assert_int_equal(r.seats[r.web].waiting, 0);
	rig_down(&r);
}

static void test_wait_limit_rejects(void **state)
{
	struct sluice_conn_key a = key_of(20, 7);
	struct sluice_ticket t;
	struct rig r;

	(void)state;
	rig_up(&r, 64);
	r.seats[r.web].seats_in_use = 2;
	defer(&r, a, T0);
	sl_adm_tick(r.adm, T0 + 2900 * MSEC);
	assert_false(ticket(&r, a, &t));
	assert_int_equal(r.seats[r.web].waiting, 1);
	/* queueWaitLimit 3s: a reject ticket, the next retransmit gets a RST. */
	sl_adm_tick(r.adm, T0 + 3100 * MSEC);
	assert_true(ticket(&r, a, &t));
	assert_int_equal(t.verdict, SLUICE_TICKET_REJECT);
	assert_int_equal(t.seats, 1);
	assert_int_equal(r.seats[r.web].waiting, 0);
	assert_int_equal(r.seats[r.web].seats_in_use, 2); /* no seat for a reject */
	assert_int_equal(r.seats[r.web].tickets, 1);
	/* Nobody claims it: dropped at its deadline, uncounted. */
	sl_adm_tick(r.adm, T0 + 3100 * MSEC + 2 * SL_TICKET_TTL_NS);
	assert_false(ticket(&r, a, &t));
	assert_int_equal(r.seats[r.web].tickets, 0);
	rig_down(&r);
}

/* The loop reads the clock for its tick, then drains the ring buffer,
 * each event stamped as it is handled: a SYN queued there arrived after
 * the tick's clock.  It is not late by 2^64 ns (test_apf lost a mouse a
 * few runs in a hundred to that: refused at once, counted as a time-out),
 * and its wait limit still runs from its arrival. */
static void test_tick_older_than_arrival(void **state)
{
	struct sluice_conn_key a = key_of(21, 7);
	struct sluice_ticket t;
	struct rig r;

	(void)state;
	rig_up(&r, 64);
	r.seats[r.web].seats_in_use = 2;
	defer(&r, a, T0 + 5 * MSEC);
	sl_adm_tick(r.adm, T0);
	assert_false(ticket(&r, a, &t));
	assert_int_equal(r.seats[r.web].waiting, 1);
	sl_adm_tick(r.adm, T0 + 5 * MSEC + 2900 * MSEC);
	assert_false(ticket(&r, a, &t));
	assert_int_equal(r.seats[r.web].waiting, 1);
	sl_adm_tick(r.adm, T0 + 5 * MSEC + 3100 * MSEC);
	assert_true(ticket(&r, a, &t));
	assert_int_equal(t.verdict, SLUICE_TICKET_REJECT);
	assert_int_equal(r.seats[r.web].waiting, 0);
	rig_down(&r);
}

/* A full ticket table: the dispatched connection cannot get its ticket,
 * so it does not keep the seat either. */
static void test_ticket_write_fails(void **state)
{
	struct sluice_conn_key inline1 = key_of(50, 1000), blocker = key_of(99, 9), a = key_of(30, 1);
	struct sluice_ticket t = {.verdict = SLUICE_TICKET_REJECT, .level = 0, .seats = 1};
	struct rig r;

	(void)state;
	rig_up(&r, 1);
	assert_int_equal(bpf_map_update_elem(r.dp.maps.fd[SL_MAP_TICKETS], &blocker, &t, BPF_ANY), 0);
	r.seats[r.web].seats_in_use = 2;
	defer(&r, a, T0);
	close_conn(&r, inline1, T0 - SEC, T0 + 10 * MSEC);
	assert_false(ticket(&r, a, &t));
	assert_int_equal(r.seats[r.web].seats_in_use, 1); /* the freed seat is free */
	assert_int_equal(r.seats[r.web].unclaimed, 0);
	assert_int_equal(r.seats[r.web].tickets, 0); /* the failed write uncounted */
	rig_down(&r);
}

/* A restarted daemon finds tickets the previous one left: they belong to
 * nobody, admit tickets give their seats back. */
static void test_stale_tickets_cleared(void **state)
{
	struct sluice_conn_key k1 = key_of(40, 1), k2 = key_of(41, 1);
	struct sluice_ticket adm_t = {.verdict = SLUICE_TICKET_ADMIT, .seats = 1};
	struct sluice_ticket rej_t = {.verdict = SLUICE_TICKET_REJECT, .seats = 1};
	struct sl_admission *again;
	uint8_t key[16] = {0};
	struct sluice_ticket t;
	struct rig r;

	(void)state;
	rig_up(&r, 64);
	adm_t.level = rej_t.level = r.web;
	r.seats[r.web].seats_in_use = 3;
	r.seats[r.web].unclaimed = 5; /* whatever a crash left */
	r.seats[r.web].tickets = 7;
	assert_int_equal(bpf_map_update_elem(r.dp.maps.fd[SL_MAP_TICKETS], &k1, &adm_t, BPF_ANY), 0);
	assert_int_equal(bpf_map_update_elem(r.dp.maps.fd[SL_MAP_TICKETS], &k2, &rej_t, BPF_ANY), 0);
	assert_int_equal(sl_adm_create(&again, &r.dp, key, T0), 0);
	assert_false(ticket(&r, k1, &t));
	assert_false(ticket(&r, k2, &t));
	assert_int_equal(r.seats[r.web].seats_in_use, 2);
	assert_int_equal(r.seats[r.web].unclaimed, 0);
	assert_int_equal(r.seats[r.web].tickets, 0);
	sl_adm_free(again);
	rig_down(&r);
}

/* A deferral that carries its SYN: held (flows say so, the counts are
 * published); when its turn comes and the SYN cannot be re-injected (here:
 * no data path to run it), the connection still gets in, on a ticket, the
 * fallback counted, its seats reserved once. */
static void test_held_frame_falls_back(void **state)
{
	struct sluice_conn_key inline1 = key_of(50, 1000), a = key_of(60, 4242);
	struct sluice_ticket t;
	struct rig r;
	size_t n;

	(void)state;
	rig_up(&r, 64);
	r.seats[r.web].seats_in_use = 2;
	n = defer_frame(&r, a, 60, 4242, TH_SYN, T0);
	assert_int_equal(r.seats[r.web].waiting, 1);
	assert_int_equal(r.seats[r.web].held_syns, 1);
	assert_true(r.seats[r.web].held_bytes >= n);
	assert_true(dump_has(&r, "flows", "\"held\":true"));

	close_conn(&r, inline1, T0 - SEC, T0 + 10 * MSEC);
	assert_true(ticket(&r, a, &t));
	assert_int_equal(t.verdict, SLUICE_TICKET_ADMIT);
	assert_int_equal(r.seats[r.web].seats_in_use, 2); /* once, not twice */
	assert_int_equal(r.seats[r.web].unclaimed, 1);
	assert_int_equal(r.seats[r.web].held_syns, 0);
	assert_int_equal(r.seats[r.web].held_bytes, 0);
	assert_int_equal(r.seats[r.web].reinjected, 0);
	{
		struct sluice_conn c;

		/* the record made for the re-injection was taken back */
		assert_int_not_equal(bpf_map_lookup_elem(r.dp.maps.fd[SL_MAP_CONNS], &a, &c), 0);
	}
	assert_true(dump_has(&r, "levels", "\"inject_failed\":1"));
	rig_down(&r);
}

/* Its level seats at the ACK by the time a connection deferred at its SYN
 * gets its turn: the source proved nothing, so no seat, no ticket; the
 * queue gives up its place at once and the next in line is released the
 * same way.  One deferred at its proving ACK gets its seat as before. */
static void test_seat_at_ack_releases_unproved(void **state)
{
	struct sluice_conn_key inline1 = key_of(50, 1000), ack = key_of(70, 7000);
	struct sluice_conn_key q[3] = {key_of(10, 1), key_of(11, 1), key_of(12, 1)};
	struct sluice_level lvl;
	struct sluice_ticket t;
	bool done[3] = {false};
	struct rig r;

	(void)state;
	rig_up(&r, 64);
	r.seats[r.web].seats_in_use = 2;
	for (int i = 0; i < 3; i++)
		defer(&r, q[i], T0 + (uint64_t)(i + 1) * MSEC);
	assert_int_equal(r.seats[r.web].waiting, 3);

	assert_int_equal(bpf_map_lookup_elem(r.dp.maps.fd[SL_MAP_LEVELS], &r.web, &lvl), 0);
	lvl.flags = SLUICE_LVL_SEAT_AT_ACK | SLUICE_LVL_ACK_WATCH;
	assert_int_equal(bpf_map_update_elem(r.dp.maps.fd[SL_MAP_LEVELS], &r.web, &lvl, BPF_ANY), 0);

	close_conn(&r, inline1, T0, T0 + 100 * MSEC);
	assert_int_equal(ticketed(&r, q, done, 3, &t), -1);
	assert_int_equal(r.seats[r.web].waiting, 0);
	assert_int_equal(r.seats[r.web].seats_in_use, 1); /* only the one still open */
	assert_int_equal(r.seats[r.web].unclaimed, 0);
	assert_true(dump_has(&r, "levels", "\"released_unseated\":3"));

	/* Deferred at its ACK (its frame an ACK): seated at its turn. */
	r.seats[r.web].seats_in_use = 2;
	defer_frame(&r, ack, 70, 7000, TH_ACK, T0 + SEC);
	assert_int_equal(r.seats[r.web].waiting, 1);
	close_conn(&r, inline1, T0, T0 + SEC + 100 * MSEC);
	/* (No device to re-inject into here: the ticket carries the seat.) */
	assert_true(ticket(&r, ack, &t));
	assert_int_equal(t.verdict, SLUICE_TICKET_ADMIT);
	assert_int_equal(r.seats[r.web].unclaimed, 1);
	rig_down(&r);
}

/* A Queue level turned Reject by a reload: its old queue drains, but the
 * data path must not see it as waiting (it would reset new SYNs while
 * seats are free). */
static void test_reject_switch_publishes_no_waiting(void **state)
{
	char names[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN] = {{0}};
	struct sluice_conn_key q[2] = {key_of(10, 1), key_of(11, 1)};
	static char yaml2[sizeof(yaml) + 64];
	struct sl_config *cfg2 = NULL;
	struct sl_plan plan2;
	struct rig r;
	char *at;

	(void)state;
	rig_up(&r, 64);
	r.seats[r.web].seats_in_use = 2;
	for (int i = 0; i < 2; i++)
		defer(&r, q[i], T0 + (uint64_t)(i + 1) * MSEC);
	assert_int_equal(r.seats[r.web].waiting, 2);

	at = strstr(yaml, "      type: Queue\n");
	assert_non_null(at);
	snprintf(yaml2, sizeof(yaml2), "%.*s      type: Reject\n", (int)(at - yaml), yaml);
	at = strstr(yaml, "---\napiVersion: sluice/v1\nkind: FlowSchema");
	assert_non_null(at);
	strncat(yaml2, at, sizeof(yaml2) - strlen(yaml2) - 1);
	for (unsigned s = 0; s < SLUICE_MAX_LEVELS; s++)
		memcpy(names[s], r.plan.levels[s].name, SLUICE_LEVEL_NAME_LEN);
	assert_int_equal(sl_config_load_buffer("t2.yaml", yaml2, strlen(yaml2), &cfg2, NULL), 0);
	assert_int_equal(sl_plan_build(cfg2, names, "eth0", &plan2, NULL), 0);
	assert_int_equal(sl_adm_configure(r.adm, cfg2, &plan2, T0 + 10 * MSEC), 0);
	assert_int_equal(r.seats[r.web].waiting, 0);
	/* The QueueSet itself still holds them, draining. */
	assert_true(dump_has(&r, "levels", "\"waiting\":2"));
	rig_down(&r);
	sl_plan_free(&plan2);
	sl_config_free(cfg2);
}

/* APF allocates again the moment the configuration changes, from the
 * demand statistics it has: a reload keeps what a busy level borrowed
 * (it does not fall back to its nominal limit until the next period). */
static void test_reload_keeps_borrowing(void **state)
{
	static const char two[] =
		"apiVersion: sluice/v1\nkind: Server\nmetadata: {name: t}\n"
		"spec: {serverConcurrencyLimit: 20, ticketOverbooking: 0}\n"
		"---\napiVersion: sluice/v1\nkind: PriorityLevelConfiguration\nmetadata: {name: lender}\n"
		"spec:\n  type: Limited\n  limited: {nominalConcurrencyShares: 50, lendablePercent: 80, "
		"limitResponse: {type: Reject}}\n"
		"---\napiVersion: sluice/v1\nkind: PriorityLevelConfiguration\nmetadata: {name: web}\n"
		"spec:\n  type: Limited\n  limited: {nominalConcurrencyShares: 50, limitResponse: {type: Reject}}\n"
		"---\napiVersion: sluice/v1\nkind: FlowSchema\nmetadata: {name: web}\n"
		"spec:\n  priorityLevelConfiguration: {name: web}\n"
		"  rules:\n  - subjects: [{kind: Network, network: {cidrs: [0.0.0.0/0]}}]\n"
		"    destinations: [{ports: [\"8080\"]}]\n";
	char names[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN] = {{0}};
	struct sl_config *cfg2 = NULL;
	struct sl_plan plan2;
	uint32_t nominal, borrowed;
	struct rig r;

	(void)state;
	rig_up_with(&r, 64, two);
	nominal = r.plan.limits[r.web].nominal;
	/* web busy at its limit for a borrowing period: it borrows. */
	for (uint64_t t = T0; t <= T0 + 10 * SEC; t += 100 * MSEC) {
		r.seats[r.web].seats_in_use = map_limit(&r, r.web);
		sl_adm_tick(r.adm, t);
	}
	borrowed = map_limit(&r, r.web);
	assert_true(borrowed > nominal);

	/* The same file reloaded: the plan is written as it is (NominalCL;
	 * sluiced carries the current limit in it, sl_adm_level_limit), then
	 * admission configured: the allocation runs at once and writes. */
	for (unsigned s = 0; s < SLUICE_MAX_LEVELS; s++)
		memcpy(names[s], r.plan.levels[s].name, SLUICE_LEVEL_NAME_LEN);
	assert_int_equal(sl_config_load_buffer("t2.yaml", two, strlen(two), &cfg2, NULL), 0);
	assert_int_equal(sl_plan_build(cfg2, names, "eth0", &plan2, NULL), 0);
	assert_int_equal(plan2.levels[r.web].seat_limit, nominal); /* what the plan alone says */
	assert_int_equal(sl_adm_level_limit(r.adm, r.web), borrowed);
	for (unsigned s = 0; s < SLUICE_MAX_LEVELS; s++)
		assert_int_equal(bpf_map_update_elem(r.dp.maps.fd[SL_MAP_LEVELS], &s, &plan2.levels[s],
						     BPF_ANY), 0);
	assert_int_equal(sl_adm_configure(r.adm, cfg2, &plan2, T0 + 10 * SEC + 50 * MSEC), 0);
	assert_true(map_limit(&r, r.web) > nominal);
	rig_down(&r);
	sl_plan_free(&plan2);
	sl_config_free(cfg2);
}

/* ---- a policy in front of the level ------------------------------------------- */

/* The rig's level behind a policy in mode sluice that selects port 8080. */
static const char policy_yaml[] =
	"---\n"
	"apiVersion: sluice/v1\n"
	"kind: AverageLatencySchedulingPolicy\n"
	"metadata: {name: svc}\n"
	"spec:\n"
	"  adaptive: {max_in_flight: 1000}\n"
	"  load_scheduling_core:\n"
	"    aimd_load_scheduler:\n"
	"      load_scheduler:\n"
	"        selectors: [{label_matcher: {match_labels: {dst.port: \"8080\"}}}]\n";

struct policy_rig {
	struct rig r;
	struct sluice_policy_gate gates[SLUICE_MAX_POLICIES];
	struct sl_policies *ps;
	char *text;
};

static void policy_rig_up(struct policy_rig *pr)
{
	struct sl_policy_hooks hooks;

	memset(pr, 0, sizeof(*pr));
	assert_true(asprintf(&pr->text, "%s%s", yaml, policy_yaml) > 0);
	rig_up_with(&pr->r, 64, pr->text);
	pr->r.dp.gates = pr->gates;
	sl_adm_policy_hooks(pr->r.adm, &hooks);
	assert_int_equal(sl_policies_create(&pr->ps, &pr->r.dp, &hooks), 0);
	assert_int_equal(sl_policies_configure(pr->ps, pr->r.cfg, T0), 0);
	sl_adm_set_policies(pr->r.adm, pr->ps);
	assert_int_equal(pr->gates[0].mode, SLUICE_POLICY_LIMIT);
}

static void policy_rig_down(struct policy_rig *pr)
{
	sl_adm_set_policies(pr->r.adm, NULL);
	sl_policies_free(pr->ps);
	rig_down(&pr->r);
	free(pr->text);
}

/* A deferral the policy's gate held back. */
static void defer_at_policy(struct policy_rig *pr, struct sluice_conn_key k, uint64_t now)
{
	struct sluice_defer_event de = {.ev = event(&pr->r, SLUICE_EV_DEFER, k, now)};

	de.ev.policy = 0;
	de.ev.gate = SLUICE_GATE_POLICY;
	sl_adm_defer(pr->r.adm, &de, now);
}

/* The level's wait bound runs from the first deferral: 1.5 s in the
 * policy's queue, then the level's queue, and the refusal comes 3 s after
 * the SYN (queueWaitLimit), not 3 s after it reached the level (two waits
 * in series would outlast a client's patience). */
static void test_policy_wait_counts_toward_level_bound(void **state)
{
	struct sluice_conn_key a = key_of(20, 7);
	struct sluice_ticket t;
	struct policy_rig pr;

	(void)state;
	policy_rig_up(&pr);
	pr.r.seats[pr.r.web].seats_in_use = 2;                  /* the level is full */
	pr.gates[0].slots_held = pr.gates[0].slot_limit;        /* and the policy's limit */
	defer_at_policy(&pr, a, T0);
	assert_int_equal(pr.gates[0].waiting, 1);
	assert_int_equal(pr.r.seats[pr.r.web].waiting, 0);
	/* a slot frees at 1.5 s: the policy admits it, the level queues it */
	pr.gates[0].slots_held--;
	sl_policies_tick(pr.ps, T0 + 1500 * MSEC);
	assert_int_equal(pr.gates[0].waiting, 0);
	assert_int_equal(pr.r.seats[pr.r.web].waiting, 1);
	sl_adm_tick(pr.r.adm, T0 + 2900 * MSEC);
	assert_false(ticket(&pr.r, a, &t));
	sl_adm_tick(pr.r.adm, T0 + 3100 * MSEC);
	assert_true(ticket(&pr.r, a, &t));
	assert_int_equal(t.verdict, SLUICE_TICKET_REJECT);
	assert_int_equal(pr.r.seats[pr.r.web].waiting, 0);
	/* its policy slot came back with the refusal */
	assert_int_equal(pr.gates[0].slots_held, pr.gates[0].slot_limit - 1);
	policy_rig_down(&pr);
}

/* A cut below what the policy holds recalls its admissions still waiting
 * in the level's queue: out of the level, slots back, waiting again in the
 * policy's queue. */
static void test_cut_recalls_level_waiters(void **state)
{
	struct sluice_conn_key q[3] = {key_of(10, 1), key_of(11, 1), key_of(12, 1)};
	struct policy_rig pr;
	uint64_t now = T0;
	int64_t held;

	(void)state;
	policy_rig_up(&pr);
	/* A baseline: a second of 50 ms connections served at once. */
	for (int i = 0; i < 100; i++) {
		now += 10 * MSEC;
		sl_policies_on_close(pr.ps, 0, SLUICE_NONE16, 50 * MSEC, 0, 0, true, now);
		if (i % 10 == 9)
			sl_policies_tick(pr.ps, now);
	}
	assert_int_equal(pr.gates[0].slot_limit, (int64_t)(1u << 24)); /* pass-through */
	/* 17 connections hold the policy's slots and the level's seats; three
	 * more pass the policy and wait in the level's queue. */
	pr.gates[0].slots_held = 17;
	pr.r.seats[pr.r.web].seats_in_use = 2;
	for (int i = 0; i < 3; i++)
		defer_at_policy(&pr, q[i], now);
	assert_int_equal(pr.r.seats[pr.r.web].waiting, 3);
	assert_int_equal(pr.gates[0].slots_held, 20);
	assert_int_equal(pr.gates[0].waiting, 0);
	/* Their wait shows: 450 ms in the level before 50 ms of service. */
	for (int i = 0; i < 10; i++)
		sl_policies_on_close(pr.ps, 0, SLUICE_NONE16, 50 * MSEC, 450 * MSEC, 0, true,
				     now + 150 * MSEC);
	pr.gates[0].slots_held = 20; /* (the closes above stand for others) */
	sl_policies_tick(pr.ps, now + 150 * MSEC);
	held = pr.gates[0].slots_held;
	assert_true(pr.gates[0].slot_limit < 20);
	assert_int_equal(pr.r.seats[pr.r.web].waiting, 0);
	assert_int_equal(pr.gates[0].waiting, 3);
	assert_int_equal(held, 17);
	policy_rig_down(&pr);
}

/* What the policy's signal gets as the wait downstream: from its
 * admission to the level's dispatch, not to the seat; an admit ticket's
 * wait for the client's retransmit is no load the limit caused. */
static void test_downstream_wait_ends_at_dispatch(void **state)
{
	struct sluice_conn_key a = key_of(20, 7), seated = key_of(50, 1000);
	struct sluice_ticket t;
	struct policy_rig pr;

	(void)state;
	policy_rig_up(&pr);
	pr.r.seats[pr.r.web].seats_in_use = 2;
	defer_at_policy(&pr, a, T0); /* pass-through: the policy admits, the level queues */
	assert_int_equal(pr.r.seats[pr.r.web].waiting, 1);
	/* a seat frees 300 ms later: its admit ticket */
	close_conn(&pr.r, seated, T0 - SEC, T0 + 300 * MSEC);
	assert_true(ticket(&pr.r, a, &t));
	assert_int_equal(t.verdict, SLUICE_TICKET_ADMIT);
	/* its retransmit claims it a second later; it closes after 100 ms */
	claim(&pr.r, a, T0 + 1300 * MSEC);
	assert_int_equal(close_conn(&pr.r, a, T0 + 1300 * MSEC, T0 + 1400 * MSEC), 300 * MSEC);
	policy_rig_down(&pr);
}

/* The daemon's dump WHAT, every level, parsed. */
static json_t *dump_json(const struct rig *r, const char *what)
{
	char *dump = NULL;
	size_t dump_len = 0;
	FILE *f = open_memstream(&dump, &dump_len);
	json_error_t err;
	json_t *root;

	assert_non_null(f);
	sl_adm_dump(r->adm, f, what, NULL);
	fclose(f);
	root = json_loads(dump, 0, &err);
	if (!root)
		fail_msg("dump %s is no JSON (%s): %s", what, err.text, dump);
	free(dump);
	return root;
}

/* The control replies sluicectl reads are the contract's (control.h),
 * the dumps and a flow's hand:
 * every key of its lists written, and nothing else, with a connection
 * waiting so that every optional part is there. */
static void test_dump_keys_are_the_contract(void **state)
{
	struct sluice_conn_key a = key_of(60, 4242);
	json_t *root, *row;
	size_t i;
	struct rig r;

	(void)state;
	rig_up(&r, 64);
	r.seats[r.web].seats_in_use = 2;
	defer_frame(&r, a, 60, 4242, TH_SYN, T0);
	assert_int_equal(r.seats[r.web].waiting, 1);

	root = dump_json(&r, "levels");
	assert_contract_keys(root, sl_levels_reply_keys, SL_LEVELS_REPLY_NKEYS, "levels reply");
	assert_true(json_array_size(json_object_get(root, SL_LEVELS_REPLY_KEY(LEVELS))) >= 2);
	json_array_foreach(json_object_get(root, SL_LEVELS_REPLY_KEY(LEVELS)), i, row) {
		assert_contract_keys(row, sl_level_keys, SL_LEVEL_NKEYS, "level");
		assert_contract_keys(json_object_get(row, SL_LEVEL_KEY(TICKET_FALLBACKS)), sl_fallback_keys,
			    SL_FALLBACK_NKEYS, "level's ticket_fallbacks");
	}
	json_decref(root);

	root = dump_json(&r, "queues");
	assert_contract_keys(root, sl_queues_reply_keys, SL_QUEUES_REPLY_NKEYS, "queues reply");
	assert_true(json_array_size(json_object_get(root, SL_QUEUES_REPLY_KEY(QUEUES))) >= 1);
	json_array_foreach(json_object_get(root, SL_QUEUES_REPLY_KEY(QUEUES)), i, row)
		assert_contract_keys(row, sl_queue_keys, SL_QUEUE_NKEYS, "queue");
	json_decref(root);

	{
		char *text = NULL;
		size_t len = 0;
		const char *why = NULL;
		FILE *f = open_memstream(&text, &len);

		assert_int_equal(sl_adm_hand(r.adm, f, "web", "198.18.0.60", &why), 0);
		fclose(f);
		root = json_loads(text, 0, NULL);
		free(text);
		assert_non_null(root);
		assert_contract_keys(root, sl_hand_keys, SL_HAND_NKEYS, "hand");
		json_decref(root);
	}

	root = dump_json(&r, "flows");
	assert_contract_keys(root, sl_flows_reply_keys, SL_FLOWS_REPLY_NKEYS, "flows reply");
	assert_int_equal(json_array_size(json_object_get(root, SL_FLOWS_REPLY_KEY(FLOWS))), 1);
	json_array_foreach(json_object_get(root, SL_FLOWS_REPLY_KEY(FLOWS)), i, row)
		assert_contract_keys(row, sl_flow_keys, SL_FLOW_NKEYS, "flow");
	json_decref(root);
	rig_down(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reload_keeps_borrowing),
		cmocka_unit_test(test_reject_switch_publishes_no_waiting),
		cmocka_unit_test(test_seat_at_ack_releases_unproved),
		cmocka_unit_test(test_queue_dispatch_claim_close),
		cmocka_unit_test(test_wait_limit_rejects),
		cmocka_unit_test(test_tick_older_than_arrival),
		cmocka_unit_test(test_ticket_write_fails),
		cmocka_unit_test(test_stale_tickets_cleared),
		cmocka_unit_test(test_held_frame_falls_back),
		cmocka_unit_test(test_dump_keys_are_the_contract),
		cmocka_unit_test(test_policy_wait_counts_toward_level_bound),
		cmocka_unit_test(test_cut_recalls_level_waiters),
		cmocka_unit_test(test_downstream_wait_ends_at_dispatch),
	};

	sl_log_init("test_admission", SL_LOG_ERROR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
