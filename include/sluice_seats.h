/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The seat rule, written once for the data path and the daemon (both
 * change the same counters in shared maps: sl_seats is mmapped, and so is
 * sl_pol_gate).
 *
 * Take first, give back on overshoot: one atomic add reserves, a second
 * undoes it when the result is past the bound.  Two CPUs (or a CPU and the
 * daemon) can never both get the last seat; under contention one may be
 * refused spuriously, which errs on the safe side.  The __sync builtins are
 * full barriers in userspace and atomic instructions in BPF (-mcpu=v3).
 */
#ifndef SLUICE_SEATS_H
#define SLUICE_SEATS_H

#include <linux/types.h>
#ifndef __BPF__
#include <stdbool.h>
#endif

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* Add amount to *counter; keep it if the total stays within limit, or if
 * amount alone is more than limit and nothing else is held (Kubernetes
 * queueset.go: a request wider than the limit runs when nothing else
 * executes, so a limit of 0 still admits one at a time). */
static __always_inline bool sluice_reserve(__u64 *counter, __u64 amount, __u64 limit)
{
	__u64 before = __sync_fetch_and_add(counter, amount);

	if (before + amount <= limit || (before == 0 && amount > limit))
		return true;
	__sync_fetch_and_sub(counter, amount);
	return false;
}

/* Take amount out of *credit; keep it only if strictly more than amount
 * was there (Aperture's token bucket admits when available > tokens). */
static __always_inline bool sluice_take(__s64 *credit, __s64 amount)
{
	__s64 before = __sync_fetch_and_add(credit, -amount);

	if (before > amount)
		return true;
	__sync_fetch_and_add(credit, amount);
	return false;
}

/* Hold one slot of an in-flight limit: keep it when fewer than limit
 * were held.  Signed: a count driven below zero by a bug admits (fails
 * open) rather than wrapping to "full" for ever. */
static __always_inline bool sluice_hold_slot(__s64 *held, __s64 limit)
{
	__s64 before = __sync_fetch_and_add(held, 1);

	if (before < limit)
		return true;
	__sync_fetch_and_add(held, -1);
	return false;
}

/* Give back what sluice_reserve kept (a connection's seats when it ends,
 * or a reservation its caller could not use). */
static __always_inline void sluice_release(__u64 *counter, __u64 amount)
{
	__sync_fetch_and_sub(counter, amount);
}

#endif
