// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "daemon/service_manager.h"

#include <stdio.h>
#include <systemd/sd-daemon.h>
#include <time.h>

#include "lib/clock.h"
#include "lib/log.h"

void sl_svcmgr_init(struct sl_svcmgr *sm)
{
	uint64_t usec = 0;

	sm->watchdog_ns = 0;
	sm->last_feed_ns = 0;
	/* > 0: enabled for this process (WATCHDOG_PID, if set, is ours). */
	if (sd_watchdog_enabled(0, &usec) > 0 && usec) {
		sm->watchdog_ns = usec * 1000ULL;
		pr_info("systemd watchdog: fed every %.1f s (WatchdogSec %.1f s)",
			(double)sm->watchdog_ns / 4e9, (double)sm->watchdog_ns / 1e9);
	}
}

/* A failure to notify changes nothing for sluice: it is said at debug. */
static void notify(const char *what)
{
	int err = sd_notify(0, what);

	if (err < 0)
		pr_debug("sd_notify %s: %d", what, err);
}

static void notify_with_status(const char *what, const char *status)
{
	char msg[1024];

	snprintf(msg, sizeof(msg), "%s%sSTATUS=%s", what, *what ? "\n" : "", status ? status : "");
	notify(msg);
}

void sl_svcmgr_ready(struct sl_svcmgr *sm, const char *status)
{
	(void)sm;
	notify_with_status("READY=1", status);
}

void sl_svcmgr_reloading(struct sl_svcmgr *sm)
{
	struct timespec ts;
	char msg[96];

	(void)sm;
	/* systemd 253 wants the monotonic time with RELOADING=1
	 * (Type=notify-reload); older ones ignore it. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(msg, sizeof(msg), "RELOADING=1\nMONOTONIC_USEC=%llu\nSTATUS=reloading",
		 (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000);
	notify(msg);
}

void sl_svcmgr_stopping(struct sl_svcmgr *sm)
{
	(void)sm;
	notify("STOPPING=1\nSTATUS=stopping");
}

void sl_svcmgr_status(struct sl_svcmgr *sm, const char *status)
{
	(void)sm;
	notify_with_status("", status);
}

void sl_svcmgr_tick(struct sl_svcmgr *sm, uint64_t now_ns)
{
	if (!sm->watchdog_ns || now_ns - sm->last_feed_ns < sm->watchdog_ns / 4)
		return;
	sm->last_feed_ns = now_ns;
	notify("WATCHDOG=1");
}
