/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The metrics listener (adapter): Prometheus text exposition over HTTP on
 * Server spec.metricsAddress, served from the daemon's epoll loop without
 * blocking it (request_server.h: non-blocking, budgets and deadlines per
 * client, the least recently progressing client evicted when full, and
 * slots kept for this host's probes).
 * GET /metrics answers with what `render` writes (at most 10 ms old: a
 * flood of scrapes does not render a page each); /healthz and /readyz
 * with 200 "ok" or 503 and the reason (Kubernetes probes); other paths get
 * 404, other methods 405.
 */
#ifndef SLUICE_METRICS_H
#define SLUICE_METRICS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct sl_metrics;

/* Writes the exposition text (the body) to f. */
typedef void (*sl_metrics_render_fn)(void *ctx, FILE *f);
/* GET /healthz (ready false) and /readyz (ready true): 0 when healthy, or
 * else a negative errno with a one-line reason in why. */
typedef int (*sl_metrics_health_fn)(void *ctx, bool ready, char *why, size_t why_len);

struct sl_metrics_handlers {
	sl_metrics_render_fn render;
	sl_metrics_health_fn health;
	void *ctx;
};

/* Bind and listen on address (numeric host:port), register with epoll_fd.
 * 0 or a negative errno (logged, with the address). */
int sl_metrics_open(struct sl_metrics **out, const char *address, int epoll_fd,
		    const struct sl_metrics_handlers *h);
void sl_metrics_close(struct sl_metrics *m);
/* Whether fd (from an epoll event) belongs to the listener or a client;
 * if so, handle the event. */
bool sl_metrics_handle(struct sl_metrics *m, int fd, uint32_t events);
/* Drop clients past their deadline (call every tick). */
void sl_metrics_sweep(struct sl_metrics *m, uint64_t now_ns);
/* The listener's client handling (NULL: none), for its own counters. */
struct sl_reqsrv;
const struct sl_reqsrv *sl_metrics_server(const struct sl_metrics *m);

/* GET /metrics answered, and the pages rendered for them: a page is
 * rendered at most once per 10 ms, so a flood of scrapes costs a copy
 * each. */
struct sl_metrics_pages {
	uint64_t served, rendered;
};
void sl_metrics_pages(const struct sl_metrics *m, struct sl_metrics_pages *out);

/* The text itself is written with lib/prom.h. */

#endif
