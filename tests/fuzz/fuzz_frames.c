// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libFuzzer target for the XDP program itself: every input is a frame run
 * through sluice_xdp with BPF_PROG_TEST_RUN in the real kernel, and
 * compared with the independent reference classifier of the packet tests
 * (verdict, output frame, counters, events; tests/packet/harness.c).  The
 * levels are full, so every SYN is deferred or rejected.  Needs root.
 */
#include "harness.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	if (group_setup(NULL)) {
		fprintf(stderr, "fuzz_frames: cannot load the sluice object (root and BPF needed)\n");
		exit(1);
	}
	setup_maps(S_FULL);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned runs;
	uint32_t verdict;
	enum ref_class cls;

	if (size < ETH_HLEN_MIN || size > 1514)
		return 0; /* BPF_PROG_TEST_RUN wants a whole Ethernet frame */
	if (runs++ % 256 == 0)
		put_heartbeat(mono_ns());
	if (check_against_reference("fuzz_frames", data, size, &verdict, &cls))
		abort();
	return 0;
}
