/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Half-open connections (engine, pure): how long a seat may wait for its
 * handshake, measured from what handshakes take, and where each level's
 * connections take their seats, at the SYN or at the final ACK, from how
 * many of its handshakes never finish; and whether sock_ops sees the
 * connections admitted at all.  No I/O: the daemon feeds it the
 * data path's cumulative counters once a second (daemon/halfopen_rt.c).
 */
#ifndef SLUICE_ENGINE_HALFOPEN_H
#define SLUICE_ENGINE_HALFOPEN_H

#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"
#include "sluice_abi.h"

/* ---- the half-open time-out, from measured handshakes ---------------------- */

#define SL_HS_WINDOW      60 /* steps (seconds) of handshakes the time-out looks at */
#define SL_HS_MIN_SAMPLES 20 /* fewer in the window: the configured handshakeTimeout */
#define SL_HS_FACTOR      4  /* the time-out is this many times the p99 handshake */

struct sl_hs_meter {
	/* Cumulative bucket counts (sl_hs_hist, summed over CPUs), one
	 * snapshot per step; the window is newest minus oldest. */
	uint64_t snap[SL_HS_WINDOW + 1][SLUICE_HS_BUCKETS];
	unsigned head, n;
};

void sl_hs_meter_push(struct sl_hs_meter *m, const uint64_t cumulative[SLUICE_HS_BUCKETS]);
/* The window's 99th percentile handshake as its bucket's upper bound, in
 * ns; 0 with fewer than SL_HS_MIN_SAMPLES (*samples: how many there are). */
uint64_t sl_hs_meter_p99_ns(const struct sl_hs_meter *m, uint64_t *samples);
/* SL_HS_FACTOR x p99, within [floor, ceiling]; the ceiling without a p99. */
uint64_t sl_halfopen_timeout_ns(uint64_t p99_ns, uint64_t floor_ns, uint64_t ceiling_ns);

/* ---- where a level seats ---------------------------------------------------- */

#define SL_PRESSURE_WINDOW 10 /* steps the unfinished handshakes are summed over */
/* ACKs stay watched this long after a level goes back to seating at the
 * SYN: a handshake begun unseated still ends seated (a SYN-ACK's last
 * retransmit, with Linux's default tcp_synack_retries 5, is 31 s out). */
#define SL_WATCH_GRACE_NS (35ull * 1000000000ULL)

struct sl_seat_policy {
	enum sl_seat_at seat_at;
	uint32_t engage_after; /* auto: unfinished handshakes in the window that move seats to the ACK */
	uint64_t hold_ns;      /* auto: back to the SYN after this long without them */
};

/* The data path's cumulative per-level counters the decision reads. */
struct sl_seat_counters {
	uint64_t expired;  /* sluice_seats.expired: half-open seats that timed out */
	uint64_t unseated; /* sluice_level_stats.unseated: SYNs passed without a seat */
	uint64_t proved;   /* sluice_level_stats.acks_proved */
	uint64_t lingering;/* gauge: half-open seats older than minTimeout, not expired yet */
};

struct sl_seat_mode {
	struct sl_seat_counters last;
	bool primed;                 /* last holds a reading */
	uint64_t unfinished[SL_PRESSURE_WINDOW];
	unsigned head;
	bool at_ack;
	uint64_t hold_until_ns;      /* auto: at the ACK at least until then */
	uint64_t watch_until_ns;     /* ACKs watched until then after going back */
	uint64_t engaged;            /* times the level moved to the ACK (cumulative) */
	uint64_t unfinished_total;   /* unfinished handshakes seen (cumulative) */
};

/* One step (a second) of a level's decision: returns the level's flags
 * (enum sluice_level_flags) for the data path. */
uint32_t sl_seat_mode_step(struct sl_seat_mode *s, const struct sl_seat_policy *p, uint64_t now_ns,
			   const struct sl_seat_counters *c);
/* The unfinished handshakes in the current window, with those lingering now. */
uint64_t sl_seat_mode_pressure(const struct sl_seat_mode *s);

/* ---- whether sock_ops sees the connections admitted ------------------------ */

/*
 * sock_ops learns of a connection from its socket, and a socket belongs to
 * the cgroup of the task that created it (an accepted one, to its
 * listener's).  Attached to a cgroup that does not hold the service's
 * listener (a service started elsewhere and moved into it, a
 * socket-activated one whose listener is systemd's), it sees none of the
 * connections XDP admits: none is established, none ever closes, and
 * each seat waits for the half-open time-out.  The sign: handshakes that
 * expired, or whose final ACK XDP proved, while not one connection was
 * seen established, over a window.  (A SYN flood whose sources complete no
 * handshake expires seats too, but XDP proves no ACK of it.)
 */
#define SL_SIGHT_WINDOW     10 /* steps (seconds) */
#define SL_SIGHT_MIN_UNSEEN 20 /* expired or proved handshakes in the window, none established */

/* Cumulative, summed over the levels. */
struct sl_sight_counters {
	uint64_t established; /* sluice_stats.established: seen by sock_ops */
	uint64_t expired;     /* sluice_seats.expired: half-open seats that timed out */
	uint64_t proved;      /* sluice_level_stats.acks_proved: final ACKs XDP saw */
};

struct sl_sight {
	struct sl_sight_counters snap[SL_SIGHT_WINDOW + 1];
	unsigned head, n;
	bool blind;
	struct sl_sight_counters window; /* the last step's window (deltas) */
};

enum sl_sight_change {
	SL_SIGHT_SAME,
	SL_SIGHT_LOST,     /* blind from this step on: the window shows it */
	SL_SIGHT_REGAINED, /* a connection was seen established again */
};

/* One step (a second): what changed.  s->window holds the window's deltas. */
enum sl_sight_change sl_sight_step(struct sl_sight *s, const struct sl_sight_counters *c);

#endif
