/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * How each interface's refusals leave, at run time (daemon): once a
 * second, what the kernel says of the device (xdp-features) and what the
 * drop tracepoints counted, judged by engine/tx_path.h and written to
 * sl_ifaces when the choice changes; dropped refusals are counted and said
 * once per interface, with the fix.
 */
#ifndef SLUICE_DAEMON_TX_PATH_RT_H
#define SLUICE_DAEMON_TX_PATH_RT_H

#include <stdint.h>
#include <stdio.h>

#include "dataplane/dataplane.h"
#include "engine/tx_path.h"

#define SL_TX_PATH_INTERVAL_NS 1000000000ULL

struct sl_tx_path_rt {
	struct sl_tx_watch watch[SL_DP_MAX_IFACES];
	uint64_t last_ns;
};

void sl_tx_path_rt_init(struct sl_tx_path_rt *rt);
/* Every SL_TX_PATH_INTERVAL_NS (at once the first time). */
void sl_tx_path_rt_step(struct sl_tx_path_rt *rt, struct sl_dataplane *dp, uint64_t now_ns);
void sl_tx_path_rt_metrics(const struct sl_tx_path_rt *rt, const struct sl_dataplane *dp, FILE *f);

#endif
