// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "lib/default_route.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define RTF_UP     0x0001u
#define RTF_REJECT 0x0200u

struct best {
	char dev[64];
	unsigned long metric;
	int found;
};

static void consider(struct best *b, const char *dev, unsigned long flags, unsigned long metric)
{
	if (!(flags & RTF_UP) || (flags & RTF_REJECT) || !strcmp(dev, "lo"))
		return;
	if (b->found && metric >= b->metric)
		return;
	snprintf(b->dev, sizeof(b->dev), "%s", dev);
	b->metric = metric;
	b->found = 1;
}

/* Iface Destination Gateway Flags RefCnt Use Metric Mask ... (hex fields). */
static void scan_v4(const char *text, struct best *b)
{
	const char *line = text;

	while (line && *line) {
		char dev[64], dst[16], gw[16], mask[16];
		unsigned long flags, refcnt, use, metric;

		if (sscanf(line, "%63s %15s %15s %lx %lu %lu %lu %15s", dev, dst, gw, &flags, &refcnt,
			   &use, &metric, mask) == 8 &&
		    !strcmp(dst, "00000000") && !strcmp(mask, "00000000"))
			consider(b, dev, flags, metric);
		line = strchr(line, '\n');
		if (line)
			line++;
	}
}

/* dst dst_len src src_len nexthop metric refcnt use flags dev (hex). */
static void scan_v6(const char *text, struct best *b)
{
	const char *line = text;

	while (line && *line) {
		char dst[40], src[40], hop[40], dev[64];
		unsigned long dlen, slen, metric, refcnt, use, flags;

		if (sscanf(line, "%39s %lx %39s %lx %39s %lx %lx %lx %lx %63s", dst, &dlen, src, &slen,
			   hop, &metric, &refcnt, &use, &flags, dev) == 10 &&
		    !dlen && strspn(dst, "0") == 32 && strlen(dst) == 32)
			consider(b, dev, flags, metric);
		line = strchr(line, '\n');
		if (line)
			line++;
	}
}

int sl_default_route_dev(const char *route_v4, const char *route_v6, char *out, size_t out_len)
{
	struct best b = {0};

	if (route_v4)
		scan_v4(route_v4, &b);
	if (!b.found && route_v6)
		scan_v6(route_v6, &b);
	if (!b.found)
		return -ENOENT;
	snprintf(out, out_len, "%s", b.dev);
	return 0;
}
