/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Map definitions of the sluice object.  Plain maps (no LIBBPF_PIN_BY_NAME)
 * so the object loads both through the daemon, which pins them under
 * <pin-dir>/maps, and through `bpftool prog loadall ... pinmaps DIR`
 * (bpftool 7.1 refuses `pinmaps` for a map declared LIBBPF_PIN_BY_NAME, after
 * pinning it under /sys/fs/bpf on its own).
 * Layouts live in include/sluice_abi.h.
 */
#ifndef SLUICE_BPF_MAPS_H
#define SLUICE_BPF_MAPS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "sluice_abi.h"
#include "parse.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sluice_settings);
} sl_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sluice_heartbeat);
} sl_heartbeat SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SLUICE_MAX_LEVELS);
	__type(key, __u32);
	__type(value, struct sluice_level);
} sl_levels SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, SLUICE_MAX_LEVELS);
	__type(key, __u32);
	__type(value, struct sluice_seats);
} sl_seats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SLUICE_MAX_LEVELS);
	__type(key, __u32);
	__type(value, struct sluice_level_stats);
} sl_lvl_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sluice_stats);
} sl_stats SEC(".maps");

/* Classification tables, two generations each (sluice_abi.h). */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, SLUICE_LPM_ENTRIES);
	__type(key, struct sluice_lpm_key);
	__type(value, struct sluice_lpm_val);
} sl_src_cls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, SLUICE_LPM_ENTRIES);
	__type(key, struct sluice_lpm_key);
	__type(value, struct sluice_lpm_val);
} sl_dst_cls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SLUICE_PORT_CLS_ENTRIES);
	__type(key, __u32);
	__type(value, __u32);
} sl_port_cls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 2 * SLUICE_DEFAULT_CLASSES);
	__type(key, struct sluice_class_key);
	__type(value, struct sluice_class);
} sl_classes SEC(".maps");

/* A plain (preallocated) HASH, not LRU: evicting an admitted connection
 * would leak its seats.  A full table refuses new admissions instead. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SLUICE_DEFAULT_CONNS);
	__type(key, struct sluice_conn_key);
	__type(value, struct sluice_conn);
} sl_conns SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SLUICE_DEFAULT_TICKETS);
	__type(key, struct sluice_conn_key);
	__type(value, struct sluice_ticket);
} sl_tickets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	/* ~2,800 deferrals with their frames, or 13,000 close events */
	__uint(max_entries, 1024 * 1024);
} sl_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SLUICE_MAX_LEVELS); /* one window per level */
	__type(key, __u32);
	__type(value, struct sluice_ev_limit);
} sl_ev_limit SEC(".maps");

/* The policy gate (sluice_abi.h "load-scheduler gate"). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, SLUICE_MAX_POLICIES);
	__type(key, __u32);
	__type(value, struct sluice_policy_gate);
} sl_pol_gate SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SLUICE_MAX_POLICIES * SLUICE_WL_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
} sl_wl_tokens SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SLUICE_MAX_POLICIES * SLUICE_WL_SLOTS);
	__type(key, __u32);
	__type(value, struct sluice_wl_stats);
} sl_wl_stats SEC(".maps");

/* Handshake times (sluice_abi.h, SLUICE_HS_BUCKETS). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SLUICE_HS_BUCKETS);
	__type(key, __u32);
	__type(value, __u64);
} sl_hs_hist SEC(".maps");

/* Per-FlowSchema counters (sluice_abi.h). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SLUICE_FS_STATS);
	__type(key, __u32);
	__type(value, struct sluice_fs_stats);
} sl_fs_stats SEC(".maps");

/* Per-FlowSchema lifetimes (sluice_abi.h): per CPU, so that a close adds
 * to its own CPU's line instead of bouncing one shared line between CPUs
 * with atomic adds (issue 25); readers sum at scrape time. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SLUICE_FS_STATS);
	__type(key, __u32);
	__type(value, struct sluice_fs_duration);
} sl_fs_dur SEC(".maps");

/* The next XDP program, for sharing the interface without freplace (where
 * the kernel refuses BPF_PROG_TYPE_EXT, libxdp's dispatcher cannot load):
 * a packet sluice passes is handed on by tail call to slot 0, if a program
 * is there (Server spec.xdpChain.next; the daemon owns the slot).  Frames
 * sluice answers (a RST) or drops end here. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} sl_xdp_next SEC(".maps");

/* The protected interfaces, by ifindex: their sl_if_stats slot, how their
 * RSTs leave and their hand-off cookie.  The daemon's only. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SLUICE_MAX_IFACES);
	__type(key, __u32);
	__type(value, struct sluice_iface);
} sl_ifaces SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SLUICE_MAX_IFACES);
	__type(key, __u32);
	__type(value, struct sluice_if_stats);
} sl_if_stats SEC(".maps");

/* The static failsafe's sweep: its timer, and the FIFO of what the outage
 * admitted (layouts and why: sluice_abi.h; the code: fail_static.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sluice_static_sweep);
} sl_static_sweep SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, SLUICE_STATIC_DUE);
	__type(value, struct sluice_static_due);
} sl_static_due SEC(".maps");

/* What a decision works on (sluice.bpf.c, sl_decide_*), off the stack:
 * the parser's result, copied out of the caller's stack because a global
 * function sees that as plain memory and 6.1's helpers take no map key
 * from plain memory; and the class, whose 16 bytes the deciding function's
 * frame has no room for (with build_rst's and the program's, 6.1 counts
 * 512 bytes in all).  The kernel's alone: XDP does not nest on a CPU. */
struct sl_decision {
	struct syn_pkt pkt;
	struct sluice_class cls;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sl_decision);
} sl_decision SEC(".maps");

#endif /* SLUICE_BPF_MAPS_H */
