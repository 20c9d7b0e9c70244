// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Packet tests of failMode static's half-open sweep (bpf/fail_static.h):
 * with a stale heartbeat, the first SYN the static failsafe judges arms a
 * BPF timer that walks sl_conns in the kernel, expires the admitted
 * entries older than halfopen_timeout_ns that never established, and
 * returns their seats, so a level full of abandoned handshakes opens
 * again with no daemon; a fresh heartbeat stops it.  The timer is the
 * kernel's own, on its own time: the test waits for it (a few seconds).
 * Needs root and a BPF-capable kernel.
 */
#include "harness.h"

#define SEC_NS 1000000000ULL

static void put_halfopen_timeout(uint64_t ns)
{
	struct sluice_settings c;
	uint32_t zero = 0;

	assert_int_equal(bpf_map_lookup_elem(fd_config, &zero, &c), 0);
	c.halfopen_timeout_ns = ns;
	assert_int_equal(bpf_map_update_elem(fd_config, &zero, &c, BPF_ANY), 0);
}

static void put_conn(uint16_t sport, uint32_t state, uint64_t admitted_ns, struct sluice_conn_key *k)
{
	struct fr_spec s;
	struct sluice_conn c = {
		.admitted_ns = admitted_ns, .level = L_QUEUE, .seats = 1, .state = state,
		.established_ns = state == SLUICE_CONN_ESTABLISHED ? admitted_ns : 0,
		.schema = SLUICE_NONE16, .policy = SLUICE_NONE16, .workload = SLUICE_NONE16,
	};

	fr_default_v4_syn(&s);
	s.sport = sport;
	key_from_spec(&s, k);
	assert_int_equal(bpf_map_update_elem(fd_conns, k, &c, BPF_NOEXIST), 0);
}

/* Polls the global counters until static_expired reaches want (or 3 s). */
static struct sluice_stats wait_expired(uint64_t base, uint64_t want)
{
	struct sluice_stats g;
	uint64_t end = mono_ns() + 3 * SEC_NS;

	do {
		read_gstats(&g);
		if (g.static_expired - base >= want)
			break;
		usleep(20000);
	} while (mono_ns() < end);
	return g;
}

/* A full level: one abandoned handshake (admitted 10 s ago), one young
 * one, one established connection.  The sweep returns the abandoned one's
 * seat and nothing else; the next SYN gets it. */
static void test_static_sweep_returns_seats(void **state)
{
	static uint8_t in[FR_MAX_LEN], out[FR_MAX_LEN];
	struct sluice_conn_key old, young, est, probe;
	struct sluice_stats g0, g;
	struct sluice_conn c;
	struct fr_spec s;
	uint64_t now = mono_ns();
	size_t n;

	(void)state;
	setup_maps(S_HB_ZERO | S_FAIL_STATIC);
	put_halfopen_timeout(2 * SEC_NS);
	put_level(L_QUEUE, SLUICE_LEVEL_LIMITED, SLUICE_RESP_QUEUE, 3, 1, "static");
	put_conn(41001, SLUICE_CONN_ADMITTED, now - 10 * SEC_NS, &old);
	put_conn(41002, SLUICE_CONN_ADMITTED, now, &young);
	put_conn(41003, SLUICE_CONN_ESTABLISHED, now - 10 * SEC_NS, &est);
	put_seats(L_QUEUE, 3, 0);
	read_gstats(&g0);

	fr_default_v4_syn(&s);
	s.sport = 41010;
	key_from_spec(&s, &probe);
	n = fr_build(&s, in, NULL);
	/* Full: dropped, and the sweep is armed. */
	run_expect("a SYN over the limit, no daemon", in, n, out, XDP_DROP);
	g = wait_expired(g0.static_expired, 1);
	assert_int_equal(g.static_expired - g0.static_expired, 1);
	assert_true(g.static_sweeps - g0.static_sweeps >= 1);
	assert_int_not_equal(bpf_map_lookup_elem(fd_conns, &old, &c), 0);
	assert_int_equal(bpf_map_lookup_elem(fd_conns, &young, &c), 0);
	assert_int_equal(bpf_map_lookup_elem(fd_conns, &est, &c), 0);
	assert_int_equal(get_seats(L_QUEUE).seats_in_use, 2);
	assert_int_equal(get_seats(L_QUEUE).expired, 1);

	/* Its retransmit gets the seat. */
	run_expect("its retransmit", in, n, out, XDP_PASS);
	assert_int_equal(bpf_map_lookup_elem(fd_conns, &probe, &c), 0);
	assert_int_equal(get_seats(L_QUEUE).seats_in_use, 3);

	/* A daemon is back: the next run finds the heartbeat fresh and stops. */
	put_heartbeat(mono_ns() + 60 * SEC_NS); /* stays fresh for the test */
	usleep(1300000);
	read_gstats(&g0);
	usleep(1300000);
	read_gstats(&g);
	assert_int_equal(g.static_sweeps, g0.static_sweeps);
	clear_hash(fd_conns, sizeof(old), SLUICE_DEFAULT_CONNS);
}

/* Other fail modes never arm it: a stale heartbeat with failMode open
 * leaves an abandoned handshake to the daemon. */
static void test_open_mode_has_no_sweep(void **state)
{
	static uint8_t in[FR_MAX_LEN], out[FR_MAX_LEN];
	struct sluice_conn_key old;
	struct sluice_stats g0, g;
	struct sluice_conn c;
	struct fr_spec s;
	size_t n;

	(void)state;
	setup_maps(S_HB_ZERO);
	put_halfopen_timeout(2 * SEC_NS);
	put_conn(41101, SLUICE_CONN_ADMITTED, mono_ns() - 10 * SEC_NS, &old);
	read_gstats(&g0);
	fr_default_v4_syn(&s);
	s.sport = 41110;
	n = fr_build(&s, in, NULL);
	run_expect("a SYN, fail open", in, n, out, XDP_PASS);
	usleep(1300000);
	read_gstats(&g);
	assert_int_equal(g.static_sweeps, g0.static_sweeps);
	assert_int_equal(bpf_map_lookup_elem(fd_conns, &old, &c), 0);
	clear_hash(fd_conns, sizeof(old), SLUICE_DEFAULT_CONNS);
}

static const struct CMUnitTest tests[] = {
	SCENARIO(test_static_sweep_returns_seats),
	SCENARIO(test_open_mode_has_no_sweep),
};

int main(void)
{
	return cmocka_run_group_tests_name("sluice_xdp_fail_static", tests, group_setup, group_teardown);
}
