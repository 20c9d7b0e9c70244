/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Where sluice's XDP program is attached (adapter): every interface of the
 * network namespace whose XDP program is the one pinned in PIN_DIR/progs,
 * with its mode.  For `sluicectl status`; needs no daemon. */
#ifndef SLUICE_ATTACHMENTS_H
#define SLUICE_ATTACHMENTS_H

#include <net/if.h>
#include <stddef.h>
#include <stdint.h>

struct sl_xdp_attachment {
	char ifname[IF_NAMESIZE];
	int ifindex;
	const char *mode; /* "native", "generic", "offload" */
	uint32_t prog_id;
};

/* Fills out[0..*n) (at most max).  *prog_id gets the pinned program's id
 * (0: none pinned).  0, or a negative errno. */
int sl_xdp_attachments(const char *pin_dir, uint32_t *prog_id, struct sl_xdp_attachment *out,
		       size_t max, size_t *n);

#endif
