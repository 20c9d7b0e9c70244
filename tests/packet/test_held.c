// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Packet tests of the sluice XDP program: Held SYNs: a deferral carries its SYN frame as received (or says why
 * not), a client's RST frees a half-open connection, and the reset program.
 *
 * Each test runs the real program through BPF_PROG_TEST_RUN (tests/packet/
 * harness.h).  Needs root and a BPF-capable kernel.
 */
#include "harness.h"

/* Defer the SYN that sp describes (Queue level full) and check that the
 * event carries exactly its bytes and where it came in. */
static void expect_frame_held(const char *what, struct fr_spec *sp)
{
	static uint8_t f[FR_MAX_LEN], out[FR_MAX_LEN];
	struct snap s0, s1;
	size_t n;

	sp->dport = P_QUEUE;
	n = fr_build(sp, f, NULL);
	drain_events();
	ndefers = 0;
	take_snap(&s0);
	run_expect(what, f, n, out, XDP_DROP);
	take_snap(&s1);
	ring_buffer__consume(rb);
	if (ndefers != 1)
		fail_msg("%s: %d deferral events with a frame, expected 1", what, ndefers);
	assert_int_equal(last_defer.ev.type, SLUICE_EV_DEFER);
	assert_int_equal(last_defer.ev.level, L_QUEUE);
	if (last_defer.frame_len != n || memcmp(last_defer.frame, f, n)) {
		hexdump("sent", f, n);
		hexdump("held", last_defer.frame, last_defer.frame_len);
		fail_msg("%s: held frame (%u bytes) is not the SYN (%zu bytes)", what,
			 last_defer.frame_len, n);
	}
	/* BPF_PROG_TEST_RUN without a context: loopback, queue 0 */
	assert_int_equal(last_defer.ifindex, 1);
	assert_int_equal(last_defer.rx_queue, 0);
	assert_int_equal(s1.g.frames_copied - s0.g.frames_copied, 1);
}

static void test_defer_carries_frame(void **state)
{
	static const uint8_t tcp_opts[] = {
		2, 4, 0x05, 0xb4,                   /* MSS 1460 */
		4, 2,                               /* SACK permitted */
		8, 10, 0, 0, 0x12, 0x34, 0, 0, 0, 0, /* timestamps */
		1,                                  /* NOP */
		3, 3, 7,                            /* window scale 7 */
	};
	struct fr_spec sp;

	(void)state;
	setup_maps(S_FULL);
	fr_default_v4_syn(&sp);
	sp.sport = 50200;
	expect_frame_held("v4 plain", &sp);

	fr_default_v4_syn(&sp);
	sp.sport = 50201;
	memcpy(sp.tcp_opts, tcp_opts, sizeof(tcp_opts));
	sp.tcp_opts_len = sizeof(tcp_opts);
	sp.ip_opts[0] = 0x94; /* router alert */
	sp.ip_opts[1] = 4;
	sp.ip_opts_len = 4;
	expect_frame_held("v4, IP options, MSS/SACK/TS/WS", &sp);

	fr_default_v4_syn(&sp);
	sp.sport = 50202;
	sp.nvlan = 2;
	sp.vlan_tpid[0] = 0x88a8;
	sp.vlan_tci[0] = 100;
	sp.vlan_tpid[1] = 0x8100;
	sp.vlan_tci[1] = 42;
	memcpy(sp.tcp_opts, tcp_opts, sizeof(tcp_opts));
	sp.tcp_opts_len = sizeof(tcp_opts);
	expect_frame_held("v4 in QinQ", &sp);

	fr_default_v6_syn(&sp);
	sp.sport = 50203;
	memcpy(sp.tcp_opts, tcp_opts, sizeof(tcp_opts));
	sp.tcp_opts_len = sizeof(tcp_opts);
	expect_frame_held("v6, TCP options", &sp);

	fr_default_v6_syn(&sp);
	sp.sport = 50204;
	sp.ext[0].type = FR_IPPROTO_HOPOPTS;
	sp.ext[1].type = FR_IPPROTO_DSTOPTS;
	sp.next = 2;
	expect_frame_held("v6, hop-by-hop and destination options", &sp);
}

/* A SYN longer than SLUICE_FRAME_MAX (Fast Open data) is deferred without
 * its frame: its client's retransmit claims a ticket. */
static void test_defer_frame_too_long(void **state)
{
	static uint8_t f[FR_MAX_LEN], out[FR_MAX_LEN];
	struct snap s0, s1;
	struct fr_spec sp;
	size_t n;

	(void)state;
	setup_maps(S_FULL);
	fr_default_v4_syn(&sp);
	sp.sport = 50210;
	sp.dport = P_QUEUE;
	sp.payload_len = 240;
	n = fr_build(&sp, f, NULL);
	assert_true(n > SLUICE_FRAME_MAX);
	drain_events();
	ndefers = 0;
	take_snap(&s0);
	run_expect("SYN with data", f, n, out, XDP_DROP);
	take_snap(&s1);
	ring_buffer__consume(rb);
	assert_int_equal(ndefers, 1);
	assert_int_equal(last_defer.frame_len, 0);
	assert_int_equal(s1.g.frames_too_long - s0.g.frames_too_long, 1);
	assert_int_equal(s1.g.frames_copied, s0.g.frames_copied);
}

/* No budget to hold SYNs (SLUICE_CFG_NO_FRAMES): deferrals go without the
 * copy. */
static void test_defer_no_frames(void **state)
{
	static uint8_t f[FR_MAX_LEN], out[FR_MAX_LEN];
	struct snap s0, s1;
	struct fr_spec sp;
	size_t n;

	(void)state;
	setup_maps(S_FULL);
	put_config(HB_TIMEOUT, SLUICE_FAIL_OPEN, 0, SLUICE_CFG_ACTIVE | SLUICE_CFG_NO_FRAMES);
	fr_default_v4_syn(&sp);
	sp.sport = 50215;
	sp.dport = P_QUEUE;
	n = fr_build(&sp, f, NULL);
	drain_events();
	ndefers = 0;
	take_snap(&s0);
	run_expect("no frames", f, n, out, XDP_DROP);
	take_snap(&s1);
	ring_buffer__consume(rb);
	assert_int_equal(ndefers, 1);
	assert_int_equal(last_defer.frame_len, 0);
	assert_int_equal(s1.g.frames_copied, s0.g.frames_copied);
	assert_int_equal(s1.g.frames_too_long, s0.g.frames_too_long);
}

/* The client's RST for its half-open connection gives the seats back now;
 * a RST with another sequence number, or for an established connection,
 * changes nothing. */
static void test_rst_releases_half_open(void **state)
{
	static uint8_t f[FR_MAX_LEN], out[FR_MAX_LEN];
	struct sluice_conn_key k = v4_key(50220, P_QUEUE);
	struct sluice_conn c;
	struct snap s0, s1;
	struct fr_spec sp;
	size_t n;

	(void)state;
	setup_maps(0);
	fr_default_v4_syn(&sp);
	sp.sport = 50220;
	sp.dport = P_QUEUE;
	n = fr_build(&sp, f, NULL);
	run_expect("admit", f, n, out, XDP_PASS);
	assert_int_equal(bpf_map_lookup_elem(fd_conns, &k, &c), 0);
	assert_int_equal(ntohl(c.syn_seq), sp.seq);

	sp.tcp_flags = TH_RST;
	sp.seq = 0x12345678 + 7;
	n = fr_build(&sp, f, NULL);
	take_snap(&s0);
	run_expect("blind RST", f, n, out, XDP_PASS);
	take_snap(&s1);
	assert_int_equal(bpf_map_lookup_elem(fd_conns, &k, &c), 0);
	assert_int_equal(s1.seats[L_QUEUE].seats_in_use, s0.seats[L_QUEUE].seats_in_use);

	sp.seq = 0x12345678 + 1; /* what a client sends in answer to the SYN-ACK */
	n = fr_build(&sp, f, NULL);
	drain_events();
	take_snap(&s0);
	run_expect("the client's RST", f, n, out, XDP_PASS);
	take_snap(&s1);
	assert_int_not_equal(bpf_map_lookup_elem(fd_conns, &k, &c), 0);
	assert_int_equal(s1.seats[L_QUEUE].seats_in_use, s0.seats[L_QUEUE].seats_in_use - 1);
	assert_int_equal(s1.g.rst_released - s0.g.rst_released, 1);
	assert_int_equal(s1.l[L_QUEUE].closed - s0.l[L_QUEUE].closed, 1);
	ring_buffer__consume(rb);
	assert_int_equal(nevents, 1);
	assert_int_equal(events[0].type, SLUICE_EV_CLOSE);

	/* Established: sock_ops will see the close, XDP leaves it alone. */
	sp.tcp_flags = TH_SYN;
	sp.seq = 0x12345678;
	sp.sport = 50221;
	n = fr_build(&sp, f, NULL);
	run_expect("admit another", f, n, out, XDP_PASS);
	k = v4_key(50221, P_QUEUE);
	assert_int_equal(bpf_map_lookup_elem(fd_conns, &k, &c), 0);
	c.state = SLUICE_CONN_ESTABLISHED;
	assert_int_equal(bpf_map_update_elem(fd_conns, &k, &c, BPF_EXIST), 0);
	sp.tcp_flags = TH_RST | TH_ACK;
	sp.seq = 0x12345678 + 1;
	n = fr_build(&sp, f, NULL);
	take_snap(&s0);
	run_expect("RST of an established connection", f, n, out, XDP_PASS);
	take_snap(&s1);
	assert_int_equal(bpf_map_lookup_elem(fd_conns, &k, &c), 0);
	assert_int_equal(s1.g.rst_released, s0.g.rst_released);
}

/* sluice_reset answers a held SYN with the RST the data path would have
 * sent itself; anything but a SYN is refused. */
static void test_reset_program(void **state)
{
	static uint8_t f[FR_MAX_LEN], out[FR_MAX_LEN], want[FR_MAX_LEN];
	const int families[] = {4, 6};
	struct fr_spec sp;
	size_t n, wn;

	(void)state;
	for (int i = 0; i < 2; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f, .data_out = out,
			    .data_size_out = FR_MAX_LEN, .repeat = 1);

		if (families[i] == 4)
			fr_default_v4_syn(&sp);
		else
			fr_default_v6_syn(&sp);
		sp.nvlan = 1;
		sp.vlan_tpid[0] = 0x8100;
		sp.vlan_tci[0] = 7;
		n = fr_build(&sp, f, NULL);
		o.data_size_in = (uint32_t)n;
		assert_int_equal(bpf_prog_test_run_opts(reset_fd, &o), 0);
		assert_int_equal(o.retval, XDP_TX);
		wn = expected_rst_from_spec(&sp, 0, want);
		assert_int_equal(o.data_size_out, wn);
		assert_memory_equal(out, want, wn);
	}
	{
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f, .data_out = out,
			    .data_size_out = FR_MAX_LEN, .repeat = 1);

		fr_default_v4_syn(&sp);
		sp.tcp_flags = TH_ACK;
		n = fr_build(&sp, f, NULL);
		o.data_size_in = (uint32_t)n;
		assert_int_equal(bpf_prog_test_run_opts(reset_fd, &o), 0);
		assert_int_equal(o.retval, XDP_ABORTED);
	}
}

static const struct CMUnitTest tests[] = {
	SCENARIO(test_defer_carries_frame),
	SCENARIO(test_defer_frame_too_long),
	SCENARIO(test_defer_no_frames),
	SCENARIO(test_rst_releases_half_open),
	SCENARIO(test_reset_program),
};

int main(void)
{
	return cmocka_run_group_tests_name("sluice_xdp_held", tests, group_setup, group_teardown);
}
