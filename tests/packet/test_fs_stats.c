// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * sl_fs_stats: what the data path counts per FlowSchema for the metrics
 * with a flow_schema label.  A SYN counts in its schema; an inline
 * admission and an inline RST (a Reject level over its limit) count there
 * too; a deferral and a ticket's claim do not (the daemon counts its own
 * verdicts), and nothing lands in another schema.  The harness classifies
 * port P_x into level L_x with schema index L_x.
 */
#include "harness.h"

static struct sluice_fs_stats fs_read(uint32_t schema)
{
	int fd = bpf_map__fd(skel->maps.sl_fs_stats);
	struct sluice_fs_stats *v = calloc((size_t)ncpus, sizeof(*v)), sum = {0};

	assert_non_null(v);
	assert_int_equal(bpf_map_lookup_elem(fd, &schema, v), 0);
	for (int c = 0; c < ncpus; c++) {
		sum.syns += v[c].syns;
		sum.admitted_inline += v[c].admitted_inline;
		sum.rejected_inline += v[c].rejected_inline;
	}
	free(v);
	return sum;
}

struct fs_delta {
	uint64_t syns, admitted, rejected;
};

/* One SYN from sport to dport; the schema's counters must move by want,
 * and the other levels' schemas not at all. */
static void syn_counts(const char *ctx, uint16_t sport, uint16_t dport, uint32_t schema,
		       uint32_t verdict, struct fs_delta want)
{
	static uint8_t f[FR_MAX_LEN], out[FR_MAX_LEN];
	static const uint32_t others[] = {L_QUEUE, L_REJECT, L_EXEMPT, 7 /* put_ticket's schema */};
	struct sluice_fs_stats before[4], after[4], a, b;
	struct fr_spec sp;
	size_t n;

	for (int i = 0; i < 4; i++)
		before[i] = fs_read(others[i]);
	b = fs_read(schema);
	fr_default_v4_syn(&sp);
	sp.sport = sport;
	sp.dport = dport;
	n = fr_build(&sp, f, NULL);
	run_expect(ctx, f, n, out, verdict);
	a = fs_read(schema);
	if (a.syns - b.syns != want.syns || a.admitted_inline - b.admitted_inline != want.admitted ||
	    a.rejected_inline - b.rejected_inline != want.rejected)
		fail_msg("%s: schema %u moved syns +%llu admitted +%llu rejected +%llu, want +%llu +%llu +%llu",
			 ctx, schema, (unsigned long long)(a.syns - b.syns),
			 (unsigned long long)(a.admitted_inline - b.admitted_inline),
			 (unsigned long long)(a.rejected_inline - b.rejected_inline),
			 (unsigned long long)want.syns, (unsigned long long)want.admitted,
			 (unsigned long long)want.rejected);
	for (int i = 0; i < 4; i++) {
		if (others[i] == schema)
			continue;
		after[i] = fs_read(others[i]);
		if (memcmp(&after[i], &before[i], sizeof(after[i])))
			fail_msg("%s: schema %u moved too", ctx, others[i]);
	}
}

static void test_inline_verdicts_count_in_their_schema(void **state)
{
	(void)state;
	setup_maps(0);
	syn_counts("Queue level with room: admitted", 50500, P_QUEUE, L_QUEUE, XDP_PASS,
		   (struct fs_delta){1, 1, 0});
	syn_counts("Reject level with room: admitted", 50501, P_REJECT, L_REJECT, XDP_PASS,
		   (struct fs_delta){1, 1, 0});
	syn_counts("exempt level: admitted", 50502, P_EXEMPT, L_EXEMPT, XDP_PASS,
		   (struct fs_delta){1, 1, 0});
	setup_maps(S_FULL);
	syn_counts("Reject level full: RST", 50503, P_REJECT, L_REJECT, XDP_TX,
		   (struct fs_delta){1, 0, 1});
	syn_counts("Queue level full: deferred, the daemon decides", 50504, P_QUEUE, L_QUEUE,
		   XDP_DROP, (struct fs_delta){1, 0, 0});
}

static void test_retransmits_and_tickets_are_not_admissions(void **state)
{
	struct sluice_conn_key k = v4_key(50510, P_QUEUE);

	(void)state;
	setup_maps(0);
	syn_counts("first SYN: admitted", 50510, P_QUEUE, L_QUEUE, XDP_PASS,
		   (struct fs_delta){1, 1, 0});
	syn_counts("its retransmit: a SYN, not a second admission", 50510, P_QUEUE, L_QUEUE,
		   XDP_PASS, (struct fs_delta){1, 0, 0});
	setup_maps(S_FULL);
	k = v4_key(50511, P_QUEUE);
	put_ticket(&k, SLUICE_TICKET_ADMIT, L_QUEUE, 1);
	syn_counts("a claimed admit ticket: the daemon's verdict, not counted here", 50511, P_QUEUE,
		   L_QUEUE, XDP_PASS, (struct fs_delta){1, 0, 0});
	k = v4_key(50512, P_QUEUE);
	put_ticket(&k, SLUICE_TICKET_REJECT, L_QUEUE, 1);
	syn_counts("a claimed reject ticket: the daemon's verdict, not counted here", 50512, P_QUEUE,
		   L_QUEUE, XDP_TX, (struct fs_delta){1, 0, 0});
}

static const struct CMUnitTest tests[] = {
	SCENARIO(test_inline_verdicts_count_in_their_schema),
	SCENARIO(test_retransmits_and_tickets_are_not_admissions),
};

int main(void)
{
	return cmocka_run_group_tests_name("sluice_xdp_fs_stats", tests, group_setup, group_teardown);
}
