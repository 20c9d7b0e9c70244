/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A one-request-per-connection server for the daemon's epoll loop
 * (adapter): accept, read one request, write one answer, close.  Used by
 * the control socket and the metrics listener.
 *
 * Nothing a client does can make the loop wait: every socket is
 * non-blocking and every read or write is one system call that moves what
 * the kernel has room for; a request has a byte budget and a deadline, the
 * whole exchange a second deadline; accepts are taken a bounded batch at a
 * time; and when every slot is busy, the client that has made progress
 * least recently is evicted to make room for the new one (a silent or
 * trickling client loses its slot to a real one, not the other way round),
 * and clients from the network never evict this host's own (local_slots).
 * Writes never raise SIGPIPE (MSG_NOSIGNAL): a client that hangs up early
 * costs its own answer, nothing else.
 */
#ifndef SLUICE_REQUEST_SERVER_H
#define SLUICE_REQUEST_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct sl_reqsrv;

struct sl_reqsrv_limits {
	unsigned max_clients;  /* slots; the least recently progressing client is evicted */
	unsigned local_slots;  /* of them, the slots only this host's clients may take
				* (sl_peer_is_local: the kubelet's probe), and a remote
				* newcomer evicts only a remote client: a flood from the
				* network never pushes out a local probe */
	size_t request_max;    /* bytes a request may take, its terminator included */
	uint64_t request_ns;   /* from accept to a complete request */
	uint64_t total_ns;     /* from accept to the last byte of the answer */
	bool linger;           /* TCP: after the answer, half-close and drain the peer's
				* bytes until it closes (closing with unread request
				* bytes would send a RST that loses the answer) */
};

/* Where a request ends: its length (> 0) once complete, 0 while more bytes
 * are needed. */
typedef size_t (*sl_reqsrv_complete_fn)(const char *buf, size_t len);

/* An answer too long to render in one go (a dump of many thousands of
 * queues): next() writes its next part to out and returns whether more
 * follows; it is called each time the client has taken all of the
 * previous part, so one turn of the loop renders one part.  release()
 * frees it, also when the client goes away before the end. */
struct sl_reqsrv_more {
	bool (*next)(struct sl_reqsrv_more *more, FILE *out);
	void (*release)(struct sl_reqsrv_more *more);
};

/* Who asked: the peer's credentials as the kernel gave them at accept
 * (SO_PEERCRED, Unix sockets only; known false elsewhere). */
struct sl_reqsrv_peer {
	bool known;
	uid_t uid;
	gid_t gid;
	pid_t pid;
};

/* Answer a complete request (NUL-terminated at len) from peer: write the
 * answer, or its first part, to out, an in-memory stream.  Returns NULL
 * when that is the whole answer, else what renders the rest. */
typedef struct sl_reqsrv_more *(*sl_reqsrv_answer_fn)(void *ctx, const struct sl_reqsrv_peer *peer,
						      char *request, size_t len, FILE *out);

struct sl_reqsrv_stats {
	uint64_t accepted;
	uint64_t answered;   /* answers written completely */
	uint64_t evicted;    /* made room for a newer client */
	uint64_t timed_out;  /* past a deadline */
	uint64_t oversized;  /* request longer than request_max */
	uint64_t hung_up;    /* closed or reset by the peer before the end */
	uint64_t refused;    /* remote newcomers with no slot they may take */
};

/* Serve listen_fd (non-blocking, listening) from epoll_fd.  The server
 * owns listen_fd from here on.  0 or a negative errno. */
int sl_reqsrv_open(struct sl_reqsrv **out, int listen_fd, int epoll_fd,
		   const struct sl_reqsrv_limits *limits, sl_reqsrv_complete_fn complete,
		   sl_reqsrv_answer_fn answer, void *ctx);
void sl_reqsrv_close(struct sl_reqsrv *s);

/* Whether fd (from an epoll event) is the listener or one of its clients;
 * if so, the event has been handled. */
bool sl_reqsrv_handle(struct sl_reqsrv *s, int fd, uint32_t events);

/* Drop clients past a deadline (call every tick). */
void sl_reqsrv_sweep(struct sl_reqsrv *s, uint64_t now_ns);

void sl_reqsrv_stats(const struct sl_reqsrv *s, struct sl_reqsrv_stats *out);
unsigned sl_reqsrv_clients(const struct sl_reqsrv *s);

#endif
