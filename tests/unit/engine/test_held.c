// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The held-frame store (engine/held.h): budgets in total and per level,
 * replacement by a retransmit, release on take (dispatch, reject), drop
 * (time-out, cancel), and the counts that status and metrics show.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/held.h"

#define COST(len) (sizeof(struct sl_held_frame) + (len))

static uint8_t frame[SLUICE_FRAME_MAX];

static void test_put_take_replace(void **state)
{
	struct sl_held_limits lim = {.max_bytes = 1 << 20, .max_bytes_per_level = 1 << 20};
	struct sl_held_stats st;
	struct sl_held_frame *f;
	struct sl_held *h;

	(void)state;
	for (int i = 0; i < SLUICE_FRAME_MAX; i++)
		frame[i] = (uint8_t)i;
	assert_int_equal(sl_held_create(&h, &lim), 0);
	assert_int_equal(sl_held_put(h, 7, 3, 5, frame, 74), 0);
	assert_true(sl_held_has(h, 7));
	frame[0] = 0xaa; /* the retransmit's copy */
	assert_int_equal(sl_held_put(h, 7, 3, 5, frame, 78), 0);
	sl_held_get_stats(h, &st);
	assert_int_equal(st.frames, 1);
	assert_int_equal(st.bytes, COST(78));
	assert_int_equal(st.level_bytes[3], COST(78));
	assert_int_equal(st.held, 1);
	assert_int_equal(st.replaced, 1);
	f = sl_held_take(h, 7);
	assert_non_null(f);
	assert_int_equal(f->len, 78);
	assert_int_equal(f->frame[0], 0xaa);
	assert_int_equal(f->ifindex, 5);
	assert_int_equal(f->level, 3);
	free(f);
	assert_null(sl_held_take(h, 7));
	sl_held_get_stats(h, &st);
	assert_int_equal(st.frames, 0);
	assert_int_equal(st.bytes, 0);
	assert_int_equal(st.level_bytes[3], 0);
	assert_int_equal(sl_held_put(h, 8, 0, 1, frame, SLUICE_FRAME_MAX + 1), -EINVAL);
	assert_int_equal(sl_held_put(h, 8, SLUICE_MAX_LEVELS, 1, frame, 10), -EINVAL);
	sl_held_drop(h, 99); /* nothing held: nothing happens */
	sl_held_free(h);
}

static void test_budgets(void **state)
{
	struct sl_held_limits lim = {.max_bytes = 10 * COST(100), .max_bytes_per_level = 4 * COST(100)};
	struct sl_held_stats st;
	struct sl_held *h;
	uint64_t id = 1;

	(void)state;
	assert_int_equal(sl_held_create(&h, &lim), 0);
	/* Level 1 holds 4, the fifth is refused. */
	for (int i = 0; i < 4; i++)
		assert_int_equal(sl_held_put(h, id++, 1, 1, frame, 100), 0);
	assert_int_equal(sl_held_put(h, id++, 1, 1, frame, 100), -ENOSPC);
	/* Levels 2 and 3 take 4 and 2: the total of 10 is reached. */
	for (int i = 0; i < 4; i++)
		assert_int_equal(sl_held_put(h, id++, 2, 1, frame, 100), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(sl_held_put(h, id++, 3, 1, frame, 100), 0);
	assert_int_equal(sl_held_put(h, id++, 3, 1, frame, 100), -ENOSPC);
	sl_held_get_stats(h, &st);
	assert_int_equal(st.frames, 10);
	assert_int_equal(st.bytes, lim.max_bytes);
	assert_int_equal(st.over_budget, 2);
	/* A replacement of a held frame fits where a new one would not. */
	assert_int_equal(sl_held_put(h, 1, 1, 1, frame, 100), 0);
	/* A replacement that does not fit leaves nothing held for its id. */
	assert_int_equal(sl_held_put(h, 2, 1, 1, frame, 200), -ENOSPC);
	assert_false(sl_held_has(h, 2));
	/* Now level 1 holds 1, 3, 4; taking 3 out (a dispatch) leaves 8 in
	 * all, room for two more. */
	sl_held_drop(h, 3);
	sl_held_get_stats(h, &st);
	assert_int_equal(st.frames, 8);
	assert_int_equal(st.level_frames[1], 2);
	assert_int_equal(sl_held_put(h, id++, 3, 1, frame, 100), 0);
	assert_int_equal(sl_held_put(h, id++, 1, 1, frame, 100), 0);
	assert_int_equal(sl_held_put(h, id++, 1, 1, frame, 100), -ENOSPC); /* the total */
	/* New budgets apply to what comes next. */
	lim.max_bytes = lim.max_bytes_per_level = 0;
	sl_held_set_limits(h, &lim);
	assert_int_equal(sl_held_put(h, id++, 4, 1, frame, 60), -ENOSPC);
	sl_held_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_take_replace),
		cmocka_unit_test(test_budgets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
