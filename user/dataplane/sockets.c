// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* TCP sockets of the namespace through NETLINK_SOCK_DIAG.  See sockets.h. */
#include "dataplane/sockets.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>

/* States that hold a connection (and a seat, for a tracked one). */
#define LIVE_STATES ((1u << TCP_ESTABLISHED) | (1u << TCP_SYN_RECV) | (1u << TCP_FIN_WAIT1) | \
		     (1u << TCP_FIN_WAIT2) | (1u << TCP_CLOSE_WAIT) | (1u << TCP_LAST_ACK) | \
		     (1u << TCP_CLOSING) | (1u << 12 /* TCP_NEW_SYN_RECV */))

static const uint8_t v4_mapped[12] = {[10] = 0xff, [11] = 0xff};

int sl_conn_key_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct sluice_conn_key));
}

static int push(struct sl_live_sockets *s, size_t *cap, const struct inet_diag_msg *m)
{
	struct sluice_conn_key *k;

	if (s->n == *cap) {
		size_t ncap = *cap ? 2 * *cap : 1024;
		struct sluice_conn_key *nk = realloc(s->keys, ncap * sizeof(*nk));

		if (!nk)
			return -ENOMEM;
		s->keys = nk;
		*cap = ncap;
	}
	k = &s->keys[s->n++];
	memset(k, 0, sizeof(*k));
	/* Seen from the server: s = the peer (idiag_dst), d = local (idiag_src). */
	if (m->idiag_family == AF_INET) {
		memcpy(k->saddr, v4_mapped, 12);
		memcpy(k->saddr + 12, m->id.idiag_dst, 4);
		memcpy(k->daddr, v4_mapped, 12);
		memcpy(k->daddr + 12, m->id.idiag_src, 4);
		k->family = 4;
	} else {
		memcpy(k->saddr, m->id.idiag_dst, 16);
		memcpy(k->daddr, m->id.idiag_src, 16);
		k->family = memcmp(k->saddr, v4_mapped, 12) ? 6 : 4;
	}
	k->sport = m->id.idiag_dport;
	k->dport = m->id.idiag_sport;
	return 0;
}

static int ask(struct sl_sock_dump *d, uint8_t family)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 req;
	} rq = {
		.nlh = {.nlmsg_len = sizeof(rq), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP, .nlmsg_seq = family},
		.req = {.sdiag_family = family, .sdiag_protocol = IPPROTO_TCP, .idiag_states = LIVE_STATES},
	};
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};

	d->family = family;
	return sendto(d->fd, &rq, sizeof(rq), 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0
		       ? -errno : 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int sl_sock_dump_begin(struct sl_sock_dump *d)
{
	int err;

	memset(d, 0, sizeof(*d));
	d->begun_ns = now_ns();
	d->fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_SOCK_DIAG);
	if (d->fd < 0) {
		err = -errno;
		d->fd = -1;
		return err;
	}
	err = ask(d, AF_INET);
	if (err)
		sl_sock_dump_abort(d);
	return err;
}

bool sl_sock_dump_running(const struct sl_sock_dump *d)
{
	return d->fd >= 0;
}

void sl_sock_dump_abort(struct sl_sock_dump *d)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
	sl_live_sockets_free(&d->s);
}

/* One datagram's messages: 1 at the family's end, 0 for more, or -errno. */
static int take(struct sl_sock_dump *d, const char *buf, ssize_t len)
{
	const struct nlmsghdr *h;

	for (h = (const struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)len); h = NLMSG_NEXT(h, len)) {
		if (h->nlmsg_seq != d->family)
			continue;
		if (h->nlmsg_type == NLMSG_DONE)
			return 1;
		if (h->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(h);

			return e->error ? e->error : -EIO;
		}
		if (h->nlmsg_type == SOCK_DIAG_BY_FAMILY &&
		    h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct inet_diag_msg))) {
			int err = push(&d->s, &d->cap, NLMSG_DATA(h));

			if (err)
				return err;
		}
	}
	return 0;
}

int sl_sock_dump_continue(struct sl_sock_dump *d, uint64_t budget_ns)
{
	static char buf[32768] __attribute__((aligned(NLMSG_ALIGNTO)));
	uint64_t t0 = now_ns();
	int err = 0;

	if (d->fd < 0)
		return -EINVAL;
	for (;;) {
		ssize_t len = recv(d->fd, buf, sizeof(buf), 0);

		if (len < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK) {
				err = -errno;
				break;
			}
			if (budget_ns != SL_SOCK_DUMP_WAIT)
				return 0; /* nothing ready: the next call reads on */
			{
				struct pollfd p = {.fd = d->fd, .events = POLLIN};

				if (poll(&p, 1, 5000) == 0) {
					err = -ETIMEDOUT;
					break;
				}
			}
			continue;
		}
		err = take(d, buf, len);
		if (err < 0)
			break;
		if (err == 1) {
			err = 0;
			if (d->family == AF_INET) {
				err = ask(d, AF_INET6);
				if (err)
					break;
			} else {
				close(d->fd);
				d->fd = -1;
				if (d->s.n)
					qsort(d->s.keys, d->s.n, sizeof(*d->s.keys), sl_conn_key_cmp);
				return 1;
			}
		}
		if (budget_ns != SL_SOCK_DUMP_WAIT && now_ns() - t0 >= budget_ns)
			return 0;
	}
	sl_sock_dump_abort(d);
	return err;
}

int sl_live_sockets_read(struct sl_live_sockets *out)
{
	struct sl_sock_dump d;
	int err = sl_sock_dump_begin(&d);

	if (!err)
		err = sl_sock_dump_continue(&d, SL_SOCK_DUMP_WAIT);
	if (err < 0)
		return err;
	*out = d.s;
	return 0;
}

bool sl_live_sockets_has(const struct sl_live_sockets *s, const struct sluice_conn_key *k)
{
	struct sluice_conn_key probe = *k;

	memset(probe.pad, 0, sizeof(probe.pad));
	return s->n && bsearch(&probe, s->keys, s->n, sizeof(*s->keys), sl_conn_key_cmp);
}

void sl_live_sockets_free(struct sl_live_sockets *s)
{
	free(s->keys);
	s->keys = NULL;
	s->n = 0;
}
