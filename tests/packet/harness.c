// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The packet tests' harness.  See harness.h. */
#include "harness.h"

struct sluice *skel;
int prog_fd, reset_fd, fd_config, fd_hb, fd_levels, fd_seats, fd_lvl_stats;
int fd_stats, fd_port_cls, fd_classes, fd_conns, fd_evlimit, fd_tickets;
int fd_pol_gate, fd_wl_tokens, fd_wl_stats;
uint16_t level_spc[SLUICE_MAX_LEVELS + 8];
/* Ports that got a class, so reset_maps can clear exactly those. */
static uint16_t classed_ports[16];
static unsigned n_classed;
int ncpus;
struct ring_buffer *rb;
struct sluice_event events[MAX_EVENTS];
int nevents, events_dropped;
int min_accepted_len = -1;
struct sluice_defer_event last_defer;
int ndefers;
uint64_t dispatch_timeout;

int on_event(void *ctx, void *data, size_t size)
{
	(void)ctx;
	if (size == sizeof(struct sluice_defer_event)) {
		memcpy(&last_defer, data, sizeof(last_defer));
		ndefers++;
	}
	if (size < sizeof(struct sluice_event) || nevents >= MAX_EVENTS) {
		events_dropped++;
		return 0;
	}
	memcpy(&events[nevents++], data, sizeof(struct sluice_event));
	return 0;
}

void drain_events(void)
{
	ring_buffer__consume(rb);
	nevents = 0;
	events_dropped = 0;
}

uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void hexdump(const char *what, const uint8_t *b, size_t n)
{
	size_t i;

	fprintf(stderr, "  %s (%zu bytes):", what, n);
	for (i = 0; i < n; i++)
		fprintf(stderr, "%s%02x", i % 16 ? " " : "\n    ", b[i]);
	fprintf(stderr, "\n");
}

void zero_array(int fd, uint32_t n, size_t vsz, bool percpu)
{
	size_t sz = percpu ? vsz * (size_t)ncpus : vsz;
	void *z = calloc(1, sz);
	uint32_t k;

	assert_non_null(z);
	for (k = 0; k < n; k++)
		assert_int_equal(bpf_map_update_elem(fd, &k, z, BPF_ANY), 0);
	free(z);
}

/* Delete every key of a hash map (collect first: deleting while walking
 * from the start is quadratic on a big table). */
void clear_hash(int fd, size_t ksz, size_t max)
{
	uint8_t *keys = malloc(ksz * max);
	size_t n = 0, i;
	void *prev = NULL;

	assert_non_null(keys);
	while (n < max && !bpf_map_get_next_key(fd, prev, keys + n * ksz)) {
		prev = keys + n * ksz;
		n++;
	}
	for (i = 0; i < n; i++)
		bpf_map_delete_elem(fd, keys + i * ksz);
	free(keys);
}

long count_hash(int fd, size_t ksz)
{
	uint8_t k[64], nk[64];
	long n = 0;
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, nk)) {
		memcpy(k, nk, ksz);
		prev = k;
		n++;
	}
	return n;
}

void reset_maps(void)
{
	zero_array(fd_config, 1, sizeof(struct sluice_settings), false);
	zero_array(fd_hb, 1, sizeof(struct sluice_heartbeat), false);
	zero_array(fd_levels, SLUICE_MAX_LEVELS, sizeof(struct sluice_level), false);
	zero_array(fd_seats, SLUICE_MAX_LEVELS, sizeof(struct sluice_seats), false);
	zero_array(fd_lvl_stats, SLUICE_MAX_LEVELS, sizeof(struct sluice_level_stats), true);
	zero_array(fd_stats, 1, sizeof(struct sluice_stats), true);
	zero_array(fd_evlimit, SLUICE_MAX_LEVELS, sizeof(struct sluice_ev_limit), true);
	zero_array(fd_pol_gate, SLUICE_MAX_POLICIES, sizeof(struct sluice_policy_gate), false);
	zero_array(fd_wl_tokens, SLUICE_MAX_POLICIES * SLUICE_WL_SLOTS, sizeof(__u32), false);
	zero_array(fd_wl_stats, SLUICE_MAX_POLICIES * SLUICE_WL_SLOTS, sizeof(struct sluice_wl_stats), true);
	for (unsigned i = 0; i < n_classed; i++) {
		uint32_t idx = SLUICE_PORT_DST * 65536 + classed_ports[i], zero = 0;

		assert_int_equal(bpf_map_update_elem(fd_port_cls, &idx, &zero, BPF_ANY), 0);
	}
	n_classed = 0;
	clear_hash(fd_classes, sizeof(struct sluice_class_key), 2 * SLUICE_DEFAULT_CLASSES);
	clear_hash(fd_conns, sizeof(struct sluice_conn_key), SLUICE_DEFAULT_CONNS);
	clear_hash(fd_tickets, sizeof(struct sluice_conn_key), SLUICE_DEFAULT_TICKETS);
	drain_events();
}

void put_level(uint32_t slot, uint32_t type, uint32_t resp, uint32_t limit,
		      uint32_t spc, const char *name)
{
	struct sluice_level l = {
		.type = type, .limit_response = resp, .seat_limit = limit,
	};

	/* Seats per connection live in the class (FlowSchema), not the level. */
	level_spc[slot] = (uint16_t)spc;
	snprintf(l.name, sizeof(l.name), "%s", name);
	assert_int_equal(bpf_map_update_elem(fd_levels, &slot, &l, BPF_ANY), 0);
}

/* Classify local port `port` into `level` (generation 0): the port gets its
 * own local-port class, and a schema entry under the local-port mask (all other
 * dimensions class 0) names the level. */
void put_port(uint16_t port, uint32_t level)
{
	uint32_t idx = SLUICE_PORT_DST * 65536 + port, cls = n_classed + 1;
	struct sluice_class_key k = { .dport = (uint16_t)cls, .gen = 0,
				      .mask = SLUICE_DIM_DPORT };
	struct sluice_class v = {
		.level = level, .schema = (uint16_t)level,
		.seats = level < SLUICE_MAX_LEVELS + 8 ? level_spc[level] : 1,
		.policy = SLUICE_NONE16, .workload = SLUICE_NONE16,
	};

	assert_true(n_classed < sizeof(classed_ports) / sizeof(classed_ports[0]));
	classed_ports[n_classed++] = port;
	assert_int_equal(bpf_map_update_elem(fd_port_cls, &idx, &cls, BPF_ANY), 0);
	assert_int_equal(bpf_map_update_elem(fd_classes, &k, &v, BPF_ANY), 0);
}

void put_seats_unclaimed(uint32_t slot, uint64_t in_use, uint64_t waiting,
				uint64_t unclaimed)
{
	struct sluice_seats s = { .seats_in_use = in_use, .waiting = waiting,
				  .unclaimed = unclaimed };
	struct sluice_seats was;

	/* The tickets written so far stay counted (put_ticket). */
	if (!bpf_map_lookup_elem(fd_seats, &slot, &was))
		s.tickets = was.tickets;
	assert_int_equal(bpf_map_update_elem(fd_seats, &slot, &s, BPF_ANY), 0);
}

void put_seats(uint32_t slot, uint64_t in_use, uint64_t waiting)
{
	put_seats_unclaimed(slot, in_use, waiting, 0);
}

struct sluice_seats get_seats(uint32_t slot)
{
	struct sluice_seats s;

	assert_int_equal(bpf_map_lookup_elem(fd_seats, &slot, &s), 0);
	return s;
}

void put_config(uint64_t timeout, uint32_t fail_mode, uint32_t evps, uint32_t flags)
{
	struct sluice_settings c = {
		.heartbeat_timeout_ns = timeout, .dispatch_timeout_ns = dispatch_timeout,
		.fail_mode = fail_mode,
		.events_per_sec = evps, .abi_version = SLUICE_ABI_VERSION,
		.flags = flags, .generation = 0,
		/* Entries are of local-port classes (put_port); a miss names
		 * no level: the SYN passes unprotected. */
		.masks = 1u << SLUICE_DIM_DPORT,
		.default_class = { .level = SLUICE_MAX_LEVELS, .seats = 1,
				   .schema = SLUICE_NONE16, .policy = SLUICE_NONE16,
				   .workload = SLUICE_NONE16 },
	};
	uint32_t zero = 0;

	assert_int_equal(bpf_map_update_elem(fd_config, &zero, &c, BPF_ANY), 0);
}

void put_level_flags(uint32_t slot, uint32_t flags)
{
	struct sluice_level l;

	assert_int_equal(bpf_map_lookup_elem(fd_levels, &slot, &l), 0);
	l.flags = flags;
	assert_int_equal(bpf_map_update_elem(fd_levels, &slot, &l, BPF_ANY), 0);
}

void put_ack_watch(uint32_t levels)
{
	struct sluice_settings c;
	uint32_t zero = 0;

	assert_int_equal(bpf_map_lookup_elem(fd_config, &zero, &c), 0);
	c.ack_watch_levels = levels;
	assert_int_equal(bpf_map_update_elem(fd_config, &zero, &c, BPF_ANY), 0);
}

void put_heartbeat(uint64_t ns)
{
	struct sluice_heartbeat hb = { .mono_ns = ns, .seq = 1, .pid = (uint32_t)getpid() };
	uint32_t zero = 0;

	assert_int_equal(bpf_map_update_elem(fd_hb, &zero, &hb, BPF_ANY), 0);
}

/* The configuration every case starts from, adjusted by S_* flags. */
void setup_maps(unsigned flags)
{
	uint32_t limit = (flags & S_SPC3) ? 4 : LIMIT;
	uint32_t spc = (flags & S_SPC3) ? 3 : (flags & S_SPC0) ? 0 : 1;
	uint64_t now = mono_ns(), used = 0;
	uint64_t waiting = (flags & S_WAITING) ? 1 : 0;

	put_config((flags & S_TIMEOUT0) ? 0 : HB_TIMEOUT,
		   (flags & S_FAIL_CLOSED) ? SLUICE_FAIL_CLOSED
		   : (flags & S_FAIL_STATIC) ? SLUICE_FAIL_STATIC : SLUICE_FAIL_OPEN, 0,
		   (flags & S_NOCONFIG) ? 0 : SLUICE_CFG_ACTIVE);
	if (flags & S_HB_ZERO)
		put_heartbeat(0);
	else if (flags & S_HB_OLD)
		put_heartbeat(now - 6000000000ULL);
	else if (flags & S_HB_FUTURE)
		put_heartbeat(now + 60000000000ULL);
	else if (flags & S_HB_RECENT)
		put_heartbeat(now - 4000000000ULL);
	else
		put_heartbeat(now);

	put_level(L_QUEUE, SLUICE_LEVEL_LIMITED, SLUICE_RESP_QUEUE, limit, spc, "web-queue");
	put_level(L_REJECT, SLUICE_LEVEL_LIMITED, SLUICE_RESP_REJECT, limit, spc, "web-reject");
	put_level(L_EXEMPT, SLUICE_LEVEL_EXEMPT, SLUICE_RESP_QUEUE, EXEMPT_LIMIT, 1, "ssh");
	/* L_UNUSED stays type 0 */

	if (flags & S_FULL)
		used = limit;
	else if (flags & S_ALMOST_FULL)
		used = limit - 1;
	else if (flags & S_SEATS2)
		used = 2;
	put_seats(L_QUEUE, used, waiting);
	put_seats(L_REJECT, used, waiting);
	put_seats(L_EXEMPT, (flags & S_FULL) ? EXEMPT_LIMIT + 4 : 0, waiting);

	put_port(P_QUEUE, L_QUEUE);
	put_port(P_REJECT, L_REJECT);
	put_port(P_EXEMPT, L_EXEMPT);
	put_port(P_UNUSED, L_UNUSED);
	put_port(P_OOR, L_OOR);
}

void read_gstats(struct sluice_stats *out)
{
	struct sluice_stats *v = calloc((size_t)ncpus, sizeof(*v));
	uint32_t zero = 0;
	int c;

	assert_non_null(v);
	assert_int_equal(bpf_map_lookup_elem(fd_stats, &zero, v), 0);
	memset(out, 0, sizeof(*out));
	for (c = 0; c < ncpus; c++) {
#define X(f) out->f += v[c].f;
		G_FIELDS(X)
#undef X
		out->static_sweeps += v[c].static_sweeps; /* read, never compared per frame */
		out->static_expired += v[c].static_expired;
		out->static_walks += v[c].static_walks;
	}
	free(v);
}

void read_lstats(uint32_t level, struct sluice_level_stats *out)
{
	struct sluice_level_stats *v = calloc((size_t)ncpus, sizeof(*v));
	int c;

	assert_non_null(v);
	assert_int_equal(bpf_map_lookup_elem(fd_lvl_stats, &level, v), 0);
	memset(out, 0, sizeof(*out));
	for (c = 0; c < ncpus; c++) {
#define X(f) out->f += v[c].f;
		L_FIELDS(X)
#undef X
	}
	free(v);
}

void take_snap(struct snap *s)
{
	uint32_t i;

	read_gstats(&s->g);
	for (i = 0; i < SLUICE_MAX_LEVELS; i++) {
		read_lstats(i, &s->l[i]);
		s->seats[i] = get_seats(i);
	}
}

/* Compare every counter delta with the expectation; print each mismatch.
 * Returns the number of mismatches. */
int check_deltas(const char *ctx, const struct snap *a, const struct snap *b,
			const struct sluice_stats *eg, uint32_t elvl,
			const struct sluice_level_stats *el, int64_t eseats)
{
	int bad = 0;
	uint32_t i;

#define X(f) if (b->g.f - a->g.f != eg->f) { \
		print_error("%s: sl_stats.%s delta %" PRIu64 ", expected %" PRIu64 "\n", \
			    ctx, #f, (uint64_t)(b->g.f - a->g.f), (uint64_t)eg->f); bad++; }
	G_FIELDS(X)
#undef X
	for (i = 0; i < SLUICE_MAX_LEVELS; i++) {
		static const struct sluice_level_stats zero;
		const struct sluice_level_stats *e = i == elvl ? el : &zero;
		int64_t sd = (int64_t)(b->seats[i].seats_in_use - a->seats[i].seats_in_use);

#define X(f) if (b->l[i].f - a->l[i].f != e->f) { \
		print_error("%s: sl_lvl_stats[%u].%s delta %" PRIu64 ", expected %" PRIu64 "\n", \
			    ctx, i, #f, (uint64_t)(b->l[i].f - a->l[i].f), (uint64_t)e->f); bad++; }
		L_FIELDS(X)
#undef X
		if (sd != (i == elvl ? eseats : 0)) {
			print_error("%s: sl_seats[%u].seats_in_use delta %" PRId64 ", expected %" PRId64 "\n",
				    ctx, i, sd, i == elvl ? eseats : 0);
			bad++;
		}
		if (b->seats[i].waiting != a->seats[i].waiting) {
			print_error("%s: sl_seats[%u].waiting changed\n", ctx, i);
			bad++;
		}
	}
	return bad;
}

int run_xdp(const uint8_t *in, size_t len, uint8_t *out, uint32_t *out_len,
		   uint32_t *retval)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = in,
		.data_size_in = (uint32_t)len,
		.data_out = out,
		.data_size_out = FR_MAX_LEN,
		.repeat = 1,
	);
	int err;

	memset(out, 0xee, FR_MAX_LEN);
	err = bpf_prog_test_run_opts(prog_fd, &opts);
	*out_len = opts.data_size_out;
	*retval = opts.retval;
	return err;
}

const char *verdict_name(uint32_t v)
{
	switch (v) {
	case XDP_ABORTED:  return "XDP_ABORTED";
	case XDP_DROP:     return "XDP_DROP";
	case XDP_PASS:     return "XDP_PASS";
	case XDP_TX:       return "XDP_TX";
	case XDP_REDIRECT: return "XDP_REDIRECT";
	default:           return "?";
	}
}

void key_from_spec(const struct fr_spec *s, struct sluice_conn_key *k)
{
	memset(k, 0, sizeof(*k));
	if (s->family == 4) {
		k->saddr[10] = k->saddr[11] = 0xff;
		k->daddr[10] = k->daddr[11] = 0xff;
		memcpy(k->saddr + 12, s->saddr4, 4);
		memcpy(k->daddr + 12, s->daddr4, 4);
	} else {
		memcpy(k->saddr, s->saddr6, 16);
		memcpy(k->daddr, s->daddr6, 16);
	}
	k->sport = htons(s->sport);
	k->dport = htons(s->dport);
	k->family = (uint8_t)s->family;
}

/* RFC 793 / 9293 reset for a segment without ACK:
 * <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>, SEG.LEN counting SYN and FIN. */
uint32_t rst_ack(uint32_t seq, uint8_t flags, size_t payload_len)
{
	return seq + 1u + (uint32_t)payload_len + ((flags & TH_FIN) ? 1u : 0u);
}

/* The reply sluice must send for the SYN described by syn (payload_len from
 * the IP lengths), built from the spec with the test's own builder. */
size_t expected_rst_from_spec(const struct fr_spec *syn, size_t payload_len,
				     uint8_t *buf)
{
	struct fr_spec r;
	int i;

	memset(&r, 0, sizeof(r));
	memcpy(r.dmac, syn->smac, 6);
	memcpy(r.smac, syn->dmac, 6);
	r.nvlan = syn->nvlan;
	for (i = 0; i < syn->nvlan && i < FR_MAX_VLAN; i++) {
		r.vlan_tpid[i] = syn->vlan_tpid[i];
		r.vlan_tci[i] = syn->vlan_tci[i];
	}
	r.ethertype = syn->ethertype;
	r.family = syn->family;
	if (syn->family == 4) {
		memcpy(r.saddr4, syn->daddr4, 4);
		memcpy(r.daddr4, syn->saddr4, 4);
		r.tos = 0;
		r.ttl = 64;
		r.ip_id = 0;
		r.frag = FR_IP_DF;
	} else {
		memcpy(r.saddr6, syn->daddr6, 16);
		memcpy(r.daddr6, syn->saddr6, 16);
		r.hlim = 64;
	}
	r.proto = FR_IPPROTO_TCP;
	r.sport = syn->dport;
	r.dport = syn->sport;
	/* RFC 793 reset generation: a segment with ACK gets seq = its ack and
	 * no ACK; one without gets seq 0 and ack = its seq + its length. */
	if (syn->tcp_flags & TH_ACK) {
		r.seq = syn->ack;
		r.ack = 0;
		r.tcp_flags = TH_RST;
	} else {
		r.seq = 0;
		r.ack = rst_ack(syn->seq, syn->tcp_flags, payload_len);
		r.tcp_flags = TH_RST | TH_ACK;
	}
	r.window = 0;
	return fr_build(&r, buf, NULL);
}

/* Field-by-field check of an RST reply against the SYN it answers, decoding
 * the bytes directly (gives precise messages; the caller also memcmp()s the
 * whole frame against an independently built one).  Returns mismatches. */
int check_rst_fields(const char *ctx, const uint8_t *in, size_t l2,
			    int family, size_t in_l4_off, uint32_t exp_ack,
			    const uint8_t *out, size_t out_len)
{
	size_t want_len = l2 + (family == 4 ? 40 : 60);
	const uint8_t *ip = out + l2, *th = out + l2 + (family == 4 ? 20 : 40);
	const uint8_t *in_ip = in + l2, *in_th = in + in_l4_off;
	int bad = 0;

#define EXPECT(cond, ...) do { if (!(cond)) { print_error("%s: ", ctx); \
		print_error(__VA_ARGS__); print_error("\n"); bad++; } } while (0)

	EXPECT(out_len == want_len, "RST length %zu, expected %zu", out_len, want_len);
	if (out_len < want_len)
		return bad;
	EXPECT(!memcmp(out, in + 6, 6), "destination MAC is not the SYN's source MAC");
	EXPECT(!memcmp(out + 6, in, 6), "source MAC is not the SYN's destination MAC");
	EXPECT(!memcmp(out + 12, in + 12, l2 - 12), "VLAN tags / EtherType changed");
	if (family == 4) {
		EXPECT(ip[0] == 0x45, "IPv4 version/ihl 0x%02x, expected 0x45", ip[0]);
		EXPECT(ip[1] == 0, "IPv4 tos 0x%02x, expected 0", ip[1]);
		EXPECT(fr_get16(ip + 2) == 40, "IPv4 tot_len %u, expected 40", fr_get16(ip + 2));
		EXPECT(fr_get16(ip + 4) == 0, "IPv4 id %u, expected 0", fr_get16(ip + 4));
		EXPECT(fr_get16(ip + 6) == FR_IP_DF, "IPv4 frag_off 0x%04x, expected DF",
		       fr_get16(ip + 6));
		EXPECT(ip[8] == 64, "IPv4 ttl %u, expected 64", ip[8]);
		EXPECT(ip[9] == FR_IPPROTO_TCP, "IPv4 protocol %u, expected 6", ip[9]);
		EXPECT(!memcmp(ip + 12, in_ip + 16, 4), "IPv4 saddr is not the SYN's daddr");
		EXPECT(!memcmp(ip + 16, in_ip + 12, 4), "IPv4 daddr is not the SYN's saddr");
		EXPECT(fr_ipv4_csum_ok(ip, 20), "IPv4 header checksum invalid (0x%04x)",
		       fr_get16(ip + 10));
		EXPECT(fr_tcp_csum_ok_v4(ip, th, 20), "TCP checksum (v4 pseudo header) invalid (0x%04x)",
		       fr_get16(th + 16));
	} else {
		EXPECT(fr_get32(ip) == 0x60000000u, "IPv6 ver/tclass/flow 0x%08x, expected 0x60000000",
		       fr_get32(ip));
		EXPECT(fr_get16(ip + 4) == 20, "IPv6 payload_len %u, expected 20", fr_get16(ip + 4));
		EXPECT(ip[6] == FR_IPPROTO_TCP, "IPv6 next header %u, expected 6", ip[6]);
		EXPECT(ip[7] == 64, "IPv6 hop limit %u, expected 64", ip[7]);
		EXPECT(!memcmp(ip + 8, in_ip + 24, 16), "IPv6 saddr is not the SYN's daddr");
		EXPECT(!memcmp(ip + 24, in_ip + 8, 16), "IPv6 daddr is not the SYN's saddr");
		EXPECT(fr_tcp_csum_ok_v6(ip, th, 20), "TCP checksum (v6 pseudo header) invalid (0x%04x)",
		       fr_get16(th + 16));
	}
	EXPECT(fr_get16(th) == fr_get16(in_th + 2), "TCP sport %u, expected the SYN's dport %u",
	       fr_get16(th), fr_get16(in_th + 2));
	EXPECT(fr_get16(th + 2) == fr_get16(in_th), "TCP dport %u, expected the SYN's sport %u",
	       fr_get16(th + 2), fr_get16(in_th));
	EXPECT(fr_get32(th + 4) == 0, "TCP seq 0x%08x, expected 0", fr_get32(th + 4));
	EXPECT(fr_get32(th + 8) == exp_ack, "TCP ack 0x%08x, expected 0x%08x",
	       fr_get32(th + 8), exp_ack);
	EXPECT(th[12] == 0x50, "TCP doff/reserved byte 0x%02x, expected 0x50", th[12]);
	EXPECT(th[13] == (TH_RST | TH_ACK), "TCP flags 0x%02x, expected RST|ACK (0x14)", th[13]);
	EXPECT(fr_get16(th + 14) == 0, "TCP window %u, expected 0", fr_get16(th + 14));
	EXPECT(fr_get16(th + 18) == 0, "TCP urgent pointer %u, expected 0", fr_get16(th + 18));
#undef EXPECT
	return bad;
}

enum ref_class ref_tcp(const uint8_t *f, size_t len, size_t l4, size_t ip_payload,
			      struct ref_info *ri)
{
	size_t doff;

	if (l4 > REF_MAX_OFF || l4 + 20 > len)
		return REF_MALFORMED;
	doff = (size_t)(f[l4 + 12] >> 4) * 4;
	if (doff < 20 || doff > ip_payload)
		return REF_MALFORMED;
	ri->flags = f[l4 + 13];
	if (!(ri->flags & TH_SYN) || (ri->flags & (TH_ACK | TH_RST)))
		return REF_OTHER;
	ri->l4_off = l4;
	ri->sport = fr_get16(f + l4);
	ri->dport = fr_get16(f + l4 + 2);
	ri->seq = fr_get32(f + l4 + 4);
	ri->payload_len = (uint32_t)(ip_payload - doff);
	return REF_SYN;
}

enum ref_class ref_parse(const uint8_t *f, size_t len, struct ref_info *ri)
{
	size_t off = 14;
	uint16_t et;
	int i;

	memset(ri, 0, sizeof(*ri));
	if (len < 14)
		return REF_MALFORMED;
	et = fr_get16(f + 12);
	for (i = 0; i < 2 && (et == FR_ETH_8021Q || et == FR_ETH_8021AD); i++) {
		if (off + 4 > len)
			return REF_MALFORMED;
		et = fr_get16(f + off + 2);
		off += 4;
	}
	ri->l2_len = off;
	if (et == FR_ETH_IP) {
		const uint8_t *ip = f + off;
		size_t ihl, tot;

		if (off + 20 > len)
			return REF_MALFORMED;
		ihl = (size_t)(ip[0] & 0x0f) * 4;
		if ((ip[0] >> 4) != 4 || ihl < 20)
			return REF_MALFORMED;
		tot = fr_get16(ip + 2);
		if (tot < ihl || off + tot > len)
			return REF_MALFORMED;
		if (ip[9] != FR_IPPROTO_TCP)
			return REF_OTHER;
		if (fr_get16(ip + 6) & 0x3fff)
			return REF_FRAGMENT;
		ri->family = 4;
		memcpy(ri->saddr, ip + 12, 4);
		memcpy(ri->daddr, ip + 16, 4);
		return ref_tcp(f, len, off + ihl, tot - ihl, ri);
	}
	if (et == FR_ETH_IPV6) {
		const uint8_t *ip6 = f + off;
		size_t plen, eo = off + 40, ext;
		uint8_t nh;

		if (off + 40 > len)
			return REF_MALFORMED;
		if ((ip6[0] >> 4) != 6)
			return REF_MALFORMED;
		plen = fr_get16(ip6 + 4);
		if (off + 40 + plen > len)
			return REF_MALFORMED;
		nh = ip6[6];
		for (i = 0; i < 6 && nh != FR_IPPROTO_TCP; i++) {
			if (nh == FR_IPPROTO_FRAGMENT)
				return REF_FRAGMENT;
			if (nh != FR_IPPROTO_HOPOPTS && nh != FR_IPPROTO_ROUTING &&
			    nh != FR_IPPROTO_DSTOPTS && nh != FR_IPPROTO_AH)
				return REF_OTHER;
			if (eo > REF_MAX_OFF || eo + 2 > len)
				return REF_MALFORMED;
			ext = nh == FR_IPPROTO_AH ? ((size_t)f[eo + 1] + 2) * 4
						  : ((size_t)f[eo + 1] + 1) * 8;
			nh = f[eo];
			eo += ext;
		}
		if (nh != FR_IPPROTO_TCP)
			return REF_OTHER;
		ext = eo - off - 40;
		if (eo > REF_MAX_OFF || ext > plen)
			return REF_MALFORMED;
		ri->family = 6;
		memcpy(ri->saddr, ip6 + 8, 16);
		memcpy(ri->daddr, ip6 + 24, 16);
		return ref_tcp(f, len, eo, plen - ext, ri);
	}
	return REF_OTHER;
}

/* Expected RST for a frame classified by ref_parse: the frame's own link
 * layer with MACs swapped, then headers from the test's builder. */
size_t expected_rst_raw(const uint8_t *in, const struct ref_info *ri, uint32_t ack,
			       uint8_t *buf)
{
	uint8_t tmp[FR_MAX_LEN];
	struct fr_spec r;
	size_t n;

	memset(&r, 0, sizeof(r));
	r.family = ri->family;
	if (ri->family == 4) {
		memcpy(r.saddr4, ri->daddr, 4);
		memcpy(r.daddr4, ri->saddr, 4);
		r.ttl = 64;
		r.frag = FR_IP_DF;
	} else {
		memcpy(r.saddr6, ri->daddr, 16);
		memcpy(r.daddr6, ri->saddr, 16);
		r.hlim = 64;
	}
	r.proto = FR_IPPROTO_TCP;
	r.sport = ri->dport;
	r.dport = ri->sport;
	r.ack = ack;
	r.tcp_flags = TH_RST | TH_ACK;
	n = fr_build(&r, tmp, NULL);
	memcpy(buf, in, ri->l2_len);
	memcpy(buf, in + 6, 6);
	memcpy(buf + 6, in, 6);
	memcpy(buf + ri->l2_len, tmp + 14, n - 14);
	return ri->l2_len + n - 14;
}

void insert_conn(const struct sluice_conn_key *k, uint32_t level, uint32_t seats)
{
	struct sluice_conn c = {
		.admitted_ns = mono_ns(), .level = level, .seats = seats,
		.state = SLUICE_CONN_ADMITTED,
	};

	assert_int_equal(bpf_map_update_elem(fd_conns, k, &c, BPF_NOEXIST), 0);
}

int check_event(const char *ctx, uint32_t type, uint32_t level,
		       const struct sluice_conn_key *k, uint64_t t0, uint64_t t1)
{
	int bad = 0;

	ring_buffer__consume(rb);
	if (!type) {
		if (nevents) {
			print_error("%s: %d unexpected ring buffer event(s), first type %u\n",
				    ctx, nevents, events[0].type);
			bad++;
		}
		return bad;
	}
	if (nevents != 1) {
		print_error("%s: %d ring buffer events, expected 1 of type %u\n", ctx, nevents, type);
		return 1;
	}
	if (events[0].type != type) {
		print_error("%s: event type %u, expected %u\n", ctx, events[0].type, type);
		bad++;
	}
	if (events[0].level != level) {
		print_error("%s: event level %u, expected %u\n", ctx, events[0].level, level);
		bad++;
	}
	if (memcmp(&events[0].key, k, sizeof(*k))) {
		print_error("%s: event key differs from the SYN's 4-tuple\n", ctx);
		hexdump("event key", (const uint8_t *)&events[0].key, sizeof(*k));
		hexdump("expected", (const uint8_t *)k, sizeof(*k));
		bad++;
	}
	if (events[0].ts_ns < t0 || events[0].ts_ns > t1) {
		print_error("%s: event ts_ns %" PRIu64 " outside the run [%" PRIu64 ", %" PRIu64 "]\n",
			    ctx, (uint64_t)events[0].ts_ns, t0, t1);
		bad++;
	}
	return bad;
}

/* Run one frame, expect a verdict; returns the output length. */
uint32_t run_expect(const char *ctx, const uint8_t *in, size_t len, uint8_t *out,
			   uint32_t verdict)
{
	uint32_t out_len, retval;
	int err = run_xdp(in, len, out, &out_len, &retval);

	if (err)
		fail_msg("%s: test_run failed: %d", ctx, err);
	if (retval != verdict) {
		hexdump("input", in, len);
		fail_msg("%s: verdict %s, expected %s", ctx, verdict_name(retval), verdict_name(verdict));
	}
	if (verdict != XDP_TX && (out_len != len || memcmp(in, out, len)))
		fail_msg("%s: output frame changed", ctx);
	return out_len;
}

int test_setup(void **state)
{
	(void)state;
	reset_maps();
	return 0;
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

int group_setup(void **state)
{
	cpu_set_t set;
	int cpu = sched_getcpu();

	(void)state;
	/* One CPU: the per-CPU event limiter and counters behave deterministically. */
	if (cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	libbpf_set_print(libbpf_quiet);
	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0)
		return -1;
	skel = sluice__open_and_load();
	if (!skel) {
		fprintf(stderr, "sluice__open_and_load failed: %s (root and a BPF-capable kernel needed)\n",
			strerror(errno));
		return -1;
	}
	prog_fd = bpf_program__fd(skel->progs.sluice_xdp);
	reset_fd = bpf_program__fd(skel->progs.sluice_reset);
	fd_config = bpf_map__fd(skel->maps.sl_config);
	fd_hb = bpf_map__fd(skel->maps.sl_heartbeat);
	fd_levels = bpf_map__fd(skel->maps.sl_levels);
	fd_seats = bpf_map__fd(skel->maps.sl_seats);
	fd_lvl_stats = bpf_map__fd(skel->maps.sl_lvl_stats);
	fd_stats = bpf_map__fd(skel->maps.sl_stats);
	fd_port_cls = bpf_map__fd(skel->maps.sl_port_cls);
	fd_classes = bpf_map__fd(skel->maps.sl_classes);
	fd_conns = bpf_map__fd(skel->maps.sl_conns);
	fd_evlimit = bpf_map__fd(skel->maps.sl_ev_limit);
	fd_tickets = bpf_map__fd(skel->maps.sl_tickets);
	fd_pol_gate = bpf_map__fd(skel->maps.sl_pol_gate);
	fd_wl_tokens = bpf_map__fd(skel->maps.sl_wl_tokens);
	fd_wl_stats = bpf_map__fd(skel->maps.sl_wl_stats);
	rb = ring_buffer__new(bpf_map__fd(skel->maps.sl_events), on_event, NULL, NULL);
	if (!rb) {
		sluice__destroy(skel);
		return -1;
	}
	return 0;
}

int group_teardown(void **state)
{
	(void)state;
	ring_buffer__free(rb);
	sluice__destroy(skel);
	return 0;
}

/* The conn key XDP builds for a default v4 SYN with this client port. */
struct sluice_conn_key v4_key(uint16_t sport, uint16_t dport)
{
	struct sluice_conn_key k;

	memset(&k, 0, sizeof(k));
	k.saddr[10] = k.saddr[11] = 0xff;
	memcpy(k.saddr + 12, fr_client4, 4);
	k.daddr[10] = k.daddr[11] = 0xff;
	memcpy(k.daddr + 12, fr_server4, 4);
	k.sport = htons(sport);
	k.dport = htons(dport);
	k.family = 4;
	return k;
}

void put_ticket_uncounted(const struct sluice_conn_key *k, uint32_t verdict, uint32_t level,
			  uint16_t seats)
{
	struct sluice_ticket t = {
		.issued_ns = mono_ns(), .verdict = verdict, .level = level, .seats = seats,
		.schema = 7, .policy = SLUICE_NONE16, .workload = SLUICE_NONE16,
	};

	assert_int_equal(bpf_map_update_elem(fd_tickets, k, &t, BPF_ANY), 0);
}

/* As the daemon's ledger writes a ticket: counted in its level first. */
void put_ticket(const struct sluice_conn_key *k, uint32_t verdict, uint32_t level,
		       uint16_t seats)
{
	struct sluice_seats s = {0};

	bpf_map_lookup_elem(fd_seats, &level, &s);
	s.tickets++;
	assert_int_equal(bpf_map_update_elem(fd_seats, &level, &s, BPF_ANY), 0);
	put_ticket_uncounted(k, verdict, level, seats);
}

size_t queue_syn(uint8_t *f, uint16_t sport)
{
	struct fr_spec sp;

	fr_default_v4_syn(&sp);
	sp.sport = sport;
	sp.dport = P_QUEUE;
	return fr_build(&sp, f, NULL);
}

/* Classify local port `port` into `level` and policy POL, workload `wl`
 * (SLUICE_NONE16 = the default workload). */
void put_policy_port(uint16_t port, uint32_t level, uint16_t wl)
{
	uint32_t idx = SLUICE_PORT_DST * 65536 + port, cls = n_classed + 1;
	struct sluice_class_key k = { .dport = (uint16_t)cls, .gen = 0,
				      .mask = SLUICE_DIM_DPORT };
	struct sluice_class v = {
		.level = level, .schema = 9, .seats = 1, .policy = POL, .workload = wl,
	};

	classed_ports[n_classed++] = port;
	assert_int_equal(bpf_map_update_elem(fd_port_cls, &idx, &cls, BPF_ANY), 0);
	/* One entry, both halves of the class. */
	assert_int_equal(bpf_map_update_elem(fd_classes, &k, &v, BPF_ANY), 0);
}

void put_gate(uint32_t mode, uint32_t waiting, int64_t credit_mtok)
{
	struct sluice_policy_gate g = { .mode = mode, .waiting = waiting, .credit_mtok = credit_mtok };
	uint32_t key = POL;

	assert_int_equal(bpf_map_update_elem(fd_pol_gate, &key, &g, BPF_ANY), 0);
}

void put_slot_gate(uint32_t mode, uint32_t waiting, int64_t slots_held, int64_t slot_limit)
{
	struct sluice_policy_gate g = { .mode = mode, .waiting = waiting,
					.slots_held = slots_held, .slot_limit = slot_limit };
	uint32_t key = POL;

	assert_int_equal(bpf_map_update_elem(fd_pol_gate, &key, &g, BPF_ANY), 0);
}

struct sluice_policy_gate get_gate(void)
{
	struct sluice_policy_gate g;
	uint32_t key = POL;

	assert_int_equal(bpf_map_lookup_elem(fd_pol_gate, &key, &g), 0);
	return g;
}

int64_t gate_credit(void)
{
	return get_gate().credit_mtok;
}

void put_wl_tokens(unsigned slot, uint32_t mtok)
{
	uint32_t key = POL * SLUICE_WL_SLOTS + slot;

	assert_int_equal(bpf_map_update_elem(fd_wl_tokens, &key, &mtok, BPF_ANY), 0);
}

struct sluice_wl_stats wl_stats(unsigned slot)
{
	struct sluice_wl_stats *v = calloc((size_t)ncpus, sizeof(*v)), sum = {0};
	uint32_t key = POL * SLUICE_WL_SLOTS + slot;

	assert_non_null(v);
	assert_int_equal(bpf_map_lookup_elem(fd_wl_stats, &key, v), 0);
	for (int c = 0; c < ncpus; c++) {
		sum.syns += v[c].syns;
		sum.inline_admitted += v[c].inline_admitted;
		sum.inline_mtok += v[c].inline_mtok;
		sum.deferred += v[c].deferred;
	}
	free(v);
	return sum;
}

size_t policy_syn(uint8_t *f, uint16_t sport, uint16_t dport)
{
	struct fr_spec sp;

	fr_default_v4_syn(&sp);
	sp.sport = sport;
	sp.dport = dport;
	return fr_build(&sp, f, NULL);
}

/* The one event the last runs produced, or fail. */
const struct sluice_event *one_event(const char *ctx)
{
	ring_buffer__consume(rb);
	if (nevents != 1)
		fail_msg("%s: %d events, expected 1", ctx, nevents);
	return &events[0];
}

/* Run one frame through the program (maps as setup_maps(S_FULL) leaves
 * them, a fresh heartbeat) and compare everything with the reference
 * classifier: the verdict (a full Queue level defers, a full Reject level
 * answers with a RST, anything else passes), the frame (untouched unless
 * a RST, which must be exactly the expected reply with valid checksums),
 * the syns/malformed/fragments counters and the events.  Prints what
 * differs; returns how many things did. */
/* 127.0.0.0/8 or ::1: a source no frame on a device may carry. */
static bool ref_loopback_source(const struct ref_info *ri)
{
	static const uint8_t v6_loopback[16] = { [15] = 1 };

	return ri->family == 4 ? ri->saddr[0] == 127 : !memcmp(ri->saddr, v6_loopback, 16);
}

int check_against_reference(const char *ctx, const uint8_t *in, size_t len, uint32_t *verdict,
			    enum ref_class *cls)
{
	static uint8_t out[FR_MAX_LEN], want[FR_MAX_LEN];
	struct sluice_stats ga, gb;
	struct ref_info ri;
	enum ref_class rc;
	uint32_t out_len = 0, retval = XDP_ABORTED, expect;
	int err, bad = 0;

	rc = ref_parse(in, len, &ri);
	expect = XDP_PASS;
	if (rc == REF_SYN && ref_loopback_source(&ri))
		expect = XDP_PASS; /* spoofed: the kernel drops it, sluice never seats it */
	else if (rc == REF_SYN && ri.dport == P_QUEUE)
		expect = XDP_DROP;
	else if (rc == REF_SYN && ri.dport == P_REJECT)
		expect = XDP_TX;

	read_gstats(&ga);
	drain_events();
	err = run_xdp(in, len, out, &out_len, &retval);
	read_gstats(&gb);
	ring_buffer__consume(rb);
	*verdict = retval;
	*cls = rc;
	if (err) {
		print_error("%s: test_run failed: %d\n", ctx, err);
		return 1;
	}
	if (retval != XDP_PASS && retval != XDP_DROP && retval != XDP_TX) {
		print_error("%s: verdict %s (%u): only PASS/DROP/TX allowed\n", ctx,
			    verdict_name(retval), retval);
		bad++;
	}
	if (retval != expect) {
		print_error("%s: verdict %s, reference says %s (class %d)\n", ctx,
			    verdict_name(retval), verdict_name(expect), rc);
		bad++;
	}
	if (retval == XDP_TX) {
		const uint8_t *ip = out + ri.l2_len;
		uint32_t ack = rst_ack(ri.seq, ri.flags, ri.payload_len);
		size_t wn;
		bool ok_csum = out_len >= ri.l2_len + (ri.family == 4 ? 40u : 60u) &&
			(ri.family == 4 ? fr_ipv4_csum_ok(ip, 20) && fr_tcp_csum_ok_v4(ip, ip + 20, 20)
					: fr_tcp_csum_ok_v6(ip, ip + 40, 20));

		if (!ok_csum) {
			print_error("%s: RST with invalid checksums\n", ctx);
			bad++;
		}
		wn = expected_rst_raw(in, &ri, ack, want);
		if (out_len != wn || memcmp(out, want, wn)) {
			print_error("%s: RST bytes differ from the expected reply\n", ctx);
			hexdump("expected RST", want, wn);
			hexdump("got", out, out_len < FR_MAX_LEN ? out_len : FR_MAX_LEN);
			bad++;
		}
	} else if (out_len != len || memcmp(in, out, len)) {
		print_error("%s: %s changed the frame\n", ctx, verdict_name(retval));
		bad++;
	}
	if (gb.syns - ga.syns != (rc == REF_SYN) ||
	    gb.malformed - ga.malformed != (rc == REF_MALFORMED) ||
	    gb.fragments - ga.fragments != (rc == REF_FRAGMENT)) {
		print_error("%s: counters syns/malformed/fragments moved %" PRIu64 "/%" PRIu64
			    "/%" PRIu64 ", reference class %d\n", ctx,
			    (uint64_t)(gb.syns - ga.syns), (uint64_t)(gb.malformed - ga.malformed),
			    (uint64_t)(gb.fragments - ga.fragments), rc);
		bad++;
	}
	if (nevents != (retval == XDP_DROP || retval == XDP_TX)) {
		print_error("%s: %d events for verdict %s\n", ctx, nevents, verdict_name(retval));
		bad++;
	}
	return bad;
}
