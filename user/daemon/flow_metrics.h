/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Per-FlowSchema metrics, as Kubernetes APF keeps them per (priority_level,
 * flow_schema): connections dispatched, rejected by reason, waiting,
 * executing, and histograms of how long they waited and how long they
 * lasted.  Pure bookkeeping (no BPF, no I/O): the caller passes in the data
 * path's per-schema counters and lifetimes (struct sl_fs_reading) as read,
 * and the daemon's own verdicts as they happen.  The lifetimes are the
 * data path's alone: it counts every close, most of which the daemon never
 * hears of.
 *
 * A series belongs to a (FlowSchema name, level name) pair and survives a
 * reload that keeps the pair, even when the schema's index moves: what the
 * data path counted at its old index is carried into the series, and the
 * reading at its new index becomes its baseline, so every counter stays
 * monotonic.  A pair the new configuration lacks is dropped.
 */
#ifndef SLUICE_FLOW_METRICS_H
#define SLUICE_FLOW_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sluice_abi.h"
#include "config/config.h"
#include "dataplane/pinned_maps.h"
#include "lib/prom.h"

/* Why a connection was refused (apiserver_flowcontrol_rejected_requests_total's reason). */
enum sl_reject_reason {
	SL_REJ_QUEUE_FULL,  /* its queue was full */
	SL_REJ_CONCURRENCY, /* a Reject level over its limit */
	SL_REJ_TIME_OUT,    /* it waited past queueWaitLimit (or its policy's queue_timeout) */
	SL_REJ_CANCELLED,   /* it left the queue without a verdict (its level went away) */
	SL_REJ_SHED,        /* controlled delay: its queue stood past the interval and it past the target */
	SL_REJ_STALLED,     /* its level was stalled: full, and nothing closed for several lifetimes */
	SL_REJ__N,
};
extern const char *const sl_reject_reason_names[SL_REJ__N];

struct sl_flow_series {
	char flow_schema[SL_LEVEL_NAME_SIZE];
	char priority_level[SL_LEVEL_NAME_SIZE];
	/* The data path's counters: carried from earlier indices, and the
	 * reading at the current index when the series took it. */
	struct sl_fs_reading carried, base;
	uint64_t dispatched;          /* the daemon's admissions of waiting connections */
	uint64_t rejected[SL_REJ__N]; /* the daemon's verdicts */
	struct sl_hist wait_dispatched, wait_rejected; /* seconds, deferral to verdict */
	/* Gauges, set by the caller before rendering. */
	uint32_t inqueue, executing, executing_seats;
};

struct sl_flow_metrics {
	struct sl_flow_series *series; /* by the configuration's schema index */
	size_t n;
};

void sl_fm_init(struct sl_flow_metrics *fm);
void sl_fm_free(struct sl_flow_metrics *fm);

/* Take cfg's schemas.  reading[i] is the data path's counter at index i,
 * for i < n_reading (the larger of the old and new schema counts, at most
 * SLUICE_FS_STATS; NULL: no reading, everything counts from zero).  Returns
 * 0, or -ENOMEM with fm unchanged. */
int sl_fm_reconfigure(struct sl_flow_metrics *fm, const struct sl_config *cfg,
		      const struct sl_fs_reading *reading, size_t n_reading);

/* The series at a schema index, or NULL (out of range). */
struct sl_flow_series *sl_fm_at(struct sl_flow_metrics *fm, unsigned schema);

/* The daemon's verdicts (any may get a NULL series, and then does nothing). */
void sl_fm_dispatched(struct sl_flow_series *s, double waited_s);
void sl_fm_rejected(struct sl_flow_series *s, enum sl_reject_reason why, double waited_s);

/* Every family, with reading the data path's counters now. */
void sl_fm_render(const struct sl_flow_metrics *fm, FILE *f, const struct sl_fs_reading *reading,
		  size_t n_reading);

#endif
