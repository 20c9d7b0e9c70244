// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Packet tests of the sluice XDP program: Connections: admit / retransmit / defer / reject sequences, connection
 * keys of both families, filling a level, the event rate limit, and a full
 * connection table.
 *
 * Each test runs the real program through BPF_PROG_TEST_RUN (tests/packet/
 * harness.h).  Needs root and a BPF-capable kernel.
 */
#include "harness.h"
#include "dataplane/expiry.h"

/* Cases 1-4 as one sequence on a 1-seat level: admit, retransmit, defer,
 * then switch the level to Reject and get an RST. */
static void test_sequence_v4(void **state)
{
	static uint8_t a[FR_MAX_LEN], b[FR_MAX_LEN], out[FR_MAX_LEN], want[FR_MAX_LEN];
	struct sluice_conn_key k, want_key;
	struct sluice_conn c;
	struct fr_spec sa, sb;
	struct snap s0, s1, s2, s3, s4;
	size_t na, nb, wn;
	uint32_t n;

	(void)state;
	setup_maps(0);
	put_level(L_QUEUE, SLUICE_LEVEL_LIMITED, SLUICE_RESP_QUEUE, 1, 1, "one-seat");
	fr_default_v4_syn(&sa);
	sa.sport = 50001;
	sa.seq = 1000;
	sb = sa;
	sb.sport = 50002;
	na = fr_build(&sa, a, NULL);
	nb = fr_build(&sb, b, NULL);

	take_snap(&s0);
	run_expect("first SYN", a, na, out, XDP_PASS);
	take_snap(&s1);
	assert_int_equal(s1.seats[L_QUEUE].seats_in_use, 1);
	assert_int_equal(s1.l[L_QUEUE].admitted - s0.l[L_QUEUE].admitted, 1);
	assert_int_equal(s1.g.syns - s0.g.syns, 1);

	/* The conn key, byte by byte: ::ffff:198.51.100.7 -> ::ffff:192.0.2.10 */
	memset(&want_key, 0, sizeof(want_key));
	want_key.saddr[10] = 0xff; want_key.saddr[11] = 0xff;
	want_key.saddr[12] = 198; want_key.saddr[13] = 51; want_key.saddr[14] = 100; want_key.saddr[15] = 7;
	want_key.daddr[10] = 0xff; want_key.daddr[11] = 0xff;
	want_key.daddr[12] = 192; want_key.daddr[13] = 0; want_key.daddr[14] = 2; want_key.daddr[15] = 10;
	want_key.sport = htons(50001);
	want_key.dport = htons(80);
	want_key.family = 4;
	assert_int_equal(count_hash(fd_conns, sizeof(k)), 1);
	assert_int_equal(bpf_map_get_next_key(fd_conns, NULL, &k), 0);
	assert_memory_equal(&k, &want_key, sizeof(k));
	assert_int_equal(((uint8_t *)&k.sport)[0], 50001 >> 8); /* network order */
	assert_int_equal(((uint8_t *)&k.dport)[1], 80);
	assert_int_equal(bpf_map_lookup_elem(fd_conns, &k, &c), 0);
	assert_int_equal(c.level, L_QUEUE);
	assert_int_equal(c.seats, 1);
	assert_int_equal(c.state, SLUICE_CONN_ADMITTED);

	run_expect("retransmitted SYN", a, na, out, XDP_PASS);
	take_snap(&s2);
	assert_int_equal(s2.seats[L_QUEUE].seats_in_use, 1);
	assert_int_equal(s2.l[L_QUEUE].retransmits - s1.l[L_QUEUE].retransmits, 1);
	assert_int_equal(s2.l[L_QUEUE].admitted, s1.l[L_QUEUE].admitted);
	assert_int_equal(count_hash(fd_conns, sizeof(k)), 1);

	drain_events();
	run_expect("second client, level full (Queue)", b, nb, out, XDP_DROP);
	take_snap(&s3);
	assert_int_equal(s3.seats[L_QUEUE].seats_in_use, 1);
	assert_int_equal(s3.l[L_QUEUE].deferred - s2.l[L_QUEUE].deferred, 1);
	assert_int_equal(count_hash(fd_conns, sizeof(k)), 1);
	ring_buffer__consume(rb);
	assert_int_equal(nevents, 1);
	assert_int_equal(events[0].type, SLUICE_EV_DEFER);

	put_level(L_QUEUE, SLUICE_LEVEL_LIMITED, SLUICE_RESP_REJECT, 1, 1, "one-seat");
	n = run_expect("second client, level full (Reject)", b, nb, out, XDP_TX);
	take_snap(&s4);
	wn = expected_rst_from_spec(&sb, 0, want);
	assert_int_equal(n, wn);
	assert_memory_equal(out, want, wn);
	assert_int_equal(s4.l[L_QUEUE].rejected - s3.l[L_QUEUE].rejected, 1);
	assert_int_equal(s4.seats[L_QUEUE].seats_in_use, 1);
	assert_int_equal(fr_get32(out + 14 + 20 + 8), 1001);

	/* The first client's retransmit still passes on the Reject level. */
	run_expect("first SYN again after the switch", a, na, out, XDP_PASS);
}

/* Case 11: the key XDP writes for a v6 SYN. */
static void test_conn_key_v6(void **state)
{
	static uint8_t in[FR_MAX_LEN], out[FR_MAX_LEN];
	struct sluice_conn_key k, want;
	struct fr_spec s;
	size_t n;

	(void)state;
	setup_maps(0);
	fr_default_v6_syn(&s);
	s.sport = 61000;
	s.next = 2;
	s.ext[0].type = FR_IPPROTO_HOPOPTS;
	s.ext[1].type = FR_IPPROTO_DSTOPTS;
	n = fr_build(&s, in, NULL);
	run_expect("v6 SYN", in, n, out, XDP_PASS);

	memset(&want, 0, sizeof(want));
	memcpy(want.saddr, fr_client6, 16);
	memcpy(want.daddr, fr_server6, 16);
	want.sport = htons(61000);
	want.dport = htons(80);
	want.family = 6;
	assert_int_equal(count_hash(fd_conns, sizeof(k)), 1);
	assert_int_equal(bpf_map_get_next_key(fd_conns, NULL, &k), 0);
	assert_memory_equal(&k, &want, sizeof(k));
	assert_int_equal(k.pad[0] | k.pad[1] | k.pad[2], 0);
}

/* A v4 SYN and a v6 SYN from the v4-mapped address of the same client are
 * different connections (family is part of the key). */
static void test_conn_key_family_distinct(void **state)
{
	static uint8_t in[FR_MAX_LEN], out[FR_MAX_LEN];
	struct fr_spec s4, s6;
	size_t n;

	(void)state;
	setup_maps(0);
	fr_default_v4_syn(&s4);
	fr_default_v6_syn(&s6);
	memset(s6.saddr6, 0, 16);
	s6.saddr6[10] = s6.saddr6[11] = 0xff;
	memcpy(s6.saddr6 + 12, fr_client4, 4);
	memset(s6.daddr6, 0, 16);
	s6.daddr6[10] = s6.daddr6[11] = 0xff;
	memcpy(s6.daddr6 + 12, fr_server4, 4);
	n = fr_build(&s4, in, NULL);
	run_expect("v4 SYN", in, n, out, XDP_PASS);
	n = fr_build(&s6, in, NULL);
	run_expect("v6 SYN from ::ffff:client", in, n, out, XDP_PASS);
	assert_int_equal(count_hash(fd_conns, sizeof(struct sluice_conn_key)), 2);
	assert_int_equal(get_seats(L_QUEUE).seats_in_use, 2);
}

/* Admit up to the limit, defer the rest, retransmits keep passing. */
static void test_fill_level(void **state)
{
	static uint8_t in[FR_MAX_LEN], out[FR_MAX_LEN];
	struct fr_spec s;
	struct snap a, b;
	size_t n;
	int i;

	(void)state;
	setup_maps(0);
	put_level(L_QUEUE, SLUICE_LEVEL_LIMITED, SLUICE_RESP_QUEUE, 5, 1, "five");
	fr_default_v4_syn(&s);
	take_snap(&a);
	for (i = 0; i < 8; i++) {
		s.sport = (uint16_t)(30000 + i);
		n = fr_build(&s, in, NULL);
		run_expect(i < 5 ? "SYN within the limit" : "SYN over the limit", in, n, out,
			   i < 5 ? XDP_PASS : XDP_DROP);
	}
	for (i = 0; i < 5; i++) {
		s.sport = (uint16_t)(30000 + i);
		n = fr_build(&s, in, NULL);
		run_expect("retransmit of an admitted SYN", in, n, out, XDP_PASS);
	}
	take_snap(&b);
	assert_int_equal(b.seats[L_QUEUE].seats_in_use, 5);
	assert_int_equal(b.l[L_QUEUE].admitted - a.l[L_QUEUE].admitted, 5);
	assert_int_equal(b.l[L_QUEUE].deferred - a.l[L_QUEUE].deferred, 3);
	assert_int_equal(b.l[L_QUEUE].retransmits - a.l[L_QUEUE].retransmits, 5);
	assert_int_equal(b.l[L_QUEUE].syns - a.l[L_QUEUE].syns, 13);
	assert_int_equal(count_hash(fd_conns, sizeof(struct sluice_conn_key)), 5);
}

/* A held SYN the daemon re-injects into a device in generic mode passes
 * XDP once more: the wire carried it once, so that pass is no retransmit
 * (SLUICE_CONNF_REINJECTED, cleared by it); the client's own retransmit
 * after it is one.  On a level with room (the admission's insert finds
 * the daemon's record) and on a full one (the refusal asks first). */
static void test_reinjected_syn_is_no_retransmit(void **state)
{
	static uint8_t in[FR_MAX_LEN], out[FR_MAX_LEN];
	static const uint32_t limits[] = {5, 1};
	struct sluice_conn_key k;
	struct sluice_conn c;
	struct fr_spec s;
	struct snap a, b;
	size_t n;

	(void)state;
	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		setup_maps(0);
		put_level(L_QUEUE, SLUICE_LEVEL_LIMITED, SLUICE_RESP_QUEUE, limits[i], 1, "reinjected");
		fr_default_v4_syn(&s);
		s.sport = (uint16_t)(31000 + i);
		key_from_spec(&s, &k);
		/* The daemon's admission: its record, its seat. */
		insert_conn(&k, L_QUEUE, 1);
		assert_int_equal(bpf_map_lookup_elem(fd_conns, &k, &c), 0);
		c.flags = SLUICE_CONNF_DAEMON | SLUICE_CONNF_REINJECTED;
		assert_int_equal(bpf_map_update_elem(fd_conns, &k, &c, BPF_EXIST), 0);
		put_seats(L_QUEUE, 1, 0);
		n = fr_build(&s, in, NULL);

		take_snap(&a);
		run_expect("the re-injected SYN, seen by generic XDP", in, n, out, XDP_PASS);
		take_snap(&b);
		assert_int_equal(b.l[L_QUEUE].retransmits - a.l[L_QUEUE].retransmits, 0);
		assert_int_equal(b.seats[L_QUEUE].seats_in_use, 1);
		assert_int_equal(bpf_map_lookup_elem(fd_conns, &k, &c), 0);
		assert_int_equal(c.flags, SLUICE_CONNF_DAEMON);

		run_expect("the client's retransmit", in, n, out, XDP_PASS);
		take_snap(&a);
		assert_int_equal(a.l[L_QUEUE].retransmits - b.l[L_QUEUE].retransmits, 1);
		assert_int_equal(a.seats[L_QUEUE].seats_in_use, 1);
	}
}

/* Ring buffer events: per-CPU rate limit (events_per_sec) suppresses, and
 * counts, what exceeds it; counters stay exact. */
static void test_event_rate_limit(void **state)
{
	static uint8_t in[FR_MAX_LEN], out[FR_MAX_LEN];
	struct fr_spec s;
	struct snap a, b;
	size_t n;
	int i;

	(void)state;
	setup_maps(S_FULL);
	put_config(HB_TIMEOUT, SLUICE_FAIL_OPEN, 2, SLUICE_CFG_ACTIVE);
	fr_default_v4_syn(&s);
	take_snap(&a);
	drain_events();
	for (i = 0; i < 5; i++) {
		s.sport = (uint16_t)(20000 + i);
		n = fr_build(&s, in, NULL);
		run_expect("deferred SYN", in, n, out, XDP_DROP);
	}
	take_snap(&b);
	ring_buffer__consume(rb);
	assert_int_equal(nevents, 2);
	assert_int_equal(events[0].type, SLUICE_EV_DEFER);
	assert_int_equal(events[0].key.sport, htons(20000));
	assert_int_equal(events[1].key.sport, htons(20001));
	assert_int_equal(b.l[L_QUEUE].deferred - a.l[L_QUEUE].deferred, 5);
	assert_int_equal(b.g.events_lost - a.g.events_lost, 3);

	/* The cap is per level (issue 26): the Queue level's flood has spent
	 * its own events, not the Reject level's. */
	drain_events();
	s.dport = P_REJECT;
	for (i = 0; i < 2; i++) {
		s.sport = (uint16_t)(21000 + i);
		n = fr_build(&s, in, NULL);
		run_expect("rejected SYN of another level", in, n, out, XDP_TX);
	}
	ring_buffer__consume(rb);
	assert_int_equal(nevents, 2);
	assert_int_equal(events[0].type, SLUICE_EV_REJECT);
	assert_int_equal(events[0].level, L_REJECT);
	/* ... and the Queue level's stays spent. */
	drain_events();
	s.dport = P_QUEUE;
	s.sport = 21500;
	n = fr_build(&s, in, NULL);
	run_expect("deferred SYN, its level's events spent", in, n, out, XDP_DROP);
	ring_buffer__consume(rb);
	assert_int_equal(nevents, 0);
}

/* sl_conns full: a Queue level defers (seats rolled back), a Reject level
 * answers RST, an exempt level still passes; conn_table_full counts each. */
static void test_conn_table_full(void **state)
{
	static uint8_t in[FR_MAX_LEN], out[FR_MAX_LEN], want[FR_MAX_LEN];
	struct sluice_conn_key *keys;
	struct sluice_conn *vals;
	struct fr_spec s;
	struct snap a, b;
	uint32_t i, cnt, n;
	size_t len, wn;
	int err;

	(void)state;
	setup_maps(0);
	keys = calloc(SLUICE_DEFAULT_CONNS, sizeof(*keys));
	vals = calloc(SLUICE_DEFAULT_CONNS, sizeof(*vals));
	assert_non_null(keys);
	assert_non_null(vals);
	for (i = 0; i < SLUICE_DEFAULT_CONNS; i++) {
		keys[i].saddr[0] = 0xfd;
		memcpy(keys[i].saddr + 12, &i, 4);
		keys[i].family = 6;
		keys[i].sport = htons(1);
		keys[i].dport = htons(P_QUEUE);
		vals[i].level = 63;
		vals[i].seats = 1;
		vals[i].state = SLUICE_CONN_ADMITTED;
	}
	cnt = SLUICE_DEFAULT_CONNS;
	{
		LIBBPF_OPTS(bpf_map_batch_opts, bo, .elem_flags = BPF_NOEXIST);

		err = bpf_map_update_batch(fd_conns, keys, vals, &cnt, &bo);
	}
	if (err) {
		for (i = 0; i < SLUICE_DEFAULT_CONNS; i++)
			assert_int_equal(bpf_map_update_elem(fd_conns, &keys[i], &vals[i], BPF_NOEXIST), 0);
	}
	free(vals);

	fr_default_v4_syn(&s);
	len = fr_build(&s, in, NULL);
	take_snap(&a);
	run_expect("Queue level, free seats, table full", in, len, out, XDP_DROP);
	take_snap(&b);
	assert_int_equal(b.g.conn_table_full - a.g.conn_table_full, 1);
	assert_int_equal(b.l[L_QUEUE].deferred - a.l[L_QUEUE].deferred, 1);
	assert_int_equal(b.l[L_QUEUE].admitted, a.l[L_QUEUE].admitted);
	assert_int_equal(b.seats[L_QUEUE].seats_in_use, 0);

	s.dport = P_REJECT;
	len = fr_build(&s, in, NULL);
	n = run_expect("Reject level, free seats, table full", in, len, out, XDP_TX);
	wn = expected_rst_from_spec(&s, 0, want);
	assert_int_equal(n, wn);
	assert_memory_equal(out, want, wn);
	assert_int_equal(get_seats(L_REJECT).seats_in_use, 0);

	s.dport = P_EXEMPT;
	len = fr_build(&s, in, NULL);
	take_snap(&a);
	run_expect("exempt level, table full", in, len, out, XDP_PASS);
	take_snap(&b);
	assert_int_equal(b.g.conn_table_full - a.g.conn_table_full, 1);
	assert_int_equal(b.l[L_EXEMPT].admitted, a.l[L_EXEMPT].admitted);
	assert_int_equal(b.seats[L_EXEMPT].seats_in_use, 0);

	/* Fail-open failsafe with a full table still passes. */
	put_heartbeat(0);
	s.dport = P_QUEUE;
	len = fr_build(&s, in, NULL);
	take_snap(&a);
	run_expect("stale heartbeat, fail open, table full", in, len, out, XDP_PASS);
	take_snap(&b);
	assert_int_equal(b.g.failsafe_open - a.g.failsafe_open, 1);
	assert_int_equal(b.g.conn_table_full - a.g.conn_table_full, 1);
	assert_int_equal(b.seats[L_QUEUE].seats_in_use, 0);

	{
		LIBBPF_OPTS(bpf_map_batch_opts, bo);

		cnt = SLUICE_DEFAULT_CONNS;
		if (bpf_map_delete_batch(fd_conns, keys, &cnt, &bo))
			clear_hash(fd_conns, sizeof(*keys), SLUICE_DEFAULT_CONNS);
	}
	free(keys);
}

/* The daemon's walk of sl_conns (dataplane/pinned_maps.c sl_conns_each) reads
 * the table in batches: on a full table, with its buckets' collisions,
 * every entry is seen exactly once, and a callback that says stop stops
 * the walk at once with its value. */
struct walk_seen {
	uint8_t *seen;
	uint32_t visits, dup, alien, stop_after;
};

static int walk_visit(void *ctx, const struct sluice_conn_key *k, const struct sluice_conn *c)
{
	struct walk_seen *w = ctx;
	uint32_t i;

	memcpy(&i, k->saddr + 12, 4);
	if (i >= SLUICE_DEFAULT_CONNS || c->seats != 1 + (i & 7))
		w->alien++;
	else if (w->seen[i]++)
		w->dup++;
	w->visits++;
	return w->stop_after && w->visits == w->stop_after ? 7 : 0;
}

static void test_conns_walk(void **state)
{
	struct sluice_conn_key k;
	struct sluice_conn c = { .level = 63, .state = SLUICE_CONN_ADMITTED };
	struct sl_dataplane dp = { .skel = skel };
	struct walk_seen w = { 0 };
	uint32_t i;

	(void)state;
	setup_maps(0);
	dp.maps.fd[SL_MAP_CONNS] = fd_conns;
	w.seen = calloc(SLUICE_DEFAULT_CONNS, 1);
	assert_non_null(w.seen);
	assert_int_equal(sl_conns_each(&dp.maps, walk_visit, &w), 0);
	assert_int_equal(w.visits, 0);

	memset(&k, 0, sizeof(k));
	k.saddr[0] = 0xfd;
	k.family = 6;
	k.dport = htons(P_QUEUE);
	for (i = 0; i < SLUICE_DEFAULT_CONNS; i++) {
		memcpy(k.saddr + 12, &i, 4);
		c.seats = 1 + (i & 7);
		assert_int_equal(bpf_map_update_elem(fd_conns, &k, &c, BPF_NOEXIST), 0);
	}
	assert_int_equal(sl_conns_each(&dp.maps, walk_visit, &w), 0);
	assert_int_equal(w.alien, 0);
	assert_int_equal(w.dup, 0);
	assert_int_equal(w.visits, SLUICE_DEFAULT_CONNS);

	free(w.seen);
	memset(&w, 0, sizeof(w));
	w.seen = calloc(SLUICE_DEFAULT_CONNS, 1);
	assert_non_null(w.seen);
	w.stop_after = 1000;
	assert_int_equal(sl_conns_each(&dp.maps, walk_visit, &w), 7);
	assert_int_equal(w.visits, 1000);
	assert_int_equal(w.dup, 0);
	free(w.seen);
	clear_hash(fd_conns, sizeof(k), SLUICE_DEFAULT_CONNS);
}

static const struct CMUnitTest tests[] = {
	SCENARIO(test_sequence_v4),
	SCENARIO(test_conn_key_v6),
	SCENARIO(test_conn_key_family_distinct),
	SCENARIO(test_fill_level),
	SCENARIO(test_reinjected_syn_is_no_retransmit),
	SCENARIO(test_event_rate_limit),
	SCENARIO(test_conn_table_full),
	SCENARIO(test_conns_walk),
};

int main(void)
{
	return cmocka_run_group_tests_name("sluice_xdp_conns", tests, group_setup, group_teardown);
}
