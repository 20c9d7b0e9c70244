#include "apply.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

static int update(int fd, const void *key, const void *val, const char *what)
{
	if (bpf_map_update_elem(fd, key, val, BPF_ANY)) {
		int err = -errno;

		pr_err("update %s: %s", what, strerror(-err));
		return err;
	}
	return 0;
}

static bool plan_has_port(const struct sl_plan *plan, uint16_t port_be)
{
	for (size_t i = 0; i < plan->n_ports; i++)
		if (htons(plan->ports[i].port) == port_be)
			return true;
	return false;
}

static int remove_stale_ports(const struct sl_maps *m, const struct sl_plan *plan)
{
	struct sluice_port_key key, next, stale[SLUICE_PORT_TABLE_SIZE];
	size_t n = 0;
	int fd = m->fd[SL_MAP_PORTS];
	void *prev = NULL;

	while (n < SLUICE_PORT_TABLE_SIZE && !bpf_map_get_next_key(fd, prev, &next)) {
		if (!plan_has_port(plan, next.port))
			stale[n++] = next;
		key = next;
		prev = &key;
	}
	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(fd, &stale[i]);
	return 0;
}

int sl_apply_plan(const struct sl_maps *m, const struct sl_plan *plan)
{
	struct sluice_level unused = {};
	__u32 zero = 0;
	int err;

	for (unsigned slot = 0; slot < SLUICE_MAX_LEVELS; slot++) {
		if (plan->levels[slot].type == SLUICE_LEVEL_UNUSED)
			continue;
		err = update(m->fd[SL_MAP_LEVELS], &slot, &plan->levels[slot], SLUICE_MAP_LEVELS);
		if (err)
			return err;
	}
	for (size_t i = 0; i < plan->n_ports; i++) {
		struct sluice_port_key k = {.port = htons(plan->ports[i].port)};
		struct sluice_port_val v = {.level = plan->ports[i].slot};

		err = update(m->fd[SL_MAP_PORTS], &k, &v, SLUICE_MAP_PORTS);
		if (err)
			return err;
	}
	remove_stale_ports(m, plan);
	for (unsigned slot = 0; slot < SLUICE_MAX_LEVELS; slot++) {
		if (plan->levels[slot].type != SLUICE_LEVEL_UNUSED)
			continue;
		err = update(m->fd[SL_MAP_LEVELS], &slot, &unused, SLUICE_MAP_LEVELS);
		if (err)
			return err;
	}
	return update(m->fd[SL_MAP_CONFIG], &zero, &plan->config, SLUICE_MAP_CONFIG);
}

int sl_write_heartbeat(const struct sl_maps *m, unsigned long long seq)
{
	struct sluice_heartbeat hb = {
		.mono_ns = sl_mono_ns(),
		.seq = seq,
		.pid = (__u32)getpid(),
	};
	__u32 zero = 0;

	if (bpf_map_update_elem(m->fd[SL_MAP_HEARTBEAT], &zero, &hb, BPF_ANY))
		return -errno;
	return 0;
}
