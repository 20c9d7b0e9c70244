// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "daemon/request_server.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/hostport.h"

/* Accepts taken per readiness event: the listener stays readable (epoll is
 * level-triggered), so a connection flood is served in turns with
 * everything else the loop does. */
#define ACCEPT_BATCH 32

enum client_state {
	CL_FREE = 0,
	CL_READING,  /* request not complete yet */
	CL_WRITING,  /* answer being sent */
	CL_DRAINING, /* answer sent, write side shut: wait for the peer's close */
};

struct client {
	int fd;
	enum client_state state;
	char *req;              /* request_max + 1 bytes */
	size_t req_len;
	char *out;              /* the answer (or its current part) */
	size_t out_len, out_off;
	struct sl_reqsrv_more *more; /* renders the rest, or NULL */
	uint64_t accepted_ns;
	uint64_t progress_ns;   /* last time bytes moved (eviction order) */
	bool local;             /* this host (sl_peer_is_local) */
	struct sl_reqsrv_peer peer;
};

struct sl_reqsrv {
	int listen_fd, epoll_fd;
	struct sl_reqsrv_limits lim;
	sl_reqsrv_complete_fn complete;
	sl_reqsrv_answer_fn answer;
	void *ctx;
	struct sl_reqsrv_stats stats;
	struct client *clients;
};

int sl_reqsrv_open(struct sl_reqsrv **out, int listen_fd, int epoll_fd,
		   const struct sl_reqsrv_limits *limits, sl_reqsrv_complete_fn complete,
		   sl_reqsrv_answer_fn answer, void *ctx)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = listen_fd};
	struct sl_reqsrv *s;
	int err;

	if (!limits->max_clients || !limits->request_max)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->clients = calloc(limits->max_clients, sizeof(*s->clients));
	if (!s->clients) {
		free(s);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < limits->max_clients; i++) {
		s->clients[i].fd = -1;
		s->clients[i].req = malloc(limits->request_max + 1);
		if (!s->clients[i].req) {
			err = -ENOMEM;
			goto fail;
		}
	}
	s->listen_fd = listen_fd;
	s->epoll_fd = epoll_fd;
	s->lim = *limits;
	s->complete = complete;
	s->answer = answer;
	s->ctx = ctx;
	if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, listen_fd, &ev)) {
		err = -errno;
		goto fail;
	}
	*out = s;
	return 0;
fail:
	for (unsigned i = 0; i < limits->max_clients; i++)
		free(s->clients[i].req);
	free(s->clients);
	free(s);
	return err;
}

static void drop(struct sl_reqsrv *s, struct client *c)
{
	epoll_ctl(s->epoll_fd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c->out);
	c->out = NULL;
	if (c->more)
		c->more->release(c->more);
	c->more = NULL;
	c->out_len = c->out_off = c->req_len = 0;
	c->fd = -1;
	c->state = CL_FREE;
}

void sl_reqsrv_close(struct sl_reqsrv *s)
{
	if (!s)
		return;
	for (unsigned i = 0; i < s->lim.max_clients; i++) {
		if (s->clients[i].state != CL_FREE)
			drop(s, &s->clients[i]);
		free(s->clients[i].req);
	}
	epoll_ctl(s->epoll_fd, EPOLL_CTL_DEL, s->listen_fd, NULL);
	close(s->listen_fd);
	free(s->clients);
	free(s);
}

static void watch(struct sl_reqsrv *s, struct client *c, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.fd = c->fd};

	epoll_ctl(s->epoll_fd, EPOLL_CTL_MOD, c->fd, &ev);
}

/* The answer (or its first part), rendered into memory; then as much of
 * it as the socket takes. */
static void start_answer(struct sl_reqsrv *s, struct client *c, size_t req_len)
{
	FILE *f;

	c->req[req_len] = '\0';
	f = open_memstream(&c->out, &c->out_len);
	if (!f) {
		drop(s, c);
		return;
	}
	c->more = s->answer(s->ctx, &c->peer, c->req, req_len, f);
	if (fclose(f) || !c->out) {
		drop(s, c);
		return;
	}
	c->state = CL_WRITING;
	c->out_off = 0;
}

/* The client took the whole part: render the next one.  false when
 * nothing more follows (or it cannot be rendered: the client is dropped). */
static bool next_part(struct sl_reqsrv *s, struct client *c)
{
	bool more;
	FILE *f;

	if (!c->more)
		return false;
	free(c->out);
	c->out = NULL;
	c->out_len = c->out_off = 0;
	f = open_memstream(&c->out, &c->out_len);
	if (!f) {
		drop(s, c);
		return false;
	}
	more = c->more->next(c->more, f);
	if (!more) {
		c->more->release(c->more);
		c->more = NULL;
	}
	if (fclose(f) || !c->out) {
		drop(s, c);
		return false;
	}
	return true;
}

static void finish(struct sl_reqsrv *s, struct client *c)
{
	s->stats.answered++;
	if (!s->lim.linger) {
		drop(s, c);
		return;
	}
	shutdown(c->fd, SHUT_WR);
	c->state = CL_DRAINING;
	watch(s, c, EPOLLIN);
}

static void on_writable(struct sl_reqsrv *s, struct client *c)
{
	/* One part per call: a long answer is rendered across turns of the
	 * loop, as fast as the client reads it. */
	if (c->out_off == c->out_len && !next_part(s, c)) {
		if (c->state != CL_FREE)
			finish(s, c);
		return;
	}
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				watch(s, c, EPOLLOUT);
				return;
			}
			s->stats.hung_up++;
			drop(s, c);
			return;
		}
		c->out_off += (size_t)n;
		c->progress_ns = sl_mono_ns();
	}
	if (c->more) {
		watch(s, c, EPOLLOUT); /* the next part when the loop comes back */
		return;
	}
	finish(s, c);
}

static void on_readable(struct sl_reqsrv *s, struct client *c)
{
	size_t room = s->lim.request_max - c->req_len, done; /* > 0: a full buffer is dropped */
	ssize_t n;

	if (c->state == CL_DRAINING) {
		char sink[512];

		while ((n = recv(c->fd, sink, sizeof(sink), MSG_DONTWAIT)) > 0)
			;
		if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
			drop(s, c);
		return;
	}
	/* One read of what the budget has room for: a request arrives whole
	 * in one or two segments; a trickle only costs its own deadline. */
	n = recv(c->fd, c->req + c->req_len, room, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (n <= 0) {
		s->stats.hung_up++;
		drop(s, c);
		return;
	}
	c->req_len += (size_t)n;
	c->progress_ns = sl_mono_ns();
	done = s->complete(c->req, c->req_len);
	if (!done) {
		if (c->req_len >= s->lim.request_max) {
			s->stats.oversized++;
			drop(s, c);
		}
		return;
	}
	start_answer(s, c, done);
	if (c->state == CL_WRITING)
		on_writable(s, c);
}

/* Which of two busy clients to evict first: answered ones (they have what
 * they came for), then the one whose bytes moved least recently. */
static bool evict_before(const struct client *a, const struct client *b)
{
	if (!b)
		return true;
	if ((a->state == CL_DRAINING) != (b->state == CL_DRAINING))
		return a->state == CL_DRAINING;
	return a->progress_ns < b->progress_ns;
}

/* The slot for a new client, or NULL (refused).  A remote newcomer takes a
 * free slot while remote clients hold fewer than max_clients - local_slots,
 * else evicts the remote client first in line; it never evicts a local
 * one.  A local newcomer takes a free slot, else evicts a remote client,
 * else a local one. */
static struct client *slot_for_new(struct sl_reqsrv *s, bool local)
{
	struct client *free_slot = NULL, *remote_victim = NULL, *local_victim = NULL, *victim;
	unsigned remote = 0, reserved = s->lim.local_slots < s->lim.max_clients
					       ? s->lim.local_slots : s->lim.max_clients - 1;

	for (unsigned i = 0; i < s->lim.max_clients; i++) {
		struct client *c = &s->clients[i];

		if (c->state == CL_FREE) {
			if (!free_slot)
				free_slot = c;
		} else if (c->local) {
			if (evict_before(c, local_victim))
				local_victim = c;
		} else {
			remote++;
			if (evict_before(c, remote_victim))
				remote_victim = c;
		}
	}
	if (!local && remote >= s->lim.max_clients - reserved)
		victim = remote_victim;
	else if (free_slot)
		return free_slot;
	else
		victim = remote_victim ? remote_victim : local ? local_victim : NULL;
	if (!victim) {
		s->stats.refused++;
		return NULL;
	}
	s->stats.evicted++;
	drop(s, victim);
	return victim;
}

/* Whether the peer of an accepted connection is this host. */
static bool accepted_local(int fd)
{
	struct sockaddr_storage peer, self;
	socklen_t pl = sizeof(peer), sl = sizeof(self);

	if (getpeername(fd, (struct sockaddr *)&peer, &pl) ||
	    getsockname(fd, (struct sockaddr *)&self, &sl))
		return false;
	return sl_peer_is_local(&peer, &self);
}

static void accept_clients(struct sl_reqsrv *s)
{
	for (int i = 0; i < ACCEPT_BATCH; i++) {
		struct epoll_event ev = {.events = EPOLLIN};
		struct client *c;
		int fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		bool local;

		if (fd < 0)
			return;
		local = accepted_local(fd);
		c = slot_for_new(s, local);
		if (!c) {
			close(fd);
			continue;
		}
		ev.data.fd = fd;
		if (epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, fd, &ev)) {
			close(fd);
			continue;
		}
		s->stats.accepted++;
		c->fd = fd;
		c->local = local;
		c->state = CL_READING;
		c->req_len = 0;
		c->accepted_ns = c->progress_ns = sl_mono_ns();
		{
			struct ucred cred;
			socklen_t len = sizeof(cred);

			c->peer = (struct sl_reqsrv_peer){0};
			if (!getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) && len == sizeof(cred))
				c->peer = (struct sl_reqsrv_peer){.known = true, .uid = cred.uid,
								  .gid = cred.gid, .pid = cred.pid};
		}
		/* The request is often there already: answer it now, before
		 * more arrivals can compete for the slot. */
		on_readable(s, c);
	}
}

bool sl_reqsrv_handle(struct sl_reqsrv *s, int fd, uint32_t events)
{
	if (!s)
		return false;
	if (fd == s->listen_fd) {
		accept_clients(s);
		return true;
	}
	for (unsigned i = 0; i < s->lim.max_clients; i++) {
		struct client *c = &s->clients[i];

		if (c->state == CL_FREE || c->fd != fd)
			continue;
		if (c->state == CL_WRITING) {
			if (events & (EPOLLERR | EPOLLHUP)) {
				s->stats.hung_up++;
				drop(s, c);
			} else {
				on_writable(s, c);
			}
		} else {
			on_readable(s, c);
		}
		return true;
	}
	return false;
}

void sl_reqsrv_sweep(struct sl_reqsrv *s, uint64_t now_ns)
{
	if (!s)
		return;
	for (unsigned i = 0; i < s->lim.max_clients; i++) {
		struct client *c = &s->clients[i];
		uint64_t age;

		if (c->state == CL_FREE)
			continue;
		age = now_ns - c->accepted_ns;
		if (age > s->lim.total_ns || (c->state == CL_READING && age > s->lim.request_ns)) {
			s->stats.timed_out++;
			drop(s, c);
		}
	}
}

void sl_reqsrv_stats(const struct sl_reqsrv *s, struct sl_reqsrv_stats *out)
{
	*out = s ? s->stats : (struct sl_reqsrv_stats){0};
}

unsigned sl_reqsrv_clients(const struct sl_reqsrv *s)
{
	unsigned n = 0;

	for (unsigned i = 0; s && i < s->lim.max_clients; i++)
		n += s->clients[i].state != CL_FREE;
	return n;
}
