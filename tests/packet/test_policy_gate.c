// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Packet tests of the sluice XDP program: The policy gate (AverageLatencySchedulingPolicy): pass, throttle with
 * credit, waiting flows, a level that refuses, fail-open, no dispatcher,
 * exempt levels and tickets.
 *
 * Each test runs the real program through BPF_PROG_TEST_RUN (tests/packet/
 * harness.h).  Needs root and a BPF-capable kernel.
 */
#include "harness.h"

/* PASS mode admits without tokens and counts the admission and its
 * tokens for the daemon's incoming rate. */
static void test_policy_pass(void **state)
{
	static uint8_t f[FR_MAX_LEN], out[FR_MAX_LEN];
	struct sluice_wl_stats ws;
	size_t n;

	(void)state;
	setup_maps(0);
	put_policy_port(P_POL, L_QUEUE, 5);
	put_gate(SLUICE_POLICY_PASS, 0, 0);
	put_wl_tokens(5, 2500);
	n = policy_syn(f, 51000, P_POL);
	run_expect("pass mode", f, n, out, XDP_PASS);
	ws = wl_stats(5);
	assert_int_equal(ws.syns, 1);
	assert_int_equal(ws.inline_admitted, 1);
	assert_int_equal(ws.inline_mtok, 2500);
	assert_int_equal(ws.deferred, 0);
	assert_int_equal(gate_credit(), 0);
	assert_int_equal(get_seats(L_QUEUE).seats_in_use, 1);
}

/* THROTTLE admits while the credit holds strictly more than the SYN's
 * tokens, then defers with a POLICY event; the level sees nothing. */
static void test_policy_throttle_credit(void **state)
{
	static uint8_t f[FR_MAX_LEN], out[FR_MAX_LEN];
	const struct sluice_event *ev;
	struct sluice_wl_stats ws;
	struct snap s0, s1;
	size_t n;

	(void)state;
	setup_maps(0);
	put_level(L_QUEUE, SLUICE_LEVEL_LIMITED, SLUICE_RESP_QUEUE, 100, 1, "web-queue");
	put_policy_port(P_POL, L_QUEUE, SLUICE_NONE16);
	put_wl_tokens(SLUICE_WL_DEFAULT, 1000);
	put_gate(SLUICE_POLICY_THROTTLE, 0, 2500);
	drain_events();
	n = policy_syn(f, 51001, P_POL);
	run_expect("credit 2.5, tokens 1", f, n, out, XDP_PASS);
	assert_int_equal(gate_credit(), 1500);
	n = policy_syn(f, 51002, P_POL);
	run_expect("credit 1.5, tokens 1", f, n, out, XDP_PASS);
	assert_int_equal(gate_credit(), 500);
	take_snap(&s0);
	n = policy_syn(f, 51003, P_POL);
	run_expect("credit 0.5, tokens 1: deferred", f, n, out, XDP_DROP);
	take_snap(&s1);
	assert_int_equal(gate_credit(), 500);
	ev = one_event("policy deferral");
	assert_int_equal(ev->type, SLUICE_EV_DEFER);
	assert_int_equal(ev->gate, SLUICE_GATE_POLICY);
	assert_int_equal(ev->policy, POL);
	assert_int_equal(ev->workload, SLUICE_NONE16);
	assert_int_equal(ev->level, L_QUEUE);
	assert_int_equal(s1.g.policy_deferred - s0.g.policy_deferred, 1);
	assert_int_equal(s1.l[L_QUEUE].deferred - s0.l[L_QUEUE].deferred, 0);
	assert_int_equal(s1.seats[L_QUEUE].seats_in_use, 2);
	ws = wl_stats(SLUICE_WL_DEFAULT);
	assert_int_equal(ws.syns, 3);
	assert_int_equal(ws.inline_admitted, 2);
	assert_int_equal(ws.inline_mtok, 2000);
	assert_int_equal(ws.deferred, 1);
	/* Exactly the tokens: still not enough (available > tokens). */
	put_gate(SLUICE_POLICY_THROTTLE, 0, 1000);
	n = policy_syn(f, 51004, P_POL);
	run_expect("credit == tokens: deferred", f, n, out, XDP_DROP);
	assert_int_equal(gate_credit(), 1000);
}

/* LIMIT mode (sluice's adaptive limit in flight): one slot a connection,
 * held when fewer than the limit are, counted by the gate and flagged on
 * the entry, given back by whoever deletes it (here the client's RST);
 * the limit reached, or flows waiting: a POLICY deferral.  The workload's
 * tokens do not matter.  A gate opened meanwhile (its policy removed or
 * replaced) still counts what its holders give back. */
static void test_policy_limit_slots(void **state)
{
	static uint8_t f[FR_MAX_LEN], out[FR_MAX_LEN];
	struct sluice_conn_key k = v4_key(51030, P_POL);
	const struct sluice_event *ev;
	struct sluice_conn c;
	struct fr_spec sp;
	size_t n;

	(void)state;
	setup_maps(0);
	put_level(L_QUEUE, SLUICE_LEVEL_LIMITED, SLUICE_RESP_QUEUE, 100, 1, "web-queue");
	put_policy_port(P_POL, L_QUEUE, SLUICE_NONE16);
	put_wl_tokens(SLUICE_WL_DEFAULT, 0);
	put_slot_gate(SLUICE_POLICY_LIMIT, 0, 3, 5); /* 3 held by earlier connections, a limit of 5 */
	drain_events();
	n = policy_syn(f, 51030, P_POL);
	run_expect("two slots free", f, n, out, XDP_PASS);
	assert_int_equal(get_gate().slots_held, 4);
	assert_int_equal(bpf_map_lookup_elem(fd_conns, &k, &c), 0);
	assert_true(c.flags & SLUICE_CONNF_POLICY_SLOT);
	n = policy_syn(f, 51031, P_POL);
	run_expect("exactly one slot free: admitted", f, n, out, XDP_PASS);
	assert_int_equal(get_gate().slots_held, 5);
	n = policy_syn(f, 51032, P_POL);
	run_expect("none free: deferred", f, n, out, XDP_DROP);
	assert_int_equal(get_gate().slots_held, 5);
	ev = one_event("limit deferral");
	assert_int_equal(ev->gate, SLUICE_GATE_POLICY);
	assert_int_equal(get_seats(L_QUEUE).seats_in_use, 2);
	/* The first one's client resets: its slot comes back with its seat. */
	fr_default_v4_syn(&sp);
	sp.sport = 51030;
	sp.dport = P_POL;
	sp.tcp_flags = TH_RST;
	sp.seq += 1;
	n = fr_build(&sp, f, NULL);
	run_expect("the client's RST", f, n, out, XDP_PASS);
	assert_int_equal(get_gate().slots_held, 4);
	assert_int_equal(get_seats(L_QUEUE).seats_in_use, 1);
	/* Cut below what is held: nothing is admitted. */
	put_slot_gate(SLUICE_POLICY_LIMIT, 0, 4, 2);
	n = policy_syn(f, 51035, P_POL);
	run_expect("limit cut below the count held", f, n, out, XDP_DROP);
	assert_int_equal(get_gate().slots_held, 4);
	/* Flows waiting in the daemon: deferred although a slot is free. */
	put_slot_gate(SLUICE_POLICY_LIMIT, 1, 4, 5);
	n = policy_syn(f, 51033, P_POL);
	run_expect("flows waiting", f, n, out, XDP_DROP);
	assert_int_equal(get_gate().slots_held, 4);
	/* A level that refuses after the slot was taken: the slot goes back. */
	put_slot_gate(SLUICE_POLICY_LIMIT, 0, 4, 5);
	put_level(L_QUEUE, SLUICE_LEVEL_LIMITED, SLUICE_RESP_QUEUE, 1, 1, "web-queue");
	n = policy_syn(f, 51034, P_POL);
	run_expect("level full", f, n, out, XDP_DROP);
	assert_int_equal(get_gate().slots_held, 4);
	/* The gate opened (PASS): the second connection's RST still gives
	 * its slot back to the count, which the next limit starts from. */
	put_slot_gate(SLUICE_POLICY_PASS, 0, 4, 5);
	sp.sport = 51031;
	n = fr_build(&sp, f, NULL);
	run_expect("a holder's RST through an open gate", f, n, out, XDP_PASS);
	assert_int_equal(get_gate().slots_held, 3);
	assert_int_equal(get_gate().credit_mtok, 0);
}

/* While flows wait in the daemon's scheduler nobody jumps the queue. */
static void test_policy_waiting(void **state)
{
	static uint8_t f[FR_MAX_LEN], out[FR_MAX_LEN];
	size_t n;

	(void)state;
	setup_maps(0);
	put_policy_port(P_POL, L_QUEUE, 0);
	put_wl_tokens(0, 1000);
	put_gate(SLUICE_POLICY_THROTTLE, 1, 1000000);
	n = policy_syn(f, 51010, P_POL);
	run_expect("flows waiting", f, n, out, XDP_DROP);
	assert_int_equal(gate_credit(), 1000000);
	assert_int_equal(wl_stats(0).deferred, 1);
	assert_int_equal(get_seats(L_QUEUE).seats_in_use, 0);
}

/* The level refuses after the policy took tokens: they go back, and the
 * event names the level's gate (Queue: defer; Reject: RST). */
static void test_policy_level_refuses(void **state)
{
	static uint8_t f[FR_MAX_LEN], out[FR_MAX_LEN];
	const struct sluice_event *ev;
	struct snap s0, s1;
	size_t n;

	(void)state;
	setup_maps(S_FULL);
	put_policy_port(P_POL, L_QUEUE, 0);
	put_policy_port(P_POL + 1, L_REJECT, 0);
	put_wl_tokens(0, 1000);
	put_gate(SLUICE_POLICY_THROTTLE, 0, 5000);
	drain_events();
	take_snap(&s0);
	n = policy_syn(f, 51020, P_POL);
	run_expect("queue level full", f, n, out, XDP_DROP);
	take_snap(&s1);
	assert_int_equal(gate_credit(), 5000);
	assert_int_equal(s1.g.policy_refunds - s0.g.policy_refunds, 1);
	assert_int_equal(s1.g.policy_deferred - s0.g.policy_deferred, 0);
	assert_int_equal(s1.l[L_QUEUE].deferred - s0.l[L_QUEUE].deferred, 1);
	ev = one_event("level deferral");
	assert_int_equal(ev->gate, SLUICE_GATE_LEVEL);
	assert_int_equal(ev->policy, POL);
	drain_events();
	n = policy_syn(f, 51021, P_POL + 1);
	run_expect("reject level full", f, n, out, XDP_TX);
	assert_int_equal(gate_credit(), 5000);
	ev = one_event("level reject");
	assert_int_equal(ev->type, SLUICE_EV_REJECT);
	assert_int_equal(ev->gate, SLUICE_GATE_LEVEL);
	assert_int_equal(wl_stats(0).inline_admitted, 0);
}

/* A stale heartbeat opens the gate: the daemon that would queue is gone.
 * A workload whose connections take no tokens is never held back. */
static void test_policy_fail_open_and_zero_tokens(void **state)
{
	static uint8_t f[FR_MAX_LEN], out[FR_MAX_LEN];
	size_t n;

	(void)state;
	setup_maps(S_HB_OLD);
	put_policy_port(P_POL, L_QUEUE, 0);
	put_wl_tokens(0, 1000);
	put_gate(SLUICE_POLICY_THROTTLE, 1, 0);
	n = policy_syn(f, 51030, P_POL);
	run_expect("stale heartbeat", f, n, out, XDP_PASS);
	assert_int_equal(gate_credit(), 0);

	put_heartbeat(mono_ns());
	n = policy_syn(f, 51031, P_POL);
	run_expect("fresh heartbeat, no credit", f, n, out, XDP_DROP);
	put_wl_tokens(0, 0);
	put_gate(SLUICE_POLICY_THROTTLE, 0, 0);
	n = policy_syn(f, 51032, P_POL);
	run_expect("zero tokens", f, n, out, XDP_PASS);
	assert_int_equal(wl_stats(0).inline_admitted, 2);
	assert_int_equal(wl_stats(0).inline_mtok, 1000);
}

/* A throttled gate with flows waiting opens once nobody dispatches them. */
static void test_policy_no_dispatcher(void **state)
{
	static uint8_t f[FR_MAX_LEN], out[FR_MAX_LEN];
	size_t n;

	(void)state;
	dispatch_timeout = DISPATCH_TIMEOUT;
	setup_maps(0);
	put_policy_port(P_POL, L_QUEUE, 0);
	put_wl_tokens(0, 1000);
	put_gate(SLUICE_POLICY_THROTTLE, 1, 5000);
	n = policy_syn(f, 51050, P_POL);
	run_expect("dispatcher alive, flows waiting: deferred", f, n, out, XDP_DROP);
	put_heartbeat(mono_ns() - 2 * DISPATCH_TIMEOUT);
	n = policy_syn(f, 51051, P_POL);
	run_expect("no dispatcher: the gate is open", f, n, out, XDP_PASS);
	assert_int_equal(gate_credit(), 5000); /* open, not taking credit */
	dispatch_timeout = 0;
}

/* Both gates: an exempt level does not exempt the connection from its
 * policy; a ticket (the daemon passed it through both) does. */
static void test_policy_exempt_and_ticket(void **state)
{
	static uint8_t f[FR_MAX_LEN], out[FR_MAX_LEN];
	struct sluice_conn_key k = v4_key(51041, P_POL);
	size_t n;

	(void)state;
	setup_maps(0);
	put_policy_port(P_POL, L_EXEMPT, 0);
	put_wl_tokens(0, 1000);
	put_gate(SLUICE_POLICY_THROTTLE, 0, 0);
	n = policy_syn(f, 51040, P_POL);
	run_expect("exempt level, throttled policy", f, n, out, XDP_DROP);
	n = policy_syn(f, 51041, P_POL);
	put_seats(L_EXEMPT, 1, 0);
	put_ticket(&k, SLUICE_TICKET_ADMIT, L_EXEMPT, 1);
	run_expect("admit ticket", f, n, out, XDP_PASS);
	assert_int_equal(gate_credit(), 0);
	assert_int_equal(count_hash(fd_tickets, sizeof(k)), 0);
}

static const struct CMUnitTest tests[] = {
	SCENARIO(test_policy_pass),
	SCENARIO(test_policy_throttle_credit),
	SCENARIO(test_policy_waiting),
	SCENARIO(test_policy_limit_slots),
	SCENARIO(test_policy_level_refuses),
	SCENARIO(test_policy_fail_open_and_zero_tokens),
	SCENARIO(test_policy_no_dispatcher),
	SCENARIO(test_policy_exempt_and_ticket),
};

int main(void)
{
	return cmocka_run_group_tests_name("sluice_xdp_policy_gate", tests, group_setup, group_teardown);
}
