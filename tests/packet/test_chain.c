// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Packet tests of the sluice XDP program: the chain.  A frame sluice
 * passes goes on by tail call to the program in sl_xdp_next (here
 * tests/bpf/xdp_count.bpf.c, which counts what it sees); one it answers
 * with a RST ends in sluice; an empty slot passes to the stack.  And sluice
 * itself in a root program's array (tests/bpf/xdp_root.bpf.c, Katran's
 * shared mode) decides as when attached alone.
 *
 * Runs the real programs through BPF_PROG_TEST_RUN (tests/packet/
 * harness.h).  Needs root and a BPF-capable kernel.
 */
#include "harness.h"

static struct bpf_object *load_test_obj(const char *name)
{
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	struct bpf_object *obj;
	char path[512];

	snprintf(path, sizeof(path), "%s/tests/%s.bpf.o", build, name);
	obj = bpf_object__open_file(path, NULL);
	if (!obj || bpf_object__load(obj))
		fail_msg("load %s: %s", path, strerror(errno));
	return obj;
}

static uint64_t counter(int fd, uint32_t k)
{
	uint64_t v = 0;

	assert_int_equal(bpf_map_lookup_elem(fd, &k, &v), 0);
	return v;
}

static size_t ack_frame(uint8_t *f, uint16_t sport, uint16_t dport)
{
	struct fr_spec sp;

	fr_default_v4_syn(&sp);
	sp.sport = sport;
	sp.dport = dport;
	sp.tcp_flags = 0x10; /* ACK */
	return fr_build(&sp, f, NULL);
}

static void test_next_sees_what_sluice_passes(void **state)
{
	static uint8_t f[FR_MAX_LEN], out[FR_MAX_LEN];
	struct bpf_object *count = load_test_obj("xdp_count");
	int next_fd = bpf_program__fd(bpf_object__find_program_by_name(count, "xdp_count"));
	int seen = bpf_map__fd(bpf_object__find_map_by_name(count, "count_seen"));
	int slots = bpf_map__fd(skel->maps.sl_xdp_next);
	uint32_t zero = 0;
	size_t n;

	(void)state;
	setup_maps(0);
	/* Nothing chained: everything as before. */
	n = ack_frame(f, 53001, P_QUEUE);
	run_expect("no next program: an ACK passes", f, n, out, XDP_PASS);
	assert_int_equal(counter(seen, 0), 0);

	assert_int_equal(bpf_map_update_elem(slots, &zero, &next_fd, BPF_ANY), 0);
	run_expect("chained: an ACK passes", f, n, out, XDP_PASS);
	assert_int_equal(counter(seen, 0), 1);
	n = policy_syn(f, 53002, P_QUEUE);
	run_expect("chained: an admitted SYN passes", f, n, out, XDP_PASS);
	assert_int_equal(counter(seen, 0), 2);
	assert_int_equal(counter(seen, 1), 1);

	/* A full Reject level: sluice answers with a RST, the next program
	 * never sees the SYN. */
	setup_maps(S_FULL);
	n = policy_syn(f, 53003, P_REJECT);
	run_expect("chained: a SYN over a Reject level's limit gets a RST", f, n, out, XDP_TX);
	assert_int_equal(counter(seen, 0), 2);
	assert_int_equal(counter(seen, 1), 1);
	/* ... and an exempt level's SYN goes on. */
	n = policy_syn(f, 53004, P_EXEMPT);
	run_expect("chained: an exempt SYN passes", f, n, out, XDP_PASS);
	assert_int_equal(counter(seen, 1), 2);

	assert_int_equal(bpf_map_delete_elem(slots, &zero), 0);
	n = ack_frame(f, 53005, P_QUEUE);
	run_expect("unchained again: an ACK passes", f, n, out, XDP_PASS);
	assert_int_equal(counter(seen, 0), 3);
	bpf_object__close(count);
}

/* sluice in slot 1 of a root program's array (slot 0 empty), the counter
 * in sluice's own next slot: the root's verdicts are sluice's. */
static void test_sluice_in_a_root_array(void **state)
{
	static uint8_t f[FR_MAX_LEN], out[FR_MAX_LEN];
	struct bpf_object *root = load_test_obj("xdp_root"), *count = load_test_obj("xdp_count");
	int root_fd = bpf_program__fd(bpf_object__find_program_by_name(root, "xdp_root"));
	int root_array = bpf_map__fd(bpf_object__find_map_by_name(root, "root_array"));
	int next_fd = bpf_program__fd(bpf_object__find_program_by_name(count, "xdp_count"));
	int seen = bpf_map__fd(bpf_object__find_map_by_name(count, "count_seen"));
	int slots = bpf_map__fd(skel->maps.sl_xdp_next);
	uint32_t zero = 0, one = 1;
	struct snap s0, s1;
	size_t n;

	(void)state;
	setup_maps(S_FULL);
	assert_int_equal(bpf_map_update_elem(root_array, &one, &prog_fd, BPF_ANY), 0);
	assert_int_equal(bpf_map_update_elem(slots, &zero, &next_fd, BPF_ANY), 0);
	take_snap(&s0);
	n = policy_syn(f, 53101, P_REJECT);
	{
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f, .data_size_in = (uint32_t)n, .data_out = out,
			    .data_size_out = FR_MAX_LEN, .repeat = 1);

		assert_int_equal(bpf_prog_test_run_opts(root_fd, &o), 0);
		assert_int_equal(o.retval, XDP_TX);
	}
	n = policy_syn(f, 53102, P_EXEMPT);
	{
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f, .data_size_in = (uint32_t)n, .data_out = out,
			    .data_size_out = FR_MAX_LEN, .repeat = 1);

		assert_int_equal(bpf_prog_test_run_opts(root_fd, &o), 0);
		assert_int_equal(o.retval, XDP_PASS);
	}
	take_snap(&s1);
	assert_int_equal(s1.l[L_REJECT].rejected - s0.l[L_REJECT].rejected, 1);
	assert_int_equal(s1.g.syns - s0.g.syns, 2);
	assert_int_equal(counter(seen, 1), 1); /* the exempt SYN only */
	assert_int_equal(bpf_map_delete_elem(slots, &zero), 0);
	bpf_object__close(count);
	bpf_object__close(root);
}

static const struct CMUnitTest tests[] = {
	SCENARIO(test_next_sees_what_sluice_passes),
	SCENARIO(test_sluice_in_a_root_array),
};

int main(void)
{
	return cmocka_run_group_tests_name("sluice_xdp_chain", tests, group_setup, group_teardown);
}
