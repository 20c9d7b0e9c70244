/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * How clients retry a connection whose SYN got no answer (lib): the model
 * of the Linux schedule that deferral relies on, written once.
 *
 * Linux since 6.5 retransmits every second for the first four retries
 * (net.ipv4.tcp_syn_linear_timeouts=4), older kernels and other systems
 * after 1, 3, 7 ... s (the RTO doubles from 1 s); both give up after
 * net.ipv4.tcp_syn_retries (6): the last retransmit comes about 63 s after
 * the first SYN on the doubling schedule.
 */
#ifndef SLUICE_SYN_RETRANSMIT_H
#define SLUICE_SYN_RETRANSMIT_H

#include <stdint.h>

#define SL_NS_PER_SEC 1000000000ULL

/* After this long nobody retries any more: waiting longer is pointless. */
#define SL_SYN_RETRY_WINDOW_NS (63ULL * SL_NS_PER_SEC)
/* The reason, for warnings that name a time beyond the window. */
#define SL_SYN_RETRY_WINDOW_TEXT \
	"the last SYN retransmit comes after about 63s with the default net.ipv4.tcp_syn_retries=6"

/* What impatient clients wait for a connection: a common connect timeout
 * (curl's --connect-timeout in scripts, many pools and health checks), by
 * which a Linux client has sent its SYN three or four times.  A deferred
 * connection should be admitted or refused well before it. */
#define SL_SYN_IMPATIENT_NS (3ULL * SL_NS_PER_SEC)
#define SL_SYN_IMPATIENT_TEXT "3s, a common client connect timeout"

/* The longest any scheduler holds a deferred client, whatever it is told:
 * by then a Linux client has retransmitted several times (1, 2, 3, 4, 6,
 * 10 s on the linear-then-doubling schedule), and one still there comes
 * back with its next retransmit and is queued afresh. */
#define SL_SYN_CLIENT_DEADLINE_NS (15ULL * SL_NS_PER_SEC)

/* How long a deferred connection waits at most when its configuration
 * does not say (a level's queueWaitLimit, a workload's queue_timeout):
 * well under SL_SYN_IMPATIENT_NS, so that it is admitted or refused (a RST)
 * while its client still waits, never left to a silent time-out. */
#define SL_DEFERRED_WAIT_NS (2ULL * SL_NS_PER_SEC)
#define SL_DEFERRED_WAIT_TEXT "2s" /* as the schema says it (a unit test holds them equal) */
/* The controlled delay of every queue when its configuration does not say
 * (a level's queueDelayTarget and queueDelayInterval, a workload's
 * queue_delay_target and queue_delay_interval): a burst waits up to the
 * interval; a backlog that stood that long sheds whoever waited past the
 * target, but its newest. */
#define SL_DEFERRED_DELAY_TARGET_NS   (100ULL * 1000000ULL)
#define SL_DEFERRED_DELAY_INTERVAL_NS (1ULL * SL_NS_PER_SEC)

/* When the SYN retransmit after `now` of a connection first seen at
 * `first_syn_ns` is due on the doubling schedule (pure). */
uint64_t sl_syn_next_retransmit(uint64_t first_syn_ns, uint64_t now);

#endif
