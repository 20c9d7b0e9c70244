/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * sluice map ABI: every map name, key, value, event and enum shared by the
 * BPF data path (bpf/), the daemon and the CLI (user/).  Nothing else may
 * define a layout that crosses the kernel/user boundary.
 *
 * Rules (as in xdp-tools and libbpf-bootstrap):
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
#include <linux/bpf.h> /* struct bpf_timer */

#define SLUICE_ABI_VERSION 16

/* Sizes.  Connection table size is the default; the daemon may resize. */
#define SLUICE_MAX_LEVELS      64
#define SLUICE_LEVEL_NAME_LEN  48
#define SLUICE_DEFAULT_CONNS   65536
#define SLUICE_LPM_ENTRIES     65536  /* per trie, both generations */
#define SLUICE_DEFAULT_CLASSES 65536  /* class-table entries per generation */
#define SLUICE_NONE16          0xffff
#define SLUICE_MAX_POLICIES    64     /* AverageLatencySchedulingPolicy objects */
#define SLUICE_MAX_WORKLOADS   63     /* per policy, besides the default workload */
#define SLUICE_WL_SLOTS        64     /* per policy: workloads 0..62, then the default */
#define SLUICE_WL_DEFAULT      (SLUICE_WL_SLOTS - 1)
#define SLUICE_MTOK            1000   /* token amounts in the maps are in 1/1000 tokens */
#define SLUICE_FS_STATS        16384  /* FlowSchemas counted one by one (sl_fs_stats) */
#define SLUICE_MAX_IFACES      32     /* interfaces one daemon protects (sl_ifaces, sl_if_stats) */

/*
 * Every map userspace reaches by name or descriptor, once: X(ID, name),
 * the name being the map's in bpf/maps.h, pinned under
 * <pin-dir>/maps/<name>.  The daemon's and the CLI's enum sl_map_id, their
 * table of names and the descriptors taken from a loaded object are
 * generated from this list (user/dataplane/pinned_maps.h): adding a map
 * is a row here and its definition in bpf/maps.h.  (sl_xdp_next, which
 * the daemon sets through the loaded object, and sl_static_sweep,
 * sl_static_due and sl_decision, the kernel's alone, are adopted with
 * the object and never opened by name.)
 */
#define SLUICE_MAPS(X)            \
	X(CONFIG,    sl_config)    \
	X(HEARTBEAT, sl_heartbeat) \
	X(LEVELS,    sl_levels)    \
	X(SEATS,     sl_seats)     \
	X(LVL_STATS, sl_lvl_stats) \
	X(STATS,     sl_stats)     \
	X(SRC_CLS,   sl_src_cls)   \
	X(DST_CLS,   sl_dst_cls)   \
	X(PORT_CLS,  sl_port_cls)  \
	X(CLASSES,   sl_classes)   \
	X(CONNS,     sl_conns)     \
	X(EVENTS,    sl_events)    \
	X(TICKETS,   sl_tickets)   \
	X(EV_LIMIT,  sl_ev_limit)  \
	X(POL_GATE,  sl_pol_gate)  \
	X(WL_TOKENS, sl_wl_tokens) \
	X(WL_STATS,  sl_wl_stats)  \
	X(HS_HIST,   sl_hs_hist)   \
	X(FS_STATS,  sl_fs_stats)  \
	X(FS_DUR,    sl_fs_dur)    \
	X(IFACES,    sl_ifaces)    \
	X(IF_STATS,  sl_if_stats)

/* Program names (pinned under <pin-dir>/progs/<name> by bpftool loadall). */
#define SLUICE_PROG_XDP     "sluice_xdp"
#define SLUICE_PROG_SOCKOPS "sluice_sockops"
/* The hand-off programs (tcx links on every protected interface, below). */
#define SLUICE_PROG_TC_IN   "sluice_tc_in"
#define SLUICE_PROG_TC_OUT  "sluice_tc_out"
/* Raw tracepoints that count the XDP_TX frames a driver dropped. */
#define SLUICE_PROG_TX_BULK "sluice_tx_bulk"
#define SLUICE_PROG_TX_EXC  "sluice_tx_exc"
/* Run by the daemon with BPF_PROG_TEST_RUN (never attached): turns a held
 * SYN into the RST the data path would have sent; the daemon sends it. */
#define SLUICE_PROG_RESET   "sluice_reset"

enum sluice_fail_mode {
	SLUICE_FAIL_OPEN   = 0, /* stale heartbeat: admit every SYN (what zeroed settings
				  * mean; the configuration's default is static) */
	SLUICE_FAIL_CLOSED = 1, /* stale heartbeat: drop SYNs to protected ports */
	/* Stale heartbeat: the kernel keeps each level's limit on its own.  A
	 * SYN within it is admitted, one over it dropped (its retransmit tries
	 * again; a Reject level answers a RST), exempt levels pass; and a BPF
	 * timer expires half-open entries older than halfopen_timeout_ns, so
	 * no outage leaks seats.  Nothing is deferred: no daemon queues. */
	SLUICE_FAIL_STATIC = 2,
};

/*
 * Classification (compiled by the daemon from FlowSchemas, ConnectionLabels
 * and policies; see docs/ARCHITECTURE.md "Compiled classification").
 *
 * Each dimension of a SYN maps to a class id: source address and local
 * address through LPM tries (the class of the longest matching prefix; 0 =
 * no prefix), client and local port through arrays.  Then tuple space
 * search over those ids: every entry of sl_classes names the dimensions it
 * constrains (its mask; the others are 0 in the key) and carries two
 * candidates, each with a rank: a FlowSchema (schema half: level, schema,
 * seats, distinguisher, prefixes; rank = schema index, first match in
 * precedence order) and a policy and workload (policy half; rank =
 * policy * SLUICE_WL_SLOTS + workload, the default workload last).  An
 * entry may carry one half only: the other is SLUICE_NONE16, which ranks
 * last and never wins.  The data path looks up the SYN's ids once under
 * each mask in use (sluice_settings.masks) and keeps the lowest rank of
 * each half: one hash lookup per mask, whichever half needs it.
 * The candidates of mask 0 are sluice_settings.default_class.  Every table
 * exists twice (generation 0 and 1): the daemon fills the idle
 * generation, then flips sl_config.generation in one map update, so a
 * reload is atomic for the data path.
 */
struct sluice_class {
	__u32 level;        /* level slot */
	__u16 schema;       /* FlowSchema index in (precedence, name) order */
	__u16 seats;        /* seats one connection holds (seatsPerConnection) */
	__u16 policy;       /* AverageLatencySchedulingPolicy index, SLUICE_NONE16 = none */
	__u16 workload;     /* workload index in the policy, SLUICE_NONE16 = default */
	__u8  distinguisher;/* enum sluice_distinguisher */
	__u8  prefix_v4;    /* BySource prefix lengths */
	__u8  prefix_v6;
	__u8  pad;
};

enum sluice_distinguisher {
	SLUICE_DIST_NONE   = 0,
	SLUICE_DIST_SOURCE = 1,
	SLUICE_DIST_DEST   = 2,
};

/* LPM key: generation byte, then the v4-mapped address.  prefixlen counts
 * the generation's 8 bits too: a /24 IPv4 prefix is 8 + 96 + 24. */
struct sluice_lpm_key {
	__u32 prefixlen;
	__u8  gen;
	__u8  addr[16];
	__u8  pad[3];
};
#define SLUICE_LPM_FULL (8 + 128)

struct sluice_lpm_val {
	__u32 cls;
};

/* sl_port_cls index: gen * 2 * 65536 + dir * 65536 + port (host order). */
enum sluice_port_dir {
	SLUICE_PORT_SRC = 0, /* client port */
	SLUICE_PORT_DST = 1, /* local port */
};
#define SLUICE_PORT_CLS_ENTRIES (2 * 2 * 65536)

/* Ranks: lower wins.  No schema (SLUICE_NONE16) and no policy rank last. */
#define SLUICE_SCHEMA_RANK(c) ((__u32)(c)->schema)
#define SLUICE_POLICY_RANK(c)                                                         \
	((__u32)(c)->policy * SLUICE_WL_SLOTS +                                         \
	 ((c)->workload < SLUICE_MAX_WORKLOADS ? (__u32)(c)->workload : SLUICE_WL_DEFAULT))

/* Dimensions, as bits of a mask. */
enum sluice_dim {
	SLUICE_DIM_SRC   = 1, /* client address class */
	SLUICE_DIM_DST   = 2, /* local address class */
	SLUICE_DIM_SPORT = 4, /* client port class */
	SLUICE_DIM_DPORT = 8, /* local port class */
};
#define SLUICE_MASKS 16 /* every subset of the four dimensions */

struct sluice_class_key {
	__u16 src;   /* class ids; 0 for a dimension outside mask */
	__u16 dst;
	__u16 sport;
	__u16 dport;
	__u8  gen;
	__u8  mask;  /* enum sluice_dim bits, 1..15 */
	__u16 pad;
};

/* sl_config[0]: the data path's runtime settings, written by the daemon
 * from its plan.  (Not to be confused with struct sl_config, the parsed
 * YAML, in user/config/config.h.)  An ARRAY map, not .rodata, because an
 * object loaded by bpftool cannot have its rodata set. */
struct sluice_settings {
	__u64 heartbeat_timeout_ns; /* 0 = never stale (failsafe off) */
	/* A heartbeat older than this (a few ticks) means nobody dispatches
	 * deferred connections: the data path stops deferring to the daemon
	 * (the published waiting counts are ignored, policy gates open, a SYN
	 * over its level's limit is dropped without an event, so the client's
	 * retransmit retries) long before the failsafe's heartbeat_timeout.
	 * 0 = never. */
	__u64 dispatch_timeout_ns;
	__u32 fail_mode;            /* enum sluice_fail_mode */
	__u32 events_per_sec;       /* cap on ring buffer events per CPU and level, 0 = none */
	__u32 abi_version;          /* SLUICE_ABI_VERSION, written by the daemon */
	__u32 flags;                /* enum sluice_config_flags */
	__u32 generation;           /* classification tables in use: 0 or 1 */
	/* Levels with SLUICE_LVL_ACK_WATCH set: 0 = XDP leaves every ACK
	 * alone (one compare per ACK is all it costs then). */
	__u32 ack_watch_levels;
	/* Bit m set: sl_classes holds entries of mask m; the data path
	 * looks up no other. */
	__u16 masks;
	__u16 pad_masks16;
	__u32 pad_masks;
	/* The digest of what the tables in use were compiled from (0: not
	 * known): a stage that would write the same tables writes nothing. */
	__u64 class_digest;
	/* The candidates of mask 0, schema part and policy part: what a SYN
	 * gets when no entry of sl_classes ranks lower. */
	struct sluice_class default_class;
	/* SLUICE_FAIL_STATIC: an admitted connection that has not established
	 * this long after its SYN gives its seats back (the kernel's sweep
	 * while no daemon runs; Server spec.handshakeTimeout).  0 = never. */
	__u64 halfopen_timeout_ns;
};

/* Where every ABI since 3 keeps abi_version: a daemon reads it from maps
 * another build pinned before it tries to adopt them. */
#define SLUICE_SETTINGS_ABI_OFFSET 24
_Static_assert(__builtin_offsetof(struct sluice_settings, abi_version) == SLUICE_SETTINGS_ABI_OFFSET,
	       "abi_version stays where older daemons wrote it");

enum sluice_config_flags {
	SLUICE_CFG_ACTIVE = 1u << 0, /* a daemon has configured the maps */
	/* Shadow mode: every verdict is computed and counted as usual, none is
	 * enforced: a SYN that would be deferred or reset is admitted (and
	 * tracked, so its seats count, above the limit if need be) and counted
	 * in shadow_passed; no deferral events, so nothing queues. */
	SLUICE_CFG_SHADOW = 1u << 1,
	/* The daemon holds no SYN (heldSyns budget 0): deferral events go
	 * without the frame copy. */
	SLUICE_CFG_NO_FRAMES = 1u << 2,
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
	SLUICE_RESP_QUEUE  = 0, /* over limit: defer (drop the SYN, its frame to the daemon's queue) */
	SLUICE_RESP_REJECT = 1, /* over limit: answer with a RST */
};

/*
 * Where a level's connections take their seats.  By default at the SYN.
 * A source that never finishes its handshake (spoofed, or gone) would hold
 * its seat until the half-open time-out, so under that pressure the daemon
 * moves a level's seats to the handshake's final ACK: its SYNs pass without
 * a seat (the kernel answers them, bounding its own request sockets and
 * falling back to SYN cookies), and an ACK without a seat that proves its
 * source (it acknowledges the ISN of a pending request socket, or carries
 * a valid SYN cookie) meets the level's gates as its SYN would have: it
 * takes the seat, or is deferred (its frame held, re-injected at its turn),
 * or rejected (RST).  An ACK that proves nothing passes to the kernel,
 * which drops it.  See docs/ARCHITECTURE.md "Half-open connections".
 */
enum sluice_level_flags {
	SLUICE_LVL_SEAT_AT_ACK = 1u << 0, /* SYNs pass unseated; the proving ACK is seated */
	/* XDP examines the level's unseated handshake ACKs: set with
	 * SEAT_AT_ACK and kept a while after it is cleared, so that the
	 * handshakes begun in that mode still end seated. */
	SLUICE_LVL_ACK_WATCH   = 1u << 1,
};

/* sl_levels[level]: written by the daemon, read by BPF and the CLI. */
struct sluice_level {
	__u32 type;           /* enum sluice_level_type */
	__u32 limit_response; /* enum sluice_limit_response */
	__u32 seat_limit;     /* current concurrency limit in seats */
	__u32 flags;          /* enum sluice_level_flags */
	char name[SLUICE_LEVEL_NAME_LEN];
};

/* sl_seats[level]: live seat accounting.  A BPF_F_MMAPABLE array so the
 * daemon can release seats with the same atomic instructions BPF uses. */
struct sluice_seats {
	__u64 seats_in_use;
	__u64 waiting; /* connections deferred and not yet admitted */
	__u64 expired; /* admitted connections that never established (daemon sweep) */
	__u64 unclaimed; /* seats reserved for admit tickets nobody claimed yet: the
			  * daemon adds before it writes a ticket, and whoever deletes
			  * the ticket (XDP's claim, the daemon's withdrawal) subtracts.
			  * Without a dispatcher the data path lends these seats out
			  * (their clients may never come back). */
	__u64 reinjected; /* deferred connections the daemon admitted by re-injecting
			   * their held SYN (cumulative; XDP never saw them pass) */
	__u64 reset_held; /* deferred connections the daemon rejected with a RST built
			   * from their held SYN (cumulative) */
	__u64 held_syns;  /* waiting connections whose SYN the daemon holds (gauge) */
	__u64 held_bytes; /* the memory they take, against heldSyns (gauge) */
	__u64 reset_failed; /* RSTs for held SYNs the daemon could not send (cumulative) */
	__u64 tickets;    /* the level's tickets in sl_tickets, admit and reject: the
			   * daemon adds one before it writes a ticket, whoever
			   * deletes one subtracts, so it is never below the true
			   * count.  While it is 0 the data path does not look for
			   * a ticket: a SYN on a normal day skips that lookup. */
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
	__u64 shadow_passed; /* shadow mode: deferred or rejected SYNs admitted anyway */
	__u64 unseated;   /* SYNs passed without a seat (the level seats at the ACK) */
	__u64 acks_proved;/* unseated handshake ACKs that proved their source (then judged) */
	/* Its connections' closes, counted here whether or not the daemon
	 * hears of them (conn_closed sends it only the closes it needs). */
	__u64 closed_unserved; /* closed before they established (a handshake RST, ICMP) */
	__u64 served;          /* closed after they established: a lifetime sample each */
	__u64 served_log2;     /* sum of their log2(lifetime in ns), SLUICE_LOG2_ONE to 1 */
};

/* served_log2's fixed point: log2 in 1/16ths (a piecewise-linear log2, off
 * by at most 0.09): for the stall rule's geometric mean of lifetimes. */
#define SLUICE_LOG2_ONE 16

/*
 * sl_fs_stats[schema]: per-CPU counters of each FlowSchema (its index in
 * the configuration, struct sluice_class.schema), for the metrics that
 * carry a flow_schema label.  What only the data path sees: the daemon
 * counts its own verdicts (re-injections, queue rejections).  Schemas at
 * SLUICE_FS_STATS and beyond are counted per level only.
 */
struct sluice_fs_stats {
	__u64 syns;            /* SYNs classified into the schema */
	__u64 admitted_inline; /* admitted by the data path without waiting */
	__u64 rejected_inline; /* answered with a RST by a Reject level over its limit */
};

/*
 * sl_fs_dur[schema]: how long each FlowSchema's served connections lasted,
 * admission to close (apiserver_flowcontrol_request_execution_seconds, and
 * longer), counted by the data path for every close (per CPU: readers
 * sum the CPUs' copies; ABI 13).  bucket[i] counts lifetimes at most
 * SLUICE_DUR_BOUNDS_MS[i] (and above the one before); the last bucket,
 * those above every bound.
 */
#define SLUICE_DUR_BOUNDS_MS { 0, 5, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 15000, \
			       30000, 60000, 300000, 900000, 3600000 }
#define SLUICE_DUR_BOUNDS  17
#define SLUICE_DUR_BUCKETS (SLUICE_DUR_BOUNDS + 1)

struct sluice_fs_duration {
	__u64 bucket[SLUICE_DUR_BUCKETS];
	__u64 sum_ns;
};

/* sl_stats[0]: per-CPU global counters. */
struct sluice_stats {
	__u64 syns;           /* well-formed SYNs */
	__u64 unprotected;    /* SYNs whose class names no configured level */
	__u64 malformed;      /* truncated or invalid headers: passed */
	__u64 fragments;      /* IP fragments: passed, never treated as SYNs */
	__u64 failsafe_open;  /* SYNs admitted because the heartbeat was stale */
	__u64 failsafe_closed;/* SYNs dropped because the heartbeat was stale */
	__u64 conn_table_full;/* admitted SYNs that found the connection table full */
	__u64 events_lost;    /* ring buffer events suppressed or not reserved */
	__u64 rst_failed;     /* RST could not be built: SYN dropped instead (the other ways a
			       * refusal is lost: sluice_if_stats.tx_dropped and
			       * sluice_iface.tx_dropped_driver, and
			       * sluice_seats.reset_failed for the daemon's own) */
	__u64 tickets_admitted; /* retransmits admitted on a daemon ticket */
	__u64 tickets_rejected; /* retransmits answered with a RST on a daemon ticket */
	__u64 established;    /* sock_ops: tracked connections established */
	__u64 released;       /* sock_ops: seats released on close */
	__u64 policy_deferred;/* SYNs dropped by a throttled policy's gate */
	__u64 policy_refunds; /* policy tokens given back because the level refused */
	__u64 shadow_passed;  /* shadow mode: SYNs a gate refused, admitted anyway */
	__u64 undispatched;   /* SYNs over their level's limit while no daemon dispatched
			       * (heartbeat older than dispatch_timeout_ns): dropped, no event */
	__u64 frames_copied;  /* deferral events that carry their SYN's frame */
	__u64 frames_too_long;/* deferred SYNs longer than SLUICE_FRAME_MAX (not copied) */
	__u64 rst_released;   /* half-open connections whose client's RST returned the seats */
	__u64 icmp_released;  /* half-open connections whose SYN-ACK drew an ICMP error that
			       * aborts the handshake (net/host unreachable, ...): seats returned */
	__u64 acks_unproved;  /* unseated ACKs in a watched level that proved nothing
			       * (no request socket they acknowledge, no valid cookie): passed */
	__u64 closes_quiet;   /* closes nobody in the daemon needed: counted in the maps, no event */
	__u64 martians;       /* SYNs with a loopback source on a device (spoofed): passed, never seated */
	__u64 failsafe_static;/* SYNs judged against their level's limit by the kernel alone
			       * (stale heartbeat, SLUICE_FAIL_STATIC) */
	__u64 static_sweeps;  /* runs of the kernel's half-open sweep (SLUICE_FAIL_STATIC) */
	__u64 static_expired; /* half-open connections it expired, seats returned */
	__u64 static_walks;   /* its runs that walked the whole of sl_conns (the others read
			       * only the FIFO of what the outage admitted) */
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

enum sluice_conn_flags {
	SLUICE_CONNF_AT_ACK = 1u << 0, /* seated at its final ACK (the SYN passed unseated) */
	/* Holds a slot of its policy's in-flight limit (gate mode LIMIT):
	 * whoever deletes the entry gives it back (the gate's slots_held). */
	SLUICE_CONNF_POLICY_SLOT = 1u << 1,
	/* The daemon admitted it (re-injected its held SYN, or it claimed a
	 * ticket): the daemon keeps a record of it until its close event. */
	SLUICE_CONNF_DAEMON = 1u << 2,
	/* Its held SYN was re-injected into a device in generic XDP mode,
	 * where XDP sees it once more: that pass is the daemon's, not the
	 * client's retransmit.  Set by the daemon, cleared by that pass. */
	SLUICE_CONNF_REINJECTED = 1u << 3,
};

struct sluice_conn {
	__u64 admitted_ns;    /* when XDP passed the SYN (or the seated ACK) */
	__u64 established_ns; /* when sock_ops saw it established, 0 before */
	__u32 level;
	__u32 seats;
	__u32 state;          /* enum sluice_conn_state */
	__u32 srtt_us;        /* smoothed RTT in microseconds at establishment (sock_ops srtt_us / 8) */
	__u16 schema;         /* classification, as in struct sluice_class */
	__u16 policy;
	__u16 workload;
	__u16 flags;          /* enum sluice_conn_flags */
	__be32 syn_seq;       /* the client's SYN sequence number: a RST for the
			       * half-open connection carries syn_seq + 1 */
	__u32 pad2;
};

/*
 * The static failsafe's half-open sweep (failMode static, bpf/fail_static.h):
 * sl_static_sweep holds its BPF timer (one entry; pinned, so the timer
 * outlives the daemon that is gone), sl_static_due a FIFO of what the
 * outage admitted, oldest first.  The daemon adopts both and reads neither.
 */
#define SLUICE_STATIC_DUE 65536 /* FIFO entries (3 MB); an overflow costs a whole walk */

struct sluice_static_sweep {
	struct bpf_timer timer;
	__u32 armed;      /* a sweep is scheduled (set by the arming SYN, cleared by
			   * the sweep that finds the heartbeat fresh) */
	__u32 overflow;   /* sl_static_due refused an admission since the last check */
	__u64 walks;      /* whole walks still to do this outage */
	__u64 walk_at_ns; /* the next one, not before */
};

struct sluice_static_due {
	struct sluice_conn_key key;
	__u64 admitted_ns;
};

/*
 * sl_tickets: the daemon's verdicts for deferred connections, keyed by the
 * 4-tuple (struct sluice_conn_key).  The client's next SYN retransmit
 * claims the ticket (XDP deletes it: exactly once).  An ADMIT ticket
 * carries seats the daemon already reserved; a REJECT ticket turns the
 * retransmit into a RST.  Tickets nobody claims are swept by the daemon,
 * which then returns the seats.  A plain HASH: eviction would leak seats.
 */
enum sluice_ticket_verdict {
	SLUICE_TICKET_ADMIT  = 1,
	SLUICE_TICKET_REJECT = 2,
};

struct sluice_ticket {
	__u64 issued_ns;
	__u32 verdict;  /* enum sluice_ticket_verdict */
	__u32 level;    /* slot the seats were reserved in */
	__u16 seats;
	__u16 schema;
	__u16 policy;
	__u16 workload;
	__u16 flags;    /* SLUICE_CONNF_POLICY_SLOT: the daemon took its policy slot */
	__u16 pad[3];
};

#define SLUICE_DEFAULT_TICKETS 65536

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
	__u32 srtt_us;     /* SLUICE_EV_CLOSE: the smoothed RTT at the close */
	__u16 schema;
	__u16 workload;
	__u16 policy;
	__u16 seats;
	__u8  gate;        /* SLUICE_EV_DEFER / _REJECT: enum sluice_gate */
	__u8  end;         /* SLUICE_EV_CLOSE: enum sluice_conn_end */
	__u8  pad[2];
};

/*
 * How a tracked connection ended (SLUICE_EV_CLOSE).  Only a connection
 * that established was served: its duration is a latency sample.  One
 * that never did (the client had given up and answered the SYN-ACK of its
 * re-injected SYN with a RST; the SYN-ACK drew an ICMP error) lasted one
 * round trip and says nothing of the service: it returns its seats and
 * slot, and feeds no controller, baseline, token estimate or histogram
 * (user/lib/conn_end.h).  0 is never sent.
 */
enum sluice_conn_end {
	SLUICE_END_CLOSED        = 1, /* established, closed in order (FIN) */
	SLUICE_END_RESET         = 2, /* established, aborted (straight from ESTABLISHED to CLOSE) */
	SLUICE_END_HANDSHAKE_RST = 3, /* never established: the client's RST to the SYN-ACK */
	SLUICE_END_HANDSHAKE_ICMP = 4, /* never established: an ICMP error about the SYN-ACK */
};

/*
 * A deferral carries the SYN's frame as received (Ethernet, VLAN tags, IP
 * with its options or extension headers, TCP with every option), so that
 * the daemon can hold it in its queue and re-inject it the moment its turn
 * comes.  A frame longer than SLUICE_FRAME_MAX (a SYN with Fast Open data,
 * say) is not copied: frame_len 0, and the connection waits for its
 * client's retransmit to claim a ticket, as without a held frame.
 */
#define SLUICE_FRAME_MAX 256

struct sluice_defer_event {
	struct sluice_event ev; /* type SLUICE_EV_DEFER */
	__u32 ifindex;          /* the ingress device */
	__u16 frame_len;        /* bytes in frame, 0: not copied */
	__u8  pad[2];
	__u8  frame[SLUICE_FRAME_MAX];
};

/* Which gate held a SYN back. */
enum sluice_gate {
	SLUICE_GATE_LEVEL  = 1, /* its priority level (seats, waiting, failsafe) */
	SLUICE_GATE_POLICY = 2, /* its policy's load scheduler (no tokens, or flows waiting) */
};

/*
 * sl_hs_hist[i] (per-CPU): handshakes that took [2^i, 2^(i+1)) microseconds
 * (bucket 0 also holds those under 1 us), from the SYN's seat to sock_ops'
 * established.  The daemon bounds half-open time by what it shows.
 */
#define SLUICE_HS_BUCKETS 32

/* sl_ev_limit[level]: per-CPU event rate limiter state (one-second windows). */
struct sluice_ev_limit {
	__u64 window_start_ns;
	__u64 count;
};

/*
 * The load-scheduler gate of AverageLatencySchedulingPolicy (one bucket per
 * policy, held by the daemon's scheduler, user/loadsched.c).
 *
 * sl_pol_gate[policy] (BPF_F_MMAPABLE, so the daemon uses the same atomics
 * as BPF): in PASS mode (pass-through, bootstrapping, no decision yet) the
 * gate admits every SYN.  In THROTTLE mode it admits a SYN inline only when
 * nobody waits in the daemon's scheduler and credit_mtok holds more than
 * the SYN's tokens, which it takes atomically (add first, roll back on
 * overshoot, like seats); otherwise it drops the SYN with a DEFER event
 * (gate POLICY) and the daemon queues it by workload.  The credit is what
 * the daemon granted from its bucket for the next tick; the daemon takes
 * back what is left (an atomic exchange) before it grants again.  Tokens
 * the gate took go back to the credit when the priority level then refuses
 * the SYN.  A heartbeat older than dispatch_timeout_ns opens every policy
 * gate (fail-open: the daemon that would queue is gone).
 *
 * In LIMIT mode (sluice's own adaptive mode: a limit of connections in
 * flight, not a rate) slots_held counts the slots held, as seats_in_use
 * counts seats: a SYN takes one inline when nobody waits and fewer than
 * slot_limit are held, its connection holds it (SLUICE_CONNF_POLICY_SLOT)
 * and whoever deletes its sl_conns entry (or claims or sweeps its ticket
 * without a connection) gives it back.  The daemon writes slot_limit (a cut
 * below what is held admits nothing until enough connections close) and
 * takes slots itself for the connections it dispatches from its queue.
 * Nobody but a holder ever changes slots_held: a gate opened, re-limited
 * by a reload or adopted by the next daemon keeps the count of the
 * connections still holding slots of it (credit_mtok is THROTTLE's only).
 * Pass-through is a limit no load reaches, so the count stays exact.
 */
enum sluice_policy_mode {
	SLUICE_POLICY_PASS     = 0,
	SLUICE_POLICY_THROTTLE = 1,
	SLUICE_POLICY_LIMIT    = 2,
};

/* LIMIT's pass-through: a slot_limit no load reaches (the count stays exact). */
#define SLUICE_SLOT_LIMIT_PASS (1ll << 24)

struct sluice_policy_gate {
	__u32 mode;        /* enum sluice_policy_mode */
	__u32 waiting;     /* flows waiting in the daemon's scheduler */
	__s64 credit_mtok; /* THROTTLE: inline admissions left until the next grant */
	__u64 grants;      /* grants written (for the CLI) */
	__s64 slots_held;  /* LIMIT: slots held by connections and tickets */
	__s64 slot_limit;  /* LIMIT: at most this many held */
	char policy[SLUICE_LEVEL_NAME_LEN]; /* the policy the daemon last ran here: the
					     * next daemon keeps it at this index */
};

/* sl_wl_tokens[policy * SLUICE_WL_SLOTS + workload]: milli-tokens one
 * connection of the workload takes (workload tokens or its latency-based
 * estimate), written by the daemon; 0 = the connection takes none (Aperture workload-scheduler/scheduler.go
 * step 4).  An index never written reads 0. */

/* sl_wl_stats[policy * SLUICE_WL_SLOTS + workload]: per-CPU counters. */
struct sluice_wl_stats {
	__u64 syns;            /* SYNs of the workload that met its policy's gate */
	__u64 inline_admitted; /* admitted by the data path (both gates passed) */
	__u64 inline_mtok;     /* their tokens: the incoming rate in pass-through */
	__u64 deferred;        /* dropped by the policy gate (daemon queues them) */
};

/*
 * How a refusal leaves the host, and a held SYN comes back in, on any
 * interface (docs/ARCHITECTURE.md "Refusals and re-injection on any
 * interface").  Native XDP_TX is delivered only by some devices (a veth
 * only while its peer has NAPI: an XDP program or GRO), so a RST can
 * instead be *handed off*: the data path marks the frame and passes it, and
 * sluice_tc_in (tcx ingress) sends it out of the device; the daemon marks
 * a held SYN and sends it through a packet socket, and sluice_tc_out (tcx
 * egress) turns it around into the device's receive path.  A hand-off frame
 * carries SLUICE_ETH_P_HANDOFF in place of its outermost EtherType, and at
 * its end a trailer with the EtherType it had, the direction, and the
 * interface's cookie (random, the daemon's; never on the wire: the tc
 * program strips it before the frame leaves or re-enters).
 */
#define SLUICE_ETH_P_HANDOFF 0x88B5 /* IEEE 802 Local Experimental EtherType 1 */
#define SLUICE_HANDOFF_MAGIC 0x5a

enum sluice_handoff_dir {
	SLUICE_HANDOFF_OUT = 1, /* XDP's RST: out of the device (sluice_tc_in) */
	SLUICE_HANDOFF_IN  = 2, /* the daemon's held SYN: into the device (sluice_tc_out) */
};

struct sluice_handoff_trailer {
	__u32  cookie; /* sluice_iface.cookie of the device */
	__be16 proto;  /* the outermost EtherType the frame had */
	__u8   dir;    /* enum sluice_handoff_dir */
	__u8   magic;  /* SLUICE_HANDOFF_MAGIC */
};
#define SLUICE_HANDOFF_TRAILER 8

enum sluice_iface_flags {
	/* sluice_tc_in and sluice_tc_out are attached: a hand-off is delivered. */
	SLUICE_IF_HANDOFF_READY = 1u << 0,
	/* The daemon sends this device's RSTs by hand-off: XDP_TX is not proven
	 * to deliver here (native mode without NDO_XMIT, or drops seen). */
	SLUICE_IF_RST_HANDOFF   = 1u << 1,
	/* The tc programs are cls_bpf filters on clsact, not tcx links (a
	 * kernel before 6.6): the same hand-off, said in status. */
	SLUICE_IF_HANDOFF_CLSACT = 1u << 2,
};

/* Why a device's RSTs take the path they take (for status; the daemon's). */
enum sluice_iface_reason {
	SLUICE_IFR_UNKNOWN     = 0,
	SLUICE_IFR_GENERIC     = 1, /* generic XDP: XDP_TX is the stack's own transmit */
	SLUICE_IFR_NDO_XMIT    = 2, /* native, the device advertises NDO_XMIT (a veth: its peer has NAPI) */
	SLUICE_IFR_NO_NDO_XMIT = 3, /* native, it does not: XDP_TX would be dropped */
	SLUICE_IFR_DROPS       = 4, /* its driver dropped XDP_TX frames since the features last changed */
	SLUICE_IFR_NO_HANDOFF  = 5, /* the tc programs could not be attached: XDP_TX, proven or not */
	SLUICE_IFR_VETH_PEER   = 6, /* native on a veth: NDO_XMIT says its peer has NAPI, not that
				     * it polls XDP_TX frames (GRO alone does not: measured) */
};

/* sl_ifaces[ifindex]: written by the daemon only. */
struct sluice_iface {
	__u32 slot;     /* index into sl_if_stats, < SLUICE_MAX_IFACES */
	__u32 flags;    /* enum sluice_iface_flags */
	__u32 cookie;   /* hand-off frames of this device carry it */
	__u32 reason;   /* enum sluice_iface_reason */
	__u64 xdp_features; /* the device's netdev xdp-features when last read */
	/* XDP_TX frames that only the driver's own counters saw dropped
	 * (virtio_net on a full ring fires no tracepoint), counted by the
	 * daemon: lost refusals beside sluice_if_stats.tx_dropped. */
	__u64 tx_dropped_driver;
};

/* A drop this recent (on this CPU) sends the next RST by hand-off, before
 * the daemon has seen it: a driver drops an XDP_TX frame on the CPU that
 * sent it, at the end of the same poll. */
#define SLUICE_TX_DROP_HOLD_NS (10ULL * 1000000000ULL)

/* sl_if_stats[slot] (per-CPU). */
struct sluice_if_stats {
	__u64 rst_xdp_tx;   /* XDP: RSTs sent with XDP_TX */
	__u64 rst_handoff;  /* XDP: RSTs handed to sluice_tc_in */
	__u64 handoff_out;  /* sluice_tc_in: hand-off frames sent out of the device */
	__u64 handoff_in;   /* sluice_tc_out: held SYNs turned into the device's receive path */
	__u64 handoff_foreign; /* SLUICE_ETH_P_HANDOFF frames that were not ours: left alone */
	__u64 tx_dropped;   /* raw tracepoints: XDP_TX frames the driver dropped */
	__u64 tx_drop_ns;   /* when this CPU last saw one (bpf_ktime_get_ns) */
};

#endif /* SLUICE_ABI_H */
