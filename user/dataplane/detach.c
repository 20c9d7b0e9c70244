// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "dataplane/detach.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "dataplane/attachments.h"
#include "dataplane/chain.h"
#include "dataplane/pinned_maps.h"
#include "dataplane/prog_stats.h"
#include "dataplane/tx_hooks.h"
#include "sluice_abi.h"

static __u32 mode_flag(const char *mode)
{
	if (!strcmp(mode, "generic"))
		return XDP_FLAGS_SKB_MODE;
	if (!strcmp(mode, "offload"))
		return XDP_FLAGS_HW_MODE;
	return XDP_FLAGS_DRV_MODE;
}

/* XDP off every interface running the pinned program, and only where it
 * is still that program (XDP_FLAGS_REPLACE): someone else's stays. */
static void detach_xdp(const char *pin_dir, struct sl_detach_report *r)
{
	struct sl_xdp_attachment at[SL_DETACH_MAX_IFACES];
	char path[4096];
	__u32 prog_id;
	size_t n = 0;
	int prog_fd;

	if (sl_pin_path(path, sizeof(path), pin_dir, "progs", SLUICE_PROG_XDP))
		return;
	prog_fd = bpf_obj_get(path);
	if (prog_fd < 0)
		return;
	if (sl_xdp_attachments(pin_dir, &prog_id, at, SL_DETACH_MAX_IFACES, &n))
		n = 0;
	for (size_t i = 0; i < n; i++) {
		LIBBPF_OPTS(bpf_xdp_attach_opts, opts, .old_prog_fd = prog_fd);

		if (bpf_xdp_detach(at[i].ifindex, mode_flag(at[i].mode) | XDP_FLAGS_REPLACE, &opts)) {
			r->n_failed++;
			continue;
		}
		if (r->n_xdp < SL_DETACH_MAX_IFACES) {
			memcpy(r->xdp[r->n_xdp], at[i].ifname, IF_NAMESIZE);
			r->xdp_mode[r->n_xdp++] = at[i].mode;
		}
	}
	close(prog_fd);
}

/* The hand-off's clsact filters (a kernel without tcx: tx_hooks.h) off
 * every interface the pinned map of protected interfaces names, each only
 * while it runs the pinned program.  Before the pins go: their ids say
 * what is sluice's. */
static void detach_clsact(const char *pin_dir, struct sl_detach_report *r)
{
	uint32_t in_id = sl_pinned_prog_id(pin_dir, SLUICE_PROG_TC_IN);
	uint32_t out_id = sl_pinned_prog_id(pin_dir, SLUICE_PROG_TC_OUT);
	__u32 key, next, *prev = NULL;
	char path[4096];
	int fd;

	if (!in_id || !out_id || sl_pin_path(path, sizeof(path), pin_dir, "maps", sl_map_names[SL_MAP_IFACES]))
		return;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		r->n_links += (size_t)sl_tx_hooks_remove_clsact((int)key, in_id, out_id);
	}
	close(fd);
}

/* Every pinned link detaches its program now (the sock_ops link, the
 * tcx hand-off links, the drop tracepoints); unpinning alone would leave
 * it running until the last fd (none) and the pin went.  A link the
 * kernel cannot detach (a tracepoint's, before Linux 6.x) goes with its
 * pin, below.  The root-array markers are maps, not links. */
static void detach_links(const char *pin_dir, struct sl_detach_report *r)
{
	struct dirent *e;
	char dir[4096], path[4352];
	DIR *d;

	if (snprintf(dir, sizeof(dir), "%s/links", pin_dir) >= (int)sizeof(dir) || !(d = opendir(dir)))
		return;
	while ((e = readdir(d))) {
		int fd;

		if (e->d_name[0] == '.' || !strncmp(e->d_name, SL_ROOT_MARKER, strlen(SL_ROOT_MARKER)))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path))
			continue;
		fd = bpf_obj_get(path);
		if (fd < 0)
			continue;
		if (!bpf_link_detach(fd)) {
			if (!strcmp(e->d_name, "sockops"))
				r->sockops = true;
			else
				r->n_links++;
		} else if (errno != EOPNOTSUPP && errno != EINVAL) {
			r->n_failed++;
		}
		close(fd);
	}
	closedir(d);
}

/* Slots sluice took in a root program's array: emptied where they still
 * hold the pinned program (the marker pins name them). */
static void leave_root_arrays(const char *pin_dir, struct sl_detach_report *r)
{
	__u32 own = sl_pinned_prog_id(pin_dir, SLUICE_PROG_XDP);
	struct dirent *e;
	char dir[4096], path[4352];
	DIR *d;

	if (snprintf(dir, sizeof(dir), "%s/links", pin_dir) >= (int)sizeof(dir) || !(d = opendir(dir)))
		return;
	while ((e = readdir(d))) {
		__u32 slot, cur = 0;
		char *end;
		int fd;

		if (strncmp(e->d_name, SL_ROOT_MARKER, strlen(SL_ROOT_MARKER)))
			continue;
		slot = (__u32)strtoul(e->d_name + strlen(SL_ROOT_MARKER), &end, 10);
		if (*end)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path))
			continue;
		fd = bpf_obj_get(path);
		if (fd < 0) {
			r->n_failed++;
			continue;
		}
		if (!bpf_map_lookup_elem(fd, &slot, &cur) && own && cur == own) {
			if (bpf_map_delete_elem(fd, &slot))
				r->n_failed++;
			else
				r->n_root_slots++;
		}
		close(fd);
	}
	closedir(d);
}

static void remove_pins(const char *pin_dir, struct sl_detach_report *r)
{
	static const char *const kinds[] = {"progs", "links", "maps"};
	char dir[4096];

	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		struct dirent *e;
		DIR *d;

		if (snprintf(dir, sizeof(dir), "%s/%s", pin_dir, kinds[k]) >= (int)sizeof(dir))
			continue;
		d = opendir(dir);
		if (!d)
			continue;
		while ((e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			if (unlinkat(dirfd(d), e->d_name, 0))
				r->n_failed++;
			else
				r->n_pins++;
		}
		closedir(d);
		rmdir(dir);
	}
	if (rmdir(pin_dir) && errno != ENOENT)
		r->n_failed++; /* something not ours is in it: left in place */
}

int sl_detach_pinned(const char *pin_dir, struct sl_detach_report *r)
{
	int fd, err = 0;

	memset(r, 0, sizeof(*r));
	fd = open(pin_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	r->found = true;
	/* The daemon's own lock: held, a daemon runs and owns all of it. */
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		err = errno == EWOULDBLOCK ? -EBUSY : -errno;
		goto out;
	}
	detach_xdp(pin_dir, r);
	detach_clsact(pin_dir, r);
	leave_root_arrays(pin_dir, r);
	detach_links(pin_dir, r);
	remove_pins(pin_dir, r);
out:
	close(fd);
	return err;
}
