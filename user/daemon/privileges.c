// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Capability dropping.  See privileges.h. */
#include "daemon/privileges.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>


#ifndef CAP_BPF
#define CAP_BPF 39
#endif

uint64_t sl_privileges_kept(void)
{
	return (1ull << CAP_BPF) | (1ull << CAP_NET_ADMIN);
}

/* The highest capability this kernel knows. */
static int last_cap(void)
{
	char buf[16] = "";
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
	int v = 40;

	if (f) {
		if (fgets(buf, sizeof(buf), f))
			sscanf(buf, "%d", &v);
		fclose(f);
	}
	return v > 0 && v < 64 ? v : 40;
}

int sl_privileges_drop(char *why, size_t why_len)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2];
	uint64_t keep = sl_privileges_kept(), permitted;
	int last = last_cap();

	/* Keep only what we hold: asking capset for more fails. */
	if (syscall(SYS_capget, &hdr, data)) {
		snprintf(why, why_len, "capget: %s", strerror(errno));
		return -errno;
	}
	permitted = (uint64_t)data[0].permitted | (uint64_t)data[1].permitted << 32;
	keep &= permitted;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		snprintf(why, why_len, "PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
		return -errno;
	}
	/* The bounding set first: dropping from it needs CAP_SETPCAP, which
	 * goes below.  Without CAP_SETPCAP (a unit's CapabilityBoundingSet
	 * leaves it out) the bounding set is already what the manager chose,
	 * and NoNewPrivs keeps an exec from gaining anything anyway. */
	for (int cap = 0; cap <= last && prctl(PR_CAPBSET_READ, CAP_SETPCAP, 0, 0, 0) == 1; cap++) {
		if ((keep & (1ull << cap)) || cap == CAP_SETPCAP)
			continue;
		if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) != 1)
			continue; /* not there (or unknown): nothing to drop */
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) && errno != EINVAL) {
			snprintf(why, why_len, "PR_CAPBSET_DROP %d: %s", cap, strerror(errno));
			return -errno;
		}
	}
	if (prctl(PR_CAPBSET_READ, CAP_SETPCAP, 0, 0, 0) == 1 && !(keep & (1ull << CAP_SETPCAP)) &&
	    prctl(PR_CAPBSET_DROP, CAP_SETPCAP, 0, 0, 0) && errno != EINVAL) {
		snprintf(why, why_len, "PR_CAPBSET_DROP CAP_SETPCAP: %s", strerror(errno));
		return -errno;
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL) {
		snprintf(why, why_len, "PR_CAP_AMBIENT_CLEAR_ALL: %s", strerror(errno));
		return -errno;
	}
	memset(data, 0, sizeof(data));
	data[0].effective = data[0].permitted = (uint32_t)keep;
	data[1].effective = data[1].permitted = (uint32_t)(keep >> 32);
	if (syscall(SYS_capset, &hdr, data)) {
		snprintf(why, why_len, "capset: %s", strerror(errno));
		return -errno;
	}
	return 0;
}
