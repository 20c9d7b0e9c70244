// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Benchmark baseline: the same parser as sluice_xdp, then XDP_PASS.  The
 * difference to sluice_xdp is what classification and admission cost.
 */
#include "parse.h"

SEC("xdp")
int parse_pass(struct xdp_md *ctx)
{
	struct syn_pkt p = {};

	/* The verdict of the parse is ignored: only its cost matters. */
	return parse_frame(ctx, &p) == PARSE_SYN ? XDP_PASS : XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
