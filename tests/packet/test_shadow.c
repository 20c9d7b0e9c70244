// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Packet tests of the sluice XDP program: Shadow mode: every verdict counted, none enforced.
 *
 * Each test runs the real program through BPF_PROG_TEST_RUN (tests/packet/
 * harness.h).  Needs root and a BPF-capable kernel.
 */
#include "harness.h"

static void shadow_on(unsigned flags)
{
	put_config((flags & S_TIMEOUT0) ? 0 : HB_TIMEOUT,
		   (flags & S_FAIL_CLOSED) ? SLUICE_FAIL_CLOSED : SLUICE_FAIL_OPEN, 0,
		   SLUICE_CFG_ACTIVE | SLUICE_CFG_SHADOW);
}

/* Full Queue and Reject levels: the SYNs pass, are tracked (seats above
 * the limit), and count as deferred / rejected and shadow-passed; no
 * event, no RST. */
static void test_shadow_levels(void **state)
{
	static uint8_t f[FR_MAX_LEN], out[FR_MAX_LEN];
	struct sluice_conn_key k = v4_key(52001, P_QUEUE);
	struct sluice_conn c;
	struct snap s0, s1;
	size_t n;

	(void)state;
	setup_maps(S_FULL);
	shadow_on(0);
	drain_events();
	take_snap(&s0);
	n = policy_syn(f, 52001, P_QUEUE);
	run_expect("shadow, full Queue level", f, n, out, XDP_PASS);
	n = policy_syn(f, 52002, P_REJECT);
	run_expect("shadow, full Reject level", f, n, out, XDP_PASS);
	take_snap(&s1);
	assert_int_equal(s1.l[L_QUEUE].deferred - s0.l[L_QUEUE].deferred, 1);
	assert_int_equal(s1.l[L_QUEUE].shadow_passed - s0.l[L_QUEUE].shadow_passed, 1);
	assert_int_equal(s1.l[L_QUEUE].admitted - s0.l[L_QUEUE].admitted, 0);
	assert_int_equal(s1.l[L_REJECT].rejected - s0.l[L_REJECT].rejected, 1);
	assert_int_equal(s1.g.shadow_passed - s0.g.shadow_passed, 2);
	assert_int_equal(s1.seats[L_QUEUE].seats_in_use, LIMIT + 1);
	assert_int_equal(s1.seats[L_REJECT].seats_in_use, LIMIT + 1);
	assert_int_equal(bpf_map_lookup_elem(fd_conns, &k, &c), 0);
	assert_int_equal(c.level, L_QUEUE);
	ring_buffer__consume(rb);
	assert_int_equal(nevents, 0);
	/* Its retransmit is an admitted connection's. */
	n = policy_syn(f, 52001, P_QUEUE);
	run_expect("shadow, retransmit", f, n, out, XDP_PASS);
	assert_int_equal(get_seats(L_QUEUE).seats_in_use, LIMIT + 1);
}

/* A throttled policy without credit and a fail-closed failsafe: counted,
 * not enforced. */
static void test_shadow_policy_and_failsafe(void **state)
{
	static uint8_t f[FR_MAX_LEN], out[FR_MAX_LEN];
	struct snap s0, s1;
	size_t n;

	(void)state;
	setup_maps(0);
	shadow_on(0);
	put_policy_port(P_POL, L_QUEUE, 0);
	put_wl_tokens(0, 1000);
	put_gate(SLUICE_POLICY_THROTTLE, 0, 0);
	drain_events();
	take_snap(&s0);
	n = policy_syn(f, 52010, P_POL);
	run_expect("shadow, throttled policy, no credit", f, n, out, XDP_PASS);
	take_snap(&s1);
	assert_int_equal(s1.g.policy_deferred - s0.g.policy_deferred, 1);
	assert_int_equal(s1.g.shadow_passed - s0.g.shadow_passed, 1);
	assert_int_equal(wl_stats(0).deferred, 1);
	assert_int_equal(s1.l[L_QUEUE].admitted - s0.l[L_QUEUE].admitted, 1);
	ring_buffer__consume(rb);
	assert_int_equal(nevents, 0);

	setup_maps(S_HB_OLD | S_FAIL_CLOSED);
	shadow_on(S_FAIL_CLOSED);
	take_snap(&s0);
	n = policy_syn(f, 52011, P_QUEUE);
	run_expect("shadow, fail closed, stale heartbeat", f, n, out, XDP_PASS);
	take_snap(&s1);
	assert_int_equal(s1.g.failsafe_closed - s0.g.failsafe_closed, 1);
	assert_int_equal(s1.g.shadow_passed - s0.g.shadow_passed, 1);
	assert_int_equal(s1.seats[L_QUEUE].seats_in_use - s0.seats[L_QUEUE].seats_in_use, 1);
}

static const struct CMUnitTest tests[] = {
	SCENARIO(test_shadow_levels),
	SCENARIO(test_shadow_policy_and_failsafe),
};

int main(void)
{
	return cmocka_run_group_tests_name("sluice_xdp_shadow", tests, group_setup, group_teardown);
}
