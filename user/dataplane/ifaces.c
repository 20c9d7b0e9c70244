// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* sl_ifaces' writer.  See ifaces.h. */
#include "dataplane/ifaces.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dataplane/driver_stats.h"
#include "dataplane/tx_hooks.h"
#include "lib/log.h"

static uint32_t new_cookie(void)
{
	uint32_t c = 0;

	/* Not a secret (a local sender of our EtherType could as well send
	 * the RST itself): it tells our frames from someone else's. */
	while (!c && getrandom(&c, sizeof(c), GRND_NONBLOCK) != (ssize_t)sizeof(c))
		c = (uint32_t)sl_mono_ns() ^ 0x5a5a5a5au;
	return c;
}

/* Whether the device's driver is veth (ETHTOOL_GDRVINFO, in the socket's
 * network namespace, which is the daemon's). */
static bool is_veth(const char *name)
{
	struct ethtool_drvinfo info = {.cmd = ETHTOOL_GDRVINFO};
	struct ifreq ifr = {0};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	bool veth = false;

	if (fd < 0)
		return false;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	ifr.ifr_data = (void *)&info;
	if (!ioctl(fd, SIOCETHTOOL, &ifr))
		veth = !strcmp(info.driver, "veth");
	close(fd);
	return veth;
}

static int write_entry(struct sl_dataplane *dp, size_t i, uint32_t flags, uint32_t reason,
		       uint64_t xdp_features)
{
	const struct sl_dp_iface *ifc = &dp->ifaces[i];
	struct sluice_iface e = {
		.slot = (uint32_t)i, .flags = flags, .cookie = ifc->cookie, .reason = reason,
		.xdp_features = xdp_features, .tx_dropped_driver = ifc->tx_dropped_driver,
	};
	__u32 key = (__u32)ifc->ifindex;

	return bpf_map_update_elem(dp->maps.fd[SL_MAP_IFACES], &key, &e, BPF_ANY) ? -errno : 0;
}

int sl_iface_publish(struct sl_dataplane *dp, size_t i, const struct sl_tx_choice *c,
		     uint64_t xdp_features, uint64_t lost_driver_only)
{
	dp->ifaces[i].tx_dropped_driver += lost_driver_only;
	uint32_t flags = (sl_tx_hooks_ready(dp, i) ? SLUICE_IF_HANDOFF_READY : 0) |
			 (c->rst_handoff ? SLUICE_IF_RST_HANDOFF : 0) |
			 (dp->ifaces[i].tc_via == SL_TC_CLSACT ? SLUICE_IF_HANDOFF_CLSACT : 0);

	return write_entry(dp, i, flags, c->reason, xdp_features);
}

void sl_iface_reading(struct sl_dataplane *dp, size_t i, struct sl_tx_reading *r)
{
	struct sluice_if_stats st;
	struct sluice_iface e;
	__u32 key = (__u32)dp->ifaces[i].ifindex;

	memset(r, 0, sizeof(*r));
	r->handoff_ready = sl_tx_hooks_ready(dp, i);
	r->generic = dp->xdp_flags & XDP_FLAGS_SKB_MODE;
	r->xmit_unproven = dp->ifaces[i].veth && !dp->veth_peer_xdp;
	r->features_known = !sl_xdp_features(&dp->genl, dp->ifaces[i].ifindex, &r->xdp_features);
	if (!r->features_known && !bpf_map_lookup_elem(dp->maps.fd[SL_MAP_IFACES], &key, &e) &&
	    e.reason != SLUICE_IFR_UNKNOWN) {
		/* A kernel that did not answer this once: the last answer. */
		r->xdp_features = e.xdp_features;
		r->features_known = e.reason == SLUICE_IFR_NDO_XMIT || e.reason == SLUICE_IFR_NO_NDO_XMIT;
	}
	if (!sl_iface_stats(dp, i, &st))
		r->tx_dropped = st.tx_dropped;
	r->driver_known = !sl_driver_xdp_tx_drops(dp->ifaces[i].name, &r->driver_dropped);
}

/* An adopted entry of an interface no longer listed goes: its slot may be
 * another's now. */
static void drop_unlisted(struct sl_dataplane *dp)
{
	__u32 keys[SLUICE_MAX_IFACES], key, next;
	size_t n = 0;
	int fd = dp->maps.fd[SL_MAP_IFACES];

	for (int err = bpf_map_get_next_key(fd, NULL, &next); !err && n < SLUICE_MAX_IFACES;
	     err = bpf_map_get_next_key(fd, &key, &next)) {
		bool listed = false;

		key = next;
		for (size_t i = 0; i < dp->n_ifaces; i++)
			listed |= (__u32)dp->ifaces[i].ifindex == key;
		if (!listed)
			keys[n++] = key;
	}
	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(fd, &keys[i]);
}

int sl_ifaces_init(struct sl_dataplane *dp)
{
	int err = sl_genl_netdev_open(&dp->genl);

	if (err)
		pr_warn("netdev netlink: %s (xdp-features unknown: native refusals go by hand-off)",
			strerror(-err));
	else if (!dp->genl.family)
		pr_info("this kernel has no netdev netlink family (before 6.3): native refusals go "
			"by hand-off");
	drop_unlisted(dp);
	for (size_t i = 0; i < dp->n_ifaces; i++) {
		struct sl_dp_iface *ifc = &dp->ifaces[i];
		struct sl_tx_reading r;
		struct sl_tx_choice c;
		struct sluice_iface old;
		__u32 key = (__u32)ifc->ifindex;

		ifc->veth = is_veth(ifc->name);
		if (!bpf_map_lookup_elem(dp->maps.fd[SL_MAP_IFACES], &key, &old) && old.cookie) {
			ifc->cookie = old.cookie;
			ifc->tx_dropped_driver = old.tx_dropped_driver;
		} else {
			ifc->cookie = new_cookie();
			ifc->tx_dropped_driver = 0;
		}
		sl_iface_reading(dp, i, &r);
		c = sl_tx_choose(&r, false);
		err = sl_iface_publish(dp, i, &c, r.xdp_features, 0);
		if (err) {
			pr_err("write %s for %s: %s", sl_map_names[SL_MAP_IFACES], ifc->name, strerror(-err));
			return err;
		}
	}
	return 0;
}

int sl_iface_stats(const struct sl_dataplane *dp, size_t i, struct sluice_if_stats *out)
{
	return sl_maps_if_stats(&dp->maps, (unsigned)i, out);
}
