/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A processor-sharing service, simulated millisecond by millisecond, in
 * front of sluice's adaptive limit in flight (engine/seat_gradient.c) or of
 * nothing.  CPU-bound services share their cores among the requests they
 * run: n requests on c cores each progress at min(1, c / n) of a core, so
 * beyond its capacity a service serves everyone later, and a pile-up makes
 * every request slow (the lab's tests/lab/lab_ps.c is the same service,
 * for real).  Connections arrive as a Poisson process, wait for the limit
 * (at most `patience_ns`, then they give up: refused) and are admitted the
 * moment a slot frees.  The closed loop the unit tests bound and
 * `sluicectl simulate` draws.  Pure: no I/O.
 */
#ifndef SLUICE_ENGINE_PS_MODEL_H
#define SLUICE_ENGINE_PS_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "engine/seat_gradient.h"

#define SL_PSM_STEP_NS 1000000ULL /* the simulation's step: 1 ms */

struct sl_psm_params {
	double work_ms;        /* of one core, a connection's request */
	uint64_t patience_ns;  /* a waiting connection gives up after this */
	uint64_t seed;         /* the arrivals' (a run is reproducible) */
	uint64_t decide_ns;    /* the controller steps this often (the daemon: its tick) */
};

/* A completion: when it was admitted and how long it was in service. */
typedef void (*sl_psm_done_fn)(void *ctx, uint64_t admitted_ns, uint64_t duration_ns);

struct sl_psm;

/* sg: the controller (its limit bounds what is admitted; the model feeds
 * it completions and steps it), or NULL: no limit.  0 or -ENOMEM. */
int sl_psm_create(struct sl_psm **out, const struct sl_psm_params *p, struct sl_sg *sg);
void sl_psm_free(struct sl_psm *m);
/* One step ending at now (a multiple of SL_PSM_STEP_NS): arrivals at
 * `rate` per second, give-ups, admissions within the limit, `cores` of
 * service shared among those in it, completions (done, if given). */
int sl_psm_step(struct sl_psm *m, uint64_t now, double rate, double cores, sl_psm_done_fn done,
		void *ctx);

size_t sl_psm_in_flight(const struct sl_psm *m);
size_t sl_psm_waiting(const struct sl_psm *m);
uint64_t sl_psm_arrived(const struct sl_psm *m);
uint64_t sl_psm_refused(const struct sl_psm *m);  /* gave up waiting */
uint64_t sl_psm_completed(const struct sl_psm *m);

#endif
