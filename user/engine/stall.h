/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Is a priority level stalled rather than busy (pure)?
 *
 * A level is full and connections wait for it.  Normally its connections
 * close one after another and each close lets the next one in.  But a
 * client that holds connections while it opens another (a connection pool;
 * pgbench, whose thread blocks in connect() with the other clients of the
 * thread, and their open connections, waiting on it) can hold every seat
 * while it waits: nothing closes until its connect fails.  APF knows no
 * such case (an HTTP request does not block its caller's other requests);
 * at the connection level it is a deadlock until the client's connect
 * timeout, and a queue that waits longer than the client only makes it
 * worse (issue 23: 35 pgbench transactions instead of 7,400).
 *
 * The rule: while the level is full and has waiters, if nothing has
 * closed for SL_STALL_LIFETIMES typical connection lifetimes (at least
 * SL_STALL_MIN_NS), it is stalled, and its waiters are refused at once (a
 * RST from each held SYN), so that each blocked client gets its error,
 * goes on and releases what it holds.  The typical lifetime is the
 * geometric mean of the served connections' durations (a moving average of
 * their logarithms: one long-lived connection among many short ones barely
 * moves it).  Without a sample of a lifetime there is no verdict: the
 * level's controlled delay and wait limit still bound every wait.
 *
 * After a verdict, while the level stays full and nothing closes, it is
 * still stalled: whoever holds the seats is what was blocked.  A client
 * released by its refusal opens its next connection at once (pgbench
 * connects its clients one after another), and that one would block it
 * again: while stalled, a new waiter is judged after SL_STALL_MIN_NS, not
 * several lifetimes.  Not at once: a client that closes and reconnects at
 * once (pgbench -C) sends its SYN before its server's socket has closed,
 * and the close that follows lets it in.
 *
 * A level that seats at the final ACK waits on its clients' retransmits:
 * the request that follows a held ACK is dropped until the ACK's turn and
 * comes again after TCP's retransmission time-out (200 ms, then 400 ms
 * more), so its connections close nothing for that long while nobody is
 * deadlocked (a level of 100 ms connections went 528 ms without a close;
 * four lifetimes, 400 ms, refused 4 to 32 of test_seat_at_ack's 240
 * clients about once in eight runs).  Such a level's first verdict of an
 * episode waits at least SL_STALL_RETRANSMIT_NS.  Only such a level: the
 * floor for all would cost pgbench's storms a second per episode (0.83 of
 * nothing's transactions instead of 0.9 and more).
 */
#ifndef SLUICE_STALL_H
#define SLUICE_STALL_H

#include <stdbool.h>
#include <stdint.h>

#define SL_STALL_LIFETIMES 4
#define SL_STALL_MIN_NS    (20ULL * 1000000ULL) /* below it, a gap between closes is noise */
#define SL_STALL_RETRANSMIT_NS (1000ULL * 1000000ULL) /* past two retransmits: 200 + 400 ms */

struct sl_stall {
	double log_lifetime;   /* moving average of ln(duration in ns) */
	bool have_lifetime;
	bool blocked;          /* full with waiters at the last look */
	bool stalled;          /* judged stalled, and since then no close and never not full */
	uint64_t progress_ns;  /* the last close, or when the level became full with waiters */
	uint64_t first_floor_ns; /* an episode's first verdict waits at least this */
};

void sl_stall_init(struct sl_stall *s, uint64_t now);
/* Whether the level's connections wait on their clients' retransmits (it
 * seats at the final ACK): an episode's first verdict then waits at least
 * SL_STALL_RETRANSMIT_NS, else SL_STALL_MIN_NS.  Kept by sl_stall_init's
 * callers: init clears it. */
void sl_stall_set_retransmit_waits(struct sl_stall *s, bool waits);
/* A connection of the level closed (seats came back): progress. */
void sl_stall_closed(struct sl_stall *s, uint64_t now);
/* n served connections closed, the mean of ln(their lifetime in ns) being
 * mean_log: lifetime samples (the data path counts them, per level, for
 * every close; the daemon takes them in batches). */
void sl_stall_lifetimes(struct sl_stall *s, uint64_t n, double mean_log);
/* The level now: full (every seat in use) or not, and whether connections
 * wait.  Blocked is both; the clock runs from the later of the last close
 * and the moment it became blocked, so call it whenever that may change
 * (arrivals, closes, ticks).  A stalled level whose waiters were refused
 * is no longer blocked but still stalled while it stays full and nothing
 * closes: the seats are still held by whoever was blocked. */
void sl_stall_observe(struct sl_stall *s, uint64_t now, bool full, bool waiting);
/* How long without a close makes a blocked level stalled (SL_STALL_MIN_NS
 * while it still is, else four lifetimes and at least the first verdict's
 * floor); 0 without a lifetime yet (no verdict). */
uint64_t sl_stall_after_ns(const struct sl_stall *s);
/* When it will be stalled if nothing closes meanwhile; UINT64_MAX when
 * not blocked or without a lifetime. */
uint64_t sl_stall_due_ns(const struct sl_stall *s);
/* Stalled now: blocked, and no close for sl_stall_after_ns().  The caller
 * refuses the waiters; the clock starts again. */
bool sl_stall_due(struct sl_stall *s, uint64_t now);
/* Judged stalled, and since then nothing has closed and it has not stopped
 * being full (its refused waiters do not count): a connection that arrives
 * now would join the same deadlock. */
bool sl_stall_stalled(const struct sl_stall *s);

#endif
