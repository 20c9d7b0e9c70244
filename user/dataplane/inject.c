// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "dataplane/inject.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/bpf.h>

#include "sluice.skel.h"

static int run_live(int prog_fd, const uint8_t *frame, size_t len, uint32_t ifindex,
		    uint32_t rx_queue)
{
	struct xdp_md ctx = {
		.data_end = (uint32_t)len,
		.ingress_ifindex = ifindex,
		.rx_queue_index = rx_queue,
	};
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = frame,
		.data_size_in = (uint32_t)len,
		.ctx_in = &ctx,
		.ctx_size_in = sizeof(ctx),
		.flags = BPF_F_TEST_XDP_LIVE_FRAMES,
		.repeat = 1,
	);

	if (prog_fd < 0)
		return -ENOTSUP;
	return bpf_prog_test_run_opts(prog_fd, &opts) ? -errno : 0;
}

int sl_inject_syn(struct sl_dataplane *dp, const uint8_t *frame, size_t len, uint32_t ifindex,
		  uint32_t rx_queue)
{
	return run_live(dp->skel ? bpf_program__fd(dp->skel->progs.sluice_inject) : -1, frame, len,
			ifindex, rx_queue);
}

int sl_inject_reset(struct sl_dataplane *dp, const uint8_t *frame, size_t len, uint32_t ifindex,
		    uint32_t rx_queue)
{
	return run_live(dp->skel ? bpf_program__fd(dp->skel->progs.sluice_reset) : -1, frame, len,
			ifindex, rx_queue);
}
