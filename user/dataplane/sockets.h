/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The kernel's own view of TCP connections (adapter, sock_diag): which
 * 4-tuples have a live socket, keyed as the data path keys sl_conns.  It
 * lets the daemon return the seats of tracked connections that closed
 * while no sock_ops program watched them (a restart with --keep-maps, a
 * crash), which nothing else would.
 */
#ifndef SLUICE_SOCKETS_H
#define SLUICE_SOCKETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sluice_abi.h"

struct sl_live_sockets {
	struct sluice_conn_key *keys; /* sorted */
	size_t n;
};

/* Every TCP socket of this network namespace that holds a connection
 * (SYN_RECV through LAST_ACK and CLOSING; not LISTEN, TIME_WAIT or CLOSE),
 * IPv4 and IPv6, a v4-mapped peer of a dual-stack socket keyed as IPv4.
 * 0 or a negative errno (nothing allocated).  Waits for the whole dump. */
int sl_live_sockets_read(struct sl_live_sockets *out);

/*
 * The same dump read a little at a time, so that a loop with a heartbeat
 * to write never waits for the kernel to list a namespace of very many
 * sockets: the socket is non-blocking, and each call reads what the kernel
 * has ready for at most its time budget (the kernel fills the next part of
 * a netlink dump as the last one is read).
 */
struct sl_sock_dump {
	int fd;                    /* -1: not running */
	uint8_t family;            /* the family being listed: AF_INET, then AF_INET6 */
	size_t cap;
	struct sl_live_sockets s;  /* complete once continue returns 1 */
	uint64_t begun_ns;         /* CLOCK_MONOTONIC when it was asked */
};

#define SL_SOCK_DUMP_INIT {.fd = -1}
#define SL_SOCK_DUMP_WAIT UINT64_MAX /* a budget that waits for the end */

int sl_sock_dump_begin(struct sl_sock_dump *d);
/* 1: complete (d->s sorted, the caller's to free with
 * sl_live_sockets_free), 0: not yet, or a negative errno (abandoned,
 * nothing left to free). */
int sl_sock_dump_continue(struct sl_sock_dump *d, uint64_t budget_ns);
bool sl_sock_dump_running(const struct sl_sock_dump *d);
void sl_sock_dump_abort(struct sl_sock_dump *d);
bool sl_live_sockets_has(const struct sl_live_sockets *s, const struct sluice_conn_key *k);
void sl_live_sockets_free(struct sl_live_sockets *s);

/* Order of keys in the snapshot (for tests and merging). */
int sl_conn_key_cmp(const void *a, const void *b);

#endif
