// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The refusals' way out, each second.  See tx_path_rt.h. */
#include "daemon/tx_path_rt.h"

#include <string.h>

#include "dataplane/ifaces.h"
#include "lib/log.h"
#include "lib/prom.h"

void sl_tx_path_rt_init(struct sl_tx_path_rt *rt)
{
	memset(rt, 0, sizeof(*rt));
}

/* Why an XDP_TX frame was dropped there, and what helps. */
static const char *drop_advice(const struct sl_dp_iface *ifc, bool generic)
{
	if (generic)
		return "In generic mode XDP_TX is the stack's own transmit: the device's queue was full";
	if (ifc->veth)
		return "A veth delivers XDP_TX only while its peer has NAPI: load an XDP program on "
		       "the peer, or `ethtool -K <peer> gro on`, or run with --xdp-mode generic";
	return "The driver's XDP transmit ring was full: a larger one drops fewer "
	       "(`ethtool -G <iface> tx N`), or run with --xdp-mode generic";
}

static void say(const struct sl_dp_iface *ifc, enum sl_tx_say what, uint64_t lost,
		const struct sl_tx_choice *c, bool generic)
{
	if (what == SL_TX_SAY_DROPS)
		pr_warn("event=refusals_dropped iface=%s lost=%llu path=%s (the driver dropped RSTs "
			"sent with XDP_TX: their clients were not told.  %s.  %s)",
			ifc->name, (unsigned long long)lost, c->rst_handoff ? "handoff" : "xdp_tx",
			c->rst_handoff ? "Its refusals go by tc hand-off from now on, until the "
					 "device's XDP features change or sluiced restarts" :
					 "Without the tc hand-off they cannot go another way",
			drop_advice(ifc, generic));
	else if (what == SL_TX_SAY_UNPROVEN)
		pr_warn("event=refusals_unproven iface=%s mode=%s (refusals go by XDP_TX, which this "
			"device is not known to deliver, and the tc hand-off is not attached: a "
			"refused client may not be told.  See the hand-off line above for why, or run with "
			"--xdp-mode generic)", ifc->name, generic ? "generic" : "native");
}

void sl_tx_path_rt_step(struct sl_tx_path_rt *rt, struct sl_dataplane *dp, uint64_t now_ns)
{
	if (rt->last_ns && now_ns - rt->last_ns < SL_TX_PATH_INTERVAL_NS)
		return;
	rt->last_ns = now_ns;
	for (size_t i = 0; i < dp->n_ifaces; i++) {
		const struct sl_dp_iface *ifc = &dp->ifaces[i];
		struct sl_tx_reading r;
		struct sl_tx_choice c;
		struct sl_tx_step step;

		sl_iface_reading(dp, i, &r);
		c = sl_tx_watch_step(&rt->watch[i], &r, &step);
		if (step.changed || step.lost_driver_only) {
			int err = sl_iface_publish(dp, i, &c, r.xdp_features, step.lost_driver_only);

			if (err)
				pr_err("write %s for %s: %s", sl_map_names[SL_MAP_IFACES], ifc->name, strerror(-err));
			else if (step.changed)
				pr_info("event=refusal_path iface=%s path=%s reason=%s xdp_features=0x%llx",
					ifc->name, c.rst_handoff ? "handoff" : "xdp_tx",
					sl_tx_reason_name(c.reason), (unsigned long long)r.xdp_features);
		}
		say(ifc, step.say, step.lost, &c, r.generic);
	}
}

void sl_tx_path_rt_metrics(const struct sl_tx_path_rt *rt, const struct sl_dataplane *dp, FILE *f)
{
	struct sluice_if_stats st[SL_DP_MAX_IFACES];

	for (size_t i = 0; i < dp->n_ifaces; i++)
		if (sl_iface_stats(dp, i, &st[i]))
			memset(&st[i], 0, sizeof(st[i]));
	sl_prom_family(f, "interface_refusal_handoff", SL_PROM_GAUGE,
		       "1 while the interface's RSTs go by tc hand-off, 0 by XDP_TX; the reason says why.");
	for (size_t i = 0; i < dp->n_ifaces; i++)
		sl_prom_sample(f, "interface_refusal_handoff", rt->watch[i].choice.rst_handoff,
			       "interface", dp->ifaces[i].name, "reason",
			       sl_tx_reason_name(rt->watch[i].choice.reason), NULL);
	sl_prom_family(f, "interface_rsts_total", SL_PROM_COUNTER,
		       "RSTs the data path sent, by the way they left.");
	for (size_t i = 0; i < dp->n_ifaces; i++) {
		sl_prom_sample_u64(f, "interface_rsts_total", st[i].rst_xdp_tx, "interface",
				   dp->ifaces[i].name, "path", "xdp_tx", NULL);
		sl_prom_sample_u64(f, "interface_rsts_total", st[i].rst_handoff, "interface",
				   dp->ifaces[i].name, "path", "handoff", NULL);
	}
	sl_prom_family(f, "interface_handoff_attached", SL_PROM_GAUGE,
		       "1 while the interface's hand-off programs are attached, by how: tcx links, or "
		       "cls_bpf filters on clsact where the kernel has no tcx (before 6.6).");
	for (size_t i = 0; i < dp->n_ifaces; i++) {
		enum sl_tc_via via = dp->ifaces[i].tc_via;

		sl_prom_sample(f, "interface_handoff_attached", via != SL_TC_NONE, "interface",
			       dp->ifaces[i].name, "via", via == SL_TC_TCX ? "tcx" :
			       via == SL_TC_CLSACT ? "clsact" : "none", NULL);
	}
	sl_prom_family(f, "interface_handoff_frames_total", SL_PROM_COUNTER,
		       "Hand-off frames the tc programs turned: RSTs out of the device, held SYNs into it.");
	for (size_t i = 0; i < dp->n_ifaces; i++) {
		sl_prom_sample_u64(f, "interface_handoff_frames_total", st[i].handoff_out, "interface",
				   dp->ifaces[i].name, "direction", "out", NULL);
		sl_prom_sample_u64(f, "interface_handoff_frames_total", st[i].handoff_in, "interface",
				   dp->ifaces[i].name, "direction", "in", NULL);
	}
	sl_prom_family(f, "interface_refusals_lost_total", SL_PROM_COUNTER,
		       "RSTs sent with XDP_TX that the driver dropped (the client was not told): "
		       "as the kernel's tracepoints or the driver's own counters saw them.");
	for (size_t i = 0; i < dp->n_ifaces; i++)
		sl_prom_sample_u64(f, "interface_refusals_lost_total",
				   st[i].tx_dropped + dp->ifaces[i].tx_dropped_driver, "interface",
				   dp->ifaces[i].name, NULL);
}
