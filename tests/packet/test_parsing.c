// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Packet tests of the sluice XDP program: Parsing: the frame builder itself, minimum sizes, every IPv4 header
 * length, oversized frames, truncation at every length, and a seeded
 * property test against the reference classifier on random frames
 * (SLUICE_FUZZ_SEED, SLUICE_FUZZ_ITERS).
 *
 * Each test runs the real program through BPF_PROG_TEST_RUN (tests/packet/
 * harness.h).  Needs root and a BPF-capable kernel.
 */
#include "harness.h"

/* Builder self-test against published checksum vectors. */
static void test_builder_selftest(void **state)
{
	/* RFC 1071 section 3 example: sum 0xddf2, checksum 0x220d. */
	static const uint8_t rfc1071[8] = { 0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7 };
	/* A textbook IPv4 header (checksum 0xb861 at bytes 10-11). */
	static const uint8_t iphdr[20] = { 0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00,
					   0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01,
					   0xc0, 0xa8, 0x00, 0xc7 };
	uint8_t ip0[20], buf[FR_MAX_LEN];
	struct fr_spec s;
	struct fr_layout lay;
	size_t len;

	(void)state;
	assert_int_equal(fr_inet_csum(rfc1071, 8), 0x220d);
	assert_true(fr_ipv4_csum_ok(iphdr, 20));
	memcpy(ip0, iphdr, 20);
	fr_fix_ipv4_csum(ip0);
	assert_memory_equal(ip0, iphdr, 20);

	fr_default_v4_syn(&s);
	len = fr_build(&s, buf, &lay);
	assert_int_equal(len, 54);
	assert_int_equal(lay.l2_len, 14);
	assert_int_equal(lay.l4_off, 34);
	assert_true(fr_ipv4_csum_ok(buf + 14, 20));
	assert_true(fr_tcp_csum_ok_v4(buf + 14, buf + 34, 20));
	assert_int_equal(buf[47], TH_SYN);
	s.ovr = FR_OVR_BADCSUM;
	fr_build(&s, buf, NULL);
	assert_false(fr_tcp_csum_ok_v4(buf + 14, buf + 34, 20));

	fr_default_v6_syn(&s);
	s.next = 3;
	s.ext[0].type = FR_IPPROTO_HOPOPTS;
	s.ext[1].type = FR_IPPROTO_AH;
	s.ext[2].type = FR_IPPROTO_DSTOPTS;
	s.ext[2].len = 16;
	memcpy(s.tcp_opts, fr_syn_opts, 20);
	s.tcp_opts_len = 20;
	s.payload_len = 7;
	len = fr_build(&s, buf, &lay);
	assert_int_equal(lay.l4_off, 14 + 40 + 8 + 24 + 16);
	assert_int_equal(len, lay.l4_off + 40 + 7);
	assert_int_equal(fr_get16(buf + 18), 8 + 24 + 16 + 40 + 7);
	assert_int_equal(buf[20], FR_IPPROTO_HOPOPTS);
	assert_int_equal(buf[54], FR_IPPROTO_AH);      /* hop-by-hop -> AH */
	assert_int_equal(buf[55], 0);                  /* hop-by-hop hdrlen: 8 bytes */
	assert_int_equal(buf[62], FR_IPPROTO_DSTOPTS); /* AH -> dst opts */
	assert_int_equal(buf[63], 4);                  /* AH hdrlen: 24 / 4 - 2 */
	assert_int_equal(buf[86], FR_IPPROTO_TCP);
	assert_int_equal(buf[87], 1);                  /* dst opts hdrlen: 16 / 8 - 1 */
	assert_true(fr_tcp_csum_ok_v6(buf + 14, buf + lay.l4_off, 47));

	/* The reference classifier agrees with itself on the basics. */
	{
		struct ref_info ri;

		assert_int_equal(ref_parse(buf, len, &ri), REF_SYN);
		assert_int_equal(ri.payload_len, 7);
		assert_int_equal(ri.l4_off, lay.l4_off);
		assert_int_equal(ref_parse(buf, len - 1, &ri), REF_MALFORMED);
	}
}

/* Case 8 (part): the smallest frame BPF_PROG_TEST_RUN accepts for XDP. */
static void test_min_frame_size(void **state)
{
	static uint8_t in[FR_MAX_LEN], out[FR_MAX_LEN];
	struct fr_spec s;
	struct snap a, b;
	uint32_t out_len, retval;
	size_t n;
	int err, first_err = 0;

	(void)state;
	setup_maps(S_FULL);
	fr_default_v4_syn(&s);
	s.dport = P_REJECT;
	fr_build(&s, in, NULL);
	min_accepted_len = -1;
	for (n = 0; n <= ETH_HLEN_MIN; n++) {
		take_snap(&a);
		err = run_xdp(in, n, out, &out_len, &retval);
		take_snap(&b);
		if (err) {
			if (!first_err)
				first_err = err;
			assert_int_equal(err, -EINVAL);
			assert_memory_equal(&a.g, &b.g, sizeof(a.g));
			continue;
		}
		if (min_accepted_len < 0)
			min_accepted_len = (int)n;
		/* Anything accepted must pass, unchanged, counted as malformed. */
		assert_int_equal(retval, XDP_PASS);
		assert_int_equal(out_len, n);
		assert_memory_equal(in, out, n);
		assert_int_equal(b.g.malformed - a.g.malformed, 1);
	}
	print_message("[ INFO     ] XDP test_run: smallest accepted data_size_in = %d bytes "
		      "(shorter frames: %d %s)\n", min_accepted_len, first_err,
		      first_err ? strerror(-first_err) : "");
	assert_int_equal(min_accepted_len, ETH_HLEN_MIN);
}

/* Case 4: every IPv4 header length 6..15: options removed in the reply. */
static void test_reject_every_ihl(void **state)
{
	static uint8_t in[FR_MAX_LEN], out[FR_MAX_LEN], want[FR_MAX_LEN];
	struct fr_spec s;
	struct fr_layout lay;
	char ctx[64];
	size_t n, wn;
	uint32_t out_len;
	int ihl, i;

	(void)state;
	setup_maps(S_FULL);
	for (ihl = 5; ihl <= 15; ihl++) {
		fr_default_v4_syn(&s);
		s.dport = P_REJECT;
		s.seq = 0x01020304u * (uint32_t)ihl;
		s.ip_opts_len = (ihl - 5) * 4;
		for (i = 0; i < s.ip_opts_len; i++)
			s.ip_opts[i] = 1; /* NOP */
		memcpy(s.tcp_opts, fr_syn_opts, 20);
		s.tcp_opts_len = 20;
		s.payload_len = ihl;
		n = fr_build(&s, in, &lay);
		snprintf(ctx, sizeof(ctx), "v4 SYN ihl %d", ihl);
		out_len = run_expect(ctx, in, n, out, XDP_TX);
		wn = expected_rst_from_spec(&s, lay.pay_len, want);
		if (check_rst_fields(ctx, in, 14, 4, lay.l4_off, rst_ack(s.seq, TH_SYN, (size_t)ihl),
				     out, out_len))
			fail_msg("%s: RST fields wrong", ctx);
		assert_int_equal(out_len, wn);
		assert_memory_equal(out, want, wn);
	}
}

/* Big frames: a 3000-byte SYN (linear in test_run) gets its RST; a 9000-byte
 * one is only partly linear, so the program sees the IP length run past
 * data_end and passes it as malformed. */
static void test_reject_big_frames(void **state)
{
	static uint8_t in[FR_MAX_LEN * 3], out[FR_MAX_LEN * 3], want[FR_MAX_LEN];
	struct fr_spec s;
	struct fr_layout lay;
	struct snap a, b;
	uint32_t out_len, retval;
	size_t hdr, n, wn;
	int err;

	(void)state;
	setup_maps(S_FULL);
	fr_default_v4_syn(&s);
	s.dport = P_REJECT;
	s.payload_len = 3000 - 54;
	n = fr_build(&s, in, &lay);
	assert_int_equal(n, 3000);
	out_len = run_expect("3000-byte v4 SYN", in, n, out, XDP_TX);
	wn = expected_rst_from_spec(&s, lay.pay_len, want);
	assert_int_equal(out_len, wn);
	assert_memory_equal(out, want, wn);

	/* 9000 bytes: build the headers, extend the payload by hand. */
	s.payload_len = 0;
	hdr = fr_build(&s, in, NULL);
	n = 9000;
	memset(in + hdr, 0x42, n - hdr);
	fr_put16(in + 14 + 2, (uint16_t)(n - 14));
	fr_fix_ipv4_csum(in + 14);
	take_snap(&a);
	{
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = in, .data_size_in = (uint32_t)n,
			    .data_out = out, .data_size_out = sizeof(out), .repeat = 1);

		err = bpf_prog_test_run_opts(prog_fd, &opts);
		out_len = opts.data_size_out;
		retval = opts.retval;
	}
	take_snap(&b);
	print_message("[ INFO     ] 9000-byte v4 SYN: test_run err %d, verdict %s, %u bytes out, "
		      "malformed +%" PRIu64 "\n", err, verdict_name(retval), out_len,
		      (uint64_t)(b.g.malformed - a.g.malformed));
	assert_int_equal(err, 0);
	if (retval == XDP_TX) {
		wn = expected_rst_from_spec(&s, n - 54, want);
		assert_int_equal(out_len, wn);
		assert_memory_equal(out, want, wn);
	} else {
		assert_int_equal(retval, XDP_PASS);
		assert_int_equal(out_len, n);
		assert_memory_equal(in, out, n);
		assert_int_equal(b.g.malformed - a.g.malformed, 1);
	}
}

/* Case 8: truncation at every length of a SYN that would otherwise be
 * answered with an RST (so any mis-parse shows up as TX). */
static void truncate_all(const struct fr_spec *spec, const char *name)
{
	static uint8_t in[FR_MAX_LEN], out[FR_MAX_LEN];
	struct snap a, b;
	struct ref_info ri;
	struct sluice_stats eg;
	static const struct sluice_level_stats zl;
	char ctx[128];
	size_t len, cut;
	uint32_t out_len, retval;
	int err, bad = 0;

	setup_maps(S_FULL);
	len = fr_build(spec, in, NULL);
	assert_int_equal(ref_parse(in, len, &ri), REF_SYN);
	run_expect(name, in, len, out, XDP_TX);
	drain_events();

	for (cut = 0; cut < len; cut++) {
		snprintf(ctx, sizeof(ctx), "%s cut to %zu of %zu bytes", name, cut, len);
		take_snap(&a);
		err = run_xdp(in, cut, out, &out_len, &retval);
		take_snap(&b);
		if (cut < ETH_HLEN_MIN) {
			if (err != -EINVAL) {
				print_error("%s: test_run returned %d, expected -EINVAL\n", ctx, err);
				bad++;
			}
			continue;
		}
		if (err) {
			print_error("%s: test_run failed: %d\n", ctx, err);
			bad++;
			continue;
		}
		if (retval != XDP_PASS) {
			print_error("%s: verdict %s, expected XDP_PASS\n", ctx, verdict_name(retval));
			bad++;
		}
		if (out_len != cut || memcmp(in, out, cut)) {
			print_error("%s: output changed\n", ctx);
			bad++;
		}
		/* Every cut of these frames falls inside a header or leaves the
		 * IP length beyond the frame: malformed, never a SYN. */
		if (ref_parse(in, cut, &ri) != REF_MALFORMED) {
			print_error("%s: reference classifier does not call it malformed\n", ctx);
			bad++;
		}
		memset(&eg, 0, sizeof(eg));
		eg.malformed = 1;
		bad += check_deltas(ctx, &a, &b, &eg, 0, &zl, 0);
	}
	ring_buffer__consume(rb);
	if (nevents) {
		print_error("%s: %d events from truncated frames\n", name, nevents);
		bad++;
	}
	if (count_hash(fd_conns, sizeof(struct sluice_conn_key))) {
		print_error("%s: truncated frames created connections\n", name);
		bad++;
	}
	if (bad)
		fail_msg("%s: %d mismatch(es) over %zu cuts", name, bad, len);
}

static void test_truncate_v4(void **state)
{
	struct fr_spec s;

	(void)state;
	fr_default_v4_syn(&s);
	s.dport = P_REJECT;
	truncate_all(&s, "v4 SYN");
}

static void test_truncate_v4_vlan(void **state)
{
	struct fr_spec s;

	(void)state;
	fr_default_v4_syn(&s);
	s.dport = P_REJECT;
	s.nvlan = 1;
	s.vlan_tpid[0] = FR_ETH_8021Q;
	s.vlan_tci[0] = 100;
	truncate_all(&s, "v4+VLAN SYN");
}

static void test_truncate_v4_qinq_opts(void **state)
{
	struct fr_spec s;

	(void)state;
	fr_default_v4_syn(&s);
	s.dport = P_REJECT;
	s.nvlan = 2;
	s.vlan_tpid[0] = FR_ETH_8021AD;
	s.vlan_tpid[1] = FR_ETH_8021Q;
	s.ip_opts_len = 8;
	memset(s.ip_opts, 1, 8);
	memcpy(s.tcp_opts, fr_syn_opts, 20);
	s.tcp_opts_len = 20;
	s.payload_len = 10;
	truncate_all(&s, "v4+QinQ+IP options+TCP options+payload SYN");
}

static void test_truncate_v6(void **state)
{
	struct fr_spec s;

	(void)state;
	fr_default_v6_syn(&s);
	s.dport = P_REJECT;
	truncate_all(&s, "v6 SYN");
}

static void test_truncate_v6_ext(void **state)
{
	struct fr_spec s;

	(void)state;
	fr_default_v6_syn(&s);
	s.dport = P_REJECT;
	s.next = 3;
	s.ext[0].type = FR_IPPROTO_HOPOPTS;
	s.ext[1].type = FR_IPPROTO_ROUTING;
	s.ext[1].len = 24;
	s.ext[2].type = FR_IPPROTO_DSTOPTS;
	memcpy(s.tcp_opts, fr_syn_opts, 20);
	s.tcp_opts_len = 20;
	truncate_all(&s, "v6+ext headers SYN");
}

static void test_truncate_v6_vlan_ah(void **state)
{
	struct fr_spec s;

	(void)state;
	fr_default_v6_syn(&s);
	s.dport = P_REJECT;
	s.nvlan = 1;
	s.vlan_tpid[0] = FR_ETH_8021Q;
	s.next = 2;
	s.ext[0].type = FR_IPPROTO_AH;
	s.ext[1].type = FR_IPPROTO_DSTOPTS;
	truncate_all(&s, "v6+VLAN+AH+dstopts SYN");
}

/* Cutting only Ethernet padding keeps the SYN a SYN (the RST is built from
 * the IP lengths, not the frame length). */
static void test_truncate_padding_only(void **state)
{
	static uint8_t in[FR_MAX_LEN], out[FR_MAX_LEN], want[FR_MAX_LEN];
	struct fr_spec s;
	struct fr_layout lay;
	size_t len, cut, wn;
	uint32_t n;

	(void)state;
	setup_maps(S_FULL);
	fr_default_v4_syn(&s);
	s.dport = P_REJECT;
	s.payload_len = 3;
	s.trailer_len = 16;
	len = fr_build(&s, in, &lay);
	wn = expected_rst_from_spec(&s, 3, want);
	for (cut = len - 16; cut <= len; cut++) {
		n = run_expect("v4 SYN with padding cut", in, cut, out, XDP_TX);
		assert_int_equal(n, wn);
		assert_memory_equal(out, want, wn);
	}
}

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dULL;
}

static uint32_t rnd_below(uint32_t n)
{
	return n ? (uint32_t)(rnd() % n) : 0;
}

static const uint16_t fuzz_ports[] = { P_QUEUE, P_REJECT, P_REJECT, P_REJECT, P_EXEMPT,
				       P_NONE, P_UNUSED, P_OOR };

static size_t fuzz_frame(uint8_t *buf)
{
	static const uint8_t ext_types[] = { FR_IPPROTO_HOPOPTS, FR_IPPROTO_DSTOPTS,
					     FR_IPPROTO_ROUTING, FR_IPPROTO_AH };
	struct fr_spec s;
	struct fr_layout lay;
	size_t len, i, k;
	uint32_t m;

	if (rnd_below(12) == 0) {
		/* random bytes behind a plausible EtherType */
		static const uint16_t ets[] = { FR_ETH_IP, FR_ETH_IPV6, FR_ETH_8021Q, FR_ETH_8021AD };

		len = 14 + rnd_below(300);
		for (i = 0; i < len; i++)
			buf[i] = (uint8_t)rnd();
		if (rnd_below(4))
			fr_put16(buf + 12, ets[rnd_below(4)]);
		if (rnd_below(2) && len > 20) /* plausible IP version nibble */
			buf[14] = (uint8_t)((rnd_below(2) ? 0x40 : 0x60) | (buf[14] & 0x0f));
		return len;
	}

	if (rnd_below(2))
		fr_default_v4_syn(&s);
	else
		fr_default_v6_syn(&s);
	s.sport = (uint16_t)rnd();
	s.dport = rnd_below(10) ? fuzz_ports[rnd_below(sizeof(fuzz_ports) / sizeof(fuzz_ports[0]))]
				: (uint16_t)rnd();
	s.seq = (uint32_t)rnd();
	if (rnd_below(5) == 0)
		s.tcp_flags = (uint8_t)rnd();
	else if (rnd_below(8) == 0)
		s.tcp_flags |= TH_ECE | TH_CWR;
	m = rnd_below(20);
	s.nvlan = m < 12 ? 0 : m < 17 ? 1 : m < 19 ? 2 : 3;
	for (i = 0; i < (size_t)s.nvlan; i++) {
		s.vlan_tpid[i] = rnd_below(2) ? FR_ETH_8021Q : FR_ETH_8021AD;
		s.vlan_tci[i] = (uint16_t)rnd_below(4096);
	}
	if (s.family == 4) {
		if (rnd_below(3) == 0) {
			s.ip_opts_len = (int)rnd_below(11) * 4;
			for (i = 0; i < (size_t)s.ip_opts_len; i++)
				s.ip_opts[i] = rnd_below(4) ? 1 : (uint8_t)rnd();
		}
		m = rnd_below(20);
		if (m == 0)
			s.frag = FR_IP_MF;
		else if (m == 1)
			s.frag = (uint16_t)rnd();
		s.tos = (uint8_t)rnd();
		s.ip_id = (uint16_t)rnd();
		s.ttl = (uint8_t)rnd();
	} else {
		s.next = (int)(rnd_below(3) ? rnd_below(3) : rnd_below(8));
		for (i = 0; i < (size_t)s.next; i++) {
			s.ext[i].type = ext_types[rnd_below(4)];
			if (rnd_below(15) == 0)
				s.ext[i].type = FR_IPPROTO_FRAGMENT;
			if (s.ext[i].type == FR_IPPROTO_AH)
				s.ext[i].len = (uint16_t)((3 + rnd_below(8)) * 4);
			else if (s.ext[i].type != FR_IPPROTO_FRAGMENT)
				s.ext[i].len = (uint16_t)((1 + rnd_below(8)) * 8);
		}
		s.tclass = (uint8_t)rnd();
		s.flow = (uint32_t)rnd();
	}
	m = rnd_below(10);
	if (m < 3) {
		memcpy(s.tcp_opts, fr_syn_opts, 20);
		s.tcp_opts_len = 20;
	} else if (m == 3) {
		s.tcp_opts_len = (int)rnd_below(41);
		for (i = 0; i < (size_t)s.tcp_opts_len; i++)
			s.tcp_opts[i] = (uint8_t)rnd();
	}
	if (rnd_below(3) == 0)
		s.payload_len = (int)rnd_below(200);
	m = rnd_below(12);
	if (m == 0)
		s.proto = FR_IPPROTO_UDP;
	else if (m == 1)
		s.proto = s.family == 4 ? FR_IPPROTO_ICMP : FR_IPPROTO_ICMPV6;
	else if (m == 2)
		s.proto = (uint8_t)rnd();
	if (rnd_below(8) == 0)
		s.trailer_len = (int)rnd_below(24);
	len = fr_build(&s, buf, &lay);

	switch (rnd_below(9)) {
	case 0:
	case 1:
		break; /* valid frame */
	case 2: /* truncate */
		len = 14 + rnd_below((uint32_t)(len - 14));
		break;
	case 3: /* flip bytes */
		for (k = 1 + rnd_below(4); k; k--)
			buf[rnd_below((uint32_t)len)] ^= (uint8_t)(1 + rnd_below(255));
		break;
	case 4: { /* smash one header field */
		size_t l3 = lay.l2_len, l4 = lay.l4_off;

		switch (rnd_below(6)) {
		case 0: buf[l3] = (uint8_t)rnd(); break;                         /* version/ihl */
		case 1: fr_put16(buf + l3 + (s.family == 4 ? 2 : 4), (uint16_t)rnd()); break;
		case 2: if (l4 + 12 < len) buf[l4 + 12] = (uint8_t)rnd(); break;  /* doff */
		case 3: if (l4 + 13 < len) buf[l4 + 13] = (uint8_t)rnd(); break;  /* flags */
		case 4: buf[l3 + (s.family == 4 ? 9 : 6)] = (uint8_t)rnd(); break; /* proto/nexthdr */
		case 5: if (s.family == 6 && s.next) buf[l3 + 41] = (uint8_t)rnd(); break; /* hdrlen */
		}
		if (s.family == 4 && rnd_below(2))
			fr_fix_ipv4_csum(buf + l3);
		break;
	}
	case 5: { /* nudge a length field */
		size_t l3 = lay.l2_len;
		int d = (int)rnd_below(17) - 8;

		if (s.family == 4)
			fr_put16(buf + l3 + 2, (uint16_t)(fr_get16(buf + l3 + 2) + d));
		else
			fr_put16(buf + l3 + 4, (uint16_t)(fr_get16(buf + l3 + 4) + d));
		break;
	}
	case 6: /* trailing junk */
		for (k = 1 + rnd_below(64); k; k--)
			buf[len++] = (uint8_t)rnd();
		break;
	case 7: /* truncate and flip */
		len = 14 + rnd_below((uint32_t)(len - 14));
		buf[rnd_below((uint32_t)len)] ^= (uint8_t)(1 + rnd_below(255));
		break;
	default: /* change the 4-tuple port only */
		if (lay.l4_off + 4 <= len)
			fr_put16(buf + lay.l4_off + 2, fuzz_ports[rnd_below(8)]);
		break;
	}
	return len;
}

static void test_fuzz(void **state)
{
	static uint8_t in[FR_MAX_LEN];
	const char *e_seed = getenv("SLUICE_FUZZ_SEED"), *e_iters = getenv("SLUICE_FUZZ_ITERS");
	uint64_t seed = e_seed ? strtoull(e_seed, NULL, 0) : 0x5117ce5eedULL;
	long iters = e_iters ? strtol(e_iters, NULL, 0) : 2000, it;
	long n_pass = 0, n_drop = 0, n_tx = 0, n_mal = 0, n_frag = 0;
	int failures = 0;

	(void)state;
	print_message("[ INFO     ] property test: seed 0x%" PRIx64 ", %ld frames "
		      "(SLUICE_FUZZ_SEED / SLUICE_FUZZ_ITERS to change)\n", seed, iters);
	rng = seed ? seed : 1;
	setup_maps(S_FULL);

	for (it = 0; it < iters; it++) {
		uint32_t retval;
		enum ref_class rc;
		size_t len;
		char ctx[96];
		int bad;

		if (it % 256 == 0)
			put_heartbeat(mono_ns());
		len = fuzz_frame(in);
		snprintf(ctx, sizeof(ctx), "fuzz seed 0x%" PRIx64 " frame %ld", seed, it);
		bad = check_against_reference(ctx, in, len, &retval, &rc);
		if (bad) {
			if (++failures <= 5)
				hexdump("frame", in, len);
		}
		n_pass += retval == XDP_PASS;
		n_drop += retval == XDP_DROP;
		n_tx += retval == XDP_TX;
		n_mal += rc == REF_MALFORMED;
		n_frag += rc == REF_FRAGMENT;
	}
	print_message("[ INFO     ] property test: %ld PASS, %ld DROP, %ld TX; reference: %ld malformed, "
		      "%ld fragments\n", n_pass, n_drop, n_tx, n_mal, n_frag);
	if (failures)
		fail_msg("property test: %d of %ld frames failed (seed 0x%" PRIx64 ")", failures, iters, seed);
}

static const struct CMUnitTest tests[] = {
	SCENARIO(test_builder_selftest),
	SCENARIO(test_min_frame_size),
	SCENARIO(test_reject_every_ihl),
	SCENARIO(test_reject_big_frames),
	SCENARIO(test_truncate_v4),
	SCENARIO(test_truncate_v4_vlan),
	SCENARIO(test_truncate_v4_qinq_opts),
	SCENARIO(test_truncate_v6),
	SCENARIO(test_truncate_v6_ext),
	SCENARIO(test_truncate_v6_vlan_ah),
	SCENARIO(test_truncate_padding_only),
	SCENARIO(test_fuzz),
};

int main(void)
{
	return cmocka_run_group_tests_name("sluice_xdp_parsing", tests, group_setup, group_teardown);
}
