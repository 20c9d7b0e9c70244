// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "daemon/events.h"

#include "daemon/admission.h"
#include "daemon/policy_rt.h"
#include "lib/conn_end.h"
#include "sluice_abi.h"

void sl_events_route(struct sl_admission *adm, struct sl_policies *ps, const void *data,
		     size_t size, uint64_t now)
{
	const struct sluice_event *ev = data;

	if (size < sizeof(*ev))
		return;
	switch (ev->type) {
	case SLUICE_EV_DEFER:
		if (size >= sizeof(struct sluice_defer_event)) {
			sl_adm_defer(adm, data, now);
		} else {
			/* a deferral without its frame (an older data path) */
			struct sluice_defer_event de = {.ev = *ev};

			sl_adm_defer(adm, &de, now);
		}
		break;
	case SLUICE_EV_CLOSE: {
		uint64_t queued_ns = sl_adm_close(adm, ev, now);

		if (ev->policy != SLUICE_NONE16)
			sl_policies_on_close(ps, ev->policy, ev->workload, ev->duration_ns, queued_ns,
					     ev->srtt_us, sl_conn_end_served(ev->end), now);
		break;
	}
	default:
		break;
	}
}
