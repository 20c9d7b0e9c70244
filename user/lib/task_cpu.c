// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "lib/task_cpu.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

int sl_task_cpu_ns(const char *proc, pid_t pid, uint64_t *ns)
{
	char path[4096 + 2 * 256];
	struct dirent *e;
	uint64_t sum = 0;
	DIR *d;

	if ((size_t)snprintf(path, sizeof(path), "%s/%d/task", proc, (int)pid) >= 4096)
		return -ENAMETOOLONG;
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((e = readdir(d))) {
		uint64_t run;
		FILE *f;
		int got;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%d/task/%s/schedstat", proc, (int)pid, e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue; /* the thread exited meanwhile: its time went with it */
		got = fscanf(f, "%" SCNu64, &run);
		fclose(f);
		if (got == 1)
			sum += run;
	}
	closedir(d);
	*ns = sum;
	return 0;
}
