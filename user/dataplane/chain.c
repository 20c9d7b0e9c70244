// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "dataplane/chain.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dataplane/dataplane.h"
#include "dataplane/pinned_maps.h"
#include "lib/log.h"
#include "sluice.skel.h"

int sl_chain_set_next(struct sl_dataplane *dp, const char *next_pin)
{
	int slots = bpf_map__fd(dp->skel->maps.sl_xdp_next);
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), zero = 0;
	int fd, err;

	if (!next_pin) {
		bpf_map_delete_elem(slots, &zero); /* ENOENT: was empty */
		return 0;
	}
	fd = bpf_obj_get(next_pin);
	if (fd < 0) {
		err = -errno;
		pr_err("xdpChain.next %s: %s (pin the next program there first)", next_pin, strerror(-err));
		return err;
	}
	err = bpf_obj_get_info_by_fd(fd, &info, &len) ? -errno : 0;
	if (!err && info.type != BPF_PROG_TYPE_XDP) {
		pr_err("xdpChain.next %s: program type %u, not XDP", next_pin, info.type);
		err = -EINVAL;
	}
	if (!err && bpf_map_update_elem(slots, &zero, &fd, BPF_ANY)) {
		err = -errno;
		pr_err("xdpChain.next %s: the kernel refuses it as a tail call of sluice's: %s", next_pin,
		       strerror(-err));
	}
	if (!err)
		pr_info("frames sluice passes go on to %s (XDP program id %u, %s)", next_pin, info.id, info.name);
	close(fd);
	return err;
}

static int marker_path(char *buf, size_t len, const struct sl_dataplane *dp, uint32_t slot)
{
	char name[32];

	snprintf(name, sizeof(name), SL_ROOT_MARKER "%u", slot);
	return sl_pin_path(buf, len, dp->pin_dir, "links", name);
}

int sl_chain_join_root(struct sl_dataplane *dp, const char *root_pin, uint32_t slot, bool force)
{
	int prog_fd = bpf_program__fd(dp->skel->progs.sluice_xdp);
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), cur = 0;
	char marker[4096];
	int fd, err;

	fd = bpf_obj_get(root_pin);
	if (fd < 0) {
		err = -errno;
		pr_err("xdpChain.rootArray %s: %s (the root program's array must be pinned there)", root_pin,
		       strerror(-err));
		return err;
	}
	if (bpf_obj_get_info_by_fd(fd, &info, &len) || info.type != BPF_MAP_TYPE_PROG_ARRAY ||
	    slot >= info.max_entries) {
		pr_err("xdpChain.rootArray %s: not a PROG_ARRAY with a slot %u", root_pin, slot);
		close(fd);
		return -EINVAL;
	}
	/* From user space a PROG_ARRAY's element reads as the program's id. */
	if (!bpf_map_lookup_elem(fd, &slot, &cur) && cur && cur != dp->own_old_xdp && !force) {
		pr_err("xdpChain.rootArray %s: slot %u holds XDP program id %u that sluice did not put "
		       "there; choose another slot or use --force", root_pin, slot, cur);
		close(fd);
		return -EBUSY;
	}
	if (bpf_map_update_elem(fd, &slot, &prog_fd, BPF_ANY)) {
		err = -errno;
		pr_err("xdpChain.rootArray %s slot %u: %s", root_pin, slot, strerror(-err));
		close(fd);
		return err;
	}
	err = marker_path(marker, sizeof(marker), dp, slot);
	if (!err) {
		unlink(marker);
		if (bpf_obj_pin(fd, marker))
			pr_warn("pin %s: %s (sluicectl detach will not find the slot)", marker, strerror(errno));
	}
	pr_info("in slot %u of the root program's array %s%s", slot, root_pin,
		cur ? " (replacing a previous sluiced)" : "");
	dp->root_array_fd = fd;
	dp->root_slot = slot;
	return 0;
}

void sl_chain_leave_root(struct sl_dataplane *dp, bool keep)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), cur = 0;
	char marker[4096];

	if (dp->root_array_fd < 0)
		return;
	if (!keep) {
		bpf_obj_get_info_by_fd(bpf_program__fd(dp->skel->progs.sluice_xdp), &info, &len);
		/* Only if it is still ours: never remove someone else's. */
		if (!bpf_map_lookup_elem(dp->root_array_fd, &dp->root_slot, &cur) && cur == info.id)
			bpf_map_delete_elem(dp->root_array_fd, &dp->root_slot);
		if (!marker_path(marker, sizeof(marker), dp, dp->root_slot))
			unlink(marker);
	}
	close(dp->root_array_fd);
	dp->root_array_fd = -1;
}
