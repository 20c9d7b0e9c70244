/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Concurrency limits of priority levels from shares (Kubernetes apf_controller.go digestConfigObjects).
 * Pure arithmetic, no I/O.  Borrowing (Kubernetes apf_controller.go updateBorrowing, conc_alloc.go computeConcurrencyAllocation) builds on these numbers.
 */
#ifndef SLUICE_CONCURRENCY_H
#define SLUICE_CONCURRENCY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sl_limit_input {
	bool exempt;
	uint32_t shares;                 /* nominalConcurrencyShares */
	uint32_t lendable_percent;       /* 0..100 */
	int32_t borrowing_limit_percent; /* < 0: unset (unlimited) */
};

struct sl_level_limits {
	uint32_t nominal;   /* ceil(ServerCL * shares / sum shares) */
	uint32_t lendable;  /* round(nominal * lendablePercent / 100) */
	uint32_t borrowing; /* round(nominal * borrowingLimitPercent / 100) or ServerCL */
	uint32_t min;       /* nominal - lendable */
	uint32_t max;       /* nominal + borrowing */
	uint32_t initial;   /* provisional current limit: nominal - lendable / 2, rounded */
};

/* Returns 0, or -EINVAL when server_cl is 0 or n is 0.  A zero sum of
 * shares gives every level a nominal limit of 0. */
int sl_limits_compute(uint32_t server_cl, const struct sl_limit_input *in, size_t n,
		      struct sl_level_limits *out);

#endif
