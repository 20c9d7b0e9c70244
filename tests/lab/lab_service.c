/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * lab_service: a capacity-limited TCP test service for the sluice lab.
 *
 * N worker threads share one listening socket.  Each worker accepts one
 * connection, reads the request line, sleeps the service time and replies
 * "OK worker=<id> service_ms=<ms>\n".  With N workers at most N requests are
 * in service; everything else waits in the kernel accept backlog, so under
 * overload latency climbs and, once the backlog is full, SYNs are dropped.
 * That is exactly the behaviour an overload protector has to deal with.
 *
 * Build: gcc -std=gnu11 -O2 -g -Wall -Wextra -Werror \
 *            -o build/lab_service tests/lab/lab_service.c -lpthread -lm
 */
#ifndef _GNU_SOURCE /* the Makefile passes -D_GNU_SOURCE */
#define _GNU_SOURCE /* accept4 */
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define PROG "lab_service"
#include "lab_cli.h"

#define MAX_WORKERS        4096
#define MAX_SERVICE_MS     3600000L   /* one hour: anything longer is a typo */
#define MAX_BACKLOG        65535
#define MAX_DURATION_S     31536000.0 /* one year */
#define REQUEST_MAX_BYTES  256
#define REQUEST_TIMEOUT_MS 2000       /* a silent client is served after this */
#define REPLY_TIMEOUT_S    2          /* bound on writing the reply */
#define DRAIN_MAX_BYTES    65536      /* bound on discarding unread input */
#define ACCEPT_BACKOFF_MS  10         /* pause after EMFILE and friends */
#define WORKER_STACK_BYTES (256 * 1024)

struct options {
	const char *listen_addr;
	long port;               /* 0 lets the kernel pick; see the ready file */
	long workers;
	long service_ms;
	long backlog;
	double duration_s;       /* 0 = until SIGTERM/SIGINT */
	const char *ready_file;
	bool quiet;
};

struct worker {
	pthread_t thread;
	int id;
};

/* Shared by all workers; written once before the threads start. */
static int listen_fd = -1;
static struct options opt;

static atomic_bool stopping;
static atomic_ulong served_count;
static atomic_ulong error_count;

static void usage(FILE *out)
{
	fprintf(out,
		"usage: " PROG " --listen ADDR --port P [--workers N (default 8)]"
		" [--service-ms MS (default 50)] [--backlog B (default 128)]"
		" [--duration S (0 = until SIGTERM/SIGINT)] [--ready-file PATH]"
		" [--quiet]\n"
		"\n"
		"A TCP service that can serve at most N requests at once: each of N\n"
		"worker threads accepts a connection, reads one request line (up to\n"
		"'\\n' or %d bytes, waiting at most %d ms), sleeps MS milliseconds and\n"
		"replies \"OK worker=<id> service_ms=<MS>\\n\".  Other clients wait in\n"
		"the accept backlog of B.  ADDR is a numeric IPv4 or IPv6 address;\n"
		"'::' accepts IPv4 and IPv6.  --port 0 lets the kernel pick a port.\n"
		"The ready file is created (containing the port) once listening, and\n"
		"removed on exit.  --quiet silences the banner and per-error warnings.\n"
		"On exit prints \"" PROG ": served=<n> errors=<n>\" to stdout.\n",
		REQUEST_MAX_BYTES, REQUEST_TIMEOUT_MS);
}

/* getopt_long returns '?' both for an unknown option and for a value given
 * to a flag ("--quiet=1"); only the argument it just skipped tells which. */
static void parse_options(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "listen",     required_argument, NULL, 'l' },
		{ "port",       required_argument, NULL, 'p' },
		{ "workers",    required_argument, NULL, 'w' },
		{ "service-ms", required_argument, NULL, 's' },
		{ "backlog",    required_argument, NULL, 'b' },
		{ "duration",   required_argument, NULL, 'd' },
		{ "ready-file", required_argument, NULL, 'r' },
		{ "quiet",      no_argument,       NULL, 'q' },
		{ "help",       no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	bool have_port = false;
	int c;

	opt.workers = 8;
	opt.service_ms = 50;
	opt.backlog = 128;

	opterr = 0; /* we report option errors ourselves, in our format */
	while ((c = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
		switch (c) {
		case 'l': opt.listen_addr = optarg; break;
		case 'p':
			opt.port = parse_long("port", optarg, 0, 65535);
			have_port = true;
			break;
		case 'w':
			opt.workers = parse_long("workers", optarg, 1, MAX_WORKERS);
			break;
		case 's':
			opt.service_ms = parse_long("service-ms", optarg, 0,
						    MAX_SERVICE_MS);
			break;
		case 'b':
			opt.backlog = parse_long("backlog", optarg, 1, MAX_BACKLOG);
			break;
		case 'd':
			opt.duration_s = parse_double("duration", optarg, 0,
						      MAX_DURATION_S);
			break;
		case 'r': opt.ready_file = optarg; break;
		case 'q': opt.quiet = true; break;
		case 'h': usage(stdout); exit(0);
		case ':': usage_error("option '%s' needs a value", argv[optind - 1]);
		default:  report_bad_option(argv[optind - 1]);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (!opt.listen_addr)
		usage_error("--listen ADDR is required");
	if (!have_port)
		usage_error("--port P is required");
}

/* Numeric addresses only: a test tool must never wait on DNS. */
static void resolve_listen_address(struct sockaddr_storage *ss, socklen_t *len)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE,
	};
	struct addrinfo *res;
	char port[8];

	snprintf(port, sizeof(port), "%ld", opt.port);
	int rc = getaddrinfo(opt.listen_addr, port, &hints, &res);
	if (rc != 0) {
		fprintf(stderr, PROG ": --listen: '%s' is not a numeric IPv4 or"
			" IPv6 address: %s (see --help)\n", opt.listen_addr,
			gai_strerror(rc));
		exit(2);
	}
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
}

static int open_listener(const struct sockaddr_storage *ss, socklen_t len)
{
	int one = 1, zero = 0;
	int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0) {
		warn_errno("socket");
		return -1;
	}
	/* Restarting the lab must not fail on TIME_WAIT leftovers. */
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0) {
		warn_errno("setsockopt SO_REUSEADDR");
		goto fail;
	}
	/* Set explicitly so '::' is dual-stack whatever the bindv6only sysctl
	 * says; for a specific IPv6 address it only matters for v4-mapped. */
	if (ss->ss_family == AF_INET6 &&
	    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)) < 0) {
		warn_errno("setsockopt IPV6_V6ONLY");
		goto fail;
	}
	if (bind(fd, (const struct sockaddr *)ss, len) < 0) {
		fprintf(stderr, PROG ": bind %s port %ld: %s\n", opt.listen_addr,
			opt.port, strerror(errno));
		goto fail;
	}
	if (listen(fd, (int)opt.backlog) < 0) {
		warn_errno("listen");
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

/* The port actually bound (differs from --port only when that was 0). */
static int bound_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return (int)opt.port;
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

static int64_t monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (ms % 1000) * 1000000L };

	/* Relative sleep restarted with the remainder: EINTR cannot cut the
	 * simulated work short. */
	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

/*
 * Read the request line: up to the first '\n' or REQUEST_MAX_BYTES, waiting
 * at most REQUEST_TIMEOUT_MS in total (an overall deadline, so a client
 * trickling one byte at a time cannot hold the worker longer).  Silence and
 * EOF are fine: such a client is still served.  Returns -1 with errno set
 * only on a real socket error.
 */
static int read_request_line(int fd)
{
	char buf[REQUEST_MAX_BYTES];
	size_t used = 0;
	int64_t deadline = monotonic_ms() + REQUEST_TIMEOUT_MS;

	while (used < sizeof(buf)) {
		int64_t left = deadline - monotonic_ms();
		if (left <= 0)
			return 0;
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int n = poll(&pfd, 1, (int)left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			return 0;
		ssize_t got = recv(fd, buf + used, sizeof(buf) - used,
				   MSG_DONTWAIT);
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (got < 0)
			return -1;
		if (got == 0 || memchr(buf + used, '\n', (size_t)got))
			return 0;
		used += (size_t)got;
	}
	return 0;
}

static int write_all(int fd, const char *data, size_t len)
{
	while (len > 0) {
		/* MSG_NOSIGNAL: a client that left must not kill the service. */
		ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Closing a socket with unread input makes Linux send RST instead of FIN,
 * and the RST can destroy our reply before the client reads it.  So discard
 * whatever the client sent beyond the request line first (bounded). */
static void drain_and_close(int fd)
{
	char buf[4096];
	size_t total = 0;

	while (total < DRAIN_MAX_BYTES) {
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n <= 0)
			break;
		total += (size_t)n;
	}
	close(fd);
}

static void count_error(int worker_id, const char *what)
{
	atomic_fetch_add(&error_count, 1);
	if (!opt.quiet)
		fprintf(stderr, PROG ": worker %d: %s: %s\n", worker_id, what,
			strerror(errno));
}

static void serve_connection(int id, int fd)
{
	struct timeval send_timeout = { .tv_sec = REPLY_TIMEOUT_S };
	char reply[64];

	/* A client that never reads must not pin the worker forever. */
	if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_timeout,
		       sizeof(send_timeout)) < 0) {
		count_error(id, "setsockopt SO_SNDTIMEO");
		close(fd);
		return;
	}
	if (read_request_line(fd) < 0) {
		count_error(id, "read request");
		close(fd);
		return;
	}
	sleep_ms(opt.service_ms);
	int len = snprintf(reply, sizeof(reply), "OK worker=%d service_ms=%ld\n",
			   id, opt.service_ms);
	if (write_all(fd, reply, (size_t)len) < 0) {
		count_error(id, "write reply");
		close(fd);
		return;
	}
	atomic_fetch_add(&served_count, 1);
	drain_and_close(fd);
}

static bool accept_error_is_transient(int err)
{
	return err == EMFILE || err == ENFILE || err == ENOBUFS ||
	       err == ENOMEM;
}

static void *worker_main(void *arg)
{
	const struct worker *self = arg;

	while (!atomic_load(&stopping)) {
		int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0) {
			serve_connection(self->id, fd);
			continue;
		}
		/* shutdown() of the listener wakes us with EINVAL. */
		if (atomic_load(&stopping))
			break;
		int err = errno;
		if (err == EINTR)
			continue;
		count_error(self->id, "accept");
		/* Out of fds or memory: retrying at once would only spin. */
		if (accept_error_is_transient(err))
			sleep_ms(ACCEPT_BACKOFF_MS);
	}
	return NULL;
}

/* Returns the number of workers started; on failure the caller stops them. */
static long start_workers(struct worker *workers)
{
	pthread_attr_t attr;
	long started;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, WORKER_STACK_BYTES);
	for (started = 0; started < opt.workers; started++) {
		workers[started].id = (int)started;
		int rc = pthread_create(&workers[started].thread, &attr,
					worker_main, &workers[started]);
		if (rc != 0) {
			fprintf(stderr, PROG ": pthread_create worker %ld: %s\n",
				started, strerror(rc));
			break;
		}
	}
	pthread_attr_destroy(&attr);
	return started;
}

static void stop_workers(struct worker *workers, long started)
{
	atomic_store(&stopping, true);
	/* Wakes every worker blocked in accept(); connections still waiting
	 * in the backlog are reset.  Requests in service are finished. */
	if (shutdown(listen_fd, SHUT_RDWR) < 0)
		warn_errno("shutdown listening socket");
	for (long i = 0; i < started; i++)
		pthread_join(workers[i].thread, NULL);
}

/* Written to a temporary name and renamed, so a script that sees the file
 * also sees its complete content. */
static int write_ready_file(int port)
{
	char tmp[4096];
	char text[16];

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", opt.ready_file,
		     (int)getpid()) >= (int)sizeof(tmp)) {
		fprintf(stderr, PROG ": ready file %s: %s\n", opt.ready_file,
			strerror(ENAMETOOLONG));
		return -1;
	}
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, PROG ": create %s: %s\n", tmp, strerror(errno));
		return -1;
	}
	int len = snprintf(text, sizeof(text), "%d\n", port);
	if (write(fd, text, (size_t)len) != len || close(fd) < 0) {
		fprintf(stderr, PROG ": write %s: %s\n", tmp, strerror(errno));
		unlink(tmp);
		return -1;
	}
	if (rename(tmp, opt.ready_file) < 0) {
		fprintf(stderr, PROG ": rename %s to %s: %s\n", tmp,
			opt.ready_file, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* Blocks until SIGTERM/SIGINT arrives or --duration elapses. */
static void wait_for_stop(const sigset_t *stop_signals)
{
	if (opt.duration_s <= 0) {
		int sig;
		while (sigwait(stop_signals, &sig) != 0)
			;
		return;
	}
	int64_t deadline = monotonic_ms() + (int64_t)llround(opt.duration_s * 1000);
	for (;;) {
		int64_t left = deadline - monotonic_ms();
		if (left <= 0)
			return;
		struct timespec ts = { .tv_sec = left / 1000,
				       .tv_nsec = (left % 1000) * 1000000L };
		if (sigtimedwait(stop_signals, NULL, &ts) >= 0)
			return;
		if (errno != EINTR && errno != EAGAIN) {
			warn_errno("sigtimedwait");
			return;
		}
	}
}

int main(int argc, char **argv)
{
	struct sockaddr_storage addr;
	socklen_t addr_len;
	sigset_t stop_signals;

	parse_options(argc, argv);
	resolve_listen_address(&addr, &addr_len);

	/* Block the stop signals before any thread exists so all threads
	 * inherit the mask and only the main thread's sigwait sees them. */
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGTERM);
	sigaddset(&stop_signals, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
	signal(SIGPIPE, SIG_IGN);

	listen_fd = open_listener(&addr, addr_len);
	if (listen_fd < 0)
		return 1;
	int port = bound_port(listen_fd);

	struct worker *workers = calloc((size_t)opt.workers, sizeof(*workers));
	if (!workers) {
		warn_errno("allocate workers");
		return 1;
	}
	long started = start_workers(workers);
	bool ready = started == opt.workers &&
		     (!opt.ready_file || write_ready_file(port) == 0);
	if (ready) {
		if (!opt.quiet)
			fprintf(stderr, PROG ": listening on %s port %d, workers=%ld"
				" service_ms=%ld backlog=%ld\n", opt.listen_addr,
				port, opt.workers, opt.service_ms, opt.backlog);
		wait_for_stop(&stop_signals);
	}

	stop_workers(workers, started);
	close(listen_fd);
	if (ready && opt.ready_file && unlink(opt.ready_file) < 0 &&
	    errno != ENOENT)
		fprintf(stderr, PROG ": remove %s: %s\n", opt.ready_file,
			strerror(errno));
	free(workers);
	if (!ready)
		return 1;

	printf(PROG ": served=%lu errors=%lu\n", atomic_load(&served_count),
	       atomic_load(&error_count));
	if (fflush(stdout) != 0) {
		warn_errno("write summary to stdout");
		return 1;
	}
	return 0;
}
