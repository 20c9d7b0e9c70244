/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Kubernetes' default priority levels (Kubernetes bootstrap/default.go): shares and
 * lendable percent, as the reference vectors for ServerCL 600 assume. */
#ifndef SLUICE_TEST_APF_DEFAULTS_H
#define SLUICE_TEST_APF_DEFAULTS_H

#include <stdbool.h>
#include <stdint.h>

static const struct {
	const char *name;
	bool exempt;
	uint32_t shares, lendable;
} default_levels[] = {
	{"exempt", true, 0, 0},
	{"catch-all", false, 5, 0},
	{"leader-election", false, 10, 0},
	{"node-high", false, 40, 25},
	{"system", false, 30, 33},
	{"workload-high", false, 40, 50},
	{"workload-low", false, 100, 90},
	{"global-default", false, 20, 50},
};
#define N_DEFAULT (sizeof(default_levels) / sizeof(default_levels[0]))

#endif
