// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Unit tests for the agent-side load scheduler (Aperture workload-scheduler/scheduler.go): the
 * token_bucket (bucket, rate_window) and wfq_order vectors of
 * tests/vectors/aimd.json, then one focused test per rule: bootstrap,
 * pass-through, bucket fill and capacity, queue_timeout, WFQ shares under
 * saturation, latency-based tokens, counters, cancel, staleness; the
 * deadline and id indexes (expiry order, cancel anywhere, random operation
 * sequences) and the inline-admission API (grant, ungrant, observe_inline,
 * return, workload_tokens); controlled delay (a burst waits, a standing
 * queue is shed, a light workload never is, target 0 is Aperture's). */
#include <errno.h>
#include <math.h>
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

#include "config/config.h"
#include "engine/loadsched.h"

#define MS 1000000ull
#define SEC 1000000000ull
#define WARM_ID 0x100000000ull

static void assert_near(double got, double want, double eps, const char *what)
{
	if (!(fabs(got - want) <= eps))
		fail_msg("%s: got %.12g want %.12g", what, got, want);
}

/* ---- harness ------------------------------------------------------------------- */

#define MAX_REC 200000

struct h {
	struct sl_ls *ls;
	uint64_t adm[MAX_REC], adm_t[MAX_REC];
	size_t na;
	uint64_t rej[MAX_REC], rej_t[MAX_REC];
	enum sl_ls_why rej_why[MAX_REC];
	size_t nr;
	bool check_in_cb;
	bool cancel_in_cb;   /* on admit, cancel id+1 (nested call) */
	/* optional per-id bookkeeping (ids < n_state): 1 waiting, 2 decided */
	uint8_t *state;
	size_t n_state;
	uint64_t n_waiting;  /* ids in state 1 */
	uint64_t cb_last_t;  /* callbacks come in event-time order ... */
	uint64_t call_now;   /* ... never after the current call's now */
};

static void track_cb(struct h *h, uint64_t id, uint64_t now)
{
	if (!h->state)
		return;
	if (id >= h->n_state || h->state[id] != 1)
		fail_msg("callback for id %llu that is not waiting", (unsigned long long)id);
	h->state[id] = 2;
	h->n_waiting--;
	if (now < h->cb_last_t || now > h->call_now)
		fail_msg("callback at %llu: last %llu, call now %llu", (unsigned long long)now,
			 (unsigned long long)h->cb_last_t, (unsigned long long)h->call_now);
	h->cb_last_t = now;
}

static void on_admit(void *ctx, uint64_t id, uint64_t now)
{
	struct h *h = ctx;
	char why[256];

	assert_true(h->na < MAX_REC);
	track_cb(h, id, now);
	h->adm[h->na] = id;
	h->adm_t[h->na++] = now;
	if (h->check_in_cb && sl_ls_check(h->ls, why, sizeof(why)))
		fail_msg("check in callback: %s", why);
	if (h->cancel_in_cb)
		(void)sl_ls_cancel(h->ls, now, id + 1);
}

static void on_reject(void *ctx, uint64_t id, uint64_t now, enum sl_ls_why why)
{
	struct h *h = ctx;

	assert_true(h->nr < MAX_REC);
	track_cb(h, id, now);
	h->rej[h->nr] = id;
	h->rej_why[h->nr] = why;
	h->rej_t[h->nr++] = now;
}

static void check(struct h *h)
{
	char why[256];

	if (sl_ls_check(h->ls, why, sizeof(why)))
		fail_msg("sl_ls_check: %s", why);
}

static struct h *h_new(const struct sl_ls_workload *w, size_t n, bool latency, uint64_t ttl)
{
	struct h *h = calloc(1, sizeof(*h));
	struct sl_ls_params p = {
		.workloads = w,
		.n_workloads = n,
		.default_workload = { .priority = 1, .tokens = 0, .queue_timeout_ns = SL_LS_NO_TIMEOUT },
		.latency_based_tokens = latency,
		.decision_ttl_ns = ttl,
	};
	char why[256];

	assert_non_null(h);
	if (sl_ls_create(&h->ls, &p, 0, on_admit, on_reject, h, why, sizeof(why)))
		fail_msg("create: %s", why);
	return h;
}

static void h_free(struct h *h)
{
	check(h);
	sl_ls_free(h->ls);
	free(h);
}

/* per_s flows of 1 token each second over [0, 30 s): all admitted
 * (bootstrap), incoming rate per_s tokens/s once the ring has rotated. */
static void warm(struct h *h, unsigned per_s)
{
	for (uint64_t s = 0; s < 30; s++)
		for (unsigned j = 0; j < per_s; j++)
			assert_int_equal(sl_ls_arrive(h->ls, s * SEC + j * (SEC / per_s), WARM_ID,
						      -1, 1.0, SL_LS_NO_TIMEOUT),
					 SL_LS_ADMITTED);
}

static int arrive(struct h *h, uint64_t now, uint64_t id, int wl)
{
	int rc = sl_ls_arrive(h->ls, now, id, wl, SL_LS_TOKENS_AUTO, SL_LS_NO_TIMEOUT);

	assert_true(rc >= 0);
	check(h);
	return rc;
}

/* ---- vectors ------------------------------------------------------------------ */

static void test_bucket_vectors(void **state)
{
	json_t *root = load_vectors("aimd.json");
	json_t *cases = json_object_get(json_object_get(root, "token_bucket"), "bucket"), *c;
	size_t i, n = 0;

	(void)state;
	assert_true(json_is_array(cases));
	json_array_foreach(cases, i, c) {
		const char *name = json_string_value(json_object_get(c, "name"));
		double rate = json_number_value(json_object_get(c, "past_rate"));
		double lm = json_number_value(json_object_get(c, "lm"));
		double tokens = json_number_value(json_object_get(c, "tokens"));
		double timeout = json_number_value(json_object_get(c, "timeout_s"));
		const char *result = json_string_value(json_object_get(c, "result"));
		struct sl_ls_bucket b;
		uint64_t wait = 0;
		const char *got;

		sl_ls_bucket_init(&b, 5 * SEC);
		sl_ls_bucket_set_fill(&b, 5 * SEC, rate * lm);
		assert_near(b.fill, json_number_value(json_object_get(c, "fill_rate")), 1e-9, name);
		assert_near(b.capacity, json_number_value(json_object_get(c, "capacity")), 1e-9, name);
		b.available = json_number_value(json_object_get(c, "available_before"));
		if (sl_ls_bucket_take_if_available(&b, 5 * SEC, tokens)) {
			got = "admit_now";
		} else {
			switch (sl_ls_bucket_reserve(&b, 5 * SEC, tokens,
						     (uint64_t)llround(timeout * 1e9), &wait)) {
			case SL_LS_RESERVE_NOW: got = "admit_now"; break;
			case SL_LS_RESERVE_WAIT: got = "admit_after_wait"; break;
			default: got = "reject"; break;
			}
		}
		if (strcmp(got, result))
			fail_msg("%s: got %s want %s", name, got, result);
		assert_near((double)wait / 1e9, json_number_value(json_object_get(c, "wait_s")), 2e-9,
			    name);
		assert_near(b.available, json_number_value(json_object_get(c, "available_after")),
			    1e-9, name);
		n++;
	}
	assert_int_equal(n, 5);
	json_decref(root);
}

/* The vectors without a prior deficit through the engine: past_rate from
 * the ring, lm from a decision, tokens and timeout from the workload.  (A
 * negative available_before means a head already holds a reservation; the
 * engine would queue the vector's flow behind it, so those two are covered
 * by test_bucket_vectors and test_queue_timeout.) */
static void test_bucket_vectors_engine(void **state)
{
	json_t *root = load_vectors("aimd.json");
	json_t *cases = json_object_get(json_object_get(root, "token_bucket"), "bucket"), *c;
	size_t i, n = 0;

	(void)state;
	json_array_foreach(cases, i, c) {
		const char *name = json_string_value(json_object_get(c, "name"));
		double rate = json_number_value(json_object_get(c, "past_rate"));
		double lm = json_number_value(json_object_get(c, "lm"));
		double timeout = json_number_value(json_object_get(c, "timeout_s"));
		double before = json_number_value(json_object_get(c, "available_before"));
		const char *result = json_string_value(json_object_get(c, "result"));
		struct sl_ls_workload w = { .priority = 1,
					    .tokens = json_number_value(json_object_get(c, "tokens")),
					    .queue_timeout_ns = (uint64_t)llround(timeout * 1e9) };
		const uint64_t t0 = 30 * SEC + SEC / 2;
		struct sl_ls_stats st;
		struct h *h;
		uint64_t t = t0;
		int rc;

		if (before < 0)
			continue;
		h = h_new(&w, 1, false, 0);
		warm(h, (unsigned)rate);
		sl_ls_set_multiplier(h->ls, t0, lm, false);
		sl_ls_get_stats(h->ls, t0, &st);
		assert_near(st.incoming_rate, rate, 1e-9, name);
		assert_near(st.fill_rate, json_number_value(json_object_get(c, "fill_rate")), 1e-9, name);
		assert_near(st.capacity, json_number_value(json_object_get(c, "capacity")), 1e-9, name);
		/* the bucket starts empty after pass-through: wait for available_before */
		if (before > 0)
			t += (uint64_t)llround(before / st.fill_rate * 1e9);
		sl_ls_get_stats(h->ls, t, &st);
		assert_near(st.available, before, 1e-6, name);
		rc = sl_ls_arrive(h->ls, t, 100, 0, SL_LS_TOKENS_AUTO, SL_LS_NO_TIMEOUT);
		const char *want_rc = !strcmp(result, "admit_now") ? "A" :
				      !strcmp(result, "reject") ? "R" : "Q";
		const char *got_rc = rc == SL_LS_ADMITTED ? "A" : rc == SL_LS_REJECTED ? "R" : "Q";

		if (strcmp(want_rc, got_rc))
			fail_msg("%s: engine outcome %s want %s", name, got_rc, want_rc);
		sl_ls_get_stats(h->ls, t, &st);
		assert_near(st.available, json_number_value(json_object_get(c, "available_after")),
			    1e-6, name);
		if (rc == SL_LS_QUEUED) {
			assert_near((double)(st.head_admit_at - t) / 1e9,
				    json_number_value(json_object_get(c, "wait_s")), 2e-9, name);
			sl_ls_tick(h->ls, st.head_admit_at);
			assert_int_equal(h->na, 1);
			assert_int_equal(h->adm_t[0], st.head_admit_at);
		}
		h_free(h);
		n++;
	}
	assert_int_equal(n, 3);
	json_decref(root);
}

static void test_rate_window_vector(void **state)
{
	json_t *root = load_vectors("aimd.json");
	json_t *cases = json_object_get(json_object_get(root, "token_bucket"), "rate_window"), *c;
	size_t i, n = 0;

	(void)state;
	json_array_foreach(cases, i, c) {
		json_t *slots = json_object_get(c, "slots_tokens"), *v;
		struct sl_ls_ring r;
		size_t k;

		sl_ls_ring_init(&r, 7 * SEC);
		json_array_foreach(slots, k, v)
			assert_true(sl_ls_ring_add(&r, 7 * SEC + k * SEC + SEC / 3, json_number_value(v)));
		assert_int_equal(json_array_size(slots), SL_LS_RING_SLOTS);
		/* the current slot is ignored */
		assert_false(sl_ls_ring_add(&r, 37 * SEC + SEC / 3,
					    json_number_value(json_object_get(c, "current_slot_tokens_ignored"))));
		assert_near(sl_ls_ring_rate(&r, 37 * SEC + SEC / 2),
			    json_number_value(json_object_get(c, "rate_tokens_per_s")), 1e-12,
			    json_string_value(json_object_get(c, "name")));
		n++;
	}
	assert_int_equal(n, 1);
	json_decref(root);
}

/* guest (workload 0, priority 50) and subscriber (1, priority 200),
 * interleaved g1,s1,g2,s2,... while tokens are exhausted. */
static void test_wfq_order_vector(void **state)
{
	json_t *root = load_vectors("aimd.json");
	json_t *order = json_object_get(json_object_get(root, "wfq_order"), "order"), *o;
	struct sl_ls_workload w[2] = {
		{ .priority = 50, .tokens = 1, .queue_timeout_ns = SL_LS_NO_TIMEOUT },
		{ .priority = 200, .tokens = 1, .queue_timeout_ns = SL_LS_NO_TIMEOUT },
	};
	struct h *h = h_new(w, 2, false, 0);
	const uint64_t t0 = 30 * SEC + SEC / 2;
	struct sl_ls_stats st;
	size_t i, ng = 0, ns = 0, nreq = json_array_size(order);

	(void)state;
	warm(h, 10);
	sl_ls_set_multiplier(h->ls, t0, 0.1, false); /* fill 1 token/s, empty bucket */
	sl_ls_get_stats(h->ls, t0, &st);
	assert_near(st.fill_rate, 1.0, 1e-12, "fill");
	/* ids: guest k = 100 + k, subscriber k = 200 + k */
	json_array_foreach(order, i, o) {
		const char *req = json_string_value(json_object_get(o, "req"));

		*(req[0] == 'g' ? &ng : &ns) += 1;
	}
	for (size_t k = 1; k <= ng || k <= ns; k++) {
		if (k <= ng)
			assert_int_equal(arrive(h, t0, 100 + k, 0), SL_LS_QUEUED);
		if (k <= ns)
			assert_int_equal(arrive(h, t0, 200 + k, 1), SL_LS_QUEUED);
	}
	json_array_foreach(order, i, o) {
		const char *req = json_string_value(json_object_get(o, "req"));
		int wl = req[0] == 'g' ? 0 : 1;
		uint64_t id = (wl ? 200 : 100) + (uint64_t)atoi(req + 1);
		json_t *vft = json_object_get(o, "vft");
		struct sl_ls_workload_stats ws;

		/* it is the head now */
		sl_ls_get_stats(h->ls, t0 + i * SEC, &st);
		assert_true(st.head);
		if (st.head_id != id)
			fail_msg("step %zu: head %llu want %s", i, (unsigned long long)st.head_id, req);
		if (json_is_null(vft))
			assert_true(isnan(st.head_vft));
		else
			assert_near(st.head_vft, json_number_value(vft), 1e-12, req);
		/* admitted one second (1 token at 1 token/s) after the previous */
		assert_int_equal(st.head_admit_at, t0 + (i + 1) * SEC);
		sl_ls_tick(h->ls, t0 + (i + 1) * SEC);
		check(h);
		assert_int_equal(h->na, i + 1);
		assert_int_equal(h->adm[i], id);
		assert_int_equal(h->adm_t[i], t0 + (i + 1) * SEC);
		assert_int_equal(sl_ls_get_workload_stats(h->ls, t0, (size_t)wl, &ws), 0);
		assert_near(ws.flow_vt, json_number_value(json_object_get(o, "flow_vt_after")), 1e-12,
			    req);
	}
	assert_int_equal(nreq, 12);
	sl_ls_get_stats(h->ls, t0 + 20 * SEC, &st);
	assert_false(st.head);
	assert_int_equal(st.waiting, 0);
	h_free(h);
	json_decref(root);
}

/* ---- focused tests ------------------------------------------------------------- */

static void test_bootstrap_and_pass_through(void **state)
{
	struct h *h = h_new(NULL, 0, false, 0);
	struct sl_ls_stats st;

	(void)state;
	sl_ls_get_stats(h->ls, 0, &st);
	assert_true(st.pass_through);
	assert_true(st.bootstrapping);
	/* a throttle decision during bootstrap does not bite */
	sl_ls_set_multiplier(h->ls, SEC, 0.0, false);
	for (uint64_t i = 0; i < 1000; i++)
		assert_int_equal(arrive(h, SEC + i * MS, i, -1), SL_LS_ADMITTED);
	sl_ls_get_stats(h->ls, 29 * SEC, &st);
	assert_true(st.bootstrapping);
	assert_false(st.pass_through);
	/* after 30 s: lm 0 ⇒ fill 0 ⇒ reject */
	sl_ls_tick(h->ls, 30 * SEC);
	sl_ls_get_stats(h->ls, 30 * SEC, &st);
	assert_false(st.bootstrapping);
	assert_near(st.fill_rate, 0, 0, "fill");
	assert_int_equal(arrive(h, 30 * SEC + 1, 5000, -1), SL_LS_REJECTED);
	/* pass-through: everything admitted, no tokens taken */
	sl_ls_set_multiplier(h->ls, 31 * SEC, 0.3, true);
	for (uint64_t i = 0; i < 1000; i++)
		assert_int_equal(arrive(h, 31 * SEC + i, 6000 + i, -1), SL_LS_ADMITTED);
	sl_ls_get_stats(h->ls, 32 * SEC, &st);
	assert_true(st.pass_through);
	assert_near(st.fill_rate, 0, 0, "fill");
	assert_near(st.available, 0, 0, "available");
	assert_true(isnan(st.load_multiplier));
	/* an invalid multiplier is pass-through too */
	sl_ls_set_multiplier(h->ls, 33 * SEC, 0.5, false);
	sl_ls_set_multiplier(h->ls, 33 * SEC, NAN, false);
	sl_ls_get_stats(h->ls, 33 * SEC, &st);
	assert_true(st.pass_through);
	h_free(h);
}

static void test_bootstrap_end_grants_one_second(void **state)
{
	struct h *h = h_new(NULL, 0, false, 0);
	struct sl_ls_stats st;

	(void)state;
	warm(h, 20);
	sl_ls_set_multiplier(h->ls, 29 * SEC, 0.5, false);
	sl_ls_tick(h->ls, 30 * SEC);
	sl_ls_get_stats(h->ls, 30 * SEC, &st);
	assert_false(st.bootstrapping);
	assert_near(st.fill_rate, 10.0, 1e-9, "fill: 0.5 × 20/s");
	assert_near(st.available, 10.0, 1e-9, "1 s of tokens");
	h_free(h);
}

static void test_idle_rebootstrap(void **state)
{
	struct h *h = h_new(NULL, 0, false, 0);
	struct sl_ls_stats st;

	(void)state;
	warm(h, 10);
	sl_ls_set_multiplier(h->ls, 30 * SEC + SEC / 2, 0.0, false);
	assert_int_equal(arrive(h, 31 * SEC, 1, -1), SL_LS_REJECTED);
	/* 29.5 s later the window is not completely stale */
	assert_int_equal(arrive(h, 60 * SEC + SEC / 2, 2, -1), SL_LS_REJECTED);
	/* 31+ s with no arrival: fail open again for 30 s */
	assert_int_equal(arrive(h, 92 * SEC, 3, -1), SL_LS_ADMITTED);
	sl_ls_get_stats(h->ls, 92 * SEC, &st);
	assert_true(st.bootstrapping);
	assert_int_equal(arrive(h, 121 * SEC, 4, -1), SL_LS_ADMITTED);
	sl_ls_tick(h->ls, 122 * SEC);
	sl_ls_get_stats(h->ls, 122 * SEC, &st);
	assert_false(st.bootstrapping);
	assert_int_equal(arrive(h, 122 * SEC, 5, -1), SL_LS_REJECTED);
	h_free(h);
}

static void test_bucket_fill_and_capacity(void **state)
{
	struct h *h = h_new(NULL, 0, false, 0);
	struct sl_ls_stats st;
	const uint64_t t0 = 30 * SEC + SEC / 2;

	(void)state;
	warm(h, 100);
	sl_ls_set_multiplier(h->ls, t0, 0.5, false);
	sl_ls_get_stats(h->ls, t0, &st);
	assert_near(st.incoming_rate, 100, 1e-9, "rate");
	assert_near(st.fill_rate, 50, 1e-9, "fill");
	assert_near(st.capacity, 50, 1e-9, "capacity = 1 s of fill");
	assert_near(st.available, 0, 0, "starts empty after pass-through");
	sl_ls_get_stats(h->ls, t0 + SEC / 10, &st);
	assert_near(st.available, 5, 1e-9, "accrual");
	sl_ls_get_stats(h->ls, t0 + 10 * SEC, &st);
	assert_near(st.available, 50, 1e-9, "capped");
	/* a burst takes the capacity: 49 admitted strictly (available > tokens) */
	uint64_t t = t0 + 10 * SEC;
	int admitted = 0;

	for (uint64_t i = 0; i < 60; i++)
		if (sl_ls_arrive(h->ls, t, i, -1, 1.0, 0) == SL_LS_ADMITTED)
			admitted++;
	assert_int_equal(admitted, 50); /* the 50th: available 1 = tokens, wait 0 */
	/* the fill rate is a snapshot: arrivals do not change it */
	sl_ls_get_stats(h->ls, t, &st);
	assert_near(st.fill_rate, 50, 1e-9, "snapshot");
	/* a new decision credits at the old rate first */
	sl_ls_set_multiplier(h->ls, t + SEC / 10, 0.2, false);
	sl_ls_get_stats(h->ls, t + SEC / 10, &st);
	assert_near(st.available, 5, 1e-6, "credited at old rate");
	assert_true(st.fill_rate > 0 && st.fill_rate < 50);
	assert_near(st.capacity, st.fill_rate, 0, "capacity");
	h_free(h);
}

static void test_zero_fill_rejects(void **state)
{
	struct h *h = h_new(NULL, 0, false, 0);

	(void)state;
	warm(h, 10);
	sl_ls_set_multiplier(h->ls, 30 * SEC + SEC / 2, 0.0, false);
	assert_int_equal(arrive(h, 31 * SEC, 1, -1), SL_LS_REJECTED);
	sl_ls_set_multiplier(h->ls, 31 * SEC, -3.0, false); /* clamped at 0 */
	assert_int_equal(arrive(h, 31 * SEC, 2, -1), SL_LS_REJECTED);
	h_free(h);
}

static void test_queue_timeout(void **state)
{
	struct sl_ls_workload w[2] = {
		{ .priority = 1, .tokens = 1, .queue_timeout_ns = 300 * MS },
		{ .priority = 1, .tokens = 1, .queue_timeout_ns = 0 },
	};
	struct h *h = h_new(w, 2, false, 0);
	const uint64_t t0 = 30 * SEC + SEC / 2;
	struct sl_ls_stats st;

	(void)state;
	warm(h, 10);
	sl_ls_set_multiplier(h->ls, t0, 1.0, false); /* fill 10/s: 100 ms per token */
	/* timeout 0: admit only if available now */
	assert_int_equal(arrive(h, t0, 1, 1), SL_LS_REJECTED);
	/* waits of 100, 200, 300 ms fit 300 ms; the head of 400 would not */
	assert_int_equal(arrive(h, t0, 10, 0), SL_LS_QUEUED);
	assert_int_equal(arrive(h, t0, 11, 0), SL_LS_QUEUED);
	assert_int_equal(arrive(h, t0, 12, 0), SL_LS_QUEUED);
	assert_int_equal(arrive(h, t0, 13, 0), SL_LS_QUEUED);
	sl_ls_tick(h->ls, t0 + SEC);
	check(h);
	assert_int_equal(h->na, 3);
	assert_int_equal(h->adm[0], 10);
	assert_int_equal(h->adm_t[0], t0 + 100 * MS);
	assert_int_equal(h->adm_t[1], t0 + 200 * MS);
	assert_int_equal(h->adm_t[2], t0 + 300 * MS);
	/* 13 became head at 300 ms with 0 ms left < 100 ms wait: rejected then */
	assert_int_equal(h->nr, 1);
	assert_int_equal(h->rej[0], 13);
	assert_int_equal(h->rej_t[0], t0 + 300 * MS);
	sl_ls_get_stats(h->ls, t0 + SEC, &st);
	assert_int_equal(st.waiting, 0);
	/* a waiting non-head flow expires at its deadline: a head that needs 1 s
	 * (10 tokens) blocks it */
	uint64_t t1 = t0 + 2 * SEC;

	sl_ls_get_stats(h->ls, t1, &st);
	assert_near(st.available, 10, 1e-9, "refilled");
	assert_int_equal(sl_ls_arrive(h->ls, t1, 20, -1, 19.0, SL_LS_NO_TIMEOUT), SL_LS_QUEUED);
	assert_int_equal(arrive(h, t1 + 50 * MS, 21, 0), SL_LS_QUEUED);
	sl_ls_tick(h->ls, t1 + 349 * MS);
	assert_int_equal(h->nr, 1);
	sl_ls_tick(h->ls, t1 + 351 * MS);
	assert_int_equal(h->nr, 2);
	assert_int_equal(h->rej[1], 21);
	assert_int_equal(h->rej_t[1], t1 + 350 * MS);
	sl_ls_tick(h->ls, t1 + 5 * SEC);
	assert_int_equal(h->adm[h->na - 1], 20);
	assert_int_equal(h->adm_t[h->na - 1], t1 + 900 * MS); /* (19 − 10) / 10 */
	/* the client's deadline minus the 10 ms margin also bounds the wait */
	uint64_t t2 = t1 + 10 * SEC; /* bucket full: 10 */

	/* 10 tokens with 10 available: not strictly more, but the head's wait is 0 */
	assert_int_equal(sl_ls_arrive(h->ls, t2, 29, -1, 10.0, SL_LS_NO_TIMEOUT), SL_LS_ADMITTED);
	t2 += 2 * SEC;
	assert_int_equal(sl_ls_arrive(h->ls, t2, 30, -1, 15.0, SL_LS_NO_TIMEOUT), SL_LS_QUEUED);
	assert_int_equal(sl_ls_arrive(h->ls, t2, 31, -1, 1.0, 110 * MS), SL_LS_QUEUED);
	sl_ls_tick(h->ls, t2 + 99 * MS);
	assert_int_equal(h->rej[h->nr - 1], 21);
	sl_ls_tick(h->ls, t2 + 100 * MS);
	assert_int_equal(h->rej[h->nr - 1], 31);
	sl_ls_tick(h->ls, t2 + 10 * SEC);
	h_free(h);
}

/* Priorities 1 and 4 under saturation: admitted 1 : 4 within 10 %. */
static void test_wfq_ratio_under_saturation(void **state)
{
	struct sl_ls_workload w[2] = {
		{ .priority = 1, .tokens = 0, .queue_timeout_ns = 2 * SEC },
		{ .priority = 4, .tokens = 0, .queue_timeout_ns = 2 * SEC },
	};
	struct h *h = h_new(w, 2, false, 0);
	const uint64_t t0 = 30 * SEC + SEC / 2;
	struct sl_ls_workload_stats w0, w1;
	uint64_t id = 1;

	(void)state;
	warm(h, 200);
	sl_ls_set_multiplier(h->ls, t0, 0.5, false); /* 100 tokens/s for 200/s demand */
	for (uint64_t t = t0; t < t0 + 60 * SEC; t += 5 * MS) {
		(void)arrive(h, t, id++, 0);
		(void)arrive(h, t, id++, 1);
		if ((id & 511) == 1)
			check(h);
	}
	sl_ls_tick(h->ls, t0 + 70 * SEC);
	assert_int_equal(sl_ls_get_workload_stats(h->ls, 0, 0, &w0), 0);
	assert_int_equal(sl_ls_get_workload_stats(h->ls, 0, 1, &w1), 0);
	/* minus the bootstrap-free default workload: all warm-up went to -1 */
	double a0 = (double)w0.admitted, a1 = (double)w1.admitted;
	double ratio = a1 / a0;

	print_message("WFQ 1:4 -> admitted %g : %g (ratio %.3f), rejected %llu : %llu\n", a0, a1,
		      ratio, (unsigned long long)w0.rejected, (unsigned long long)w1.rejected);
	assert_true(ratio > 3.6 && ratio < 4.4);
	/* total admitted ≈ fill × time (+ capacity) */
	assert_true(a0 + a1 > 5900 && a0 + a1 < 6200);
	assert_int_equal(w0.waiting + w1.waiting, 0);
	h_free(h);
}

/* A workload that comes back after being idle starts at the scheduler's
 * virtual time (Aperture deletes a flow when it empties), not where it
 * left off: it shares with the backlogged one at once, it does not get a
 * burst of the credit it banked while away. */
static void test_wfq_idle_workload_returns_fair(void **state)
{
	struct sl_ls_workload w[2] = {
		{ .priority = 1, .tokens = 0, .queue_timeout_ns = 5 * SEC },
		{ .priority = 1, .tokens = 0, .queue_timeout_ns = 5 * SEC },
	};
	struct h *h = h_new(w, 2, false, 0);
	const uint64_t t0 = 30 * SEC + SEC / 2, A = 10000000;
	uint64_t id = 1, a_id = A, t, t3;
	size_t first, a_first = 0, n = 0;

	(void)state;
	warm(h, 200);
	sl_ls_set_multiplier(h->ls, t0, 0.5, false); /* 100 tokens/s */
	/* Both backlogged for 5 s, then B alone for 20 s. */
	for (t = t0; t < t0 + 5 * SEC; t += 10 * MS) {
		(void)arrive(h, t, a_id++, 0);
		(void)arrive(h, t, id++, 1);
	}
	for (; t < t0 + 25 * SEC; t += 5 * MS)
		(void)arrive(h, t, id++, 1);
	/* A comes back with 40 at once while B keeps up its backlog. */
	t3 = t;
	first = h->na;
	for (int i = 0; i < 40; i++)
		(void)arrive(h, t3, a_id++, 0);
	for (; t < t3 + 3 * SEC; t += 5 * MS)
		(void)arrive(h, t, id++, 1);
	/* The first 40 admissions after A's return: about half A's. */
	for (size_t i = first; i < h->na && n < 40; i++) {
		if (h->adm_t[i] < t3)
			continue;
		n++;
		if (h->adm[i] >= A && h->adm[i] < WARM_ID)
			a_first++;
	}
	print_message("after an idle spell: %zu of the first %zu admissions went to the returning workload\n",
		      a_first, n);
	assert_int_equal(n, 40);
	assert_true(a_first >= 12 && a_first <= 28);
	h_free(h);
}

/* Heavier flows consume share in proportion to their tokens. */
static void test_wfq_tokens_weight(void **state)
{
	struct sl_ls_workload w[2] = {
		{ .priority = 1, .tokens = 1, .queue_timeout_ns = 2 * SEC },
		{ .priority = 1, .tokens = 3, .queue_timeout_ns = 2 * SEC },
	};
	struct h *h = h_new(w, 2, false, 0);
	const uint64_t t0 = 30 * SEC + SEC / 2;
	struct sl_ls_workload_stats w0, w1;
	uint64_t id = 1;

	(void)state;
	warm(h, 200);
	sl_ls_set_multiplier(h->ls, t0, 0.5, false);
	for (uint64_t t = t0; t < t0 + 60 * SEC; t += 5 * MS) {
		(void)arrive(h, t, id++, 0);
		(void)arrive(h, t, id++, 1);
	}
	sl_ls_tick(h->ls, t0 + 70 * SEC);
	sl_ls_get_workload_stats(h->ls, 0, 0, &w0);
	sl_ls_get_workload_stats(h->ls, 0, 1, &w1);
	/* equal token shares: flows 3 : 1 */
	double r = w1.accepted_tokens / w0.accepted_tokens;

	assert_true(r > 0.9 && r < 1.1);
	h_free(h);
}

static void test_latency_based_tokens(void **state)
{
	struct sl_ls_workload w[2] = {
		{ .priority = 1, .tokens = 5, .queue_timeout_ns = SL_LS_NO_TIMEOUT },
		{ .priority = 1, .tokens = 0, .queue_timeout_ns = SL_LS_NO_TIMEOUT },
	};
	struct h *h = h_new(w, 2, true, 0);
	struct h *off = h_new(w, 2, false, 0);
	struct sl_ls_workload_stats ws;
	struct sl_ls_stats st;

	(void)state;
	/* no data: configured tokens, else 1 */
	sl_ls_get_workload_stats(h->ls, 0, 0, &ws);
	assert_true(isnan(ws.token_estimate));
	assert_near(ws.tokens, 5, 0, "configured");
	sl_ls_get_workload_stats(h->ls, 0, 1, &ws);
	assert_near(ws.tokens, 1, 0, "unset ⇒ 1");
	/* mean duration in ms */
	assert_int_equal(sl_ls_complete(h->ls, SEC, 0, 100 * MS), 0);
	assert_int_equal(sl_ls_complete(h->ls, 2 * SEC, 0, 300 * MS), 0);
	assert_int_equal(sl_ls_complete(h->ls, 3 * SEC, 0, 200 * MS), 0);
	assert_int_equal(sl_ls_complete(h->ls, 3 * SEC, 7, 200 * MS), -EINVAL);
	sl_ls_get_workload_stats(h->ls, 3 * SEC, 0, &ws);
	assert_near(ws.token_estimate, 200, 1e-9, "mean ms");
	assert_near(ws.tokens, 200, 1e-9, "estimate overrides configured");
	assert_int_equal(ws.completions, 3);
	/* off: estimate shown, configured tokens used */
	sl_ls_complete(off->ls, SEC, 0, 100 * MS);
	sl_ls_get_workload_stats(off->ls, SEC, 0, &ws);
	assert_near(ws.token_estimate, 100, 1e-9, "estimate");
	assert_near(ws.tokens, 5, 0, "off");
	/* the arrival takes the estimate (bootstrap: counted as accepted) */
	assert_int_equal(arrive(h, 4 * SEC, 1, 0), SL_LS_ADMITTED);
	sl_ls_get_stats(h->ls, 4 * SEC, &st);
	assert_near(st.accepted_tokens, 200, 1e-9, "tokens = estimate");
	/* an explicit override wins */
	assert_int_equal(sl_ls_arrive(h->ls, 4 * SEC, 2, 0, 7.0, SL_LS_NO_TIMEOUT), SL_LS_ADMITTED);
	sl_ls_get_stats(h->ls, 4 * SEC, &st);
	assert_near(st.accepted_tokens, 207, 1e-9, "override");
	/* 30 min window: a minute later a new sample; 30 min after the old
	 * ones they are gone */
	sl_ls_complete(h->ls, 20 * 60 * SEC, 0, 1000 * MS);
	sl_ls_get_workload_stats(h->ls, 20 * 60 * SEC, 0, &ws);
	assert_near(ws.token_estimate, 400, 1e-9, "4 samples");
	sl_ls_get_workload_stats(h->ls, 31 * 60 * SEC, 0, &ws);
	assert_near(ws.token_estimate, 1000, 1e-9, "old samples out of the window");
	sl_ls_get_workload_stats(h->ls, 51 * 60 * SEC, 0, &ws);
	assert_true(isnan(ws.token_estimate));
	assert_near(ws.tokens, 5, 0, "back to configured");
	h_free(h);
	h_free(off);
}

static void test_counters(void **state)
{
	struct sl_ls_workload w = { .priority = 1, .tokens = 2, .queue_timeout_ns = 0 };
	struct h *h = h_new(&w, 1, false, 0);
	const uint64_t t0 = 30 * SEC + SEC / 2;
	struct sl_ls_workload_stats ws;
	struct sl_ls_stats st;
	double acc, rej;

	(void)state;
	warm(h, 10); /* 300 × 1 token admitted in bootstrap */
	sl_ls_take_period(h->ls, &acc, &rej);
	assert_near(acc, 300, 0, "warm accepted");
	assert_near(rej, 0, 0, "warm rejected");
	sl_ls_set_multiplier(h->ls, t0, 1.0, false); /* fill 10/s */
	/* 1 s later: 10 tokens; 2-token flows: 4 admitted (10>2,8>2,6>2,4>2),
	 * then available 2 = tokens: wait 0 ⇒ admitted, then rejected */
	for (uint64_t i = 0; i < 8; i++)
		(void)arrive(h, t0 + SEC, i, 0);
	sl_ls_take_period(h->ls, &acc, &rej);
	assert_near(acc, 10, 0, "accepted tokens");
	assert_near(rej, 6, 0, "rejected tokens");
	sl_ls_take_period(h->ls, &acc, &rej);
	assert_near(acc + rej, 0, 0, "reset");
	sl_ls_get_workload_stats(h->ls, t0 + SEC, 0, &ws);
	assert_int_equal(ws.admitted, 5);
	assert_int_equal(ws.rejected, 3);
	assert_int_equal(ws.deferred, 0);
	assert_near(ws.accepted_tokens, 10, 0, "wl acc");
	assert_near(ws.rejected_tokens, 6, 0, "wl rej");
	/* tokens 0: admitted, not counted */
	assert_int_equal(sl_ls_arrive(h->ls, t0 + SEC, 99, 0, 0.0, SL_LS_NO_TIMEOUT), SL_LS_ADMITTED);
	sl_ls_get_stats(h->ls, t0 + SEC, &st);
	assert_near(st.accepted_tokens, 310, 0, "cumulative");
	assert_near(st.rejected_tokens, 6, 0, "cumulative rej");
	assert_near(st.incoming_tokens, 316, 0, "incoming");
	assert_int_equal(st.admitted, 306);
	assert_int_equal(st.rejected, 3);
	/* deferred counts QUEUED flows */
	sl_ls_get_workload_stats(h->ls, t0 + SEC, 1, &ws); /* default */
	assert_int_equal(sl_ls_arrive(h->ls, t0 + 2 * SEC, 50, -1, 1.0, SL_LS_NO_TIMEOUT),
			 SL_LS_ADMITTED);
	sl_ls_get_stats(h->ls, t0 + 2 * SEC, &st);
	assert_int_equal(sl_ls_arrive(h->ls, t0 + 2 * SEC, 51, -1, st.available + 1,
				      SL_LS_NO_TIMEOUT), SL_LS_QUEUED);
	assert_int_equal(sl_ls_workload_count(h->ls), 2);
	assert_int_equal(sl_ls_get_workload_stats(h->ls, 0, 1, &ws), 0);
	assert_int_equal(ws.deferred, 1);
	assert_int_equal(ws.waiting, 1);
	assert_int_equal(sl_ls_get_workload_stats(h->ls, 0, 2, &ws), -ENOENT);
	h_free(h);
}

static void test_pass_through_drains_queue(void **state)
{
	struct sl_ls_workload w[2] = {
		{ .priority = 1, .tokens = 1, .queue_timeout_ns = SL_LS_NO_TIMEOUT },
		{ .priority = 3, .tokens = 1, .queue_timeout_ns = SL_LS_NO_TIMEOUT },
	};
	struct h *h = h_new(w, 2, false, 0);
	const uint64_t t0 = 30 * SEC + SEC / 2;
	struct sl_ls_stats st;

	(void)state;
	warm(h, 10);
	sl_ls_set_multiplier(h->ls, t0, 0.1, false);
	for (uint64_t i = 0; i < 10; i++)
		assert_int_equal(arrive(h, t0, i, (int)(i % 2)), SL_LS_QUEUED);
	h->check_in_cb = true;
	sl_ls_set_multiplier(h->ls, t0 + SEC / 2, 0, true);
	assert_int_equal(h->na, 10);
	assert_int_equal(h->adm[0], 0); /* the head first, then WFQ order */
	for (size_t i = 0; i < 10; i++)
		assert_int_equal(h->adm_t[i], t0 + SEC / 2);
	sl_ls_get_stats(h->ls, t0 + SEC / 2, &st);
	assert_int_equal(st.waiting, 0);
	assert_near(st.available, 0, 0, "pass-through empties the bucket");
	/* back to throttling: starts empty */
	sl_ls_set_multiplier(h->ls, t0 + SEC, 0.1, false);
	sl_ls_get_stats(h->ls, t0 + SEC, &st);
	assert_near(st.available, 0, 1e-12, "empty");
	h_free(h);
}

static void test_stale_decision(void **state)
{
	struct h *h = h_new(NULL, 0, false, SL_LS_DECISION_TTL_NS);
	const uint64_t t0 = 30 * SEC + SEC / 2;
	struct sl_ls_stats st;

	(void)state;
	warm(h, 10);
	sl_ls_set_multiplier(h->ls, t0, 0.0, false);
	for (uint64_t s = 1; s <= 50; s++)
		assert_int_equal(arrive(h, t0 + s * SEC, 100 + s, -1), SL_LS_REJECTED);
	assert_int_equal(arrive(h, t0 + 50 * SEC + 1, 2, -1), SL_LS_ADMITTED);
	sl_ls_get_stats(h->ls, t0 + 50 * SEC + 1, &st);
	assert_true(st.pass_through);
	h_free(h);
}

/* Aperture keeps a decision for 5 of its control periods: with a 20 s
 * control_period a throttle decision stays 100 s, not the 50 s of the
 * default period (after which the scheduler would go pass-through every
 * period). */
static void test_decision_ttl_from_period(void **state)
{
	struct h *h;
	const uint64_t t0 = 30 * SEC + SEC / 2;
	struct sl_ls_stats st;

	(void)state;
	assert_int_equal(sl_ls_decision_ttl_ns(10 * SEC), 50 * SEC);
	assert_int_equal(sl_ls_decision_ttl_ns(20 * SEC), 100 * SEC);
	assert_int_equal(sl_ls_decision_ttl_ns(0), SL_LS_DECISION_TTL_NS);
	h = h_new(NULL, 0, false, sl_ls_decision_ttl_ns(20 * SEC));
	warm(h, 10);
	sl_ls_set_multiplier(h->ls, t0, 0.0, false);
	for (uint64_t s = 1; s <= 100; s++)
		assert_int_equal(arrive(h, t0 + s * SEC, 100 + s, -1), SL_LS_REJECTED);
	assert_int_equal(arrive(h, t0 + 100 * SEC + 1, 2, -1), SL_LS_ADMITTED);
	sl_ls_get_stats(h->ls, t0 + 100 * SEC + 1, &st);
	assert_true(st.pass_through);
	h_free(h);
}

static void test_cancel_and_reentrancy(void **state)
{
	struct h *h = h_new(NULL, 0, false, 0);
	const uint64_t t0 = 30 * SEC + SEC / 2;
	struct sl_ls_stats st;

	(void)state;
	warm(h, 10);
	sl_ls_set_multiplier(h->ls, t0, 0.1, false); /* 1 token/s */
	for (uint64_t i = 1; i <= 6; i++)
		assert_int_equal(arrive(h, t0, i, -1), SL_LS_QUEUED);
	/* cancel the head: its reservation is refunded, the next reserves */
	assert_int_equal(sl_ls_cancel(h->ls, t0 + SEC / 2, 1), 0);
	check(h);
	sl_ls_get_stats(h->ls, t0 + SEC / 2, &st);
	assert_int_equal(st.head_id, 2);
	assert_int_equal(st.head_admit_at, t0 + SEC);
	assert_int_equal(sl_ls_cancel(h->ls, t0 + SEC / 2, 4), 0);
	assert_int_equal(sl_ls_cancel(h->ls, t0 + SEC / 2, 4), -ENOENT);
	check(h);
	/* admitting 2 cancels 3 from the callback; 5 follows */
	h->cancel_in_cb = true;
	h->check_in_cb = true;
	sl_ls_tick(h->ls, t0 + SEC);
	assert_int_equal(h->na, 1);
	assert_int_equal(h->adm[0], 2);
	sl_ls_get_stats(h->ls, t0 + SEC, &st);
	assert_int_equal(st.head_id, 5);
	assert_int_equal(st.waiting, 2);
	h->cancel_in_cb = false;
	assert_int_equal(sl_ls_tick(h->ls, t0 + 10 * SEC), UINT64_MAX);
	assert_int_equal(h->na, 3);
	assert_int_equal(h->adm[1], 5);
	assert_int_equal(h->adm[2], 6);
	assert_int_equal(h->adm_t[2], t0 + 3 * SEC);
	h_free(h);
}

static void test_validation_and_config(void **state)
{
	struct sl_ls_workload bad = { .priority = 0, .tokens = 1, .queue_timeout_ns = 0 };
	struct sl_ls_params p = { .workloads = &bad, .n_workloads = 1,
				  .default_workload = { .priority = 1 } };
	struct sl_ls *ls = NULL;
	char why[128] = "";

	(void)state;
	assert_int_equal(sl_ls_create(&ls, &p, 0, NULL, NULL, NULL, why, sizeof(why)), -EINVAL);
	assert_null(ls);
	assert_non_null(strstr(why, "priority"));
	bad.priority = 1;
	bad.tokens = -1;
	assert_int_equal(sl_ls_create(&ls, &p, 0, NULL, NULL, NULL, why, sizeof(why)), -EINVAL);

	struct sl_workload_cfg wc[1];
	struct sl_policy_cfg cfg;

	memset(wc, 0, sizeof(wc));
	memset(&cfg, 0, sizeof(cfg));
	wc[0].params = (struct sl_workload_params){ .priority = 4, .tokens = 0, .tokens_set = false,
						    .queue_timeout_ns = 2 * SEC,
						    .queue_timeout_set = true };
	cfg.workloads = wc;
	cfg.n_workloads = 1;
	cfg.default_params = (struct sl_workload_params){ .priority = 1, .tokens = 3,
							  .tokens_set = true,
							  .queue_timeout_ns = SL_QUEUE_TIMEOUT_UNSET };
	cfg.workload_latency_based_tokens = true;
	assert_int_equal(sl_ls_create_for_policy(&ls, &cfg, 0, NULL, NULL, NULL, why, sizeof(why)),
			 0);
	struct sl_ls_workload_stats ws;

	assert_int_equal(sl_ls_workload_count(ls), 2);
	sl_ls_get_workload_stats(ls, 0, 0, &ws);
	assert_near(ws.priority, 4, 0, "priority");
	assert_near(ws.tokens, 1, 0, "tokens unset");
	assert_int_equal(ws.queue_timeout_ns, 2 * SEC);
	sl_ls_get_workload_stats(ls, 0, 1, &ws);
	assert_near(ws.tokens, 3, 0, "default tokens");
	assert_int_equal(ws.queue_timeout_ns, SL_LS_NO_TIMEOUT);
	sl_ls_complete(ls, SEC, -1, 40 * MS);
	sl_ls_get_workload_stats(ls, SEC, 1, &ws);
	assert_near(ws.tokens, 40, 1e-9, "latency based on");
	assert_int_equal(sl_ls_arrive(ls, SEC, 1, 1, 1.0, SL_LS_NO_TIMEOUT), -EINVAL);
	assert_int_equal(sl_ls_arrive(ls, SEC, 1, -2, 1.0, SL_LS_NO_TIMEOUT), -EINVAL);
	assert_int_equal(sl_ls_arrive(ls, SEC, 1, 0, NAN, SL_LS_NO_TIMEOUT), -EINVAL);
	assert_int_equal(sl_ls_arrive(ls, SEC, 1, 0, -2.0, SL_LS_NO_TIMEOUT), -EINVAL);
	assert_int_equal(sl_ls_check(ls, why, sizeof(why)), 0);
	sl_ls_free(ls);
	sl_ls_free(NULL);
}


/* ---- controlled delay ------------------------------------------------------------ */

#define DELAY_WL(prio) { .priority = (prio), .tokens = 1, .queue_timeout_ns = 5 * SEC, \
			 .delay_target_ns = 100 * MS, .delay_interval_ns = SEC }

/* A burst that drains within the interval waits, all of it. */
static void test_delay_burst_waits(void **state)
{
	struct sl_ls_workload w[1] = { DELAY_WL(1) };
	struct h *h = h_new(w, 1, false, 0);
	const uint64_t t0 = 30 * SEC + SEC / 2;

	(void)state;
	warm(h, 10);
	sl_ls_set_multiplier(h->ls, t0, 1.0, false); /* fill 10/s: 100 ms per token */
	for (uint64_t id = 1; id <= 9; id++)
		assert_int_equal(arrive(h, t0, id, 0), SL_LS_QUEUED);
	sl_ls_tick(h->ls, t0 + 3 * SEC);
	check(h);
	/* the last waits 900 ms: past the target, but the queue never stood
	 * for the interval */
	assert_int_equal(h->nr, 0);
	assert_int_equal(h->na, 9);
	assert_int_equal(h->adm_t[8], t0 + 900 * MS);
	h_free(h);
}

/* Twice the fill rate for 10 s: once the queue has stood for the
 * interval, whoever waited past the target is shed, all but the newest,
 * and the service rate is kept (the bucket still admits fill x time). */
static void run_standing(struct h *h, uint64_t t0, uint64_t *arrival, uint64_t n)
{
	for (uint64_t id = 1; id <= n; id++) {
		arrival[id] = t0 + (id - 1) * 50 * MS;
		(void)arrive(h, arrival[id], id, 0);
	}
	sl_ls_tick(h->ls, t0 + 20 * SEC);
	check(h);
}

static void test_delay_standing_queue_is_shed(void **state)
{
	struct sl_ls_workload w[1] = { DELAY_WL(1) };
	struct h *h = h_new(w, 1, false, 0);
	const uint64_t t0 = 30 * SEC + SEC / 2, n = 200;
	uint64_t arrival[201], max_wait_late = 0, shed = 0;
	struct sl_ls_stats st;

	(void)state;
	warm(h, 10);
	sl_ls_set_multiplier(h->ls, t0, 1.0, false);
	run_standing(h, t0, arrival, n);
	assert_int_equal(h->na + h->nr, n);
	for (size_t i = 0; i < h->nr; i++) {
		uint64_t id = h->rej[i];

		assert_int_equal(h->rej_why[i], SL_LS_SHED);
		shed++;
		/* never before the queue stood, never one younger than the target */
		assert_true(h->rej_t[i] >= t0 + SEC);
		assert_true(h->rej_t[i] - arrival[id] >= 100 * MS);
	}
	for (size_t i = 0; i < h->na; i++) {
		uint64_t wait = h->adm_t[i] - arrival[h->adm[i]];

		/* before it stood, the backlog grew for one interval */
		assert_true(wait <= SEC + 100 * MS);
		if (arrival[h->adm[i]] >= t0 + 2 * SEC && wait > max_wait_late)
			max_wait_late = wait;
	}
	print_message("standing queue: %zu admitted, %llu shed, longest wait once shed %.0f ms\n",
		      h->na, (unsigned long long)shed, max_wait_late / 1e6);
	/* once shedding, the queue holds at most one past the target and the
	 * head's reservation: two tokens' time and the target */
	assert_true(max_wait_late <= 300 * MS);
	assert_true(shed >= 80);
	/* the bucket's rate is kept: 10/s over the 10 s of arrivals, plus what
	 * was queued at the end */
	assert_true(h->na >= 95);
	sl_ls_get_stats(h->ls, t0 + 20 * SEC, &st);
	assert_int_equal(st.shed, shed);
	assert_int_equal(st.rejected, shed);
	h_free(h);
}

/* delay_target 0 is Aperture's scheduler: the same overload is only ever
 * refused by its deadline, the standing queue waits it out. */
static void test_delay_zero_is_aperture(void **state)
{
	struct sl_ls_workload w[1] = { { .priority = 1, .tokens = 1, .queue_timeout_ns = 5 * SEC } };
	struct h *h = h_new(w, 1, false, 0);
	const uint64_t t0 = 30 * SEC + SEC / 2, n = 200;
	uint64_t arrival[201], max_wait = 0;
	struct sl_ls_stats st;

	(void)state;
	warm(h, 10);
	sl_ls_set_multiplier(h->ls, t0, 1.0, false);
	run_standing(h, t0, arrival, n);
	for (size_t i = 0; i < h->nr; i++)
		assert_int_equal(h->rej_why[i], SL_LS_TIME_OUT);
	for (size_t i = 0; i < h->na; i++)
		if (h->adm_t[i] - arrival[h->adm[i]] > max_wait)
			max_wait = h->adm_t[i] - arrival[h->adm[i]];
	assert_true(max_wait > 4 * SEC);
	sl_ls_get_stats(h->ls, t0 + 20 * SEC, &st);
	assert_int_equal(st.shed, 0);
	h_free(h);
}

/* A light workload beside a heavy one: its queue never stands (one flow
 * at a time), so none of it is shed, while the heavy one's is. */
static void test_delay_light_workload_never_shed(void **state)
{
	struct sl_ls_workload w[2] = { DELAY_WL(1), DELAY_WL(1) };
	struct h *h = h_new(w, 2, false, 0);
	const uint64_t t0 = 30 * SEC + SEC / 2;
	struct sl_ls_workload_stats heavy, light;
	uint64_t id = 1, light_ids = 0;

	(void)state;
	warm(h, 10);
	sl_ls_set_multiplier(h->ls, t0, 1.0, false);
	for (uint64_t t = t0; t < t0 + 20 * SEC; t += 25 * MS) {
		(void)arrive(h, t, id++, 0); /* 40/s against a fill of 10/s */
		if ((t - t0) % SEC == 0) {
			(void)arrive(h, t, (1ull << 40) + light_ids++, 1);
		}
	}
	sl_ls_tick(h->ls, t0 + 30 * SEC);
	check(h);
	assert_int_equal(sl_ls_get_workload_stats(h->ls, 0, 0, &heavy), 0);
	assert_int_equal(sl_ls_get_workload_stats(h->ls, 0, 1, &light), 0);
	print_message("heavy: %llu admitted, %llu shed; light: %llu admitted of %llu\n",
		      (unsigned long long)heavy.admitted, (unsigned long long)heavy.shed,
		      (unsigned long long)light.admitted, (unsigned long long)light_ids);
	assert_int_equal(light.shed, 0);
	assert_int_equal(light.rejected, 0);
	assert_int_equal(light.admitted, light_ids);
	assert_true(heavy.shed > 500);
	h_free(h);
}

/* Random arrivals, cancels, completions, decisions: invariants hold and
 * every QUEUED flow gets exactly one outcome. */
static void test_random_property(void **state)
{
	struct sl_ls_workload w[3] = {
		{ .priority = 1, .tokens = 0, .queue_timeout_ns = 500 * MS,
		  .delay_target_ns = 20 * MS, .delay_interval_ns = 100 * MS },
		{ .priority = 2.5, .tokens = 3, .queue_timeout_ns = SL_LS_NO_TIMEOUT,
		  .delay_target_ns = 50 * MS, .delay_interval_ns = 50 * MS },
		{ .priority = 7, .tokens = 0.5, .queue_timeout_ns = 0 },
	};
	struct h *h = h_new(w, 3, true, 5 * SEC);
	static uint64_t arrived[40001];
	static int wl_of[40001];
	uint64_t t = 0, queued = 0, cancelled = 0, shed = 0;
	unsigned seed = 12345;

	(void)state;
	for (uint64_t i = 1; i <= 40000; i++) {
		unsigned r = (unsigned)rand_r(&seed);

		t += (uint64_t)(r % 7) * MS;
		switch (r % 23) {
		case 0:
			sl_ls_set_multiplier(h->ls, t, (double)(r % 300) / 100.0, r % 5 == 0);
			break;
		case 1:
			if (sl_ls_cancel(h->ls, t, i - 1 - (r % 7)) == 0)
				cancelled++;
			break;
		case 2:
			sl_ls_complete(h->ls, t, (int)(r % 4) - 1, (uint64_t)(r % 50) * MS);
			break;
		case 3:
			sl_ls_tick(h->ls, t);
			break;
		default: {
			int rc = sl_ls_arrive(h->ls, t, i, (int)(r % 4) - 1,
					      r % 11 == 0 ? (double)(r % 5) : SL_LS_TOKENS_AUTO,
					      r % 13 == 0 ? (uint64_t)(r % 900) * MS : SL_LS_NO_TIMEOUT);

			arrived[i] = t;
			wl_of[i] = (int)(r % 4) - 1;

			assert_true(rc >= 0);
			if (rc == SL_LS_QUEUED)
				queued++;
		}
		}
		if (i % 97 == 0)
			check(h);
	}
	sl_ls_set_multiplier(h->ls, t + 1, 0, true);
	check(h);
	assert_int_equal(h->na + h->nr + cancelled, queued);
	/* controlled delay sheds only the workloads that have it, and only a
	 * flow that waited its target */
	for (size_t k = 0; k < h->nr; k++) {
		uint64_t id = h->rej[k];

		if (h->rej_why[k] != SL_LS_SHED)
			continue;
		shed++;
		assert_true(wl_of[id] == 0 || wl_of[id] == 1);
		assert_true(h->rej_t[k] - arrived[id] >= w[wl_of[id]].delay_target_ns);
	}
	print_message("random ops: %llu shed\n", (unsigned long long)shed);
	assert_true(shed > 0);
	h_free(h);
}

/* ---- deadline and id indexes ------------------------------------------------------- */

struct exp_flow {
	uint64_t deadline; /* UINT64_MAX: none */
	uint64_t seq, id;
	unsigned wl;       /* flow index: the default workload last */
	bool done;
};

static int exp_cmp(const void *a, const void *b)
{
	const struct exp_flow *x = a, *y = b;

	if (x->deadline != y->deadline)
		return x->deadline < y->deadline ? -1 : 1;
	if (x->wl != y->wl)
		return x->wl < y->wl ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Behind a head that blocks for 10^6 s, 3000 flows over five workloads
 * with workload and client timeouts (many equal deadlines) are rejected at
 * exactly their deadlines, in (deadline, workload, arrival) order, whether
 * the caller ticks often or never; the next due time is always the
 * earliest deadline still waiting. */
static void run_expire_many(bool ticks)
{
	struct sl_ls_workload w[4] = {
		{ .priority = 1, .tokens = 1, .queue_timeout_ns = 200 * MS },
		{ .priority = 2, .tokens = 1, .queue_timeout_ns = SL_LS_NO_TIMEOUT },
		{ .priority = 3, .tokens = 2, .queue_timeout_ns = SEC },
		{ .priority = 1, .tokens = 1, .queue_timeout_ns = MS },
	};
	enum { N = 3000 };
	struct exp_flow *all = calloc(N, sizeof(*all)), *sorted = calloc(N, sizeof(*sorted));
	struct h *h = h_new(w, 4, false, 0);
	const uint64_t t0 = 30 * SEC + SEC / 2;
	struct sl_ls_stats st;
	unsigned seed = ticks ? 7 : 8;
	size_t n_exp = 0;
	uint64_t t = t0, head_at;

	assert_non_null(all);
	assert_non_null(sorted);
	warm(h, 10);
	sl_ls_set_multiplier(h->ls, t0, 0.1, false); /* 1 token/s */
	assert_int_equal(sl_ls_arrive(h->ls, t0, 1, -1, 1e6, SL_LS_NO_TIMEOUT), SL_LS_QUEUED);
	sl_ls_get_stats(h->ls, t0, &st);
	head_at = st.head_admit_at;
	assert_true(head_at > t0 + 1000 * SEC);
	for (unsigned i = 0; i < N; i++) {
		unsigned r = (unsigned)rand_r(&seed);
		int wl = (int)(r % 5) - 1;
		unsigned fi = wl < 0 ? 4 : (unsigned)wl;
		uint64_t client = r % 4 == 0 ? SL_LS_NO_TIMEOUT : (2 + (r / 4) % 60) * 10 * MS;
		uint64_t timeout = fi < 4 ? w[fi].queue_timeout_ns : SL_LS_NO_TIMEOUT;
		uint64_t next = UINT64_MAX;

		t = t0 + (i / 10) * MS; /* 10 arrivals per ms */
		if (client != SL_LS_NO_TIMEOUT && client - 10 * MS < timeout)
			timeout = client - 10 * MS;
		all[i] = (struct exp_flow){ .deadline = timeout == SL_LS_NO_TIMEOUT ? UINT64_MAX :
									 t + timeout,
					    .seq = i, .id = 100 + i, .wl = fi };
		if (ticks && r % 3 == 0)
			sl_ls_tick(h->ls, t);
		assert_int_equal(sl_ls_arrive(h->ls, t, 100 + i, wl, SL_LS_TOKENS_AUTO, client),
				 SL_LS_QUEUED);
		/* what has been rejected so far is exactly what is due */
		for (size_t k = 0; k < h->nr; k++)
			all[h->rej[k] - 100].done = true;
		for (unsigned k = 0; k <= i; k++) {
			if (!all[k].done && all[k].deadline <= t && all[k].deadline != UINT64_MAX &&
			    k != i)
				fail_msg("flow %u (deadline %llu) not rejected at %llu", k,
					 (unsigned long long)all[k].deadline, (unsigned long long)t);
			if (!all[k].done && all[k].deadline < next)
				next = all[k].deadline;
		}
		if (next > head_at)
			next = head_at;
		assert_int_equal(sl_ls_next_due(h->ls), next);
		if (i % 128 == 0)
			check(h);
	}
	check(h);
	sl_ls_tick(h->ls, t + 10 * SEC);
	check(h);
	for (unsigned i = 0; i < N; i++)
		if (all[i].deadline != UINT64_MAX)
			sorted[n_exp++] = all[i];
	qsort(sorted, n_exp, sizeof(*sorted), exp_cmp);
	assert_true(n_exp > N / 2 && n_exp < N);
	assert_int_equal(h->nr, n_exp);
	assert_int_equal(h->na, 0);
	for (size_t k = 0; k < n_exp; k++) {
		if (h->rej[k] != sorted[k].id || h->rej_t[k] != sorted[k].deadline)
			fail_msg("rejection %zu: id %llu at %llu, want id %llu at %llu", k,
				 (unsigned long long)h->rej[k], (unsigned long long)h->rej_t[k],
				 (unsigned long long)sorted[k].id,
				 (unsigned long long)sorted[k].deadline);
	}
	sl_ls_get_stats(h->ls, t + 10 * SEC, &st);
	assert_int_equal(st.waiting, 1 + N - n_exp);
	assert_int_equal(sl_ls_next_due(h->ls), head_at);
	/* the flows without a deadline (and the head) go when pass-through drains */
	sl_ls_set_multiplier(h->ls, t + 11 * SEC, 0, true);
	assert_int_equal(h->na, 1 + N - n_exp);
	assert_int_equal(h->adm[0], 1);
	h_free(h);
	free(all);
	free(sorted);
}

static void test_expire_many_mixed_timeouts(void **state)
{
	(void)state;
	run_expire_many(true);
	run_expire_many(false);
}

static void test_cancel_head_middle_unknown(void **state)
{
	struct sl_ls_workload w[2] = {
		{ .priority = 1, .tokens = 1, .queue_timeout_ns = 10 * SEC },
		{ .priority = 1, .tokens = 1, .queue_timeout_ns = SL_LS_NO_TIMEOUT },
	};
	struct h *h = h_new(w, 2, false, 0);
	const uint64_t t0 = 30 * SEC + SEC / 2;
	struct sl_ls_workload_stats ws;
	struct sl_ls_stats st;

	(void)state;
	warm(h, 10);
	sl_ls_set_multiplier(h->ls, t0, 0.1, false); /* 1 token/s */
	assert_int_equal(arrive(h, t0, 1, 0), SL_LS_QUEUED); /* the head, until t0 + 1 s */
	assert_int_equal(sl_ls_arrive(h->ls, t0, 2, 0, 2.0, 500 * MS), SL_LS_QUEUED); /* dl +490 ms */
	assert_int_equal(sl_ls_arrive(h->ls, t0, 3, 0, 3.0, SL_LS_NO_TIMEOUT), SL_LS_QUEUED);
	assert_int_equal(arrive(h, t0, 4, 1), SL_LS_QUEUED);
	assert_int_equal(arrive(h, t0, 5, 0), SL_LS_QUEUED);
	assert_int_equal(arrive(h, t0, 6, 1), SL_LS_QUEUED);
	assert_int_equal(sl_ls_next_due(h->ls), t0 + 490 * MS);
	sl_ls_get_workload_stats(h->ls, t0, 0, &ws);
	assert_near(ws.flow_head_vft, 2, 0, "vft of 2");
	assert_int_equal(ws.waiting, 4);

	/* unknown: nothing changes */
	assert_int_equal(sl_ls_cancel(h->ls, t0 + MS, 999), -ENOENT);
	sl_ls_get_stats(h->ls, t0 + MS, &st);
	assert_int_equal(st.waiting, 6);
	assert_int_equal(st.rejected, 0);
	/* the middle of workload 0's FIFO: its head is unchanged */
	assert_int_equal(sl_ls_cancel(h->ls, t0 + MS, 3), 0);
	check(h);
	sl_ls_get_workload_stats(h->ls, t0 + MS, 0, &ws);
	assert_near(ws.flow_head_vft, 2, 0, "vft of 2 still");
	assert_int_equal(ws.waiting, 3);
	assert_near(ws.rejected_tokens, 3, 0, "cancel counts as rejected");
	/* its first waiting flow (the earliest deadline): 5 competes, the
	 * deadline index forgets 2 */
	assert_int_equal(sl_ls_cancel(h->ls, t0 + MS, 2), 0);
	check(h);
	sl_ls_get_workload_stats(h->ls, t0 + MS, 0, &ws);
	assert_near(ws.flow_head_vft, 1, 0, "vft of 5");
	assert_int_equal(sl_ls_next_due(h->ls), t0 + SEC);
	sl_ls_tick(h->ls, t0 + 600 * MS);
	assert_int_equal(h->nr, 0); /* no callback at 2's deadline */
	assert_int_equal(sl_ls_cancel(h->ls, t0 + 600 * MS, 2), -ENOENT);
	assert_int_equal(sl_ls_cancel(h->ls, t0 + 600 * MS, 3), -ENOENT);

	/* the head: refunded (-1 + 0.6 + 1), the next head (5, vft tie with 4:
	 * lowest workload) reserves and waits 0.4 s */
	assert_int_equal(sl_ls_cancel(h->ls, t0 + 600 * MS, 1), 0);
	check(h);
	sl_ls_get_stats(h->ls, t0 + 600 * MS, &st);
	assert_int_equal(st.head_id, 5);
	assert_true(st.head_admit_at >= t0 + SEC && st.head_admit_at <= t0 + SEC + 1);
	assert_near(st.available, -0.4, 1e-9, "5 reserved");
	assert_int_equal(st.waiting, 3);
	sl_ls_tick(h->ls, t0 + SEC + 1);
	assert_int_equal(h->na, 1);
	assert_int_equal(h->adm[0], 5);
	/* an admitted flow is gone */
	assert_int_equal(sl_ls_cancel(h->ls, t0 + SEC + 1, 5), -ENOENT);

	/* duplicate ids: the head first, then the lowest workload, then FIFO */
	assert_int_equal(arrive(h, t0 + SEC + 2, 77, 1), SL_LS_QUEUED);
	assert_int_equal(arrive(h, t0 + SEC + 2, 77, 0), SL_LS_QUEUED);
	assert_int_equal(arrive(h, t0 + SEC + 2, 77, 1), SL_LS_QUEUED);
	assert_int_equal(sl_ls_cancel(h->ls, t0 + SEC + 2, 77), 0);
	sl_ls_get_workload_stats(h->ls, t0 + SEC + 2, 0, &ws);
	assert_int_equal(ws.waiting, 0);
	check(h);
	assert_int_equal(sl_ls_cancel(h->ls, t0 + SEC + 2, 77), 0);
	assert_int_equal(sl_ls_cancel(h->ls, t0 + SEC + 2, 77), 0);
	assert_int_equal(sl_ls_cancel(h->ls, t0 + SEC + 2, 77), -ENOENT);
	sl_ls_get_workload_stats(h->ls, t0 + SEC + 2, 1, &ws);
	assert_int_equal(ws.waiting, 2); /* 4 (head) and 6 */
	check(h);
	sl_ls_tick(h->ls, t0 + 10 * SEC);
	assert_int_equal(h->na, 3);
	assert_int_equal(h->nr, 0);
	h_free(h);
}

/* A seeded random mix of every operation, the inline-admission API
 * included (grants outstanding while flows arrive): sl_ls_check() after
 * each step, and every id reported exactly once, by the return value of
 * sl_ls_arrive, one callback (in event-time order) or a successful cancel. */
static void test_random_ops_each_id_once(void **state)
{
	struct sl_ls_workload w[3] = {
		{ .priority = 1, .tokens = 0, .queue_timeout_ns = 300 * MS },
		{ .priority = 4, .tokens = 2, .queue_timeout_ns = SL_LS_NO_TIMEOUT },
		{ .priority = 0.5, .tokens = 1, .queue_timeout_ns = 0 },
	};
	enum { STEPS = 8000 };
	struct h *h = h_new(w, 3, true, 3 * SEC);
	uint8_t *ids = calloc(STEPS + 1, 1);
	uint64_t t = 0, n_queued = 0, n_cancel = 0, n_grant = 0;
	unsigned seed = 20240611;
	double granted = 0;

	(void)state;
	assert_non_null(ids);
	h->state = ids;
	h->n_state = STEPS + 1;
	for (uint64_t i = 1; i <= STEPS; i++) {
		unsigned r = (unsigned)rand_r(&seed), r2 = (unsigned)rand_r(&seed);
		int wl = (int)(r2 % 4) - 1;
		struct sl_ls_stats st;

		t += (uint64_t)(r % 6) * MS;
		if (r % 211 == 0)
			t += 2 * SEC;
		if (r % 1999 == 0)
			t += 31 * SEC; /* idle: bootstrap again */
		h->call_now = t;
		switch (r % 17) {
		case 0:
			sl_ls_set_multiplier(h->ls, t, (double)(r2 % 250) / 100.0, r2 % 7 == 0);
			break;
		case 1: {
			uint64_t id = r2 % 9 == 0 ? STEPS + 1 + r2 % 50 : i - 1 - r2 % 40;
			int rc = sl_ls_cancel(h->ls, t, id);

			if (rc == 0) {
				if (id > STEPS || ids[id] != 1)
					fail_msg("cancelled id %llu that was not waiting",
						 (unsigned long long)id);
				ids[id] = 2;
				h->n_waiting--;
				n_cancel++;
			} else {
				assert_int_equal(rc, -ENOENT);
				assert_true(id > STEPS || ids[id] != 1);
			}
			break;
		}
		case 2:
			sl_ls_tick(h->ls, t);
			break;
		case 3:
			assert_int_equal(sl_ls_complete(h->ls, t, wl, (uint64_t)(r2 % 40) * MS), 0);
			break;
		case 4: /* the data path's tick: leftover back, a new credit */
		case 5: {
			double g;

			sl_ls_ungrant(h->ls, t, granted * (double)(r2 % 3) / 2.0);
			g = sl_ls_grant(h->ls, t);
			sl_ls_get_stats(h->ls, t, &st);
			if (isinf(g)) {
				assert_true(st.pass_through || st.bootstrapping);
				granted = 0;
			} else {
				assert_true(g >= 0);
				assert_false(st.pass_through || st.bootstrapping);
				if (st.waiting)
					assert_near(g, 0, 0, "grant while flows wait");
				if (g > 0)
					assert_near(st.available, 0, 0, "grant takes all");
				granted = g;
				n_grant += g > 0;
			}
			break;
		}
		case 6: {
			double use = fmin(granted, (double)(r2 % 4));

			granted -= use;
			assert_int_equal(sl_ls_observe_inline(h->ls, t, wl, r2 % 5, use), 0);
			break;
		}
		case 7:
			assert_int_equal(sl_ls_return(h->ls, t, wl, (double)(r2 % 3)), 0);
			break;
		case 8:
			sl_ls_ungrant(h->ls, t, granted);
			granted = 0;
			break;
		default: {
			int rc = sl_ls_arrive(h->ls, t, i, wl,
					      r2 % 11 == 0 ? (double)(r2 % 4) : SL_LS_TOKENS_AUTO,
					      r2 % 5 == 0 ? (uint64_t)(r2 % 700) * MS : SL_LS_NO_TIMEOUT);

			assert_true(rc >= 0);
			assert_int_equal(ids[i], 0);
			ids[i] = rc == SL_LS_QUEUED ? 1 : 2;
			h->n_waiting += rc == SL_LS_QUEUED;
			n_queued += rc == SL_LS_QUEUED;
		}
		}
		check(h);
		sl_ls_get_stats(h->ls, t, &st);
		assert_int_equal(st.waiting, h->n_waiting);
		assert_true(st.available <= st.capacity);
	}
	h->call_now = t + 1;
	sl_ls_ungrant(h->ls, t + 1, granted);
	sl_ls_set_multiplier(h->ls, t + 1, 0, true);
	check(h);
	for (uint64_t k = 1; k <= STEPS; k++)
		if (ids[k] == 1)
			fail_msg("id %llu never reported", (unsigned long long)k);
	assert_int_equal(h->na + h->nr + n_cancel, n_queued);
	print_message("random ops: %llu queued, %zu admitted, %zu rejected, %llu cancelled, "
		      "%llu grants\n", (unsigned long long)n_queued, h->na, h->nr,
		      (unsigned long long)n_cancel, (unsigned long long)n_grant);
	assert_true(n_queued > 500 && n_cancel > 10 && h->nr > 10 && n_grant > 10);
	h_free(h);
	free(ids);
}

/* ---- inline admission by the data path --------------------------------------------- */

static void test_grant_and_ungrant(void **state)
{
	struct h *h = h_new(NULL, 0, false, 0);
	const uint64_t t1 = 30 * SEC + SEC / 2;
	struct sl_ls_stats st;
	double g;

	(void)state;
	/* pass-through and bootstrapping: admit without tokens */
	g = sl_ls_grant(h->ls, 0);
	assert_true(isinf(g) && g > 0);
	warm(h, 10);
	sl_ls_set_multiplier(h->ls, 29 * SEC + SEC / 2, 1.0, false); /* throttle, still booting */
	g = sl_ls_grant(h->ls, 29 * SEC + SEC / 2);
	assert_true(isinf(g) && g > 0);
	/* out of bootstrap: 1 s of tokens (fill 10/s); the grant takes exactly
	 * what is available */
	assert_near(sl_ls_grant(h->ls, t1), 10, 0, "grant = available");
	sl_ls_get_stats(h->ls, t1, &st);
	assert_near(st.available, 0, 0, "taken out of the bucket");
	assert_int_equal(h->na + h->nr, 0);
	/* a flow the data path deferred queues behind the outstanding grant */
	assert_int_equal(sl_ls_arrive(h->ls, t1, 1, -1, 1.0, SL_LS_NO_TIMEOUT), SL_LS_QUEUED);
	sl_ls_get_stats(h->ls, t1, &st);
	assert_true(st.head);
	assert_int_equal(st.head_admit_at, t1 + 100 * MS);
	assert_near(st.available, -1, 0, "the head reserved");
	assert_near(sl_ls_grant(h->ls, t1), 0, 0, "a flow waits");
	check(h);
	/* the leftover comes back: no deficit left, the head goes now */
	sl_ls_ungrant(h->ls, t1, 4);
	assert_int_equal(h->na, 1);
	assert_int_equal(h->adm[0], 1);
	assert_int_equal(h->adm_t[0], t1);
	sl_ls_get_stats(h->ls, t1, &st);
	assert_near(st.available, 3, 0, "-1 + 4");
	assert_int_equal(st.waiting, 0);
	/* a partial ungrant brings the head forward by what it covers */
	assert_near(sl_ls_grant(h->ls, t1), 3, 0, "grant");
	assert_int_equal(sl_ls_arrive(h->ls, t1, 2, -1, 5.0, SL_LS_NO_TIMEOUT), SL_LS_QUEUED);
	sl_ls_get_stats(h->ls, t1, &st);
	assert_int_equal(st.head_admit_at, t1 + 500 * MS);
	sl_ls_ungrant(h->ls, t1 + 100 * MS, 2); /* -5 + 1 + 2 = -2: 200 ms more */
	sl_ls_get_stats(h->ls, t1 + 100 * MS, &st);
	assert_int_equal(st.head_admit_at, t1 + 300 * MS);
	check(h);
	sl_ls_tick(h->ls, t1 + 300 * MS);
	assert_int_equal(h->na, 2);
	assert_int_equal(h->adm_t[1], t1 + 300 * MS);
	/* ungrant caps at capacity */
	const uint64_t t2 = t1 + 5 * SEC;

	sl_ls_ungrant(h->ls, t2, 100);
	sl_ls_get_stats(h->ls, t2, &st);
	assert_near(st.available, 10, 0, "capped (full)");
	assert_near(sl_ls_grant(h->ls, t2), 10, 0, "grant");
	sl_ls_ungrant(h->ls, t2, 4);
	sl_ls_ungrant(h->ls, t2, 100);
	sl_ls_get_stats(h->ls, t2, &st);
	assert_near(st.available, 10, 0, "capped");
	/* no-ops */
	assert_near(sl_ls_grant(h->ls, t2), 10, 0, "grant");
	sl_ls_ungrant(h->ls, t2, 0);
	sl_ls_ungrant(h->ls, t2, -1);
	sl_ls_ungrant(h->ls, t2, NAN);
	sl_ls_ungrant(h->ls, t2, INFINITY);
	sl_ls_get_stats(h->ls, t2, &st);
	assert_near(st.available, 0, 0, "no-ops");
	/* empty bucket: nothing to grant */
	assert_near(sl_ls_grant(h->ls, t2), 0, 0, "empty");
	/* negative: a head reserved 5 at 10/s, then the fill dropped to ~1/s;
	 * admitted at its time with the bucket still near -4.5 */
	assert_int_equal(sl_ls_arrive(h->ls, t2, 3, -1, 5.0, SL_LS_NO_TIMEOUT), SL_LS_QUEUED);
	sl_ls_set_multiplier(h->ls, t2, 0.1, false);
	sl_ls_tick(h->ls, t2 + 500 * MS);
	assert_int_equal(h->adm[h->na - 1], 3);
	sl_ls_get_stats(h->ls, t2 + 500 * MS, &st);
	assert_int_equal(st.waiting, 0);
	assert_true(st.available < -4);
	assert_near(sl_ls_grant(h->ls, t2 + 500 * MS), 0, 0, "negative bucket");
	check(h);
	/* a head sleeping the wait it computed at a lower fill: tokens are
	 * available again, but a flow waits */
	assert_int_equal(sl_ls_arrive(h->ls, t2 + 500 * MS, 4, -1, 1.0, SL_LS_NO_TIMEOUT),
			 SL_LS_QUEUED);
	sl_ls_set_multiplier(h->ls, t2 + 500 * MS, 5.0, false);
	sl_ls_get_stats(h->ls, t2 + 1500 * MS, &st);
	assert_true(st.head && st.head_admit_at > t2 + 1500 * MS && st.available > 0);
	assert_near(sl_ls_grant(h->ls, t2 + 1500 * MS), 0, 0, "a flow waits");
	sl_ls_cancel(h->ls, t2 + 1500 * MS, 4);
	check(h);
	/* pass-through: unlimited, the bucket untouched */
	sl_ls_set_multiplier(h->ls, t2 + 2 * SEC, 0, true);
	sl_ls_get_stats(h->ls, t2 + 2 * SEC, &st);
	double before = st.available;

	g = sl_ls_grant(h->ls, t2 + 2 * SEC);
	assert_true(isinf(g) && g > 0);
	sl_ls_get_stats(h->ls, t2 + 2 * SEC, &st);
	assert_near(st.available, before, 0, "pass-through bucket");
	h_free(h);
}

static void test_observe_inline(void **state)
{
	struct sl_ls_workload w = { .priority = 1, .tokens = 1, .queue_timeout_ns = SEC };
	struct h *h = h_new(&w, 1, false, 0);
	struct sl_ls_workload_stats ws;
	struct sl_ls_stats st;
	double acc, rej;

	(void)state;
	assert_int_equal(sl_ls_observe_inline(h->ls, SEC / 2, 0, 30, 300.0), 0);
	sl_ls_get_stats(h->ls, SEC / 2, &st);
	assert_near(st.incoming_rate, 0, 0, "the current slot is ignored");
	sl_ls_get_stats(h->ls, SEC + SEC / 2, &st);
	assert_near(st.incoming_rate, 10, 1e-12, "300 tokens / 30 s");
	assert_int_equal(st.admitted, 30);
	assert_int_equal(st.inline_admitted, 30);
	assert_int_equal(st.deferred, 0);
	assert_near(st.accepted_tokens, 300, 0, "accepted");
	assert_near(st.incoming_tokens, 300, 0, "incoming");
	sl_ls_take_period(h->ls, &acc, &rej);
	assert_near(acc, 300, 0, "period accepted");
	assert_near(rej, 0, 0, "period rejected");
	assert_int_equal(sl_ls_get_workload_stats(h->ls, SEC, 0, &ws), 0);
	assert_int_equal(ws.admitted, 30);
	assert_int_equal(ws.inline_admitted, 30);
	assert_near(ws.accepted_tokens, 300, 0, "workload accepted");
	/* the default workload; tokens 0 flows are counted, not recorded */
	assert_int_equal(sl_ls_observe_inline(h->ls, SEC, -1, 2, 0.0), 0);
	assert_int_equal(sl_ls_get_workload_stats(h->ls, SEC, 1, &ws), 0);
	assert_int_equal(ws.inline_admitted, 2);
	assert_int_equal(ws.admitted, 2);
	/* bad arguments */
	assert_int_equal(sl_ls_observe_inline(h->ls, SEC, 1, 1, 1.0), -EINVAL);
	assert_int_equal(sl_ls_observe_inline(h->ls, SEC, -2, 1, 1.0), -EINVAL);
	assert_int_equal(sl_ls_observe_inline(h->ls, SEC, 0, 1, -1.0), -EINVAL);
	assert_int_equal(sl_ls_observe_inline(h->ls, SEC, 0, 1, NAN), -EINVAL);
	assert_int_equal(sl_ls_observe_inline(h->ls, SEC, 0, 1, INFINITY), -EINVAL);
	sl_ls_get_stats(h->ls, SEC, &st);
	assert_int_equal(st.inline_admitted, 32);
	/* pass-through: the rate is known from inline admissions alone */
	for (uint64_t s = 1; s <= 31; s++)
		assert_int_equal(sl_ls_observe_inline(h->ls, s * SEC + SEC / 2, 0, 20, 20.0), 0);
	sl_ls_set_multiplier(h->ls, 31 * SEC + SEC / 2, 0.5, false);
	sl_ls_get_stats(h->ls, 31 * SEC + SEC / 2, &st);
	assert_false(st.bootstrapping);
	assert_near(st.incoming_rate, 20, 1e-12, "rate");
	assert_near(st.fill_rate, 10, 1e-12, "fill = 0.5 x 20");
	/* it does not touch the bucket */
	sl_ls_get_stats(h->ls, 33 * SEC, &st);
	assert_near(st.available, 10, 1e-12, "full");
	assert_int_equal(sl_ls_observe_inline(h->ls, 33 * SEC, 0, 5, 5.0), 0);
	sl_ls_get_stats(h->ls, 33 * SEC, &st);
	assert_near(st.available, 10, 1e-12, "untouched");
	sl_ls_take_period(h->ls, &acc, &rej);
	assert_near(acc, 31 * 20 + 5, 0, "period accepted");
	/* an idle window: the next inline report re-enters bootstrap */
	assert_int_equal(sl_ls_observe_inline(h->ls, 70 * SEC, 0, 1, 1.0), 0);
	sl_ls_get_stats(h->ls, 70 * SEC, &st);
	assert_true(st.bootstrapping);
	assert_true(isinf(sl_ls_grant(h->ls, 70 * SEC)));
	h_free(h);
}

static void test_return(void **state)
{
	struct sl_ls_workload w = { .priority = 1, .tokens = 2, .queue_timeout_ns = SL_LS_NO_TIMEOUT };
	struct h *h = h_new(&w, 1, false, 0);
	const uint64_t t0 = 30 * SEC + SEC / 2, t1 = t0 + SEC;
	struct sl_ls_workload_stats ws;
	struct sl_ls_stats st;
	double acc, rej;

	(void)state;
	warm(h, 10);
	sl_ls_set_multiplier(h->ls, t0, 1.0, false); /* fill 10/s */
	sl_ls_take_period(h->ls, NULL, NULL);
	assert_int_equal(arrive(h, t1, 1, 0), SL_LS_ADMITTED);
	sl_ls_get_stats(h->ls, t1, &st);
	assert_near(st.available, 8, 1e-12, "taken");
	/* another limiter refused it: the tokens come back, accepted -> rejected */
	assert_int_equal(sl_ls_return(h->ls, t1, 0, 2.0), 0);
	sl_ls_get_stats(h->ls, t1, &st);
	assert_near(st.available, 10, 1e-12, "refunded");
	assert_near(st.accepted_tokens, 300, 1e-9, "cumulative accepted (warm-up only)");
	assert_near(st.rejected_tokens, 2, 0, "cumulative rejected");
	assert_int_equal(st.admitted, 301); /* flow counts unchanged */
	sl_ls_take_period(h->ls, &acc, &rej);
	assert_near(acc, 0, 0, "period accepted");
	assert_near(rej, 2, 0, "period rejected");
	sl_ls_get_workload_stats(h->ls, t1, 0, &ws);
	assert_near(ws.accepted_tokens, 0, 0, "workload accepted");
	assert_near(ws.rejected_tokens, 2, 0, "workload rejected");
	assert_int_equal(ws.admitted, 1);
	/* capped at capacity; accepted does not go below 0 */
	assert_int_equal(sl_ls_return(h->ls, t1, 0, 2.0), 0);
	sl_ls_get_stats(h->ls, t1, &st);
	assert_near(st.available, 10, 1e-12, "capped");
	sl_ls_take_period(h->ls, &acc, &rej);
	assert_near(acc, 0, 0, "floored");
	assert_near(rej, 2, 0, "rejected");
	/* bad arguments */
	assert_int_equal(sl_ls_return(h->ls, t1, 1, 1.0), -EINVAL);
	assert_int_equal(sl_ls_return(h->ls, t1, -2, 1.0), -EINVAL);
	assert_int_equal(sl_ls_return(h->ls, t1, 0, -1.0), -EINVAL);
	assert_int_equal(sl_ls_return(h->ls, t1, 0, NAN), -EINVAL);
	assert_int_equal(sl_ls_return(h->ls, t1, -1, 0.0), 0);
	/* a waiting head comes forward: 15 tokens, -5 -> 500 ms; 3 back -> 200 ms */
	assert_int_equal(sl_ls_arrive(h->ls, t1, 2, 0, 15.0, SL_LS_NO_TIMEOUT), SL_LS_QUEUED);
	sl_ls_get_stats(h->ls, t1, &st);
	assert_int_equal(st.head_admit_at, t1 + 500 * MS);
	assert_int_equal(sl_ls_return(h->ls, t1, 0, 3.0), 0);
	sl_ls_get_stats(h->ls, t1, &st);
	assert_int_equal(st.head_admit_at, t1 + 200 * MS);
	check(h);
	sl_ls_tick(h->ls, t1 + SEC);
	assert_int_equal(h->na, 1);
	assert_int_equal(h->adm_t[0], t1 + 200 * MS);
	h_free(h);
}

static void test_workload_tokens(void **state)
{
	struct sl_ls_workload w[2] = {
		{ .priority = 1, .tokens = 5, .queue_timeout_ns = SL_LS_NO_TIMEOUT },
		{ .priority = 1, .tokens = 0, .queue_timeout_ns = SL_LS_NO_TIMEOUT },
	};
	struct h *h = h_new(w, 2, true, 0);
	struct sl_ls_workload_stats ws;

	(void)state;
	assert_near(sl_ls_workload_tokens(h->ls, 0), 5, 0, "configured");
	assert_near(sl_ls_workload_tokens(h->ls, 1), 1, 0, "unset");
	assert_near(sl_ls_workload_tokens(h->ls, -1), 1, 0, "default");
	assert_true(isnan(sl_ls_workload_tokens(h->ls, 2)));
	assert_true(isnan(sl_ls_workload_tokens(h->ls, -2)));
	sl_ls_complete(h->ls, SEC, 0, 100 * MS);
	sl_ls_complete(h->ls, 2 * SEC, -1, 30 * MS);
	assert_near(sl_ls_workload_tokens(h->ls, 0), 100, 1e-9, "estimate");
	sl_ls_get_workload_stats(h->ls, 2 * SEC, 0, &ws);
	assert_near(sl_ls_workload_tokens(h->ls, 0), ws.tokens, 0, "same as the stats");
	sl_ls_get_workload_stats(h->ls, 2 * SEC, 2, &ws);
	assert_near(sl_ls_workload_tokens(h->ls, -1), ws.tokens, 0, "default = last index");
	assert_near(ws.tokens, 30, 1e-9, "default estimate");
	h_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bucket_vectors),
		cmocka_unit_test(test_bucket_vectors_engine),
		cmocka_unit_test(test_rate_window_vector),
		cmocka_unit_test(test_wfq_order_vector),
		cmocka_unit_test(test_bootstrap_and_pass_through),
		cmocka_unit_test(test_bootstrap_end_grants_one_second),
		cmocka_unit_test(test_idle_rebootstrap),
		cmocka_unit_test(test_bucket_fill_and_capacity),
		cmocka_unit_test(test_zero_fill_rejects),
		cmocka_unit_test(test_queue_timeout),
		cmocka_unit_test(test_wfq_ratio_under_saturation),
		cmocka_unit_test(test_wfq_idle_workload_returns_fair),
		cmocka_unit_test(test_wfq_tokens_weight),
		cmocka_unit_test(test_latency_based_tokens),
		cmocka_unit_test(test_counters),
		cmocka_unit_test(test_pass_through_drains_queue),
		cmocka_unit_test(test_stale_decision),
		cmocka_unit_test(test_decision_ttl_from_period),
		cmocka_unit_test(test_cancel_and_reentrancy),
		cmocka_unit_test(test_validation_and_config),
		cmocka_unit_test(test_delay_burst_waits),
		cmocka_unit_test(test_delay_standing_queue_is_shed),
		cmocka_unit_test(test_delay_zero_is_aperture),
		cmocka_unit_test(test_delay_light_workload_never_shed),
		cmocka_unit_test(test_random_property),
		cmocka_unit_test(test_expire_many_mixed_timeouts),
		cmocka_unit_test(test_cancel_head_middle_unknown),
		cmocka_unit_test(test_random_ops_each_id_once),
		cmocka_unit_test(test_grant_and_ungrant),
		cmocka_unit_test(test_observe_inline),
		cmocka_unit_test(test_return),
		cmocka_unit_test(test_workload_tokens),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
