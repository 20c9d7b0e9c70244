// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The daemon's loop: one epoll set over the signals (SIGTERM/SIGINT stop,
 * SIGHUP reloads), a timerfd tick, the ring buffer of data path events,
 * the control socket, the metrics listener, the configuration's watch and
 * a reload job's eventfd.  Nothing in it waits on a client.
 */
#include <errno.h>
#include <bpf/libbpf.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "daemon/admission.h"
#include "daemon/daemon.h"
#include "daemon/events.h"
#include "daemon/metrics.h"
#include "daemon/reload_job.h"
#include "lib/clock.h"
#include "lib/log.h"

static int on_event(void *ctx, void *data, size_t size)
{
	struct daemon *d = ctx;

	sl_events_route(d->adm, d->policies, data, size, sl_mono_ns());
	return 0;
}

/* The signals the loop reads from its signalfd. */
static void loop_signals(sigset_t *mask)
{
	sigemptyset(mask);
	sigaddset(mask, SIGTERM);
	sigaddset(mask, SIGINT);
	sigaddset(mask, SIGHUP);
}

/* Before anything is created, loaded or pinned (but after the
 * configuration is read: a stop while it is read ends the daemon at once):
 * a stop or reload signal that arrives during the rest of start-up waits
 * for the loop (which then detaches cleanly) instead of killing the daemon
 * with its pins in place; a client that hangs up never raises SIGPIPE. */
int daemon_block_signals(void)
{
	sigset_t mask;

	loop_signals(&mask);
	if (sigprocmask(SIG_BLOCK, &mask, NULL))
		return -errno;
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

int daemon_setup_loop(struct daemon *d)
{
	struct epoll_event ev = {.events = EPOLLIN};
	uint64_t tick_ns = d->cfg->server.tick_ns;
	struct itimerspec its = {
		.it_interval = {.tv_sec = (time_t)(tick_ns / 1000000000ULL), .tv_nsec = (long)(tick_ns % 1000000000ULL)},
	};
	sigset_t mask;

	its.it_value = its.it_interval;
	loop_signals(&mask);
	d->sig_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	d->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	d->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (d->sig_fd < 0 || d->timer_fd < 0 || d->epoll_fd < 0)
		return -errno;
	if (timerfd_settime(d->timer_fd, 0, &its, NULL))
		return -errno;
	d->events = ring_buffer__new(d->dp.maps.fd[SL_MAP_EVENTS], on_event, d, NULL);
	if (!d->events)
		return -errno;
	ev.data.fd = d->sig_fd;
	if (epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, d->sig_fd, &ev))
		return -errno;
	ev.data.fd = d->timer_fd;
	if (epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, d->timer_fd, &ev))
		return -errno;
	ev.data.fd = ring_buffer__epoll_fd(d->events);
	if (epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, ev.data.fd, &ev))
		return -errno;
	{
		int err = sl_reqsrv_open(&d->control, d->control_fd, d->epoll_fd, &daemon_control_limits,
					 daemon_control_request_complete, daemon_answer_control, d);

		if (err)
			return err;
		d->control_fd = -1; /* the request server's now */
	}
	if (daemon_metrics_address(d, d->cfg)) {
		const struct sl_metrics_handlers h = {
			.render = daemon_render_metrics, .health = daemon_health, .ctx = d,
		};
		const char *address = daemon_metrics_address(d, d->cfg);
		int err = sl_metrics_open(&d->metrics, address, d->epoll_fd, &h);

		if (err)
			return err;
		pr_info("metrics on http://%s/metrics", address);
	}
	if (d->opts.watch_config) {
		int err = sl_config_watch_open(&d->watch, d->opts.config_path, d->epoll_fd);

		if (err)
			return err;
		pr_info("watching %s: a change is reloaded", d->opts.config_path);
	}
	return 0;
}

int daemon_run_loop(struct daemon *d)
{
	int rb_fd = ring_buffer__epoll_fd(d->events);

	for (;;) {
		struct epoll_event evs[4];
		/* Between ticks, admission's own deadline (a level that may be
		 * stalled) wakes the loop when it is due, not at the next tick. */
		uint64_t due = sl_adm_next_deadline(d->adm), now = sl_mono_ns();
		int wait_ms = due == UINT64_MAX ? -1 : due <= now ? 0 : due - now >= 1000000000ULL ? 1000
			      : (int)((due - now + 999999) / 1000000);
		int n = epoll_wait(d->epoll_fd, evs, 4, wait_ms);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (due != UINT64_MAX && sl_mono_ns() >= due) {
			/* A verdict of "nothing closed" reads every close the
			 * data path sent first: a loop that woke late (a busy
			 * host) would otherwise judge before its own backlog. */
			ring_buffer__consume(d->events);
			sl_adm_deadlines(d->adm, sl_mono_ns());
		}
		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;

			if (fd == d->timer_fd) {
				uint64_t expirations;

				if (read(fd, &expirations, sizeof(expirations)) > 0)
					daemon_tick(d);
			} else if (fd == rb_fd) {
				ring_buffer__consume(d->events);
			} else if (d->job && fd == sl_reload_job_fd(d->job)) {
				if (sl_reload_job_done(d->job))
					daemon_reload_finish(d);
			} else if (sl_config_watch_handle(&d->watch, fd, sl_mono_ns())) {
				/* a change: the tick reloads once it settles */
			} else if (sl_reqsrv_handle(d->control, fd, evs[i].events)) {
				/* answered (or progressed) */
			} else if (sl_metrics_handle(d->metrics, fd, evs[i].events)) {
				/* served (or progressed) */
			} else if (fd == d->sig_fd) {
				struct signalfd_siginfo si;

				if (read(fd, &si, sizeof(si)) != sizeof(si))
					continue;
				if (si.ssi_signo == SIGHUP) {
					daemon_reload_start(d, "sighup");
				} else {
					pr_info("%s: detaching", strsignal((int)si.ssi_signo));
					sl_svcmgr_stopping(&d->svcmgr);
					return 0;
				}
			}
		}
	}
}

