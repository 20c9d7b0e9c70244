/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * sluice map ABI: every map name, key, value, event and enum shared by the
 * BPF data path (bpf/), the daemon and the CLI (user/).  Nothing else may
 * define a layout that crosses the kernel/user boundary.
 *
 * Rules (see spec/ebpf-notes.md §A.2):
 *  - fixed-width types only, explicit padding, so hash keys compare exactly;
 *  - addresses and ports in network byte order, IPv4 as v4-mapped IPv6
 *    (::ffff:a.b.c.d) so one key layout and one LPM trie serve both families;
 *  - map names at most 15 characters (the kernel truncates longer ones);
 *  - the 4-tuple is always seen from the server: s = remote client, d = local.
 */
#ifndef SLUICE_ABI_H
#define SLUICE_ABI_H

#ifdef __BPF__
#include <linux/types.h>
#else
#include <linux/types.h>
#include <stdint.h>
#endif

#define SLUICE_ABI_VERSION 1

/* Sizes.  Connection table size is the default; the daemon may resize. */
#define SLUICE_MAX_LEVELS      64
#define SLUICE_LEVEL_NAME_LEN  48
#define SLUICE_DEFAULT_CONNS   65536
#define SLUICE_PORT_TABLE_SIZE 1024

/* Map names (pinned under <pin-dir>/maps/<name>). */
#define SLUICE_MAP_CONFIG    "sl_config"
#define SLUICE_MAP_HEARTBEAT "sl_heartbeat"
#define SLUICE_MAP_LEVELS    "sl_levels"
#define SLUICE_MAP_SEATS     "sl_seats"
#define SLUICE_MAP_LVL_STATS "sl_lvl_stats"
#define SLUICE_MAP_STATS     "sl_stats"
#define SLUICE_MAP_PORTS     "sl_ports"
#define SLUICE_MAP_CONNS     "sl_conns"
#define SLUICE_MAP_EVENTS    "sl_events"
#define SLUICE_MAP_EVLIMIT   "sl_ev_limit"

/* Program names (pinned under <pin-dir>/progs/<name> by bpftool loadall). */
#define SLUICE_PROG_XDP     "sluice_xdp"
#define SLUICE_PROG_SOCKOPS "sluice_sockops"

enum sluice_fail_mode {
	SLUICE_FAIL_OPEN   = 0, /* stale heartbeat: admit every SYN (default) */
	SLUICE_FAIL_CLOSED = 1, /* stale heartbeat: drop SYNs to protected ports */
};

/* sl_config[0]: runtime knobs.  An ARRAY map, not .rodata, because an
 * object loaded by bpftool cannot have its rodata set (ebpf-notes §0.4). */
struct sluice_config {
	__u64 heartbeat_timeout_ns; /* 0 = never stale (failsafe off) */
	__u32 fail_mode;            /* enum sluice_fail_mode */
	__u32 events_per_sec;       /* per CPU cap on ring buffer events, 0 = none */
	__u32 abi_version;          /* SLUICE_ABI_VERSION, written by the daemon */
	__u32 flags;                /* enum sluice_config_flags */
};

enum sluice_config_flags {
	SLUICE_CFG_ACTIVE = 1u << 0, /* a daemon has configured the maps */
};

/* sl_heartbeat[0]: written by the daemon every tick.  The clock is
 * CLOCK_MONOTONIC, the same clock as bpf_ktime_get_ns(). */
struct sluice_heartbeat {
	__u64 mono_ns; /* 0 = never written: stale */
	__u64 seq;     /* ticks since the daemon started */
	__u32 pid;     /* daemon pid, for the CLI */
	__u32 pad;
};

enum sluice_level_type {
	SLUICE_LEVEL_UNUSED  = 0,
	SLUICE_LEVEL_EXEMPT  = 1, /* never limited, seats still counted */
	SLUICE_LEVEL_LIMITED = 2,
};

enum sluice_limit_response {
	SLUICE_RESP_QUEUE  = 0, /* over limit: drop the SYN (defer); the retransmit is the queue */
	SLUICE_RESP_REJECT = 1, /* over limit: answer with a RST */
};

/* sl_levels[level]: written by the daemon, read by BPF and the CLI. */
struct sluice_level {
	__u32 type;           /* enum sluice_level_type */
	__u32 limit_response; /* enum sluice_limit_response */
	__u32 seat_limit;     /* current concurrency limit in seats */
	__u32 seats_per_conn; /* seats one connection holds (>= 1) */
	char name[SLUICE_LEVEL_NAME_LEN];
};

/* sl_seats[level]: live seat accounting.  A BPF_F_MMAPABLE array so the
 * daemon can release seats with the same atomic instructions BPF uses. */
struct sluice_seats {
	__u64 seats_in_use;
	__u64 waiting; /* connections deferred and not yet admitted */
	__u64 expired; /* admitted connections that never established (daemon sweep) */
	__u64 pad;
};

/* sl_lvl_stats[level]: per-CPU counters, summed by readers. */
struct sluice_level_stats {
	__u64 syns;       /* SYNs classified into this level */
	__u64 admitted;   /* connections admitted (seats reserved) */
	__u64 deferred;   /* SYNs dropped: over limit on a Queue level */
	__u64 rejected;   /* SYNs answered with a RST */
	__u64 retransmits;/* SYN retransmits of an already admitted connection */
	__u64 closed;     /* admitted connections whose seats came back on close */
	__u64 failsafe;   /* SYNs decided by the failsafe (stale heartbeat) */
};

/* sl_stats[0]: per-CPU global counters. */
struct sluice_stats {
	__u64 syns;           /* well-formed SYNs */
	__u64 unprotected;    /* SYNs to ports no level protects */
	__u64 malformed;      /* truncated or invalid headers: passed */
	__u64 fragments;      /* IP fragments: passed, never treated as SYNs */
	__u64 failsafe_open;  /* SYNs admitted because the heartbeat was stale */
	__u64 failsafe_closed;/* SYNs dropped because the heartbeat was stale */
	__u64 conn_table_full;/* admitted SYNs that found the connection table full */
	__u64 events_lost;    /* ring buffer events suppressed or not reserved */
	__u64 rst_failed;     /* RST could not be built: SYN dropped instead */
	__u64 established;    /* sock_ops: tracked connections established */
	__u64 released;       /* sock_ops: seats released on close */
};

/* Temporary classifier (foundation): destination port -> level.  Key is
 * the port in network order, zero-extended to 32 bits. */
struct sluice_port_key {
	__u16 port; /* network order */
	__u16 pad;
};

struct sluice_port_val {
	__u32 level;
};

/* sl_conns: one entry per admitted connection, keyed by its 4-tuple. */
struct sluice_conn_key {
	__u8  saddr[16]; /* client address, v4-mapped for IPv4 */
	__u8  daddr[16]; /* local (server) address */
	__u16 sport;     /* client port, network order */
	__u16 dport;     /* local port, network order */
	__u8  family;    /* 4 or 6 */
	__u8  pad[3];
};

enum sluice_conn_state {
	SLUICE_CONN_ADMITTED    = 1, /* SYN passed, seats reserved, handshake pending */
	SLUICE_CONN_ESTABLISHED = 2, /* sock_ops saw the passive open complete */
};

struct sluice_conn {
	__u64 admitted_ns;    /* when XDP passed the SYN */
	__u64 established_ns; /* when sock_ops saw it established, 0 before */
	__u32 level;
	__u32 seats;
	__u32 state;          /* enum sluice_conn_state */
	__u32 srtt_us;        /* smoothed RTT in microseconds (sock_ops srtt_us / 8) */
};

/* Ring buffer events (sl_events). */
enum sluice_event_type {
	SLUICE_EV_DEFER  = 1, /* SYN dropped over limit */
	SLUICE_EV_REJECT = 2, /* SYN answered with a RST */
	SLUICE_EV_CLOSE  = 3, /* tracked connection closed, seats released */
};

struct sluice_event {
	__u64 ts_ns;
	struct sluice_conn_key key;
	__u32 type;  /* enum sluice_event_type */
	__u32 level;
	__u64 duration_ns; /* SLUICE_EV_CLOSE: admission to close */
	__u32 srtt_us;     /* SLUICE_EV_CLOSE: last smoothed RTT */
	__u32 pad;
};

/* sl_ev_limit[0]: per-CPU event rate limiter state (one-second windows). */
struct sluice_ev_limit {
	__u64 window_start_ns;
	__u64 count;
};

#endif /* SLUICE_ABI_H */
