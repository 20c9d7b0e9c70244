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
	struct sl_pending_table *t = sl_pending_new(4);
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
	struct sl_pending_table *t = sl_pending_new(3);
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
	struct sl_pending_table *t = sl_pending_new(N);
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
	struct walk w = {.t = sl_pending_new(64)};
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
	};

	return cmocka_run_group_tests_name("pending", tests, NULL, NULL);
}
