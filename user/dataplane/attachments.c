// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "dataplane/attachments.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/if_link.h>
#include <string.h>
#include <unistd.h>

#include "dataplane/pinned_maps.h"
#include "dataplane/prog_stats.h"
#include "sluice_abi.h"

static const char *mode_name(__u8 mode)
{
	switch (mode) {
	case XDP_ATTACHED_DRV: return "native";
	case XDP_ATTACHED_SKB: return "generic";
	case XDP_ATTACHED_HW: return "offload";
	default: return "multi";
	}
}

int sl_xdp_attachments(const char *pin_dir, uint32_t *prog_id, struct sl_xdp_attachment *out,
		       size_t max, size_t *n)
{
	struct if_nameindex *all, *i;

	*n = 0;
	*prog_id = sl_pinned_prog_id(pin_dir, SLUICE_PROG_XDP);
	if (!*prog_id)
		return 0;
	all = if_nameindex();
	if (!all)
		return -errno;
	for (i = all; i->if_index && *n < max; i++) {
		LIBBPF_OPTS(bpf_xdp_query_opts, q);
		struct sl_xdp_attachment *a;

		if (bpf_xdp_query((int)i->if_index, 0, &q) || q.attach_mode == XDP_ATTACHED_NONE)
			continue;
		if (q.prog_id != *prog_id && q.drv_prog_id != *prog_id && q.skb_prog_id != *prog_id &&
		    q.hw_prog_id != *prog_id)
			continue;
		a = &out[(*n)++];
		snprintf(a->ifname, sizeof(a->ifname), "%s", i->if_name);
		a->ifindex = (int)i->if_index;
		a->mode = q.skb_prog_id == *prog_id ? "generic" : q.drv_prog_id == *prog_id ? "native" :
			  q.hw_prog_id == *prog_id ? "offload" : mode_name(q.attach_mode);
		a->prog_id = *prog_id;
	}
	if_freenameindex(all);
	return 0;
}
