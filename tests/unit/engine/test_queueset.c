// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Unit tests for the fair-queuing engine (Kubernetes queueset.go):
 * the queueSetScenarios S1/S3 and shuffleSharding.queuePick vectors of
 * tests/vectors/apf.json run through the real engine, one focused test per
 * rule of Kubernetes queueset.go, and a randomized property test. */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "vectors.h"
#include <jansson.h>

#include "engine/queueset.h"
#include "lib/shuffle.h"

/* Most configurations here are APF's four fields, positionally: the
 * controlled-delay fields after them stay 0 (off). */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define MS 1000000ull
#define SEC 1000000000ull
#define G3 (3 * MS)     /* Kubernetes' G */
#define W1 300000ull    /* totalWork of a 1-seat request with G = 3 ms */

/* ---- harness -------------------------------------------------------------------- */

#define MAX_REC 4096

struct h {
	struct sl_qs *qs;
	uint64_t disp[MAX_REC]; /* ids sl_qs_next_dispatch gave, in order */
	uint64_t disp_now[MAX_REC];
	size_t nd;
	uint64_t expired[MAX_REC];
	size_t ne;
	bool check_in_cb;        /* run sl_qs_check as each dispatch is taken */
	bool complete_in_cb;     /* complete each dispatched request at once */
	/* What taking a dispatch does (NULL: on_dispatch's record). */
	void (*start)(void *ctx, uint64_t id, uint64_t now);
	void *start_ctx;
};

static void assert_ok(const struct sl_qs *qs)
{
	char why[256];

	if (sl_qs_check(qs, why, sizeof(why)))
		fail_msg("invariant: %s", why);
}

static void on_dispatch(void *ctx, uint64_t id, uint64_t now)
{
	struct h *h = ctx;

	assert_true(h->nd < MAX_REC);
	h->disp[h->nd] = id;
	h->disp_now[h->nd] = now;
	h->nd++;
	if (h->check_in_cb)
		assert_ok(h->qs);
	if (h->complete_in_cb)
		assert_int_equal(sl_qs_complete(h->qs, now, id, 0), 0);
}

/* Take what the last operation dispatched, as the daemon does at each
 * call site (admission.c start_dispatched). */
static void take(struct h *h)
{
	uint64_t id, at;

	while (sl_qs_next_dispatch(h->qs, &id, &at)) {
		if (h->start)
			h->start(h->start_ctx, id, at);
		else
			on_dispatch(h, id, at);
	}
}

/* The operations that may dispatch, each followed by take(). */
static void set_cl(struct h *h, uint64_t now, uint32_t cl)
{
	sl_qs_set_cl(h->qs, now, cl);
	take(h);
}

static int set_config(struct h *h, uint64_t now, const struct sl_qs_config *c, char *why, size_t len)
{
	int rc = sl_qs_set_config(h->qs, now, c, why, len);

	take(h);
	return rc;
}

static int cancel(struct h *h, uint64_t now, uint64_t id)
{
	int rc = sl_qs_cancel(h->qs, now, id);

	take(h);
	return rc;
}

static int withdraw(struct h *h, uint64_t now, uint64_t id)
{
	int rc = sl_qs_withdraw(h->qs, now, id);

	take(h);
	return rc;
}

static size_t expire(struct h *h, uint64_t now, uint64_t limit, sl_qs_expired_fn fn, void *ctx)
{
	size_t n = sl_qs_expire(h->qs, now, limit, fn, ctx);

	take(h);
	return n;
}

static size_t shed(struct h *h, uint64_t now, sl_qs_expired_fn fn, void *ctx)
{
	size_t n = sl_qs_shed(h->qs, now, fn, ctx);

	take(h);
	return n;
}

static size_t shed_flows(struct h *h, uint64_t now, sl_qs_flow_pick_fn pick, void *pick_ctx,
			 sl_qs_expired_fn fn, void *ctx)
{
	size_t n = sl_qs_shed_flows(h->qs, now, pick, pick_ctx, fn, ctx);

	take(h);
	return n;
}

static void on_expired(void *ctx, uint64_t id)
{
	struct h *h = ctx;

	assert_true(h->ne < MAX_REC);
	h->expired[h->ne++] = id;
}

static struct h *mk(int32_t queues, uint32_t hand, uint32_t limit, uint64_t g, uint32_t cl)
{
	struct sl_qs_config cfg = { queues, hand, limit, g };
	struct h *h = calloc(1, sizeof(*h));
	char why[128];

	assert_non_null(h);
	if (sl_qs_create(&h->qs, &cfg, cl, 0, why, sizeof(why)))
		fail_msg("create: %s", why);
	assert_ok(h->qs);
	return h;
}

static void done(struct h *h)
{
	assert_ok(h->qs);
	sl_qs_free(h->qs);
	free(h);
}

static struct sl_qs_stats stats(const struct sl_qs *qs)
{
	struct sl_qs_stats st;

	sl_qs_get_stats(qs, &st);
	return st;
}

static struct sl_qs_queue_info qinfo(const struct sl_qs *qs, uint32_t i)
{
	struct sl_qs_queue_info qi;

	assert_int_equal(sl_qs_queue_info(qs, i, &qi), 0);
	return qi;
}

static struct sl_qs_req_info rinfo(const struct sl_qs *qs, uint64_t id)
{
	struct sl_qs_req_info ri;

	assert_int_equal(sl_qs_lookup(qs, id, &ri), 0);
	return ri;
}

static int arrive(struct h *h, uint64_t now, uint64_t id, uint32_t seats, uint64_t hash)
{
	int rc = sl_qs_arrive(h->qs, now, id, seats, hash);

	assert_true(rc >= 0);
	assert_ok(h->qs);
	take(h);
	return rc;
}

static void complete(struct h *h, uint64_t now, uint64_t id, uint64_t service)
{
	assert_int_equal(sl_qs_complete(h->qs, now, id, service), 0);
	assert_ok(h->qs);
	take(h);
}

/* ---- units (Kubernetes request/seat_seconds.go) ---------------------------------------------------------------- */

static void test_units(void **state)
{
	char buf[64];

	(void)state;
	assert_true(sl_seatsec_from_seats_ns(1, G3) == W1);
	assert_true(sl_seatsec_from_seats_ns(2, G3) == 2 * W1);
	assert_true(sl_seatsec_from_seats_ns(1, 10 * MS) == 1000000);
	assert_true(sl_seatsec_from_seats_ns(1, 4) == 0);  /* 0.4 */
	assert_true(sl_seatsec_from_seats_ns(1, 5) == 1);  /* 0.5 rounds away from zero */
	assert_true(sl_seatsec_from_seats_ns(3, 5) == 2); /* 1.5 */
	assert_true(sl_seatsec_from_seats_ns(1, SEC) == SL_SS_PER_SEAT_SECOND);
	assert_true(sl_seatsec_from_seats_ns(UINT64_MAX, UINT64_MAX) == UINT64_MAX);
	assert_true(sl_seatsec_per_seat_ns(W1, 1) == G3);
	assert_true(sl_seatsec_per_seat_ns(W1, 2) == 1500000);
	assert_true(sl_seatsec_per_seat_ns(7, 3) == 23); /* trunc(23.33) */
	assert_true(sl_seatsec_per_seat_ns(1, 0) == UINT64_MAX);
	sl_seatsec_format(W1, buf, sizeof(buf));
	assert_string_equal(buf, "0.00300000ss");
	sl_seatsec_format(123 * SL_SS_PER_SEAT_SECOND + 45, buf, sizeof(buf));
	assert_string_equal(buf, "123.00000045ss");
}

static void test_config_validate(void **state)
{
	char why[160];
	struct sl_qs_config c = { 64, 8, 50, G3 };
	struct sl_qs *qs;

	(void)state;
	assert_int_equal(sl_qs_config_validate(&c, why, sizeof(why)), 0);
	c.hand_size = 9; /* 9 × 6 = 54 bits: fine */
	assert_int_equal(sl_qs_config_validate(&c, why, sizeof(why)), 0);
	c.queues = 512;  /* 512/9: 81 bits */
	assert_int_equal(sl_qs_config_validate(&c, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "entropy"));
	c = (struct sl_qs_config){ 4, 5, 50, G3 };
	assert_int_equal(sl_qs_config_validate(&c, why, sizeof(why)), -EINVAL);
	c = (struct sl_qs_config){ 4, 2, 0, G3 };
	assert_int_equal(sl_qs_config_validate(&c, why, sizeof(why)), -EINVAL);
	c = (struct sl_qs_config){ 1, 2, 5, G3 };
	assert_int_equal(sl_qs_config_validate(&c, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "single queue"));
	c = (struct sl_qs_config){ 1, 1, 5, 0 };
	assert_int_equal(sl_qs_config_validate(&c, why, sizeof(why)), -EINVAL);
	c = (struct sl_qs_config){ 1, 1, 5, SL_QS_MAX_GUESS_NS + 1 };
	assert_int_equal(sl_qs_config_validate(&c, why, sizeof(why)), -EINVAL);
	c = (struct sl_qs_config){ -2, 1, 5, G3 };
	assert_int_equal(sl_qs_config_validate(&c, why, sizeof(why)), -EINVAL);
	c = (struct sl_qs_config){ 10000001, 1, 5, G3 };
	assert_int_equal(sl_qs_config_validate(&c, why, sizeof(why)), -EINVAL);
	/* Exempt and Reject ignore the queuing parameters. */
	c = (struct sl_qs_config){ SL_QS_EXEMPT, 0, 0, G3 };
	assert_int_equal(sl_qs_config_validate(&c, why, sizeof(why)), 0);
	c = (struct sl_qs_config){ SL_QS_REJECT, 99, 0, G3 };
	assert_int_equal(sl_qs_config_validate(&c, why, sizeof(why)), 0);
	assert_int_equal(sl_qs_config_validate(NULL, why, sizeof(why)), -EINVAL);
	c = (struct sl_qs_config){ 4, 5, 50, G3 };
	assert_int_equal(sl_qs_create(&qs, &c, 1, 0, why, sizeof(why)), -EINVAL);
	assert_null(qs);
}

/* ---- vectors: queueSetScenarios ---------------------------------------------------- */

struct scen_req {
	const char *name;
	uint64_t hash;
	uint32_t seats;
	uint64_t at, dur;
};

struct scen {
	struct h *h;
	const struct scen_req *reqs;
	size_t n;
	int64_t start[16];      /* -1: not started */
	bool finished[16];
	json_t *log;
	json_t *cb_rows;        /* dispatch rows produced by callbacks */
	uint64_t cb_before[16]; /* nextDispatchR before adding, by dispatch order */
	int64_t cb_queue[16];
	size_t ncb;
};

static json_t *dispatch_row(struct scen *s, uint64_t now, uint64_t id, uint64_t *before, int64_t *qidx)
{
	struct sl_qs_req_info ri = rinfo(s->h->qs, id);
	struct sl_qs_queue_info qi = qinfo(s->h->qs, (uint32_t)ri.queue);

	assert_true(ri.executing && ri.queue >= 0);
	*before = qi.next_dispatch_r - ri.work;
	*qidx = ri.queue;
	return json_pack("[I, s, s, I, I, I]", (json_int_t)now, s->reqs[id].name, "dispatch",
			 (json_int_t)ri.queue, (json_int_t)stats(s->h->qs).r, (json_int_t)*before);
}

static void scen_dispatch_cb(void *ctx, uint64_t id, uint64_t now)
{
	struct scen *s = ctx;

	assert_true(s->ncb < 16);
	json_array_append_new(s->cb_rows, dispatch_row(s, now, id, &s->cb_before[s->ncb],
						       &s->cb_queue[s->ncb]));
	s->ncb++;
	s->start[id] = (int64_t)now;
}

static void compare_logs(json_t *want, json_t *got, const char *scenario)
{
	size_t i;

	for (i = 0; i < json_array_size(want) && i < json_array_size(got); i++) {
		json_t *w = json_array_get(want, i), *g = json_array_get(got, i);

		if (!json_equal(w, g)) {
			char *ws = json_dumps(w, JSON_COMPACT), *gs = json_dumps(g, JSON_COMPACT);

			print_error("%s row %zu: want %s, got %s\n", scenario, i, ws, gs);
			free(ws);
			free(gs);
			fail();
		}
	}
	assert_int_equal(json_array_size(got), json_array_size(want));
}

static void run_scenario(const char *key, const struct scen_req *reqs, size_t n)
{
	json_t *root = load_vectors("apf.json");
	json_t *sc = json_object_get(json_object_get(root, "queueSetScenarios"), key);
	json_t *cfgj = json_object_get(sc, "config");
	struct sl_qs_config cfg = {
		(int32_t)json_integer_value(json_object_get(cfgj, "queues")),
		(uint32_t)json_integer_value(json_object_get(cfgj, "handSize")),
		(uint32_t)json_integer_value(json_object_get(cfgj, "queueLengthLimit")),
		G3,
	};
	uint32_t cl = (uint32_t)json_integer_value(json_object_get(cfgj, "concurrencyLimit"));
	struct scen s = { .reqs = reqs, .n = n, .log = json_array() };
	struct h hh = { 0 };
	char why[128];

	assert_non_null(sc);
	assert_true(n <= 16);
	s.h = &hh;
	hh.start = scen_dispatch_cb;
	hh.start_ctx = &s;
	if (sl_qs_create(&hh.qs, &cfg, cl, 0, why, sizeof(why)))
		fail_msg("%s", why);
	for (size_t i = 0; i < n; i++)
		s.start[i] = -1;
	/* Arrivals (all given in time order), interleaved with completions. */
	for (size_t next = 0;;) {
		uint64_t t_arr = next < n ? reqs[next].at : UINT64_MAX, t_fin = UINT64_MAX;
		size_t fin = n;

		for (size_t i = 0; i < n; i++)
			if (s.start[i] >= 0 && !s.finished[i] && (uint64_t)s.start[i] + reqs[i].dur < t_fin) {
				t_fin = (uint64_t)s.start[i] + reqs[i].dur;
				fin = i;
			}
		if (next >= n && fin == n)
			break;
		s.cb_rows = json_array();
		s.ncb = 0;
		if (t_arr <= t_fin) {
			const struct scen_req *r = &reqs[next];
			int rc = arrive(&hh, r->at, next, r->seats, r->hash);

			if (rc == SL_QS_REJECT_QUEUE_FULL) {
				assert_int_equal(sl_qs_queue_count(hh.qs), 1); /* queue index observable */
				json_array_append_new(s.log, json_pack("[I, s, s, I]", (json_int_t)r->at,
								       r->name, "reject queue-full", 0));
			} else {
				struct sl_qs_req_info ri = rinfo(hh.qs, next);
				uint64_t before;
				int64_t q;

				assert_true(rc == SL_QS_QUEUED || rc == SL_QS_DISPATCHED);
				json_array_append_new(s.log, json_pack("[I, s, s, I, I]", (json_int_t)r->at,
								       r->name, "enqueue", (json_int_t)ri.queue,
								       (json_int_t)stats(hh.qs).r));
				if (rc == SL_QS_DISPATCHED) {
					json_array_append_new(s.log, dispatch_row(&s, r->at, next, &before, &q));
					s.start[next] = (int64_t)r->at;
				}
			}
			next++;
		} else {
			int64_t q = rinfo(hh.qs, fin).queue;
			uint64_t ndr;

			complete(&hh, t_fin, fin, reqs[fin].dur);
			s.finished[fin] = true;
			/* nextDispatchR right after the correction: before any
			 * dispatch from the same queue in this call */
			ndr = qinfo(hh.qs, (uint32_t)q).next_dispatch_r;
			for (size_t k = 0; k < s.ncb; k++)
				if (s.cb_queue[k] == q) {
					ndr = s.cb_before[k];
					break;
				}
			json_array_append_new(s.log, json_pack("[I, s, s, I, I, I]", (json_int_t)t_fin,
							       reqs[fin].name, "finish", (json_int_t)q,
							       (json_int_t)stats(hh.qs).r, (json_int_t)ndr));
		}
		json_array_extend(s.log, s.cb_rows);
		json_decref(s.cb_rows);
	}
	compare_logs(json_object_get(sc, "log"), s.log, key);
	assert_true(sl_qs_seats_in_use(hh.qs) == 0 && sl_qs_waiting(hh.qs) == 0);
	assert_ok(hh.qs);
	sl_qs_free(hh.qs);
	json_decref(s.log);
	json_decref(root);
}

static void test_vector_s1(void **state)
{
	/* "A1..A4 hash 0 (queue 0) and B1 hash 1 (queue 1) all arrive at t=0 in
	 * that order, 1 seat, 10 ms each" */
	static const struct scen_req reqs[] = {
		{ "A1", 0, 1, 0, 10 * MS }, { "A2", 0, 1, 0, 10 * MS }, { "A3", 0, 1, 0, 10 * MS },
		{ "A4", 0, 1, 0, 10 * MS }, { "B1", 1, 1, 0, 10 * MS },
	};
	json_t *root = load_vectors("apf.json"), *order, *x;
	size_t i;

	(void)state;
	run_scenario("S1_mouse_vs_elephant", reqs, 5);
	/* and the order, from the callbacks of a plain run */
	order = json_object_get(json_object_get(json_object_get(root, "queueSetScenarios"),
						"S1_mouse_vs_elephant"), "expectedDispatchOrder");
	{
		struct h *h = mk(2, 1, 50, G3, 1);
		const char *got[5];
		size_t n = 0;

		for (i = 0; i < 5; i++)
			if (arrive(h, 0, i, 1, reqs[i].hash) == SL_QS_DISPATCHED)
				got[n++] = reqs[i].name;
		for (uint64_t t = 10 * MS; n < 5; t += 10 * MS) {
			size_t before = h->nd;

			for (i = 0; i < 5; i++) {
				struct sl_qs_req_info ri;

				if (!sl_qs_lookup(h->qs, i, &ri) && ri.executing) {
					complete(h, t, i, 10 * MS);
					break;
				}
			}
			for (size_t k = before; k < h->nd; k++)
				got[n++] = reqs[h->disp[k]].name;
		}
		json_array_foreach(order, i, x)
			assert_string_equal(got[i], json_string_value(x));
		done(h);
	}
	json_decref(root);
}

static void test_vector_s3(void **state)
{
	static const struct scen_req reqs[] = {
		{ "A1", 0, 1, 0, 10 * MS }, { "A2", 0, 1, 0, 10 * MS }, { "A3", 0, 1, 0, 10 * MS },
		{ "A4", 0, 1, 0, 10 * MS }, { "A5", 0, 1, 0, 10 * MS },
	};

	(void)state;
	run_scenario("S3_queue_full", reqs, 5);
}

/* ---- vectors: shuffleSharding.queuePick through the engine ---------------------- */

static uint64_t gcd64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* The hash value whose hand (deck, n) is exactly `hand` (inverse of Kubernetes shufflesharding.go DealIntoHand). */
static uint64_t hash_for_hand(uint32_t deck, const uint32_t *hand, uint32_t n)
{
	uint64_t v = 0, mult = 1;
	uint32_t got[SL_SHUFFLE_MAX_HAND];

	for (uint32_t i = 0; i < n; i++) {
		uint32_t d = hand[i];

		for (uint32_t j = 0; j < i; j++)
			d -= hand[j] < hand[i];
		v += d * mult;
		mult *= deck - i;
	}
	assert_int_equal(sl_shuffle_deal(deck, n, v, got), 0);
	assert_memory_equal(got, hand, n * sizeof(*hand));
	return v;
}

static void test_vector_queue_pick(void **state)
{
	json_t *root = load_vectors("apf.json");
	json_t *vec = json_object_get(json_object_get(json_object_get(root, "shuffleSharding"),
						      "queuePick"), "vectors"), *row;
	size_t idx;

	(void)state;
	assert_true(json_array_size(vec) >= 5);
	json_array_foreach(vec, idx, row) {
		json_t *jh = json_object_get(row, "hand"), *works = json_object_get(row, "waitingTotalWorkByQueue"), *x;
		uint64_t enq = (uint64_t)json_integer_value(json_object_get(row, "enqueueCounterBefore"));
		uint32_t hand[SL_SHUFFLE_MAX_HAND], n = (uint32_t)json_array_size(jh), deck = 0;
		uint64_t g = 0, work[64] = { 0 }, id = 1000;
		const char *key;
		size_t i;
		struct h *h;

		json_array_foreach(jh, i, x) {
			hand[i] = (uint32_t)json_integer_value(x);
			assert_true(hand[i] < 64);
			if (hand[i] + 1 > deck)
				deck = hand[i] + 1;
		}
		if (deck < 2)
			deck = 2;
		json_object_foreach(works, key, x) {
			work[atoi(key)] = (uint64_t)json_integer_value(x);
			g = gcd64(g, work[atoi(key)]);
		}
		/* Waiting work w = seats × G / 10: choose G = 10 × gcd. */
		if (!g)
			g = W1;
		/* CL 0: nothing is dispatched; hand size 1 first to place the
		 * waiting requests (hash q deals queue q). */
		h = mk((int32_t)deck, 1, 100, 10 * g, 0);
		for (uint32_t q = 0; q < deck; q++) {
			if (!work[q])
				continue;
			assert_int_equal(arrive(h, 0, id, (uint32_t)(work[q] / g), q), SL_QS_QUEUED);
			assert_int_equal(rinfo(h->qs, id).queue, (int32_t)q);
			id++;
		}
		for (uint32_t q = 0; q < deck; q++)
			assert_true(qinfo(h->qs, q).total_work_sum == work[q]);
		{
			struct sl_qs_config c = { (int32_t)deck, n, 100, 10 * g };

			assert_int_equal(set_config(h, 0, &c, NULL, 0), 0);
		}
		sl_qs_test_set_enqueues(h->qs, enq);
		assert_int_equal(arrive(h, 0, 1, 1, hash_for_hand(deck, hand, n)), SL_QS_QUEUED);
		assert_int_equal(rinfo(h->qs, 1).queue, json_integer_value(json_object_get(row, "chosenQueue")));
		assert_true(stats(h->qs).enqueues == enq + 1);
		done(h);
	}
	json_decref(root);
}

/* Every arrival bumps the counter, so equal queues are taken in turn. */
static void test_queue_pick_rotates(void **state)
{
	static const uint32_t hand[4] = { 5, 9, 2, 7 };
	struct h *h = mk(10, 4, 100, G3, 0);
	uint64_t v = hash_for_hand(10, hand, 4);

	(void)state;
	/* CL 0 keeps them waiting; each new one goes to the least loaded queue,
	 * the first visited from offset enqueues mod 4 on a tie. */
	for (uint64_t i = 0; i < 4; i++)
		assert_int_equal(arrive(h, 0, i, 1, v), SL_QS_QUEUED);
	assert_int_equal(rinfo(h->qs, 0).queue, 5);
	assert_int_equal(rinfo(h->qs, 1).queue, 9);
	assert_int_equal(rinfo(h->qs, 2).queue, 2);
	assert_int_equal(rinfo(h->qs, 3).queue, 7);
	/* Executing requests do not count: only waiting work does. */
	set_cl(h, 0, 100);
	assert_int_equal(h->nd, 4);
	set_cl(h, 0, 0);
	assert_int_equal(arrive(h, 0, 10, 1, v), SL_QS_QUEUED);
	assert_int_equal(rinfo(h->qs, 10).queue, 5); /* enqueues = 4: offset 0 */
	/* offset 1 visits 9 first: empty, so 9 (5 now holds waiting work) */
	assert_int_equal(arrive(h, 0, 11, 3, v), SL_QS_QUEUED);
	assert_int_equal(rinfo(h->qs, 11).queue, 9);
	/* offset 2 visits 2 first: empty */
	assert_int_equal(arrive(h, 0, 12, 1, v), SL_QS_QUEUED);
	assert_int_equal(rinfo(h->qs, 12).queue, 2);
	/* offset 3: 7 (0), 5 (W1), 9 (3 W1), 2 (W1) → 7; offset 0 next: 5 vs
	 * 7 vs 2 all W1, 9 more → 5 (the first visited among equals) */
	assert_int_equal(arrive(h, 0, 13, 1, v), SL_QS_QUEUED);
	assert_int_equal(rinfo(h->qs, 13).queue, 7);
	assert_int_equal(arrive(h, 0, 14, 1, v), SL_QS_QUEUED);
	assert_int_equal(rinfo(h->qs, 14).queue, 5);
	done(h);
}

/* ---- Kubernetes queueset.go rejectOrEnqueueToBoundLocked arrival ----------------------------------------------------------------- */

static void test_queue_full_only_when_seats_all_in_use(void **state)
{
	struct h *h = mk(1, 1, 1, G3, 4);
	struct sl_qs_stats st;

	(void)state;
	assert_int_equal(arrive(h, 0, 1, 3, 0), SL_QS_DISPATCHED); /* 3 of 4 seats */
	assert_int_equal(arrive(h, 0, 2, 2, 0), SL_QS_QUEUED);     /* 2 does not fit */
	/* The queue is at its limit, but a seat is free: enqueued anyway. */
	assert_int_equal(arrive(h, 0, 3, 1, 0), SL_QS_QUEUED);
	assert_int_equal(qinfo(h->qs, 0).waiting, 2);
	assert_true(stats(h->qs).rejected_queue_full == 0);
	complete(h, 1 * MS, 1, 1 * MS);
	assert_int_equal(h->nd, 2); /* 2 and 3: 2 + 1 <= 4 */
	assert_true(h->disp[0] == 2 && h->disp[1] == 3);
	assert_int_equal(arrive(h, 1 * MS, 4, 1, 0), SL_QS_DISPATCHED);
	st = stats(h->qs);
	assert_true(st.seats_in_use == 4);
	/* All seats in use: the queue limit applies */
	assert_int_equal(arrive(h, 1 * MS, 5, 1, 0), SL_QS_QUEUED);
	assert_int_equal(arrive(h, 1 * MS, 6, 1, 0), SL_QS_REJECT_QUEUE_FULL);
	assert_true(stats(h->qs).rejected_queue_full == 1);
	complete(h, 2 * MS, 4, 1 * MS);
	assert_true(h->nd == 3 && h->disp[2] == 5);
	done(h);
}

static void test_queue_full_newest_rejected(void **state)
{
	struct h *h = mk(1, 1, 1, G3, 3);
	struct sl_qs_req_info ri;

	(void)state;
	assert_int_equal(arrive(h, 0, 1, 3, 0), SL_QS_DISPATCHED); /* all 3 seats */
	assert_int_equal(arrive(h, 0, 2, 1, 0), SL_QS_QUEUED);
	assert_int_equal(arrive(h, 0, 3, 1, 0), SL_QS_REJECT_QUEUE_FULL);
	assert_int_equal(arrive(h, 0, 4, 1, 0), SL_QS_REJECT_QUEUE_FULL);
	assert_int_equal(sl_qs_lookup(h->qs, 2, &ri), 0);
	assert_int_equal(ri.position, 0);
	assert_int_equal(sl_qs_lookup(h->qs, 3, &ri), -ENOENT); /* not tracked */
	assert_true(stats(h->qs).rejected_queue_full == 2);
	/* a rejected id may be reused */
	complete(h, MS, 1, MS);
	assert_int_equal(arrive(h, MS, 3, 1, 0), SL_QS_DISPATCHED);
	done(h);
}

static void test_arrival_errors(void **state)
{
	struct h *h = mk(2, 1, 5, G3, 0);
	struct sl_qs_stats st;

	(void)state;
	assert_int_equal(sl_qs_arrive(h->qs, 0, 1, 0, 0), -EINVAL);
	assert_int_equal(sl_qs_arrive(h->qs, 0, 1, SL_QS_MAX_SEATS + 1, 0), -EINVAL);
	assert_int_equal(arrive(h, 0, 1, 1, 0), SL_QS_QUEUED);
	assert_int_equal(sl_qs_arrive(h->qs, 0, 1, 1, 1), -EEXIST);
	st = stats(h->qs);
	assert_true(st.enqueues == 1 && st.waiting == 1);
	assert_int_equal(sl_qs_complete(h->qs, 0, 1, 0), -EBUSY);
	assert_int_equal(sl_qs_complete(h->qs, 0, 2, 0), -ENOENT);
	assert_int_equal(cancel(h, 0, 2), -ENOENT);
	set_cl(h, 0, 1);
	assert_int_equal(cancel(h, 0, 1), -EALREADY);
	complete(h, 0, 1, 0);
	done(h);
}

/* ---- Kubernetes queueset.go boundNextDispatchLocked anti-windup -------------------------------------------------------------- */

static void test_anti_windup_on_arrival(void **state)
{
	struct h *h = mk(2, 1, 50, G3, 2);

	(void)state;
	assert_int_equal(arrive(h, 0, 1, 1, 0), SL_QS_DISPATCHED); /* q0 */
	assert_int_equal(arrive(h, 0, 2, 1, 1), SL_QS_DISPATCHED); /* q1 */
	assert_true(qinfo(h->qs, 0).next_dispatch_r == W1);
	/* 1 s at rate min(2, 2) / 2 = 1 seat per queue: R = 1e8 */
	complete(h, SEC, 2, SEC);
	assert_true(stats(h->qs).r == SL_SS_PER_SEAT_SECOND);
	/* q0 is busy (not reset at arrival) and lags: the 2-seat arrival waits
	 * and lifts q0's nextDispatchR to its arrivalR. */
	assert_int_equal(arrive(h, SEC, 3, 2, 0), SL_QS_QUEUED);
	assert_true(qinfo(h->qs, 0).next_dispatch_r == SL_SS_PER_SEAT_SECOND);
	complete(h, 2 * SEC, 1, 2 * SEC);
	assert_int_equal(h->nd, 1);
	complete(h, 2 * SEC, 3, G3);
	done(h);
}

static void test_anti_windup_on_cancel(void **state)
{
	struct h *h = mk(1, 1, 50, G3, 1);

	(void)state;
	assert_int_equal(arrive(h, 0, 1, 1, 0), SL_QS_DISPATCHED);
	assert_int_equal(arrive(h, 0, 2, 1, 0), SL_QS_QUEUED); /* arrivalR 0 */
	/* demand 2, CL 1, one queue: R advances 1e8 per second */
	assert_int_equal(arrive(h, SEC, 3, 1, 0), SL_QS_QUEUED); /* arrivalR 1e8 */
	assert_true(qinfo(h->qs, 0).next_dispatch_r == W1);
	assert_int_equal(cancel(h, SEC, 2), 0);
	assert_ok(h->qs);
	assert_true(qinfo(h->qs, 0).next_dispatch_r == SL_SS_PER_SEAT_SECOND);
	assert_true(stats(h->qs).rejected_time_out == 1);
	assert_int_equal(h->nd, 0);
	complete(h, 2 * SEC, 1, 2 * SEC);
	assert_true(h->nd == 1 && h->disp[0] == 3);
	complete(h, 3 * SEC, 3, SEC);
	done(h);
}

/* A withdrawal (the request goes back to its policy's queue) leaves like
 * a cancel (anti-windup, the next one dispatches) but is no refusal. */
static void test_withdraw_is_no_refusal(void **state)
{
	struct h *h = mk(1, 1, 50, G3, 1);

	(void)state;
	assert_int_equal(arrive(h, 0, 1, 1, 0), SL_QS_DISPATCHED);
	assert_int_equal(arrive(h, 0, 2, 1, 0), SL_QS_QUEUED);
	assert_int_equal(arrive(h, SEC, 3, 1, 0), SL_QS_QUEUED);
	assert_int_equal(withdraw(h, SEC, 2), 0);
	assert_ok(h->qs);
	assert_true(qinfo(h->qs, 0).next_dispatch_r == SL_SS_PER_SEAT_SECOND);
	assert_true(stats(h->qs).rejected_time_out == 0);
	assert_true(stats(h->qs).waiting == 1);
	assert_int_equal(withdraw(h, SEC, 2), -ENOENT);
	assert_int_equal(withdraw(h, SEC, 1), -EALREADY);
	complete(h, 2 * SEC, 1, 2 * SEC);
	assert_true(h->nd == 1 && h->disp[0] == 3);
	complete(h, 3 * SEC, 3, SEC);
	done(h);
}

/* ---- Kubernetes queueset.go finishRequestLocked completion ---------------------------------------------------------------- */

static uint64_t ndr_after(uint32_t seats, uint64_t service)
{
	struct h *h = mk(1, 1, 50, G3, 1000);
	uint64_t v;

	assert_int_equal(arrive(h, 0, 1, seats, 0), SL_QS_DISPATCHED);
	assert_true(qinfo(h->qs, 0).next_dispatch_r == seats * W1);
	complete(h, service == SL_QS_SERVICE_FROM_CLOCK ? 5 * MS : service, 1, service);
	v = qinfo(h->qs, 0).next_dispatch_r;
	done(h);
	return v;
}

static void test_completion_correction(void **state)
{
	(void)state;
	/* q.nextDispatchR −= InitialSeats × (G − S) */
	assert_true(ndr_after(1, G3) == W1);
	assert_true(ndr_after(1, 1 * MS) == W1 - 200000);       /* S < G: credit */
	assert_true(ndr_after(1, 5 * MS) == W1 + 200000);       /* S > G: charge */
	assert_true(ndr_after(2, 1 * MS) == 2 * W1 - 400000);
	assert_true(ndr_after(2, 10 * MS) == 2 * W1 + 1400000);
	assert_true(ndr_after(1, 0) == 0);
	assert_true(ndr_after(1, SL_QS_SERVICE_FROM_CLOCK) == W1 + 200000); /* 5 ms by clock */
	/* rounding half away from zero, both signs: 1.5 units */
	assert_true(ndr_after(1, G3 - 15) == W1 - 2);
	assert_true(ndr_after(1, G3 + 15) == W1 + 2);
	assert_true(ndr_after(1, G3 - 14) == W1 - 1);
	assert_true(ndr_after(1, G3 + 14) == W1 + 1);
	/* a very long connection saturates instead of wrapping */
	assert_true(ndr_after(SL_QS_MAX_SEATS, 1000000 * SEC) > ndr_after(1, 1000 * SEC));
}

/* The correction uses the G the request was charged with. */
static void test_completion_uses_own_guess(void **state)
{
	struct h *h = mk(1, 1, 50, G3, 10);
	struct sl_qs_config c = { 1, 1, 50, 10 * MS };

	(void)state;
	assert_int_equal(arrive(h, 0, 1, 1, 0), SL_QS_DISPATCHED);
	assert_int_equal(arrive(h, 0, 2, 1, 0), SL_QS_DISPATCHED);
	assert_int_equal(set_config(h, 0, &c, NULL, 0), 0);
	assert_int_equal(arrive(h, 0, 3, 1, 0), SL_QS_DISPATCHED);
	assert_true(rinfo(h->qs, 3).work == 1000000 && rinfo(h->qs, 1).work == W1);
	assert_true(qinfo(h->qs, 0).next_dispatch_r == 2 * W1 + 1000000);
	complete(h, 0, 1, G3); /* no correction */
	assert_true(qinfo(h->qs, 0).next_dispatch_r == 2 * W1 + 1000000);
	complete(h, 0, 3, 10 * MS);
	assert_true(qinfo(h->qs, 0).next_dispatch_r == 2 * W1 + 1000000);
	complete(h, 0, 2, G3);
	done(h);
}

/* Seats are released, the queue goes idle, a new arrival restarts at R. */
static void test_idle_queue_restarts_at_r(void **state)
{
	struct h *h = mk(2, 1, 50, G3, 1);

	(void)state;
	assert_int_equal(arrive(h, 0, 1, 1, 0), SL_QS_DISPATCHED);
	complete(h, 10 * MS, 1, 10 * MS);
	assert_true(stats(h->qs).r == 1000000); /* one active queue, 1 seat */
	assert_true(qinfo(h->qs, 0).next_dispatch_r == 1000000);
	assert_true(stats(h->qs).active_queues == 0);
	/* idle: R stands still */
	assert_int_equal(arrive(h, SEC, 2, 1, 0), SL_QS_DISPATCHED);
	assert_true(stats(h->qs).r == 1000000);
	assert_true(qinfo(h->qs, 0).next_dispatch_r == 1000000 + W1);
	complete(h, SEC + G3, 2, G3);
	done(h);
}

/* ---- Kubernetes queueset.go syncTimeLocked R meter -------------------------------------------------------------------- */

static void test_r_meter_rate(void **state)
{
	struct h *h = mk(4, 1, 50, G3, 3);

	(void)state;
	/* q0: 2 seats executing, q1: 1 executing + 4 waiting (demand 7, CL 3, NEQ 2) */
	assert_int_equal(arrive(h, 0, 1, 2, 0), SL_QS_DISPATCHED);
	assert_int_equal(arrive(h, 0, 2, 1, 1), SL_QS_DISPATCHED);
	assert_int_equal(arrive(h, 0, 3, 4, 1), SL_QS_QUEUED);
	set_cl(h, 7 * MS, 3); /* sync: 3/2 seats × 7 ms = 1,050,000 units */
	assert_true(stats(h->qs).r == 1050000);
	/* rate 3/2 over 1 ns = 0.15 units: rounds to 0, but each sync is exact
	 * for its own interval */
	set_cl(h, 7 * MS + 1, 3);
	assert_true(stats(h->qs).r == 1050000);
	set_cl(h, 7 * MS + 4, 3); /* 3 ns: 0.45 → 0 */
	assert_true(stats(h->qs).r == 1050000);
	set_cl(h, 7 * MS + 8, 3); /* 4 ns: 0.6 → 1 */
	assert_true(stats(h->qs).r == 1050001);
	/* demand below CL: rate = demand / NEQ */
	set_cl(h, 7 * MS + 8, 100); /* dispatches 3: demand 7 seats, NEQ 2 */
	assert_int_equal(h->nd, 1);
	set_cl(h, 8 * MS + 8, 100);
	assert_true(stats(h->qs).r == 1050001 + 350000);
	/* CL 0: R stands still */
	set_cl(h, 8 * MS + 8, 0);
	set_cl(h, 20 * MS, 0);
	assert_true(stats(h->qs).r == 1050001 + 350000);
	/* a clock reading from the past counts as the last one */
	set_cl(h, 1 * MS, 0);
	assert_true(stats(h->qs).last_ns == 20 * MS);
	complete(h, 20 * MS, 1, 0);
	complete(h, 20 * MS, 2, 0);
	complete(h, 20 * MS, 3, 0);
	done(h);
}

/* Epoch: S1 again with R just below ¾·2^64. */
static void test_epoch_advance(void **state)
{
	struct h *h = mk(2, 1, 50, G3, 1);
	const uint64_t r0 = SL_QS_EPOCH_HIGH_R - 1000, shift = r0 - SL_QS_EPOCH_DECREMENT;
	struct sl_qs_stats st;

	(void)state;
	assert_int_equal(sl_qs_test_set_r(h->qs, SL_QS_EPOCH_HIGH_R), -EINVAL);
	assert_int_equal(sl_qs_test_set_r(h->qs, r0), 0);
	assert_int_equal(arrive(h, 0, 1, 1, 0), SL_QS_DISPATCHED);
	assert_int_equal(sl_qs_test_set_r(h->qs, 0), -EBUSY);
	assert_int_equal(arrive(h, 0, 2, 1, 0), SL_QS_QUEUED);
	assert_int_equal(arrive(h, 0, 3, 1, 1), SL_QS_QUEUED);
	assert_true(qinfo(h->qs, 0).next_dispatch_r == r0 + W1);
	assert_true(qinfo(h->qs, 1).next_dispatch_r == r0);
	complete(h, 10 * MS, 1, 10 * MS);
	st = stats(h->qs);
	assert_true(st.epochs == 1 && st.epoch_failures == 0);
	assert_true(st.r == shift + 500000);
	/* Every reading moved by the same amount: B1 still goes first, and the
	 * values are S1's shifted by r0 - 2^63. */
	assert_true(h->nd == 1 && h->disp[0] == 3);
	assert_true(qinfo(h->qs, 0).next_dispatch_r == shift + 1000000);
	assert_true(qinfo(h->qs, 1).next_dispatch_r == shift + W1);
	complete(h, 20 * MS, 3, 10 * MS);
	assert_true(stats(h->qs).r == shift + 1000000);
	assert_true(h->nd == 2 && h->disp[1] == 2);
	complete(h, 30 * MS, 2, 10 * MS);
	assert_true(qinfo(h->qs, 0).next_dispatch_r == shift + 2000000);
	st = stats(h->qs);
	assert_true(st.epochs == 1 && st.seats_in_use == 0);
	done(h);
}

/* Epoch reached through the clock, with a stale reading that must clamp. */
static void test_epoch_clamps_stale_reading(void **state)
{
	struct h *h = mk(1, 1, 50, G3, UINT32_MAX);
	struct sl_qs_stats st;

	(void)state;
	/* 2^20 seats: the rate makes every huge step hit the 2^62 cap per sync */
	assert_int_equal(arrive(h, 0, 1, SL_QS_MAX_SEATS, 0), SL_QS_DISPATCHED);
	set_cl(h, 1000000000000000000ull, UINT32_MAX);
	set_cl(h, 2000000000000000000ull, UINT32_MAX);
	assert_true(stats(h->qs).r == 2 * (1ull << 62) && stats(h->qs).epochs == 0);
	set_cl(h, 3000000000000000000ull, UINT32_MAX);
	st = stats(h->qs);
	assert_true(st.epochs == 1 && st.epoch_failures == 1);
	assert_true(st.r == 1ull << 62);
	assert_true(qinfo(h->qs, 0).next_dispatch_r == 0);
	assert_ok(h->qs);
	complete(h, 3000000000000000000ull, 1, G3);
	done(h);
}

/* ---- Kubernetes queueset.go dispatchLocked dispatch loop ---------------------------------------------------------------- */

static void test_wide_head_waits(void **state)
{
	struct h *h = mk(2, 1, 50, G3, 4);
	struct sl_qs_stats st;

	(void)state;
	assert_int_equal(arrive(h, 0, 1, 2, 0), SL_QS_DISPATCHED); /* q0, F = 600000 */
	assert_int_equal(arrive(h, 0, 2, 3, 1), SL_QS_QUEUED);     /* q1: F = 900000, 2+3 > 4 */
	st = stats(h->qs);
	assert_true(st.no_accommodation == 1 && st.robin_index == 0);
	/* F = 600000 + 600000 > 900000: it would fit (2 + 2 <= 4) but may not
	 * overtake the wide head */
	assert_int_equal(arrive(h, 0, 3, 2, 0), SL_QS_QUEUED);
	assert_int_equal(arrive(h, 0, 4, 1, 0), SL_QS_QUEUED);
	st = stats(h->qs);
	assert_true(st.seats_in_use == 2 && st.waiting == 3 && st.no_accommodation == 3);
	assert_true(st.robin_index == 0); /* not moved by a failed dispatch */
	complete(h, 1 * MS, 1, G3); /* S = G: no correction */
	/* the wide one first; then 3 (2 seats) does not fit: 3 + 2 > 4 */
	assert_true(h->nd == 1 && h->disp[0] == 2);
	assert_true(stats(h->qs).robin_index == 1);
	assert_true(stats(h->qs).no_accommodation == 4);
	complete(h, 2 * MS, 2, G3);
	assert_true(h->nd == 3 && h->disp[1] == 3 && h->disp[2] == 4);
	complete(h, 3 * MS, 3, 1 * MS);
	complete(h, 3 * MS, 4, 1 * MS);
	assert_true(stats(h->qs).seats_in_use == 0);
	done(h);
}

/* Wider than CL: runs only when nothing executes. */
static void test_wider_than_cl(void **state)
{
	struct h *h = mk(2, 1, 50, G3, 2);

	(void)state;
	assert_int_equal(arrive(h, 0, 1, 1, 0), SL_QS_DISPATCHED);
	assert_int_equal(arrive(h, 0, 2, 5, 1), SL_QS_QUEUED);
	complete(h, MS, 1, MS);
	assert_true(h->nd == 1 && h->disp[0] == 2);
	assert_true(stats(h->qs).seats_in_use == 5); /* above CL, alone */
	assert_int_equal(arrive(h, MS, 3, 1, 0), SL_QS_QUEUED);
	complete(h, 2 * MS, 2, MS);
	assert_true(h->nd == 2 && h->disp[1] == 3);
	complete(h, 3 * MS, 3, MS);
	/* idle: dispatched at once */
	assert_int_equal(arrive(h, 3 * MS, 4, 3, 1), SL_QS_DISPATCHED);
	complete(h, 4 * MS, 4, MS);
	done(h);
}

/* Equal F: the queue after robinIndex wins; the winner moves robinIndex. */
static void test_round_robin_ties(void **state)
{
	struct h *h = mk(3, 1, 50, G3, 0);

	(void)state;
	for (uint64_t id = 0; id < 6; id++)
		assert_int_equal(arrive(h, 0, id, 1, id % 3), SL_QS_QUEUED);
	set_cl(h, 0, 1);
	/* robinIndex -1: queues 0, 1, 2 in turn */
	assert_true(h->nd == 1 && h->disp[0] == 0 && stats(h->qs).robin_index == 0);
	complete(h, 0, 0, G3);
	complete(h, 0, 1, G3);
	complete(h, 0, 2, G3);
	complete(h, 0, 3, G3);
	complete(h, 0, 4, G3);
	assert_int_equal(h->nd, 6);
	for (uint64_t i = 0; i < 6; i++)
		assert_true(h->disp[i] == i);
	complete(h, 0, 5, G3);
	done(h);
}

/* ---- Kubernetes queueset.go dispatchSansQueueLocked special modes ------------------------------------------------------------------ */

static void test_exempt(void **state)
{
	struct h *h = mk(SL_QS_EXEMPT, 0, 0, G3, 0);
	struct sl_qs_stats st;

	(void)state;
	for (uint64_t id = 0; id < 100; id++)
		assert_int_equal(arrive(h, id, id, 1 + (uint32_t)(id % 7), id), SL_QS_DISPATCHED);
	st = stats(h->qs);
	assert_true(st.queues == 0 && st.executing == 100 && st.dispatched == 100 && st.r == 0);
	assert_true(st.seats_in_use == sl_qs_demand(h->qs));
	assert_int_equal(h->nd, 0);
	assert_int_equal(rinfo(h->qs, 5).queue, -1);
	assert_int_equal(rinfo(h->qs, 5).position, -1);
	for (uint64_t id = 0; id < 100; id++)
		complete(h, 200, id, 10);
	assert_true(stats(h->qs).seats_in_use == 0);
	done(h);
}

static void test_reject_type(void **state)
{
	struct h *h = mk(SL_QS_REJECT, 0, 0, G3, 2);
	struct sl_qs_stats st;

	(void)state;
	assert_int_equal(arrive(h, 0, 1, 1, 0), SL_QS_DISPATCHED);
	assert_int_equal(arrive(h, 0, 2, 1, 0), SL_QS_DISPATCHED);
	assert_int_equal(arrive(h, 0, 3, 1, 0), SL_QS_REJECT_CONCURRENCY);
	complete(h, 1, 1, 1);
	assert_int_equal(arrive(h, 1, 3, 2, 0), SL_QS_REJECT_CONCURRENCY); /* 1 + 2 > 2 */
	/* wider than CL: only when nothing executes */
	assert_int_equal(arrive(h, 1, 4, 3, 0), SL_QS_REJECT_CONCURRENCY);
	complete(h, 2, 2, 1);
	assert_int_equal(arrive(h, 2, 4, 3, 0), SL_QS_DISPATCHED);
	assert_int_equal(arrive(h, 2, 5, 1, 0), SL_QS_REJECT_CONCURRENCY); /* 3 >= CL */
	st = stats(h->qs);
	assert_true(st.rejected_concurrency_limit == 4 && st.dispatched == 3 && st.queues == 0);
	assert_true(st.rejected_queue_full == 0 && st.enqueues == 0);
	complete(h, 3, 4, 1);
	/* CL 0: one request at a time */
	set_cl(h, 3, 0);
	assert_int_equal(arrive(h, 3, 6, 1, 0), SL_QS_DISPATCHED);
	assert_int_equal(arrive(h, 3, 7, 1, 0), SL_QS_REJECT_CONCURRENCY);
	complete(h, 4, 6, 1);
	assert_int_equal(arrive(h, 4, 7, 1, 0), SL_QS_DISPATCHED);
	complete(h, 5, 7, 1);
	assert_int_equal(h->nd, 0);
	done(h);
}

static void test_single_queue(void **state)
{
	struct h *h = mk(1, 1, 100, G3, 1);

	(void)state;
	/* one FIFO: the flow hash is ignored, first come first served */
	assert_int_equal(arrive(h, 0, 0, 1, 0xdeadbeef), SL_QS_DISPATCHED);
	for (uint64_t id = 1; id < 10; id++)
		assert_int_equal(arrive(h, id, id, 1, id * 0x9e3779b97f4a7c15ull), SL_QS_QUEUED);
	for (uint64_t id = 1; id < 10; id++)
		assert_int_equal(rinfo(h->qs, id).position, (int32_t)id - 1);
	for (uint64_t id = 0; id < 10; id++)
		complete(h, 100 + id, id, 1);
	assert_int_equal(h->nd, 9);
	for (uint64_t i = 0; i < 9; i++)
		assert_true(h->disp[i] == i + 1);
	assert_true(stats(h->qs).queues == 1);
	done(h);
}

static void test_cl_zero(void **state)
{
	struct h *h = mk(2, 1, 6, G3, 0);
	struct sl_qs_stats st;

	(void)state;
	for (uint64_t id = 0; id < 12; id++)
		assert_int_equal(arrive(h, id * SEC, id, 1, id % 2), SL_QS_QUEUED);
	st = stats(h->qs);
	assert_true(st.executing == 0 && st.r == 0 && st.waiting == 12 && st.no_accommodation == 0);
	assert_int_equal(h->nd, 0);
	/* seats in use (0) >= CL (0): a full queue rejects */
	assert_int_equal(arrive(h, 12 * SEC, 12, 1, 0), SL_QS_REJECT_QUEUE_FULL);
	/* time-out works: 15 s limit at t = 20 s removes arrivals before 5 s */
	assert_int_equal(expire(h, 20 * SEC, 15 * SEC, on_expired, h), 5);
	assert_ok(h->qs);
	assert_int_equal(h->ne, 5);
	for (uint64_t i = 0; i < 5; i++)
		assert_true(h->expired[i] == i);
	st = stats(h->qs);
	assert_true(st.waiting == 7 && st.rejected_time_out == 5 && st.r == 0);
	assert_int_equal(expire(h, 100 * SEC, 15 * SEC, NULL, NULL), 7);
	assert_true(stats(h->qs).waiting == 0);
	done(h);
}

/* ---- Kubernetes queueset.go setConfiguration runtime changes ------------------------------------------------------------------- */

static void test_cl_raise_dispatches(void **state)
{
	struct h *h = mk(2, 1, 10, G3, 0);

	(void)state;
	for (uint64_t id = 0; id < 4; id++)
		assert_int_equal(arrive(h, 0, id, 1, id % 2), SL_QS_QUEUED);
	set_cl(h, MS, 2);
	assert_ok(h->qs);
	assert_int_equal(h->nd, 2);
	assert_true(h->disp[0] == 0 && h->disp[1] == 1 && h->disp_now[0] == MS);
	set_cl(h, 2 * MS, 3);
	assert_true(h->nd == 3 && h->disp[2] == 2);
	set_cl(h, 2 * MS, 10);
	assert_true(h->nd == 4 && h->disp[3] == 3);
	for (uint64_t id = 0; id < 4; id++)
		complete(h, 3 * MS, id, MS);
	done(h);
}

static void test_cl_shrink_pauses(void **state)
{
	struct h *h = mk(2, 1, 10, G3, 3);

	(void)state;
	for (uint64_t id = 0; id < 5; id++)
		arrive(h, 0, id, 1, id % 2);
	assert_true(stats(h->qs).executing == 3 && stats(h->qs).waiting == 2);
	set_cl(h, MS, 1); /* executing requests are never aborted */
	assert_true(stats(h->qs).executing == 3 && stats(h->qs).seats_in_use == 3);
	complete(h, 2 * MS, 0, 2 * MS);
	complete(h, 2 * MS, 1, 2 * MS);
	assert_int_equal(h->nd, 0); /* 1 seat in use >= CL 1 */
	complete(h, 2 * MS, 2, 2 * MS);
	assert_int_equal(h->nd, 1);
	assert_true(stats(h->qs).seats_in_use == 1);
	complete(h, 3 * MS, h->disp[0], MS);
	assert_int_equal(h->nd, 2);
	complete(h, 4 * MS, h->disp[1], MS);
	done(h);
}

static void test_queue_count_shrink(void **state)
{
	struct h *h = mk(4, 1, 10, G3, 1);
	struct sl_qs_config c = { 2, 1, 10, G3 };
	struct sl_qs_stats st;

	(void)state;
	assert_int_equal(arrive(h, 0, 1, 1, 3), SL_QS_DISPATCHED); /* q3, robinIndex 3 */
	assert_int_equal(arrive(h, 0, 2, 1, 1), SL_QS_QUEUED);     /* q1 */
	assert_int_equal(arrive(h, 0, 3, 1, 2), SL_QS_QUEUED);     /* q2 */
	assert_int_equal(set_config(h, 0, &c, NULL, 0), 0);
	assert_ok(h->qs);
	st = stats(h->qs);
	assert_true(st.queues == 4 && st.desired_queues == 2 && st.robin_index == 3);
	/* q3 empties on release: removed; robinIndex 3 >= 3 → 2 */
	complete(h, MS, 1, MS);
	st = stats(h->qs);
	assert_true(st.queues == 3);
	/* scan from (2 + 1) mod 3 = 0: q1 and q2 tie, q1 is scanned first */
	assert_true(h->nd == 1 && h->disp[0] == 2 && st.robin_index == 1);
	/* arrivals are dealt over 2 queues: hash 3 → queue 1 */
	assert_int_equal(arrive(h, MS, 4, 1, 3), SL_QS_QUEUED);
	assert_int_equal(rinfo(h->qs, 4).queue, 1);
	/* q1 stays (4 waits there) */
	complete(h, 2 * MS, 2, MS);
	st = stats(h->qs);
	assert_true(st.queues == 3 && h->nd == 2 && h->disp[1] == 3); /* q2: F 300000 < q1 */
	assert_true(st.robin_index == 2);
	/* q2 empties: removed; robinIndex 2 >= 2 → 1 */
	complete(h, 3 * MS, 3, MS);
	st = stats(h->qs);
	assert_true(st.queues == 2 && st.robin_index == 1 && h->nd == 3 && h->disp[2] == 4);
	/* at the desired count: an emptied queue stays */
	complete(h, 4 * MS, 4, MS);
	st = stats(h->qs);
	assert_true(st.queues == 2 && st.seats_in_use == 0);
	done(h);
}

/* Removing a queue above robinIndex leaves it alone; more queues: at once. */
static void test_queue_count_shrink_above_robin(void **state)
{
	struct h *h = mk(4, 1, 10, G3, 2);
	struct sl_qs_config c = { 1, 1, 10, G3 }, more = { 8, 3, 10, G3 };

	(void)state;
	assert_int_equal(arrive(h, 0, 1, 1, 3), SL_QS_DISPATCHED); /* robinIndex 3 */
	assert_int_equal(arrive(h, 0, 2, 1, 0), SL_QS_DISPATCHED); /* robinIndex 0 */
	assert_int_equal(set_config(h, 0, &c, NULL, 0), 0);
	complete(h, MS, 1, MS);
	assert_true(stats(h->qs).queues == 3 && stats(h->qs).robin_index == 0);
	complete(h, MS, 2, MS); /* q0 emptied: removed, robinIndex 0 >= 0 → -1 */
	assert_true(stats(h->qs).queues == 2 && stats(h->qs).robin_index == -1);
	assert_int_equal(set_config(h, MS, &more, NULL, 0), 0);
	assert_true(stats(h->qs).queues == 8 && stats(h->qs).hand_size == 3);
	done(h);
}

/* The removed queue was the last one dispatched from: robinIndex steps back
 * so that the scan still starts right after it. */
static void test_queue_removal_robin_fix(void **state)
{
	struct h *h = mk(4, 1, 10, G3, 1);
	struct sl_qs_config c = { 3, 1, 10, G3 };

	(void)state;
	assert_int_equal(arrive(h, 0, 1, 1, 2), SL_QS_DISPATCHED); /* q2, robinIndex 2 */
	assert_int_equal(arrive(h, 0, 2, 1, 0), SL_QS_QUEUED);     /* q0, F = W1 */
	assert_int_equal(arrive(h, 0, 3, 1, 3), SL_QS_QUEUED);     /* q3, F = W1 */
	assert_int_equal(set_config(h, 0, &c, NULL, 0), 0);
	complete(h, MS, 1, G3);
	/* q2 removed, old q3 is now index 2 and robinIndex 1: the scan starts
	 * at index 2, which wins the tie against q0 */
	assert_true(stats(h->qs).queues == 3);
	assert_true(h->nd == 1 && h->disp[0] == 3);
	assert_int_equal(rinfo(h->qs, 3).queue, 2);
	assert_true(stats(h->qs).robin_index == 2);
	complete(h, 2 * MS, 3, G3); /* at the desired count: nothing more is removed */
	assert_true(stats(h->qs).queues == 3 && h->nd == 2 && h->disp[1] == 2);
	complete(h, 3 * MS, 2, G3);
	done(h);
}

static void test_switch_to_reject_drains(void **state)
{
	struct h *h = mk(2, 1, 7, G3, 1);
	struct sl_qs_config c = { SL_QS_REJECT, 3, 1, G3 };
	struct sl_qs_stats st;

	(void)state;
	assert_int_equal(arrive(h, 0, 1, 1, 0), SL_QS_DISPATCHED);
	assert_int_equal(arrive(h, 0, 2, 1, 1), SL_QS_QUEUED);
	assert_int_equal(set_config(h, 0, &c, NULL, 0), 0);
	st = stats(h->qs);
	/* the old queuing parameters are kept */
	assert_true(st.hand_size == 1 && st.queue_length_limit == 7 && st.queues == 2);
	assert_int_equal(arrive(h, 0, 3, 1, 0), SL_QS_REJECT_CONCURRENCY);
	complete(h, MS, 1, MS);
	/* q0 removed; the queued request still dispatches */
	assert_true(h->nd == 1 && h->disp[0] == 2 && stats(h->qs).queues == 1);
	complete(h, 2 * MS, 2, MS);
	assert_true(stats(h->qs).queues == 0 && stats(h->qs).robin_index == -1);
	assert_int_equal(arrive(h, 2 * MS, 3, 1, 0), SL_QS_DISPATCHED);
	assert_int_equal(rinfo(h->qs, 3).queue, -1);
	/* back to Queue: new queues at once; the queue-less request stays */
	c = (struct sl_qs_config){ 3, 2, 5, G3 };
	assert_int_equal(set_config(h, 2 * MS, &c, NULL, 0), 0);
	assert_true(stats(h->qs).queues == 3 && stats(h->qs).queue_length_limit == 5);
	assert_int_equal(arrive(h, 2 * MS, 4, 1, 99), SL_QS_QUEUED); /* 1 seat in use */
	complete(h, 3 * MS, 3, MS);
	assert_true(h->nd == 2 && h->disp[1] == 4);
	complete(h, 4 * MS, 4, MS);
	done(h);
}

static void test_switch_to_exempt_dispatches_all(void **state)
{
	struct h *h = mk(2, 1, 10, G3, 0);
	struct sl_qs_config c = { SL_QS_EXEMPT, 0, 0, G3 };

	(void)state;
	for (uint64_t id = 0; id < 5; id++)
		assert_int_equal(arrive(h, 0, id, 2, id), SL_QS_QUEUED);
	assert_int_equal(set_config(h, MS, &c, NULL, 0), 0);
	assert_int_equal(h->nd, 5);
	assert_true(stats(h->qs).seats_in_use == 10);
	assert_int_equal(arrive(h, MS, 9, 1, 0), SL_QS_DISPATCHED);
	for (uint64_t id = 0; id < 5; id++)
		complete(h, 2 * MS, id, MS);
	complete(h, 2 * MS, 9, MS);
	assert_true(stats(h->qs).queues == 0);
	done(h);
}

static void test_bad_config_change_keeps_old(void **state)
{
	struct h *h = mk(4, 2, 10, G3, 1);
	struct sl_qs_config bad = { 4, 9, 10, G3 };
	char why[128];

	(void)state;
	assert_int_equal(set_config(h, 0, &bad, why, sizeof(why)), -EINVAL);
	assert_true(stats(h->qs).hand_size == 2 && stats(h->qs).queues == 4);
	done(h);
}

/* ---- Kubernetes queueset.go removeTimedOutRequestsFromQueueToBoundLocked cancel and expiry ----------------------------------------------------------------- */

static void test_cancel_wide_head_unblocks(void **state)
{
	struct h *h = mk(2, 1, 10, G3, 3);

	(void)state;
	assert_int_equal(arrive(h, 0, 1, 2, 0), SL_QS_DISPATCHED);
	assert_int_equal(arrive(h, 0, 2, 3, 1), SL_QS_QUEUED);   /* wide head, F 900000 */
	assert_int_equal(arrive(h, 0, 3, 1, 0), SL_QS_QUEUED);   /* F 900000, scanned later */
	assert_int_equal(h->nd, 0);
	assert_int_equal(cancel(h, MS, 2), 0);
	assert_ok(h->qs);
	assert_true(h->nd == 1 && h->disp[0] == 3 && h->disp_now[0] == MS);
	assert_true(stats(h->qs).rejected_time_out == 1);
	complete(h, 2 * MS, 1, MS);
	complete(h, 2 * MS, 3, MS);
	done(h);
}

static void test_expire_sweep(void **state)
{
	struct h *h = mk(2, 1, 10, G3, 1);
	struct sl_qs_stats st;

	(void)state;
	assert_int_equal(arrive(h, 0, 1, 1, 0), SL_QS_DISPATCHED);
	assert_int_equal(arrive(h, 0, 2, 1, 1), SL_QS_QUEUED);
	assert_int_equal(arrive(h, 5 * SEC, 3, 1, 0), SL_QS_QUEUED);
	assert_int_equal(arrive(h, 10 * SEC, 4, 1, 1), SL_QS_QUEUED);
	/* waited exactly the limit: not yet */
	assert_int_equal(expire(h, 15 * SEC, 15 * SEC, on_expired, h), 0);
	assert_int_equal(expire(h, 20 * SEC + 1, 15 * SEC, on_expired, h), 2);
	assert_ok(h->qs);
	assert_true(h->ne == 2 && h->expired[0] == 2 && h->expired[1] == 3);
	assert_int_equal(sl_qs_lookup(h->qs, 2, NULL), -ENOENT);
	st = stats(h->qs);
	assert_true(st.rejected_time_out == 2 && st.waiting == 1 && st.executing == 1);
	/* executing requests never expire */
	assert_int_equal(expire(h, 100 * SEC, 0, on_expired, h), 1);
	assert_true(h->ne == 3 && h->expired[2] == 4);
	complete(h, 100 * SEC, 1, 100 * SEC);
	assert_int_equal(h->nd, 0);
	done(h);
}

/* An expiry that removes a blocking wide head dispatches the next one. */
static void test_expire_unblocks(void **state)
{
	struct h *h = mk(2, 1, 10, G3, 2);

	(void)state;
	assert_int_equal(arrive(h, 0, 1, 1, 0), SL_QS_DISPATCHED);
	assert_int_equal(arrive(h, 0, 2, 2, 1), SL_QS_QUEUED);
	assert_int_equal(arrive(h, SEC, 3, 1, 0), SL_QS_QUEUED);
	assert_int_equal(expire(h, SEC + 1, SEC / 2, on_expired, h), 1);
	assert_true(h->ne == 1 && h->expired[0] == 2);
	assert_true(h->nd == 1 && h->disp[0] == 3);
	complete(h, 2 * SEC, 1, SEC);
	complete(h, 2 * SEC, 3, SEC);
	done(h);
}

/* ---- callbacks, introspection --------------------------------------------------------------- */

static void test_reentrant_callback(void **state)
{
	struct h *h = mk(3, 1, 100, G3, 1);

	(void)state;
	h->check_in_cb = true;
	assert_int_equal(arrive(h, 0, 0, 1, 0), SL_QS_DISPATCHED);
	for (uint64_t id = 1; id < 30; id++)
		assert_int_equal(arrive(h, 0, id, 1, id), SL_QS_QUEUED);
	/* each callback completes its request, which dispatches the next: the
	 * whole backlog drains from one completion, reported in order */
	h->complete_in_cb = true;
	complete(h, MS, 0, MS);
	assert_int_equal(h->nd, 29);
	for (size_t i = 0; i < 29; i++) {
		for (size_t j = 0; j < i; j++)
			assert_true(h->disp[i] != h->disp[j]);
	}
	assert_true(stats(h->qs).seats_in_use == 0 && stats(h->qs).waiting == 0);
	done(h);
}

struct dump {
	struct sl_qs_req_info rows[64];
	size_t n;
	int stop_after;
};

static int dump_cb(void *ctx, const struct sl_qs_req_info *ri)
{
	struct dump *d = ctx;

	d->rows[d->n++] = *ri;
	return d->stop_after && (int)d->n >= d->stop_after ? 7 : 0;
}

static void test_introspection(void **state)
{
	struct h *h = mk(2, 1, 10, G3, 2);
	struct sl_qs_config rej = { SL_QS_REJECT, 1, 1, G3 };
	struct sl_qs_queue_info qi;
	struct dump d = { 0 };
	struct sl_qs_stats st;

	(void)state;
	assert_int_equal(arrive(h, 10, 1, 2, 0), SL_QS_DISPATCHED);
	assert_int_equal(arrive(h, 20, 2, 1, 0), SL_QS_QUEUED);
	assert_int_equal(arrive(h, 30, 3, 3, 0), SL_QS_QUEUED);
	assert_int_equal(arrive(h, 40, 4, 1, 1), SL_QS_QUEUED);
	qi = qinfo(h->qs, 0);
	assert_true(qi.index == 0 && qi.waiting == 2 && qi.executing == 1 && qi.seats_in_use == 2);
	assert_true(qi.initial_seats_sum == 4 && qi.max_seats_sum == 4 && qi.total_work_sum == 4 * W1);
	assert_true(qi.next_dispatch_r == 2 * W1);
	assert_int_equal(sl_qs_queue_info(h->qs, 2, &qi), -ENOENT);
	assert_true(sl_qs_demand(h->qs) == 2 + 5 && sl_qs_seats_waiting(h->qs) == 5);
	assert_true(sl_qs_waiting(h->qs) == 3 && sl_qs_queue_count(h->qs) == 2);
	assert_int_equal(sl_qs_foreach_request(h->qs, dump_cb, &d), 0);
	assert_int_equal(d.n, 4);
	/* q0 waiting in FIFO order, q0 executing, q1 waiting */
	assert_true(d.rows[0].id == 2 && d.rows[0].position == 0 && !d.rows[0].executing);
	assert_true(d.rows[1].id == 3 && d.rows[1].position == 1 && d.rows[1].seats == 3);
	assert_true(d.rows[2].id == 1 && d.rows[2].position == -1 && d.rows[2].executing);
	assert_true(d.rows[2].start_ns == 10 && d.rows[2].arrival_ns == 10);
	assert_true(d.rows[3].id == 4 && d.rows[3].queue == 1 && d.rows[3].flow_hash == 1);
	assert_true(d.rows[1].arrival_ns == 30 && d.rows[1].start_ns == 0 && d.rows[1].work == 3 * W1);
	assert_true(rinfo(h->qs, 3).position == 1 && rinfo(h->qs, 3).guess_ns == G3);
	d.n = 0;
	d.stop_after = 2;
	assert_int_equal(sl_qs_foreach_request(h->qs, dump_cb, &d), 7);
	assert_int_equal(d.n, 2);
	/* queue-less rows come last */
	assert_int_equal(set_config(h, 50, &rej, NULL, 0), 0);
	complete(h, 60, 1, 50); /* 2 and 4 dispatch; q0 has 3 waiting */
	set_cl(h, 60, 10);
	assert_int_equal(arrive(h, 70, 5, 1, 0), SL_QS_DISPATCHED);
	d.n = 0;
	d.stop_after = 0;
	assert_int_equal(sl_qs_foreach_request(h->qs, dump_cb, &d), 0);
	assert_true(d.n == 4 && d.rows[3].id == 5 && d.rows[3].queue == -1);
	st = stats(h->qs);
	assert_true(st.dispatched == 5 && st.executing == 4 && st.seats_in_use == 6);
	assert_true(st.guess_ns == G3 && st.cl == 10 && st.last_ns == 70);
	for (uint64_t id = 2; id <= 5; id++)
		complete(h, 80, id, 10);
	assert_true(stats(h->qs).queues == 0);
	done(h);
}

/* ---- fairness ---------------------------------------------------------------------------------- */

struct sim {
	struct h *h;
	uint64_t end[4096]; /* completion time by id; 0 = not executing */
	uint64_t start[4096];
};

static void sim_run_until(struct sim *s, uint64_t limit, size_t nids)
{
	for (;;) {
		uint64_t best = UINT64_MAX, id = 0;
		size_t before = s->h->nd;

		for (size_t i = 0; i < nids; i++)
			if (s->end[i] && s->end[i] < best) {
				best = s->end[i];
				id = i;
			}
		if (best == UINT64_MAX || best > limit)
			return;
		s->end[id] = 0;
		complete(s->h, best, id, best - s->start[id]);
		for (size_t k = before; k < s->h->nd; k++) {
			s->start[s->h->disp[k]] = best;
			s->end[s->h->disp[k]] = best + 10 * MS;
		}
	}
}

/* One elephant flow with a deep backlog, mice on hands disjoint from it. */
static size_t elephant_dispatches_before_mice(int32_t queues, uint32_t hand, uint64_t g, size_t *backlog)
{
	struct sim *s = calloc(1, sizeof(*s));
	const uint64_t elephant = 0x0123456789abcdefull;
	uint32_t eh[SL_SHUFFLE_MAX_HAND], used[64] = { 0 };
	uint64_t mice[5];
	size_t nm = 0, last_mouse = 0, ele = 0, id;

	assert_non_null(s);
	s->h = mk(queues, hand, 1000, g, 4);
	if (queues > 1) {
		assert_int_equal(sl_shuffle_deal((uint32_t)queues, hand, elephant, eh), 0);
		for (uint32_t i = 0; i < hand; i++)
			used[eh[i]] = 1;
	}
	for (uint64_t v = 1; nm < 5; v++) {
		uint32_t mh[SL_SHUFFLE_MAX_HAND];
		bool clash = false;

		if (queues > 1) {
			sl_shuffle_deal((uint32_t)queues, hand, v * 0x9e3779b97f4a7c15ull, mh);
			for (uint32_t i = 0; i < hand; i++)
				clash |= used[mh[i]] != 0;
			if (clash)
				continue;
			for (uint32_t i = 0; i < hand; i++)
				used[mh[i]] = 1;
		}
		mice[nm++] = v * 0x9e3779b97f4a7c15ull;
	}
	/* the elephant: 200 connections at t = 0 */
	for (id = 0; id < 200; id++)
		if (arrive(s->h, 0, id, 1, elephant) == SL_QS_DISPATCHED) {
			s->start[id] = 0;
			s->end[id] = 10 * MS;
		}
	/* at 15 ms, five mice open 2 connections each */
	sim_run_until(s, 15 * MS, 200);
	size_t mark = s->h->nd;

	for (size_t m = 0; m < 5; m++)
		for (size_t k = 0; k < 2; k++, id++)
			assert_int_equal(arrive(s->h, 15 * MS, id, 1, mice[m]), SL_QS_QUEUED);
	sim_run_until(s, UINT64_MAX, id);
	for (size_t k = mark; k < s->h->nd; k++)
		if (s->h->disp[k] >= 200)
			last_mouse = k;
	for (size_t k = mark; k < last_mouse; k++)
		ele += s->h->disp[k] < 200;
	*backlog = 200 - (mark + 4); /* elephant requests still waiting at 15 ms */
	assert_true(stats(s->h->qs).seats_in_use == 0 && stats(s->h->qs).waiting == 0);
	done(s->h);
	free(s);
	return ele;
}

static void test_fairness_mice_vs_elephant(void **state)
{
	size_t backlog, fq, fifo;

	(void)state;
	/* G = the connections' real duration (10 ms) */
	fq = elephant_dispatches_before_mice(64, 4, 10 * MS, &backlog);
	print_message("fair queuing, G = S: %zu elephant dispatches before the last mouse "
		      "(elephant backlog %zu)\n", fq, backlog);
	assert_true(backlog > 180);
	assert_true(fq == 0); /* the ten mice go straight to the front */
	/* G = 3 ms < S: queues whose completions are not yet corrected look
	 * cheaper for a moment, but the mice still overtake the backlog */
	fq = elephant_dispatches_before_mice(64, 4, G3, &backlog);
	print_message("fair queuing, G < S: %zu elephant dispatches before the last mouse\n", fq);
	assert_true(fq <= 12);
	/* the baseline: one FIFO makes the mice wait behind the whole backlog */
	fifo = elephant_dispatches_before_mice(1, 1, 10 * MS, &backlog);
	assert_true(fifo >= backlog);
}

/* ---- randomized property test ------------------------------------------------------------ */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static uint64_t below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

#define P_IDS 512

enum pstate { P_NONE, P_WAIT, P_EXEC };

struct prop {
	struct sl_qs *qs;
	uint8_t st[P_IDS];
	uint32_t seats[P_IDS];
	uint64_t dispatched_in_op;
	uint64_t dispatched_cb;
	uint64_t counted;
	uint64_t now;
};

static void prop_dispatch(void *ctx, uint64_t id, uint64_t now)
{
	struct prop *p = ctx;

	assert_true(id < P_IDS && p->st[id] == P_WAIT);
	assert_true(now == p->now); /* the time of the operation */
	p->st[id] = P_EXEC;
	p->dispatched_in_op++;
	p->dispatched_cb++;
}

/* What the operation dispatched, taken at once as the daemon does. */
static void prop_take(struct prop *p)
{
	uint64_t id, at;

	while (sl_qs_next_dispatch(p->qs, &id, &at))
		prop_dispatch(p, id, at);
}

static void prop_expired(void *ctx, uint64_t id)
{
	struct prop *p = ctx;

	assert_true(id < P_IDS && p->st[id] == P_WAIT);
	p->st[id] = P_NONE;
}

static int count_cb(void *ctx, const struct sl_qs_req_info *ri)
{
	struct prop *p = ctx;

	assert_true(ri->id < P_IDS && p->st[ri->id] == (ri->executing ? P_EXEC : P_WAIT));
	p->counted++;
	return 0;
}

static void prop_verify(struct prop *p, const struct sl_qs_config *cfg, uint32_t cl)
{
	uint64_t seats = 0, waiting = 0, wseats = 0, executing = 0, qsum_seats = 0, qsum_wait = 0;
	struct sl_qs_stats st;
	struct sl_qs_req_info ri;

	assert_ok(p->qs);
	for (uint64_t id = 0; id < P_IDS; id++) {
		int rc = sl_qs_lookup(p->qs, id, &ri);

		if (p->st[id] == P_NONE) {
			assert_int_equal(rc, -ENOENT);
			continue;
		}
		assert_int_equal(rc, 0);
		assert_int_equal(ri.executing, p->st[id] == P_EXEC);
		assert_int_equal(ri.seats, p->seats[id]);
		if (ri.executing) {
			seats += ri.seats;
			executing++;
		} else {
			waiting++;
			wseats += ri.seats;
		}
	}
	sl_qs_get_stats(p->qs, &st);
	assert_true(st.seats_in_use == seats && st.executing == executing);
	assert_true(st.waiting == waiting && st.seats_waiting == wseats);
	assert_true(sl_qs_demand(p->qs) == seats + wseats);
	for (uint32_t i = 0; i < st.queues; i++) {
		struct sl_qs_queue_info qi = qinfo(p->qs, i);

		qsum_seats += qi.seats_in_use;
		qsum_wait += qi.waiting;
	}
	assert_true(qsum_wait == waiting && qsum_seats <= seats);
	p->counted = 0;
	assert_int_equal(sl_qs_foreach_request(p->qs, count_cb, p), 0);
	assert_true(p->counted == waiting + executing);
	/* a dispatch never overfills: after the loop ran, seats in use stay
	 * within CL unless a single request wider than CL runs alone */
	if (p->dispatched_in_op && cfg->queues != SL_QS_EXEMPT)
		assert_true(st.seats_in_use <= cl || st.executing == 1);
}

static void random_config(struct sl_qs_config *c)
{
	static const int32_t qs[] = { -1, 0, 1, 2, 3, 8, 16, 64 };
	int32_t q = qs[below(8)];

	memset(c, 0, sizeof(*c)); /* every field set below, none left to the stack */
	c->queues = q;
	c->hand_size = q <= 1 ? 1 : 1 + (uint32_t)below(q < 6 ? (uint64_t)q : 6);
	c->queue_length_limit = 1 + (uint32_t)below(8);
	c->guess_ns = 1 + below(20 * MS);
	if (below(2)) { /* controlled delay, or none */
		c->delay_target_ns = 1 + below(50 * MS);
		c->delay_interval_ns = c->delay_target_ns + below(SEC);
	}
}

/* ---- controlled delay (sl_qs_shed) ------------------------------------------------------ */

static struct h *mk_delay(int32_t queues, uint32_t hand, uint32_t cl, uint64_t target, uint64_t interval)
{
	struct sl_qs_config cfg = { queues, hand, 1000, SEC, target, interval }; /* G: the daemon's */
	struct h *h = calloc(1, sizeof(*h));
	char why[128];

	assert_non_null(h);
	if (sl_qs_create(&h->qs, &cfg, cl, 0, why, sizeof(why)))
		fail_msg("create: %s", why);
	return h;
}

static void test_delay_config(void **state)
{
	struct sl_qs_config c = { 4, 2, 10, G3, 100 * MS, 0 };
	char why[128];

	(void)state;
	assert_int_equal(sl_qs_config_validate(&c, why, sizeof(why)), -EINVAL);
	c.delay_interval_ns = 50 * MS; /* shorter than the target */
	assert_int_equal(sl_qs_config_validate(&c, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "exceeds"));
	c.delay_interval_ns = SEC;
	assert_int_equal(sl_qs_config_validate(&c, why, sizeof(why)), 0);
	c.delay_target_ns = c.delay_interval_ns = 0; /* off */
	assert_int_equal(sl_qs_config_validate(&c, why, sizeof(why)), 0);
}

/* A burst waits while its backlog is younger than the interval; once the
 * backlog has stood that long, whoever waited past the target is shed,
 * oldest first, all but the queue's newest; a queue that empties starts
 * afresh.  Off, nothing is shed. */
static void test_delay_burst_then_standing(void **state)
{
	struct h *h = mk_delay(1, 1, 1, 100 * MS, SEC);
	struct sl_qs_stats st;

	(void)state;
	assert_int_equal(arrive(h, 0, 0, 1, 0), SL_QS_DISPATCHED);
	for (uint64_t id = 1; id <= 5; id++)
		assert_int_equal(arrive(h, (id - 1) * 100 * MS, id, 1, 0), SL_QS_QUEUED);
	/* 900 ms of backlog: a burst, everyone waits */
	assert_int_equal(shed(h, 900 * MS, on_expired, h), 0);
	complete(h, 950 * MS, 0, 950 * MS);
	assert_true(h->nd == 1 && h->disp[0] == 1);
	/* the backlog (since t = 0) has stood for the interval: 2, 3 and 4
	 * waited past the target and go, oldest first; 5 is the newest */
	assert_int_equal(shed(h, SEC, on_expired, h), 3);
	assert_ok(h->qs);
	assert_true(h->ne == 3 && h->expired[0] == 2 && h->expired[1] == 3 && h->expired[2] == 4);
	st = stats(h->qs);
	assert_true(st.rejected_shed == 3 && st.rejected_time_out == 0 && st.waiting == 1);
	/* still standing: 5 is no longer the newest once 6 comes */
	assert_int_equal(arrive(h, 1050 * MS, 6, 1, 0), SL_QS_QUEUED);
	assert_int_equal(shed(h, 1100 * MS, on_expired, h), 1);
	assert_true(h->ne == 4 && h->expired[3] == 5);
	/* 6 is dispatched, the queue empties: the next backlog is a burst again */
	complete(h, 1200 * MS, 1, 250 * MS);
	assert_true(h->nd == 2 && h->disp[1] == 6);
	assert_int_equal(arrive(h, 1300 * MS, 7, 1, 0), SL_QS_QUEUED);
	assert_int_equal(arrive(h, 1300 * MS, 8, 1, 0), SL_QS_QUEUED);
	assert_int_equal(shed(h, 2 * SEC, on_expired, h), 0);
	assert_int_equal(shed(h, 2300 * MS, on_expired, h), 1);
	assert_true(h->ne == 5 && h->expired[4] == 7);
	/* the hard limit still applies to the kept newest */
	assert_int_equal(expire(h, 3400 * MS, 2 * SEC, on_expired, h), 1);
	assert_true(h->ne == 6 && h->expired[5] == 8 && stats(h->qs).rejected_time_out == 1);
	done(h);
	/* off: nothing is ever shed */
	h = mk(1, 1, 1000, G3, 1);
	assert_int_equal(arrive(h, 0, 0, 1, 0), SL_QS_DISPATCHED);
	for (uint64_t id = 1; id <= 5; id++)
		assert_int_equal(arrive(h, 0, id, 1, 0), SL_QS_QUEUED);
	assert_int_equal(shed(h, 100 * SEC, on_expired, h), 0);
	done(h);
}

static bool pick_odd(void *ctx, uint64_t flow_hash)
{
	(void)ctx;
	for (uint64_t id = 1; id <= 6; id += 2)
		if (flow_hash == id * 0x9e3779b97f4a7c15ull)
			return true;
	return false;
}

/* A stalled level's waiters leave, of the flows picked or all of them,
 * oldest first, and are told. */
static void test_shed_flows(void **state)
{
	struct h *h = mk_delay(4, 2, 2, 100 * MS, SEC);

	(void)state;
	assert_int_equal(arrive(h, 0, 0, 2, 7), SL_QS_DISPATCHED);
	for (uint64_t id = 1; id <= 6; id++)
		assert_int_equal(arrive(h, id * MS, id, 1, id * 0x9e3779b97f4a7c15ull), SL_QS_QUEUED);
	/* the flows picked (odd ids' hashes) first, the rest stay */
	assert_int_equal(shed_flows(h, 10 * MS, pick_odd, NULL, on_expired, h), 3);
	assert_ok(h->qs);
	assert_true(h->ne == 3 && h->expired[0] == 1 && h->expired[1] == 3 && h->expired[2] == 5);
	assert_true(stats(h->qs).rejected_stalled == 3 && stats(h->qs).waiting == 3);
	/* no pick: every one */
	assert_int_equal(shed_flows(h, 11 * MS, NULL, NULL, on_expired, h), 3);
	assert_ok(h->qs);
	assert_true(h->ne == 6 && stats(h->qs).rejected_stalled == 6 && stats(h->qs).waiting == 0);
	assert_true(h->expired[3] == 2 && h->expired[4] == 4 && h->expired[5] == 6);
	complete(h, 20 * MS, 0, 20 * MS);
	done(h);
}

struct delay_walk {
	uint64_t now, interval;
	uint32_t waiting_in[64];
	int bad;
	uint64_t bad_id;
};

static int count_waiting(void *ctx, const struct sl_qs_req_info *r)
{
	struct delay_walk *w = ctx;

	if (!r->executing)
		w->waiting_in[r->queue]++;
	return 0;
}

/* Nobody has waited past the interval but the newest of its queue. */
static int check_sojourn(void *ctx, const struct sl_qs_req_info *r)
{
	struct delay_walk *w = ctx;

	if (!r->executing && w->now - r->arrival_ns > w->interval &&
	    (uint32_t)r->position + 1 != w->waiting_in[r->queue]) {
		w->bad = 1;
		w->bad_id = r->id;
		return 1;
	}
	return 0;
}

/*
 * Random arrivals against a saturated level (64 queues, hand 6, 8 seats,
 * connections of 20..200 ms: about 70 a second) for 60 simulated seconds:
 * three elephant flows at about 100 a second each, ten mice that connect
 * one at a time every 1 to 2 s, the sweep every 100 ms.  The elephants'
 * backlog is shed, no mouse ever is, and after every sweep nobody has
 * waited past the interval but the newest of a queue.  Every mouse is
 * dispatched within the interval.
 */
static void test_delay_random_mice_never_shed(void **state)
{
	enum { ELEPHANTS = 3, MICE = 10, IDS = 200000 };
	const uint64_t target = 100 * MS, interval = SEC;
	struct h *h = mk_delay(64, 6, 8, target, interval);
	static uint8_t flow_of[IDS];      /* 1 + flow index; mice are >= 1 + ELEPHANTS */
	static uint64_t arrived[IDS], ends[IDS];
	static bool waiting_mouse[MICE];
	uint64_t mouse_next[MICE], next_id = 0, shed_ele = 0, worst_mouse = 0;
	size_t seen_disp = 0, seen_shed = 0;

	(void)state;
	rng_state = 0xc0de1ull;
	h->nd = h->ne = 0;
	memset(ends, 0, sizeof(ends));
	for (int m = 0; m < MICE; m++)
		mouse_next[m] = below(SEC);
	for (uint64_t now = 0; now < 60 * SEC; now += MS) {
		/* elephants: ~100/s each */
		for (int e = 0; e < ELEPHANTS; e++)
			if (below(10) == 0) {
				uint64_t id = next_id++;
				int rc;

				assert_true(id < IDS);
				flow_of[id] = (uint8_t)(1 + e);
				arrived[id] = now;
				rc = arrive(h, now, id, 1, (e + 1) * 0x9e3779b97f4a7c15ull);
				if (rc == SL_QS_DISPATCHED)
					ends[id] = now + 20 * MS + below(180 * MS);
			}
		for (int m = 0; m < MICE; m++)
			if (!waiting_mouse[m] && now >= mouse_next[m]) {
				uint64_t id = next_id++;
				int rc;

				flow_of[id] = (uint8_t)(1 + ELEPHANTS + m);
				arrived[id] = now;
				rc = arrive(h, now, id, 1, (1000 + m) * 0xd1b54a32d192ed03ull);
				if (rc == SL_QS_DISPATCHED)
					ends[id] = now + 20 * MS + below(180 * MS);
				else
					waiting_mouse[m] = true;
				mouse_next[m] = now + SEC + below(SEC);
			}
		/* completions due now */
		for (uint64_t id = 0; id < next_id; id++)
			if (ends[id] && ends[id] <= now) {
				ends[id] = 0;
				assert_int_equal(sl_qs_complete(h->qs, now, id, SL_QS_SERVICE_FROM_CLOCK), 0);
			}
		/* newly dispatched ones get their service time */
		for (; seen_disp < h->nd; seen_disp++) {
			uint64_t id = h->disp[seen_disp];

			ends[id] = now + 20 * MS + below(180 * MS);
			if (flow_of[id] > ELEPHANTS) {
				waiting_mouse[flow_of[id] - 1 - ELEPHANTS] = false;
				if (now - arrived[id] > worst_mouse)
					worst_mouse = now - arrived[id];
			}
		}
		h->nd = seen_disp = 0;
		if (now % (100 * MS) == 0) {
			struct delay_walk w = { .now = now, .interval = interval };

			shed(h, now, on_expired, h);
			for (; seen_shed < h->ne; seen_shed++) {
				uint64_t id = h->expired[seen_shed];

				if (flow_of[id] > ELEPHANTS)
					fail_msg("mouse %d's connection %" PRIu64 " was shed after %" PRIu64 " ms",
						 flow_of[id] - 1 - ELEPHANTS, id, (now - arrived[id]) / MS);
				shed_ele++;
			}
			h->ne = seen_shed = 0;
			sl_qs_foreach_request(h->qs, count_waiting, &w);
			sl_qs_foreach_request(h->qs, check_sojourn, &w);
			if (w.bad)
				fail_msg("at %" PRIu64 " ms, %" PRIu64 " waited %" PRIu64 " ms and is not its queue's newest",
					 now / MS, w.bad_id, (now - arrived[w.bad_id]) / MS);
			assert_ok(h->qs);
		}
	}
	print_message("controlled delay: %" PRIu64 " elephant connections shed, worst mouse wait %" PRIu64
		      " ms, %" PRIu64 " dispatched\n", shed_ele, (uint64_t)(worst_mouse / MS), stats(h->qs).dispatched);
	assert_true(shed_ele > 1000);        /* ~300/s offered, ~70/s served */
	assert_true(worst_mouse < interval);
	assert_int_equal(stats(h->qs).rejected_shed, shed_ele);
	sl_qs_free(h->qs);
	free(h);
}

static void test_random_property(void **state)
{
	const char *env = getenv("SLUICE_QS_SEED");
	uint64_t seed = env ? strtoull(env, NULL, 0) : 0x5eed5eedc0ffeeull;
	const long ops = getenv("SLUICE_QS_OPS") ? atol(getenv("SLUICE_QS_OPS")) : 100000;
	struct sl_qs_config cfg = { 8, 3, 4, G3 };
	struct prop *p = calloc(1, sizeof(*p));
	uint32_t cl = 6;
	uint64_t counts[8] = { 0 };
	char why[128];

	(void)state;
	print_message("random property test: seed 0x%" PRIx64 ", %ld operations (SLUICE_QS_SEED)\n",
		      seed, ops);
	rng_state = seed ? seed : 1;
	assert_non_null(p);
	if (sl_qs_create(&p->qs, &cfg, cl, 0, why, sizeof(why)))
		fail_msg("%s", why);
	for (long op = 0; op < ops; op++) {
		uint64_t r = below(100), id = below(P_IDS);
		struct sl_qs_stats before;

		p->now += below(3) ? below(2 * MS) : 0;
		/* whenever the queues are idle, now and then move R close to the
		 * epoch threshold so that epochs happen under load */
		if (!below(50))
			(void)sl_qs_test_set_r(p->qs, SL_QS_EPOCH_HIGH_R - below(200000000));
		p->dispatched_in_op = 0;
		sl_qs_get_stats(p->qs, &before);
		if (r < 45) {
			/* arrival: mostly narrow, a few flows (so queues collide) */
			uint32_t seats = below(10) ? 1 + (uint32_t)below(3) : 1 + (uint32_t)below(cl + 3);
			uint64_t flow = below(12) * 0x9e3779b97f4a7c15ull;
			int rc = sl_qs_arrive(p->qs, p->now, id, seats, flow);

			if (p->st[id] != P_NONE) {
				assert_int_equal(rc, -EEXIST);
			} else {
				assert_true(rc >= 0);
				counts[rc]++;
				if (rc == SL_QS_DISPATCHED || rc == SL_QS_QUEUED) {
					p->st[id] = rc == SL_QS_DISPATCHED ? P_EXEC : P_WAIT;
					p->seats[id] = seats;
				}
				if (rc == SL_QS_REJECT_QUEUE_FULL)
					assert_true(before.seats_in_use >= cl && cfg.queues >= 1);
				if (rc == SL_QS_REJECT_CONCURRENCY)
					assert_true(cfg.queues == 0);
				if (cfg.queues == SL_QS_EXEMPT)
					assert_int_equal(rc, SL_QS_DISPATCHED);
			}
		} else if (r < 80) {
			/* complete an executing request */
			for (uint64_t k = 0; k < P_IDS; k++) {
				uint64_t i = (id + k) % P_IDS;

				if (p->st[i] == P_EXEC) {
					uint64_t service = below(4) ? below(10 * MS) : SL_QS_SERVICE_FROM_CLOCK;

					p->st[i] = P_NONE;
					assert_int_equal(sl_qs_complete(p->qs, p->now, i, service), 0);
					counts[4]++;
					break;
				}
			}
		} else if (r < 88) {
			int rc = sl_qs_cancel(p->qs, p->now, id);

			assert_int_equal(rc, p->st[id] == P_WAIT ? 0 : p->st[id] == P_EXEC ? -EALREADY : -ENOENT);
			if (!rc) {
				p->st[id] = P_NONE;
				counts[5]++;
			}
		} else if (r < 90) {
			counts[6] += sl_qs_expire(p->qs, p->now, below(50 * MS), prop_expired, p);
		} else if (r < 92) {
			/* controlled delay: the same removal path, other rule */
			counts[6] += sl_qs_shed(p->qs, p->now, prop_expired, p);
		} else if (r < 97) {
			cl = (uint32_t)below(10);
			sl_qs_set_cl(p->qs, p->now, cl);
		} else {
			struct sl_qs_config c;
			int32_t old_q = cfg.queues;

			random_config(&c);
			assert_int_equal(sl_qs_set_config(p->qs, p->now, &c, why, sizeof(why)), 0);
			if (c.queues < 1) {
				c.hand_size = cfg.hand_size;
				c.queue_length_limit = cfg.queue_length_limit;
			}
			cfg = c;
			counts[7]++;
			(void)old_q;
		}
		prop_take(p);
		prop_verify(p, &cfg, cl);
	}
	print_message("  dispatched %" PRIu64 " (+%" PRIu64 " from queues), queued %" PRIu64
		      ", queue-full %" PRIu64
		      ", concurrency %" PRIu64 ", completed %" PRIu64 ", cancelled %" PRIu64
		      ", expired %" PRIu64 ", config changes %" PRIu64 "; epochs %" PRIu64 " (%" PRIu64 " clamped)\n",
		      counts[0], p->dispatched_cb, counts[1], counts[2], counts[3], counts[4], counts[5], counts[6],
		      counts[7], stats(p->qs).epochs, stats(p->qs).epoch_failures);
	assert_true(counts[0] && counts[1] && counts[2] && counts[3] && counts[4] && counts[5] &&
		    counts[6] && counts[7] && p->dispatched_cb);
	assert_true(stats(p->qs).epochs >= 10);
	/* drain: everything completes or is cancelled; seats return to 0 */
	sl_qs_set_cl(p->qs, p->now, 1000);
	for (int round = 0; round < 1000 && (sl_qs_waiting(p->qs) || sl_qs_seats_in_use(p->qs)); round++) {
		for (uint64_t i = 0; i < P_IDS; i++)
			if (p->st[i] == P_EXEC) {
				p->st[i] = P_NONE;
				assert_int_equal(sl_qs_complete(p->qs, p->now, i, 1), 0);
			}
		prop_take(p);
		prop_verify(p, &cfg, 1000);
	}
	assert_true(sl_qs_seats_in_use(p->qs) == 0 && sl_qs_waiting(p->qs) == 0);
	assert_true(stats(p->qs).executing == 0 && stats(p->qs).active_queues == 0);
	assert_ok(p->qs);
	sl_qs_free(p->qs);
	free(p);
}

/* Many ids through the table: growth, backward-shift deletes, reuse. */
static void test_id_table(void **state)
{
	struct h *h = mk(SL_QS_EXEMPT, 0, 0, G3, 0);
	const uint64_t n = 20000;

	(void)state;
	for (uint64_t i = 0; i < n; i++)
		assert_int_equal(sl_qs_arrive(h->qs, 0, i * 64, 1, 0), SL_QS_DISPATCHED);
	assert_ok(h->qs);
	for (uint64_t i = 0; i < n; i += 2)
		assert_int_equal(sl_qs_complete(h->qs, 0, i * 64, 0), 0);
	assert_ok(h->qs);
	for (uint64_t i = 0; i < n; i++) {
		struct sl_qs_req_info ri;

		assert_int_equal(sl_qs_lookup(h->qs, i * 64, &ri), i % 2 ? 0 : -ENOENT);
	}
	for (uint64_t i = 0; i < n; i += 2)
		assert_int_equal(sl_qs_arrive(h->qs, 0, i * 64, 1, 0), SL_QS_DISPATCHED);
	for (uint64_t i = 0; i < n; i++)
		assert_int_equal(sl_qs_complete(h->qs, 0, i * 64, 0), 0);
	assert_true(stats(h->qs).seats_in_use == 0);
	done(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_config_validate),
		cmocka_unit_test(test_vector_s1),
		cmocka_unit_test(test_vector_s3),
		cmocka_unit_test(test_vector_queue_pick),
		cmocka_unit_test(test_queue_pick_rotates),
		cmocka_unit_test(test_queue_full_only_when_seats_all_in_use),
		cmocka_unit_test(test_queue_full_newest_rejected),
		cmocka_unit_test(test_arrival_errors),
		cmocka_unit_test(test_anti_windup_on_arrival),
		cmocka_unit_test(test_anti_windup_on_cancel),
		cmocka_unit_test(test_completion_correction),
		cmocka_unit_test(test_completion_uses_own_guess),
		cmocka_unit_test(test_idle_queue_restarts_at_r),
		cmocka_unit_test(test_r_meter_rate),
		cmocka_unit_test(test_epoch_advance),
		cmocka_unit_test(test_epoch_clamps_stale_reading),
		cmocka_unit_test(test_wide_head_waits),
		cmocka_unit_test(test_wider_than_cl),
		cmocka_unit_test(test_round_robin_ties),
		cmocka_unit_test(test_exempt),
		cmocka_unit_test(test_reject_type),
		cmocka_unit_test(test_single_queue),
		cmocka_unit_test(test_cl_zero),
		cmocka_unit_test(test_cl_raise_dispatches),
		cmocka_unit_test(test_cl_shrink_pauses),
		cmocka_unit_test(test_queue_count_shrink),
		cmocka_unit_test(test_queue_count_shrink_above_robin),
		cmocka_unit_test(test_queue_removal_robin_fix),
		cmocka_unit_test(test_switch_to_reject_drains),
		cmocka_unit_test(test_switch_to_exempt_dispatches_all),
		cmocka_unit_test(test_bad_config_change_keeps_old),
		cmocka_unit_test(test_cancel_wide_head_unblocks),
		cmocka_unit_test(test_withdraw_is_no_refusal),
		cmocka_unit_test(test_expire_sweep),
		cmocka_unit_test(test_expire_unblocks),
		cmocka_unit_test(test_reentrant_callback),
		cmocka_unit_test(test_introspection),
		cmocka_unit_test(test_fairness_mice_vs_elephant),
		cmocka_unit_test(test_id_table),
		cmocka_unit_test(test_delay_config),
		cmocka_unit_test(test_delay_burst_then_standing),
		cmocka_unit_test(test_shed_flows),
		cmocka_unit_test(test_delay_random_mice_never_shed),
		cmocka_unit_test(test_random_property),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
