// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "daemon/flow_metrics.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *const sl_reject_reason_names[SL_REJ__N] = {
	[SL_REJ_QUEUE_FULL] = "queue-full",
	[SL_REJ_CONCURRENCY] = "concurrency-limit",
	[SL_REJ_TIME_OUT] = "time-out",
	[SL_REJ_CANCELLED] = "cancelled",
	[SL_REJ_SHED] = "shed",
	[SL_REJ_STALLED] = "stalled",
};

/* apiserver_flowcontrol_request_wait_duration_seconds' buckets. */
static const double wait_bounds[] = {0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30};
/* request_execution_seconds' buckets, then longer (a connection may last
 * far longer than a request): the data path's (SLUICE_DUR_BOUNDS_MS). */
static const uint64_t duration_bounds_ms[SLUICE_DUR_BOUNDS] = SLUICE_DUR_BOUNDS_MS;

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))
#define FS_WORDS (sizeof(struct sl_fs_reading) / sizeof(__u64))

void sl_fm_init(struct sl_flow_metrics *fm)
{
	memset(fm, 0, sizeof(*fm));
}

void sl_fm_free(struct sl_flow_metrics *fm)
{
	free(fm->series);
	sl_fm_init(fm);
}

static const struct sl_fs_reading *reading_at(const struct sl_fs_reading *reading,
					       size_t n_reading, size_t i)
{
	static const struct sl_fs_reading zero;

	return reading && i < n_reading ? &reading[i] : &zero;
}

/* a += b - c, word by word (c > b: a counter that went back, nothing). */
static void add_since(struct sl_fs_reading *a, const struct sl_fs_reading *b,
		      const struct sl_fs_reading *c)
{
	__u64 *aw = (__u64 *)a;
	const __u64 *bw = (const __u64 *)b, *cw = (const __u64 *)c;

	for (size_t w = 0; w < FS_WORDS; w++)
		aw[w] += bw[w] > cw[w] ? bw[w] - cw[w] : 0;
}

/* The data path's counter of series i as of reading (n_reading entries):
 * what it carried plus what its index counted since its baseline. */
static struct sl_fs_reading datapath(const struct sl_flow_metrics *fm, size_t i,
				     const struct sl_fs_reading *reading, size_t n_reading)
{
	struct sl_fs_reading v = {0};

	if (i >= fm->n)
		return v;
	v = fm->series[i].carried;
	if (i < SLUICE_FS_STATS)
		add_since(&v, reading_at(reading, n_reading, i), &fm->series[i].base);
	return v;
}

static int by_names(const void *a, const void *b)
{
	const struct sl_flow_series *x = *(const struct sl_flow_series *const *)a;
	const struct sl_flow_series *y = *(const struct sl_flow_series *const *)b;
	int c = strcmp(x->flow_schema, y->flow_schema);

	return c ? c : strcmp(x->priority_level, y->priority_level);
}

static void fresh_series(struct sl_flow_series *s, const struct sl_flow_schema *fs)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->flow_schema, sizeof(s->flow_schema), "%s", fs->name);
	snprintf(s->priority_level, sizeof(s->priority_level), "%s", fs->level_name);
	sl_hist_init(&s->wait_dispatched, wait_bounds, N_OF(wait_bounds));
	sl_hist_init(&s->wait_rejected, wait_bounds, N_OF(wait_bounds));
}

int sl_fm_reconfigure(struct sl_flow_metrics *fm, const struct sl_config *cfg,
		      const struct sl_fs_reading *reading, size_t n_reading)
{
	struct sl_flow_series *next = calloc(cfg->n_schemas ? cfg->n_schemas : 1, sizeof(*next));
	struct sl_flow_series **old = calloc(fm->n ? fm->n : 1, sizeof(*old));

	if (!next || !old) {
		free(next);
		free(old);
		return -ENOMEM;
	}
	/* What the data path counted for each old series, at its old index. */
	for (size_t i = 0; i < fm->n; i++) {
		fm->series[i].carried = datapath(fm, i, reading, n_reading);
		old[i] = &fm->series[i];
	}
	qsort(old, fm->n, sizeof(*old), by_names);
	for (size_t i = 0; i < cfg->n_schemas; i++) {
		struct sl_flow_series key, *kp = &key, **found;

		fresh_series(&key, &cfg->schemas[i]);
		found = fm->n ? bsearch(&kp, old, fm->n, sizeof(*old), by_names) : NULL;
		next[i] = found ? **found : key;
		next[i].base = *reading_at(reading, n_reading, i);
	}
	free(old);
	free(fm->series);
	fm->series = next;
	fm->n = cfg->n_schemas;
	return 0;
}

struct sl_flow_series *sl_fm_at(struct sl_flow_metrics *fm, unsigned schema)
{
	return schema < fm->n ? &fm->series[schema] : NULL;
}

void sl_fm_dispatched(struct sl_flow_series *s, double waited_s)
{
	if (!s)
		return;
	s->dispatched++;
	sl_hist_observe(&s->wait_dispatched, waited_s);
}

void sl_fm_rejected(struct sl_flow_series *s, enum sl_reject_reason why, double waited_s)
{
	if (!s || why >= SL_REJ__N)
		return;
	s->rejected[why]++;
	sl_hist_observe(&s->wait_rejected, waited_s);
}

/* ---- exposition ------------------------------------------------------------- */

enum fm_value {
	FV_DISPATCHED, FV_INQUEUE, FV_EXECUTING, FV_EXECUTING_SEATS,
};

static const struct {
	enum fm_value id;
	enum sl_prom_type type;
	const char *name, *help;
} fm_values[] = {
	{FV_DISPATCHED, SL_PROM_COUNTER, "dispatched_connections_total",
	 "Connections admitted: at once by the data path, or after waiting in a queue "
	 "(apiserver_flowcontrol_dispatched_requests_total)."},
	{FV_INQUEUE, SL_PROM_GAUGE, "current_inqueue_connections",
	 "Deferred connections waiting in a queue (level or policy)."},
	{FV_EXECUTING, SL_PROM_GAUGE, "current_executing_connections",
	 "Admitted connections that have not closed (sampled every second)."},
	{FV_EXECUTING_SEATS, SL_PROM_GAUGE, "current_executing_seats",
	 "Seats those connections hold (sampled every second)."},
};

static uint64_t fm_value(enum fm_value id, const struct sl_flow_series *s,
			 const struct sl_fs_reading *r)
{
	const struct sluice_fs_stats *dp = &r->c;

	switch (id) {
	case FV_DISPATCHED: return dp->admitted_inline + s->dispatched;
	case FV_INQUEUE: return s->inqueue;
	case FV_EXECUTING: return s->executing;
	case FV_EXECUTING_SEATS: return s->executing_seats;
	}
	return 0;
}

/* A series nothing has happened to yet is not written (a configuration of
 * thousands of FlowSchemas would write every one of them), as a client
 * library's vector has no series before its first observation. */
/* The lifetimes the data path counted, as a histogram of seconds. */
static void lifetimes(const struct sluice_fs_duration *d, struct sl_hist *h)
{
	static double bounds[SLUICE_DUR_BOUNDS];

	for (unsigned b = 0; b < SLUICE_DUR_BOUNDS; b++)
		bounds[b] = (double)duration_bounds_ms[b] / 1e3;
	sl_hist_init(h, bounds, SLUICE_DUR_BOUNDS);
	for (unsigned b = 0; b < SLUICE_DUR_BUCKETS; b++) {
		h->bucket[b] = d->bucket[b];
		h->count += d->bucket[b];
	}
	h->sum = (double)d->sum_ns / 1e9;
}

static bool seen(const struct sl_flow_series *s, const struct sl_fs_reading *r)
{
	const struct sluice_fs_stats *dp = &r->c;
	uint64_t lasted = 0;

	for (unsigned b = 0; b < SLUICE_DUR_BUCKETS; b++)
		lasted += r->d.bucket[b];
	uint64_t rejected = 0;

	for (int r = 0; r < SL_REJ__N; r++)
		rejected += s->rejected[r];
	return dp->syns || dp->admitted_inline || dp->rejected_inline || s->dispatched || rejected ||
	       s->inqueue || s->executing || lasted;
}

void sl_fm_render(const struct sl_flow_metrics *fm, FILE *f, const struct sl_fs_reading *reading,
		  size_t n_reading)
{
	struct sl_fs_reading *dp = calloc(fm->n ? fm->n : 1, sizeof(*dp));
	bool *shown = calloc(fm->n ? fm->n : 1, sizeof(*shown));

	if (!dp || !shown) {
		free(dp);
		free(shown);
		return;
	}
	for (size_t i = 0; i < fm->n; i++) {
		dp[i] = datapath(fm, i, reading, n_reading);
		shown[i] = seen(&fm->series[i], &dp[i]);
	}

#define LABELS(s) "priority_level", (s)->priority_level, "flow_schema", (s)->flow_schema
	sl_prom_family(f, "flowschema_syns_total", SL_PROM_COUNTER,
		       "SYNs classified into the FlowSchema.");
	for (size_t i = 0; i < fm->n; i++)
		if (shown[i])
			sl_prom_sample_u64(f, "flowschema_syns_total", dp[i].c.syns, LABELS(&fm->series[i]), NULL);
	for (size_t v = 0; v < N_OF(fm_values); v++) {
		sl_prom_family(f, fm_values[v].name, fm_values[v].type, fm_values[v].help);
		for (size_t i = 0; i < fm->n; i++)
			if (shown[i])
				sl_prom_sample_u64(f, fm_values[v].name,
						   fm_value(fm_values[v].id, &fm->series[i], &dp[i]),
						   LABELS(&fm->series[i]), NULL);
	}
	sl_prom_family(f, "rejected_connections_total", SL_PROM_COUNTER,
		       "Connections refused with a RST, by reason "
		       "(apiserver_flowcontrol_rejected_requests_total).");
	for (size_t i = 0; i < fm->n; i++) {
		const struct sl_flow_series *s = &fm->series[i];

		if (!shown[i])
			continue;
		for (int r = 0; r < SL_REJ__N; r++)
			sl_prom_sample_u64(f, "rejected_connections_total",
					   s->rejected[r] + (r == SL_REJ_CONCURRENCY ? dp[i].c.rejected_inline : 0),
					   LABELS(s), "reason", sl_reject_reason_names[r], NULL);
	}
	/* The data path's verdicts waited nothing: zeros in the histogram,
	 * as APF observes a request dispatched at once. */
	sl_prom_family(f, "connection_wait_duration_seconds", SL_PROM_HISTOGRAM,
		       "Time from a connection's first SYN to its verdict, execute=\"true\" for "
		       "those admitted (apiserver_flowcontrol_request_wait_duration_seconds).");
	for (size_t i = 0; i < fm->n; i++) {
		const struct sl_flow_series *s = &fm->series[i];

		if (!shown[i])
			continue;
		sl_prom_histogram(f, "connection_wait_duration_seconds", &s->wait_dispatched,
				  dp[i].c.admitted_inline, LABELS(s), "execute", "true", NULL);
		sl_prom_histogram(f, "connection_wait_duration_seconds", &s->wait_rejected,
				  dp[i].c.rejected_inline, LABELS(s), "execute", "false", NULL);
	}
	sl_prom_family(f, "connection_duration_seconds", SL_PROM_HISTOGRAM,
		       "Time from a connection's admission to its close "
		       "(apiserver_flowcontrol_request_execution_seconds).");
	for (size_t i = 0; i < fm->n; i++) {
		struct sl_hist h;

		if (!shown[i])
			continue;
		lifetimes(&dp[i].d, &h);
		sl_prom_histogram(f, "connection_duration_seconds", &h, 0, LABELS(&fm->series[i]), NULL);
	}
#undef LABELS
	free(dp);
	free(shown);
}
