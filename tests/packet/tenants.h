/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A configuration with one FlowSchema per tenant, as an operator with
 * many tenants writes it: the classification benchmark (bench_classify)
 * and the differential test at scale (test_classify) use the same one.
 */
#ifndef SLUICE_TEST_TENANTS_H
#define SLUICE_TEST_TENANTS_H

#include <stdbool.h>
#include <stddef.h>

/* YAML text (malloc'd, *len bytes) of n tenants; NULL without memory.
 * Tenant i: 10.(i/256).(i%256).0/24 to local port 10000 + i (its last
 * SYN source is 10.x.y.7). */
char *tenants_yaml(unsigned n, bool mixed, size_t *len);

#endif
