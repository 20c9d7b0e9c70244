// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Packet tests of the sluice XDP program: Tickets, the daemon's verdicts for deferred connections, and what the
 * data path does when no daemon dispatches (nothing black-holed).
 *
 * Each test runs the real program through BPF_PROG_TEST_RUN (tests/packet/
 * harness.h).  Needs root and a BPF-capable kernel.
 */
#include "harness.h"

/* A deferred SYN's retransmit passes on an ADMIT ticket even though the
 * level is full: the daemon reserved the seats.  The ticket is claimed
 * once; the connection records the ticket's class. */
static void test_ticket_admit(void **state)
{
	static uint8_t f[FR_MAX_LEN], out[FR_MAX_LEN];
	struct sluice_conn_key k = v4_key(50010, P_QUEUE);
	struct fr_spec sp;
	struct sluice_conn c;
	struct snap s0, s1;
	size_t n;

	(void)state;
	setup_maps(S_FULL);
	fr_default_v4_syn(&sp);
	sp.sport = 50010;
	sp.dport = P_QUEUE;
	n = fr_build(&sp, f, NULL);
	run_expect("full level, no ticket: deferred", f, n, out, XDP_DROP);

	/* The daemon dispatches it: seats reserved, ticket written. */
	put_seats(L_QUEUE, LIMIT + 1, 0);
	put_ticket(&k, SLUICE_TICKET_ADMIT, L_QUEUE, 1);
	take_snap(&s0);
	run_expect("retransmit with an admit ticket", f, n, out, XDP_PASS);
	take_snap(&s1);
	assert_int_equal(s1.g.tickets_admitted - s0.g.tickets_admitted, 1);
	assert_int_equal(s1.l[L_QUEUE].admitted - s0.l[L_QUEUE].admitted, 1);
	assert_int_equal(s1.seats[L_QUEUE].seats_in_use, LIMIT + 1); /* no second reservation */
	assert_int_equal(count_hash(fd_tickets, sizeof(k)), 0);
	assert_int_equal(s0.seats[L_QUEUE].tickets, 1);
	assert_int_equal(s1.seats[L_QUEUE].tickets, 0); /* the claim uncounts it */
	assert_int_equal(bpf_map_lookup_elem(fd_conns, &k, &c), 0);
	assert_int_equal(c.level, L_QUEUE);
	assert_int_equal(c.seats, 1);
	assert_int_equal(c.schema, 7);
	/* The next retransmit is an admitted connection's. */
	run_expect("retransmit after admission", f, n, out, XDP_PASS);
	take_snap(&s0);
	assert_int_equal(s0.l[L_QUEUE].retransmits - s1.l[L_QUEUE].retransmits, 1);
	assert_int_equal(s0.seats[L_QUEUE].seats_in_use, LIMIT + 1);
}

/* A REJECT ticket turns the retransmit into a RST, once. */
static void test_ticket_reject(void **state)
{
	static uint8_t f[FR_MAX_LEN], out[FR_MAX_LEN], want[FR_MAX_LEN];
	struct sluice_conn_key k = v4_key(50011, P_QUEUE);
	struct fr_spec sp;
	struct snap s0, s1;
	size_t n, wn;
	uint32_t got;

	(void)state;
	setup_maps(S_FULL);
	fr_default_v4_syn(&sp);
	sp.sport = 50011;
	sp.dport = P_QUEUE;
	n = fr_build(&sp, f, NULL);
	put_ticket(&k, SLUICE_TICKET_REJECT, L_QUEUE, 1);
	take_snap(&s0);
	got = run_expect("retransmit with a reject ticket", f, n, out, XDP_TX);
	take_snap(&s1);
	wn = expected_rst_from_spec(&sp, 0, want);
	assert_int_equal(got, wn);
	assert_memory_equal(out, want, wn);
	assert_int_equal(s1.g.tickets_rejected - s0.g.tickets_rejected, 1);
	assert_int_equal(s1.l[L_QUEUE].rejected - s0.l[L_QUEUE].rejected, 1);
	assert_int_equal(s1.seats[L_QUEUE].seats_in_use, s0.seats[L_QUEUE].seats_in_use);
	assert_int_equal(count_hash(fd_tickets, sizeof(k)), 0);
	assert_int_equal(s1.seats[L_QUEUE].tickets, 0); /* the claim uncounts it */
	/* Claimed: the next retransmit is deferred again, not reset. */
	run_expect("retransmit after the reject ticket", f, n, out, XDP_DROP);
}

/* A ticket for another 4-tuple does nothing for this one. */
static void test_ticket_other_tuple(void **state)
{
	static uint8_t f[FR_MAX_LEN], out[FR_MAX_LEN];
	struct sluice_conn_key other = v4_key(50013, P_QUEUE);
	struct fr_spec sp;
	size_t n;

	(void)state;
	setup_maps(S_FULL);
	fr_default_v4_syn(&sp);
	sp.sport = 50012;
	sp.dport = P_QUEUE;
	n = fr_build(&sp, f, NULL);
	put_ticket(&other, SLUICE_TICKET_ADMIT, L_QUEUE, 1);
	run_expect("no ticket for this tuple", f, n, out, XDP_DROP);
	assert_int_equal(count_hash(fd_tickets, sizeof(other)), 1);
}

/* While a level counts no ticket, its SYNs do not look one up (the
 * normal day's SYN skips that hash lookup): a ticket nobody counted is
 * never claimed, and counting it makes the same retransmit claim it. */
static void test_ticket_uncounted_not_looked_up(void **state)
{
	static uint8_t f[FR_MAX_LEN], out[FR_MAX_LEN];
	struct sluice_conn_key k = v4_key(50014, P_QUEUE);
	struct sluice_seats s;
	size_t n;

	(void)state;
	setup_maps(S_FULL);
	n = queue_syn(f, 50014);
	put_ticket_uncounted(&k, SLUICE_TICKET_REJECT, L_QUEUE, 1);
	run_expect("a ticket its level does not count: not looked up, deferred", f, n, out, XDP_DROP);
	assert_int_equal(count_hash(fd_tickets, sizeof(k)), 1);
	s = get_seats(L_QUEUE);
	s.tickets = 1;
	assert_int_equal(bpf_map_update_elem(fd_seats, &(uint32_t){L_QUEUE}, &s, BPF_ANY), 0);
	run_expect("the same ticket counted: claimed, RST", f, n, out, XDP_TX);
	assert_int_equal(count_hash(fd_tickets, sizeof(k)), 0);
	assert_int_equal(get_seats(L_QUEUE).tickets, 0);
}

/* Waiting connections hold back new SYNs while the daemon dispatches; once
 * its heartbeat is older than the dispatch timeout (long before the
 * failsafe), nobody will dispatch them: SYNs within the limit get in. */
static void test_no_dispatcher_ignores_waiting(void **state)
{
	static uint8_t f[FR_MAX_LEN], out[FR_MAX_LEN];
	struct snap s0, s1;
	size_t n;

	(void)state;
	dispatch_timeout = DISPATCH_TIMEOUT;
	setup_maps(S_WAITING);
	n = queue_syn(f, 50100);
	drain_events();
	run_expect("fresh heartbeat, connections waiting: deferred", f, n, out, XDP_DROP);
	ring_buffer__consume(rb);
	assert_int_equal(nevents, 1);
	assert_int_equal(events[0].type, SLUICE_EV_DEFER);

	put_heartbeat(mono_ns() - 2 * DISPATCH_TIMEOUT);
	n = queue_syn(f, 50101);
	take_snap(&s0);
	run_expect("heartbeat past the dispatch timeout: admitted within the limit", f, n, out,
		   XDP_PASS);
	take_snap(&s1);
	assert_int_equal(s1.l[L_QUEUE].admitted - s0.l[L_QUEUE].admitted, 1);
	assert_int_equal(s1.seats[L_QUEUE].seats_in_use, s0.seats[L_QUEUE].seats_in_use + 1);
	assert_int_equal(s1.g.failsafe_open, s0.g.failsafe_open); /* not the failsafe */
	dispatch_timeout = 0;
}

/* Over the limit without a dispatcher: dropped (the retransmit retries),
 * no event (nobody would queue it), counted; seats of unclaimed tickets
 * are lent out, at most the limit again. */
static void test_no_dispatcher_over_limit(void **state)
{
	static uint8_t f[FR_MAX_LEN], out[FR_MAX_LEN];
	struct snap s0, s1;
	size_t n;

	(void)state;
	dispatch_timeout = DISPATCH_TIMEOUT;
	setup_maps(S_FULL | S_WAITING);
	put_heartbeat(mono_ns() - 2 * DISPATCH_TIMEOUT);
	n = queue_syn(f, 50110);
	drain_events();
	take_snap(&s0);
	run_expect("full, no dispatcher: dropped", f, n, out, XDP_DROP);
	take_snap(&s1);
	ring_buffer__consume(rb);
	assert_int_equal(nevents, 0);
	assert_int_equal(s1.g.undispatched - s0.g.undispatched, 1);
	assert_int_equal(s1.l[L_QUEUE].deferred - s0.l[L_QUEUE].deferred, 1);
	assert_int_equal(s1.seats[L_QUEUE].seats_in_use, LIMIT);

	/* Two seats sit on tickets nobody claimed: two SYNs get them. */
	put_seats_unclaimed(L_QUEUE, LIMIT, 1, 2);
	run_expect("lent seat 1", f, queue_syn(f, 50111), out, XDP_PASS);
	run_expect("lent seat 2", f, queue_syn(f, 50112), out, XDP_PASS);
	run_expect("no third", f, queue_syn(f, 50113), out, XDP_DROP);
	assert_int_equal(get_seats(L_QUEUE).seats_in_use, LIMIT + 2);

	/* Lending is capped at the limit, whatever the count says. */
	put_seats_unclaimed(L_QUEUE, LIMIT, 0, 1000);
	for (uint16_t i = 0; i < LIMIT; i++)
		run_expect("lent up to the limit", f, queue_syn(f, (uint16_t)(50120 + i)), out,
			   XDP_PASS);
	run_expect("not beyond twice the limit", f, queue_syn(f, 50140), out, XDP_DROP);

	/* The dispatcher is back: the limit holds again. */
	put_heartbeat(mono_ns());
	put_seats_unclaimed(L_QUEUE, LIMIT, 0, 2);
	run_expect("dispatcher back: unclaimed seats are the tickets' again", f,
		   queue_syn(f, 50141), out, XDP_DROP);
	dispatch_timeout = 0;
}

/* A claimed admit ticket is no longer unclaimed. */
static void test_claim_counts_unclaimed(void **state)
{
	static uint8_t f[FR_MAX_LEN], out[FR_MAX_LEN];
	struct sluice_conn_key k = v4_key(50150, P_QUEUE);
	size_t n;

	(void)state;
	setup_maps(S_FULL);
	n = queue_syn(f, 50150);
	put_seats_unclaimed(L_QUEUE, LIMIT + 1, 0, 3);
	put_ticket(&k, SLUICE_TICKET_ADMIT, L_QUEUE, 1);
	run_expect("claim", f, n, out, XDP_PASS);
	assert_int_equal(get_seats(L_QUEUE).unclaimed, 2);
	assert_int_equal(get_seats(L_QUEUE).seats_in_use, LIMIT + 1);
}

static const struct CMUnitTest tests[] = {
	SCENARIO(test_ticket_admit),
	SCENARIO(test_ticket_reject),
	SCENARIO(test_ticket_other_tuple),
	SCENARIO(test_ticket_uncounted_not_looked_up),
	SCENARIO(test_no_dispatcher_ignores_waiting),
	SCENARIO(test_no_dispatcher_over_limit),
	SCENARIO(test_claim_counts_unclaimed),
};

int main(void)
{
	return cmocka_run_group_tests_name("sluice_xdp_tickets", tests, group_setup, group_teardown);
}
