#include "daemon/metrics.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/hostport.h"
#include "lib/log.h"

#include "daemon/request_server.h"

/* Scrapers send one short request at once; a slot is for a scrape, not a
 * connection parked by someone else. */
static const struct sl_reqsrv_limits metrics_limits = {
	.max_clients = 16,
	.request_max = 4096,
	.request_ns = 2000000000ULL,
	.total_ns = 5000000000ULL,
	.linger = true,
};

struct sl_metrics {
	struct sl_reqsrv *srv;
	struct sl_metrics_handlers h;
};

/* The request is complete at the blank line that ends its headers. */
static size_t request_complete(const char *buf, size_t len)
{
	const char *end = memmem(buf, len, "\r\n\r\n", 4);

	if (end)
		return (size_t)(end - buf) + 4;
	end = memmem(buf, len, "\n\n", 2);
	return end ? (size_t)(end - buf) + 2 : 0;
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

/* The request line is all that matters: METHOD SP PATH SP VERSION. */
static struct sl_reqsrv_more *answer(void *ctx, const struct sl_reqsrv_peer *peer, char *req,
				     size_t len, FILE *out)
{
	struct sl_metrics *m = ctx;
	char *nl = memchr(req, '\n', len), *sp, *path, *q;
	char *body = NULL;
	size_t body_len = 0;
	FILE *f;

	(void)peer; /* HTTP: anyone who reaches the address */
	*nl = '\0';
	sp = strchr(req, ' ');
	if (!sp) {
		respond(out, 400, "Bad Request", "text/plain", "bad request\n", 12, true);
		return NULL;
	}
	*sp = '\0';
	path = sp + 1;
	sp = strchr(path, ' ');
	if (sp)
		*sp = '\0';
	q = strchr(path, '?');
	if (q)
		*q = '\0';
	if (strcmp(req, "GET") && strcmp(req, "HEAD")) {
		respond(out, 405, "Method Not Allowed", "text/plain", "GET /metrics\n", 13, true);
		return NULL;
	}
	if (!strcmp(path, "/healthz") || !strcmp(path, "/readyz")) {
		char why[160] = "";
		int sick = m->h.health ? m->h.health(m->h.ctx, !strcmp(path, "/readyz"), why,
						      sizeof(why) - 1) : 0;

		if (!sick || !*why)
			snprintf(why, sizeof(why), "%s", sick ? "unhealthy" : "ok");
		strcat(why, "\n");
		respond(out, sick ? 503 : 200, sick ? "Service Unavailable" : "OK", "text/plain", why,
			strlen(why), strcmp(req, "HEAD") != 0);
		return NULL;
	}
	if (strcmp(path, "/metrics")) {
		respond(out, 404, "Not Found", "text/plain", "try /metrics\n", 13, true);
		return NULL;
	}
	f = open_memstream(&body, &body_len);
	if (!f)
		return NULL;
	m->h.render(m->h.ctx, f);
	fclose(f);
	respond(out, 200, "OK", "text/plain; version=0.0.4; charset=utf-8", body, body_len,
		strcmp(req, "HEAD") != 0);
	free(body);
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
