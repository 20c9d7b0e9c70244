// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The containers the engines share (lib): the id index against a plain
 * array under random inserts and deletes (duplicate ids included), the
 * intrusive list, and the notification queue's delivery rules.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/id_index.h"
#include "lib/list.h"
#include "lib/notify.h"
#include "lib/why.h"

struct item {
	int payload;
	uint64_t id;
	struct sl_link link;
	bool in;
};

#define N_ITEMS 4000

static uint64_t rng = 88172645463325252ULL;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* The index agrees with the truth for every id after each of 40,000 random
 * operations' worth of churn; duplicates are all found; deletion by
 * backward shift never loses a neighbour. */
static void test_id_index_random(void **state)
{
	static struct item items[N_ITEMS];
	struct sl_idx x;
	size_t in = 0;

	(void)state;
	sl_idx_init(&x, offsetof(struct item, id));
	for (int i = 0; i < N_ITEMS; i++)
		items[i].id = next_rand() % 1500; /* many duplicates */
	for (int step = 0; step < 40000; step++) {
		struct item *it = &items[next_rand() % N_ITEMS];

		if (it->in) {
			sl_idx_del(&x, it);
			it->in = false;
			in--;
		} else {
			assert_int_equal(sl_idx_reserve(&x, 1), 0);
			sl_idx_put(&x, it);
			it->in = true;
			in++;
		}
		assert_int_equal(x.count, in);
		assert_true(x.count * 2 <= x.cap);
		if (step % 997 == 0) {
			for (uint64_t id = 0; id < 1500; id++) {
				size_t want = 0, got = 0, pos = 0;
				struct item *e;

				for (int i = 0; i < N_ITEMS; i++)
					want += items[i].in && items[i].id == id;
				while ((e = sl_idx_next(&x, id, &pos))) {
					assert_true(e->in);
					assert_int_equal(e->id, id);
					got++;
				}
				assert_int_equal(got, want);
				assert_true(!want == !sl_idx_find(&x, id));
			}
		}
	}
	sl_idx_free(&x);
}

static void test_list(void **state)
{
	struct item a = {.payload = 1}, b = {.payload = 2}, c = {.payload = 3};
	struct sl_list l = {0};

	(void)state;
	sl_list_append(&l, &a.link);
	sl_list_append(&l, &b.link);
	sl_list_append(&l, &c.link);
	assert_int_equal(l.n, 3);
	sl_list_remove(&l, &b.link);
	assert_int_equal(sl_list_entry(l.head, struct item, link)->payload, 1);
	assert_int_equal(sl_list_entry(l.head->next, struct item, link)->payload, 3);
	assert_ptr_equal(l.tail, &c.link);
	sl_list_remove(&l, &a.link);
	sl_list_remove(&l, &c.link);
	assert_null(l.head);
	assert_null(l.tail);
	assert_int_equal(l.n, 0);
	assert_null(sl_list_entry(l.head, struct item, link));
}

struct notes_ctx {
	struct sl_notes *q;
	uint64_t seen[8];
	int n;
};

/* A callback that records a new note: it is delivered by the running
 * delivery, after the ones before it, never recursively. */
static void on_note(void *ctx, const struct sl_note *n)
{
	struct notes_ctx *c = ctx;

	c->seen[c->n++] = n->id;
	if (n->id == 1) {
		sl_notes_push(c->q, 9, n->now, 0);
		sl_notes_deliver(c->q, on_note, c); /* nested: does nothing */
	}
}

static void test_notes(void **state)
{
	struct sl_notes q = {0};
	struct notes_ctx c = {.q = &q};
	struct sl_note last;

	(void)state;
	assert_int_equal(sl_notes_reserve(&q, 4), 0);
	sl_notes_push(&q, 1, 10, 1);
	sl_notes_push(&q, 2, 11, 0);
	sl_notes_push(&q, 3, 12, 1);
	last = sl_notes_pop(&q);
	assert_int_equal(last.id, 3);
	assert_int_equal(last.kind, 1);
	assert_int_equal(sl_notes_pending(&q), 2);
	sl_notes_deliver(&q, on_note, &c);
	assert_int_equal(c.n, 3);
	assert_int_equal(c.seen[0], 1);
	assert_int_equal(c.seen[1], 2);
	assert_int_equal(c.seen[2], 9);
	assert_int_equal(sl_notes_pending(&q), 0);
	sl_notes_free(&q);
}

static void test_why(void **state)
{
	char why[16];

	(void)state;
	assert_int_equal(sl_invalid(why, sizeof(why), "bad %d", 7), -22);
	assert_string_equal(why, "bad 7");
	sl_why(why, sizeof(why), "%s", "a much longer reason than fits");
	assert_int_equal(strlen(why), sizeof(why) - 1);
	sl_why(NULL, 0, "nothing %d", 1); /* no buffer: nothing happens */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_id_index_random),
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_notes),
		cmocka_unit_test(test_why),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
