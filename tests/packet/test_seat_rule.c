// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The seat rule's two APF cases (Kubernetes queueset.go, fits): a
 * connection wider than its level's limit runs when nothing else holds a
 * seat there, and a limit of 0 still admits one at a time, so a level with
 * no share is slow, not closed, and can build the demand to borrow.  What
 * the QueueSet does for queued connections, the data path does inline.
 */
#include "harness.h"

static size_t syn_to(uint8_t *f, struct fr_spec *sp, uint16_t sport, uint16_t dport)
{
	fr_default_v4_syn(sp);
	sp->sport = sport;
	sp->dport = dport;
	return fr_build(sp, f, NULL);
}

static void test_zero_limit_admits_one_at_a_time(void **state)
{
	static uint8_t f[FR_MAX_LEN], out[FR_MAX_LEN];
	struct fr_spec sp;
	size_t n;

	(void)state;
	setup_maps(0);
	put_level(L_REJECT, SLUICE_LEVEL_LIMITED, SLUICE_RESP_REJECT, 0, 1, "jail");
	n = syn_to(f, &sp, 50400, P_REJECT);
	run_expect("limit 0, nothing held", f, n, out, XDP_PASS);
	assert_int_equal(get_seats(L_REJECT).seats_in_use, 1);
	n = syn_to(f, &sp, 50401, P_REJECT);
	run_expect("limit 0, one held", f, n, out, XDP_TX);
	assert_int_equal(get_seats(L_REJECT).seats_in_use, 1);
}

static void test_wide_connection_runs_alone(void **state)
{
	static uint8_t f[FR_MAX_LEN], out[FR_MAX_LEN];
	struct sluice_conn_key k = v4_key(50410, P_REJECT);
	struct sluice_conn c;
	struct fr_spec sp;
	size_t n;

	(void)state;
	setup_maps(0);
	/* 3 seats a connection on a 2-seat level. */
	put_level(L_REJECT, SLUICE_LEVEL_LIMITED, SLUICE_RESP_REJECT, 2, 3, "narrow");
	put_port(P_REJECT, L_REJECT);
	n = syn_to(f, &sp, 50410, P_REJECT);
	run_expect("wider than the limit, level empty", f, n, out, XDP_PASS);
	assert_int_equal(get_seats(L_REJECT).seats_in_use, 3);
	assert_int_equal(bpf_map_lookup_elem(fd_conns, &k, &c), 0);
	assert_int_equal(c.seats, 3);
	n = syn_to(f, &sp, 50411, P_REJECT);
	run_expect("wider than the limit, level busy", f, n, out, XDP_TX);
	assert_int_equal(get_seats(L_REJECT).seats_in_use, 3);
	/* Not wider than the limit: the plain rule, busy or not. */
	put_level(L_REJECT, SLUICE_LEVEL_LIMITED, SLUICE_RESP_REJECT, 4, 3, "wide-enough");
	put_seats(L_REJECT, 2, 0);
	n = syn_to(f, &sp, 50412, P_REJECT);
	run_expect("3 more on 2 of 4", f, n, out, XDP_TX);
	put_seats(L_REJECT, 0, 0);
	n = syn_to(f, &sp, 50413, P_REJECT);
	run_expect("3 on 0 of 4", f, n, out, XDP_PASS);
}

static const struct CMUnitTest tests[] = {
	SCENARIO(test_zero_limit_admits_one_at_a_time),
	SCENARIO(test_wide_connection_runs_alone),
};

int main(void)
{
	return cmocka_run_group_tests_name("sluice_xdp_seat_rule", tests, group_setup, group_teardown);
}
