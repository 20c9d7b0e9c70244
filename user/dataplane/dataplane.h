/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The data plane adapter: load (or adopt) the BPF object, pin, attach XDP
 * and sock_ops, and take it all down again.  It owns the skeleton; the
 * folder's rooms borrow it: tx_hooks.c attaches the hand-off and
 * drop-counting programs, chain.c sets the next program in sl_xdp_next,
 * prog_stats.c reads the programs' run-time statistics, inject.c runs
 * sluice_reset on held frames (docs/ARCHITECTURE.md "Refusals and
 * re-injection on any interface"); ifaces.c writes sl_ifaces by fd.
 * Nothing outside user/dataplane/ reaches the skeleton.
 */
#ifndef SLUICE_DATAPLANE_H
#define SLUICE_DATAPLANE_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dataplane/pinned_maps.h"
#include "dataplane/xdp_features.h"

struct sluice; /* the generated skeleton */
struct bpf_link;

/* The interfaces one daemon protects (Server spec.interfaces, --iface). */
#define SL_DP_MAX_IFACES 32

struct sl_dataplane_opts {
	const char *pin_dir;
	const char *const *ifnames; /* n_ifnames interfaces, each attached the same way */
	size_t n_ifnames;
	bool xdp_generic;          /* generic (skb) mode instead of native */
	bool veth_peer_xdp;        /* the operator vouches that every veth's peer runs an XDP
				    * program: native XDP_TX is delivered there (engine/tx_path.h) */
	const char *cgroup;        /* NULL: the cgroup v2 root from /proc/mounts */
	bool force;                /* replace an XDP program we did not attach */
	uint32_t conn_table_size;  /* 0: the object's default */
	uint32_t class_table_size; /* per generation; 0: the object's default */
	int read_gid;              /* Server spec.readGroup's gid, -1: none */
	const char *xdp_next;      /* Server spec.xdpChain.next: pinned XDP program, or NULL */
	const char *root_array;    /* ...rootArray: a root's pinned PROG_ARRAY to join, or NULL */
	uint32_t root_slot;        /* ...slot */
};

/* How an interface's hand-off programs are attached (tx_hooks.c): tcx
 * links (Linux 6.6), else cls_bpf filters on a clsact qdisc. */
enum sl_tc_via {
	SL_TC_NONE = 0,
	SL_TC_TCX,
	SL_TC_CLSACT,
};

struct sl_dp_iface {
	char name[IFNAMSIZ];
	int ifindex;
	bool attached;
	enum sl_tc_via tc_via;   /* both hand-off programs, attached this way */
	int tc_in_fd, tc_out_fd; /* tcx links of sluice_tc_in/out (tx_hooks.c), -1: none */
	uint32_t cookie;         /* its hand-off frames carry it (ifaces.c) */
	bool veth;               /* its driver is veth (ifaces.c) */
	uint64_t tx_dropped_driver; /* XDP_TX drops only its driver counted (ifaces.c) */
	bool said_send_failed;   /* a held frame's send failed, and was said (inject.c) */
};

struct sl_dataplane {
	struct sluice *skel;
	char pin_dir[256];
	struct sl_dp_iface ifaces[SL_DP_MAX_IFACES];
	size_t n_ifaces;
	char ifnames[SL_DP_MAX_IFACES * (IFNAMSIZ + 2)]; /* "eth0, eth1": for messages */
	char cgroup[256];
	uint32_t xdp_flags;
	bool veth_peer_xdp;         /* sl_dataplane_opts' */
	struct bpf_link *sockops_link;
	struct sl_maps maps;        /* borrowed from skel */
	struct sluice_seats *seats; /* sl_seats mmapped: SLUICE_MAX_LEVELS entries */
	size_t seats_len;
	struct sluice_policy_gate *gates; /* sl_pol_gate mmapped: SLUICE_MAX_POLICIES entries */
	size_t gates_len;
	int adopted_maps;           /* how many maps were reused from pins */
	uint32_t own_old_xdp;       /* id of the XDP program a previous sluiced left */
	int lock_fd;
	int root_array_fd;          /* xdpChain.rootArray joined (chain.c), -1: attached alone */
	uint32_t root_slot;
	struct bpf_link *tx_bulk_link, *tx_exc_link; /* tx_hooks.c */
	int pkt_fd;                 /* AF_PACKET socket for held frames (inject.c), -1: none */
	struct sl_genl_netdev genl; /* xdp-features (ifaces.c) */
};

/* Load the object, adopt or create and pin its maps, pin its programs:
 * everything but attaching, so the caller can write the configuration and
 * a fresh heartbeat before the new programs see a packet (an adopted
 * heartbeat is stale, and the failsafe would decide).  On failure
 * everything already done is undone; returns a negative errno after
 * logging one line that says what failed and why. */
int sl_dataplane_start(struct sl_dataplane *dp, const struct sl_dataplane_opts *o);
/* Attach XDP to every interface (replacing our previous program on each
 * atomically) and sock_ops; a previous sluiced's program left on an
 * interface no longer listed is detached.  Same error contract; on
 * failure the caller stops the data plane (which detaches what was
 * attached). */
int sl_dataplane_attach(struct sl_dataplane *dp, const struct sl_dataplane_opts *o);
/* How much of the data path a stop leaves behind. */
enum sl_stop_mode {
	SL_STOP_REMOVE = 0,    /* detach (only what is still ours), unpin everything */
	SL_STOP_KEEP_MAPS,     /* the same, but the maps stay pinned (seat counts survive) */
	SL_STOP_KEEP_ATTACHED, /* XDP and sock_ops stay attached, every pin stays: a planned
				* restart never leaves the host unprotected, and closes are
				* still seen while no daemon runs */
};
void sl_dataplane_stop(struct sl_dataplane *dp, enum sl_stop_mode mode);
/* XDP runs in generic (skb) mode: it sees the frames the daemon sends
 * back into a device's receive path once more. */
bool sl_dataplane_generic(const struct sl_dataplane *dp);


/* The map fds of a loaded skeleton (borrowed: not closed by sl_maps_close). */
void sl_maps_from_skel(struct sluice *skel, struct sl_maps *m);

/* Mount bpffs on the parent of pin_dir unless it already is bpffs. */
int sl_ensure_bpffs(const char *pin_dir);

/* Route libbpf's own messages through sl_log: DEBUG, and only when
 * verbose (libbpf is chatty and its warnings lack our context: the caller
 * prints one clear line). */
void sl_libbpf_log(bool verbose);

#endif
