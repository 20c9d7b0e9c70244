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
 * else a new one, pinned.  Its fd, or -errno (a kernel before 6.6 knows
 * no tcx attach type: -EINVAL). */
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
	if (fd < 0)
		return -errno;
	if (bpf_obj_pin(fd, path)) {
		err = -errno;
		pr_warn("pin tcx link %s: %s (attached, but not kept across a restart)", path,
			strerror(-err));
	}
	return fd;
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

/* prog as sluice's cls_bpf filter (direct action) on the interface's
 * clsact qdisc, created if missing: replaced in place where a previous
 * daemon left it.  0 or -errno. */
static int attach_clsact(const struct sl_dp_iface *ifc, struct bpf_program *prog,
			 enum bpf_tc_attach_point where)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifc->ifindex, .attach_point = where);
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = SL_TC_HANDLE, .priority = SL_TC_PRIORITY,
		    .prog_fd = bpf_program__fd(prog), .flags = BPF_TC_F_REPLACE);
	int err = bpf_tc_hook_create(&hook);

	if (err && err != -EEXIST)
		return err;
	return bpf_tc_attach(&hook, &opts);
}

int sl_tx_hooks_remove_clsact(int ifindex, uint32_t in_prog_id, uint32_t out_prog_id)
{
	static const enum bpf_tc_attach_point where[] = {BPF_TC_INGRESS, BPF_TC_EGRESS};
	const uint32_t ids[] = {in_prog_id, out_prog_id};
	/* No clsact qdisc (a tcx host, or never attached) is the usual
	 * answer here, and libbpf would print the kernel's complaint. */
	libbpf_print_fn_t libbpf_print = libbpf_set_print(NULL);
	int removed = 0;

	for (size_t i = 0; i < 2; i++) {
		LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = where[i]);
		LIBBPF_OPTS(bpf_tc_opts, opts, .handle = SL_TC_HANDLE, .priority = SL_TC_PRIORITY);

		if (bpf_tc_query(&hook, &opts) || (ids[i] && opts.prog_id != ids[i]))
			continue; /* none there, or not ours */
		opts.prog_id = 0;
		if (!bpf_tc_detach(&hook, &opts))
			removed++;
	}
	libbpf_set_print(libbpf_print);
	return removed;
}

/* Both hand-off programs on the interface: by tcx, else (a kernel before
 * 6.6) as cls_bpf filters on clsact, which every supported kernel has.
 * The fallback is said once; an interface with neither, each time. */
static void attach_handoff(struct sl_dataplane *dp, struct sl_dp_iface *ifc)
{
	static bool said_clsact;
	int err;

	ifc->tc_in_fd = attach_tcx(dp, ifc, dp->skel->progs.sluice_tc_in, SL_BPF_TCX_INGRESS, "tcx_in");
	if (ifc->tc_in_fd >= 0) {
		ifc->tc_out_fd = attach_tcx(dp, ifc, dp->skel->progs.sluice_tc_out, SL_BPF_TCX_EGRESS,
					    "tcx_out");
		if (ifc->tc_out_fd >= 0) {
			ifc->tc_via = SL_TC_TCX;
			return;
		}
		err = ifc->tc_out_fd;
		ifc->tc_out_fd = -1;
		detach_tcx(dp, ifc, &ifc->tc_in_fd, "tcx_in", false);
	} else {
		err = ifc->tc_in_fd;
		ifc->tc_in_fd = -1;
	}
	if (!attach_clsact(ifc, dp->skel->progs.sluice_tc_in, BPF_TC_INGRESS) &&
	    !attach_clsact(ifc, dp->skel->progs.sluice_tc_out, BPF_TC_EGRESS)) {
		ifc->tc_via = SL_TC_CLSACT;
		if (!said_clsact)
			pr_info("event=handoff_clsact iface=%s tcx_err=\"%s\" (this kernel has no tcx, "
				"Linux 6.6: the hand-off programs run as cls_bpf filters on a clsact "
				"qdisc instead, the same way out and in)", ifc->name, strerror(-err));
		said_clsact = true;
		return;
	}
	sl_tx_hooks_remove_clsact(ifc->ifindex, 0, 0);
	ifc->tc_via = SL_TC_NONE;
	pr_warn("event=handoff_unavailable iface=%s err=\"%s\" (neither a tcx link nor a clsact "
		"filter could be attached: refusals on %s go by XDP_TX alone, held SYNs by ticket)",
		ifc->name, strerror(-err), ifc->name);
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
	for (size_t i = 0; i < dp->n_ifaces; i++)
		attach_handoff(dp, &dp->ifaces[i]);
	dp->tx_bulk_link = attach_tp(dp, dp->skel->progs.sluice_tx_bulk, "xdp_bulk_tx", "tx_bulk");
	dp->tx_exc_link = attach_tp(dp, dp->skel->progs.sluice_tx_exc, "xdp_exception", "tx_exc");
}

bool sl_tx_hooks_ready(const struct sl_dataplane *dp, size_t i)
{
	return i < dp->n_ifaces && dp->ifaces[i].tc_via != SL_TC_NONE;
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
		if (ifc->tc_via == SL_TC_CLSACT && !keep)
			sl_tx_hooks_remove_clsact(ifc->ifindex, 0, 0);
		ifc->tc_via = SL_TC_NONE;
	}
	detach_tp(&dp->tx_bulk_link, keep);
	detach_tp(&dp->tx_exc_link, keep);
}
