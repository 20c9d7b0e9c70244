/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* sluicectl replay in mode sluice: the gradient on a limit in flight run
 * offline over a trace of connections (see replay_limit.c). */
#ifndef SLUICE_CTL_REPLAY_LIMIT_H
#define SLUICE_CTL_REPLAY_LIMIT_H

#include <stdbool.h>

#include "config/config.h"

/* 0 ok, CTL_FAIL on a bad trace (path:line:column said). */
int ctl_replay_limit(const struct sl_policy_cfg *pol, const char *path, bool json, bool verbose);

#endif
