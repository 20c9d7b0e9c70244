// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The daemon's table of deferred connections. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine/pending.h"
#include "lib/flowhash.h"

static const uint8_t KEY[16] = "a test's key....";

static struct sluice_conn_key key(uint32_t n)
{
	struct sluice_conn_key k;

	memset(&k, 0, sizeof(k));
	k.saddr[10] = k.saddr[11] = 0xff;
	memcpy(k.saddr + 12, &n, 4);
	k.sport = (uint16_t)(n * 7);
	k.dport = 80;
	k.family = 4;
	return k;
}

static void test_add_lookup_remove(void **state)
{
	struct sl_pending_table *t = sl_pending_new(4, KEY);
	struct sluice_conn_key a = key(1), b = key(2);
	struct sl_pending *p, *q;
	uint64_t id;
	bool exists;

	(void)state;
	p = sl_pending_add(t, &a, &exists);
	assert_non_null(p);
	assert_false(exists);
	assert_int_equal(p->state, SL_PENDING_QUEUED);
	id = p->id;
	/* a retransmit of the same connection is recognised */
	assert_null(sl_pending_add(t, &a, &exists));
	assert_true(exists);
	assert_ptr_equal(sl_pending_by_key(t, &a), p);
	assert_ptr_equal(sl_pending_by_id(t, id), p);
	assert_null(sl_pending_by_key(t, &b));
	sl_pending_remove(t, p);
	assert_null(sl_pending_by_key(t, &a));
	assert_null(sl_pending_by_id(t, id));
	/* the slot is reused with a new id; the old id stays dead */
	q = sl_pending_add(t, &b, &exists);
	assert_non_null(q);
	assert_true(q->id != id);
	assert_null(sl_pending_by_id(t, id));
	assert_int_equal(sl_pending_count(t), 1);
	sl_pending_free(t);
}

static void test_capacity(void **state)
{
	struct sl_pending_table *t = sl_pending_new(3, KEY);
	bool exists;

	(void)state;
	for (uint32_t i = 0; i < 3; i++) {
		struct sluice_conn_key k = key(i);

		assert_non_null(sl_pending_add(t, &k, &exists));
	}
	{
		struct sluice_conn_key k = key(99);

		assert_null(sl_pending_add(t, &k, &exists));
		assert_false(exists);
	}
	sl_pending_free(t);
}

/* Random churn against a plain array model. */
static void test_churn_matches_model(void **state)
{
	enum { N = 512, OPS = 200000 };
	struct sl_pending_table *t = sl_pending_new(N, KEY);
	uint64_t ids[N * 4] = {0};
	uint64_t seed = 0x5eed1234;

	(void)state;
	printf("# churn: seed 0x%llx\n", (unsigned long long)seed);
	for (int op = 0; op < OPS; op++) {
		uint32_t k;
		struct sluice_conn_key kk;
		struct sl_pending *p;
		bool exists;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		k = (uint32_t)(seed >> 33) % (N * 4);
		kk = key(k);
		p = sl_pending_by_key(t, &kk);
		if (ids[k]) {
			assert_non_null(p);
			assert_true(p->id == ids[k]);
			assert_ptr_equal(sl_pending_by_id(t, ids[k]), p);
			if (seed & (1ULL << 20)) {
				sl_pending_remove(t, p);
				assert_null(sl_pending_by_id(t, ids[k]));
				ids[k] = 0;
			}
		} else {
			assert_null(p);
			p = sl_pending_add(t, &kk, &exists);
			assert_false(exists);
			if (sl_pending_count(t) <= N && p)
				ids[k] = p->id;
		}
	}
	{
		size_t live = 0;

		for (int i = 0; i < N * 4; i++)
			live += ids[i] != 0;
		assert_int_equal(live, sl_pending_count(t));
	}
	sl_pending_free(t);
}

/* 4-tuples in one IPv6 /64 (the client's own addresses and ports) */
static struct sluice_conn_key v6_key(uint64_t n)
{
	struct sluice_conn_key k;

	memset(&k, 0, sizeof(k));
	k.saddr[0] = 0x20, k.saddr[1] = 0x01, k.saddr[2] = 0x0d, k.saddr[3] = 0xb8;
	memcpy(k.saddr + 8, &n, 8);
	k.sport = (uint16_t)(n >> 17);
	k.daddr[15] = 1;
	k.dport = 443;
	k.family = 6;
	return k;
}

/* A client that knows the index's key chooses 4-tuples that all land in
 * one probe run (found here as an attacker would, by trying addresses of
 * its own /64): every insert then walks the run.  Under a key it does not
 * know, the same 4-tuples cost what random ones do.  Counted in index
 * slots looked at, not timed. */
static void test_chosen_collisions_cost_nothing_under_a_secret_key(void **state)
{
	enum { CAP = 1024, N = 300 };
	static const uint8_t known[16] = "sluice-pending!!", secret[16] = "\x8f\x11\x3a\xc4\x90\x2b\x77\x05\xe1\x6d\x58\xa2\x19\xfe\x33\xc0";
	static struct sluice_conn_key chosen[N];
	struct sl_pending_table *a = sl_pending_new(CAP, known), *b = sl_pending_new(CAP, secret);
	struct sl_pending_table *c = sl_pending_new(CAP, secret);
	uint64_t n = 0, pa, pb, pc;
	bool exists;

	(void)state;
	/* The index has 2 x CAP slots rounded up to a power of two: 2,048. */
	for (unsigned found = 0; found < N; n++) {
		struct sluice_conn_key k = v6_key(n);

		if ((sl_siphash24(known, &k, sizeof(k)) & 2047) == 0)
			chosen[found++] = k;
	}
	for (unsigned i = 0; i < N; i++) {
		struct sluice_conn_key r = v6_key(n + 7919 * i);

		assert_non_null(sl_pending_add(a, &chosen[i], &exists));
		assert_non_null(sl_pending_add(b, &chosen[i], &exists));
		assert_non_null(sl_pending_add(c, &r, &exists));
	}
	pa = sl_pending_probes(a), pb = sl_pending_probes(b), pc = sl_pending_probes(c);
	print_message("index slots per insert of %d chosen 4-tuples: %.1f under the key they were chosen for, "
		      "%.2f under a secret one; %.2f for as many others\n", N, (double)pa / N, (double)pb / N,
		      (double)pc / N);
	assert_true(pa > 50 * N);       /* the attack, where the key is known */
	assert_true(pb <= 3 * N);       /* nothing, where it is not */
	assert_true(pb <= 2 * pc + N);  /* no more than random 4-tuples cost */
	sl_pending_free(a);
	sl_pending_free(b);
	sl_pending_free(c);
}

/* The walk visits each live record once, also while its callback removes
 * the record it is given (every third here), and never a removed one. */
struct walk {
	struct sl_pending_table *t;
	unsigned seen[64];
	unsigned visits;
};

static void visit(struct sl_pending *p, void *ctx)
{
	struct walk *w = ctx;
	unsigned n = p->level;

	assert_true(n < 64);
	w->seen[n]++;
	w->visits++;
	if (n % 3 == 0)
		sl_pending_remove(w->t, p);
}

static void test_walk_visits_each_record_once(void **state)
{
	struct walk w = {.t = sl_pending_new(64, KEY)};
	bool exists;

	(void)state;
	for (uint32_t i = 0; i < 40; i++) {
		struct sluice_conn_key k = key(i);
		struct sl_pending *p = sl_pending_add(w.t, &k, &exists);

		assert_non_null(p);
		p->level = i;
	}
	for (uint32_t i = 0; i < 40; i += 4) { /* holes before the walk */
		struct sluice_conn_key k = key(i);

		sl_pending_remove(w.t, sl_pending_by_key(w.t, &k));
	}
	sl_pending_each(w.t, visit, &w);
	assert_int_equal(w.visits, 30);
	for (uint32_t i = 0; i < 40; i++) {
		struct sluice_conn_key k = key(i);

		assert_int_equal(w.seen[i], i % 4 ? 1 : 0);
		assert_int_equal(sl_pending_by_key(w.t, &k) != NULL, i % 4 && i % 3);
	}
	memset(&w.seen, 0, sizeof(w.seen));
	w.visits = 0;
	sl_pending_each(w.t, visit, &w); /* what is left: i % 4 and i % 3 */
	assert_int_equal(w.visits, sl_pending_count(w.t));
	sl_pending_free(w.t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_lookup_remove),
		cmocka_unit_test(test_capacity),
		cmocka_unit_test(test_churn_matches_model),
		cmocka_unit_test(test_walk_visits_each_record_once),
		cmocka_unit_test(test_chosen_collisions_cost_nothing_under_a_secret_key),
	};

	return cmocka_run_group_tests_name("pending", tests, NULL, NULL);
}
