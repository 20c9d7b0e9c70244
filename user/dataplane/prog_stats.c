// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "dataplane/prog_stats.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "dataplane/dataplane.h"
#include "dataplane/pinned_maps.h"
#include "sluice.skel.h"

const char *const sl_cost_prog_names[SL_COST_PROGS] = {SLUICE_PROG_XDP, SLUICE_PROG_SOCKOPS};

static int stats_of_fd(int fd, struct sl_prog_stats *out)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(out, 0, sizeof(*out));
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	out->id = info.id;
	out->runs = info.run_cnt;
	out->run_ns = info.run_time_ns;
	return 0;
}

int sl_prog_stats_read(const char *pin_dir, const char *name, struct sl_prog_stats *out)
{
	char path[4096];
	int fd, err;

	memset(out, 0, sizeof(*out));
	if (sl_pin_path(path, sizeof(path), pin_dir, "progs", name))
		return -ENAMETOOLONG;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	err = stats_of_fd(fd, out);
	close(fd);
	return err;
}

int sl_dataplane_prog_stats(const struct sl_dataplane *dp, struct sl_prog_stats out[SL_COST_PROGS])
{
	const struct bpf_program *progs[SL_COST_PROGS] = {dp->skel->progs.sluice_xdp,
							  dp->skel->progs.sluice_sockops};
	int err = 0;

	for (int i = 0; i < SL_COST_PROGS && !err; i++)
		err = stats_of_fd(bpf_program__fd(progs[i]), &out[i]);
	return err;
}

int sl_prog_stats_enable(void)
{
	int fd = bpf_enable_stats(BPF_STATS_RUN_TIME);

	return fd < 0 ? -errno : fd;
}

uint32_t sl_pinned_prog_id(const char *pin_dir, const char *name)
{
	struct sl_prog_stats ps;

	return sl_prog_stats_read(pin_dir, name, &ps) ? 0 : ps.id;
}
