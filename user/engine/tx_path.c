// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Which way an interface's refusals leave.  See tx_path.h. */
#include "engine/tx_path.h"

#include <string.h>

struct sl_tx_choice sl_tx_choose(const struct sl_tx_reading *r, bool drops)
{
	struct sl_tx_choice c = {.rst_handoff = true};

	if (!r->handoff_ready)
		c = (struct sl_tx_choice){.rst_handoff = false, .reason = SLUICE_IFR_NO_HANDOFF};
	else if (drops)
		c.reason = SLUICE_IFR_DROPS;
	else if (r->generic)
		c = (struct sl_tx_choice){.rst_handoff = false, .reason = SLUICE_IFR_GENERIC};
	else if (!r->features_known)
		c.reason = SLUICE_IFR_UNKNOWN; /* nothing proves XDP_TX: the safe way */
	else if (!(r->xdp_features & SL_XDP_FEATURE_NDO_XMIT))
		c.reason = SLUICE_IFR_NO_NDO_XMIT;
	else if (r->xmit_unproven)
		c.reason = SLUICE_IFR_VETH_PEER;
	else
		c = (struct sl_tx_choice){.rst_handoff = false, .reason = SLUICE_IFR_NDO_XMIT};
	return c;
}

static bool proven(const struct sl_tx_reading *r)
{
	return r->generic || (r->features_known && !r->xmit_unproven &&
			      (r->xdp_features & SL_XDP_FEATURE_NDO_XMIT));
}

/* How far a cumulative counter moved since last; 0 when it went back. */
static uint64_t advanced(uint64_t now, uint64_t last)
{
	return now >= last ? now - last : 0;
}

struct sl_tx_choice sl_tx_watch_step(struct sl_tx_watch *w, const struct sl_tx_reading *r,
				     struct sl_tx_step *step)
{
	uint64_t by_tp = 0, by_driver = 0;
	struct sl_tx_choice c;

	memset(step, 0, sizeof(*step));
	if (w->started) {
		by_tp = advanced(r->tx_dropped, w->tp_last);
		if (r->driver_known && w->driver_known)
			by_driver = advanced(r->driver_dropped, w->driver_last);
	}
	w->tp_last = r->tx_dropped;
	w->driver_last = r->driver_dropped;
	w->driver_known = r->driver_known;
	step->lost = by_tp > by_driver ? by_tp : by_driver;
	step->lost_driver_only = step->lost - by_tp;
	w->lost += step->lost;
	/* The device changed what it can do (its peer loaded or unloaded a
	 * program, GRO went on or off): earlier drops say nothing of now. */
	if (!w->started || r->features_known != w->features_known ||
	    (r->features_known && r->xdp_features != w->features)) {
		w->features = r->xdp_features;
		w->features_known = r->features_known;
		w->lost_base = w->lost;
	}
	c = sl_tx_choose(r, w->lost > w->lost_base);
	if (step->lost && !w->said_drops) {
		w->said_drops = true;
		step->say = SL_TX_SAY_DROPS;
	} else if (!r->handoff_ready && !proven(r) && !w->said_unproven) {
		w->said_unproven = true;
		step->say = SL_TX_SAY_UNPROVEN;
	}
	step->changed = !w->started || c.rst_handoff != w->choice.rst_handoff ||
			c.reason != w->choice.reason;
	w->choice = c;
	w->started = true;
	return c;
}

/* A per-queue counter's name holds the queue's number. */
static bool per_queue(const char *name)
{
	return strpbrk(name, "0123456789") != NULL;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

bool sl_tx_driver_drops(const char *names, const uint64_t *values, size_t n, uint64_t *drops)
{
	uint64_t totals = 0, queues = 0;
	bool have_totals = false, have_queues = false;

	for (size_t i = 0; i < n; i++) {
		char name[SL_TX_STAT_NAME_LEN + 1];

		memcpy(name, names + i * SL_TX_STAT_NAME_LEN, SL_TX_STAT_NAME_LEN);
		name[SL_TX_STAT_NAME_LEN] = '\0';
		if (!ends_with(name, "xdp_tx_drops") && !ends_with(name, "xdp_tx_errors"))
			continue;
		if (per_queue(name)) {
			queues += values[i];
			have_queues = true;
		} else {
			totals += values[i];
			have_totals = true;
		}
	}
	*drops = have_totals ? totals : queues;
	return have_totals || have_queues;
}

const char *sl_tx_reason_name(uint32_t reason)
{
	static const char *const names[] = {
		[SLUICE_IFR_UNKNOWN] = "unknown",
		[SLUICE_IFR_GENERIC] = "generic",
		[SLUICE_IFR_NDO_XMIT] = "ndo_xmit",
		[SLUICE_IFR_NO_NDO_XMIT] = "no_ndo_xmit",
		[SLUICE_IFR_DROPS] = "drops",
		[SLUICE_IFR_NO_HANDOFF] = "no_handoff",
		[SLUICE_IFR_VETH_PEER] = "veth_peer",
	};

	return reason < sizeof(names) / sizeof(names[0]) ? names[reason] : "?";
}
