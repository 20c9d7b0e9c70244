// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* tcx hand-off links and XDP_TX drop tracepoints.  See tx_hooks.h. */
#include "dataplane/tx_hooks.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"
#include "sluice.skel.h"

/* linux/bpf.h of 6.6 (Debian 12's headers and libbpf 1.1 predate tcx). */
#define SL_BPF_TCX_INGRESS 46
#define SL_BPF_TCX_EGRESS  47

static int link_path(char *buf, size_t len, const struct sl_dataplane *dp, const char *what,
		     int ifindex)
{
	char name[64];

	snprintf(name, sizeof(name), "%s_%d", what, ifindex);
	return sl_pin_path(buf, len, dp->pin_dir, "links", name);
}

/* One tcx link of prog on the interface: the pinned one updated to prog,
 * else a new one, pinned.  Its fd, or -errno. */
static int attach_tcx(struct sl_dataplane *dp, const struct sl_dp_iface *ifc,
		      struct bpf_program *prog, int attach_type, const char *what)
{
	int prog_fd = bpf_program__fd(prog), fd, err;
	char path[4096];

	err = link_path(path, sizeof(path), dp, what, ifc->ifindex);
	if (err)
		return err;
	fd = bpf_obj_get(path);
	if (fd >= 0) {
		/* A previous daemon's (or a device gone: its link is defunct
		 * and refuses the update). */
		if (!bpf_link_update(fd, prog_fd, NULL))
			return fd;
		close(fd);
		unlink(path);
	}
	fd = bpf_link_create(prog_fd, ifc->ifindex, (enum bpf_attach_type)attach_type, NULL);
	if (fd < 0) {
		err = -errno;
		pr_warn("event=handoff_unavailable iface=%s prog=%s err=\"%s\" (tcx needs Linux 6.6: "
			"refusals on %s go by XDP_TX alone, held SYNs by ticket)",
			ifc->name, bpf_program__name(prog), strerror(-err), ifc->name);
		return err;
	}
	if (bpf_obj_pin(fd, path)) {
		err = -errno;
		pr_warn("pin tcx link %s: %s (attached, but not kept across a restart)", path,
			strerror(-err));
	}
	return fd;
}

/* The tracepoint's new link first, then its pin in place of the old one:
 * no moment counts nothing. */
static struct bpf_link *attach_tp(struct sl_dataplane *dp, struct bpf_program *prog,
				  const char *tp, const char *pin)
{
	struct bpf_link *link = bpf_program__attach_raw_tracepoint(prog, tp);
	char path[4096];
	int err;

	if (!link) {
		pr_warn("event=tx_watch_unavailable tracepoint=%s err=\"%s\" (dropped XDP_TX "
			"refusals are not counted)", tp, strerror(errno));
		return NULL;
	}
	if (sl_pin_path(path, sizeof(path), dp->pin_dir, "links", pin))
		return link;
	unlink(path);
	err = bpf_link__pin(link, path);
	if (err)
		pr_warn("pin %s: %s (counted, but not while no daemon runs)", path, strerror(-err));
	return link;
}

void sl_tx_hooks_attach(struct sl_dataplane *dp)
{
	for (size_t i = 0; i < dp->n_ifaces; i++) {
		struct sl_dp_iface *ifc = &dp->ifaces[i];

		ifc->tc_in_fd = attach_tcx(dp, ifc, dp->skel->progs.sluice_tc_in, SL_BPF_TCX_INGRESS,
					   "tcx_in");
		ifc->tc_out_fd = ifc->tc_in_fd < 0 ? -1 :
				 attach_tcx(dp, ifc, dp->skel->progs.sluice_tc_out, SL_BPF_TCX_EGRESS,
					    "tcx_out");
	}
	dp->tx_bulk_link = attach_tp(dp, dp->skel->progs.sluice_tx_bulk, "xdp_bulk_tx", "tx_bulk");
	dp->tx_exc_link = attach_tp(dp, dp->skel->progs.sluice_tx_exc, "xdp_exception", "tx_exc");
}

bool sl_tx_hooks_ready(const struct sl_dataplane *dp, size_t i)
{
	return i < dp->n_ifaces && dp->ifaces[i].tc_in_fd >= 0 && dp->ifaces[i].tc_out_fd >= 0;
}

static void detach_tcx(struct sl_dataplane *dp, const struct sl_dp_iface *ifc, int *fd,
		       const char *what, bool keep)
{
	char path[4096];

	if (*fd < 0)
		return;
	if (!keep) {
		bpf_link_detach(*fd);
		if (!link_path(path, sizeof(path), dp, what, ifc->ifindex))
			unlink(path);
	}
	close(*fd);
	*fd = -1;
}

static void detach_tp(struct bpf_link **link, bool keep)
{
	if (!*link)
		return;
	if (!keep)
		bpf_link__unpin(*link);
	bpf_link__destroy(*link); /* closes our fd: the pin, if kept, holds it */
	*link = NULL;
}

void sl_tx_hooks_detach(struct sl_dataplane *dp, bool keep)
{
	for (size_t i = 0; i < dp->n_ifaces; i++) {
		struct sl_dp_iface *ifc = &dp->ifaces[i];

		detach_tcx(dp, ifc, &ifc->tc_in_fd, "tcx_in", keep);
		detach_tcx(dp, ifc, &ifc->tc_out_fd, "tcx_out", keep);
	}
	detach_tp(&dp->tx_bulk_link, keep);
	detach_tp(&dp->tx_exc_link, keep);
}
