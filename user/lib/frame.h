/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A SYN frame (or a handshake's final ACK) as the data path held it (lib,
 * pure): where its headers are, and its TCP checksum made whole before it
 * is put back into the stack.
 *
 * Why the checksum: a SYN from a local veth peer arrives CHECKSUM_PARTIAL
 * (the sender offloaded the checksum and nobody computed it on the way):
 * its TCP checksum field holds only the pseudo-header sum.  Re-injected as
 * it is, TCP would drop it silently.  A frame whose checksum is neither
 * right nor that partial sum is corrupt and is not re-injected.
 */
#ifndef SLUICE_FRAME_H
#define SLUICE_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sl_frame {
	int family;        /* 4 or 6 */
	size_t l3_off;     /* IP header */
	size_t l4_off;     /* TCP header */
	size_t l4_len;     /* TCP header and payload, from the IP lengths */
	uint32_t seq;      /* its sequence number (host order) */
	bool ack;          /* an ACK (no SYN): its seq is the client's SYN's + 1 */
};

/* Parse an Ethernet frame holding a TCP SYN, or an ACK without SYN (up to
 * two VLAN tags, IPv4 with options, IPv6 with hop-by-hop and destination
 * options).  0, or -EINVAL when it is not such a frame (a RST, a SYN-ACK,
 * or what we cannot re-check: a fragment, a routing header). */
int sl_frame_parse(const uint8_t *frame, size_t len, struct sl_frame *out);

enum sl_csum {
	SL_CSUM_OK = 0,   /* the checksum was right */
	SL_CSUM_FIXED,    /* it held the pseudo-header sum only: completed */
	SL_CSUM_BAD,      /* neither: corrupt */
};

/* Check the TCP checksum of a parsed frame and complete a partial one in
 * place. */
enum sl_csum sl_frame_fix_tcp_csum(uint8_t *frame, const struct sl_frame *f);

#endif
