// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "lib/frame.h"

#include <errno.h>
#include <stdbool.h>

#define ETH_HLEN 14
#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86dd
#define ETH_P_8021Q 0x8100
#define ETH_P_8021AD 0x88a8
#define PROTO_TCP 6
#define PROTO_HOPOPTS 0
#define PROTO_DSTOPTS 60

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int parse_tcp(const uint8_t *frame, size_t len, size_t l4_off, size_t l4_len,
		     struct sl_frame *out)
{
	const uint8_t *th = frame + l4_off;
	size_t doff;

	if (l4_len < 20 || l4_off + l4_len > len)
		return -EINVAL;
	doff = (size_t)(th[12] >> 4) * 4;
	if (doff < 20 || doff > l4_len || (th[13] & 0x04))
		return -EINVAL;
	/* A SYN without ACK, or an ACK without SYN (a handshake's last, held
	 * by a level seating at the ACK); never RST. */
	switch (th[13] & 0x12) {
	case 0x02:
		out->ack = false;
		break;
	case 0x10:
		out->ack = true;
		break;
	default:
		return -EINVAL;
	}
	out->l4_off = l4_off;
	out->l4_len = l4_len;
	out->seq = get32(th + 4);
	return 0;
}

int sl_frame_parse(const uint8_t *frame, size_t len, struct sl_frame *out)
{
	size_t off = ETH_HLEN;
	uint16_t proto;

	if (len < ETH_HLEN)
		return -EINVAL;
	proto = get16(frame + 12);
	for (int i = 0; i < 2 && (proto == ETH_P_8021Q || proto == ETH_P_8021AD); i++) {
		if (off + 4 > len)
			return -EINVAL;
		proto = get16(frame + off + 2);
		off += 4;
	}
	out->l3_off = off;
	if (proto == ETH_P_IP) {
		const uint8_t *ip = frame + off;
		size_t ihl, tot;

		if (off + 20 > len || ip[0] >> 4 != 4)
			return -EINVAL;
		ihl = (size_t)(ip[0] & 15) * 4;
		tot = get16(ip + 2);
		if (ihl < 20 || tot < ihl || off + tot > len || ip[9] != PROTO_TCP ||
		    (get16(ip + 6) & 0x3fff))
			return -EINVAL;
		out->family = 4;
		return parse_tcp(frame, len, off + ihl, tot - ihl, out);
	}
	if (proto == ETH_P_IPV6) {
		const uint8_t *ip = frame + off;
		size_t payload, ext = off + 40, end;
		uint8_t next;

		if (off + 40 > len || ip[0] >> 4 != 6)
			return -EINVAL;
		payload = get16(ip + 4);
		end = off + 40 + payload;
		if (end > len)
			return -EINVAL;
		next = ip[6];
		for (int i = 0; i < 6 && (next == PROTO_HOPOPTS || next == PROTO_DSTOPTS); i++) {
			size_t hl;

			if (ext + 8 > end)
				return -EINVAL;
			hl = ((size_t)frame[ext + 1] + 1) * 8;
			next = frame[ext];
			ext += hl;
		}
		if (next != PROTO_TCP || ext > end)
			return -EINVAL;
		out->family = 6;
		return parse_tcp(frame, len, ext, end - ext, out);
	}
	return -EINVAL;
}

/* One's complement sum of big-endian 16-bit words (odd byte padded). */
static uint32_t sum16(const uint8_t *p, size_t n, uint32_t acc)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		acc += get16(p + i);
	if (n & 1)
		acc += (uint32_t)p[n - 1] << 8;
	return acc;
}

static uint16_t fold(uint32_t acc)
{
	while (acc >> 16)
		acc = (acc & 0xffff) + (acc >> 16);
	return (uint16_t)acc;
}

/* Two spellings of one value in one's complement arithmetic. */
static bool same(uint16_t a, uint16_t b)
{
	return a == b || ((a == 0 || a == 0xffff) && (b == 0 || b == 0xffff));
}

enum sl_csum sl_frame_fix_tcp_csum(uint8_t *frame, const struct sl_frame *f)
{
	const uint8_t *ip = frame + f->l3_off;
	uint8_t *check = frame + f->l4_off + 16;
	uint16_t field = get16(check), pseudo, full;
	uint32_t acc = 0;

	if (f->family == 4) {
		acc = sum16(ip + 12, 8, 0); /* saddr, daddr */
		acc += PROTO_TCP + (uint32_t)f->l4_len;
	} else {
		acc = sum16(ip + 8, 32, 0); /* saddr, daddr */
		acc += (uint32_t)(f->l4_len >> 16) + (uint32_t)(f->l4_len & 0xffff) + PROTO_TCP;
	}
	pseudo = fold(acc);
	/* The segment with its checksum field taken out. */
	acc = sum16(frame + f->l4_off, 16, acc);
	acc = sum16(frame + f->l4_off + 18, f->l4_len - 18, acc);
	full = (uint16_t)~fold(acc);
	if (same(field, full))
		return SL_CSUM_OK;
	if (!same(field, pseudo))
		return SL_CSUM_BAD;
	check[0] = (uint8_t)(full >> 8);
	check[1] = (uint8_t)full;
	return SL_CSUM_FIXED;
}
