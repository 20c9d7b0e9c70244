// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The data path's life cycle (struct sl_dataplane, dataplane.h): load the
 * object, adopt or create and pin its maps (a lock on the pin directory,
 * one daemon at a time), pin its programs, attach XDP to every interface,
 * sock_ops to the cgroup, the tc hand-off and the drop watch
 * (tx_hooks.c), open the packet socket (inject.c), and take all of it off
 * again at a stop, or leave it for the next daemon.  What the maps hold
 * is other files' (ledger.c, settings.c, ifaces.c, expiry.c, ...).
 */
#include "dataplane/dataplane.h"
#include "dataplane/chain.h"
#include "dataplane/ifaces.h"
#include "dataplane/inject.h"
#include "dataplane/pinned_maps.h"
#include "dataplane/prog_stats.h"
#include "dataplane/tx_hooks.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <libgen.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "lib/cgroup_path.h"
#include "lib/log.h"
#include "sluice.skel.h"

#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif

static int mkdir_p(const char *path)
{
	char buf[4096];
	size_t len = strlen(path);

	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, len + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0700) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

int sl_ensure_bpffs(const char *pin_dir)
{
	char buf[4096], *parent;
	struct statfs st;
	int err;

	snprintf(buf, sizeof(buf), "%s", pin_dir);
	parent = dirname(buf);
	err = mkdir_p(parent);
	if (err) {
		pr_err("cannot create %s: %s", parent, strerror(-err));
		return err;
	}
	if (statfs(parent, &st)) {
		err = -errno;
		pr_err("statfs %s: %s", parent, strerror(-err));
		return err;
	}
	if (st.f_type == BPF_FS_MAGIC)
		return 0;
	if (mount("bpf", parent, "bpf", 0, "mode=0700")) {
		err = -errno;
		pr_err("%s is not a bpffs and mounting one there failed: %s", parent, strerror(-err));
		return err;
	}
	pr_info("mounted bpffs on %s", parent);
	return 0;
}

/* flock on the pin directory: one daemon per pin directory. */
static int lock_pin_dir(struct sl_dataplane *dp)
{
	int err;

	dp->lock_fd = open(dp->pin_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dp->lock_fd < 0) {
		err = -errno;
		pr_err("open %s: %s", dp->pin_dir, strerror(-err));
		return err;
	}
	if (flock(dp->lock_fd, LOCK_EX | LOCK_NB)) {
		err = -errno;
		pr_err("%s is in use by another sluiced (flock: %s)", dp->pin_dir, strerror(-err));
		close(dp->lock_fd);
		dp->lock_fd = -1;
		return err == -EWOULDBLOCK ? -EBUSY : err;
	}
	return 0;
}

/* Maps another map ABI pinned (a package upgrade across an ABI change):
 * this daemon cannot read them, so it starts the ledger afresh.  Their
 * programs stay attached, and keep their maps alive, until this daemon's
 * replace them; the connections open then are not counted against their
 * levels (the new maps never saw them), so the limits hold again as they
 * close. */
static void drop_foreign_maps(struct sl_dataplane *dp, unsigned abi)
{
	char dir[4096], path[4096 + 256];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(dir, sizeof(dir), "%s/maps", dp->pin_dir);
	d = opendir(dir);
	if (!d)
		return;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			n += !unlink(path);
		}
	closedir(d);
	pr_warn("the %d maps pinned in %s are of map ABI %u and this sluiced is ABI %d: starting "
		"the seat ledger afresh (connections open now are not counted; the data path stays "
		"attached until this daemon's replaces it)", n, dir, abi, SLUICE_ABI_VERSION);
}

/* Reuse maps that are already pinned (a previous daemon with --keep-maps,
 * a crashed daemon, or `bpftool prog loadall ... pinmaps`): seats in use
 * and counters survive. */
static int adopt_pinned_maps(struct sl_dataplane *dp)
{
	struct bpf_map *map;
	char path[4096];
	int fd, err;

	bpf_object__for_each_map(map, dp->skel->obj) {
		err = sl_pin_path(path, sizeof(path), dp->pin_dir, "maps", bpf_map__name(map));
		if (err)
			return err;
		fd = bpf_obj_get(path);
		if (fd < 0) {
			if (errno == ENOENT)
				continue;
			err = -errno;
			pr_err("open pinned map %s: %s", path, strerror(-err));
			return err;
		}
		err = bpf_map__reuse_fd(map, fd);
		close(fd);
		if (err) {
			/* The usual cause: maps kept by a sluice of another map ABI
			 * (a value layout changed), which this one cannot read. */
			pr_err("cannot adopt pinned map %s: %s (kept by a sluice with another map "
			       "layout? this one is ABI %d: stop the other, or remove %s/maps to "
			       "start afresh, which forgets its seat counts)",
			       path, strerror(-err), SLUICE_ABI_VERSION, dp->pin_dir);
			return err;
		}
		dp->adopted_maps++;
	}
	return 0;
}

static int pin_maps(struct sl_dataplane *dp)
{
	struct bpf_map *map;
	char path[4096];
	int err;

	bpf_object__for_each_map(map, dp->skel->obj) {
		err = sl_pin_path(path, sizeof(path), dp->pin_dir, "maps", bpf_map__name(map));
		if (err)
			return err;
		if (!access(path, F_OK))
			continue; /* adopted */
		err = bpf_map__pin(map, path);
		if (err) {
			pr_err("pin map %s: %s", path, strerror(-err));
			return err;
		}
	}
	return 0;
}

/* Who may read the maps: the daemon's user only (0700 directories, 0600
 * pins), or also the read group (0750 and 0640, that group): enough to
 * open each map read-only and look it up, never to write.  Programs and
 * links stay the daemon's. */
static int share_maps(struct sl_dataplane *dp, int gid)
{
	mode_t dir_mode = gid >= 0 ? 0750 : 0700, pin_mode = gid >= 0 ? 0640 : 0600;
	struct bpf_map *map;
	char path[4096];
	int err;

	/* The pin directory, its maps directory, then every map. */
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s%s", dp->pin_dir, i ? "/maps" : "");
		if ((gid >= 0 && chown(path, (uid_t)-1, (gid_t)gid)) || chmod(path, dir_mode))
			goto fail;
	}
	bpf_object__for_each_map(map, dp->skel->obj) {
		if (sl_pin_path(path, sizeof(path), dp->pin_dir, "maps", bpf_map__name(map)))
			continue;
		if ((gid >= 0 && chown(path, (uid_t)-1, (gid_t)gid)) || chmod(path, pin_mode))
			goto fail;
	}
	return 0;
fail:
	err = -errno;
	pr_err("readGroup: %s: %s%s", path, strerror(-err),
	       err == -EPERM ? " (giving a file to a group needs membership of it or CAP_CHOWN: "
			       "SupplementaryGroups= in the systemd unit)" : "");
	return err;
}

static int pin_progs(struct sl_dataplane *dp)
{
	struct bpf_program *prog;
	char path[4096];
	int err;

	bpf_object__for_each_program(prog, dp->skel->obj) {
		err = sl_pin_path(path, sizeof(path), dp->pin_dir, "progs", bpf_program__name(prog));
		if (err)
			return err;
		unlink(path); /* a previous instance's program */
		err = bpf_program__pin(prog, path);
		if (err) {
			pr_err("pin program %s: %s", path, strerror(-err));
			return err;
		}
	}
	return 0;
}

static int attach_xdp(struct sl_dataplane *dp, struct sl_dp_iface *ifc, bool force, __u32 own_old_id)
{
	int prog_fd = bpf_program__fd(dp->skel->progs.sluice_xdp);
	LIBBPF_OPTS(bpf_xdp_attach_opts, opts);
	__u32 cur_id = 0;
	int err, old_fd = -1;

	err = bpf_xdp_query_id(ifc->ifindex, 0, &cur_id);
	if (err && err != -ENOENT) {
		pr_err("query XDP on %s: %s", ifc->name, strerror(-err));
		return err;
	}
	if (cur_id) {
		if (cur_id != own_old_id && !force) {
			pr_err("%s already has XDP program id %u that sluice did not attach; "
			       "remove it or use --force to replace it", ifc->name, cur_id);
			return -EBUSY;
		}
		pr_info("replacing XDP program id %u on %s (%s)", cur_id, ifc->name,
			cur_id == own_old_id ? "a previous sluiced" : "--force");
		/* It may sit in the other mode (generic vs native); the kernel
		 * refuses two modes at once, so remove it first. */
		old_fd = bpf_prog_get_fd_by_id(cur_id);
		bpf_xdp_detach(ifc->ifindex, XDP_FLAGS_SKB_MODE, NULL);
		bpf_xdp_detach(ifc->ifindex, XDP_FLAGS_DRV_MODE, NULL);
	}
	err = bpf_xdp_attach(ifc->ifindex, prog_fd, dp->xdp_flags | XDP_FLAGS_UPDATE_IF_NOEXIST, &opts);
	if (old_fd >= 0)
		close(old_fd);
	if (err) {
		if (err == -EOPNOTSUPP)
			pr_err("attach XDP to %s: driver has no native XDP; try --xdp-mode generic", ifc->name);
		else if (err == -ERANGE)
			pr_err("attach XDP to %s: MTU too large for XDP on this device", ifc->name);
		else
			pr_err("attach XDP to %s: %s", ifc->name, strerror(-err));
		return err;
	}
	ifc->attached = true;
	return 0;
}

static void detach_xdp(struct sl_dataplane *dp, struct sl_dp_iface *ifc)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, opts,
		    .old_prog_fd = bpf_program__fd(dp->skel->progs.sluice_xdp));
	int err;

	if (!ifc->attached)
		return;
	/* Only if it is still ours: never remove someone else's program. */
	err = bpf_xdp_detach(ifc->ifindex, dp->xdp_flags | XDP_FLAGS_REPLACE, &opts);
	if (err)
		pr_warn("detach XDP from %s: %s", ifc->name, strerror(-err));
	ifc->attached = false;
}

static bool listed(const struct sl_dataplane *dp, int ifindex)
{
	for (size_t i = 0; i < dp->n_ifaces; i++)
		if (dp->ifaces[i].ifindex == ifindex)
			return true;
	return false;
}

/* A previous sluiced (--keep-attached) may have protected an interface the
 * configuration no longer lists (or, now that sluice sits in a root's
 * array, any interface): its program, ours by its pinned id, goes. */
static void detach_orphans(struct sl_dataplane *dp, __u32 own_old_id, bool in_root)
{
	struct if_nameindex *all = if_nameindex();

	if (!all || !own_old_id) {
		if (all)
			if_freenameindex(all);
		return;
	}
	for (struct if_nameindex *i = all; i->if_index; i++) {
		__u32 id = 0;

		if ((!in_root && listed(dp, (int)i->if_index)) || bpf_xdp_query_id((int)i->if_index, 0, &id) || id != own_old_id)
			continue;
		bpf_xdp_detach((int)i->if_index, XDP_FLAGS_SKB_MODE, NULL);
		bpf_xdp_detach((int)i->if_index, XDP_FLAGS_DRV_MODE, NULL);
		pr_info("detached a previous sluiced's XDP program from %s: no longer listed", i->if_name);
	}
	if_freenameindex(all);
}

/* The sock_ops link is pinned so it outlives a crashed daemon: seats are
 * then still released on close while the data path fails open. */
static int attach_sockops(struct sl_dataplane *dp, const char *cgroup)
{
	struct bpf_program *prog = dp->skel->progs.sluice_sockops;
	char path[4096];
	int cg_fd, err;

	if (cgroup) {
		snprintf(dp->cgroup, sizeof(dp->cgroup), "%s", cgroup);
	} else {
		err = sl_cgroup2_root(dp->cgroup, sizeof(dp->cgroup));
		if (err) {
			pr_err("no cgroup v2 mount in /proc/mounts; pass --cgroup PATH");
			return err;
		}
	}
	err = sl_pin_path(path, sizeof(path), dp->pin_dir, "links", "sockops");
	if (err)
		return err;

	dp->sockops_link = bpf_link__open(path);
	if (dp->sockops_link) {
		err = bpf_link__update_program(dp->sockops_link, prog);
		if (!err) {
			pr_info("took over the pinned sock_ops link %s", path);
			return 0;
		}
		pr_warn("pinned sock_ops link %s is stale (%s); replacing it", path, strerror(-err));
		bpf_link__unpin(dp->sockops_link);
		bpf_link__destroy(dp->sockops_link);
		dp->sockops_link = NULL;
	}

	cg_fd = open(dp->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg_fd < 0) {
		err = -errno;
		pr_err("open cgroup %s: %s", dp->cgroup, strerror(-err));
		return err;
	}
	dp->sockops_link = bpf_program__attach_cgroup(prog, cg_fd);
	close(cg_fd);
	if (!dp->sockops_link) {
		err = -errno;
		pr_err("attach sock_ops to cgroup %s: %s", dp->cgroup, strerror(-err));
		return err;
	}
	err = bpf_link__pin(dp->sockops_link, path);
	if (err) {
		pr_err("pin sock_ops link %s: %s", path, strerror(-err));
		return err;
	}
	return 0;
}

static void detach_sockops(struct sl_dataplane *dp)
{
	if (!dp->sockops_link)
		return;
	bpf_link__unpin(dp->sockops_link);
	bpf_link__detach(dp->sockops_link);
	bpf_link__destroy(dp->sockops_link);
	dp->sockops_link = NULL;
}

/* mmap a BPF_F_MMAPABLE array, so the daemon updates it with the same
 * atomic instructions BPF uses. */
static int map_shared(const struct bpf_map *map, size_t len, void **out, size_t *out_len)
{
	long page = sysconf(_SC_PAGESIZE);
	void *mem;

	*out_len = (len + (size_t)page - 1) / (size_t)page * (size_t)page;
	mem = mmap(NULL, *out_len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(map), 0);
	if (mem == MAP_FAILED) {
		int err = -errno;

		pr_err("mmap %s: %s", bpf_map__name(map), strerror(-err));
		*out = NULL;
		return err;
	}
	*out = mem;
	return 0;
}

static int map_seats(struct sl_dataplane *dp)
{
	void *seats, *gates;
	int err;

	err = map_shared(dp->skel->maps.sl_seats, SLUICE_MAX_LEVELS * sizeof(struct sluice_seats),
			 &seats, &dp->seats_len);
	if (err)
		return err;
	dp->seats = seats;
	err = map_shared(dp->skel->maps.sl_pol_gate,
			 SLUICE_MAX_POLICIES * sizeof(struct sluice_policy_gate), &gates,
			 &dp->gates_len);
	if (err)
		return err;
	dp->gates = gates;
	return 0;
}

void sl_maps_from_skel(struct sluice *s, struct sl_maps *m)
{
	m->owned = false;
#define SL_MAP_FD(id, name) m->fd[SL_MAP_##id] = bpf_map__fd(s->maps.name);
	SLUICE_MAPS(SL_MAP_FD)
#undef SL_MAP_FD
}

static void remove_pins(struct sl_dataplane *dp, bool keep_maps)
{
	struct bpf_program *prog;
	struct bpf_map *map;
	char path[4096];
	const char *dirs[] = {"progs", "links", "maps"};

	bpf_object__for_each_program(prog, dp->skel->obj) {
		if (!sl_pin_path(path, sizeof(path), dp->pin_dir, "progs", bpf_program__name(prog)))
			unlink(path);
	}
	if (!keep_maps) {
		bpf_object__for_each_map(map, dp->skel->obj) {
			if (!sl_pin_path(path, sizeof(path), dp->pin_dir, "maps", bpf_map__name(map)))
				unlink(path);
		}
	}
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dp->pin_dir, dirs[i]);
		rmdir(path); /* fails, harmlessly, when something is left */
	}
	rmdir(dp->pin_dir);
}

int sl_dataplane_start(struct sl_dataplane *dp, const struct sl_dataplane_opts *o)
{
	const char *subdirs[] = {"maps", "progs", "links"};
	char path[4096];
	unsigned abi;
	int err;

	memset(dp, 0, sizeof(*dp));
	dp->lock_fd = -1;
	dp->root_array_fd = -1;
	dp->pkt_fd = -1;
	dp->genl.fd = -1;
	for (size_t i = 0; i < SL_DP_MAX_IFACES; i++)
		dp->ifaces[i].tc_in_fd = dp->ifaces[i].tc_out_fd = -1;
	snprintf(dp->pin_dir, sizeof(dp->pin_dir), "%s", o->pin_dir);
	dp->xdp_flags = o->xdp_generic ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE;
	dp->veth_peer_xdp = o->veth_peer_xdp;
	if (!o->n_ifnames || o->n_ifnames > SL_DP_MAX_IFACES) {
		pr_err("%zu interfaces: between 1 and %d", o->n_ifnames, SL_DP_MAX_IFACES);
		return -EINVAL;
	}
	for (size_t i = 0; i < o->n_ifnames; i++) {
		struct sl_dp_iface *ifc = &dp->ifaces[i];
		size_t used = strlen(dp->ifnames);

		snprintf(ifc->name, sizeof(ifc->name), "%s", o->ifnames[i]);
		ifc->ifindex = (int)if_nametoindex(o->ifnames[i]);
		if (!ifc->ifindex) {
			err = -errno;
			pr_err("interface %s: %s", o->ifnames[i], strerror(-err));
			return err;
		}
		if (listed(dp, ifc->ifindex)) {
			pr_err("interface %s is listed twice", o->ifnames[i]);
			return -EINVAL;
		}
		dp->n_ifaces = i + 1;
		snprintf(dp->ifnames + used, sizeof(dp->ifnames) - used, "%s%s", i ? ", " : "", ifc->name);
	}

	err = sl_ensure_bpffs(dp->pin_dir);
	if (err)
		return err;
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", dp->pin_dir, subdirs[i]);
		err = mkdir_p(path);
		if (err) {
			pr_err("cannot create %s: %s", path, strerror(-err));
			return err;
		}
	}
	err = lock_pin_dir(dp);
	if (err)
		return err;

	dp->skel = sluice__open();
	if (!dp->skel) {
		err = -errno;
		pr_err("open BPF object: %s", strerror(-err));
		goto fail;
	}
	if (o->conn_table_size)
		bpf_map__set_max_entries(dp->skel->maps.sl_conns, o->conn_table_size);
	if (o->class_table_size)
		bpf_map__set_max_entries(dp->skel->maps.sl_classes, 2 * o->class_table_size);
	abi = sl_pinned_abi(dp->pin_dir);
	if (abi && abi != SLUICE_ABI_VERSION)
		drop_foreign_maps(dp, abi);
	err = adopt_pinned_maps(dp);
	if (err)
		goto fail;
	err = sluice__load(dp->skel);
	if (err) {
		pr_err("load BPF object: %s (run with -v for the verifier log)", strerror(-err));
		goto fail;
	}
	if (dp->adopted_maps)
		pr_info("adopted %d pinned maps from %s/maps", dp->adopted_maps, dp->pin_dir);
	sl_maps_from_skel(dp->skel, &dp->maps);
	err = map_seats(dp);
	if (err)
		goto fail;
	err = pin_maps(dp);
	if (!err)
		err = share_maps(dp, o->read_gid);
	if (err)
		goto fail;
	dp->own_old_xdp = sl_pinned_prog_id(dp->pin_dir, SLUICE_PROG_XDP);
	err = pin_progs(dp);
	if (!err)
		err = sl_inject_open(dp);
	if (err)
		goto fail;
	return 0;

fail:
	sl_dataplane_stop(dp, dp->adopted_maps > 0 ? SL_STOP_KEEP_MAPS : SL_STOP_REMOVE);
	return err;
}

int sl_dataplane_attach(struct sl_dataplane *dp, const struct sl_dataplane_opts *o)
{
	int err;

	/* The next program first, so that no frame passes without it. */
	err = sl_chain_set_next(dp, o->xdp_next);
	/* The ways out for refusals before the first one: a RST sent before
	 * its interface's entry exists would go by XDP_TX, unproven. */
	if (!err) {
		sl_tx_hooks_attach(dp);
		err = sl_ifaces_init(dp);
	}
	if (!err && o->root_array)
		err = sl_chain_join_root(dp, o->root_array, o->root_slot, o->force);
	for (size_t i = 0; i < dp->n_ifaces && !err && !o->root_array; i++)
		err = attach_xdp(dp, &dp->ifaces[i], o->force, dp->own_old_xdp);
	if (!err)
		err = attach_sockops(dp, o->cgroup);
	if (!err)
		detach_orphans(dp, dp->own_old_xdp, o->root_array != NULL);
	return err;
}

void sl_dataplane_stop(struct sl_dataplane *dp, enum sl_stop_mode mode)
{
	if (dp->skel && mode == SL_STOP_KEEP_ATTACHED) {
		/* Closing our fds leaves what is attached attached: XDP is held
		 * by the device, the sock_ops link by its pin.  The next daemon
		 * recognises both as its own and replaces them atomically. */
		if (dp->sockops_link)
			bpf_link__destroy(dp->sockops_link);
		dp->sockops_link = NULL;
		for (size_t i = 0; i < dp->n_ifaces; i++)
			dp->ifaces[i].attached = false;
		sl_chain_leave_root(dp, true);
		sl_tx_hooks_detach(dp, true);
	} else if (dp->skel) {
		for (size_t i = 0; i < dp->n_ifaces; i++)
			detach_xdp(dp, &dp->ifaces[i]);
		sl_chain_leave_root(dp, false);
		/* After XDP: no RST is handed off to a program that is gone. */
		sl_tx_hooks_detach(dp, false);
		detach_sockops(dp);
		remove_pins(dp, mode == SL_STOP_KEEP_MAPS);
	}
	sl_inject_close(dp);
	sl_genl_netdev_close(&dp->genl);
	if (dp->seats) {
		munmap(dp->seats, dp->seats_len);
		dp->seats = NULL;
	}
	if (dp->gates) {
		munmap(dp->gates, dp->gates_len);
		dp->gates = NULL;
	}
	if (dp->skel) {
		sluice__destroy(dp->skel);
		dp->skel = NULL;
	}
	if (dp->lock_fd >= 0) {
		close(dp->lock_fd);
		dp->lock_fd = -1;
	}
}

static bool libbpf_verbose;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	if (libbpf_verbose)
		sl_vlog(SL_LOG_DEBUG, fmt, ap);
	return 0;
}

void sl_libbpf_log(bool verbose)
{
	libbpf_verbose = verbose;
	libbpf_set_print(libbpf_print);
}

bool sl_dataplane_generic(const struct sl_dataplane *dp)
{
	return dp->xdp_flags & XDP_FLAGS_SKB_MODE;
}
