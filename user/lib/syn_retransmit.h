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

/* How long the schedulers hold a deferred client before they treat it as
 * gone: by then a Linux client has retransmitted several times (1, 2, 3,
 * 4, 6, 10 s on the linear-then-doubling schedule), and one still there
 * comes back with its next retransmit and is queued afresh. */
#define SL_SYN_CLIENT_DEADLINE_NS (15ULL * SL_NS_PER_SEC)

/* When the SYN retransmit after `now` of a connection first seen at
 * `first_syn_ns` is due on the doubling schedule (pure). */
uint64_t sl_syn_next_retransmit(uint64_t first_syn_ns, uint64_t now);

#endif
