// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "lib/cgroup_path.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

/* /proc/mounts escapes space, tab, newline and backslash as \ooo. */
static void unescape_mount_path(const char *in, char *out, size_t len)
{
	size_t o = 0;

	while (*in && o + 1 < len) {
		if (in[0] == '\\' && in[1] >= '0' && in[1] <= '7' && in[2] >= '0' &&
		    in[2] <= '7' && in[3] >= '0' && in[3] <= '7') {
			out[o++] = (char)((in[1] - '0') * 64 + (in[2] - '0') * 8 + (in[3] - '0'));
			in += 4;
		} else {
			out[o++] = *in++;
		}
	}
	out[o] = '\0';
}

int sl_cgroup2_find(FILE *mounts, char *out, size_t len)
{
	char line[4096];

	while (fgets(line, sizeof(line), mounts)) {
		char *save = NULL;
		char *dev = strtok_r(line, " \t", &save);
		char *dir = strtok_r(NULL, " \t", &save);
		char *type = strtok_r(NULL, " \t", &save);

		(void)dev;
		if (dir && type && !strcmp(type, "cgroup2")) {
			unescape_mount_path(dir, out, len);
			return 0;
		}
	}
	return -ENOENT;
}

int sl_cgroup2_root(char *out, size_t len)
{
	FILE *f = fopen("/proc/mounts", "re");
	int err;

	if (!f)
		return -errno;
	err = sl_cgroup2_find(f, out, len);
	fclose(f);
	return err;
}

bool sl_cgroup2_is_root(const char *path)
{
	char f[PATH_MAX];
	int n = snprintf(f, sizeof(f), "%s/cgroup.procs", path);

	if (n < 0 || (size_t)n >= sizeof(f) || access(f, F_OK))
		return false; /* not a cgroup at all */
	snprintf(f, sizeof(f), "%s/cgroup.type", path); /* shorter: fits */
	return access(f, F_OK) && errno == ENOENT;
}
