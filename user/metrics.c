#include "metrics.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "hostport.h"
#include "log.h"

#define MAX_CLIENTS   8
#define REQUEST_MAX   2048
#define CLIENT_TTL_NS (5ULL * 1000000000ULL)

struct client {
	int fd;                 /* -1: free slot */
	char req[REQUEST_MAX];
	size_t req_len;
	char *out;              /* the response, once the request is complete */
	size_t out_len, out_off;
	bool draining;          /* response sent, write side shut: wait for the peer's close */
	uint64_t deadline_ns;
};

struct sl_metrics {
	int listen_fd, epoll_fd;
	sl_metrics_render_fn render;
	void *ctx;
	struct client clients[MAX_CLIENTS];
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int sl_metrics_open(struct sl_metrics **out, const char *address, int epoll_fd,
		    sl_metrics_render_fn render, void *ctx)
{
	struct epoll_event ev = {.events = EPOLLIN};
	struct sockaddr_storage ss;
	struct sl_metrics *m;
	socklen_t len;
	char why[128];
	int one = 1, err;

	if (sl_parse_hostport(address, &ss, &len, why, sizeof(why))) {
		pr_err("metrics address %s: %s", address, why);
		return -EINVAL;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	for (int i = 0; i < MAX_CLIENTS; i++)
		m->clients[i].fd = -1;
	m->epoll_fd = epoll_fd;
	m->render = render;
	m->ctx = ctx;
	m->listen_fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (m->listen_fd < 0)
		goto fail;
	setsockopt(m->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(m->listen_fd, (struct sockaddr *)&ss, len) || listen(m->listen_fd, 16))
		goto fail;
	ev.data.fd = m->listen_fd;
	if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, m->listen_fd, &ev))
		goto fail;
	*out = m;
	return 0;
fail:
	err = -errno;
	pr_err("metrics listener on %s: %s", address, strerror(-err));
	if (m->listen_fd >= 0)
		close(m->listen_fd);
	free(m);
	return err;
}

static void drop(struct sl_metrics *m, struct client *c)
{
	epoll_ctl(m->epoll_fd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c->out);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

void sl_metrics_close(struct sl_metrics *m)
{
	if (!m)
		return;
	for (int i = 0; i < MAX_CLIENTS; i++)
		if (m->clients[i].fd >= 0)
			drop(m, &m->clients[i]);
	epoll_ctl(m->epoll_fd, EPOLL_CTL_DEL, m->listen_fd, NULL);
	close(m->listen_fd);
	free(m);
}

static void accept_clients(struct sl_metrics *m)
{
	for (;;) {
		struct epoll_event ev = {.events = EPOLLIN};
		struct client *c = NULL;
		int fd = accept4(m->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			return;
		for (int i = 0; i < MAX_CLIENTS && !c; i++)
			if (m->clients[i].fd < 0)
				c = &m->clients[i];
		if (!c) {
			close(fd); /* busy: the scraper retries */
			continue;
		}
		ev.data.fd = fd;
		if (epoll_ctl(m->epoll_fd, EPOLL_CTL_ADD, fd, &ev)) {
			close(fd);
			continue;
		}
		c->fd = fd;
		c->req_len = 0;
		c->deadline_ns = mono_ns() + CLIENT_TTL_NS;
	}
}

/* The whole response into c->out; HEAD gets the headers only (with the
 * length GET would have). */
static void respond(struct client *c, int status, const char *reason, const char *type,
		    const char *body, size_t body_len, bool with_body)
{
	FILE *f = open_memstream(&c->out, &c->out_len);

	if (!f)
		return;
	fprintf(f, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
		   "Connection: close\r\n\r\n", status, reason, type, body_len);
	if (with_body)
		fwrite(body, 1, body_len, f);
	fclose(f);
}

/* The request line is all that matters: METHOD SP PATH SP VERSION. */
static void answer(struct sl_metrics *m, struct client *c)
{
	char *nl = memchr(c->req, '\n', c->req_len), *sp, *path, *q;
	char *body = NULL;
	size_t body_len = 0;
	FILE *f;

	*nl = '\0';
	sp = strchr(c->req, ' ');
	if (!sp) {
		respond(c, 400, "Bad Request", "text/plain", "bad request\n", 12, true);
		return;
	}
	*sp = '\0';
	path = sp + 1;
	sp = strchr(path, ' ');
	if (sp)
		*sp = '\0';
	q = strchr(path, '?');
	if (q)
		*q = '\0';
	if (strcmp(c->req, "GET") && strcmp(c->req, "HEAD")) {
		respond(c, 405, "Method Not Allowed", "text/plain", "GET /metrics\n", 13, true);
		return;
	}
	if (strcmp(path, "/metrics")) {
		respond(c, 404, "Not Found", "text/plain", "try /metrics\n", 13, true);
		return;
	}
	f = open_memstream(&body, &body_len);
	if (!f)
		return;
	m->render(m->ctx, f);
	fclose(f);
	respond(c, 200, "OK", "text/plain; version=0.0.4; charset=utf-8", body, body_len,
		strcmp(c->req, "HEAD") != 0);
	free(body);
}

/* The request is complete at the blank line that ends its headers. */
static bool request_complete(const struct client *c)
{
	return memmem(c->req, c->req_len, "\r\n\r\n", 4) || memmem(c->req, c->req_len, "\n\n", 2);
}

static void on_client(struct sl_metrics *m, struct client *c, uint32_t events)
{
	char sink[512];
	ssize_t n;

	if (c->draining) {
		/* Lingering close: closing with the client's bytes still
		 * arriving would answer them with a RST, which makes the
		 * client's kernel drop the response it has not read yet. */
		while ((n = read(c->fd, sink, sizeof(sink))) > 0)
			;
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			drop(m, c);
		return;
	}
	if (events & (EPOLLERR | EPOLLHUP) && !(events & EPOLLIN)) {
		drop(m, c);
		return;
	}
	if (!c->out) {
		n = read(c->fd, c->req + c->req_len, sizeof(c->req) - 1 - c->req_len);
		if (n <= 0) {
			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				return;
			drop(m, c);
			return;
		}
		c->req_len += (size_t)n;
		if (!request_complete(c)) {
			if (c->req_len >= sizeof(c->req) - 1)
				drop(m, c); /* no end of headers in 2 KiB */
			return;
		}
		answer(m, c);
		if (!c->out) {
			drop(m, c);
			return;
		}
	}
	while (c->out_off < c->out_len) {
		n = write(c->fd, c->out + c->out_off, c->out_len - c->out_off);
		if (n < 0) {
			if (errno == EAGAIN) {
				struct epoll_event ev = {.events = EPOLLOUT, .data.fd = c->fd};

				epoll_ctl(m->epoll_fd, EPOLL_CTL_MOD, c->fd, &ev);
				return;
			}
			drop(m, c);
			return;
		}
		c->out_off += (size_t)n;
	}
	/* All sent: half-close, then wait (bounded by the deadline) for the
	 * client to close its side. */
	{
		struct epoll_event ev = {.events = EPOLLIN, .data.fd = c->fd};

		shutdown(c->fd, SHUT_WR);
		epoll_ctl(m->epoll_fd, EPOLL_CTL_MOD, c->fd, &ev);
		c->draining = true;
	}
}

bool sl_metrics_handle(struct sl_metrics *m, int fd, uint32_t events)
{
	if (!m)
		return false;
	if (fd == m->listen_fd) {
		accept_clients(m);
		return true;
	}
	for (int i = 0; i < MAX_CLIENTS; i++) {
		if (m->clients[i].fd == fd) {
			on_client(m, &m->clients[i], events);
			return true;
		}
	}
	return false;
}

void sl_metrics_sweep(struct sl_metrics *m, uint64_t now_ns)
{
	if (!m)
		return;
	for (int i = 0; i < MAX_CLIENTS; i++)
		if (m->clients[i].fd >= 0 && now_ns > m->clients[i].deadline_ns)
			drop(m, &m->clients[i]);
}

void sl_metrics_label(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', f), fputc(*v, f);
		else if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

void sl_metrics_value(FILE *f, double v)
{
	if (isnan(v))
		fputs("NaN", f);
	else if (isinf(v))
		fputs(v > 0 ? "+Inf" : "-Inf", f);
	else
		fprintf(f, "%.17g", v);
}
