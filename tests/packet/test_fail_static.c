// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Packet tests of failMode static's half-open sweep (bpf/fail_static.h):
 * with a stale heartbeat, the first SYN the static failsafe judges arms a
 * BPF timer that walks sl_conns in the kernel, expires the admitted
 * entries older than halfopen_timeout_ns that never established, and
 * returns their seats, so a level full of abandoned handshakes opens
 * again with no daemon; a fresh heartbeat stops it.  What a run costs is
 * bounded by what is due: whole walks of the table only at the outage's
 * start, a time-out later, and after the FIFO of the outage's admissions
 * overflowed; otherwise the FIFO alone.  The timer is the kernel's own, on
 * its own time: the tests wait for it (a few seconds each).
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
	uint32_t out_len, verdict;
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
	/* Full, no daemon: the SYN arms the sweep, a timer the kernel runs on
	 * its own time.  Mostly the SYN is judged first and dropped, and its
	 * retransmit gets the seat the sweep returns; where the timer fires
	 * within the program (an emulated guest's interrupt lands there), the
	 * expired seat is this SYN's at once.  Either way the stale handshake
	 * goes and the new one is seated, within the limit. */
	assert_int_equal(run_xdp(in, n, out, &out_len, &verdict), 0);
	if (verdict != XDP_DROP && verdict != XDP_PASS)
		fail_msg("a SYN over the limit, no daemon: verdict %s", verdict_name(verdict));
	if (verdict == XDP_PASS) {
		/* Admitted only on a seat the sweep had returned already. */
		read_gstats(&g);
		if (g.static_expired == g0.static_expired)
			fail_msg("a SYN over the limit was admitted before any seat expired");
	}
	g = wait_expired(g0.static_expired, 1);
	assert_int_equal(g.static_expired - g0.static_expired, 1);
	assert_true(g.static_sweeps - g0.static_sweeps >= 1);
	assert_int_not_equal(bpf_map_lookup_elem(fd_conns, &old, &c), 0);
	assert_int_equal(bpf_map_lookup_elem(fd_conns, &young, &c), 0);
	assert_int_equal(bpf_map_lookup_elem(fd_conns, &est, &c), 0);
	assert_int_equal(get_seats(L_QUEUE).expired, 1);
	if (verdict == XDP_DROP) {
		assert_int_equal(get_seats(L_QUEUE).seats_in_use, 2);
		/* Its retransmit gets the seat. */
		run_expect("its retransmit", in, n, out, XDP_PASS);
	}
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

/* Polls until pred(g) holds (or `secs` seconds); the last reading. */
static struct sluice_stats wait_for(bool (*pred)(const struct sluice_stats *, const void *),
				    const void *arg, unsigned secs)
{
	struct sluice_stats g;
	uint64_t end = mono_ns() + secs * SEC_NS;

	do {
		read_gstats(&g);
		if (pred(&g, arg))
			break;
		usleep(20000);
	} while (mono_ns() < end);
	return g;
}

static bool walks_at_least(const struct sluice_stats *g, const void *want)
{
	return g->static_walks >= *(const uint64_t *)want;
}

static bool expired_at_least(const struct sluice_stats *g, const void *want)
{
	return g->static_expired >= *(const uint64_t *)want;
}

/* A daemon is back: the sweep's next run disarms it (and drains the FIFO). */
static void stop_sweep(void)
{
	struct sluice_stats a, b;

	put_heartbeat(mono_ns() + 60 * SEC_NS);
	usleep(1300000);
	read_gstats(&a);
	usleep(1300000);
	read_gstats(&b);
	assert_int_equal(b.static_sweeps, a.static_sweeps);
}

/* No daemon, failMode static, a 1 s handshake time-out, a level with room. */
static void outage_with_room(void)
{
	setup_maps(S_HB_ZERO | S_FAIL_STATIC);
	put_halfopen_timeout(1 * SEC_NS);
	put_level(L_QUEUE, SLUICE_LEVEL_LIMITED, SLUICE_RESP_QUEUE, 10, 1, "static");
	put_seats(L_QUEUE, 0, 0);
}

/* A SYN the static failsafe admits on port `sport` (a level with room). */
static void admit_static(uint16_t sport, struct sluice_conn_key *k)
{
	static uint8_t in[FR_MAX_LEN], out[FR_MAX_LEN];
	struct fr_spec s;
	size_t n;

	fr_default_v4_syn(&s);
	s.sport = sport;
	key_from_spec(&s, k);
	n = fr_build(&s, in, NULL);
	run_expect("a SYN with room, no daemon: admitted", in, n, out, XDP_PASS);
}

/* After the outage's two whole walks, a connection the failsafe admitted
 * and that never establishes is expired from the FIFO: no third walk. */
static void test_fifo_expires_without_walks(void **state)
{
	struct sluice_conn_key a, b;
	struct sluice_stats g0, g;
	struct sluice_conn c;
	uint64_t want;

	(void)state;
	outage_with_room();
	read_gstats(&g0);
	admit_static(42001, &a); /* arms the sweep: a walk now, one a second later */
	want = g0.static_walks + 2;
	g = wait_for(walks_at_least, &want, 4);
	assert_int_equal(g.static_walks - g0.static_walks, 2);
	want = g0.static_expired + 1;
	g = wait_for(expired_at_least, &want, 3);
	assert_int_not_equal(bpf_map_lookup_elem(fd_conns, &a, &c), 0);

	/* The walks are done: b is expired by the FIFO alone. */
	read_gstats(&g0);
	admit_static(42002, &b);
	assert_int_equal(bpf_map_lookup_elem(fd_conns, &b, &c), 0);
	want = g0.static_expired + 1;
	g = wait_for(expired_at_least, &want, 4);
	assert_int_equal(g.static_expired - g0.static_expired, 1);
	assert_int_not_equal(bpf_map_lookup_elem(fd_conns, &b, &c), 0);
	assert_int_equal(g.static_walks, g0.static_walks);
	assert_true(g.static_sweeps - g0.static_sweeps >= 1);
	assert_int_equal(get_seats(L_QUEUE).seats_in_use, 0);
	stop_sweep();
	clear_hash(fd_conns, sizeof(a), SLUICE_DEFAULT_CONNS);
}

/* A full FIFO: the admission it refused is expired by one more whole
 * walk, a time-out later; then no more walks. */
static void test_fifo_overflow_walks_once(void **state)
{
	int fd_due = bpf_map__fd(skel->maps.sl_static_due);
	struct sluice_static_due fake = {.admitted_ns = mono_ns()};
	struct sluice_stats g0, g;
	struct sluice_conn_key a;
	struct sluice_conn c;
	uint64_t want;

	(void)state;
	outage_with_room();
	/* Full of young entries of no connection. */
	fake.key.family = 4;
	for (uint32_t i = 0;; i++) {
		fake.key.sport = (uint16_t)i;
		fake.key.saddr[0] = (uint8_t)(i >> 16);
		if (bpf_map_update_elem(fd_due, NULL, &fake, BPF_ANY))
			break;
		assert_true(i < 1u << 20);
	}
	read_gstats(&g0);
	admit_static(42101, &a);
	/* Walks: now, a time-out later, and one for the overflow. */
	want = g0.static_walks + 3;
	g = wait_for(walks_at_least, &want, 6);
	assert_int_equal(g.static_walks - g0.static_walks, 3);
	assert_true(g.static_expired - g0.static_expired >= 1);
	assert_int_not_equal(bpf_map_lookup_elem(fd_conns, &a, &c), 0);
	assert_int_equal(get_seats(L_QUEUE).seats_in_use, 0);
	/* The FIFO was read meanwhile (the fakes were due): nothing is left
	 * that asks for a walk. */
	sleep(2);
	read_gstats(&g);
	assert_int_equal(g.static_walks - g0.static_walks, 3);
	assert_int_not_equal(bpf_map_lookup_elem(fd_due, NULL, &fake), 0); /* empty */
	stop_sweep();
	clear_hash(fd_conns, sizeof(a), SLUICE_DEFAULT_CONNS);
}

/* A ticket a dead daemon left, claimed during the outage: queued for its
 * time-out like the failsafe's own admissions, then expired. */
static void test_ticket_claimed_in_outage_is_queued(void **state)
{
	static uint8_t in[FR_MAX_LEN], out[FR_MAX_LEN];
	int fd_due = bpf_map__fd(skel->maps.sl_static_due);
	struct {
		struct sluice_conn_key key;
		uint64_t admitted_ns;
	} head;
	struct sluice_conn_key k;
	struct sluice_stats g0, g;
	struct sluice_conn c;
	struct fr_spec s;
	uint64_t want;
	size_t n;

	(void)state;
	outage_with_room();
	put_seats(L_QUEUE, 1, 0); /* the ticket's seat, reserved by the daemon */
	fr_default_v4_syn(&s);
	s.sport = 42201;
	key_from_spec(&s, &k);
	put_ticket(&k, SLUICE_TICKET_ADMIT, L_QUEUE, 1);
	read_gstats(&g0);
	n = fr_build(&s, in, NULL);
	run_expect("a retransmit claims its admit ticket, no daemon", in, n, out, XDP_PASS);
	read_gstats(&g);
	assert_int_equal(g.tickets_admitted - g0.tickets_admitted, 1);
	assert_int_equal(bpf_map_lookup_elem(fd_conns, &k, &c), 0);
	assert_int_equal(bpf_map_lookup_elem(fd_due, NULL, &head), 0);
	assert_memory_equal(&head.key, &k, sizeof(k));
	assert_int_equal(head.admitted_ns, c.admitted_ns);
	want = g0.static_expired + 1;
	g = wait_for(expired_at_least, &want, 4);
	assert_int_equal(g.static_expired - g0.static_expired, 1);
	assert_int_not_equal(bpf_map_lookup_elem(fd_conns, &k, &c), 0);
	assert_int_equal(get_seats(L_QUEUE).seats_in_use, 0);
	stop_sweep();
	clear_hash(fd_conns, sizeof(k), SLUICE_DEFAULT_CONNS);
}

static const struct CMUnitTest tests[] = {
	SCENARIO(test_static_sweep_returns_seats),
	SCENARIO(test_open_mode_has_no_sweep),
	SCENARIO(test_fifo_expires_without_walks),
	SCENARIO(test_fifo_overflow_walks_once),
	SCENARIO(test_ticket_claimed_in_outage_is_queued),
};

int main(void)
{
	return cmocka_run_group_tests_name("sluice_xdp_fail_static", tests, group_setup, group_teardown);
}
