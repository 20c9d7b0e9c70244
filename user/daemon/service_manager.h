/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The service manager's notifications (adapter over libsystemd's
 * sd_notify): READY=1 once sluiced protects, RELOADING=1 and READY=1
 * around a reload, STOPPING=1 at the stop, STATUS= lines a person reads in
 * `systemctl status`, and WATCHDOG=1 from the main loop, so that a loop
 * that stalls is killed and restarted by systemd (the data path then sees
 * a stale heartbeat and its failsafe decides until the new daemon adopts
 * it).  Without $NOTIFY_SOCKET every call does nothing.  sd_notify sends one
 * datagram to the service manager's socket (PID 1 drains it, with a queue of
 * megabytes); it is not a client's socket, and nothing a client does can
 * fill it.
 */
#ifndef SLUICE_SERVICE_MANAGER_H
#define SLUICE_SERVICE_MANAGER_H

#include <stdbool.h>
#include <stdint.h>

struct sl_svcmgr {
	uint64_t watchdog_ns;  /* WatchdogSec, 0 = none */
	uint64_t last_feed_ns; /* of the last WATCHDOG=1 */
};

/* Read WATCHDOG_USEC (for this pid). */
void sl_svcmgr_init(struct sl_svcmgr *sm);
void sl_svcmgr_ready(struct sl_svcmgr *sm, const char *status);
/* A reload starts (RELOADING=1 with MONOTONIC_USEC) or ends (READY=1). */
void sl_svcmgr_reloading(struct sl_svcmgr *sm);
void sl_svcmgr_stopping(struct sl_svcmgr *sm);
/* STATUS= alone. */
void sl_svcmgr_status(struct sl_svcmgr *sm, const char *status);
/* Every tick: WATCHDOG=1 when a quarter of the interval has passed. */
void sl_svcmgr_tick(struct sl_svcmgr *sm, uint64_t now_ns);

#endif
