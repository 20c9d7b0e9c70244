// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A level that seats at the ACK (SLUICE_LVL_SEAT_AT_ACK, ACK_WATCH): its
 * SYNs pass without a seat, and an unseated ACK is judged only once it
 * proves its source.  Here, through BPF_PROG_TEST_RUN, the rules that need
 * no socket: no request socket or listener answers the test's frames, so
 * no ACK proves anything (tests/e2e/test_seat_at_ack.sh has the real
 * handshakes, proved and judged).
 */
#include "harness.h"

#define ACK_FLAGS (SLUICE_LVL_SEAT_AT_ACK | SLUICE_LVL_ACK_WATCH)

static size_t build(uint8_t *f, struct fr_spec *sp, uint16_t sport, uint16_t dport, uint8_t flags)
{
	fr_default_v4_syn(sp);
	sp->sport = sport;
	sp->dport = dport;
	sp->tcp_flags = flags;
	if (flags & TH_ACK) {
		sp->seq = 0x12345678 + 1;
		sp->ack = 0x0badf00d;
	}
	return fr_build(sp, f, NULL);
}

/* The frame passes, and the counters move by exactly eg / el. */
static void expect_pass(const char *ctx, const uint8_t *f, size_t n, const struct sluice_stats *eg,
			uint32_t level, const struct sluice_level_stats *el)
{
	static uint8_t out[FR_MAX_LEN];
	struct snap s0, s1;

	take_snap(&s0);
	run_expect(ctx, f, n, out, XDP_PASS);
	take_snap(&s1);
	assert_int_equal(check_deltas(ctx, &s0, &s1, eg, level, el, 0), 0);
}

/* A SYN of a seat-at-ACK level passes with no seat and no entry, even with
 * the level full: the decision waits for the ACK. */
static void test_syn_passes_unseated(void **state)
{
	static uint8_t f[FR_MAX_LEN], out[FR_MAX_LEN];
	const uint16_t ports[] = {P_QUEUE, P_REJECT};
	const uint32_t levels[] = {L_QUEUE, L_REJECT};
	struct sluice_level_stats el = {0};
	struct sluice_stats eg = {0};
	struct snap s0, s1;
	struct fr_spec sp;
	size_t n;

	(void)state;
	for (int i = 0; i < 2; i++) {
		struct sluice_conn_key k = v4_key(50300, ports[i]);
		struct sluice_conn c;

		setup_maps(S_FULL);
		put_level_flags(levels[i], ACK_FLAGS);
		put_ack_watch(1);
		n = build(f, &sp, 50300, ports[i], TH_SYN);
		drain_events();
		take_snap(&s0);
		run_expect("SYN, seat at ACK, level full", f, n, out, XDP_PASS);
		take_snap(&s1);
		eg.syns = 1;
		el.syns = 1;
		el.unseated = 1;
		assert_int_equal(check_deltas("unseated SYN", &s0, &s1, &eg, levels[i], &el, 0), 0);
		assert_int_not_equal(bpf_map_lookup_elem(fd_conns, &k, &c), 0);
		ring_buffer__consume(rb);
		assert_int_equal(nevents, 0);
	}
}

/* The same flags on an exempt level change nothing: it holds no one back
 * and keeps counting its seats at the SYN. */
static void test_exempt_seats_at_syn(void **state)
{
	static uint8_t f[FR_MAX_LEN], out[FR_MAX_LEN];
	struct sluice_conn_key k = v4_key(50301, P_EXEMPT);
	struct sluice_conn c;
	struct snap s0, s1;
	struct fr_spec sp;
	size_t n;

	(void)state;
	setup_maps(0);
	put_level_flags(L_EXEMPT, ACK_FLAGS);
	put_ack_watch(1);
	n = build(f, &sp, 50301, P_EXEMPT, TH_SYN);
	take_snap(&s0);
	run_expect("exempt SYN", f, n, out, XDP_PASS);
	take_snap(&s1);
	assert_int_equal(s1.l[L_EXEMPT].unseated - s0.l[L_EXEMPT].unseated, 0);
	assert_int_equal(s1.l[L_EXEMPT].admitted - s0.l[L_EXEMPT].admitted, 1);
	assert_int_equal(bpf_map_lookup_elem(fd_conns, &k, &c), 0);
	assert_int_equal(c.flags & SLUICE_CONNF_AT_ACK, 0);
}

/* An ACK that proves nothing (no request socket, no listener) passes to
 * the kernel: no seat, no entry, no event, counted unproved; only while
 * its level is watched. */
static void test_unproved_ack_passes(void **state)
{
	static uint8_t f[FR_MAX_LEN];
	struct sluice_conn_key k = v4_key(50302, P_QUEUE);
	struct sluice_level_stats el = {0};
	struct sluice_stats eg = {0};
	struct sluice_conn c;
	struct fr_spec sp;
	size_t n;

	(void)state;
	setup_maps(0);
	put_level_flags(L_QUEUE, ACK_FLAGS);
	put_ack_watch(1);
	n = build(f, &sp, 50302, P_QUEUE, TH_ACK);
	drain_events();
	eg.acks_unproved = 1;
	expect_pass("unproved ACK", f, n, &eg, L_QUEUE, &el);
	assert_int_not_equal(bpf_map_lookup_elem(fd_conns, &k, &c), 0);
	ring_buffer__consume(rb);
	assert_int_equal(nevents, 0);

	/* A data segment (ACK + payload) is examined the same way. */
	sp.payload_len = 100;
	n = fr_build(&sp, f, NULL);
	expect_pass("unproved data", f, n, &eg, L_QUEUE, &el);

	/* Nothing watched (ack_watch_levels 0): not even looked at, though
	 * the level's flag is still set. */
	put_ack_watch(0);
	memset(&eg, 0, sizeof(eg));
	expect_pass("unwatched ACK", f, n, &eg, L_QUEUE, &el);

	/* Watched globally, but not this level (SEAT_AT_ACK alone does not
	 * watch; the daemon always sets both). */
	put_ack_watch(1);
	put_level_flags(L_QUEUE, SLUICE_LVL_SEAT_AT_ACK);
	expect_pass("level not watched", f, n, &eg, L_QUEUE, &el);
}

/* A seated connection's ACKs are its own: one lookup and they pass, the
 * entry untouched (an ACK of an admitted SYN does not prove or re-judge). */
static void test_seated_ack_untouched(void **state)
{
	static uint8_t f[FR_MAX_LEN], out[FR_MAX_LEN];
	struct sluice_conn_key k = v4_key(50303, P_QUEUE);
	struct sluice_level_stats el = {0};
	struct sluice_stats eg = {0};
	struct sluice_conn c0, c1;
	struct fr_spec sp;
	size_t n;

	(void)state;
	setup_maps(0);
	n = build(f, &sp, 50303, P_QUEUE, TH_SYN);
	run_expect("SYN seated", f, n, out, XDP_PASS);
	assert_int_equal(bpf_map_lookup_elem(fd_conns, &k, &c0), 0);
	put_level_flags(L_QUEUE, ACK_FLAGS);
	put_ack_watch(1);
	n = build(f, &sp, 50303, P_QUEUE, TH_ACK);
	expect_pass("its ACK", f, n, &eg, L_QUEUE, &el);
	assert_int_equal(bpf_map_lookup_elem(fd_conns, &k, &c1), 0);
	assert_memory_equal(&c0, &c1, sizeof(c0));
}

/* A SYN-ACK, a bare FIN or a RST is never an ACK to judge. */
static void test_other_segments_ignored(void **state)
{
	static uint8_t f[FR_MAX_LEN];
	const uint8_t flags[] = {TH_SYN | TH_ACK, TH_FIN, 0};
	struct sluice_level_stats el = {0};
	struct sluice_stats eg = {0};
	struct fr_spec sp;
	size_t n;

	(void)state;
	setup_maps(0);
	put_level_flags(L_QUEUE, ACK_FLAGS);
	put_ack_watch(1);
	for (size_t i = 0; i < sizeof(flags); i++) {
		n = build(f, &sp, 50304, P_QUEUE, flags[i]);
		expect_pass("not an ACK", f, n, &eg, L_QUEUE, &el);
	}
}

static const struct CMUnitTest tests[] = {
	SCENARIO(test_syn_passes_unseated),
	SCENARIO(test_exempt_seats_at_syn),
	SCENARIO(test_unproved_ack_passes),
	SCENARIO(test_seated_ack_untouched),
	SCENARIO(test_other_segments_ignored),
};

int main(void)
{
	return cmocka_run_group_tests_name("sluice_xdp_seat_at_ack", tests, group_setup, group_teardown);
}
