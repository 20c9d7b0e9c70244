/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Which way an interface's refusals leave (pure; issue 38,
 * docs/ARCHITECTURE.md "Refusals and re-injection on any interface").
 *
 * XDP_TX is the cheapest way out, but only some devices deliver it: a veth
 * drops it silently unless its peer has NAPI (an XDP program, or GRO), and
 * a driver's transmit may fail; a veth's NDO_XMIT does not tell a peer
 * with a program (delivers) from one with only GRO (does not).  The hand-off through tcx
 * (bpf/handoff.h) reaches the client on any device.  So XDP_TX is used
 * only where it is proven: in generic mode (the stack's own transmit), or
 * natively where the device advertises NDO_XMIT and is no veth (unless
 * the operator vouches for its peer's program); and nowhere its driver
 * was seen dropping an XDP_TX frame since its xdp-features last changed (a
 * peer that loads or unloads a program changes them).  Without the
 * hand-off there is no choice: XDP_TX, proven or not, and said.
 *
 * sl_tx_watch follows one interface from reading to reading: the choice,
 * the drops to count as failed refusals, and what to say, each once.
 */
#ifndef SLUICE_ENGINE_TX_PATH_H
#define SLUICE_ENGINE_TX_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sluice_abi.h"

#define SL_XDP_FEATURE_NDO_XMIT (1ull << 2) /* NETDEV_XDP_ACT_NDO_XMIT */

struct sl_tx_reading {
	bool handoff_ready;   /* sluice_tc_in and sluice_tc_out are attached */
	bool generic;         /* XDP attached in generic (skb) mode */
	bool features_known;  /* the kernel said the device's xdp-features */
	/* A veth that the operator did not vouch for (--veth-peer-xdp): its
	 * NDO_XMIT appears while its peer has NAPI, an XDP program or only GRO,
	 * and with GRO alone the frames wait in the peer's ring unpolled
	 * (measured: 0 of 50 RSTs delivered, none counted lost until the ring
	 * filled).  The feature proves nothing there. */
	bool xmit_unproven;
	uint64_t xdp_features;
	uint64_t tx_dropped;  /* cumulative XDP_TX drops the tracepoints counted */
	/* The driver's own count (its ethtool statistics), where it keeps one:
	 * virtio_net drops XDP_TX frames on a full ring and fires no
	 * tracepoint; veth counts what the tracepoints also see. */
	bool driver_known;
	uint64_t driver_dropped;
};

struct sl_tx_choice {
	bool rst_handoff;     /* RSTs by hand-off (SLUICE_IF_RST_HANDOFF) */
	enum sluice_iface_reason reason;
};

/* The choice for one reading; drops: XDP_TX frames dropped since the
 * features last changed. */
struct sl_tx_choice sl_tx_choose(const struct sl_tx_reading *r, bool drops);

enum sl_tx_say {
	SL_TX_SAY_NONE = 0,
	SL_TX_SAY_DROPS,       /* its driver dropped XDP_TX refusals (first time) */
	SL_TX_SAY_UNPROVEN,    /* no hand-off, and XDP_TX is not proven here (first time) */
};

struct sl_tx_watch {
	bool started;
	uint64_t features;     /* as last read */
	bool features_known;
	uint64_t tp_last;      /* tx_dropped at the last reading */
	uint64_t driver_last;  /* driver_dropped at the last reading, if driver_known */
	bool driver_known;
	uint64_t lost;         /* XDP_TX frames lost since the watch started */
	uint64_t lost_base;    /* lost when the features last changed */
	bool said_drops, said_unproven;
	struct sl_tx_choice choice;
};

/* What one reading found. */
struct sl_tx_step {
	bool changed;          /* the choice differs from the last one */
	/* XDP_TX frames lost since the last reading: the larger of what the
	 * tracepoints and the driver counted (both see a veth's drops)... */
	uint64_t lost;
	uint64_t lost_driver_only; /* ...and of those, what only the driver saw */
	enum sl_tx_say say;    /* what to say now (each kind once per interface) */
};

/* One reading: the choice, and what changed since the last reading.  A
 * counter that went back (a new map, a driver that reset its statistics)
 * starts again from there: nothing lost is known of the gap. */
struct sl_tx_choice sl_tx_watch_step(struct sl_tx_watch *w, const struct sl_tx_reading *r,
				     struct sl_tx_step *step);

/* The driver's count of XDP_TX frames it dropped, from its ethtool
 * statistics: n names of ETH_GSTRING_LEN (32) bytes each, and their
 * values.  The totals where the driver keeps them (virtio_net from 6.10:
 * tx_xdp_tx_drops beside tx0_xdp_tx_drops), else the sum over its queues
 * (virtio_net before: tx_queue_0_xdp_tx_drops; veth:
 * rx_queue_0_xdp_tx_errors).  false: the driver keeps no such counter. */
#define SL_TX_STAT_NAME_LEN 32 /* ETH_GSTRING_LEN */
bool sl_tx_driver_drops(const char *names, const uint64_t *values, size_t n, uint64_t *drops);

/* "generic", "ndo_xmit", ...: the reason's name for logs, status and JSON. */
const char *sl_tx_reason_name(uint32_t reason);

#endif
