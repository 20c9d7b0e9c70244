/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The one router of the data path's events (daemon): every ring buffer
 * record goes to whoever needs it, and only here is that decided.
 *   DEFER  -> admission (both gates)
 *   REJECT -> nobody (counted in the maps already)
 *   CLOSE  -> admission (seats, QueueSet service time), then the policy
 *             runtime (latency signal, token estimate)
 */
#ifndef SLUICE_EVENTS_H
#define SLUICE_EVENTS_H

#include <stddef.h>
#include <stdint.h>

struct sl_admission;
struct sl_policies;

void sl_events_route(struct sl_admission *adm, struct sl_policies *ps, const void *data,
		     size_t size, uint64_t now);

#endif
