// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * XDP cost per packet, measured with BPF_PROG_TEST_RUN (in-kernel timing,
 * `repeat` runs per call), against baselines measured in the same run:
 *   xdp_pass    the empty program
 *   parse_pass  sluice's parser, then pass
 *   sluice_xdp  non-SYN, SYN retransmit, SYN deferred by its level, SYN
 *               rejected (RST built), SYN admitted inline; then the
 *               load-scheduler gate: SYN admitted with a policy in PASS and
 *               in THROTTLE mode (credit taken), SYN deferred by a THROTTLE
 *               policy with no credit.
 * The figures "with a policy" and "without" use the same SYNs and the same
 * class, with and without its policy, in interleaved rounds.  Every figure
 * checks its verdict and the counters of the path it claims (events sent or
 * suppressed, policy gate seen, credit taken), so a figure cannot silently
 * measure another path.  Prints a table and ratios; no assertion on time
 * (docs/BENCHMARKS.md).
 */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <sys/socket.h>
#include <unistd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dataplane/settings.h"
#include "dataplane/dataplane.h"
#include "config/config.h"
#include "frames.h"
#include "engine/plan.h"
#include "lib/frame.h"
#include "lib/handoff.h"
#include "sluice.skel.h"
#include "sluice_class.h"

#define REPEAT   200000
#define N_ADMIT  10000 /* distinct 4-tuples per admission case and round */
#define ROUNDS   10    /* admission rounds, the three cases interleaved block by block */
#define A_BLOCK  100   /* SYNs of one admission case in a row */
#define N_RST    20000 /* RSTs, one per call */
#define CREDIT   (INT64_MAX / 4) /* THROTTLE: a credit that never runs out */
#define SPLIT    5     /* a repeated figure: median of SPLIT calls of REPEAT / SPLIT runs */
#define DROUNDS  40    /* deferral figures: median of DROUNDS rounds, the cases interleaved */
#define EV_CHUNK 1000  /* runs per call while every SYN sends an event: 370 KB of the 1 MiB ring */
#define N_INJECT 20000 /* held SYN re-injections timed */
#define MAX_KEYS 8     /* class keys of the bench's SYNs (client port intervals) */
#define TOKENS   1000  /* milli-tokens one SYN takes in the policy cases (1 token) */

static struct sluice *skel;
static struct sl_maps maps;
static struct ring_buffer *ring;
static unsigned long long n_events; /* events drained from sl_events */

/* Runs prog over frame `repeat` times in one call; every run must return
 * `want` (an XDP verdict).  Returns the kernel's ns per run. */
static double run_repeat(int prog, const uint8_t *frame, size_t len, unsigned repeat, int want,
			 const char *what)
{
	uint8_t out[4096];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = (__u32)len,
		    .data_out = out, .data_size_out = sizeof(out), .repeat = repeat);

	if (bpf_prog_test_run_opts(prog, &o)) {
		fprintf(stderr, "test_run: %s\n", strerror(errno));
		exit(1);
	}
	if ((int)o.retval != want) {
		fprintf(stderr, "bench_xdp: %s: verdict %u, expected %d (wrong path)\n", what,
			o.retval, want);
		exit(1);
	}
	return o.duration; /* ns per run, averaged by the kernel */
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median of n figures (sorts them): one burst of the VM's other load
 * moves one figure, not the result. */
static double median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A path that leaves the state as it found it: REPEAT runs in SPLIT calls. */
static double run_median(int prog, const uint8_t *frame, size_t len, int want, const char *what)
{
	double t[SPLIT];

	for (unsigned i = 0; i < SPLIT; i++)
		t[i] = run_repeat(prog, frame, len, REPEAT / SPLIT, want, what);
	return median(t, SPLIT);
}

static void fail(const char *what)
{
	fprintf(stderr, "bench_xdp: %s\n", what);
	exit(1);
}

static size_t syn(uint8_t *buf, uint16_t sport, uint16_t dport, uint8_t flags)
{
	struct fr_layout lay;
	struct fr_spec s;

	fr_default_v4_syn(&s);
	s.sport = sport;
	s.dport = dport;
	s.tcp_flags = flags;
	memcpy(s.saddr4, (uint8_t[]){198, 18, 7, 2}, 4); /* a gold client in labels.yaml */
	memcpy(s.daddr4, (uint8_t[]){198, 18, 0, 1}, 4);
	return fr_build(&s, buf, &lay);
}

static struct sluice_conn_key conn_key(uint16_t sport);

/* Held SYN re-injections per second on one core, the daemon's side of one
 * as sl_inject_syn does it: the frame parsed and its checksum checked, the
 * connection recorded in sl_conns, the SYN wrapped as a hand-off frame and
 * sent through a packet socket on the loopback device, where sluice_tc_out
 * (tcx egress) turns it into lo's receive path (a SYN to a closed port of
 * 127.0.0.1, which the stack answers with a RST), the record removed again
 * (a close would).  Every frame must have been turned (handoff_in).
 * Returns re-injections per second. */
static double bench_reinject(void)
{
	static uint8_t frames[N_INJECT][128];
	static size_t lens[N_INJECT];
	struct sluice_iface lo = {.slot = 0, .flags = SLUICE_IF_HANDOFF_READY, .cookie = 0x51c3};
	struct sockaddr_ll to = {.sll_family = AF_PACKET, .sll_ifindex = 1,
				 .sll_protocol = htons(SLUICE_ETH_P_HANDOFF)};
	struct sluice_if_stats st;
	struct timespec t0, t1;
	__u32 key = 1;
	int pkt_fd, link_fd;

	pkt_fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	link_fd = bpf_link_create(bpf_program__fd(skel->progs.sluice_tc_out), 1,
				  (enum bpf_attach_type)47 /* BPF_TCX_EGRESS */, NULL);
	if (pkt_fd < 0 || link_fd < 0 ||
	    bpf_map_update_elem(maps.fd[SL_MAP_IFACES], &key, &lo, BPF_ANY))
		fail("re-injection: packet socket, tcx egress on lo, sl_ifaces");
	for (unsigned i = 0; i < N_INJECT; i++) {
		struct fr_spec sp;

		fr_default_v4_syn(&sp);
		memset(sp.dmac, 0, 6); /* the loopback device's address */
		memcpy(sp.saddr4, (uint8_t[]){127, 0, 0, 1}, 4);
		memcpy(sp.daddr4, (uint8_t[]){127, 0, 0, 1}, 4);
		sp.sport = (uint16_t)(20000 + i);
		sp.dport = 9;
		lens[i] = fr_build(&sp, frames[i], NULL);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned i = 0; i < N_INJECT; i++) {
		struct sluice_conn c = {.level = 0, .seats = 1, .state = SLUICE_CONN_ADMITTED};
		struct sluice_conn_key k = conn_key((uint16_t)(20000 + i));
		uint8_t out[160];
		struct sl_frame fr;
		int n;

		if (sl_frame_parse(frames[i], lens[i], &fr) ||
		    sl_frame_fix_tcp_csum(frames[i], &fr) == SL_CSUM_BAD)
			fail("re-injection: the frame does not check");
		c.syn_seq = htonl(fr.seq);
		if (bpf_map_update_elem(maps.fd[SL_MAP_CONNS], &k, &c, BPF_NOEXIST))
			fail("re-injection: cannot record the connection");
		n = sl_handoff_wrap(frames[i], lens[i], lo.cookie, SLUICE_HANDOFF_IN, out, sizeof(out));
		if (n < 0 || sendto(pkt_fd, out, (size_t)n, 0, (struct sockaddr *)&to, sizeof(to)) != n)
			fail("re-injection: send failed");
		bpf_map_delete_elem(maps.fd[SL_MAP_CONNS], &k);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (sl_maps_if_stats(&maps, 0, &st) || st.handoff_in != N_INJECT)
		fail("re-injection: sluice_tc_out did not turn every frame");
	bpf_map_delete_elem(maps.fd[SL_MAP_IFACES], &key);
	close(link_fd);
	close(pkt_fd);
	return N_INJECT / ((double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
}

static struct sluice_conn_key conn_key(uint16_t sport)
{
	struct sluice_conn_key k = {0};

	k.saddr[10] = k.saddr[11] = 0xff;
	memcpy(k.saddr + 12, (uint8_t[]){198, 18, 7, 2}, 4);
	k.daddr[10] = k.daddr[11] = 0xff;
	memcpy(k.daddr + 12, (uint8_t[]){198, 18, 0, 1}, 4);
	k.sport = htons(sport);
	k.dport = htons(8080);
	k.family = 4;
	return k;
}

static void set_seats(unsigned slot, uint64_t n)
{
	struct sluice_seats s = {.seats_in_use = n};

	bpf_map_update_elem(maps.fd[SL_MAP_SEATS], &slot, &s, BPF_ANY);
}

static void set_level(unsigned slot, uint32_t resp, uint32_t limit)
{
	struct sluice_level l;

	bpf_map_lookup_elem(maps.fd[SL_MAP_LEVELS], &slot, &l);
	l.limit_response = resp;
	l.seat_limit = limit;
	l.type = SLUICE_LEVEL_LIMITED;
	bpf_map_update_elem(maps.fd[SL_MAP_LEVELS], &slot, &l, BPF_ANY);
}

static struct sluice_settings get_config(void)
{
	struct sluice_settings c;
	__u32 zero = 0;

	if (bpf_map_lookup_elem(maps.fd[SL_MAP_CONFIG], &zero, &c))
		fail("cannot read sl_config");
	return c;
}

static void put_config(const struct sluice_settings *c)
{
	__u32 zero = 0;

	if (bpf_map_update_elem(maps.fd[SL_MAP_CONFIG], &zero, c, BPF_ANY))
		fail("cannot write sl_config");
}

/* The classification of the bench's SYNs, found the way classify() in
 * bpf/sluice.bpf.c finds it: per half of the class (schema, policy), the
 * lowest-ranked candidate of sl_classes under the masks in use, or the
 * default class. */
enum bench_half { HALF_SCHEMA, HALF_POLICY, HALVES };

struct bench_class {
	struct sluice_class_key key[HALVES];
	bool in_table[HALVES];
};

static uint32_t port_cls(uint8_t gen, unsigned dir, uint16_t port)
{
	__u32 idx = (__u32)gen * 2 * 65536 + dir * 65536 + port, v = 0;

	bpf_map_lookup_elem(maps.fd[SL_MAP_PORT_CLS], &idx, &v);
	return v;
}

static uint32_t rank_of(const struct sluice_class *c, unsigned half)
{
	return half == HALF_SCHEMA ? SLUICE_SCHEMA_RANK(c) : SLUICE_POLICY_RANK(c);
}

static void take_half(struct sluice_class *to, const struct sluice_class *from, unsigned half)
{
	if (half == HALF_SCHEMA)
		sluice_class_take_schema(to, from);
	else
		sluice_class_take_policy(to, from);
}

static struct bench_class find_class(uint16_t sport)
{
	struct sluice_settings cfg = get_config();
	struct sluice_conn_key k = conn_key(sport);
	struct sluice_lpm_key lk = {.prefixlen = SLUICE_LPM_FULL};
	struct sluice_class_key ids = {0};
	struct sluice_lpm_val lv;
	struct bench_class b = {0};
	uint8_t gen = cfg.generation & 1;

	lk.gen = gen;
	memcpy(lk.addr, k.saddr, 16);
	ids.src = bpf_map_lookup_elem(maps.fd[SL_MAP_SRC_CLS], &lk, &lv) ? 0 : (uint16_t)lv.cls;
	memcpy(lk.addr, k.daddr, 16);
	ids.dst = bpf_map_lookup_elem(maps.fd[SL_MAP_DST_CLS], &lk, &lv) ? 0 : (uint16_t)lv.cls;
	ids.sport = (uint16_t)port_cls(gen, SLUICE_PORT_SRC, sport);
	ids.dport = (uint16_t)port_cls(gen, SLUICE_PORT_DST, 8080);
	for (unsigned half = 0; half < HALVES; half++) {
		uint32_t best = rank_of(&cfg.default_class, half);

		for (unsigned m = 1; m < SLUICE_MASKS; m++) {
			struct sluice_class_key key = {
				.src = (m & SLUICE_DIM_SRC) ? ids.src : 0,
				.dst = (m & SLUICE_DIM_DST) ? ids.dst : 0,
				.sport = (m & SLUICE_DIM_SPORT) ? ids.sport : 0,
				.dport = (m & SLUICE_DIM_DPORT) ? ids.dport : 0,
				.gen = gen, .mask = (uint8_t)m,
			};
			struct sluice_class c;

			if (!(cfg.masks & (1u << m)) ||
			    bpf_map_lookup_elem(maps.fd[SL_MAP_CLASSES], &key, &c) || rank_of(&c, half) >= best)
				continue;
			best = rank_of(&c, half);
			b.key[half] = key;
			b.in_table[half] = true;
		}
	}
	return b;
}

static struct sluice_class get_class(const struct bench_class *b)
{
	struct sluice_class out = get_config().default_class, c;

	for (unsigned half = 0; half < HALVES; half++) {
		if (!b->in_table[half])
			continue;
		if (bpf_map_lookup_elem(maps.fd[SL_MAP_CLASSES], &b->key[half], &c))
			fail("class entry vanished");
		take_half(&out, &c, half);
	}
	return out;
}

/* Each half where the data path finds it: in the entry that decides it,
 * or in the default class. */
static void put_class(const struct bench_class *b, const struct sluice_class *c)
{
	struct sluice_settings cfg = get_config();
	bool cfg_changed = false;

	for (unsigned half = 0; half < HALVES; half++) {
		struct sluice_class e;

		if (b->in_table[half]) {
			if (bpf_map_lookup_elem(maps.fd[SL_MAP_CLASSES], &b->key[half], &e))
				fail("class entry vanished");
			take_half(&e, c, half);
			if (bpf_map_update_elem(maps.fd[SL_MAP_CLASSES], &b->key[half], &e, BPF_EXIST))
				fail("cannot write the class entry");
			continue;
		}
		take_half(&cfg.default_class, c, half);
		cfg_changed = true;
	}
	if (cfg_changed)
		put_config(&cfg);
}

static void put_gate(unsigned pol, uint32_t mode, int64_t credit_mtok)
{
	struct sluice_policy_gate g = {.mode = mode, .credit_mtok = credit_mtok};
	__u32 key = pol;

	if (bpf_map_update_elem(maps.fd[SL_MAP_POL_GATE], &key, &g, BPF_ANY))
		fail("cannot write sl_pol_gate");
}

static int64_t gate_credit(unsigned pol)
{
	struct sluice_policy_gate g;

	if (sl_maps_policy_gate(&maps, pol, &g))
		fail("cannot read sl_pol_gate");
	return g.credit_mtok;
}

static struct sluice_wl_stats wl_stats(unsigned pol, unsigned slot)
{
	struct sluice_wl_stats s;

	if (sl_maps_wl_stats(&maps, pol, slot, &s))
		fail("cannot read sl_wl_stats");
	return s;
}

static struct sluice_stats global(void)
{
	struct sluice_stats s;

	if (sl_maps_global_stats(&maps, &s))
		fail("cannot read sl_stats");
	return s;
}

static int on_event(void *ctx, void *data, size_t len)
{
	(void)ctx;
	(void)data;
	(void)len;
	n_events++;
	return 0;
}

static void drain(void)
{
	if (ring_buffer__consume(ring) < 0)
		fail("cannot drain sl_events");
}

/* Event regimes of the deferral and RST figures.  SENT: the per-CPU cap
 * (eventsPerSecond) is checked but never reached, every SYN reserves and
 * submits an event, and the ring is drained after every call of at most
 * EV_CHUNK runs, so it never fills.  CAPPED: this second's cap is already
 * used up on every CPU, so every SYN takes the suppressed branch (counted
 * in events_lost) and nothing reaches the ring: a SYN flood's steady state. */
static void events_sent(void)
{
	struct sluice_settings c = get_config();

	c.events_per_sec = UINT32_MAX;
	put_config(&c);
	drain();
}

static void events_capped(uint32_t cap, __u32 level)
{
	int ncpu = libbpf_num_possible_cpus();
	struct sluice_ev_limit *v = calloc((size_t)ncpu, sizeof(*v));
	struct sluice_settings c = get_config();

	if (!v || ncpu <= 0)
		fail("out of memory");
	c.events_per_sec = cap;
	put_config(&c);
	for (int i = 0; i < ncpu; i++) {
		v[i].window_start_ns = sl_mono_ns();
		v[i].count = cap;
	}
	if (bpf_map_update_elem(maps.fd[SL_MAP_EV_LIMIT], &level, v, BPF_ANY))
		fail("cannot write sl_ev_limit");
	free(v);
	drain();
}

/* A deferral leaves the state as it found it: `runs` repeated runs in the
 * current event regime, in calls of EV_CHUNK runs with a drain after each
 * when events are sent.  Checks that the events went where the regime
 * says, and that the policy gate saw (pol_syns), dropped (pol_drops) and
 * refunded (refunds) what the case says.  Returns ns per run. */
static double defer_sample(int prog, const uint8_t *frame, size_t len, unsigned runs, bool sent,
			   unsigned pol, unsigned wl_slot, unsigned pol_syns, unsigned pol_drops,
			   unsigned refunds, const char *what)
{
	unsigned long long ev0 = n_events;
	struct sluice_stats s0 = global(), s1;
	struct sluice_wl_stats w0 = wl_stats(pol, wl_slot), w1;
	double t = 0;

	if (!sent)
		t = run_repeat(prog, frame, len, runs, XDP_DROP, what);
	else {
		for (unsigned i = 0; i < runs / EV_CHUNK; i++) {
			t += run_repeat(prog, frame, len, EV_CHUNK, XDP_DROP, what);
			drain();
		}
		t /= runs / EV_CHUNK;
	}
	drain();
	s1 = global();
	w1 = wl_stats(pol, wl_slot);
	if (sent ? (n_events - ev0 != runs || s1.events_lost != s0.events_lost)
		 : (n_events != ev0 || s1.events_lost - s0.events_lost != runs)) {
		fprintf(stderr, "bench_xdp: %s: %llu events, %llu lost (wrong event path)\n", what,
			n_events - ev0, (unsigned long long)(s1.events_lost - s0.events_lost));
		exit(1);
	}
	if (w1.syns - w0.syns != pol_syns || s1.policy_deferred - s0.policy_deferred != pol_drops ||
	    s1.policy_refunds - s0.policy_refunds != refunds) {
		fprintf(stderr, "bench_xdp: %s: wrong gate path\n", what);
		exit(1);
	}
	return t;
}

/* The admission cases: the same class without its policy, with the policy's
 * gate in PASS mode, and in THROTTLE mode with a credit that never runs out.
 * Each SYN is the first of its 4-tuple: inserted into sl_conns, never the
 * retransmit path. */
/* A_REF: the reference admission (bench_baseline.bpf.c ref_admit) on the
 * same SYNs, interleaved with sluice's. */
enum admit_case { A_NOPOL, A_PASS, A_THROTTLE, A_REF, A__N };

enum defer_case {
	D_LEVEL_SENT, D_LEVEL_SENT_NOCOPY, D_LEVEL_CAPPED, D_LEVEL_PASS_CAPPED, D_LEVEL_THR_CAPPED,
	D_POL_SENT, D_POL_CAPPED, D__N
};

static const char *const d_name[D__N] = {
	[D_LEVEL_SENT]        = "sluice_xdp: SYN deferred (level full), event + frame sent",
	[D_LEVEL_SENT_NOCOPY] = "sluice_xdp: SYN deferred (level full), event sent, no frame",
	[D_LEVEL_CAPPED]      = "sluice_xdp: SYN deferred (level full), event capped",
	[D_LEVEL_PASS_CAPPED] = "sluice_xdp: SYN deferred (level full, policy PASS), event capped",
	[D_LEVEL_THR_CAPPED]  = "sluice_xdp: SYN deferred (level full, policy THROTTLE), event capped",
	[D_POL_SENT]          = "sluice_xdp: SYN deferred by policy (no credit), event sent",
	[D_POL_CAPPED]        = "sluice_xdp: SYN deferred by policy (no credit), event capped",
};

struct bench {
	int sl_fd, pass_fd, ref_fd, ref_conns_fd;
	uint16_t sports[A__N * N_ADMIT + 1]; /* client ports; the last one is never admitted */
	struct bench_class bc[MAX_KEYS]; /* the class keys of the SYNs, one class */
	unsigned n_bc;
	struct sluice_class cls_nopol, cls_pol;
	unsigned pol, wl_slot, level;
	uint64_t seats0;
	int64_t credit;                  /* the gate's credit, as the bench left it */
	double t_pass;                   /* xdp_pass, repeated */
	double t_admit[A__N][ROUNDS];    /* per round, floor subtracted */
	double floor_sum;                /* per-call timer floors, for the footnote */
	unsigned long n_floor;
};

static void put_classes(const struct bench *b, const struct sluice_class *c)
{
	for (unsigned i = 0; i < b->n_bc; i++)
		put_class(&b->bc[i], c);
}

/* One-run calls (a path that changes its state): the xdp_pass run after
 * each gives the per-call timer floor, subtracted, and the empty program's
 * repeated cost is added back, like with like. */
static double floored(struct bench *b, double t_sum, double floor_sum, unsigned n)
{
	b->floor_sum += floor_sum;
	b->n_floor += n;
	return (t_sum - floor_sum) / n + b->t_pass;
}

/* Back to an empty connection table and the level's seats as they were. */
static void untrack(struct bench *b, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct sluice_conn_key k = conn_key(b->sports[i]);
		int fd = i / N_ADMIT == A_REF ? b->ref_conns_fd : maps.fd[SL_MAP_CONNS];

		if (bpf_map_delete_elem(fd, &k))
			fail("an admitted SYN is not tracked");
	}
	set_seats(b->level, b->seats0);
}

/* Switches the bench's class and its policy's gate to case c.  The gate
 * keeps the credit the THROTTLE SYNs left (b->credit mirrors it). */
static void set_case(struct bench *b, enum admit_case c)
{
	if (c == A_REF)
		return; /* its own maps */
	put_classes(b, c == A_NOPOL ? &b->cls_nopol : &b->cls_pol);
	put_gate(b->pol, c == A_THROTTLE ? SLUICE_POLICY_THROTTLE : SLUICE_POLICY_PASS, b->credit);
}

static const char *const a_name[A__N] = {
	[A_NOPOL]    = "sluice_xdp: SYN admitted inline, no policy *",
	[A_PASS]     = "sluice_xdp: SYN admitted, policy PASS *",
	[A_THROTTLE] = "sluice_xdp: SYN admitted, policy THROTTLE (credit) *",
	[A_REF]      = "reference: parse, 1 LPM lookup, 1 hash insert, 1 atomic add *",
};

/* One admission round: N_ADMIT SYNs per case, the cases taking turns every
 * A_BLOCK SYNs in a rotating order (switching per SYN would rewrite the
 * class entry before every run: a cold class lookup in every figure), each
 * SYN a new 4-tuple (case c uses
 * sports[c * N_ADMIT ..]) into a table that grows to A__N * N_ADMIT
 * connections.  Checks that the policy cases went through the gate and
 * that THROTTLE took its tokens, then empties the table again. */
static void admit_round(struct bench *b, unsigned round)
{
	double t_sum[A__N] = {0}, floor_sum[A__N] = {0};
	struct sluice_wl_stats w0 = wl_stats(b->pol, b->wl_slot), w1;
	uint8_t frame[4096];

	for (unsigned blk = 0; blk < N_ADMIT / A_BLOCK; blk++)
		for (unsigned k = 0; k < A__N; k++) {
			enum admit_case c = (enum admit_case)((blk + round + k) % A__N);

			set_case(b, c);
			for (unsigned i = blk * A_BLOCK; i < (blk + 1) * A_BLOCK; i++) {
				size_t len = syn(frame, b->sports[c * N_ADMIT + i], 8080, TH_SYN);

				t_sum[c] += run_repeat(c == A_REF ? b->ref_fd : b->sl_fd, frame, len, 1,
						       XDP_PASS, a_name[c]);
				floor_sum[c] += run_repeat(b->pass_fd, frame, len, 1, XDP_PASS, "xdp_pass");
			}
			if (c == A_THROTTLE)
				b->credit -= A_BLOCK * TOKENS;
		}
	for (unsigned c = 0; c < A__N; c++)
		b->t_admit[c][round] = floored(b, t_sum[c], floor_sum[c], N_ADMIT);
	w1 = wl_stats(b->pol, b->wl_slot);
	if (w1.inline_admitted - w0.inline_admitted != 2 * N_ADMIT ||
	    w1.inline_mtok - w0.inline_mtok != 2ULL * N_ADMIT * TOKENS ||
	    gate_credit(b->pol) != b->credit)
		fail("admission: the policy gate was not on the path");
	untrack(b, A__N * N_ADMIT);
}

static void row(const char *name, double t, double parse, double ref)
{
	char r1[16] = "-", r2[16] = "-";

	if (parse > 0)
		snprintf(r1, sizeof(r1), "%.2fx", t / parse);
	if (ref > 0)
		snprintf(r2, sizeof(r2), "%.2fx", t / ref);
	printf("%-69s %9.1f %10s %10s\n", name, t, r1, r2);
}

int main(int argc, char **argv)
{
	const char *config = argc > 1 ? argv[1] : "tests/packet/classify/labels.yaml";

	if (argc > 2 || (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))) {
		bool help = argc == 2;

		fprintf(help ? stdout : stderr,
			"usage: bench_xdp [CONFIG]   (root, from the repository root; default\n"
			"  tests/packet/classify/labels.yaml)\n"
			"  the XDP data path's cost per packet by path (BPF_PROG_TEST_RUN), an admitted\n"
			"  SYN against a reference admission built in the same run, held SYN\n"
			"  re-injections per second\n");
		return help ? 0 : 2;
	}
	char names[SLUICE_MAX_LEVELS][SLUICE_LEVEL_NAME_LEN] = {{0}};
	static struct bench b;
	struct sl_diags d = SL_DIAGS_INIT;
	struct bpf_object *pass_obj, *parse_obj;
	struct sl_config *cfg = NULL;
	struct sl_plan plan;
	uint8_t frame[4096];
	size_t len;
	double t_pass, t_parse, t_ack, t_retx, t_rst[SPLIT], t_adm[A__N];
	double t_ack_seated, t_ack_unproved;
	static double t_def[D__N][DROUNDS];
	double t_dm[D__N];
	struct sluice_heartbeat hb = {0};
	struct sluice_class orig = {0};
	struct sluice_level lvl0;
	struct sluice_seats seats0;
	int parse_fd;
	uint32_t cap;
	const char *pol_name = "?", *wl_name = "default";
	__u32 zero = 0, tok_key, tokens = TOKENS;

	skel = sluice__open_and_load();
	pass_obj = bpf_object__open_file("build/tests/xdp_pass.bpf.o", NULL);
	parse_obj = bpf_object__open_file("build/tests/bench_baseline.bpf.o", NULL);
	if (!skel || !pass_obj || !parse_obj || bpf_object__load(pass_obj) || bpf_object__load(parse_obj)) {
		fprintf(stderr, "bench_xdp: cannot load the BPF objects (root? run from the repo root)\n");
		return 1;
	}
	b.pass_fd = bpf_program__fd(bpf_object__find_program_by_name(pass_obj, "xdp_pass"));
	parse_fd = bpf_program__fd(bpf_object__find_program_by_name(parse_obj, "parse_pass"));
	b.ref_fd = bpf_program__fd(bpf_object__find_program_by_name(parse_obj, "ref_admit"));
	b.ref_conns_fd = bpf_map__fd(bpf_object__find_map_by_name(parse_obj, "ref_conns"));
	b.sl_fd = bpf_program__fd(skel->progs.sluice_xdp);
	sl_maps_from_skel(skel, &maps);
	if (sl_config_load_file(config, &cfg, &d) || sl_plan_build(cfg, names, "bench", &plan, &d) ||
	    sl_apply_plan(&maps, &plan)) {
		sl_diags_print(&d, stderr);
		return 1;
	}
	hb.mono_ns = sl_mono_ns() + 3600ULL * 1000000000ULL; /* fresh for the whole run */
	bpf_map_update_elem(maps.fd[SL_MAP_HEARTBEAT], &zero, &hb, BPF_ANY);
	ring = ring_buffer__new(maps.fd[SL_MAP_EVENTS], on_event, NULL, NULL);
	if (!ring)
		fail("cannot open sl_events");
	{
		/* The reference's trie holds what sluice's source trie holds. */
		int src = maps.fd[SL_MAP_SRC_CLS];
		int ref = bpf_map__fd(bpf_object__find_map_by_name(parse_obj, "ref_lpm"));
		struct sluice_lpm_key k, next;
		struct sluice_lpm_val v;
		void *prev = NULL;

		while (!bpf_map_get_next_key(src, prev, &next)) {
			if (!bpf_map_lookup_elem(src, &next, &v) && bpf_map_update_elem(ref, &next, &v, BPF_ANY))
				fail("cannot fill the reference's trie");
			k = next;
			prev = &k;
		}
	}
	cap = get_config().events_per_sec ? get_config().events_per_sec : 1000;

	/* Every SYN of the bench has one class: 198.18.7.2 -> 198.18.0.1:8080
	 * from client ports 1024 up (a port the config classifies differently
	 * is skipped).  The client port intervals the config names (labels.yaml:
	 * below 1234, 1234, above) give that class several keys in sl_classes;
	 * put_classes() writes them all.  The figures without a policy
	 * run that class with its policy removed; the policy figures run it
	 * with the config's policy and workload (policy 0 and the default
	 * workload when the config's class has none). */
	for (unsigned i = 0, p = 1024; i <= A__N * N_ADMIT; p++) {
		struct bench_class c;
		struct sluice_class v;
		unsigned j;

		if (p > 65535)
			fail("not enough client ports of one class");
		c = find_class((uint16_t)p);
		v = get_class(&c);
		if (!b.n_bc)
			orig = v;
		else if (memcmp(&v, &orig, sizeof(v)))
			continue; /* a port the config classifies differently */
		for (j = 0; j < b.n_bc; j++)
			if (!memcmp(&c, &b.bc[j], sizeof(c)))
				break;
		if (j == b.n_bc) {
			if (b.n_bc == MAX_KEYS)
				fail("too many class keys for the bench's SYNs");
			b.bc[b.n_bc++] = c;
		}
		b.sports[i++] = (uint16_t)p;
	}
	b.cls_nopol = b.cls_pol = orig;
	b.cls_nopol.policy = b.cls_nopol.workload = SLUICE_NONE16;
	if (orig.policy >= SLUICE_MAX_POLICIES) {
		b.cls_pol.policy = 0;
		b.cls_pol.workload = SLUICE_NONE16;
	}
	b.pol = b.cls_pol.policy;
	b.wl_slot = b.cls_pol.workload < SLUICE_MAX_WORKLOADS ? b.cls_pol.workload : SLUICE_WL_DEFAULT;
	b.level = orig.level;
	if (b.pol < cfg->n_policies) {
		pol_name = cfg->policies[b.pol].name;
		if (b.wl_slot < cfg->policies[b.pol].n_workloads)
			wl_name = cfg->policies[b.pol].workloads[b.wl_slot].name
				  ? cfg->policies[b.pol].workloads[b.wl_slot].name : "(unnamed)";
	}
	tok_key = b.pol * SLUICE_WL_SLOTS + b.wl_slot;
	if (bpf_map_update_elem(maps.fd[SL_MAP_WL_TOKENS], &tok_key, &tokens, BPF_ANY))
		fail("cannot write sl_wl_tokens");
	if (sl_maps_seats(&maps, b.level, &seats0))
		fail("cannot read sl_seats");
	b.seats0 = seats0.seats_in_use;
	put_classes(&b, &b.cls_nopol);

	len = syn(frame, b.sports[0], 8080, TH_SYN);
	b.t_pass = t_pass = run_median(b.pass_fd, frame, len, XDP_PASS, "xdp_pass");
	t_parse = run_median(parse_fd, frame, len, XDP_PASS, "parse_pass");
	len = syn(frame, b.sports[0], 8080, TH_ACK);
	t_ack = run_median(b.sl_fd, frame, len, XDP_PASS, "non-SYN");

	/* Inline admission: distinct 4-tuples, one run each; the per-call
	 * in-kernel timing of the empty program over the same calls is
	 * subtracted as timer noise floor (admit_round).  The level's limit is
	 * raised above what the rounds admit so that every SYN is admitted
	 * (the configured limit, a few hundred seats, would turn most into
	 * RSTs); the seats are reserved the same way. */
	if (sl_maps_level(&maps, b.level, &lvl0))
		fail("cannot read sl_levels");
	set_level(b.level, lvl0.limit_response, 1u << 30);
	b.credit = CREDIT;
	for (unsigned r = 0; r < ROUNDS; r++)
		admit_round(&b, r);
	for (unsigned c = 0; c < A__N; c++)
		t_adm[c] = median(b.t_admit[c], ROUNDS);

	/* The rest runs without a policy, over a table of N_ADMIT connections. */
	set_case(&b, A_NOPOL);
	for (unsigned i = 0; i < N_ADMIT; i++) {
		len = syn(frame, b.sports[i], 8080, TH_SYN);
		run_repeat(b.sl_fd, frame, len, 1, XDP_PASS, a_name[A_NOPOL]);
	}
	set_level(b.level, lvl0.limit_response, lvl0.seat_limit);
	len = syn(frame, b.sports[0], 8080, TH_SYN); /* admitted above: a retransmit now */
	t_retx = run_median(b.sl_fd, frame, len, XDP_PASS, "retransmit");

	/* ACKs while the level seats at the ACK: a seated connection's (one
	 * more lookup than the unwatched ACK above), and one without a seat
	 * that proves nothing (classified, then a socket lookup). */
	{
		struct sluice_settings cs = get_config();
		struct sluice_level l;
		unsigned slot = b.level;

		bpf_map_lookup_elem(maps.fd[SL_MAP_LEVELS], &slot, &l);
		l.flags = SLUICE_LVL_SEAT_AT_ACK | SLUICE_LVL_ACK_WATCH;
		bpf_map_update_elem(maps.fd[SL_MAP_LEVELS], &slot, &l, BPF_ANY);
		cs.ack_watch_levels = 1;
		put_config(&cs);
		len = syn(frame, b.sports[0], 8080, TH_ACK);
		t_ack_seated = run_median(b.sl_fd, frame, len, XDP_PASS, "ACK, seated");
		len = syn(frame, b.sports[A__N * N_ADMIT], 8080, TH_ACK);
		t_ack_unproved = run_median(b.sl_fd, frame, len, XDP_PASS, "ACK, unproved");
		l.flags = 0;
		bpf_map_update_elem(maps.fd[SL_MAP_LEVELS], &slot, &l, BPF_ANY);
		cs.ack_watch_levels = 0;
		put_config(&cs);
	}

	/* Deferrals, repeated (the SYN changes nothing): the cases take turns
	 * in DROUNDS rounds of REPEAT / DROUNDS runs, in a rotating order.
	 * Level full: seats taken, Queue response; the policy gate absent, in
	 * PASS mode, or in THROTTLE mode with credit (tokens taken, then given
	 * back when the level refuses).  Policy: THROTTLE with no credit and
	 * nobody waiting, the level has room; the gate drops before the level
	 * is asked. */
	len = syn(frame, b.sports[A__N * N_ADMIT], 8080, TH_SYN);
	for (unsigned r = 0; r < DROUNDS; r++)
		for (unsigned k = 0; k < D__N; k++) {
			unsigned c = (r + k) % D__N, runs = REPEAT / DROUNDS;
			bool pol = c == D_POL_SENT || c == D_POL_CAPPED;
			bool sent = c == D_LEVEL_SENT || c == D_LEVEL_SENT_NOCOPY || c == D_POL_SENT;
			struct sluice_settings cs = get_config();
			bool thr = c == D_LEVEL_THR_CAPPED;
			bool gated = pol || thr || c == D_LEVEL_PASS_CAPPED;

			put_classes(&b, gated ? &b.cls_pol : &b.cls_nopol);
			put_gate(b.pol, pol || thr ? SLUICE_POLICY_THROTTLE : SLUICE_POLICY_PASS,
				 thr ? CREDIT : 0);
			set_seats(b.level, pol ? b.seats0 : 1u << 30);
			set_level(b.level, SLUICE_RESP_QUEUE, lvl0.seat_limit);
			/* heldSyns 0: the data path skips the frame copy */
			if (c == D_LEVEL_SENT_NOCOPY)
				cs.flags |= SLUICE_CFG_NO_FRAMES;
			else
				cs.flags &= ~(__u32)SLUICE_CFG_NO_FRAMES;
			put_config(&cs);
			if (sent)
				events_sent();
			else
				events_capped(cap, b.level);
			t_def[c][r] = defer_sample(b.sl_fd, frame, len, runs, sent, b.pol, b.wl_slot,
						   gated ? runs : 0, pol ? runs : 0, thr ? runs : 0, d_name[c]);
			if (gate_credit(b.pol) != (thr ? CREDIT : 0))
				fail("deferral: the credit moved");
		}
	for (unsigned c = 0; c < D__N; c++)
		t_dm[c] = median(t_def[c], DROUNDS);

	/* A RST rewrites the frame in place, so a repeated run would see the
	 * RST, not the SYN: one run per call, floor subtracted as above, in
	 * SPLIT blocks of N_RST / SPLIT calls. */
	put_classes(&b, &b.cls_nopol);
	put_gate(b.pol, SLUICE_POLICY_PASS, 0);
	set_seats(b.level, 1u << 30);
	set_level(b.level, SLUICE_RESP_REJECT, lvl0.seat_limit);
	events_sent();
	for (unsigned k = 0; k < SPLIT; k++) {
		double t_sum = 0, floor_sum = 0;

		for (unsigned i = 0; i < N_RST / SPLIT; i++) {
			t_sum += run_repeat(b.sl_fd, frame, len, 1, XDP_TX, "rejected (RST)");
			floor_sum += run_repeat(b.pass_fd, frame, len, 1, XDP_PASS, "xdp_pass");
			if (i % EV_CHUNK == EV_CHUNK - 1)
				drain();
		}
		drain();
		t_rst[k] = floored(&b, t_sum, floor_sum, N_RST / SPLIT);
	}

	printf("XDP cost per packet (BPF_PROG_TEST_RUN; median of %d calls x %d repeats;\n"
	       "deferrals: median of %d rounds x %d repeats, the cases interleaved call by call;\n"
	       "admissions: median of %d rounds x %d distinct SYNs per case, interleaved every %d SYNs)\n",
	       SPLIT, REPEAT / SPLIT, DROUNDS, REPEAT / DROUNDS, ROUNDS, N_ADMIT, A_BLOCK);
	printf("config: %s (%zu table entries; %d masks, a lookup each);\n"
	       "        class: level %s, policy %u (%s), workload %s,\n"
	       "        %u milli-tokens per SYN; eventsPerSecond cap %u\n\n",
	       config, plan.classes.n_entries,
	       __builtin_popcount(plan.classes.masks & ~1u),
	       plan.levels[b.level].name, b.pol, pol_name, wl_name, TOKENS, cap);
	printf("%-69s %9s %10s %10s\n", "program / path", "ns/pkt", "vs parse", "vs admit");
	row("xdp_pass (empty program)", t_pass, 0, 0);
	row("parse_pass (sluice parser, then pass)", t_parse, t_parse, 0);
	row("sluice_xdp: non-SYN (ACK)", t_ack, t_parse, t_adm[A_NOPOL]);
	row("sluice_xdp: SYN retransmit (tracked)", t_retx, t_parse, t_adm[A_NOPOL]);
	row("sluice_xdp: ACK, level seats at the ACK, connection seated", t_ack_seated, t_parse,
	    t_adm[A_NOPOL]);
	row("sluice_xdp: ACK, level seats at the ACK, unseated, proves nothing", t_ack_unproved,
	    t_parse, t_adm[A_NOPOL]);
	row(d_name[D_LEVEL_SENT], t_dm[D_LEVEL_SENT], t_parse, t_adm[A_NOPOL]);
	row(d_name[D_LEVEL_SENT_NOCOPY], t_dm[D_LEVEL_SENT_NOCOPY], t_parse, t_adm[A_NOPOL]);
	row(d_name[D_LEVEL_CAPPED], t_dm[D_LEVEL_CAPPED], t_parse, t_adm[A_NOPOL]);
	row(d_name[D_LEVEL_PASS_CAPPED], t_dm[D_LEVEL_PASS_CAPPED], t_parse, t_adm[A_NOPOL]);
	row(d_name[D_LEVEL_THR_CAPPED], t_dm[D_LEVEL_THR_CAPPED], t_parse, t_adm[A_NOPOL]);
	row("sluice_xdp: SYN rejected (RST built, event sent) *", median(t_rst, SPLIT), t_parse,
	    t_adm[A_NOPOL]);
	for (unsigned c = 0; c < A__N; c++)
		row(a_name[c], t_adm[c], t_parse, t_adm[A_NOPOL]);
	row(d_name[D_POL_SENT], t_dm[D_POL_SENT], t_parse, t_adm[A_NOPOL]);
	row(d_name[D_POL_CAPPED], t_dm[D_POL_CAPPED], t_parse, t_adm[A_NOPOL]);
	printf("\nan admitted SYN (no policy) costs %.2fx the reference admission (goal: at most 2x)\n",
	       t_adm[A_NOPOL] / t_adm[A_REF]);
	printf("frame copy: a deferral with its frame costs %.2fx one without\n",
	       t_dm[D_LEVEL_SENT] / t_dm[D_LEVEL_SENT_NOCOPY]);
	printf("held SYN re-injections: %.0f per second on one core (checksum check, sl_conns\n"
	       "insert, hand-off frame through a packet socket and sluice_tc_out into lo,\n"
	       "record removed)\n", bench_reinject());
	printf("\nvs admit: against \"SYN admitted inline, no policy\".  Rows without \"policy\" run\n"
	       "the class with its policy removed.  Admitted: the first SYN of its 4-tuple\n"
	       "(inserted into sl_conns), never a retransmit, in a level whose limit is raised\n"
	       "so that every SYN gets its seat.  Event sent: every SYN reserves and submits a\n"
	       "ring buffer event (cap not reached; the ring is drained every %d runs, so it\n"
	       "never fills).  Event capped: this second's eventsPerSecond cap is used up, the\n"
	       "event is suppressed (events_lost), as under a SYN flood.  Level full with a\n"
	       "policy: its gate lets the SYN through (THROTTLE: tokens taken from the credit),\n"
	       "the level refuses it (THROTTLE: tokens given back).\n"
	       "* one run per call (the path changes the state it runs on); the per-call\n"
	       "  timer floor (%.1f ns, measured with xdp_pass the same way) is subtracted\n"
	       "  and the empty program's repeated cost added back, like with like.\n",
	       EV_CHUNK, b.floor_sum / (double)b.n_floor);
	ring_buffer__free(ring);
	sl_plan_free(&plan);
	sl_config_free(cfg);
	sl_diags_free(&d);
	bpf_object__close(pass_obj);
	bpf_object__close(parse_obj);
	sluice__destroy(skel);
	return 0;
}
