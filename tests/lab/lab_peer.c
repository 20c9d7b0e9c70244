/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * lab_peer: clients of a request/answer socket (sluiced's control socket,
 * its metrics listener) that behave well or badly, for the tests that
 * prove no client can crash or stall the daemon.
 *
 * N connections are opened at once; each sends the request (all at once,
 * or trickled a byte every --trickle-ms) and then, by --mode:
 *   read      reads the answer to its end (a well-behaved client)
 *   hangup    closes right after sending, before the answer comes
 *   silent    sends nothing at all and holds the connection
 *   noread    sends the request, never reads, holds the connection
 * Connections are held at most --hold seconds; the whole run is bounded.
 * The summary says how many connected, how many got an answer (bytes > 0
 * and an orderly end), and the slowest answer.
 *
 * Build: gcc -std=gnu11 -O2 -g -Wall -Wextra -Werror -o build/lab_peer tests/lab/lab_peer.c
 */
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define PROG "lab_peer"
#include "lab_cli.h"

#define MAX_CLIENTS 1024
#define MAX_REQUEST 4096

enum mode { M_READ, M_HANGUP, M_SILENT, M_NOREAD };

struct peer {
	int fd;
	size_t sent;       /* request bytes sent */
	size_t got;        /* answer bytes read */
	bool answered;     /* read to an orderly end with bytes */
	bool done;
	int64_t next_send_ns;
	int64_t end_ns;
	int64_t answer_ns; /* when the answer ended */
};

static struct {
	const char *unix_path, *tcp;
	char request[MAX_REQUEST];
	size_t request_len;
	enum mode mode;
	long clients;
	long trickle_ms;
	double hold_s;
	bool json;
	bool print;
} opt = {.clients = 1, .hold_s = 5};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: lab_peer (--unix PATH | --tcp HOST:PORT) [OPTIONS]\n\n"
		"Open N client connections to a request/answer server and behave as told.\n\n"
		"  --unix PATH        a Unix stream socket (the daemon's control socket)\n"
		"  --tcp HOST:PORT    a TCP server (numeric host; the metrics listener)\n"
		"  --send TEXT        the request; \\n and \\r are turned into line ends\n"
		"  --mode MODE        read (default), hangup, silent or noread\n"
		"  --clients N        connections opened at once (1..%d, default 1)\n"
		"  --trickle-ms MS    send the request one byte every MS milliseconds\n"
		"  --hold S           keep connections at most S seconds (0..60, default 5)\n"
		"  --json             one JSON summary line\n"
		"  --print            write the answers to standard output (no summary)\n"
		"  -h, --help         this text\n\n"
		"Summary: clients, connected, answered (an answer read to its end), bytes,\n"
		"slowest_ms (connect to the end of the slowest answer).\n",
		MAX_CLIENTS);
}

static void unescape(const char *in)
{
	size_t n = 0;

	for (; *in && n + 1 < sizeof(opt.request); in++) {
		if (in[0] == '\\' && (in[1] == 'n' || in[1] == 'r')) {
			opt.request[n++] = in[1] == 'n' ? '\n' : '\r';
			in++;
		} else {
			opt.request[n++] = *in;
		}
	}
	if (*in)
		usage_error("--send: at most %d bytes", MAX_REQUEST - 1);
	opt.request_len = n;
}

static void parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{"unix", required_argument, NULL, 'u'},
		{"tcp", required_argument, NULL, 't'},
		{"send", required_argument, NULL, 's'},
		{"mode", required_argument, NULL, 'm'},
		{"clients", required_argument, NULL, 'n'},
		{"trickle-ms", required_argument, NULL, 'k'},
		{"hold", required_argument, NULL, 'H'},
		{"json", no_argument, NULL, 'j'},
		{"print", no_argument, NULL, 'p'},
		{"help", no_argument, NULL, 'h'},
		{},
	};
	static const char *const modes[] = {"read", "hangup", "silent", "noread"};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'u': opt.unix_path = optarg; break;
		case 't': opt.tcp = optarg; break;
		case 's': unescape(optarg); break;
		case 'm': {
			size_t i;

			for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
				if (!strcmp(optarg, modes[i]))
					break;
			if (i == sizeof(modes) / sizeof(modes[0]))
				usage_error("--mode: '%s' is not read, hangup, silent or noread", optarg);
			opt.mode = (enum mode)i;
			break;
		}
		case 'n': opt.clients = parse_long("clients", optarg, 1, MAX_CLIENTS); break;
		case 'k': opt.trickle_ms = parse_long("trickle-ms", optarg, 1, 10000); break;
		case 'H': opt.hold_s = parse_double("hold", optarg, 0, 60); break;
		case 'j': opt.json = true; break;
		case 'p': opt.print = true; break;
		case 'h': usage(stdout); exit(0);
		default: report_bad_option(argv[optind - 1]);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (!opt.unix_path == !opt.tcp)
		usage_error("give one of --unix PATH and --tcp HOST:PORT");
}

static int open_conn(void)
{
	int fd;

	if (opt.unix_path) {
		struct sockaddr_un sa = {.sun_family = AF_UNIX};

		if (strlen(opt.unix_path) >= sizeof(sa.sun_path))
			usage_error("--unix: path too long");
		strcpy(sa.sun_path, opt.unix_path);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			close(fd);
			return -1;
		}
		return fd;
	} else {
		char host[256], *colon;
		struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST |
										 AI_NUMERICSERV};
		struct addrinfo *ai;

		snprintf(host, sizeof(host), "%s", opt.tcp);
		colon = strrchr(host, ':');
		if (!colon)
			usage_error("--tcp: expected HOST:PORT, got '%s'", opt.tcp);
		*colon = '\0';
		if (host[0] == '[') {
			memmove(host, host + 1, strlen(host));
			host[strcspn(host, "]")] = '\0';
		}
		if (getaddrinfo(host, colon + 1, &hints, &ai))
			usage_error("--tcp: '%s' is not a numeric HOST:PORT", opt.tcp);
		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen)) {
			close(fd);
			fd = -1;
		}
		freeaddrinfo(ai);
		return fd;
	}
}

/* Send what is due: the whole request, or the next trickled byte. */
static void send_due(struct peer *p, int64_t now)
{
	size_t n;
	ssize_t w;

	if (opt.mode == M_SILENT || p->sent == opt.request_len || now < p->next_send_ns)
		return;
	n = opt.trickle_ms ? 1 : opt.request_len - p->sent;
	w = send(p->fd, opt.request + p->sent, n, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (w > 0)
		p->sent += (size_t)w;
	else if (w < 0 && errno != EAGAIN)
		p->done = true;
	p->next_send_ns = now + opt.trickle_ms * 1000000LL;
	if (p->sent == opt.request_len && opt.mode == M_HANGUP)
		p->done = true;
}

int main(int argc, char **argv)
{
	static struct peer peers[MAX_CLIENTS];
	static struct pollfd pfds[MAX_CLIENTS];
	long connected = 0, answered = 0, open_n;
	unsigned long long bytes = 0;
	int64_t start, slowest = 0;

	parse_args(argc, argv);
	start = now_ns();
	for (long i = 0; i < opt.clients; i++) {
		struct peer *p = &peers[i];

		p->fd = open_conn();
		p->end_ns = start + (int64_t)(opt.hold_s * 1e9);
		p->next_send_ns = start;
		if (p->fd < 0) {
			p->done = true;
			continue;
		}
		connected++;
	}
	for (;;) {
		int64_t now = now_ns(), wait_ns = 50 * 1000000LL;

		open_n = 0;
		for (long i = 0; i < opt.clients; i++) {
			struct peer *p = &peers[i];

			pfds[i].fd = -1;
			if (p->done || now >= p->end_ns) {
				if (p->fd >= 0)
					close(p->fd);
				p->fd = -1;
				p->done = true;
				continue;
			}
			send_due(p, now);
			if (p->done)
				continue;
			open_n++;
			pfds[i].fd = p->fd;
			pfds[i].events = opt.mode == M_READ ? POLLIN : 0;
			if (p->sent < opt.request_len && opt.trickle_ms &&
			    p->next_send_ns - now < wait_ns)
				wait_ns = p->next_send_ns - now;
		}
		if (!open_n)
			break;
		poll(pfds, (nfds_t)opt.clients, (int)(wait_ns / 1000000LL) + 1);
		for (long i = 0; i < opt.clients; i++) {
			struct peer *p = &peers[i];
			char buf[65536];
			ssize_t r;

			if (pfds[i].fd < 0 || !(pfds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			r = recv(p->fd, buf, sizeof(buf), MSG_DONTWAIT);
			if (r > 0) {
				if (opt.print)
					fwrite(buf, 1, (size_t)r, stdout);
				p->got += (size_t)r;
				bytes += (unsigned long long)r;
				continue;
			}
			if (r < 0 && errno == EAGAIN)
				continue;
			p->done = true;
			if (r == 0 && p->got) {
				p->answered = true;
				p->answer_ns = now_ns() - start;
				answered++;
				if (p->answer_ns > slowest)
					slowest = p->answer_ns;
			}
		}
	}
	if (opt.print)
		return answered ? 0 : 1;
	if (opt.json)
		printf("{\"clients\":%ld,\"connected\":%ld,\"answered\":%ld,\"bytes\":%llu,"
		       "\"slowest_ms\":%.3f}\n", opt.clients, connected, answered, bytes,
		       (double)slowest / 1e6);
	else
		printf("%ld clients, %ld connected, %ld answered, %llu bytes, slowest %.3f ms\n",
		       opt.clients, connected, answered, bytes, (double)slowest / 1e6);
	return 0;
}
