// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Unit tests for shuffle sharding (Kubernetes shufflesharding.go; KEP-1040 "Probability of Collisions") against
 * tests/vectors/apf.json: dealing, validation, queue pick and the
 * mouse-crush odds. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "vectors.h"
#include <jansson.h>

#include "lib/shuffle.h"

static json_t *shuffle_vectors(json_t *root, const char *key)
{
	json_t *v = json_object_get(json_object_get(root, "shuffleSharding"), key);

	assert_non_null(v);
	return v;
}

static uint64_t parse_u64(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	assert_int_equal(errno, 0);
	assert_true(end != s && *end == '\0');
	return (uint64_t)v;
}

/* The mixed-radix digits of Kubernetes shufflesharding.go DealIntoHand (to cross-check the vectors). */
static void digits_of(uint32_t deck, uint32_t hand, uint64_t v, uint32_t *digit)
{
	for (uint32_t i = 0; i < hand; i++) {
		digit[i] = (uint32_t)(v % (deck - i));
		v /= deck - i;
	}
}

/* The KEP formulation: card i is element digit[i] of the sorted unused list. */
static void deal_kep(uint32_t deck, uint32_t hand, uint64_t v, uint32_t *cards)
{
	uint32_t digit[SL_SHUFFLE_MAX_HAND];
	uint32_t *unused = malloc(deck * sizeof(*unused));

	assert_non_null(unused);
	digits_of(deck, hand, v, digit);
	for (uint32_t i = 0; i < deck; i++)
		unused[i] = i;
	for (uint32_t i = 0; i < hand; i++) {
		cards[i] = unused[digit[i]];
		memmove(&unused[digit[i]], &unused[digit[i] + 1],
			(deck - i - digit[i] - 1) * sizeof(*unused));
	}
	free(unused);
}

static void assert_hand(const uint32_t *got, const uint32_t *want, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (got[i] != want[i])
			fail_msg("card %u: got %u, want %u", i, got[i], want[i]);
}

/* ---- dealing ------------------------------------------------------------- */

static void test_deal_vectors(void **state)
{
	json_t *root = load_vectors("apf.json");
	json_t *deal = shuffle_vectors(root, "deal"), *row;
	size_t idx;

	(void)state;
	assert_true(json_array_size(deal) >= 6);
	json_array_foreach(deal, idx, row) {
		uint32_t deck = (uint32_t)json_integer_value(json_object_get(row, "deckSize"));
		uint32_t hand = (uint32_t)json_integer_value(json_object_get(row, "handSize"));
		uint64_t v = parse_u64(json_string_value(json_object_get(row, "hashValue")));
		uint64_t vhex = parse_u64(json_string_value(json_object_get(row, "hashHex")));
		json_t *wd = json_object_get(row, "digits"), *wh = json_object_get(row, "hand");
		uint32_t digit[SL_SHUFFLE_MAX_HAND], cards[SL_SHUFFLE_MAX_HAND];
		uint32_t want_d[SL_SHUFFLE_MAX_HAND], want_h[SL_SHUFFLE_MAX_HAND];

		assert_true(hand <= SL_SHUFFLE_MAX_HAND);
		assert_true(v == vhex);
		assert_int_equal(json_array_size(wd), hand);
		assert_int_equal(json_array_size(wh), hand);
		for (uint32_t i = 0; i < hand; i++) {
			want_d[i] = (uint32_t)json_integer_value(json_array_get(wd, i));
			want_h[i] = (uint32_t)json_integer_value(json_array_get(wh, i));
		}
		digits_of(deck, hand, v, digit);
		assert_hand(digit, want_d, hand);
		assert_int_equal(sl_shuffle_deal(deck, hand, v, cards), 0);
		assert_hand(cards, want_h, hand);
		deal_kep(deck, hand, v, cards);
		assert_hand(cards, want_h, hand);
	}
	json_decref(root);
}

static void test_deal_spec_examples(void **state)
{
	static const struct {
		uint32_t deck, hand;
		uint64_t v;
		uint32_t hand_[6];
	} ex[] = {
		/* Kubernetes shufflesharding.go DealIntoHand worked example: digits [3,3,0,5]. */
		{ 10, 4, 3633, { 3, 4, 0, 8 } },
		/* The flow-hash vectors' hands (V from SHA-256, given here). */
		{ 128, 6, 0xf4de3bd42ccdf6b7ull, { 55, 62, 126, 125, 105, 1 } },
		{ 16, 4, 0xa1c9014d05411b2aull, { 10, 15, 8, 13 } },
		/* Extremes: a full deck, and one card. */
		{ 4, 4, 0, { 0, 1, 2, 3 } },
		{ 4, 4, 23, { 3, 2, 1, 0 } },
		{ 100, 1, 12345, { 45 } },
	};
	uint32_t cards[SL_SHUFFLE_MAX_HAND], d[SL_SHUFFLE_MAX_HAND];

	(void)state;
	digits_of(10, 4, 3633, d);
	assert_int_equal(d[0], 3);
	assert_int_equal(d[1], 3);
	assert_int_equal(d[2], 0);
	assert_int_equal(d[3], 5);
	for (size_t i = 0; i < sizeof(ex) / sizeof(ex[0]); i++) {
		assert_int_equal(sl_shuffle_deal(ex[i].deck, ex[i].hand, ex[i].v, cards), 0);
		assert_hand(cards, ex[i].hand_, ex[i].hand);
	}
}

static void test_deal_invalid(void **state)
{
	uint32_t cards[SL_SHUFFLE_MAX_HAND + 1];

	(void)state;
	assert_int_equal(sl_shuffle_deal(0, 1, 0, cards), -EINVAL);
	assert_int_equal(sl_shuffle_deal(10, 0, 0, cards), -EINVAL);
	assert_int_equal(sl_shuffle_deal(10, 11, 0, cards), -EINVAL);
	assert_int_equal(sl_shuffle_deal(512, 8, 0, cards), -EINVAL);
	assert_int_equal(sl_shuffle_deal(1u << 27, 2, 0, cards), -EINVAL);
	assert_int_equal(sl_shuffle_deal(16, 16, 0, cards), -EINVAL); /* 64 bits */
	assert_int_equal(sl_shuffle_deal(128, 6, 0, NULL), -EINVAL);
	assert_int_equal(sl_shuffle_deal(16, 15, ~0ull, cards), 0);
	assert_int_equal(sl_shuffle_deal(1u << 26, 2, ~0ull, cards), 0);
	assert_true(cards[0] < (1u << 26) && cards[1] < (1u << 26) && cards[0] != cards[1]);
}

/* Cheap 64-bit mixer (splitmix64) for pseudo-random hash values. */
static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void test_deal_matches_kep_and_is_distinct(void **state)
{
	static const uint32_t params[][2] = {
		{ 128, 6 }, { 128, 8 }, { 64, 10 }, { 16, 15 }, { 1024, 6 }, { 1000, 6 },
		{ 32, 12 }, { 10, 10 }, { 2, 1 }, { 2, 2 }, { 65536, 3 }, { 3, 2 },
	};
	uint64_t seed = 42;

	(void)state;
	for (size_t p = 0; p < sizeof(params) / sizeof(params[0]); p++) {
		uint32_t deck = params[p][0], hand = params[p][1];
		int iters = deck > 4096 ? 200 : 5000;

		for (int it = 0; it < iters; it++) {
			uint64_t v = it < 2 ? (it ? ~0ull : 0) : splitmix(&seed);
			uint32_t a[SL_SHUFFLE_MAX_HAND], b[SL_SHUFFLE_MAX_HAND];

			assert_int_equal(sl_shuffle_deal(deck, hand, v, a), 0);
			deal_kep(deck, hand, v, b);
			assert_hand(a, b, hand);
			for (uint32_t i = 0; i < hand; i++) {
				assert_true(a[i] < deck);
				for (uint32_t j = 0; j < i; j++)
					assert_true(a[i] != a[j]);
			}
		}
	}
}

/* Over V in [0, reps·ff(D,H)) every ordered hand appears exactly reps times. */
static void check_uniform_ordered(uint32_t deck, uint32_t hand, uint32_t reps)
{
	uint64_t ff = 1, cells = 1;
	uint32_t *count;

	for (uint32_t i = 0; i < hand; i++) {
		ff *= deck - i;
		cells *= deck;
	}
	count = calloc(cells, sizeof(*count));
	assert_non_null(count);
	for (uint64_t v = 0; v < ff * reps; v++) {
		uint32_t c[SL_SHUFFLE_MAX_HAND];
		uint64_t idx = 0;

		assert_int_equal(sl_shuffle_deal(deck, hand, v, c), 0);
		for (uint32_t i = 0; i < hand; i++) {
			assert_true(c[i] < deck);
			for (uint32_t j = 0; j < i; j++)
				assert_true(c[i] != c[j]);
			idx = idx * deck + c[i];
		}
		count[idx]++;
	}
	uint64_t seen = 0;
	for (uint64_t i = 0; i < cells; i++) {
		if (!count[i])
			continue;
		seen++;
		if (count[i] != reps)
			fail_msg("(%u,%u): hand #%" PRIu64 " seen %u times, want %u", deck, hand, i,
				 count[i], reps);
	}
	assert_true(seen == ff);
	free(count);
}

static void test_deal_uniform(void **state)
{
	(void)state;
	check_uniform_ordered(8, 3, 7);
	check_uniform_ordered(5, 5, 3);
	check_uniform_ordered(128, 3, 1); /* upstream: 341,376 unordered hands, 6 each */
	check_uniform_ordered(50, 4, 1);  /* upstream: 230,300 unordered hands, 24 each */
}

/* Upstream's test: (64,3) over 2^22 hash values, each unordered hand 96..102 times. */
static void test_deal_uniform_upstream_64_3(void **state)
{
	uint32_t *count = calloc(64 * 64 * 64, sizeof(*count));
	uint32_t lo = UINT32_MAX, hi = 0, hands = 0;

	(void)state;
	assert_non_null(count);
	for (uint64_t v = 0; v < (1u << 22); v++) {
		uint32_t c[3], t;

		assert_int_equal(sl_shuffle_deal(64, 3, v, c), 0);
		if (c[0] > c[1]) { t = c[0]; c[0] = c[1]; c[1] = t; }
		if (c[1] > c[2]) { t = c[1]; c[1] = c[2]; c[2] = t; }
		if (c[0] > c[1]) { t = c[0]; c[0] = c[1]; c[1] = t; }
		count[(c[0] * 64 + c[1]) * 64 + c[2]]++;
	}
	for (uint32_t i = 0; i < 64 * 64 * 64; i++) {
		if (!count[i])
			continue;
		hands++;
		lo = count[i] < lo ? count[i] : lo;
		hi = count[i] > hi ? count[i] : hi;
	}
	assert_int_equal(hands, 41664);
	assert_true(lo >= 96 && hi <= 102);
	free(count);
}

/* ---- validation ---------------------------------------------------------- */

static void test_entropy_bits(void **state)
{
	(void)state;
	assert_int_equal(sl_shuffle_entropy_bits(1024, 6), 60);
	assert_int_equal(sl_shuffle_entropy_bits(512, 8), 72);
	assert_int_equal(sl_shuffle_entropy_bits(128, 9), 63);
	assert_int_equal(sl_shuffle_entropy_bits(64, 10), 60);
	assert_int_equal(sl_shuffle_entropy_bits(1000, 6), 60);
	assert_int_equal(sl_shuffle_entropy_bits(1000, 7), 70);
	assert_int_equal(sl_shuffle_entropy_bits(15, 15), 59);
	assert_int_equal(sl_shuffle_entropy_bits(16, 16), 64);
	assert_int_equal(sl_shuffle_entropy_bits(1, 1), 0);
	assert_int_equal(sl_shuffle_entropy_bits(0, 5), 0);
	assert_int_equal(sl_shuffle_entropy_bits(5, 0), 0);
	assert_int_equal(sl_shuffle_entropy_bits(UINT32_MAX, UINT32_MAX), 2147483647);
}

static void test_validation_vectors(void **state)
{
	json_t *root = load_vectors("apf.json");
	json_t *val = shuffle_vectors(root, "validation"), *row;
	size_t idx;
	char why[160];

	(void)state;
	assert_true(json_array_size(val) >= 18);
	json_array_foreach(val, idx, row) {
		json_int_t deck = json_integer_value(json_object_get(row, "deckSize"));
		json_int_t hand = json_integer_value(json_object_get(row, "handSize"));
		json_t *bits = json_object_get(row, "requiredEntropyBits");
		bool valid = json_is_true(json_object_get(row, "valid"));
		const char *reason = json_string_value(json_object_get(row, "reason"));
		int rc;

		assert_non_null(reason);
		if (deck < 0 || hand < 0) {
			/* The C API takes unsigned sizes: a negative deck cannot be
			 * passed.  Its closest analogue is 0, "not positive". */
			assert_false(valid);
			assert_string_equal(reason, "not positive");
			deck = deck < 0 ? 0 : deck;
			hand = hand < 0 ? 0 : hand;
		}
		if (json_is_integer(bits))
			assert_int_equal(sl_shuffle_entropy_bits((uint32_t)deck, (uint32_t)hand),
					 json_integer_value(bits));
		rc = sl_shuffle_validate((uint32_t)deck, (uint32_t)hand, why, sizeof(why));
		if (valid) {
			assert_int_equal(rc, 0);
			assert_string_equal(why, "");
			continue;
		}
		assert_int_equal(rc, -EINVAL);
		if (!strcmp(reason, "not positive"))
			assert_true(strstr(why, "must be at least 1") != NULL);
		else if (!strcmp(reason, "handSize > deckSize"))
			assert_true(strstr(why, "is larger than queues") != NULL);
		else if (!strcmp(reason, "deckSize > 2^26"))
			assert_true(strstr(why, "more than 2^26") != NULL);
		else if (!strcmp(reason, "entropy > 60 bits"))
			assert_true(strstr(why, "bits of entropy") != NULL);
		else
			fail_msg("unknown reason %s", reason);
	}
	json_decref(root);
}

static void test_validation_messages(void **state)
{
	char why[160];

	(void)state;
	assert_int_equal(sl_shuffle_validate(128, 9, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "handSize 9 needs 63 bits of entropy with 128 queues; at most 60 allowed");
	assert_int_equal(sl_shuffle_validate(100, 101, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "handSize 101 is larger than queues 100");
	assert_int_equal(sl_shuffle_validate(134217728, 2, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "queues 134217728 is more than 2^26 (67108864)");
	assert_int_equal(sl_shuffle_validate(100, 0, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "handSize must be at least 1");
	assert_int_equal(sl_shuffle_validate(0, 8, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "queues must be at least 1");
	assert_int_equal(sl_shuffle_validate(0, 0, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "queues must be at least 1");
	/* (uint32_t)-100, what a careless cast of upstream's -100 gives. */
	assert_int_equal(sl_shuffle_validate((uint32_t)-100, 8, why, sizeof(why)), -EINVAL);
	/* Truncation is safe, and a NULL buffer is allowed. */
	assert_int_equal(sl_shuffle_validate(512, 8, why, 8), -EINVAL);
	assert_string_equal(why, "handSiz");
	assert_int_equal(sl_shuffle_validate(512, 8, NULL, 0), -EINVAL);
	assert_int_equal(sl_shuffle_validate(64, 8, NULL, 0), 0);
	assert_int_equal(sl_shuffle_validate(1, 1, why, sizeof(why)), 0);
	/* handSize <= 15 by construction. */
	for (uint32_t d = 1; d <= 4096; d++)
		for (uint32_t h = 16; h <= d && h <= 20; h++)
			assert_int_equal(sl_shuffle_validate(d, h, NULL, 0), -EINVAL);
}

/* ---- queue pick (Kubernetes queueset.go shuffleShardLocked; the engine belongs to the QueueSet) --------------- */

static uint32_t pick_queue(const uint32_t *hand, uint32_t n, const double *work,
			   uint64_t *enqueues)
{
	uint32_t o = (uint32_t)(*enqueues % n), best = hand[o];

	(*enqueues)++;
	for (uint32_t k = 1; k < n; k++) {
		uint32_t q = hand[(o + k) % n];

		if (work[q] < work[best])
			best = q;
	}
	return best;
}

static void test_queue_pick_vectors(void **state)
{
	json_t *root = load_vectors("apf.json");
	json_t *vec = json_object_get(shuffle_vectors(root, "queuePick"), "vectors"), *row;
	size_t idx;

	(void)state;
	assert_true(json_array_size(vec) >= 5);
	json_array_foreach(vec, idx, row) {
		json_t *jh = json_object_get(row, "hand"), *jw, *x;
		json_t *work_by_q = json_object_get(row, "waitingTotalWorkByQueue");
		uint64_t enq = (uint64_t)json_integer_value(json_object_get(row, "enqueueCounterBefore"));
		uint32_t hand[SL_SHUFFLE_MAX_HAND], n = (uint32_t)json_array_size(jh);
		double work[64] = { 0 };
		const char *q;
		size_t i;

		assert_true(n >= 1 && n <= SL_SHUFFLE_MAX_HAND);
		json_array_foreach(jh, i, x) {
			hand[i] = (uint32_t)json_integer_value(x);
			assert_true(hand[i] < 64);
		}
		json_object_foreach(work_by_q, q, jw)
			work[atoi(q)] = json_number_value(jw);
		uint64_t before = enq;
		assert_int_equal(pick_queue(hand, n, work, &enq),
				 json_integer_value(json_object_get(row, "chosenQueue")));
		assert_true(enq == before + 1);
	}
	json_decref(root);
}

/* ---- mouse odds (KEP-1040 "Probability of Collisions") ----------------------------------------------------- */

static void assert_rel(double got, double want, double tol)
{
	double rel = want == 0 ? fabs(got) : fabs(got - want) / fabs(want);

	if (!(rel < tol))
		fail_msg("got %.17g, want %.17g (relative error %.3g)", got, want, rel);
}

static void test_mouse_odds_vectors(void **state)
{
	json_t *root = load_vectors("apf.json");
	json_t *table = json_object_get(json_object_get(root, "mouseOdds"), "table"), *row;
	static const uint32_t ks[3] = { 1, 4, 16 };
	static const char *const keys[3] = { "P1", "P4", "P16" };
	size_t idx;

	(void)state;
	assert_true(json_array_size(table) >= 3);
	json_array_foreach(table, idx, row) {
		uint32_t n = (uint32_t)json_integer_value(json_object_get(row, "queues"));
		uint32_t h = (uint32_t)json_integer_value(json_object_get(row, "handSize"));
		json_t *ref = json_object_get(row, "reference");

		for (int i = 0; i < 3; i++) {
			double got = sl_shuffle_mouse_odds(n, h, ks[i]);

			assert_rel(got, json_number_value(json_object_get(row, keys[i])), 1e-12);
			if (ref)
				assert_rel(got, json_number_value(json_array_get(ref, i)), 1e-12);
		}
	}
	json_decref(root);
}

static void test_mouse_odds_reference_rows(void **state)
{
	(void)state;
	assert_rel(sl_shuffle_mouse_odds(32, 12, 1), 4.428838398950118e-09, 1e-12);
	assert_rel(sl_shuffle_mouse_odds(32, 12, 1), 1.0 / 225792840.0, 1e-15);
	assert_rel(sl_shuffle_mouse_odds(32, 12, 4), 0.11431348830099144, 1e-12);
	assert_rel(sl_shuffle_mouse_odds(32, 12, 16), 0.9935089607656024, 1e-12);
	/* Exact rational values (Python fractions), correctly rounded. */
	assert_rel(sl_shuffle_mouse_odds(6, 5, 2), 31.0 / 36.0, 1e-15);
	assert_rel(sl_shuffle_mouse_odds(128, 8, 30), 0.28396927242606484, 1e-15);
	assert_rel(sl_shuffle_mouse_odds(10, 3, 5), 0.5600772883310828, 1e-15);
	assert_rel(sl_shuffle_mouse_odds(100, 15, 40), 0.9776848954133716, 1e-15);
	assert_rel(sl_shuffle_mouse_odds(64, 8, 16), 0.35935114681123076, 1e-15);
	assert_rel(sl_shuffle_mouse_odds(1024, 6, 16), 4.517408062903667e-07, 1e-15);
}

/* Brute force over every mouse and elephant hand of a tiny deck. */
static void test_mouse_odds_exhaustive(void **state)
{
	enum { N = 6, H = 2, K = 3 };
	unsigned subsets[64], ns = 0;
	unsigned long covered = 0, total = 0;

	(void)state;
	for (unsigned s = 0; s < (1u << N); s++)
		if (__builtin_popcount(s) == H)
			subsets[ns++] = s;
	assert_int_equal(ns, 15);
	for (unsigned a = 0; a < ns; a++)
		for (unsigned b = 0; b < ns; b++)
			for (unsigned c = 0; c < ns; c++) {
				unsigned u = subsets[a] | subsets[b] | subsets[c];

				for (unsigned m = 0; m < ns; m++) {
					total++;
					covered += (subsets[m] & ~u) == 0;
				}
			}
	assert_rel(sl_shuffle_mouse_odds(N, H, K), (double)covered / (double)total, 1e-15);
}

static void test_mouse_odds_edges(void **state)
{
	double prev = 0;

	(void)state;
	assert_true(sl_shuffle_mouse_odds(10, 11, 1) < 0);
	assert_true(sl_shuffle_mouse_odds(10, 0, 1) < 0);
	assert_true(sl_shuffle_mouse_odds(10, 3, 0) < 0);
	assert_true(sl_shuffle_mouse_odds(0, 0, 1) < 0);
	assert_true(sl_shuffle_mouse_odds(10, 10, 1) == 1.0);
	assert_true(sl_shuffle_mouse_odds(1, 1, 5) == 1.0);
	assert_rel(sl_shuffle_mouse_odds(10, 1, 1), 0.1, 1e-15);
	/* Grows with the number of elephants, towards 1. */
	for (uint32_t k = 1; k <= 200; k++) {
		double p = sl_shuffle_mouse_odds(64, 8, k);

		assert_true(p >= prev && p <= 1.0);
		prev = p;
	}
	assert_true(prev > 0.999999);
	assert_true(sl_shuffle_mouse_odds(64, 8, 100000) == 1.0);
	/* Large decks stay finite and tiny. */
	double big = sl_shuffle_mouse_odds(1u << 26, 2, 16);
	assert_true(big > 0 && big < 1e-12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deal_vectors),
		cmocka_unit_test(test_deal_spec_examples),
		cmocka_unit_test(test_deal_invalid),
		cmocka_unit_test(test_deal_matches_kep_and_is_distinct),
		cmocka_unit_test(test_deal_uniform),
		cmocka_unit_test(test_deal_uniform_upstream_64_3),
		cmocka_unit_test(test_entropy_bits),
		cmocka_unit_test(test_validation_vectors),
		cmocka_unit_test(test_validation_messages),
		cmocka_unit_test(test_queue_pick_vectors),
		cmocka_unit_test(test_mouse_odds_vectors),
		cmocka_unit_test(test_mouse_odds_reference_rows),
		cmocka_unit_test(test_mouse_odds_exhaustive),
		cmocka_unit_test(test_mouse_odds_edges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
