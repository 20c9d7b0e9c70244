// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Packet tests of the refusal's way out (bpf/handoff.h, issue 38): where
 * sl_ifaces says the interface's RSTs go by hand-off (or a drop was seen
 * on this CPU lately), sluice_xdp marks its RST as a hand-off frame and
 * passes it, byte for byte the RST XDP_TX would have sent plus the
 * trailer; elsewhere XDP_TX.  sluice_tc_in and sluice_tc_out take only
 * their own direction's frames with the interface's cookie, give them back
 * their EtherType, strip the trailer and redirect them; everything else
 * goes on untouched.
 *
 * Each test runs the real programs through BPF_PROG_TEST_RUN (the XDP runs
 * come in on loopback, ifindex 1; so do the tc runs).  Needs root.
 */
#include <linux/pkt_cls.h>

#include "harness.h"
#include "lib/handoff.h"

#define LO 1
#define COOKIE 0x5eed1234u

static int fd_ifaces, fd_if_stats;

static void put_iface(uint32_t flags)
{
	struct sluice_iface e = {.slot = 0, .flags = flags, .cookie = COOKIE};
	__u32 key = LO;

	assert_int_equal(bpf_map_update_elem(fd_ifaces, &key, &e, BPF_ANY), 0);
}

/* Every CPU's copy of slot 0, drop time given. */
static void put_if_stats(uint64_t drop_ns)
{
	struct sluice_if_stats st[ncpus];
	__u32 key = 0;

	memset(st, 0, sizeof(st));
	for (int c = 0; c < ncpus; c++)
		st[c].tx_drop_ns = drop_ns;
	assert_int_equal(bpf_map_update_elem(fd_if_stats, &key, st, BPF_ANY), 0);
}

static struct sluice_if_stats if_stats(void)
{
	struct sluice_if_stats st[ncpus], sum = {0};
	__u32 key = 0;

	assert_int_equal(bpf_map_lookup_elem(fd_if_stats, &key, st), 0);
	for (int c = 0; c < ncpus; c++) {
		sum.rst_xdp_tx += st[c].rst_xdp_tx;
		sum.rst_handoff += st[c].rst_handoff;
		sum.handoff_out += st[c].handoff_out;
		sum.handoff_in += st[c].handoff_in;
		sum.handoff_foreign += st[c].handoff_foreign;
	}
	return sum;
}

static int setup(void **state)
{
	__u32 key = LO;

	test_setup(state);
	fd_ifaces = bpf_map__fd(skel->maps.sl_ifaces);
	fd_if_stats = bpf_map__fd(skel->maps.sl_if_stats);
	bpf_map_delete_elem(fd_ifaces, &key);
	put_if_stats(0);
	setup_maps(S_FULL);
	return 0;
}

/* The SYN over the Reject level's limit, and its refusal: verdict and frame. */
static uint32_t refuse_one(uint16_t sport, int family, uint8_t *syn, size_t *syn_len, uint8_t *out,
			   uint32_t *out_len)
{
	struct fr_spec sp;
	uint32_t retval;

	if (family == 6)
		fr_default_v6_syn(&sp);
	else
		fr_default_v4_syn(&sp);
	sp.sport = sport;
	sp.dport = P_REJECT;
	*syn_len = fr_build(&sp, syn, NULL);
	assert_int_equal(run_xdp(syn, *syn_len, out, out_len, &retval), 0);
	return retval;
}

/* Hand-off where sl_ifaces says so: the RST XDP_TX would send, marked. */
static void test_rst_handed_off(void **state)
{
	static uint8_t syn[FR_MAX_LEN], tx[FR_MAX_LEN], ho[FR_MAX_LEN];

	(void)state;
	for (int family = 4; family <= 6; family += 2) {
		uint32_t tx_len, ho_len;
		size_t n;

		/* XDP_TX first, with no entry, as the reference. */
		assert_int_equal(refuse_one(50600, family, syn, &n, tx, &tx_len), XDP_TX);
		put_iface(SLUICE_IF_HANDOFF_READY | SLUICE_IF_RST_HANDOFF);
		assert_int_equal(refuse_one(50601, family, syn, &n, ho, &ho_len), XDP_PASS);
		assert_int_equal(ho_len, tx_len + SLUICE_HANDOFF_TRAILER);
		assert_int_equal(sl_handoff_unwrap(ho, ho_len, COOKIE, SLUICE_HANDOFF_OUT), (int)tx_len);
		/* The same RST but for its destination port's sequence (another
		 * client port): compare all but the TCP ports and checksum. */
		assert_memory_equal(ho, tx, family == 4 ? 14 + 20 : 14 + 40);
		assert_int_equal(if_stats().rst_handoff, 1 + (family == 6));
		{
			__u32 key = LO;

			bpf_map_delete_elem(fd_ifaces, &key);
		}
	}
	assert_int_equal(if_stats().rst_xdp_tx, 0); /* no entry: not counted there */
}

/* Ready but proven: XDP_TX, counted; a drop this CPU saw lately: hand-off;
 * one older than the hold: XDP_TX again; not ready: XDP_TX whatever. */
static void test_rst_path_choice(void **state)
{
	static uint8_t syn[FR_MAX_LEN], out[FR_MAX_LEN];
	uint32_t out_len;
	size_t n;

	(void)state;
	put_iface(SLUICE_IF_HANDOFF_READY);
	assert_int_equal(refuse_one(50610, 4, syn, &n, out, &out_len), XDP_TX);
	assert_int_equal(if_stats().rst_xdp_tx, 1);
	put_if_stats(mono_ns() - 1000000000ull);
	assert_int_equal(refuse_one(50611, 4, syn, &n, out, &out_len), XDP_PASS);
	assert_int_equal(if_stats().rst_handoff, 1);
	put_if_stats(mono_ns() - SLUICE_TX_DROP_HOLD_NS - 1000000000ull);
	assert_int_equal(refuse_one(50612, 4, syn, &n, out, &out_len), XDP_TX);
	put_iface(SLUICE_IF_RST_HANDOFF); /* the tc programs are not there */
	put_if_stats(mono_ns());
	assert_int_equal(refuse_one(50613, 4, syn, &n, out, &out_len), XDP_TX);
}

static int run_tc(int fd, const uint8_t *in, size_t len, uint8_t *out, uint32_t *out_len)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_size_in = (uint32_t)len,
		    .data_out = out, .data_size_out = FR_MAX_LEN, .repeat = 1);

	assert_int_equal(bpf_prog_test_run_opts(fd, &o), 0);
	*out_len = o.data_size_out;
	return (int)o.retval;
}

/* Each tc program takes its own direction's frames with the cookie; the
 * other's, a stranger's and plain frames go on as they came. */
static void test_tc_programs(void **state)
{
	static uint8_t syn[FR_MAX_LEN], w[FR_MAX_LEN], out[FR_MAX_LEN];
	int in_fd = bpf_program__fd(skel->progs.sluice_tc_in);
	int out_fd = bpf_program__fd(skel->progs.sluice_tc_out);
	struct fr_spec sp;
	uint32_t out_len;
	size_t n;
	int wn;

	(void)state;
	put_iface(SLUICE_IF_HANDOFF_READY);
	fr_default_v4_syn(&sp);
	n = fr_build(&sp, syn, NULL);
	for (int dir = SLUICE_HANDOFF_OUT; dir <= SLUICE_HANDOFF_IN; dir++) {
		int mine = dir == SLUICE_HANDOFF_OUT ? in_fd : out_fd;
		int other = dir == SLUICE_HANDOFF_OUT ? out_fd : in_fd;

		wn = sl_handoff_wrap(syn, n, COOKIE, dir, w, sizeof(w));
		assert_int_equal(run_tc(mine, w, (size_t)wn, out, &out_len), TC_ACT_REDIRECT);
		assert_int_equal(out_len, n);
		assert_memory_equal(out, syn, n);
		assert_int_equal(run_tc(other, w, (size_t)wn, out, &out_len), TC_ACT_UNSPEC);
		assert_int_equal(out_len, (uint32_t)wn);
		assert_memory_equal(out, w, (size_t)wn);
		wn = sl_handoff_wrap(syn, n, COOKIE + 1, dir, w, sizeof(w));
		assert_int_equal(run_tc(mine, w, (size_t)wn, out, &out_len), TC_ACT_UNSPEC);
	}
	assert_int_equal(if_stats().handoff_out, 1);
	assert_int_equal(if_stats().handoff_in, 1);
	assert_int_equal(if_stats().handoff_foreign, 4);
	/* A plain frame: not ours, not even counted as foreign. */
	assert_int_equal(run_tc(in_fd, syn, n, out, &out_len), TC_ACT_UNSPEC);
	assert_int_equal(run_tc(out_fd, syn, n, out, &out_len), TC_ACT_UNSPEC);
	assert_int_equal(if_stats().handoff_foreign, 4);
	/* An interface sluice does not protect: left alone. */
	{
		__u32 key = LO;

		bpf_map_delete_elem(fd_ifaces, &key);
	}
	wn = sl_handoff_wrap(syn, n, COOKIE, SLUICE_HANDOFF_IN, w, sizeof(w));
	assert_int_equal(run_tc(out_fd, w, (size_t)wn, out, &out_len), TC_ACT_UNSPEC);
}

static const struct CMUnitTest tests[] = {
	{"test_rst_handed_off", test_rst_handed_off, setup, NULL, NULL},
	{"test_rst_path_choice", test_rst_path_choice, setup, NULL, NULL},
	{"test_tc_programs", test_tc_programs, setup, NULL, NULL},
};

int main(void)
{
	return cmocka_run_group_tests_name("sluice_handoff", tests, group_setup, group_teardown);
}
