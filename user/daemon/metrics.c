// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "daemon/metrics.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/hostport.h"
#include "lib/http_request.h"
#include "lib/log.h"

#include "daemon/request_server.h"

/* Scrapers send one short request at once; a slot is for a scrape, not a
 * connection parked by someone else.  Four slots are this host's alone
 * (the kubelet's probes come from the node's own address): a flood from
 * the network cannot push a probe out. */
static const struct sl_reqsrv_limits metrics_limits = {
	.max_clients = 16,
	.local_slots = 4,
	.request_max = 4096,
	.request_ns = 2000000000ULL,
	.total_ns = 5000000000ULL,
	.linger = true,
};

/* The page is rendered at most once this often: a flood of GETs costs the
 * loop a copy each, not a render each (at most 100 renders a second), and
 * a scrape sees the counters at most this old. */
#define PAGE_MIN_AGE_NS (10ull * 1000000ULL)

struct sl_metrics {
	struct sl_reqsrv *srv;
	struct sl_metrics_handlers h;
	char *page;             /* the last rendered body */
	size_t page_len;
	uint64_t page_ns;       /* when (0: never) */
	struct sl_metrics_pages pages;
};

static size_t request_complete(const char *buf, size_t len)
{
	return sl_http_request_end(buf, len);
}

/* HEAD gets the headers only, with the length GET would have. */
static void respond(FILE *out, int status, const char *reason, const char *type,
		    const char *body, size_t body_len, bool with_body)
{
	fprintf(out, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
		     "Connection: close\r\n\r\n", status, reason, type, body_len);
	if (with_body)
		fwrite(body, 1, body_len, out);
}

/* The page, rendered again only when the last one is PAGE_MIN_AGE_NS old. */
static bool current_page(struct sl_metrics *m)
{
	uint64_t now = sl_mono_ns();
	char *body = NULL;
	size_t len = 0;
	FILE *f;

	m->pages.served++;
	if (m->page && now - m->page_ns < PAGE_MIN_AGE_NS)
		return true;
	f = open_memstream(&body, &len);
	if (!f)
		return m->page != NULL; /* out of memory: the last page, if any */
	m->h.render(m->h.ctx, f);
	if (fclose(f)) {
		free(body);
		return m->page != NULL;
	}
	free(m->page);
	m->page = body;
	m->page_len = len;
	m->page_ns = now;
	m->pages.rendered++;
	return true;
}

static struct sl_reqsrv_more *answer(void *ctx, const struct sl_reqsrv_peer *peer, char *req,
				     size_t len, FILE *out)
{
	struct sl_metrics *m = ctx;
	struct sl_http_request r;
	bool body;

	(void)peer; /* HTTP: anyone who reaches the address */
	if (sl_http_parse_request(req, len, &r)) {
		respond(out, 400, "Bad Request", "text/plain", "bad request\n", 12, true);
		return NULL;
	}
	if (r.method == SL_HTTP_OTHER) {
		respond(out, 405, "Method Not Allowed", "text/plain", "GET /metrics\n", 13, true);
		return NULL;
	}
	body = r.method == SL_HTTP_GET;
	if (!strcmp(r.path, "/healthz") || !strcmp(r.path, "/readyz")) {
		char why[160] = "";
		int sick = m->h.health ? m->h.health(m->h.ctx, !strcmp(r.path, "/readyz"), why,
						      sizeof(why) - 1) : 0;

		if (!sick || !*why)
			snprintf(why, sizeof(why), "%s", sick ? "unhealthy" : "ok");
		strcat(why, "\n");
		respond(out, sick ? 503 : 200, sick ? "Service Unavailable" : "OK", "text/plain", why,
			strlen(why), body);
		return NULL;
	}
	if (strcmp(r.path, "/metrics")) {
		respond(out, 404, "Not Found", "text/plain", "try /metrics\n", 13, true);
		return NULL;
	}
	if (!current_page(m)) {
		respond(out, 503, "Service Unavailable", "text/plain", "out of memory\n", 14, true);
		return NULL;
	}
	respond(out, 200, "OK", "text/plain; version=0.0.4; charset=utf-8", m->page, m->page_len,
		body);
	return NULL;
}

int sl_metrics_open(struct sl_metrics **out, const char *address, int epoll_fd,
		    const struct sl_metrics_handlers *h)
{
	struct sockaddr_storage ss;
	struct sl_metrics *m;
	socklen_t len;
	char why[128];
	int one = 1, err, fd;

	if (sl_parse_hostport(address, &ss, &len, why, sizeof(why))) {
		pr_err("metrics address %s: %s", address, why);
		return -EINVAL;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->h = *h;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 64))
		goto fail;
	if (sl_addr_is_wildcard(&ss))
		pr_warn("metrics on %s answer every interface, the protected NIC's included, "
			"without authentication: bind the node's address or 127.0.0.1 "
			"(Server spec.metricsAddress, sluiced --metrics-address)", address);
	err = sl_reqsrv_open(&m->srv, fd, epoll_fd, &metrics_limits, request_complete, answer, m);
	if (err) {
		errno = -err;
		goto fail;
	}
	*out = m;
	return 0;
fail:
	err = -errno;
	pr_err("metrics listener on %s: %s", address, strerror(-err));
	if (fd >= 0)
		close(fd);
	free(m);
	return err;
}

void sl_metrics_close(struct sl_metrics *m)
{
	if (!m)
		return;
	sl_reqsrv_close(m->srv);
	free(m->page);
	free(m);
}

bool sl_metrics_handle(struct sl_metrics *m, int fd, uint32_t events)
{
	return m && sl_reqsrv_handle(m->srv, fd, events);
}

void sl_metrics_sweep(struct sl_metrics *m, uint64_t now_ns)
{
	if (m)
		sl_reqsrv_sweep(m->srv, now_ns);
}

const struct sl_reqsrv *sl_metrics_server(const struct sl_metrics *m)
{
	return m ? m->srv : NULL;
}

void sl_metrics_pages(const struct sl_metrics *m, struct sl_metrics_pages *out)
{
	*out = m ? m->pages : (struct sl_metrics_pages){0};
}
