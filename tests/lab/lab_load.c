/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * lab_load: an open-loop TCP connection load generator for the sluice lab.
 *
 * Connection i is started at t0 + i/R whether or not earlier connections
 * have finished.  A closed-loop generator (start the next one when one
 * finishes) slows down as the server slows down and so can never push it
 * into real overload; an open-loop one keeps arriving like real clients do.
 *
 * One thread, one epoll set, one timerfd for the arrival schedule and the
 * per-connection deadlines.  Every connection ends as exactly one of ok,
 * refused, timeout or error, and the run is bounded by --count, --duration
 * and --timeout.
 *
 * Build: gcc -std=gnu11 -O2 -g -Wall -Wextra -Werror \
 *            -o build/lab_load tests/lab/lab_load.c -lpthread -lm
 */
#ifndef _GNU_SOURCE /* the Makefile passes -D_GNU_SOURCE */
#define _GNU_SOURCE /* IP_BIND_ADDRESS_NO_PORT */
#endif
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define PROG "lab_load"
#include "lab_cli.h"

#define MAX_SOURCES     256
#define MAX_COUNT       10000000L
#define MAX_RATE        1000000.0
#define MAX_SECONDS     86400.0
#define MAX_INFLIGHT    65536     /* concurrent connections (= fds) */
#define SPARE_FDS       64        /* stdio, epoll, timerfd, CSV file */
#define EVENT_BATCH     1024
#define NS_PER_SEC      1000000000LL
#define NS_PER_MS       1000000LL
#define NO_SOURCE       UINT16_MAX
#define TIMER_TAG       UINT64_MAX /* epoll data of the timerfd */

static const char request_text[] = "GET /\n";

enum outcome { OUT_PENDING, OUT_OK, OUT_REFUSED, OUT_TIMEOUT, OUT_ERROR };
static const char *const outcome_names[] = {
	[OUT_PENDING] = "pending", [OUT_OK] = "ok", [OUT_REFUSED] = "refused",
	[OUT_TIMEOUT] = "timeout", [OUT_ERROR] = "error",
};

enum phase { PH_CONNECTING, PH_SENDING, PH_READING, PH_DONE };

struct conn {
	int64_t start_ns;    /* when connect() was called (monotonic) */
	int64_t connect_ns;  /* connect() to established; -1 if never */
	int64_t total_ns;    /* connect() to outcome known; -1 if n/a */
	int fd;
	int err;             /* errno for refused/error, else 0 */
	uint32_t reply_bytes;
	uint16_t sent;       /* bytes of the request written so far */
	uint16_t source;     /* index into the --source list or NO_SOURCE */
	uint8_t phase;
	uint8_t outcome;
};

struct address {
	struct sockaddr_storage ss;
	socklen_t len;
	const char *text;
};

struct options {
	struct address target;
	const char *target_text;
	long port;
	struct address sources[MAX_SOURCES];
	int source_count;
	double rate;
	long count;
	double duration_s;
	double timeout_s;
	const char *csv_path;
	bool json;
	bool no_request;
	bool quiet;
};

struct run {
	struct conn *conns;
	long capacity;       /* most connections the schedule can start */
	long started;
	long oldest;         /* every conn before this one is finished */
	long inflight;
	int64_t t0_ns;
	int64_t start_window_end_ns; /* no new starts at or after this */
	int64_t hard_end_ns;         /* duration + timeout: absolute bound */
	int64_t timeout_ns;
	int64_t end_ns;
	int epoll_fd;
	int timer_fd;
};

struct tally {
	long by_outcome[OUT_ERROR + 1];
};

static struct options opt;

static void usage(FILE *out)
{
	fprintf(out,
		"usage: " PROG " --connect ADDR --port P [--source ADDR]..."
		" [--rate R (connections per second, default 10)]"
		" [--count N (default 100)] [--duration S (default 30; hard bound)]"
		" [--timeout S (per connection, default 10, fractional allowed)]"
		" [--csv FILE] [--json] [--no-request] [--quiet]\n"
		"\n"
		"Open-loop load: connection i starts at i/R seconds whether or not\n"
		"earlier ones finished, until N have started or S seconds passed.\n"
		"Each connection connects, writes \"GET /\\n\" (not with --no-request)\n"
		"and reads until EOF.  Outcomes: ok (reply and EOF), refused (RST to\n"
		"the SYN), timeout (not done within --timeout), error (anything\n"
		"else, errno kept; EOF without a reply is errno ENODATA).  Several\n"
		"--source addresses are used round-robin and must be of the same\n"
		"family as ADDR.  The run ends at S + timeout seconds at the latest.\n"
		"Prints a summary (or one JSON object with --json) on stdout;\n"
		"--csv writes one row per connection; --quiet silences warnings.\n"
		"Exit 0 when the run completed, 1 on setup failure, 2 on usage error.\n");
}

/* Numeric addresses only: a load generator must never wait on DNS. */
static void parse_address(const char *name, const char *text, long port,
			  struct address *out)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
	};
	struct addrinfo *res;
	char port_text[8];

	snprintf(port_text, sizeof(port_text), "%ld", port);
	int rc = getaddrinfo(text, port_text, &hints, &res);
	if (rc != 0)
		usage_error("--%s: '%s' is not a numeric IPv4 or IPv6 address: %s",
			    name, text, gai_strerror(rc));
	memcpy(&out->ss, res->ai_addr, res->ai_addrlen);
	out->len = res->ai_addrlen;
	out->text = text;
	freeaddrinfo(res);
}

static void check_options(const char **source_texts)
{
	if (!opt.target_text)
		usage_error("--connect ADDR is required");
	if (opt.port == 0)
		usage_error("--port P is required");
	parse_address("connect", opt.target_text, opt.port, &opt.target);
	for (int i = 0; i < opt.source_count; i++) {
		/* Port 0: the kernel picks the source port. */
		parse_address("source", source_texts[i], 0, &opt.sources[i]);
		if (opt.sources[i].ss.ss_family != opt.target.ss.ss_family)
			usage_error("--source %s: address family differs from"
				    " --connect %s", source_texts[i],
				    opt.target_text);
	}
}

/* getopt_long returns '?' both for an unknown option and for a value given
 * to a flag ("--quiet=1"); only the argument it just skipped tells which. */
static void parse_options(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "connect",    required_argument, NULL, 'c' },
		{ "port",       required_argument, NULL, 'p' },
		{ "source",     required_argument, NULL, 's' },
		{ "rate",       required_argument, NULL, 'r' },
		{ "count",      required_argument, NULL, 'n' },
		{ "duration",   required_argument, NULL, 'd' },
		{ "timeout",    required_argument, NULL, 't' },
		{ "csv",        required_argument, NULL, 'C' },
		{ "json",       no_argument,       NULL, 'j' },
		{ "no-request", no_argument,       NULL, 'N' },
		{ "quiet",      no_argument,       NULL, 'q' },
		{ "help",       no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static const char *source_texts[MAX_SOURCES];
	int c;

	opt.rate = 10;
	opt.count = 100;
	opt.duration_s = 30;
	opt.timeout_s = 10;

	opterr = 0; /* we report option errors ourselves, in our format */
	while ((c = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': opt.target_text = optarg; break;
		case 'p': opt.port = parse_long("port", optarg, 1, 65535); break;
		case 's':
			if (opt.source_count == MAX_SOURCES)
				usage_error("--source: at most %d addresses",
					    MAX_SOURCES);
			source_texts[opt.source_count++] = optarg;
			break;
		case 'r':
			opt.rate = parse_double("rate", optarg, 0.001, MAX_RATE);
			break;
		case 'n':
			opt.count = parse_long("count", optarg, 1, MAX_COUNT);
			break;
		case 'd':
			opt.duration_s = parse_double("duration", optarg, 0.001,
						      MAX_SECONDS);
			break;
		case 't':
			opt.timeout_s = parse_double("timeout", optarg, 0.001,
						     MAX_SECONDS);
			break;
		case 'C': opt.csv_path = optarg; break;
		case 'j': opt.json = true; break;
		case 'N': opt.no_request = true; break;
		case 'q': opt.quiet = true; break;
		case 'h': usage(stdout); exit(0);
		case ':': usage_error("option '%s' needs a value", argv[optind - 1]);
		default:  report_bad_option(argv[optind - 1]);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	check_options(source_texts);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * NS_PER_SEC + ts.tv_nsec;
}

static int64_t seconds_to_ns(double s)
{
	return (int64_t)llround(s * (double)NS_PER_SEC);
}

/* Scheduled start of connection i, computed from t0 rather than
 * accumulated, so rounding never drifts the rate. */
static int64_t scheduled_ns(const struct run *run, long i)
{
	return run->t0_ns + (int64_t)llround((double)i * 1e9 / opt.rate);
}

/* Each connection holds one fd; without this the default soft limit
 * (often 1024) would turn overload into EMFILE errors on our side. */
static void raise_fd_limit(long connections)
{
	rlim_t want = (rlim_t)(connections < MAX_INFLIGHT ? connections
				: MAX_INFLIGHT) + SPARE_FDS;
	struct rlimit lim;

	if (getrlimit(RLIMIT_NOFILE, &lim) < 0 || lim.rlim_cur >= want)
		return;
	if (lim.rlim_max < want) {
		/* Raising the hard limit needs CAP_SYS_RESOURCE. */
		struct rlimit both = { want, want };
		if (setrlimit(RLIMIT_NOFILE, &both) == 0)
			return;
	}
	lim.rlim_cur = lim.rlim_max < want ? lim.rlim_max : want;
	if (setrlimit(RLIMIT_NOFILE, &lim) < 0)
		getrlimit(RLIMIT_NOFILE, &lim);
	if (lim.rlim_cur < want) {
		if (!opt.quiet)
			fprintf(stderr, PROG ": warning: open file limit is %llu,"
				" below the %llu this run may need; extra"
				" connections will be errors (EMFILE)\n",
				(unsigned long long)lim.rlim_cur,
				(unsigned long long)want);
	}
}

static int setup_run(struct run *run)
{
	/* Starts happen at i/R for i/R < duration: ceil(duration * R) slots. */
	double slots = ceil(opt.duration_s * opt.rate);
	run->capacity = slots < (double)opt.count ? (long)slots : opt.count;
	if (run->capacity < 1)
		run->capacity = 1;
	run->conns = calloc((size_t)run->capacity, sizeof(*run->conns));
	if (!run->conns) {
		warn_errno("allocate connection table");
		return -1;
	}
	run->timeout_ns = seconds_to_ns(opt.timeout_s);
	raise_fd_limit(run->capacity);

	run->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (run->epoll_fd < 0) {
		warn_errno("epoll_create1");
		return -1;
	}
	run->timer_fd = timerfd_create(CLOCK_MONOTONIC,
				       TFD_NONBLOCK | TFD_CLOEXEC);
	if (run->timer_fd < 0) {
		warn_errno("timerfd_create");
		return -1;
	}
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = TIMER_TAG };
	if (epoll_ctl(run->epoll_fd, EPOLL_CTL_ADD, run->timer_fd, &ev) < 0) {
		warn_errno("epoll_ctl add timerfd");
		return -1;
	}
	return 0;
}

/* Ends a connection with its outcome.  total_ns stays -1 for timeouts (they
 * never finished) and for errors before connect() was called. */
static void finish(struct run *run, struct conn *c, enum outcome outcome,
		   int err, int64_t now)
{
	if (c->fd >= 0) {
		close(c->fd); /* also removes it from the epoll set */
		c->fd = -1;
		if (outcome != OUT_TIMEOUT)
			c->total_ns = now - c->start_ns;
		run->inflight--;
	}
	c->outcome = (uint8_t)outcome;
	c->err = outcome == OUT_OK || outcome == OUT_TIMEOUT ? 0 : err;
	c->phase = PH_DONE;
}

static enum outcome outcome_for_errno(int err)
{
	/* A RST in answer to the SYN: the port is closed or the host (or an
	 * overload protector) rejects us. */
	return err == ECONNREFUSED ? OUT_REFUSED : OUT_ERROR;
}

static int watch(struct run *run, long i, int op, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.u64 = (uint64_t)i };

	return epoll_ctl(run->epoll_fd, op, run->conns[i].fd, &ev);
}

static void established(struct run *run, long i, int64_t now);

/* Opens connection i: socket, optional bind, non-blocking connect. */
static void start_connection(struct run *run, long i)
{
	struct conn *c = &run->conns[i];
	int family = opt.target.ss.ss_family;

	c->connect_ns = -1;
	c->total_ns = -1;
	c->fd = -1;
	c->source = opt.source_count ? (uint16_t)(i % opt.source_count)
				     : NO_SOURCE;
	c->start_ns = now_ns();
	run->started++;

	if (run->inflight >= MAX_INFLIGHT) {
		finish(run, c, OUT_ERROR, EMFILE, c->start_ns);
		return;
	}
	int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		finish(run, c, OUT_ERROR, errno, c->start_ns);
		return;
	}
	if (c->source != NO_SOURCE) {
		const struct address *src = &opt.sources[c->source];
		int one = 1;
		/* Let connect() pick the source port per 4-tuple; bind() would
		 * otherwise reserve one port per connection and run out at
		 * ~28k connections per source address. */
		setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one,
			   sizeof(one));
		if (bind(fd, (const struct sockaddr *)&src->ss, src->len) < 0) {
			int err = errno;
			close(fd);
			finish(run, c, OUT_ERROR, err, now_ns());
			return;
		}
	}
	c->fd = fd;
	run->inflight++;
	c->start_ns = now_ns(); /* connect time is measured from connect() */
	int rc = connect(fd, (const struct sockaddr *)&opt.target.ss,
			 opt.target.len);
	if (rc < 0 && errno != EINPROGRESS) {
		int err = errno;
		finish(run, c, outcome_for_errno(err), err, now_ns());
		return;
	}
	c->phase = PH_CONNECTING;
	if (watch(run, i, EPOLL_CTL_ADD, EPOLLOUT) < 0) {
		int err = errno;
		finish(run, c, OUT_ERROR, err, now_ns());
		return;
	}
	if (rc == 0)
		established(run, i, now_ns());
}

static void switch_to_reading(struct run *run, long i, int64_t now)
{
	struct conn *c = &run->conns[i];

	c->phase = PH_READING;
	if (watch(run, i, EPOLL_CTL_MOD, EPOLLIN) < 0)
		finish(run, c, OUT_ERROR, errno, now);
}

static void send_request(struct run *run, long i, int64_t now)
{
	struct conn *c = &run->conns[i];
	size_t len = sizeof(request_text) - 1;

	while (c->sent < len) {
		ssize_t n = send(c->fd, request_text + c->sent, len - c->sent,
				 MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return; /* still watching EPOLLOUT */
		if (n < 0) {
			finish(run, c, OUT_ERROR, errno, now);
			return;
		}
		c->sent += (uint16_t)n;
	}
	switch_to_reading(run, i, now);
}

static void established(struct run *run, long i, int64_t now)
{
	struct conn *c = &run->conns[i];

	c->connect_ns = now - c->start_ns;
	if (opt.no_request) {
		switch_to_reading(run, i, now);
		return;
	}
	c->phase = PH_SENDING;
	send_request(run, i, now);
}

static void check_connect_result(struct run *run, long i, uint32_t events,
				 int64_t now)
{
	struct conn *c = &run->conns[i];
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	if (err != 0) {
		finish(run, c, outcome_for_errno(err), err, now);
		return;
	}
	if (events & EPOLLOUT) {
		established(run, i, now);
		return;
	}
	/* HUP without a pending socket error: the kernel gave no reason. */
	finish(run, c, OUT_ERROR, ECONNABORTED, now);
}

/* Reads and discards the reply; the outcome is decided at EOF. */
static void read_reply(struct run *run, long i, int64_t now)
{
	struct conn *c = &run->conns[i];
	char buf[4096];

	for (;;) {
		ssize_t n = recv(c->fd, buf, sizeof(buf), 0);
		if (n > 0) {
			c->reply_bytes += (uint32_t)n;
			continue;
		}
		if (n == 0) {
			if (c->reply_bytes > 0)
				finish(run, c, OUT_OK, 0, now);
			else
				finish(run, c, OUT_ERROR, ENODATA, now);
			return;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			finish(run, c, OUT_ERROR, errno, now);
		return;
	}
}

static void handle_connection_event(struct run *run, long i, uint32_t events)
{
	struct conn *c = &run->conns[i];
	int64_t now = now_ns();

	switch (c->phase) {
	case PH_CONNECTING: check_connect_result(run, i, events, now); break;
	case PH_SENDING:    send_request(run, i, now); break;
	case PH_READING:    read_reply(run, i, now); break;
	default:            break; /* finished earlier in this batch */
	}
}

/* Deadlines are start + timeout and starts increase with i, so the oldest
 * unfinished connection always has the earliest deadline. */
static void skip_finished(struct run *run)
{
	while (run->oldest < run->started &&
	       run->conns[run->oldest].phase == PH_DONE)
		run->oldest++;
}

static void expire_timeouts(struct run *run, int64_t now)
{
	for (skip_finished(run); run->oldest < run->started; skip_finished(run)) {
		struct conn *c = &run->conns[run->oldest];
		if (c->start_ns + run->timeout_ns > now && now < run->hard_end_ns)
			break;
		finish(run, c, OUT_TIMEOUT, 0, now);
	}
}

static bool may_start_more(const struct run *run)
{
	return run->started < run->capacity &&
	       scheduled_ns(run, run->started) < run->start_window_end_ns;
}

static void start_due_connections(struct run *run, int64_t now)
{
	/* If we fell behind, catch up at once: that is what open loop means. */
	while (may_start_more(run) && scheduled_ns(run, run->started) <= now)
		start_connection(run, run->started);
}

/* The next moment something has to happen without any socket event. */
static int64_t next_wakeup_ns(const struct run *run)
{
	int64_t next = run->hard_end_ns;

	if (may_start_more(run) && scheduled_ns(run, run->started) < next)
		next = scheduled_ns(run, run->started);
	if (run->oldest < run->started) {
		int64_t deadline = run->conns[run->oldest].start_ns + run->timeout_ns;
		if (deadline < next)
			next = deadline;
	}
	return next;
}

static int arm_timer(const struct run *run, int64_t when_ns)
{
	struct itimerspec its = {
		.it_value = { .tv_sec = when_ns / NS_PER_SEC,
			      .tv_nsec = when_ns % NS_PER_SEC },
	};

	if (timerfd_settime(run->timer_fd, TFD_TIMER_ABSTIME, &its, NULL) < 0) {
		warn_errno("timerfd_settime");
		return -1;
	}
	return 0;
}

static int wait_and_dispatch(struct run *run, int64_t wakeup_ns)
{
	struct epoll_event events[EVENT_BATCH];
	int64_t now = now_ns();
	/* The timerfd gives the precise wakeup; the epoll timeout (rounded up,
	 * plus 1 ms) is only a safety net in case the timer is ever lost. */
	int timeout_ms = wakeup_ns <= now ? 0
			 : (int)((wakeup_ns - now) / NS_PER_MS + 2);

	if (timeout_ms > 0 && arm_timer(run, wakeup_ns) < 0)
		return -1;
	int n = epoll_wait(run->epoll_fd, events, EVENT_BATCH, timeout_ms);
	if (n < 0 && errno != EINTR) {
		warn_errno("epoll_wait");
		return -1;
	}
	for (int k = 0; k < n; k++) {
		if (events[k].data.u64 == TIMER_TAG) {
			uint64_t expirations;
			/* Drain it so level-triggered epoll stops reporting it. */
			if (read(run->timer_fd, &expirations,
				 sizeof(expirations)) < 0 && errno != EAGAIN) {
				warn_errno("read timerfd");
				return -1;
			}
			continue;
		}
		handle_connection_event(run, (long)events[k].data.u64,
					events[k].events);
	}
	return 0;
}

static int run_load(struct run *run)
{
	run->t0_ns = now_ns();
	run->start_window_end_ns = run->t0_ns + seconds_to_ns(opt.duration_s);
	run->hard_end_ns = run->start_window_end_ns + run->timeout_ns;

	for (;;) {
		int64_t now = now_ns();
		start_due_connections(run, now);
		expire_timeouts(run, now_ns());
		if (!may_start_more(run) && run->inflight == 0)
			break;
		if (wait_and_dispatch(run, next_wakeup_ns(run)) < 0)
			return -1;
	}
	run->end_ns = now_ns();
	return 0;
}

/* ---- reporting ---------------------------------------------------------- */

struct percentiles {
	long n;
	double p50, p90, p99, max;
};

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted values: the smallest value with at
 * least q of the samples at or below it. */
static double nearest_rank(const double *sorted, long n, double q)
{
	long rank = (long)ceil(q * (double)n);

	return sorted[rank < 1 ? 0 : rank - 1];
}

static struct percentiles summarize(double *values, long n)
{
	struct percentiles p = { .n = n };

	if (n == 0)
		return p; /* all zero: the documented value for an empty set */
	qsort(values, (size_t)n, sizeof(*values), compare_doubles);
	p.p50 = nearest_rank(values, n, 0.50);
	p.p90 = nearest_rank(values, n, 0.90);
	p.p99 = nearest_rank(values, n, 0.99);
	p.max = values[n - 1];
	return p;
}

static double ns_to_ms(int64_t ns)
{
	return (double)ns / (double)NS_PER_MS;
}

struct report {
	struct tally tally;
	struct percentiles connect_ms, total_ms, refused_ms;
	double duration_s;
};

static int build_report(const struct run *run, struct report *r)
{
	long n = run->started;
	double *connect = malloc(sizeof(double) * (size_t)(n + 1));
	double *total = malloc(sizeof(double) * (size_t)(n + 1));
	double *refused = malloc(sizeof(double) * (size_t)(n + 1));
	long n_ok = 0, n_refused = 0;

	memset(r, 0, sizeof(*r));
	if (!connect || !total || !refused) {
		warn_errno("allocate report");
		free(connect), free(total), free(refused);
		return -1;
	}
	for (long i = 0; i < n; i++) {
		const struct conn *c = &run->conns[i];
		r->tally.by_outcome[c->outcome]++;
		if (c->outcome == OUT_OK) {
			connect[n_ok] = ns_to_ms(c->connect_ns);
			total[n_ok++] = ns_to_ms(c->total_ns);
		} else if (c->outcome == OUT_REFUSED) {
			refused[n_refused++] = ns_to_ms(c->total_ns);
		}
	}
	r->connect_ms = summarize(connect, n_ok);
	r->total_ms = summarize(total, n_ok);
	r->refused_ms = summarize(refused, n_refused);
	r->duration_s = (double)(run->end_ns - run->t0_ns) / (double)NS_PER_SEC;
	free(connect), free(total), free(refused);
	return 0;
}

static void print_json(long started, const struct report *r)
{
	const long *t = r->tally.by_outcome;

	printf("{\"started\":%ld,\"ok\":%ld,\"refused\":%ld,\"timeout\":%ld,"
	       "\"error\":%ld,", started, t[OUT_OK], t[OUT_REFUSED],
	       t[OUT_TIMEOUT], t[OUT_ERROR]);
	printf("\"connect_ms\":{\"p50\":%.3f,\"p90\":%.3f,\"p99\":%.3f,"
	       "\"max\":%.3f},", r->connect_ms.p50, r->connect_ms.p90,
	       r->connect_ms.p99, r->connect_ms.max);
	printf("\"total_ms\":{\"p50\":%.3f,\"p90\":%.3f,\"p99\":%.3f,"
	       "\"max\":%.3f},", r->total_ms.p50, r->total_ms.p90,
	       r->total_ms.p99, r->total_ms.max);
	printf("\"refused_ms\":{\"p50\":%.3f,\"p90\":%.3f,\"max\":%.3f},",
	       r->refused_ms.p50, r->refused_ms.p90, r->refused_ms.max);
	printf("\"duration_s\":%.3f}\n", r->duration_s);
}

static void print_latency_line(const char *label, const struct percentiles *p,
			       bool with_p99)
{
	if (p->n == 0) {
		printf("%-11s (none)\n", label);
		return;
	}
	printf("%-11s p50=%.3f p90=%.3f", label, p->p50, p->p90);
	if (with_p99)
		printf(" p99=%.3f", p->p99);
	printf(" max=%.3f  (n=%ld)\n", p->max, p->n);
}

static void print_human(long started, const struct report *r)
{
	const long *t = r->tally.by_outcome;

	printf(PROG ": %s port %ld, rate %.3f/s, duration %.3f s, timeout %.3f s\n",
	       opt.target_text, opt.port, opt.rate, opt.duration_s,
	       opt.timeout_s);
	printf("started=%ld ok=%ld refused=%ld timeout=%ld error=%ld"
	       " in %.3f s\n", started, t[OUT_OK], t[OUT_REFUSED],
	       t[OUT_TIMEOUT], t[OUT_ERROR], r->duration_s);
	print_latency_line("connect_ms", &r->connect_ms, true);
	print_latency_line("total_ms", &r->total_ms, true);
	print_latency_line("refused_ms", &r->refused_ms, false);
}

static void print_ms_cell(FILE *f, int64_t ns)
{
	if (ns >= 0)
		fprintf(f, "%.3f", ns_to_ms(ns));
	fputc(',', f);
}

static void write_csv_row(FILE *f, const struct run *run, long i)
{
	const struct conn *c = &run->conns[i];

	fprintf(f, "%ld,%s,", i,
		c->source == NO_SOURCE ? "" : opt.sources[c->source].text);
	print_ms_cell(f, c->start_ns - run->t0_ns);
	print_ms_cell(f, c->connect_ns);
	print_ms_cell(f, c->total_ns);
	fprintf(f, "%s,", outcome_names[c->outcome]);
	if (c->err)
		fprintf(f, "%d", c->err);
	fputc('\n', f);
}

static int write_csv(FILE *f, const struct run *run)
{
	fprintf(f, "i,source,start_ms,connect_ms,total_ms,outcome,errno\n");
	for (long i = 0; i < run->started; i++)
		write_csv_row(f, run, i);
	if (fflush(f) != 0 || ferror(f)) {
		fprintf(stderr, PROG ": write %s: %s\n", opt.csv_path,
			strerror(errno));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct run run = { .epoll_fd = -1, .timer_fd = -1 };
	struct report report;
	FILE *csv = NULL;

	parse_options(argc, argv);
	/* Opened before the run so a bad path fails now, not after it. */
	if (opt.csv_path && !(csv = fopen(opt.csv_path, "we"))) {
		fprintf(stderr, PROG ": open %s: %s\n", opt.csv_path,
			strerror(errno));
		return 1;
	}
	if (setup_run(&run) < 0 || run_load(&run) < 0)
		return 1;
	if (build_report(&run, &report) < 0)
		return 1;

	if (opt.json)
		print_json(run.started, &report);
	else
		print_human(run.started, &report);
	if (fflush(stdout) != 0) {
		warn_errno("write summary to stdout");
		return 1;
	}
	if (csv && (write_csv(csv, &run) < 0 || fclose(csv) != 0))
		return 1;
	free(run.conns);
	return 0;
}
