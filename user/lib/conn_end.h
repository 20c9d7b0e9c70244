/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * How a tracked connection ended (the close event's `end`,
 * include/sluice_abi.h enum sluice_conn_end), and which ends were served.
 *
 * A connection that never established says nothing of the service: a
 * client that gave up while its SYN waited answers the SYN-ACK of the
 * re-injected SYN with a RST one round trip later, and such a "completion"
 * would drag every latency statistic towards zero (the surge collapse of
 * issue 23: a baseline of 0.2 ms, a limit of 1).  Every consumer of close
 * events asks sl_conn_end_served() before it takes a sample.
 */
#ifndef SLUICE_CONN_END_H
#define SLUICE_CONN_END_H

#include <stdbool.h>
#include <stdint.h>

#include "sluice_abi.h"

/* Served: it established (then closed in order or was reset).  Its
 * duration is a latency sample. */
static inline bool sl_conn_end_served(uint8_t end)
{
	return end == SLUICE_END_CLOSED || end == SLUICE_END_RESET;
}

/* "closed", "reset", "handshake-rst", "handshake-icmp", or "unknown". */
const char *sl_conn_end_name(uint8_t end);

#endif
