// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "dataplane/settings.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/grow.h"
#include "lib/log.h"

static int update(int fd, const void *key, const void *val, const char *what)
{
	if (bpf_map_update_elem(fd, key, val, BPF_ANY)) {
		int err = -errno;

		pr_err("update %s: %s", what, strerror(-err));
		return err;
	}
	return 0;
}

/* Delete every key of generation gen (the byte at gen_off of a key of
 * key_size bytes): the idle generation's leftovers, before it is written.
 * Collected first, deleted after: deleting while get_next_key walks would
 * restart the walk. */
static void clear_gen(int fd, size_t key_size, size_t gen_off, __u8 gen)
{
	unsigned char key[64], next[64], *del = NULL;
	size_t n = 0, cap = 0;
	void *prev = NULL;

	if (key_size > sizeof(key))
		return;
	while (!bpf_map_get_next_key(fd, prev, next)) {
		if (next[gen_off] == gen) {
			if (sl_grow((void **)&del, &cap, (n + 1) * key_size, 1))
				break;
			memcpy(del + n++ * key_size, next, key_size);
		}
		memcpy(key, next, key_size);
		prev = key;
	}
	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(fd, del + i * key_size);
	free(del);
}

static int write_lpm(int fd, const struct sl_prefix_class *v, size_t n, __u8 gen, const char *what)
{
	for (size_t i = 0; i < n; i++) {
		struct sluice_lpm_key k;
		struct sluice_lpm_val val = {.cls = v[i].cls};
		int err;

		memset(&k, 0, sizeof(k));
		k.prefixlen = 8u + v[i].prefix_len;
		k.gen = gen;
		memcpy(k.addr, v[i].addr, 16);
		if ((err = update(fd, &k, &val, what)))
			return err;
	}
	return 0;
}

/* Both port arrays of one generation in one batch syscall. */
static int write_ports(int fd, const struct sl_compiled *c, __u8 gen)
{
	const __u32 n = 2 * 65536;
	__u32 *keys = calloc(n, sizeof(*keys)), *vals = calloc(n, sizeof(*vals)), count = n;
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	int err = 0;

	if (!keys || !vals) {
		err = -ENOMEM;
		goto out;
	}
	for (__u32 p = 0; p < 65536; p++) {
		keys[p] = (__u32)gen * n + SLUICE_PORT_SRC * 65536 + p;
		vals[p] = c->sport_cls[p];
		keys[65536 + p] = (__u32)gen * n + SLUICE_PORT_DST * 65536 + p;
		vals[65536 + p] = c->dport_cls[p];
	}
	if (bpf_map_update_batch(fd, keys, vals, &count, &opts)) {
		err = -errno;
		pr_err("update %s: %s", sl_map_names[SL_MAP_PORT_CLS], strerror(-err));
	}
out:
	free(keys);
	free(vals);
	return err;
}

static int write_classes(int fd, const struct sl_compiled *c, __u8 gen)
{
	for (size_t i = 0; i < c->n_entries; i++) {
		struct sluice_class_key k = c->entries[i].key;
		int err;

		k.gen = gen;
		if ((err = update(fd, &k, &c->entries[i].val, sl_map_names[SL_MAP_CLASSES])))
			return err;
	}
	return 0;
}

int sl_apply_stage(const struct sl_maps *m, const struct sl_plan *plan, uint8_t *gen_out)
{
	struct sluice_settings cur = {};
	__u32 zero = 0;
	__u8 gen;
	int err;

	if (bpf_map_lookup_elem(m->fd[SL_MAP_CONFIG], &zero, &cur))
		return -errno;
	if ((cur.flags & SLUICE_CFG_ACTIVE) && cur.class_digest &&
	    cur.class_digest == plan->config.class_digest) {
		*gen_out = (uint8_t)((cur.generation & 1) | SL_STAGE_KEPT);
		return 0; /* the tables in use are these: nothing to write */
	}
	gen = (cur.flags & SLUICE_CFG_ACTIVE) ? (cur.generation & 1) ^ 1 : 0;

	/* The idle generation, from scratch (what the last configuration
	 * before the running one left there goes now). */
	clear_gen(m->fd[SL_MAP_SRC_CLS], sizeof(struct sluice_lpm_key), offsetof(struct sluice_lpm_key, gen), gen);
	clear_gen(m->fd[SL_MAP_DST_CLS], sizeof(struct sluice_lpm_key), offsetof(struct sluice_lpm_key, gen), gen);
	clear_gen(m->fd[SL_MAP_CLASSES], sizeof(struct sluice_class_key), offsetof(struct sluice_class_key, gen),
		  gen);
	if ((err = write_lpm(m->fd[SL_MAP_SRC_CLS], plan->classes.src, plan->classes.n_src, gen,
			     sl_map_names[SL_MAP_SRC_CLS])) ||
	    (err = write_lpm(m->fd[SL_MAP_DST_CLS], plan->classes.dst, plan->classes.n_dst, gen,
			     sl_map_names[SL_MAP_DST_CLS])) ||
	    (err = write_ports(m->fd[SL_MAP_PORT_CLS], &plan->classes, gen)) ||
	    (err = write_classes(m->fd[SL_MAP_CLASSES], &plan->classes, gen)))
		return err;
	*gen_out = gen;
	return 0;
}

int sl_apply_commit(const struct sl_maps *m, const struct sl_plan *plan, uint8_t gen)
{
	struct sluice_level unused;
	struct sluice_settings cur = {}, next = plan->config;
	__u32 zero = 0;
	int err;

	/* Staged against the generation that still runs, or it is stale; a
	 * kept stage, against the very tables in use. */
	if (bpf_map_lookup_elem(m->fd[SL_MAP_CONFIG], &zero, &cur))
		return -errno;
	if (sl_apply_stage_kept(gen)) {
		gen &= 1;
		if (!(cur.flags & SLUICE_CFG_ACTIVE) || (cur.generation & 1) != gen ||
		    cur.class_digest != plan->config.class_digest)
			return -ESTALE;
	} else if ((cur.flags & SLUICE_CFG_ACTIVE) && (cur.generation & 1) == gen) {
		return -ESTALE;
	}

	/* Levels the new classification points to (slots are stable by
	 * name, so a surviving level keeps its seats and counters). */
	for (unsigned slot = 0; slot < SLUICE_MAX_LEVELS; slot++) {
		if (plan->levels[slot].type == SLUICE_LEVEL_UNUSED)
			continue;
		if ((err = update(m->fd[SL_MAP_LEVELS], &slot, &plan->levels[slot], sl_map_names[SL_MAP_LEVELS])))
			return err;
	}

	/* The flip: one map update.  The old generation stays behind it
	 * until the next stage clears it: the tables hold two, and no packet
	 * can still be reading what is deleted. */
	next.generation = gen;
	if ((err = update(m->fd[SL_MAP_CONFIG], &zero, &next, sl_map_names[SL_MAP_CONFIG])))
		return err;

	/* A removed level keeps its name in its slot: connections it
	 * admitted still release there, `status` shows them, and if the
	 * level comes back it gets the same slot (and its seats) again. */
	for (unsigned slot = 0; slot < SLUICE_MAX_LEVELS; slot++) {
		struct sluice_level l;

		if (plan->levels[slot].type != SLUICE_LEVEL_UNUSED)
			continue;
		if (sl_maps_level(m, slot, &l) || l.type == SLUICE_LEVEL_UNUSED)
			continue;
		unused = (struct sluice_level){.type = SLUICE_LEVEL_UNUSED};
		memcpy(unused.name, l.name, sizeof(unused.name));
		update(m->fd[SL_MAP_LEVELS], &slot, &unused, sl_map_names[SL_MAP_LEVELS]);
	}
	return 0;
}

bool sl_apply_stage_kept(uint8_t gen)
{
	return gen & SL_STAGE_KEPT;
}

int sl_apply_plan(const struct sl_maps *m, const struct sl_plan *plan)
{
	uint8_t gen;
	int err = sl_apply_stage(m, plan, &gen);

	return err ? err : sl_apply_commit(m, plan, gen);
}

int sl_apply_shadow(const struct sl_maps *m, bool on)
{
	struct sluice_settings c;
	__u32 zero = 0;
	int err = sl_maps_config(m, &c);

	if (err)
		return err;
	if (on)
		c.flags |= SLUICE_CFG_SHADOW;
	else
		c.flags &= ~(__u32)SLUICE_CFG_SHADOW;
	if (bpf_map_update_elem(m->fd[SL_MAP_CONFIG], &zero, &c, BPF_ANY))
		return -errno;
	return 0;
}

int sl_write_heartbeat(const struct sl_maps *m, unsigned long long seq)
{
	struct sluice_heartbeat hb = {
		.mono_ns = sl_mono_ns(),
		.seq = seq,
		.pid = (__u32)getpid(),
	};
	__u32 zero = 0;

	if (bpf_map_update_elem(m->fd[SL_MAP_HEARTBEAT], &zero, &hb, BPF_ANY))
		return -errno;
	return 0;
}

/* ---- one field at a time, from the daemon's runtimes ---------------------------- */

int sl_level_write_limit(struct sl_dataplane *dp, unsigned level, uint32_t limit)
{
	struct sluice_level lvl;

	if (sl_maps_level(&dp->maps, level, &lvl) || lvl.type != SLUICE_LEVEL_LIMITED)
		return -ENOENT;
	if (lvl.seat_limit == limit)
		return 0;
	lvl.seat_limit = limit;
	return bpf_map_update_elem(dp->maps.fd[SL_MAP_LEVELS], &level, &lvl, BPF_ANY) ? -errno : 0;
}

int sl_level_write_flags(struct sl_dataplane *dp, unsigned level, uint32_t flags)
{
	struct sluice_level lvl;

	if (sl_maps_level(&dp->maps, level, &lvl) || lvl.type == SLUICE_LEVEL_UNUSED)
		return -ENOENT;
	if (lvl.flags == flags)
		return 0;
	lvl.flags = flags;
	return bpf_map_update_elem(dp->maps.fd[SL_MAP_LEVELS], &level, &lvl, BPF_ANY) ? -errno : 0;
}

int sl_settings_write_ack_watch(struct sl_dataplane *dp, uint32_t levels)
{
	struct sluice_settings c;
	__u32 zero = 0;

	if (sl_maps_config(&dp->maps, &c))
		return -EIO;
	if (c.ack_watch_levels == levels)
		return 0;
	c.ack_watch_levels = levels;
	return bpf_map_update_elem(dp->maps.fd[SL_MAP_CONFIG], &zero, &c, BPF_ANY) ? -errno : 0;
}
