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
	/* It never established: counted so, no lifetime sample. */
	assert_int_equal(s1.l[L_QUEUE].closed_unserved - s0.l[L_QUEUE].closed_unserved, 1);
	assert_int_equal(s1.l[L_QUEUE].served, s0.l[L_QUEUE].served);
	/* Nobody waits for its level and no policy holds it: the daemon has no
	 * use for the close, and hears nothing of it. */
	ring_buffer__consume(rb);
	assert_int_equal(nevents, 0);
	assert_int_equal(s1.g.closes_quiet - s0.g.closes_quiet, 1);

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

/* An ICMP error about the SYN-ACK of a half-open connection, as a router
 * on the way to a spoofed source sends it: the IP header and the first
 * quote_tcp bytes of the TCP header of the SYN-ACK (seq = our ISN, ack =
 * the client's SYN sequence + 1).  Returns the frame's length. */
static size_t icmp_about_synack(uint8_t *f, const struct fr_spec *syn, uint8_t type, uint8_t code,
				uint32_t quoted_ack, uint8_t quoted_flags, size_t quote_tcp)
{
	static uint8_t q[FR_MAX_LEN];
	struct fr_spec sa = *syn, ic;
	struct fr_layout lay;
	size_t qlen;

	/* The SYN-ACK: from the server to the client. */
	memcpy(sa.saddr4, syn->daddr4, 4);
	memcpy(sa.daddr4, syn->saddr4, 4);
	memcpy(sa.saddr6, syn->daddr6, 16);
	memcpy(sa.daddr6, syn->saddr6, 16);
	sa.sport = syn->dport;
	sa.dport = syn->sport;
	sa.seq = 0x0badcafe;
	sa.ack = quoted_ack;
	sa.tcp_flags = quoted_flags;
	fr_build(&sa, q, &lay);
	qlen = lay.l4_off - lay.l2_len + quote_tcp;

	/* The error: from a router to the server. */
	memset(&ic, 0, sizeof(ic));
	memcpy(ic.dmac, fr_server_mac, 6);
	memcpy(ic.smac, fr_client_mac, 6);
	ic.family = syn->family;
	ic.saddr4[0] = 203, ic.saddr4[1] = 0, ic.saddr4[2] = 113, ic.saddr4[3] = 1;
	memcpy(ic.daddr4, syn->daddr4, 4);
	ic.saddr6[0] = 0x20, ic.saddr6[1] = 0x01, ic.saddr6[2] = 0x0d, ic.saddr6[3] = 0xb8, ic.saddr6[15] = 1;
	memcpy(ic.daddr6, syn->daddr6, 16);
	ic.ttl = ic.hlim = 64;
	ic.proto = syn->family == 4 ? FR_IPPROTO_ICMP : FR_IPPROTO_ICMPV6;
	ic.icmp_type = type;
	ic.icmp_code = code;
	ic.payload = q + lay.l2_len;
	ic.payload_len = (int)qlen;
	return fr_build(&ic, f, NULL);
}

/* Run an ICMP error; true when it released the connection of key k (which
 * existed before), with every counter that says so and no other. */
static bool icmp_releases(const char *ctx, const uint8_t *f, size_t n, const struct sluice_conn_key *k)
{
	static uint8_t out[FR_MAX_LEN];
	struct sluice_conn c;
	struct snap s0, s1;
	bool was, gone;

	was = bpf_map_lookup_elem(fd_conns, k, &c) == 0;
	take_snap(&s0);
	run_expect(ctx, f, n, out, XDP_PASS);
	take_snap(&s1);
	gone = was && bpf_map_lookup_elem(fd_conns, k, &c) != 0;
	if ((s1.g.icmp_released - s0.g.icmp_released) != gone)
		fail_msg("%s: released %d, icmp_released +%llu", ctx, gone,
			 (unsigned long long)(s1.g.icmp_released - s0.g.icmp_released));
	assert_int_equal(s1.g.icmp_released - s0.g.icmp_released, gone);
	assert_int_equal(s1.seats[L_QUEUE].seats_in_use, s0.seats[L_QUEUE].seats_in_use - gone);
	assert_int_equal(s1.l[L_QUEUE].closed - s0.l[L_QUEUE].closed, gone);
	assert_int_equal(s1.g.malformed, s0.g.malformed);
	assert_int_equal(s1.g.rst_released, s0.g.rst_released);
	return gone;
}

/* A router's ICMP error about the SYN-ACK of a half-open connection (its
 * source was spoofed, or is gone) returns the seats at once, when it is an
 * error after which Linux drops the request too, and it quotes our SYN-ACK
 * with the client's SYN sequence + 1.  Anything else changes nothing. */
static void test_icmp_releases_half_open(void **state)
{
	static uint8_t f[FR_MAX_LEN], out[FR_MAX_LEN];
	struct sluice_conn_key k;
	struct sluice_conn c;
	struct fr_spec sp;
	size_t n;

	(void)state;
	for (int family = 4; family <= 6; family += 2) {
		const uint8_t unreach = family == 4 ? 3 : 1;
		const uint8_t host_unreach = family == 4 ? 1 : 4; /* v6: port unreachable is fatal */
		const uint8_t not_fatal = family == 4 ? 3 : 0;    /* v4 port, v6 no route */

		setup_maps(0);
		if (family == 4)
			fr_default_v4_syn(&sp);
		else
			fr_default_v6_syn(&sp);
		sp.sport = 50230;
		sp.dport = P_QUEUE;
		n = fr_build(&sp, f, NULL);
		run_expect("admit", f, n, out, XDP_PASS);
		key_from_spec(&sp, &k);
		assert_int_equal(bpf_map_lookup_elem(fd_conns, &k, &c), 0);

		n = icmp_about_synack(f, &sp, unreach, not_fatal, sp.seq + 1, TH_SYN | TH_ACK, 20);
		assert_false(icmp_releases("an error Linux does not abort on", f, n, &k));
		n = icmp_about_synack(f, &sp, unreach, host_unreach, sp.seq + 2, TH_SYN | TH_ACK, 20);
		assert_false(icmp_releases("a quote with the wrong ack", f, n, &k));
		n = icmp_about_synack(f, &sp, unreach, host_unreach, sp.seq + 1, TH_ACK, 20);
		assert_false(icmp_releases("a quote that is not a SYN-ACK", f, n, &k));
		n = icmp_about_synack(f, &sp, unreach, host_unreach, sp.seq + 1, TH_SYN | TH_ACK, 8);
		assert_false(icmp_releases("an 8-byte quote (cannot be checked)", f, n, &k));
		n = icmp_about_synack(f, &sp, family == 4 ? 0 : 128, 0, sp.seq + 1, TH_SYN | TH_ACK, 20);
		assert_false(icmp_releases("an echo reply", f, n, &k));

		drain_events();
		/* Connections wait for its level: the close is an event, for
		 * the daemon to let the next one in. */
		{
			struct sluice_seats st = get_seats(L_QUEUE);

			put_seats(L_QUEUE, st.seats_in_use, 1);
		}
		n = icmp_about_synack(f, &sp, unreach, host_unreach, sp.seq + 1, TH_SYN | TH_ACK, 20);
		assert_true(icmp_releases("host unreachable about our SYN-ACK", f, n, &k));
		put_seats(L_QUEUE, get_seats(L_QUEUE).seats_in_use, 0);
		ring_buffer__consume(rb);
		assert_int_equal(nevents, 1);
		assert_int_equal(events[0].type, SLUICE_EV_CLOSE);
		assert_int_equal(events[0].end, SLUICE_END_HANDSHAKE_ICMP);
		assert_false(icmp_releases("the same error again", f, n, &k));

		/* Parameter problem aborts in both families; an established
		 * connection is sock_ops' business. */
		n = fr_build(&sp, f, NULL);
		run_expect("admit again", f, n, out, XDP_PASS);
		assert_int_equal(bpf_map_lookup_elem(fd_conns, &k, &c), 0);
		c.state = SLUICE_CONN_ESTABLISHED;
		assert_int_equal(bpf_map_update_elem(fd_conns, &k, &c, BPF_EXIST), 0);
		n = icmp_about_synack(f, &sp, family == 4 ? 12 : 4, 0, sp.seq + 1, TH_SYN | TH_ACK, 20);
		assert_false(icmp_releases("an established connection", f, n, &k));
		c.state = SLUICE_CONN_ADMITTED;
		assert_int_equal(bpf_map_update_elem(fd_conns, &k, &c, BPF_EXIST), 0);
		assert_true(icmp_releases("parameter problem", f, n, &k));
	}
}

/* sluice_reset answers a held SYN with the RST the data path would have
 * sent itself; anything but a SYN is refused. */
/* Run sluice_reset on the frame of sp: its verdict, and for XDP_TX the
 * reply compared with the RST built independently. */
static void expect_reset(const struct fr_spec *sp, uint32_t verdict)
{
	static uint8_t f[FR_MAX_LEN], out[FR_MAX_LEN], want[FR_MAX_LEN];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f, .data_out = out,
		    .data_size_out = FR_MAX_LEN, .repeat = 1);
	size_t wn;

	o.data_size_in = (uint32_t)fr_build(sp, f, NULL);
	assert_int_equal(bpf_prog_test_run_opts(reset_fd, &o), 0);
	assert_int_equal(o.retval, verdict);
	if (verdict != XDP_TX)
		return;
	wn = expected_rst_from_spec(sp, 0, want);
	assert_int_equal(o.data_size_out, wn);
	assert_memory_equal(out, want, wn);
}

static void test_reset_program(void **state)
{
	struct fr_spec sp;

	(void)state;
	for (int family = 4; family <= 6; family += 2) {
		if (family == 4)
			fr_default_v4_syn(&sp);
		else
			fr_default_v6_syn(&sp);
		sp.nvlan = 1;
		sp.vlan_tpid[0] = 0x8100;
		sp.vlan_tci[0] = 7;
		expect_reset(&sp, XDP_TX);
	}
	/* A held handshake ACK (a level seating at the ACK): the RST takes
	 * its seq from the ACK's ack, RFC 793. */
	fr_default_v6_syn(&sp);
	sp.tcp_flags = TH_ACK;
	sp.seq = 0x01020304;
	sp.ack = 0xa0b0c0d0;
	expect_reset(&sp, XDP_TX);
	/* Neither a SYN nor an ACK: nothing to answer. */
	fr_default_v4_syn(&sp);
	sp.tcp_flags = TH_SYN | TH_ACK;
	expect_reset(&sp, XDP_ABORTED);
}

static const struct CMUnitTest tests[] = {
	SCENARIO(test_defer_carries_frame),
	SCENARIO(test_defer_frame_too_long),
	SCENARIO(test_defer_no_frames),
	SCENARIO(test_rst_releases_half_open),
	SCENARIO(test_icmp_releases_half_open),
	SCENARIO(test_reset_program),
};

int main(void)
{
	return cmocka_run_group_tests_name("sluice_xdp_held", tests, group_setup, group_teardown);
}
