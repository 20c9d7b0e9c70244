/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Test frame builder for the sluice packet tests (in the spirit of Katran's
 * PacketBuilder and the kernel selftests' pkt_v4/pkt_v6, in plain C).
 *
 * A frame is described by a struct fr_spec: link layer (MACs, 0..4 VLAN
 * tags with any TPID), IPv4 (options, fragment bits, any field overridable)
 * or IPv6 (an extension header chain: hop-by-hop, routing, destination
 * options, fragment, AH) or raw L3 bytes, and an L4 header: TCP (flags,
 * seq/ack, options, payload), UDP, ICMP or ICMPv6.  fr_build() writes the
 * bytes, with correct IPv4 header and L4 checksums computed from scratch
 * (big-endian byte arithmetic, deliberately unlike the BPF code's native
 * word sums), and reports where each header landed (struct fr_layout).
 *
 * Deliberately broken frames are described with the fr_spec.ovr mask: the
 * overridden fields are written verbatim, checksums are still computed over
 * whatever was written.
 *
 * Everything here is independent of the BPF sources: the tests compare the
 * program's output against frames built by this file.
 */
#ifndef SLUICE_TEST_FRAMES_H
#define SLUICE_TEST_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define FR_MAX_LEN  4096
#define FR_MAX_VLAN 4
#define FR_MAX_EXT  10

/* EtherTypes */
#define FR_ETH_IP    0x0800
#define FR_ETH_ARP   0x0806
#define FR_ETH_IPV6  0x86dd
#define FR_ETH_8021Q 0x8100
#define FR_ETH_8021AD 0x88a8
#define FR_ETH_LLDP  0x88cc

/* IP protocol / IPv6 next header numbers */
#define FR_IPPROTO_HOPOPTS  0
#define FR_IPPROTO_ICMP     1
#define FR_IPPROTO_TCP      6
#define FR_IPPROTO_UDP      17
#define FR_IPPROTO_ROUTING  43
#define FR_IPPROTO_FRAGMENT 44
#define FR_IPPROTO_GRE      47
#define FR_IPPROTO_ESP      50
#define FR_IPPROTO_AH       51
#define FR_IPPROTO_ICMPV6   58
#define FR_IPPROTO_NONE     59
#define FR_IPPROTO_DSTOPTS  60

/* TCP flags (byte 13 of the TCP header) */
#define TH_FIN 0x01
#define TH_SYN 0x02
#define TH_RST 0x04
#define TH_PSH 0x08
#define TH_ACK 0x10
#define TH_URG 0x20
#define TH_ECE 0x40
#define TH_CWR 0x80

/* IPv4 flags/fragment offset field (host order) */
#define FR_IP_RF 0x8000
#define FR_IP_DF 0x4000
#define FR_IP_MF 0x2000

/* fr_spec.ovr: fields written verbatim instead of computed */
#define FR_OVR_IHL      (1u << 0) /* .ihl (IPv4 header length in 32-bit words) */
#define FR_OVR_VERSION  (1u << 1) /* .version (IPv4 or IPv6 version nibble) */
#define FR_OVR_TOTLEN   (1u << 2) /* .tot_len (IPv4 total length) */
#define FR_OVR_DOFF     (1u << 3) /* .doff (TCP data offset in 32-bit words) */
#define FR_OVR_PLEN     (1u << 4) /* .plen (IPv6 payload length) */
#define FR_OVR_NEXTHDR  (1u << 5) /* .nexthdr (IPv6 next header / IPv4 protocol) */
#define FR_OVR_BADCSUM  (1u << 6) /* corrupt the L4 checksum */

/* One IPv6 extension header. */
struct fr_ext {
	uint8_t  type;      /* FR_IPPROTO_HOPOPTS/ROUTING/DSTOPTS/FRAGMENT/AH */
	uint16_t len;       /* total bytes incl. the 2-byte header; 0 = minimum
			     * (8 for hop/rt/dst/frag, 24 for AH with a 12-byte ICV) */
	uint16_t frag_off;  /* FRAGMENT: offset in 8-byte units */
	uint8_t  frag_more; /* FRAGMENT: M flag */
	uint32_t frag_id;   /* FRAGMENT: identification */
};

struct fr_spec {
	/* link layer */
	uint8_t  dmac[6], smac[6];
	int      nvlan;
	uint16_t vlan_tpid[FR_MAX_VLAN], vlan_tci[FR_MAX_VLAN];
	uint16_t ethertype; /* 0: derived from family */
	int      family;    /* 4, 6, or 0: raw L3 bytes (.raw_l3) */

	/* IPv4 */
	uint8_t  saddr4[4], daddr4[4];
	uint8_t  tos, ttl;
	uint16_t ip_id;
	uint16_t frag;                  /* flags | offset, host order */
	uint8_t  ip_opts[40];
	int      ip_opts_len;           /* multiple of 4, <= 40 */

	/* IPv6 */
	uint8_t  saddr6[16], daddr6[16];
	uint8_t  tclass, hlim;
	uint32_t flow;
	struct fr_ext ext[FR_MAX_EXT];
	int      next;

	/* L4 */
	uint8_t  proto;                 /* FR_IPPROTO_TCP/UDP/ICMP/ICMPV6/anything */
	uint16_t sport, dport;          /* host order */
	uint32_t seq, ack;
	uint8_t  tcp_flags;
	uint8_t  tcp_res;               /* low nibble of byte 12 (reserved / AE bit) */
	uint16_t window, urg;
	uint8_t  tcp_opts[40];
	int      tcp_opts_len;          /* padded with EOL to a multiple of 4 */
	uint8_t  icmp_type, icmp_code;
	const uint8_t *payload;         /* NULL with payload_len > 0: pattern bytes */
	int      payload_len;

	/* raw L3 (family 0): bytes after the last EtherType */
	const uint8_t *raw_l3;
	int      raw_l3_len;

	int      trailer_len;           /* bytes after the IP datagram (Ethernet padding) */

	/* deliberate damage */
	uint32_t ovr;
	uint8_t  ihl, version, doff, nexthdr;
	uint16_t tot_len, plen;
};

/* Where fr_build() put things. */
struct fr_layout {
	size_t len;      /* frame length */
	size_t l2_len;   /* Ethernet + VLAN tags = offset of the IP header */
	size_t l3_len;   /* IPv4 header incl. options, or IPv6 40 + extension headers */
	size_t l4_off;   /* offset of the L4 header */
	size_t l4_hlen;  /* L4 header length (TCP incl. options) */
	size_t pay_off;  /* offset of the L4 payload */
	size_t pay_len;
};

/* ---- byte helpers ---------------------------------------------------- */

static inline void fr_put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static inline void fr_put32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = (v >> 16) & 0xff;
	p[2] = (v >> 8) & 0xff;
	p[3] = v & 0xff;
}

static inline uint16_t fr_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t fr_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* ---- internet checksum (RFC 1071) -------------------------------------- */

/* Add len bytes to a running 32-bit one's complement accumulator, reading
 * the data as big-endian 16-bit words (odd trailing byte padded with 0). */
static inline uint32_t fr_csum_add(uint32_t sum, const void *buf, size_t len)
{
	const uint8_t *b = buf;
	size_t i;

	for (i = 0; i + 1 < len; i += 2) {
		sum += (uint32_t)(b[i] << 8 | b[i + 1]);
		if (sum & 0x80000000u)
			sum = (sum & 0xffff) + (sum >> 16);
	}
	if (len & 1)
		sum += (uint32_t)b[len - 1] << 8;
	return sum;
}

/* Fold and complement: the value to store (host order; write with fr_put16). */
static inline uint16_t fr_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static inline uint16_t fr_inet_csum(const void *buf, size_t len)
{
	return fr_csum_fold(fr_csum_add(0, buf, len));
}

static inline uint32_t fr_pseudo_v4(const uint8_t saddr[4], const uint8_t daddr[4],
				    uint8_t proto, size_t l4_len)
{
	uint8_t ph[12];

	memcpy(ph, saddr, 4);
	memcpy(ph + 4, daddr, 4);
	ph[8] = 0;
	ph[9] = proto;
	fr_put16(ph + 10, (uint16_t)l4_len);
	return fr_csum_add(0, ph, sizeof(ph));
}

static inline uint32_t fr_pseudo_v6(const uint8_t saddr[16], const uint8_t daddr[16],
				    uint8_t nh, size_t l4_len)
{
	uint8_t ph[40];

	memcpy(ph, saddr, 16);
	memcpy(ph + 16, daddr, 16);
	fr_put32(ph + 32, (uint32_t)l4_len);
	ph[36] = ph[37] = ph[38] = 0;
	ph[39] = nh;
	return fr_csum_add(0, ph, sizeof(ph));
}

/* IPv4 header (ihl from the header) sums to 0xffff. */
static inline bool fr_ipv4_csum_ok(const uint8_t *ip, size_t avail)
{
	size_t hl = (size_t)(ip[0] & 0x0f) * 4;

	if (avail < 20 || hl < 20 || hl > avail)
		return false;
	return fr_inet_csum(ip, hl) == 0;
}

/* L4 checksum (TCP/UDP) over the IPv4 pseudo header. */
static inline bool fr_l4_csum_ok_v4(const uint8_t *ip, const uint8_t *l4, size_t l4_len)
{
	return fr_csum_fold(fr_csum_add(fr_pseudo_v4(ip + 12, ip + 16, ip[9], l4_len),
					l4, l4_len)) == 0;
}

/* L4 checksum (TCP/UDP/ICMPv6) over the IPv6 pseudo header. */
static inline bool fr_l4_csum_ok_v6(const uint8_t saddr[16], const uint8_t daddr[16],
				    uint8_t nh, const uint8_t *l4, size_t l4_len)
{
	return fr_csum_fold(fr_csum_add(fr_pseudo_v6(saddr, daddr, nh, l4_len),
					l4, l4_len)) == 0;
}

static inline bool fr_tcp_csum_ok_v4(const uint8_t *ip, const uint8_t *tcp, size_t tcp_len)
{
	return ip[9] == FR_IPPROTO_TCP && fr_l4_csum_ok_v4(ip, tcp, tcp_len);
}

static inline bool fr_tcp_csum_ok_v6(const uint8_t *ip6, const uint8_t *tcp, size_t tcp_len)
{
	return fr_l4_csum_ok_v6(ip6 + 8, ip6 + 24, FR_IPPROTO_TCP, tcp, tcp_len);
}

/* Recompute the IPv4 header checksum in place (after a mutation). */
static inline void fr_fix_ipv4_csum(uint8_t *ip)
{
	size_t hl = (size_t)(ip[0] & 0x0f) * 4;

	if (hl < 20)
		hl = 20;
	fr_put16(ip + 10, 0);
	fr_put16(ip + 10, fr_inet_csum(ip, hl));
}

/* ---- default specs ----------------------------------------------------- */

static const uint8_t fr_client_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
static const uint8_t fr_server_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 };
static const uint8_t fr_client4[4] = { 198, 51, 100, 7 };
static const uint8_t fr_server4[4] = { 192, 0, 2, 10 };
static const uint8_t fr_client6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0xc1, 0x1e, 0, 0,
					0, 0, 0, 0, 0xde, 0xad, 0xbe, 0xef };
static const uint8_t fr_server6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0x5e, 0x5e, 0, 0,
					0, 0, 0, 0, 0, 0, 0, 0x0a };

/* Typical Linux SYN options: MSS 1460, SACK_PERM, TS, NOP, WS 7 (20 bytes). */
static const uint8_t fr_syn_opts[20] = {
	0x02, 0x04, 0x05, 0xb4,                         /* MSS 1460 */
	0x04, 0x02,                                     /* SACK permitted */
	0x08, 0x0a, 0x00, 0x01, 0xe2, 0x40, 0, 0, 0, 0, /* TS val 123456, ecr 0 */
	0x01,                                           /* NOP */
	0x03, 0x03, 0x07,                               /* WS 7 */
};

/* The fields every SYN spec shares (for designated-initializer macros). */
#define FR_SYN_COMMON                                                       \
	.dmac = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 },                     \
	.smac = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 },                     \
	.proto = FR_IPPROTO_TCP, .sport = 40000, .dport = 80,               \
	.seq = 0x12345678, .tcp_flags = TH_SYN, .window = 64240

#define FR_V4_COMMON                                                        \
	.family = 4, .saddr4 = { 198, 51, 100, 7 }, .daddr4 = { 192, 0, 2, 10 }, \
	.ttl = 64, .ip_id = 0x1c46, .frag = FR_IP_DF

#define FR_V6_COMMON                                                        \
	.family = 6,                                                        \
	.saddr6 = { 0x20, 0x01, 0x0d, 0xb8, 0xc1, 0x1e, 0, 0, 0, 0, 0, 0,   \
		    0xde, 0xad, 0xbe, 0xef },                               \
	.daddr6 = { 0x20, 0x01, 0x0d, 0xb8, 0x5e, 0x5e, 0, 0, 0, 0, 0, 0,   \
		    0, 0, 0, 0x0a },                                        \
	.hlim = 64

static inline void fr_default_v4_syn(struct fr_spec *s)
{
	memset(s, 0, sizeof(*s));
	memcpy(s->dmac, fr_server_mac, 6);
	memcpy(s->smac, fr_client_mac, 6);
	s->family = 4;
	memcpy(s->saddr4, fr_client4, 4);
	memcpy(s->daddr4, fr_server4, 4);
	s->ttl = 64;
	s->ip_id = 0x1c46;
	s->frag = FR_IP_DF;
	s->proto = FR_IPPROTO_TCP;
	s->sport = 40000;
	s->dport = 80;
	s->seq = 0x12345678;
	s->tcp_flags = TH_SYN;
	s->window = 64240;
}

static inline void fr_default_v6_syn(struct fr_spec *s)
{
	fr_default_v4_syn(s);
	s->family = 6;
	memcpy(s->saddr6, fr_client6, 16);
	memcpy(s->daddr6, fr_server6, 16);
	s->hlim = 64;
}

/* ---- builder ------------------------------------------------------------ */

static inline uint8_t fr_payload_byte(const struct fr_spec *s, int i)
{
	return s->payload ? s->payload[i] : (uint8_t)(0xa0 + i * 7);
}

static inline size_t fr_ext_len(const struct fr_ext *e)
{
	if (e->len)
		return e->len;
	return e->type == FR_IPPROTO_AH ? 24 : 8;
}

/* Fill an option area (after the 2-byte header) with Pad1/PadN. */
static inline void fr_fill_pad_opts(uint8_t *p, size_t n)
{
	memset(p, 0, n);
	if (n >= 2) {
		p[0] = 1; /* PadN */
		p[1] = (uint8_t)(n - 2);
	}
}

/* Write the L4 header and payload at p; returns its length.  The checksum
 * is filled in by the caller (it needs the pseudo header). */
static inline size_t fr_build_l4(const struct fr_spec *s, uint8_t *p, size_t *hlen)
{
	size_t h = 0, i;

	switch (s->proto) {
	case FR_IPPROTO_TCP: {
		int ol = (s->tcp_opts_len + 3) & ~3;
		uint8_t doff = (uint8_t)((20 + ol) / 4);

		if (s->ovr & FR_OVR_DOFF)
			doff = s->doff;
		h = 20 + (size_t)ol;
		fr_put16(p, s->sport);
		fr_put16(p + 2, s->dport);
		fr_put32(p + 4, s->seq);
		fr_put32(p + 8, s->ack);
		p[12] = (uint8_t)(doff << 4 | (s->tcp_res & 0x0f));
		p[13] = s->tcp_flags;
		fr_put16(p + 14, s->window);
		fr_put16(p + 16, 0);
		fr_put16(p + 18, s->urg);
		memset(p + 20, 0, (size_t)ol); /* EOL padding */
		memcpy(p + 20, s->tcp_opts, (size_t)s->tcp_opts_len);
		break;
	}
	case FR_IPPROTO_UDP:
		h = 8;
		fr_put16(p, s->sport);
		fr_put16(p + 2, s->dport);
		fr_put16(p + 4, (uint16_t)(8 + s->payload_len));
		fr_put16(p + 6, 0);
		break;
	case FR_IPPROTO_ICMP:
	case FR_IPPROTO_ICMPV6:
		h = 8;
		p[0] = s->icmp_type;
		p[1] = s->icmp_code;
		fr_put16(p + 2, 0);
		fr_put16(p + 4, 0x1234); /* echo id */
		fr_put16(p + 6, 1);      /* echo seq */
		break;
	default:
		h = 0; /* opaque protocol: payload only */
		break;
	}
	for (i = 0; i < (size_t)s->payload_len; i++)
		p[h + i] = fr_payload_byte(s, (int)i);
	*hlen = h;
	return h + (size_t)s->payload_len;
}

static inline size_t fr_l4_csum_off(uint8_t proto)
{
	switch (proto) {
	case FR_IPPROTO_TCP:    return 16;
	case FR_IPPROTO_UDP:    return 6;
	case FR_IPPROTO_ICMP:
	case FR_IPPROTO_ICMPV6: return 2;
	default:                return SIZE_MAX;
	}
}

/* Build the frame into buf (at least FR_MAX_LEN bytes).  Returns the length. */
static inline size_t fr_build(const struct fr_spec *s, uint8_t *buf, struct fr_layout *lay)
{
	struct fr_layout l = { 0 };
	size_t off = 0, l4len, hlen, co;
	uint16_t et;
	int i;

	memset(buf, 0, FR_MAX_LEN);
	memcpy(buf, s->dmac, 6);
	memcpy(buf + 6, s->smac, 6);
	off = 12;
	for (i = 0; i < s->nvlan && i < FR_MAX_VLAN; i++) {
		fr_put16(buf + off, s->vlan_tpid[i] ? s->vlan_tpid[i] : FR_ETH_8021Q);
		fr_put16(buf + off + 2, s->vlan_tci[i]);
		off += 4;
	}
	et = s->ethertype;
	if (!et)
		et = s->family == 6 ? FR_ETH_IPV6 : FR_ETH_IP;
	fr_put16(buf + off, et);
	off += 2;
	l.l2_len = off;

	if (s->family == 4) {
		uint8_t *ip = buf + off;
		size_t ol = ((size_t)s->ip_opts_len + 3) & ~(size_t)3;
		size_t ihl_b = 20 + ol;
		uint8_t ihl = (uint8_t)(ihl_b / 4);
		uint8_t ver = 4;

		if (s->ovr & FR_OVR_IHL)
			ihl = s->ihl;
		if (s->ovr & FR_OVR_VERSION)
			ver = s->version;
		memset(ip + 20, 0, ol);
		memcpy(ip + 20, s->ip_opts, (size_t)s->ip_opts_len);
		l4len = fr_build_l4(s, ip + ihl_b, &hlen);
		ip[0] = (uint8_t)(ver << 4 | (ihl & 0x0f));
		ip[1] = s->tos;
		fr_put16(ip + 2, (s->ovr & FR_OVR_TOTLEN) ? s->tot_len
							  : (uint16_t)(ihl_b + l4len));
		fr_put16(ip + 4, s->ip_id);
		fr_put16(ip + 6, s->frag);
		ip[8] = s->ttl;
		ip[9] = (s->ovr & FR_OVR_NEXTHDR) ? s->nexthdr : s->proto;
		fr_put16(ip + 10, 0);
		memcpy(ip + 12, s->saddr4, 4);
		memcpy(ip + 16, s->daddr4, 4);
		fr_put16(ip + 10, fr_inet_csum(ip, ihl_b));

		co = fr_l4_csum_off(s->proto);
		if (co != SIZE_MAX && l4len >= co + 2) {
			uint8_t *l4 = ip + ihl_b;
			uint32_t sum = s->proto == FR_IPPROTO_ICMP ? 0 :
				fr_pseudo_v4(s->saddr4, s->daddr4, s->proto, l4len);
			uint16_t c = fr_csum_fold(fr_csum_add(sum, l4, l4len));

			if (s->proto == FR_IPPROTO_UDP && c == 0)
				c = 0xffff;
			if (s->ovr & FR_OVR_BADCSUM)
				c ^= 0x5a5a;
			fr_put16(l4 + co, c);
		}
		l.l3_len = ihl_b;
		l.l4_off = off + ihl_b;
		off += ihl_b + l4len;
	} else if (s->family == 6) {
		uint8_t *ip6 = buf + off;
		size_t eo = 40, ext_total = 0;
		uint8_t first_nh = s->next ? s->ext[0].type : s->proto;
		uint8_t ver = (s->ovr & FR_OVR_VERSION) ? s->version : 6;

		if (s->ovr & FR_OVR_NEXTHDR)
			first_nh = s->nexthdr;
		for (i = 0; i < s->next && i < FR_MAX_EXT; i++) {
			const struct fr_ext *e = &s->ext[i];
			uint8_t *h = ip6 + eo;
			size_t el = fr_ext_len(e);
			uint8_t nh = i + 1 < s->next ? s->ext[i + 1].type : s->proto;

			h[0] = nh;
			switch (e->type) {
			case FR_IPPROTO_FRAGMENT:
				h[1] = 0;
				fr_put16(h + 2, (uint16_t)(e->frag_off << 3 | (e->frag_more & 1)));
				fr_put32(h + 4, e->frag_id);
				memset(h + 8, 0, el - 8);
				break;
			case FR_IPPROTO_AH:
				h[1] = (uint8_t)(el / 4 - 2);
				fr_put16(h + 2, 0);
				fr_put32(h + 4, 0x00001000); /* SPI */
				fr_put32(h + 8, 1);          /* sequence */
				memset(h + 12, 0x5c, el - 12); /* ICV */
				break;
			case FR_IPPROTO_ROUTING:
				h[1] = (uint8_t)(el / 8 - 1);
				h[2] = 253; /* experimental routing type */
				h[3] = 0;   /* segments left */
				memset(h + 4, 0, el - 4);
				break;
			default: /* hop-by-hop, destination options */
				h[1] = (uint8_t)(el / 8 - 1);
				fr_fill_pad_opts(h + 2, el - 2);
				break;
			}
			eo += el;
			ext_total += el;
		}
		l4len = fr_build_l4(s, ip6 + eo, &hlen);
		fr_put32(ip6, (uint32_t)ver << 28 | (uint32_t)s->tclass << 20 | (s->flow & 0xfffff));
		fr_put16(ip6 + 4, (s->ovr & FR_OVR_PLEN) ? s->plen
							 : (uint16_t)(ext_total + l4len));
		ip6[6] = first_nh;
		ip6[7] = s->hlim;
		memcpy(ip6 + 8, s->saddr6, 16);
		memcpy(ip6 + 24, s->daddr6, 16);

		co = fr_l4_csum_off(s->proto);
		if (co != SIZE_MAX && s->proto != FR_IPPROTO_ICMP && l4len >= co + 2) {
			uint8_t *l4 = ip6 + eo;
			uint16_t c = fr_csum_fold(fr_csum_add(
				fr_pseudo_v6(s->saddr6, s->daddr6, s->proto, l4len), l4, l4len));

			if (s->proto == FR_IPPROTO_UDP && c == 0)
				c = 0xffff;
			if (s->ovr & FR_OVR_BADCSUM)
				c ^= 0x5a5a;
			fr_put16(l4 + co, c);
		}
		l.l3_len = eo;
		l.l4_off = off + eo;
		off += eo + l4len;
	} else {
		memcpy(buf + off, s->raw_l3, (size_t)s->raw_l3_len);
		l.l3_len = 0;
		l.l4_off = off;
		hlen = 0;
		l4len = (size_t)s->raw_l3_len;
		off += (size_t)s->raw_l3_len;
	}
	l.l4_hlen = hlen;
	l.pay_off = l.l4_off + hlen;
	l.pay_len = l4len - hlen;
	memset(buf + off, 0, (size_t)s->trailer_len);
	off += (size_t)s->trailer_len;
	l.len = off;
	if (lay)
		*lay = l;
	return off;
}

/* An ARP request (who-has server, tell client) as raw L3 bytes. */
static const uint8_t fr_arp_request[28] = {
	0x00, 0x01, 0x08, 0x00, 6, 4, 0x00, 0x01,
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 198, 51, 100, 7,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 192, 0, 2, 10,
};

#endif /* SLUICE_TEST_FRAMES_H */
