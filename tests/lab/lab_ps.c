/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * lab_ps: a CPU-bound test service modelled as processor sharing, for the
 * surge tests of the adaptive controllers.
 *
 * Every connection is accepted at once and, once its request line is in,
 * needs --work-ms of CPU.  The service has --cores cores shared equally
 * among the requests in service: with N of them each progresses at
 * min(1, cores / N) of real time, so below `cores` a request takes
 * work-ms, above it work-ms x N / cores, and a surge that is let in slows
 * every request down together, as a real CPU-bound server does.  The CPU
 * is modelled, not burnt (the lab machine has two cores, the model eight):
 * virtual time V advances at min(1, cores / N) per real second and a
 * request finishes when V has advanced by its work since it started.
 * Then it is answered "OK service_ms=<ms>\n" and closed.
 *
 * --conns FILE gets a CSV row per completed request, admitted_s (its
 * accept, seconds since start) and duration_ms (accept to close): the
 * trace `sluicectl replay --connections` reads.
 *
 * --stats FILE gets one line per second: the second (since start), the
 * completions in it, their median and 90th percentile time in service
 * (ms), and the requests in service at its end.  One thread, one epoll
 * set; bounded by --duration and by --max-conns open connections (a
 * connection past it is closed at once).
 *
 * Build: gcc -std=gnu11 -O2 -Wall -Wextra -Werror -o build/lab_ps tests/lab/lab_ps.c -lm
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PROG "lab_ps"
#include "lab_cli.h"

#define MAX_CONNS_LIMIT 65536
#define REQUEST_MAX     256
#define SAMPLES_MAX     65536 /* completions kept per second for the quantiles */

struct conn {
	int fd;
	bool in_service;
	double start_v;       /* virtual time when its request was in */
	double start_real;    /* real time, for the reported time in service */
	double accepted;      /* real time of its accept */
	unsigned got;         /* request bytes read */
	int heap_at;          /* index in the finish heap, -1 when not in it */
};

static struct {
	const char *listen_addr;
	long port, cores, max_conns;
	double work_ms, duration_s;
	const char *stats_path, *ready_file, *conns_path;
} opt = {.cores = 8, .work_ms = 50, .max_conns = 20000, .duration_s = 600};

static struct conn *conns;       /* by fd */
static int *heap;                /* fds in service, by finish virtual time */
static size_t heap_n, in_service;
static double vnow, last_real;   /* virtual time, at real time last_real */
static volatile sig_atomic_t stop;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double rate(void)
{
	return in_service <= (size_t)opt.cores ? 1.0 : (double)opt.cores / (double)in_service;
}

/* Virtual time up to real time t (the rate is constant between events). */
static void advance(double t)
{
	if (t > last_real)
		vnow += (t - last_real) * rate();
	last_real = t;
}

static double finish_v(int fd)
{
	return conns[fd].start_v + opt.work_ms / 1000.0;
}

static void heap_swap(size_t a, size_t b)
{
	int t = heap[a];

	heap[a] = heap[b];
	heap[b] = t;
	conns[heap[a]].heap_at = (int)a;
	conns[heap[b]].heap_at = (int)b;
}

static void heap_push(int fd)
{
	size_t i = heap_n++;

	heap[i] = fd;
	conns[fd].heap_at = (int)i;
	while (i && finish_v(heap[(i - 1) / 2]) > finish_v(heap[i])) {
		heap_swap(i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void heap_remove(size_t i)
{
	conns[heap[i]].heap_at = -1;
	if (i != --heap_n) {
		heap[i] = heap[heap_n];
		conns[heap[i]].heap_at = (int)i;
		for (;;) { /* down (the request finishing first is always at 0, so up is not needed) */
			size_t l = 2 * i + 1, r = l + 1, m = i;

			if (l < heap_n && finish_v(heap[l]) < finish_v(heap[m]))
				m = l;
			if (r < heap_n && finish_v(heap[r]) < finish_v(heap[m]))
				m = r;
			if (m == i)
				break;
			heap_swap(i, m);
			i = m;
		}
	}
}

/* ---- per-second statistics ---------------------------------------------- */

static FILE *stats, *conns_csv;
static double stats_t0, samples[SAMPLES_MAX];
static size_t n_samples;
static long stats_sec;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void stats_flush_until(double t)
{
	while (stats && t - stats_t0 >= (double)(stats_sec + 1)) {
		double med = NAN, p90 = NAN;

		if (n_samples) {
			qsort(samples, n_samples, sizeof(samples[0]), cmp_double);
			med = samples[n_samples / 2];
			p90 = samples[(n_samples * 9) / 10];
		}
		fprintf(stats, "%ld %zu %.1f %.1f %zu\n", stats_sec, n_samples, med, p90, in_service);
		fflush(stats);
		n_samples = 0;
		stats_sec++;
	}
}

static void record(double ms)
{
	if (n_samples < SAMPLES_MAX)
		samples[n_samples++] = ms;
}

/* ---- connections ---------------------------------------------------------- */

static void drop(int ep, int fd)
{
	struct conn *c = &conns[fd];

	if (c->in_service) {
		advance(now_s()); /* at the old rate, before it changes */
		if (c->heap_at >= 0)
			heap_remove((size_t)c->heap_at);
		in_service--;
	}
	epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
	close(fd);
	c->fd = -1;
	c->in_service = false;
}

static void finish(int ep, int fd, double t)
{
	char reply[64];
	double ms = (t - conns[fd].start_real) * 1000.0;
	int n = snprintf(reply, sizeof(reply), "OK service_ms=%.1f\n", ms);

	if (send(fd, reply, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		/* the client has gone: nothing to tell */
	}
	record(ms);
	if (conns_csv)
		fprintf(conns_csv, "%.6f,%.3f\n", conns[fd].accepted - stats_t0,
			(t - conns[fd].accepted) * 1000.0);
	drop(ep, fd);
}

static void on_readable(int ep, int fd, double t)
{
	struct conn *c = &conns[fd];
	char buf[REQUEST_MAX];
	ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

	if (n <= 0) {
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			drop(ep, fd);
		return;
	}
	if (c->in_service)
		return; /* more than one line: ignored */
	c->got += (unsigned)n;
	if (!memchr(buf, '\n', (size_t)n) && c->got < REQUEST_MAX)
		return;
	advance(t);
	c->in_service = true;
	c->start_v = vnow;
	c->start_real = t;
	in_service++;
	heap_push(fd);
}

static void on_accept(int ep, int lfd)
{
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP};

		if (fd < 0)
			return;
		if (fd >= opt.max_conns + 64) {
			close(fd);
			continue;
		}
		conns[fd] = (struct conn){.fd = fd, .heap_at = -1, .accepted = now_s()};
		ev.data.fd = fd;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev)) {
			close(fd);
			conns[fd].fd = -1;
		}
	}
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: " PROG " --listen ADDR --port P [--cores C (default 8)] [--work-ms W (default 50)]\n"
		"        [--max-conns N (default 20000)] [--duration S (default 600)] [--stats FILE]\n"
		"        [--conns FILE] [--ready-file PATH]\n"
		"\n"
		"A CPU-bound service as processor sharing: each request (one line) needs W ms of\n"
		"CPU and the C cores are shared equally among the requests in service, so above C\n"
		"requests each takes W x N / C.  Capacity: C / W requests per second.  The reply is\n"
		"\"OK service_ms=<ms>\\n\", then the connection is closed.  --stats writes one line a\n"
		"second: second, completions, median and p90 time in service (ms), in service.\n"
		"--conns writes admitted_s,duration_ms per completed request (a replay trace).\n");
}

static void parse(int argc, char **argv)
{
	static const struct option lo[] = {
		{"listen", required_argument, NULL, 'l'}, {"port", required_argument, NULL, 'p'},
		{"cores", required_argument, NULL, 'c'}, {"work-ms", required_argument, NULL, 'w'},
		{"max-conns", required_argument, NULL, 'm'}, {"duration", required_argument, NULL, 'd'},
		{"stats", required_argument, NULL, 's'}, {"ready-file", required_argument, NULL, 'r'},
		{"conns", required_argument, NULL, 'C'},
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
	};
	int ch;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (ch) {
		case 'l': opt.listen_addr = optarg; break;
		case 'p': opt.port = parse_long("port", optarg, 1, 65535); break;
		case 'c': opt.cores = parse_long("cores", optarg, 1, 4096); break;
		case 'w': opt.work_ms = parse_double("work-ms", optarg, 0.1, 3600000); break;
		case 'm': opt.max_conns = parse_long("max-conns", optarg, 1, MAX_CONNS_LIMIT); break;
		case 'd': opt.duration_s = parse_double("duration", optarg, 0.1, 86400); break;
		case 's': opt.stats_path = optarg; break;
		case 'r': opt.ready_file = optarg; break;
		case 'C': opt.conns_path = optarg; break;
		case 'h': usage(stdout); exit(0);
		default: usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (!opt.listen_addr || !opt.port)
		usage_error("--listen ADDR and --port P are required");
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct sockaddr_storage ss = {0};
	struct epoll_event ev = {.events = EPOLLIN}, evs[256];
	struct rlimit rl = {.rlim_cur = (rlim_t)opt.max_conns + 128, .rlim_max = (rlim_t)opt.max_conns + 128};
	socklen_t len;
	double t_end;
	int lfd, ep, one = 1;

	parse(argc, argv);
	rl.rlim_cur = rl.rlim_max = (rlim_t)opt.max_conns + 128;
	setrlimit(RLIMIT_NOFILE, &rl);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	conns = calloc((size_t)opt.max_conns + 128, sizeof(*conns));
	heap = calloc((size_t)opt.max_conns + 128, sizeof(*heap));
	if (!conns || !heap) {
		warn_errno("calloc");
		return 1;
	}
	if (inet_pton(AF_INET, opt.listen_addr, &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
		((struct sockaddr_in *)&ss)->sin_family = AF_INET;
		((struct sockaddr_in *)&ss)->sin_port = htons((uint16_t)opt.port);
		len = sizeof(struct sockaddr_in);
	} else if (inet_pton(AF_INET6, opt.listen_addr, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
		((struct sockaddr_in6 *)&ss)->sin6_family = AF_INET6;
		((struct sockaddr_in6 *)&ss)->sin6_port = htons((uint16_t)opt.port);
		len = sizeof(struct sockaddr_in6);
	} else {
		usage_error("--listen: '%s' is not a numeric address", opt.listen_addr);
	}
	lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, (struct sockaddr *)&ss, len) || listen(lfd, 4096)) {
		warn_errno("listen");
		return 1;
	}
	if (opt.stats_path && !(stats = fopen(opt.stats_path, "w"))) {
		warn_errno(opt.stats_path);
		return 1;
	}
	if (opt.conns_path) {
		if (!(conns_csv = fopen(opt.conns_path, "w"))) {
			warn_errno(opt.conns_path);
			return 1;
		}
		fprintf(conns_csv, "admitted_s,duration_ms\n");
	}
	ep = epoll_create1(EPOLL_CLOEXEC);
	ev.data.fd = lfd;
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev)) {
		warn_errno("epoll");
		return 1;
	}
	if (opt.ready_file) {
		FILE *f = fopen(opt.ready_file, "w");

		if (f) {
			fprintf(f, "%ld\n", opt.port);
			fclose(f);
		}
	}
	last_real = stats_t0 = now_s();
	t_end = stats_t0 + opt.duration_s;
	while (!stop) {
		double t = now_s(), next = t + 1.0;
		int timeout_ms, n;

		if (t >= t_end)
			break;
		/* Finish everything due; the rate changes with each finish. */
		advance(t);
		while (heap_n && finish_v(heap[0]) <= vnow + 1e-12)
			finish(ep, heap[0], t);
		if (heap_n)
			next = t + (finish_v(heap[0]) - vnow) / rate();
		stats_flush_until(t);
		timeout_ms = (int)ceil((fmin(next, t + 1.0) - t) * 1000.0);
		n = epoll_wait(ep, evs, 256, timeout_ms < 1 ? 1 : timeout_ms);
		t = now_s();
		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;

			if (fd == lfd)
				on_accept(ep, lfd);
			else if (conns[fd].fd == fd)
				on_readable(ep, fd, t);
		}
	}
	stats_flush_until(now_s() + 1.0);
	if (stats)
		fclose(stats);
	if (conns_csv)
		fclose(conns_csv);
	if (opt.ready_file)
		unlink(opt.ready_file);
	return 0;
}
