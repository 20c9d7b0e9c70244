/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The data path's counters: the global ones (sl_stats, per CPU) and a
 * FlowSchema's own (sl_fs_stats).
 */
#ifndef SLUICE_BPF_STATS_H
#define SLUICE_BPF_STATS_H

#include "maps.h"

static __always_inline struct sluice_stats *global_stats(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&sl_stats, &zero);
}

#define STAT_INC(s, field) do { if (s) (s)->field++; } while (0)

/* The FlowSchema's own counters, or NULL past SLUICE_FS_STATS. */
static __always_inline struct sluice_fs_stats *schema_stats(__u32 schema)
{
	return bpf_map_lookup_elem(&sl_fs_stats, &schema);
}

#endif /* SLUICE_BPF_STATS_H */
