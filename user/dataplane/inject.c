// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Held frames out through the packet socket.  See inject.h. */
#include "dataplane/inject.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <linux/if_packet.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dataplane/tx_hooks.h"
#include "lib/handoff.h"
#include "lib/log.h"
#include "sluice.skel.h"

/* A frame the data path held, its trailer, and room for a RST built from
 * it (never longer than the SYN: no options, no data). */
#define SL_INJECT_BUF (SLUICE_FRAME_MAX + 64)

int sl_inject_open(struct sl_dataplane *dp)
{
	int err;

	/* Protocol 0: this socket receives nothing, it only sends. */
	dp->pkt_fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (dp->pkt_fd >= 0)
		return 0;
	err = -errno;
	pr_err("open a packet socket: %s (held SYNs are re-injected and refused through one; "
	       "it takes CAP_NET_RAW at start)", strerror(-err));
	return err;
}

void sl_inject_close(struct sl_dataplane *dp)
{
	if (dp->pkt_fd >= 0)
		close(dp->pkt_fd);
	dp->pkt_fd = -1;
}

static int iface_of(const struct sl_dataplane *dp, uint32_t ifindex)
{
	for (size_t i = 0; i < dp->n_ifaces; i++)
		if ((uint32_t)dp->ifaces[i].ifindex == ifindex)
			return (int)i;
	return -ENODEV;
}

/* Out of device i, as is: proto is the frame's outermost EtherType
 * (network order), which the kernel sets as the skb's protocol.  The first
 * send that fails on a device is said, with its cause (the caller counts
 * every one): a full or dropping egress queue (ENOBUFS), a device gone
 * down (ENETDOWN, ENXIO).  what: "RST" or "SYN". */
static int send_frame(struct sl_dataplane *dp, size_t i, const uint8_t *frame, size_t len,
		      uint16_t proto, const char *what)
{
	struct sl_dp_iface *ifc = &dp->ifaces[i];
	struct sockaddr_ll to = {
		.sll_family = AF_PACKET, .sll_ifindex = ifc->ifindex, .sll_protocol = proto,
	};
	int err;

	if (sendto(dp->pkt_fd, frame, len, MSG_DONTWAIT, (struct sockaddr *)&to, sizeof(to)) >= 0)
		return 0;
	err = -errno;
	if (!ifc->said_send_failed) {
		ifc->said_send_failed = true;
		pr_warn("event=held_send_failed iface=%s frame=%s err=%s (the packet socket could not "
			"send a held %s out of the device: a refused client gets its RST at its next "
			"retransmit, an admitted one connects then; counted in sluicectl status "
			"rst_failed_by_cause.daemon_send; said once per interface)",
			ifc->name, what, strerror(-err), what);
	}
	return err;
}

int sl_inject_syn(struct sl_dataplane *dp, const uint8_t *frame, size_t len, uint32_t ifindex)
{
	uint8_t buf[SL_INJECT_BUF];
	int i = iface_of(dp, ifindex), n;

	if (i < 0)
		return i;
	if (dp->pkt_fd < 0 || !sl_tx_hooks_ready(dp, (size_t)i))
		return -ENOTSUP;
	n = sl_handoff_wrap(frame, len, dp->ifaces[i].cookie, SLUICE_HANDOFF_IN, buf, sizeof(buf));
	if (n < 0)
		return n;
	return send_frame(dp, (size_t)i, buf, (size_t)n, htons(SLUICE_ETH_P_HANDOFF), "SYN");
}

int sl_inject_reset(struct sl_dataplane *dp, const uint8_t *frame, size_t len, uint32_t ifindex)
{
	uint8_t rst[SL_INJECT_BUF];
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = frame,
		.data_size_in = (uint32_t)len,
		.data_out = rst,
		.data_size_out = sizeof(rst),
		.repeat = 1,
	);
	uint16_t proto;
	int i = iface_of(dp, ifindex);

	if (i < 0)
		return i;
	if (dp->pkt_fd < 0 || !dp->skel || len < 14)
		return -ENOTSUP;
	if (bpf_prog_test_run_opts(bpf_program__fd(dp->skel->progs.sluice_reset), &opts))
		return -errno;
	if (opts.retval != XDP_TX || opts.data_size_out < 14)
		return -EINVAL; /* not a frame a RST can answer */
	memcpy(&proto, rst + 12, sizeof(proto));
	return send_frame(dp, (size_t)i, rst, opts.data_size_out, proto, "RST");
}
