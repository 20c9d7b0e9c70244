// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* A device's driver statistics.  See driver_stats.h. */
#include "dataplane/driver_stats.h"

#include <errno.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "engine/tx_path.h"

_Static_assert(SL_TX_STAT_NAME_LEN == ETH_GSTRING_LEN, "the engine reads ethtool's names");

/* A driver with more statistics than this is not one we know (mlx5 has
 * about 1,500): the read is refused rather than a large allocation. */
#define MAX_STATS 16384

static int ethtool(int fd, const char *ifname, void *cmd)
{
	struct ifreq ifr = {0};

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = cmd;
	return ioctl(fd, SIOCETHTOOL, &ifr) ? -errno : 0;
}

/* How many statistics the driver has (ETH_SS_STATS). */
static int stats_count(int fd, const char *ifname, uint32_t *n)
{
	struct {
		struct ethtool_sset_info hdr;
		uint32_t len;
	} info = {.hdr = {.cmd = ETHTOOL_GSSET_INFO, .sset_mask = 1ull << ETH_SS_STATS}};
	int err = ethtool(fd, ifname, &info);

	if (err)
		return err;
	*n = info.hdr.sset_mask & (1ull << ETH_SS_STATS) ? info.len : 0;
	return 0;
}

int sl_driver_xdp_tx_drops(const char *ifname, uint64_t *drops)
{
	struct ethtool_gstrings *names = NULL;
	struct ethtool_stats *values = NULL;
	uint32_t n = 0;
	int err, fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	err = stats_count(fd, ifname, &n);
	if (!err && (n == 0 || n > MAX_STATS))
		err = -EOPNOTSUPP;
	if (!err) {
		names = calloc(1, sizeof(*names) + (size_t)n * ETH_GSTRING_LEN);
		values = calloc(1, sizeof(*values) + (size_t)n * sizeof(uint64_t));
		err = names && values ? 0 : -ENOMEM;
	}
	if (!err) {
		*names = (struct ethtool_gstrings){.cmd = ETHTOOL_GSTRINGS, .string_set = ETH_SS_STATS,
						   .len = n};
		err = ethtool(fd, ifname, names);
	}
	if (!err) {
		*values = (struct ethtool_stats){.cmd = ETHTOOL_GSTATS, .n_stats = n};
		err = ethtool(fd, ifname, values);
	}
	/* A driver whose statistics changed in between (a queue added): the
	 * next read will agree. */
	if (!err && (names->len != n || values->n_stats != n))
		err = -EAGAIN;
	if (!err && !sl_tx_driver_drops((const char *)names->data, (const uint64_t *)values->data, n,
					drops))
		err = -EOPNOTSUPP;
	free(names);
	free(values);
	close(fd);
	return err;
}
