// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A fleet's seats for one level (user/engine/fleet_share.c): floors
 * first, the rest water-filled over wants above the floors, leftovers
 * spread evenly; the invariant (floors + live extras <= budget) holds for
 * every claim a member moves to; a lease's grant ends early enough.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "engine/fleet_share.h"

#define LIVE(f, e, u, w, b) {.floor = (f), .live = true, .extra = (e), .in_use = (u), .wants = (w), .budget = (b)}
#define GONE(f) {.floor = (f)}

static uint64_t sum(const uint32_t *t, size_t n)
{
	uint64_t s = 0;

	for (size_t i = 0; i < n; i++)
		s += t[i];
	return s;
}

static void test_budget_is_the_smallest_live(void **state)
{
	struct sl_fleet_member m[] = {LIVE(10, 0, 0, 0, 200), LIVE(10, 0, 0, 0, 150), GONE(10)};

	(void)state;
	assert_int_equal(sl_fleet_budget(m, 3, 300), 150);
	assert_int_equal(sl_fleet_budget(m, 3, 120), 120);
	m[1].live = false; /* a node gone declares nothing */
	assert_int_equal(sl_fleet_budget(m, 3, 300), 200);
	m[0].budget = 0; /* nor one whose want is not written yet */
	assert_int_equal(sl_fleet_budget(m, 3, 300), 300);
}

/* 200 seats, floors of 20 each: the busy get what they want, the idle
 * keep their floor, and what is left is spread evenly. */
static void test_water_filling(void **state)
{
	struct sl_fleet_member m[] = {
		LIVE(20, 0, 10, 10, 200),  /* idle: wants below its floor */
		LIVE(20, 0, 60, 80, 200),  /* wants 60 over its floor */
		LIVE(20, 0, 30, 35, 200),  /* wants 15 over */
	};
	uint32_t t[3];

	(void)state;
	assert_int_equal(sl_fleet_targets(m, 3, 200, t), 0);
	/* pool 140: 15 and 60 met, 65 left over, 22/22/21 */
	assert_int_equal(t[0], 22);
	assert_int_equal(t[1], 60 + 22);
	assert_int_equal(t[2], 15 + 21);
	assert_int_equal(sum(t, 3) + 60, 200);
}

/* More wanted than there is: the small wants met whole, the rest split
 * equally among the big ones; nobody over what it wants. */
static void test_scarcity(void **state)
{
	struct sl_fleet_member m[] = {
		LIVE(10, 0, 0, 15, 100),   /* wants 5 over */
		LIVE(10, 0, 0, 500, 100),  /* wants 490 over */
		LIVE(10, 0, 0, 300, 100),  /* wants 290 over */
		GONE(10),                  /* its floor stays reserved */
	};
	uint32_t t[4];

	(void)state;
	assert_int_equal(sl_fleet_targets(m, 4, 100, t), 0);
	/* pool 60: 5 met, 55 split 28/27 in the members' order */
	assert_int_equal(t[0], 5);
	assert_int_equal(t[1], 28);
	assert_int_equal(t[2], 27);
	assert_int_equal(t[3], 0);
	assert_int_equal(sum(t, 4), 60);
}

static void test_floors_over_budget(void **state)
{
	struct sl_fleet_member m[] = {LIVE(60, 0, 0, 100, 100), LIVE(60, 0, 0, 100, 100)};
	uint32_t t[2] = {7, 7};

	(void)state;
	assert_int_equal(sl_fleet_targets(m, 2, 100, t), -ERANGE);
	assert_int_equal(t[0], 0);
	assert_int_equal(t[1], 0);
	assert_int_equal(sl_fleet_targets(m, SL_FLEET_MAX_MEMBERS + 1, 100, t), -E2BIG);
}

/* A raise only within the room the others leave; a cut never below the
 * seats in use over the floor. */
static void test_next_claim(void **state)
{
	struct sl_fleet_member m[] = {LIVE(20, 50, 0, 0, 200), LIVE(20, 100, 0, 0, 200), GONE(5)};

	(void)state;
	assert_int_equal(sl_fleet_room(m, 3, 200), 5);
	assert_int_equal(sl_fleet_next_claim(50, 80, 0, 5), 55);   /* raise by the room */
	assert_int_equal(sl_fleet_next_claim(50, 52, 0, 5), 52);
	assert_int_equal(sl_fleet_next_claim(50, 10, 30, 5), 30);  /* cut, to the seats in use */
	assert_int_equal(sl_fleet_next_claim(50, 10, 5, 5), 10);
	assert_int_equal(sl_fleet_next_claim(50, 10, 70, 5), 50);  /* in use past the claim: no cut */
	assert_int_equal(sl_fleet_next_claim(50, 50, 0, 0), 50);
	m[1].extra = 200; /* over-held (a budget that shrank): no room, not negative */
	assert_int_equal(sl_fleet_room(m, 3, 200), 0);
}

/* Property: members moving one at a time, in any order, towards targets
 * computed from what they see, never break the invariant. */
static void test_invariant_under_moves(void **state)
{
	struct sl_fleet_member m[6];
	uint32_t t[6];

	(void)state;
	srand(7);
	for (int round = 0; round < 2000; round++) {
		uint32_t budget = 50 + (uint32_t)(rand() % 400), f = 0;

		for (size_t i = 0; i < 6; i++) {
			m[i] = (struct sl_fleet_member){.floor = (uint32_t)(rand() % 10), .live = rand() % 5 != 0,
							.wants = (uint32_t)(rand() % 200), .budget = budget};
			f += m[i].floor;
		}
		if (f > budget)
			continue;
		for (int step = 0; step < 30; step++) {
			size_t i = (size_t)(rand() % 6);
			uint32_t in_use;

			if (!m[i].live)
				continue;
			in_use = m[i].extra ? (uint32_t)(rand() % (m[i].extra + 1)) : 0;
			m[i].wants = (uint32_t)(rand() % 200);
			assert_int_equal(sl_fleet_targets(m, 6, budget, t), 0);
			assert_true(sum(t, 6) + f <= budget);
			m[i].extra = sl_fleet_next_claim(m[i].extra, t[i], in_use, sl_fleet_room(m, 6, budget));
			{
				uint64_t held = f;

				for (size_t j = 0; j < 6; j++)
					held += m[j].live ? m[j].extra : 0;
				assert_true(held <= budget);
			}
		}
	}
}

static void test_grant_deadline(void **state)
{
	const uint64_t s = 1000000000ull;

	(void)state;
	assert_int_equal(sl_fleet_margin_ns(6 * s), s * 6 / 10);
	assert_int_equal(sl_fleet_margin_ns(2 * s), s / 2);        /* at least 500 ms */
	/* leaseTTL 6 s, drain 1 s: 6 - 0.6 - 1 = 4.4 s after the keepalive */
	assert_int_equal(sl_fleet_grant_deadline_ns(100 * s, 6 * s, s), 100 * s + 44 * s / 10);
	/* a drain past the lease: the grant ends at the keepalive */
	assert_int_equal(sl_fleet_grant_deadline_ns(100 * s, 2 * s, 5 * s), 100 * s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_budget_is_the_smallest_live),
		cmocka_unit_test(test_water_filling),
		cmocka_unit_test(test_scarcity),
		cmocka_unit_test(test_floors_over_budget),
		cmocka_unit_test(test_next_claim),
		cmocka_unit_test(test_invariant_under_moves),
		cmocka_unit_test(test_grant_deadline),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
