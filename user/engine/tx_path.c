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

struct sl_tx_choice sl_tx_watch_step(struct sl_tx_watch *w, const struct sl_tx_reading *r,
				     bool *changed, uint64_t *new_drops, enum sl_tx_say *say)
{
	struct sl_tx_choice c;

	*say = SL_TX_SAY_NONE;
	/* A counter that went back is a new map (a restart that did not
	 * adopt it): nothing was lost in between that we can know of. */
	if (!w->started || r->tx_dropped < w->drops_last) {
		w->drops_last = r->tx_dropped;
		w->drops_base = r->tx_dropped;
	}
	/* The device changed what it can do (its peer loaded or unloaded a
	 * program, GRO went on or off): earlier drops say nothing of now. */
	if (!w->started || r->features_known != w->features_known ||
	    (r->features_known && r->xdp_features != w->features)) {
		w->features = r->xdp_features;
		w->features_known = r->features_known;
		w->drops_base = r->tx_dropped;
	}
	*new_drops = r->tx_dropped - w->drops_last;
	w->drops_last = r->tx_dropped;
	c = sl_tx_choose(r, r->tx_dropped > w->drops_base);
	if (*new_drops && !w->said_drops) {
		w->said_drops = true;
		*say = SL_TX_SAY_DROPS;
	} else if (!r->handoff_ready && !proven(r) && !w->said_unproven) {
		w->said_unproven = true;
		*say = SL_TX_SAY_UNPROVEN;
	}
	*changed = !w->started || c.rst_handoff != w->choice.rst_handoff || c.reason != w->choice.reason;
	w->choice = c;
	w->started = true;
	return c;
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
