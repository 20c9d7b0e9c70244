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

#include "sluice_abi.h"

struct sl_live_sockets {
	struct sluice_conn_key *keys; /* sorted */
	size_t n;
};

/* Every TCP socket of this network namespace that holds a connection
 * (SYN_RECV through LAST_ACK and CLOSING; not LISTEN, TIME_WAIT or CLOSE),
 * IPv4 and IPv6, a v4-mapped peer of a dual-stack socket keyed as IPv4.
 * 0 or a negative errno (nothing allocated). */
int sl_live_sockets_read(struct sl_live_sockets *out);
bool sl_live_sockets_has(const struct sl_live_sockets *s, const struct sluice_conn_key *k);
void sl_live_sockets_free(struct sl_live_sockets *s);

/* Order of keys in the snapshot (for tests and merging). */
int sl_conn_key_cmp(const void *a, const void *b);

#endif
