// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Unit tests for reading logfmt lines (user/lib/logfmt.c), which become
 * the journal's fields (EVENT=reload ...). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "lib/log.h"
#include "lib/logfmt.h"

struct seen {
	char text[16][128];
	int n, stop_at;
};

static int collect(const char *key, size_t klen, const char *value, void *arg)
{
	struct seen *s = arg;

	snprintf(s->text[s->n], sizeof(s->text[0]), "%.*s|%s", (int)klen, key, value);
	s->n++;
	return s->n == s->stop_at ? 7 : 0;
}

static void test_pairs_in_order(void **state)
{
	struct seen s = {0};
	char buf[64];

	(void)state;
	assert_int_equal(sl_logfmt_each("event=reload result=ok file=/etc/sluice/sluice.yaml seconds=0.012",
					buf, sizeof(buf), collect, &s), 0);
	assert_int_equal(s.n, 4);
	assert_string_equal(s.text[0], "event|reload");
	assert_string_equal(s.text[1], "result|ok");
	assert_string_equal(s.text[2], "file|/etc/sluice/sluice.yaml");
	assert_string_equal(s.text[3], "seconds|0.012");
}

/* What sl_logfmt_value writes, this reads back. */
static void test_quoted_round_trip(void **state)
{
	const char *raw = "a \"quoted\" path\\with\nnewline";
	char quoted[128], line[160], buf[128];
	struct seen s = {0};

	(void)state;
	snprintf(line, sizeof(line), "event=reload error=%s result=failed",
		 sl_logfmt_value(quoted, sizeof(quoted), raw));
	assert_int_equal(sl_logfmt_each(line, buf, sizeof(buf), collect, &s), 0);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.text[1] + strlen("error|"), raw);
	assert_string_equal(s.text[2], "result|failed");
}

/* Words that are not pairs are skipped; a long value is cut, not overrun;
 * the callback stops the walk. */
static void test_prose_cut_and_stop(void **state)
{
	struct seen s = {0};
	char small[6];

	(void)state;
	assert_int_equal(sl_logfmt_each("event=reload_queued file=x: the running reload is replaced",
					small, sizeof(small), collect, &s), 0);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.text[0], "event|reloa");
	assert_string_equal(s.text[1], "file|x:");
	memset(&s, 0, sizeof(s));
	s.stop_at = 1;
	assert_int_equal(sl_logfmt_each("a=1 b=2", small, sizeof(small), collect, &s), 7);
	assert_int_equal(s.n, 1);
	memset(&s, 0, sizeof(s));
	assert_int_equal(sl_logfmt_each("=1 \"x\" k=", small, sizeof(small), collect, &s), 0);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.text[0], "k|");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pairs_in_order),
		cmocka_unit_test(test_quoted_round_trip),
		cmocka_unit_test(test_prose_cut_and_stop),
	};

	return cmocka_run_group_tests_name("logfmt", tests, NULL, NULL);
}
