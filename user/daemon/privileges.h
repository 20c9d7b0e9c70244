/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Dropping what the daemon no longer needs once the data path is loaded,
 * attached and its sockets are open.  Kept: CAP_BPF (the kernel's checks on
 * map and program operations through fds it already holds) and
 * CAP_NET_ADMIN (detaching XDP and the tc hand-off at stop).  The packet
 * socket held SYNs go through is opened before (CAP_NET_RAW), and sending
 * on it needs nothing.  Everything else goes from the effective,
 * permitted, inheritable, ambient and bounding sets, and NoNewPrivs is set,
 * so nothing the daemon could be tricked into executing regains them.
 */
#ifndef SLUICE_PRIVILEGES_H
#define SLUICE_PRIVILEGES_H

#include <stddef.h>
#include <stdint.h>

/* The capabilities kept, as a mask of bits (1 << CAP_x). */
uint64_t sl_privileges_kept(void);

/* 0, or a negative errno with what failed in why. */
int sl_privileges_drop(char *why, size_t why_len);

#endif
