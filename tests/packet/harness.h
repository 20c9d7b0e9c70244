// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The packet tests' harness: the sluice object loaded once per suite, the
 * maps prepared for each case, the program run through BPF_PROG_TEST_RUN,
 * counter snapshots whose every delta a case checks, the RST a reject must
 * send built independently, and an independent reference classifier.
 */
#ifndef SLUICE_TEST_PACKET_HARNESS_H
#define SLUICE_TEST_PACKET_HARNESS_H

#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <cmocka.h>

#include "sluice_abi.h"
#include "sluice.skel.h"
#include "frames.h"

#define ETH_HLEN_MIN 14

enum {
	L_QUEUE  = 1,   /* LIMITED, Queue response */
	L_REJECT = 2,   /* LIMITED, Reject response */
	L_EXEMPT = 3,   /* EXEMPT */
	L_UNUSED = 7,   /* type UNUSED, but a port points at it */
	L_OOR    = 200, /* out of the sl_levels range */
};

#define P_QUEUE   80
#define P_REJECT  443
#define P_EXEMPT  22
#define P_UNUSED  8080
#define P_OOR     9090
#define P_NONE    8081  /* no class entry: the default class (no level) */

#define LIMIT        2
#define EXEMPT_LIMIT 1
#define HB_TIMEOUT   5000000000ULL

/* Setup flags (on top of the default configuration). */
#define S_FULL        (1u << 0)  /* seats_in_use = seat_limit (exempt: limit + 4) */
#define S_NOCONFIG    (1u << 1)  /* sl_config.flags = 0 */
#define S_HB_ZERO     (1u << 2)  /* heartbeat never written */
#define S_HB_OLD      (1u << 3)  /* heartbeat 6 s old (timeout 5 s) */
#define S_HB_FUTURE   (1u << 4)  /* heartbeat 60 s in the future */
#define S_HB_RECENT   (1u << 5)  /* heartbeat 4 s old: fresh */
#define S_FAIL_CLOSED (1u << 6)
#define S_TIMEOUT0    (1u << 7)  /* heartbeat_timeout_ns = 0: failsafe off */
#define S_WAITING     (1u << 8)  /* waiting = 1 on every level */
#define S_PRE_CONN    (1u << 9)  /* the frame's 4-tuple is already admitted */
#define S_SPC3        (1u << 10) /* seats_per_conn 3, seat_limit 4 */
#define S_SPC0        (1u << 11) /* seats_per_conn 0 (means 1) */
#define S_ALMOST_FULL (1u << 12) /* seats_in_use = seat_limit - 1 */
#define S_SEATS2      (1u << 13) /* seats_in_use = 2 */
#define S_FAIL_STATIC (1u << 14)

enum { OUT_SAME = 0, OUT_RST = 1 };

#define G_FIELDS(X) X(syns) X(unprotected) X(malformed) X(fragments) \
	X(failsafe_open) X(failsafe_closed) X(conn_table_full) X(events_lost) \
	X(rst_failed) X(established) X(released) X(tickets_admitted) X(tickets_rejected) \
	X(policy_deferred) X(policy_refunds) X(shadow_passed) X(undispatched) \
	X(frames_copied) X(frames_too_long) X(rst_released) X(icmp_released) X(acks_unproved) \
	X(closes_quiet) X(martians) X(failsafe_static)
/* static_sweeps and static_expired move on the failsafe timer's own time, not a
 * frame's: tests/packet/test_fail_static.c reads them. */
#define L_FIELDS(X) X(syns) X(admitted) X(deferred) X(rejected) X(retransmits) \
	X(closed) X(failsafe) X(shadow_passed) X(unseated) X(acks_proved) \
	X(closed_unserved) X(served) X(served_log2)

struct snap {
	struct sluice_stats g;
	struct sluice_level_stats l[SLUICE_MAX_LEVELS];
	struct sluice_seats seats[SLUICE_MAX_LEVELS];
};

/*
 * An independent, plain-C statement of what the data path must decide for a
 * frame: the classification rules of the design (Ethernet + up to two VLAN
 * tags; IPv4 and IPv6 length checks; fragments; up to six IPv6 extension
 * headers walked, 512-byte header-offset bound; TCP doff checks; SYN = SYN
 * set, ACK and RST clear).
 */
enum ref_class { REF_OTHER, REF_SYN, REF_MALFORMED, REF_FRAGMENT };

struct ref_info {
	int      family;
	size_t   l2_len, l4_off;
	uint16_t sport, dport;
	uint32_t seq;
	uint8_t  flags;
	uint32_t payload_len;
	uint8_t  saddr[16], daddr[16]; /* IPv4: first 4 bytes */
};

#define REF_MAX_OFF 512

#define DISPATCH_TIMEOUT 300000000ULL /* 3 ticks of 100 ms */

#define POL   3   /* policy index the tests use */
#define P_POL 8443 /* local port whose class names POL */

/* ---- state shared by the cases of a suite --------------------------------- */

extern struct sluice *skel;
extern int prog_fd, reset_fd, fd_config, fd_hb, fd_levels, fd_seats, fd_lvl_stats;
extern int fd_stats, fd_port_cls, fd_classes, fd_conns, fd_evlimit, fd_tickets;
extern int fd_pol_gate, fd_wl_tokens, fd_wl_stats;
/* Seats per connection of each level's class, used by put_port (S_SPC*). */
extern uint16_t level_spc[SLUICE_MAX_LEVELS + 8];
extern int ncpus;
extern struct ring_buffer *rb;

#define MAX_EVENTS 64
/* Events read by drain_events/ring_buffer__consume since the last drain. */
extern struct sluice_event events[MAX_EVENTS];
extern int nevents, events_dropped;
/* The shortest frame the program accepted as a SYN (test_min_frame_size). */
extern int min_accepted_len;
/* The last deferral with its frame (struct sluice_defer_event). */
extern struct sluice_defer_event last_defer;
extern int ndefers;
/* sl_config.dispatch_timeout_ns for the next setup_maps (0: none, as
 * every fixture assumes; the no-dispatcher scenarios set it). */
extern uint64_t dispatch_timeout;

/* ---- helpers (harness.c) ---------------------------------------------------- */

int on_event(void *ctx, void *data, size_t size);
void drain_events(void);
uint64_t mono_ns(void);
void hexdump(const char *what, const uint8_t *b, size_t n);
void zero_array(int fd, uint32_t n, size_t vsz, bool percpu);
void clear_hash(int fd, size_t ksz, size_t max);
long count_hash(int fd, size_t ksz);
void reset_maps(void);
void put_level(uint32_t slot, uint32_t type, uint32_t resp, uint32_t limit, uint32_t spc, const char *name);
void put_port(uint16_t port, uint32_t level);
void put_seats_unclaimed(uint32_t slot, uint64_t in_use, uint64_t waiting, uint64_t unclaimed);
void put_seats(uint32_t slot, uint64_t in_use, uint64_t waiting);
struct sluice_seats get_seats(uint32_t slot);
void put_config(uint64_t timeout, uint32_t fail_mode, uint32_t evps, uint32_t flags);
/* Set a level's flags (enum sluice_level_flags) and sl_config.ack_watch_levels. */
void put_level_flags(uint32_t slot, uint32_t flags);
void put_ack_watch(uint32_t levels);
void put_heartbeat(uint64_t ns);
void setup_maps(unsigned flags);
void read_gstats(struct sluice_stats *out);
void read_lstats(uint32_t level, struct sluice_level_stats *out);
void take_snap(struct snap *s);
int check_deltas(const char *ctx, const struct snap *a, const struct snap *b, const struct sluice_stats *eg, uint32_t elvl, const struct sluice_level_stats *el, int64_t eseats);
int run_xdp(const uint8_t *in, size_t len, uint8_t *out, uint32_t *out_len, uint32_t *retval);
const char *verdict_name(uint32_t v);
void key_from_spec(const struct fr_spec *s, struct sluice_conn_key *k);
uint32_t rst_ack(uint32_t seq, uint8_t flags, size_t payload_len);
size_t expected_rst_from_spec(const struct fr_spec *syn, size_t payload_len, uint8_t *buf);
int check_rst_fields(const char *ctx, const uint8_t *in, size_t l2, int family, size_t in_l4_off, uint32_t exp_ack, const uint8_t *out, size_t out_len);
enum ref_class ref_tcp(const uint8_t *f, size_t len, size_t l4, size_t ip_payload, struct ref_info *ri);
enum ref_class ref_parse(const uint8_t *f, size_t len, struct ref_info *ri);
size_t expected_rst_raw(const uint8_t *in, const struct ref_info *ri, uint32_t ack, uint8_t *buf);
void insert_conn(const struct sluice_conn_key *k, uint32_t level, uint32_t seats);
int check_event(const char *ctx, uint32_t type, uint32_t level, const struct sluice_conn_key *k, uint64_t t0, uint64_t t1);
uint32_t run_expect(const char *ctx, const uint8_t *in, size_t len, uint8_t *out, uint32_t verdict);
int test_setup(void **state);
int group_setup(void **state);
int group_teardown(void **state);
struct sluice_conn_key v4_key(uint16_t sport, uint16_t dport);
void put_ticket(const struct sluice_conn_key *k, uint32_t verdict, uint32_t level, uint16_t seats);
/* A ticket its level does not count (sl_seats.tickets): the data path
 * never looks for it. */
void put_ticket_uncounted(const struct sluice_conn_key *k, uint32_t verdict, uint32_t level,
			  uint16_t seats);
size_t queue_syn(uint8_t *f, uint16_t sport);
void put_policy_port(uint16_t port, uint32_t level, uint16_t wl);
void put_gate(uint32_t mode, uint32_t waiting, int64_t credit_mtok);
/* A gate with slots_held of slot_limit held (LIMIT mode's), `waiting` in the daemon. */
void put_slot_gate(uint32_t mode, uint32_t waiting, int64_t slots_held, int64_t slot_limit);
struct sluice_policy_gate get_gate(void);
int64_t gate_credit(void);
void put_wl_tokens(unsigned slot, uint32_t mtok);
struct sluice_wl_stats wl_stats(unsigned slot);
size_t policy_syn(uint8_t *f, uint16_t sport, uint16_t dport);
const struct sluice_event *one_event(const char *ctx);

/* One frame against the reference classifier (harness.c): 0, or how many
 * things differed (printed). */
int check_against_reference(const char *ctx, const uint8_t *in, size_t len, uint32_t *verdict,
			    enum ref_class *cls);

/* A scenario: a test run after test_setup (maps reset to the default). */
#define SCENARIO(f) { #f, f, test_setup, NULL, NULL }

#endif
