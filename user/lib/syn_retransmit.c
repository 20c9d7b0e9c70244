// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "lib/syn_retransmit.h"

uint64_t sl_syn_next_retransmit(uint64_t first_syn_ns, uint64_t now)
{
	uint64_t at = first_syn_ns, rto = SL_NS_PER_SEC;

	for (int i = 0; i < 8 && at <= now; i++) {
		at += rto;
		rto *= 2;
	}
	return at > now ? at : now + rto;
}
