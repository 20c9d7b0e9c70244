// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "dataplane/pinned_maps.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


const char *const sl_map_names[SL_MAP__COUNT] = {
#define SL_MAP_NAME(id, name) [SL_MAP_##id] = #name,
	SLUICE_MAPS(SL_MAP_NAME)
#undef SL_MAP_NAME
};

int sl_pin_path(char *buf, size_t len, const char *pin_dir, const char *kind, const char *name)
{
	int n = snprintf(buf, len, "%s/%s/%s", pin_dir, kind, name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int sl_maps_open_pinned(const char *pin_dir, struct sl_maps *m, char *what, size_t what_len)
{
	LIBBPF_OPTS(bpf_obj_get_opts, ro, .file_flags = BPF_F_RDONLY);
	char path[4096];
	unsigned abi;
	int i, err;

	for (i = 0; i < SL_MAP__COUNT; i++)
		m->fd[i] = -1;
	m->owned = true;
	/* Maps of another layout would be read as garbage. */
	abi = sl_pinned_abi(pin_dir);
	if (abi && abi != SLUICE_ABI_VERSION) {
		if (what)
			snprintf(what, what_len, "%s/maps (map ABI %u; this build reads ABI %d)", pin_dir,
				 abi, SLUICE_ABI_VERSION);
		return -EPROTO;
	}
	for (i = 0; i < SL_MAP__COUNT; i++) {
		err = sl_pin_path(path, sizeof(path), pin_dir, "maps", sl_map_names[i]);
		if (err)
			goto fail;
		/* Read-only: the CLI never writes a map, and a member of the
		 * read group may open no more than that. */
		m->fd[i] = bpf_obj_get_opts(path, &ro);
		if (m->fd[i] < 0) {
			err = -errno;
			goto fail;
		}
	}
	return 0;
fail:
	if (what)
		snprintf(what, what_len, "%s", path);
	sl_maps_close(m);
	return err;
}

unsigned sl_pinned_abi(const char *pin_dir)
{
	LIBBPF_OPTS(bpf_obj_get_opts, ro, .file_flags = BPF_F_RDONLY);
	struct bpf_map_info info;
	__u32 len = sizeof(info), zero = 0, abi = 0;
	char path[4096];
	uint8_t *val;
	int fd;

	if (sl_pin_path(path, sizeof(path), pin_dir, "maps", sl_map_names[SL_MAP_CONFIG]))
		return 0;
	fd = bpf_obj_get_opts(path, &ro);
	if (fd < 0)
		return 0;
	memset(&info, 0, sizeof(info));
	if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.key_size == sizeof(zero) &&
	    info.value_size >= SLUICE_SETTINGS_ABI_OFFSET + sizeof(abi) &&
	    (val = calloc(1, info.value_size))) {
		if (!bpf_map_lookup_elem(fd, &zero, val))
			memcpy(&abi, val + SLUICE_SETTINGS_ABI_OFFSET, sizeof(abi));
		free(val);
	}
	close(fd);
	return abi;
}

void sl_maps_close(struct sl_maps *m)
{
	for (int i = 0; i < SL_MAP__COUNT; i++) {
		if (m->owned && m->fd[i] >= 0)
			close(m->fd[i]);
		m->fd[i] = -1;
	}
}

static int lookup(int fd, unsigned key, void *out)
{
	return bpf_map_lookup_elem(fd, &key, out) ? -errno : 0;
}

int sl_maps_config(const struct sl_maps *m, struct sluice_settings *out)
{
	return lookup(m->fd[SL_MAP_CONFIG], 0, out);
}

int sl_maps_heartbeat(const struct sl_maps *m, struct sluice_heartbeat *out)
{
	return lookup(m->fd[SL_MAP_HEARTBEAT], 0, out);
}

int sl_maps_level(const struct sl_maps *m, unsigned slot, struct sluice_level *out)
{
	return lookup(m->fd[SL_MAP_LEVELS], slot, out);
}

int sl_maps_seats(const struct sl_maps *m, unsigned slot, struct sluice_seats *out)
{
	return lookup(m->fd[SL_MAP_SEATS], slot, out);
}

/* Per-CPU values of a struct of u64 counters, summed field by field. */
static int percpu_sum(int fd, unsigned key, void *out, size_t size)
{
	int ncpu = libbpf_num_possible_cpus();
	size_t words = size / sizeof(__u64);
	__u64 *vals, *sum = out;
	int err = 0;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	vals = calloc((size_t)ncpu, size);
	if (!vals)
		return -ENOMEM;
	if (bpf_map_lookup_elem(fd, &key, vals)) {
		err = -errno;
		goto out;
	}
	memset(out, 0, size);
	for (int c = 0; c < ncpu; c++)
		for (size_t w = 0; w < words; w++)
			sum[w] += vals[(size_t)c * words + w];
out:
	free(vals);
	return err;
}

/* Entries [0, n) of an array of u64 counters (per-CPU: ncpu copies each,
 * summed; a shared array: ncpu 1) added into out, entry i at out + i *
 * stride bytes, in batches of one system call each.  The batch cursor is
 * the kernel's token: out_batch of one call is in_batch of the next;
 * ENOENT says the array ended. */
static int array_sum(int fd, size_t n, size_t value_size, int ncpu, void *out, size_t stride)
{
	enum { BATCH = 1024 };
	size_t words = value_size / sizeof(__u64);
	__u32 *keys = calloc(BATCH, sizeof(*keys));
	__u64 *vals = calloc((size_t)BATCH * (size_t)ncpu, value_size);
	int err = 0;

	if (!keys || !vals) {
		err = -ENOMEM;
		goto out;
	}
	for (__u32 from = 0, token = 0; from < n;) {
		__u32 count = n - from < BATCH ? (__u32)(n - from) : BATCH, in = token;
		bool last;
		DECLARE_LIBBPF_OPTS(bpf_map_batch_opts, opts);

		last = bpf_map_lookup_batch(fd, from ? &in : NULL, &token, keys, vals, &count, &opts) != 0;
		if (last && errno != ENOENT) {
			err = -errno;
			goto out;
		}
		for (__u32 i = 0; i < count; i++) {
			__u64 *sum = (__u64 *)((char *)out + (size_t)keys[i] * stride);

			if (keys[i] >= n)
				continue;
			for (int c = 0; c < ncpu; c++)
				for (size_t w = 0; w < words; w++)
					sum[w] += vals[((size_t)i * (size_t)ncpu + (size_t)c) * words + w];
		}
		from += count;
		if (last || !count)
			break;
	}
out:
	free(keys);
	free(vals);
	return err;
}

int sl_maps_fs_reading(const struct sl_maps *m, size_t n, struct sl_fs_reading *out)
{
	int ncpu = libbpf_num_possible_cpus(), err;

	if (n > SLUICE_FS_STATS)
		return -EINVAL;
	memset(out, 0, n * sizeof(*out));
	if (!n)
		return 0;
	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	err = array_sum(m->fd[SL_MAP_FS_STATS], n, sizeof(struct sluice_fs_stats), ncpu, &out->c,
			sizeof(*out));
	return err ? err : array_sum(m->fd[SL_MAP_FS_DUR], n, sizeof(struct sluice_fs_duration), ncpu,
				     &out->d, sizeof(*out));
}

int sl_maps_hs_hist(const struct sl_maps *m, uint64_t out[SLUICE_HS_BUCKETS])
{
	for (unsigned b = 0; b < SLUICE_HS_BUCKETS; b++) {
		__u64 v;
		int err = percpu_sum(m->fd[SL_MAP_HS_HIST], b, &v, sizeof(v));

		if (err)
			return err;
		out[b] = v;
	}
	return 0;
}

int sl_maps_level_stats(const struct sl_maps *m, unsigned slot, struct sluice_level_stats *out)
{
	return percpu_sum(m->fd[SL_MAP_LVL_STATS], slot, out, sizeof(*out));
}

int sl_maps_wl_stats(const struct sl_maps *m, unsigned policy, unsigned wl_slot,
		     struct sluice_wl_stats *out)
{
	if (policy >= SLUICE_MAX_POLICIES || wl_slot >= SLUICE_WL_SLOTS)
		return -EINVAL;
	return percpu_sum(m->fd[SL_MAP_WL_STATS], policy * SLUICE_WL_SLOTS + wl_slot, out,
			  sizeof(*out));
}

int sl_maps_policy_gate(const struct sl_maps *m, unsigned policy, struct sluice_policy_gate *out)
{
	return lookup(m->fd[SL_MAP_POL_GATE], policy, out);
}

int sl_maps_global_stats(const struct sl_maps *m, struct sluice_stats *out)
{
	return percpu_sum(m->fd[SL_MAP_STATS], 0, out, sizeof(*out));
}

int sl_maps_ifaces(const struct sl_maps *m, uint32_t *ifindex, struct sluice_iface *out, size_t cap,
		   size_t *n)
{
	__u32 key, next;
	int err = bpf_map_get_next_key(m->fd[SL_MAP_IFACES], NULL, &next);

	*n = 0;
	/* Bounded by the map's size, whatever the daemon does meanwhile. */
	for (size_t i = 0; !err && i < SLUICE_MAX_IFACES && *n < cap; i++) {
		key = next;
		if (!bpf_map_lookup_elem(m->fd[SL_MAP_IFACES], &key, &out[*n]))
			ifindex[(*n)++] = key;
		err = bpf_map_get_next_key(m->fd[SL_MAP_IFACES], &key, &next);
	}
	return err && errno != ENOENT ? -errno : 0;
}

int sl_maps_if_stats(const struct sl_maps *m, unsigned slot, struct sluice_if_stats *out)
{
	int err;

	if (slot >= SLUICE_MAX_IFACES)
		return -EINVAL;
	err = percpu_sum(m->fd[SL_MAP_IF_STATS], slot, out, sizeof(*out));
	out->tx_drop_ns = 0;
	return err;
}

int sl_maps_level_names(const struct sl_maps *m,
			char names[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN])
{
	struct sluice_level lvl;
	int err;

	for (unsigned s = 0; s < SLUICE_MAX_LEVELS; s++) {
		err = sl_maps_level(m, s, &lvl);
		if (err)
			return err;
		/* Removed levels keep their name (settings.c): a level that
		 * comes back finds its slot, and its seats, again. */
		memcpy(names[s], lvl.name, SLUICE_LEVEL_NAME_LEN);
		names[s][SLUICE_LEVEL_NAME_LEN - 1] = '\0';
	}
	return 0;
}

/* ---- the one walk of sl_conns ------------------------------------------------ */

/* Entries per batch syscall.  A hash map's batch holds whole buckets: a
 * bucket longer than the buffer (ENOSPC, nothing copied) doubles it. */
#define CONNS_WALK_BATCH 1024
#define CONNS_WALK_BATCH_MAX 65536

/* The table's real size (tableSizes.connections), from the map itself:
 * the walk's bound, whoever made the map. */
static size_t conns_capacity(int fd)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len) || !info.max_entries)
		return SLUICE_DEFAULT_CONNS;
	return info.max_entries;
}

size_t sl_conns_capacity(const struct sl_maps *m)
{
	return conns_capacity(m->fd[SL_MAP_CONNS]);
}

int sl_conns_walk(const struct sl_maps *m, struct sl_conns_cursor *cur, uint64_t deadline_ns,
		  sl_conn_fn fn, void *ctx)
{
	int fd = m->fd[SL_MAP_CONNS];
	size_t cap = CONNS_WALK_BATCH;
	size_t max_visits = 2u * conns_capacity(fd);
	struct sluice_conn_key *keys = NULL;
	struct sluice_conn *vals = NULL;
	int rc = 0;
	LIBBPF_OPTS(bpf_map_batch_opts, opts);

	for (;;) {
		__u32 count = cap;
		int err;

		if (!keys) {
			keys = calloc(cap, sizeof(*keys));
			vals = calloc(cap, sizeof(*vals));
			if (!keys || !vals) {
				rc = -ENOMEM;
				break;
			}
		}
		err = bpf_map_lookup_batch(fd, cur->started ? &cur->token : NULL, &cur->next,
					   keys, vals, &count, &opts);
		if (err == -ENOSPC && !count && cap < CONNS_WALK_BATCH_MAX) {
			free(keys);
			free(vals);
			keys = NULL;
			vals = NULL;
			cap *= 2;
			continue;
		}
		if (err && err != -ENOENT) {
			rc = err;
			break;
		}
		for (__u32 i = 0; i < count && !rc; i++)
			rc = fn(ctx, &keys[i], &vals[i]);
		if (rc || err == -ENOENT)
			break; /* stopped by fn, or the end of the table */
		cur->visited += count;
		if (cur->visited >= max_visits) {
			rc = -EAGAIN; /* BPF churns the table faster than we read it */
			break;
		}
		cur->token = cur->next;
		cur->started = true;
		if (deadline_ns != UINT64_MAX && sl_mono_ns() >= deadline_ns) {
			free(keys);
			free(vals);
			return 1; /* the rest from here, next time */
		}
	}
	free(keys);
	free(vals);
	memset(cur, 0, sizeof(*cur)); /* ended: the next call starts a new pass */
	return rc;
}

int sl_conns_each(const struct sl_maps *m, sl_conn_fn fn, void *ctx)
{
	struct sl_conns_cursor cur = {0};

	return sl_conns_walk(m, &cur, UINT64_MAX, fn, ctx);
}
