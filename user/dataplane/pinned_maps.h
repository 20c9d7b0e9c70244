/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Access to sluice's maps by file descriptor, either pinned under
 * <pin-dir>/maps/<name> (CLI, adoption) or straight from a loaded object
 * (daemon).  Readers sum per-CPU values here, so nobody else has to.
 */
#ifndef SLUICE_PINNED_MAPS_H
#define SLUICE_PINNED_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/clock.h"
#include "sluice_abi.h"

#define SL_DEFAULT_PIN_DIR "/sys/fs/bpf/sluice"

/* The maps by id (SLUICE_MAPS in sluice_abi.h: one row each). */
enum sl_map_id {
#define SL_MAP_ID(id, name) SL_MAP_##id,
	SLUICE_MAPS(SL_MAP_ID)
#undef SL_MAP_ID
	SL_MAP__COUNT,
};

extern const char *const sl_map_names[SL_MAP__COUNT];

struct sl_maps {
	int fd[SL_MAP__COUNT];
	bool owned; /* close the fds in sl_maps_close */
};

/* "<pin_dir>/<kind>/<name>"; kind is "maps", "progs" or "links". */
int sl_pin_path(char *buf, size_t len, const char *pin_dir, const char *kind, const char *name);

/* The connection table's capacity, from the map itself. */
size_t sl_conns_capacity(const struct sl_maps *m);


/* The map ABI the pinned maps were written by (sl_config's abi_version),
 * 0 when there is none to read (nothing pinned, or never configured). */
unsigned sl_pinned_abi(const char *pin_dir);

/* Open every pinned map, read-only.  On failure returns a negative errno and, in
 * what (if not NULL), the path that could not be opened (-EPROTO: maps of
 * another map ABI, which this build cannot read). */
int sl_maps_open_pinned(const char *pin_dir, struct sl_maps *m, char *what, size_t what_len);
void sl_maps_close(struct sl_maps *m);

int sl_maps_config(const struct sl_maps *m, struct sluice_settings *out);
int sl_maps_heartbeat(const struct sl_maps *m, struct sluice_heartbeat *out);
int sl_maps_level(const struct sl_maps *m, unsigned slot, struct sluice_level *out);
int sl_maps_seats(const struct sl_maps *m, unsigned slot, struct sluice_seats *out);
/* Sums over all possible CPUs. */
/* sl_hs_hist summed over CPUs: handshakes per log2-microsecond bucket. */
int sl_maps_hs_hist(const struct sl_maps *m, uint64_t out[SLUICE_HS_BUCKETS]);
int sl_maps_level_stats(const struct sl_maps *m, unsigned slot, struct sluice_level_stats *out);
/* What the data path counted for one FlowSchema: its counters (sl_fs_stats,
 * summed over CPUs) and its connections' lifetimes (sl_fs_dur). */
struct sl_fs_reading {
	struct sluice_fs_stats c;
	struct sluice_fs_duration d;
};
/* Entries [0, n) into out[0..n) (n at most SLUICE_FS_STATS). */
int sl_maps_fs_reading(const struct sl_maps *m, size_t n, struct sl_fs_reading *out);
/* The policy gate's per-workload counters (wl_slot SLUICE_WL_DEFAULT = the
 * default workload), summed over CPUs. */
int sl_maps_wl_stats(const struct sl_maps *m, unsigned policy, unsigned wl_slot,
		     struct sluice_wl_stats *out);
int sl_maps_policy_gate(const struct sl_maps *m, unsigned policy, struct sluice_policy_gate *out);
int sl_maps_global_stats(const struct sl_maps *m, struct sluice_stats *out);
/* The protected interfaces (sl_ifaces): up to cap of them, by ifindex, in
 * the map's order; *n says how many.  0 or -errno. */
int sl_maps_ifaces(const struct sl_maps *m, uint32_t *ifindex, struct sluice_iface *out, size_t cap,
		   size_t *n);
/* One interface's counters (sl_if_stats[slot]) summed over CPUs; tx_drop_ns,
 * a per-CPU time, means nothing summed and reads 0. */
int sl_maps_if_stats(const struct sl_maps *m, unsigned slot, struct sluice_if_stats *out);

/* Names of the levels in the slots, removed ones included ("" = never used). */
int sl_maps_level_names(const struct sl_maps *m,
			char names[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN]);

/* Every tracked connection (the daemon's sweeps and reconcile, sluicectl
 * conns), one walk in batches (a syscall per few hundred
 * entries, not two per entry), bounded by twice the table's size in case
 * BPF churns it meanwhile (-EAGAIN): fn is called with a copy of each
 * entry; a non-zero return stops the walk and is returned.  0 at the end
 * of the table, or a negative errno. */
typedef int (*sl_conn_fn)(void *ctx, const struct sluice_conn_key *key, const struct sluice_conn *c);
int sl_conns_each(const struct sl_maps *m, sl_conn_fn fn, void *ctx);

/* The same walk in slices, for the loop: a table of a million entries is
 * read over many ticks, never in one (issue 26: a whole walk of 1 M
 * entries took longer than the failsafe waits for a heartbeat).  The
 * cursor holds the map's own batch token (a bucket index for a hash map),
 * so entries the walk already passed may be deleted meanwhile, by BPF or
 * by fn.  Visits from where cur stopped until the end of the table (0, and
 * cur is reset: the next call starts a new pass), fn's non-zero return
 * (returned; cur reset), or the first batch boundary at or after
 * deadline_ns on sl_mono_ns() (1: call again to go on; UINT64_MAX: no
 * deadline).  A negative errno resets cur too. */
struct sl_conns_cursor {
	union { struct sluice_conn_key key; uint64_t u64; } token, next;
	bool started;   /* token is valid: resume after it */
	size_t visited; /* in this pass, against the churn bound */
};
int sl_conns_walk(const struct sl_maps *m, struct sl_conns_cursor *cur, uint64_t deadline_ns,
		  sl_conn_fn fn, void *ctx);

#endif
