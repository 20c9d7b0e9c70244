// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libFuzzer target for the held frame's parser and checksum repair
 * (lib/frame.c): any bytes the data path may hand the daemon as a held
 * SYN or ACK.  Invariants: a parsed frame's offsets lie inside it, in
 * order; the repair writes only the TCP checksum field; a frame it calls
 * right or repaired checks right afterwards; repairing twice changes
 * nothing more.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/frame.h"

#define CHECK(x) do { if (!(x)) { fprintf(stderr, "invariant failed: %s (%s:%d)\n", #x, __FILE__, __LINE__); abort(); } } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *frame = malloc(size ? size : 1), *before = malloc(size ? size : 1);
	struct sl_frame f;
	enum sl_csum c;

	if (!frame || !before)
		abort();
	memcpy(frame, data, size);
	if (!sl_frame_parse(frame, size, &f)) {
		CHECK(f.family == 4 || f.family == 6);
		CHECK(f.l3_off < f.l4_off);
		CHECK(f.l4_off + 20 <= size);
		CHECK(f.l4_off + f.l4_len <= size);
		memcpy(before, frame, size);
		c = sl_frame_fix_tcp_csum(frame, &f);
		CHECK(c == SL_CSUM_OK || c == SL_CSUM_FIXED || c == SL_CSUM_BAD);
		for (size_t i = 0; i < size; i++)
			CHECK(frame[i] == before[i] || i == f.l4_off + 16 || i == f.l4_off + 17);
		if (c == SL_CSUM_OK || c == SL_CSUM_BAD)
			CHECK(!memcmp(frame, before, size));
		if (c != SL_CSUM_BAD)
			CHECK(sl_frame_fix_tcp_csum(frame, &f) == SL_CSUM_OK);
	}
	free(frame);
	free(before);
	return 0;
}
