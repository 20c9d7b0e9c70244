// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Held SYN frames (lib/frame.h): header offsets over the shapes the data
 * path holds (VLAN tags, IPv4 options, IPv6 extension headers, TCP
 * options), and the TCP checksum: right stays, the pseudo-header-only sum
 * of a CHECKSUM_PARTIAL frame is completed to exactly the right one, and a
 * corrupt frame is recognised.  Frames from the packet tests' builder,
 * which computes full checksums.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "frames.h"
#include "lib/frame.h"

static const uint8_t opts[] = {2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0x12, 0x34, 0, 0, 0, 0,
			       1, 3, 3, 7};

/* The shapes: plain v4, v4 with IP options and TCP options in QinQ, v6
 * with options after a hop-by-hop header, and a SYN with data. */
static size_t shape(int i, uint8_t *f, struct fr_layout *lay, struct fr_spec *sp)
{
	switch (i) {
	case 0:
		fr_default_v4_syn(sp);
		break;
	case 1:
		fr_default_v4_syn(sp);
		sp->ip_opts[0] = 0x94;
		sp->ip_opts[1] = 4;
		sp->ip_opts_len = 4;
		sp->nvlan = 2;
		sp->vlan_tpid[0] = 0x88a8;
		sp->vlan_tpid[1] = 0x8100;
		memcpy(sp->tcp_opts, opts, sizeof(opts));
		sp->tcp_opts_len = sizeof(opts);
		break;
	case 2:
		fr_default_v6_syn(sp);
		sp->ext[0].type = FR_IPPROTO_HOPOPTS;
		sp->next = 1;
		memcpy(sp->tcp_opts, opts, sizeof(opts));
		sp->tcp_opts_len = sizeof(opts);
		break;
	default:
		fr_default_v6_syn(sp);
		sp->payload_len = 33; /* odd: the padded byte of the sum */
		break;
	}
	sp->seq = 0xdeadbeef;
	return fr_build(sp, f, lay);
}

static void test_parse(void **state)
{
	uint8_t f[FR_MAX_LEN];
	struct fr_layout lay;
	struct fr_spec sp;
	struct sl_frame fr;

	(void)state;
	for (int i = 0; i < 4; i++) {
		size_t n = shape(i, f, &lay, &sp);

		assert_int_equal(sl_frame_parse(f, n, &fr), 0);
		assert_int_equal(fr.family, sp.family);
		assert_int_equal(fr.l3_off, lay.l2_len);
		assert_int_equal(fr.l4_off, lay.l4_off);
		assert_int_equal(fr.l4_len, lay.l4_hlen + lay.pay_len);
		assert_int_equal(fr.seq, 0xdeadbeef);
		assert_false(fr.ack);
		assert_int_equal(sl_frame_parse(f, n - 1, &fr), -EINVAL); /* truncated */
	}
	/* A handshake's final ACK (held by a level seating at the ACK), with
	 * data too. */
	fr_default_v4_syn(&sp);
	sp.tcp_flags = TH_ACK;
	sp.seq = 0x01000001;
	assert_int_equal(sl_frame_parse(f, fr_build(&sp, f, NULL), &fr), 0);
	assert_true(fr.ack);
	assert_int_equal(fr.seq, 0x01000001);
	sp.tcp_flags = TH_ACK | TH_PSH;
	sp.payload_len = 40;
	assert_int_equal(sl_frame_parse(f, fr_build(&sp, f, NULL), &fr), 0);
	assert_true(fr.ack);
	sp.payload_len = 0;
	/* Never a SYN-ACK, a RST or a bare FIN. */
	const uint8_t refused[] = {TH_SYN | TH_ACK, TH_RST, TH_RST | TH_ACK, TH_FIN, TH_SYN | TH_RST};

	for (size_t i = 0; i < sizeof(refused); i++) {
		fr_default_v4_syn(&sp);
		sp.tcp_flags = refused[i];
		assert_int_equal(sl_frame_parse(f, fr_build(&sp, f, NULL), &fr), -EINVAL);
	}
	fr_default_v4_syn(&sp);
	sp.frag = 0x2000; /* MF: a fragment */
	assert_int_equal(sl_frame_parse(f, fr_build(&sp, f, NULL), &fr), -EINVAL);
}

/* The pseudo-header sum, as a sender that offloads the checksum leaves it. */
static uint16_t pseudo_sum(const uint8_t *f, const struct sl_frame *fr)
{
	uint32_t acc = 6 + (uint32_t)fr->l4_len;
	size_t at = fr->l3_off + (fr->family == 4 ? 12 : 8), n = fr->family == 4 ? 8 : 32;

	for (size_t i = 0; i < n; i += 2)
		acc += (uint32_t)(f[at + i] << 8 | f[at + i + 1]);
	while (acc >> 16)
		acc = (acc & 0xffff) + (acc >> 16);
	return (uint16_t)acc;
}

static void test_checksum(void **state)
{
	uint8_t f[FR_MAX_LEN], orig[FR_MAX_LEN];
	struct fr_layout lay;
	struct fr_spec sp;
	struct sl_frame fr;

	(void)state;
	for (int i = 0; i < 4; i++) {
		size_t n = shape(i, f, &lay, &sp);
		uint16_t ps;

		memcpy(orig, f, n);
		assert_int_equal(sl_frame_parse(f, n, &fr), 0);
		assert_int_equal(sl_frame_fix_tcp_csum(f, &fr), SL_CSUM_OK);
		assert_memory_equal(f, orig, n);

		ps = pseudo_sum(f, &fr);
		f[fr.l4_off + 16] = (uint8_t)(ps >> 8);
		f[fr.l4_off + 17] = (uint8_t)ps;
		assert_int_equal(sl_frame_fix_tcp_csum(f, &fr), SL_CSUM_FIXED);
		assert_memory_equal(f, orig, n); /* exactly the full checksum */

		f[fr.l4_off + 5] ^= 0x40; /* a flipped bit in the sequence number */
		assert_int_equal(sl_frame_fix_tcp_csum(f, &fr), SL_CSUM_BAD);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_checksum),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
