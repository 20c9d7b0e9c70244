// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "lib/conn_end.h"

const char *sl_conn_end_name(uint8_t end)
{
	switch (end) {
	case SLUICE_END_CLOSED: return "closed";
	case SLUICE_END_RESET: return "reset";
	case SLUICE_END_HANDSHAKE_RST: return "handshake-rst";
	case SLUICE_END_HANDSHAKE_ICMP: return "handshake-icmp";
	default: return "unknown";
	}
}
