// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Unit tests for the JSON writer (user/lib/json_out.c): escaping, commas,
 * doubles that read back exactly, and integers past 2^53 as strings. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/json_out.h"

static char *write_doc(void (*fn)(struct json_out *jo))
{
	char *text = NULL;
	size_t len;
	FILE *f = open_memstream(&text, &len);
	struct json_out jo;

	assert_non_null(f);
	jo_init(&jo, f, false);
	fn(&jo);
	jo_finish(&jo);
	assert_int_equal(fclose(f), 0);
	return text;
}

static void doc_numbers(struct json_out *jo)
{
	jo_obj_begin(jo, NULL);
	jo_u64(jo, "safe", JO_MAX_SAFE_INTEGER);
	jo_u64(jo, "past", JO_MAX_SAFE_INTEGER + 1);
	jo_u64(jo, "max", UINT64_MAX);
	jo_i64(jo, "neg", -(int64_t)JO_MAX_SAFE_INTEGER);
	jo_i64(jo, "negpast", INT64_MIN);
	jo_double(jo, "tenth", 0.1);
	jo_double(jo, "nan", NAN);
	jo_obj_end(jo);
}

static void test_integers_past_2_53_are_strings(void **state)
{
	char *t = write_doc(doc_numbers);

	(void)state;
	assert_string_equal(t, "{\"safe\":9007199254740992,\"past\":\"9007199254740993\","
			       "\"max\":\"18446744073709551615\",\"neg\":-9007199254740992,"
			       "\"negpast\":\"-9223372036854775808\",\"tenth\":0.1,\"nan\":null}\n");
	free(t);
}

static void doc_strings(struct json_out *jo)
{
	jo_arr_begin(jo, NULL);
	jo_str(jo, NULL, "a\"b\\c\n\x01");
	jo_str(jo, NULL, NULL);
	jo_bool(jo, NULL, true);
	jo_obj_begin(jo, NULL);
	jo_obj_end(jo);
	jo_arr_end(jo);
}

static void test_strings_escape_and_commas(void **state)
{
	char *t = write_doc(doc_strings);

	(void)state;
	assert_string_equal(t, "[\"a\\\"b\\\\c\\n\\u0001\",null,true,{}]\n");
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_integers_past_2_53_are_strings),
		cmocka_unit_test(test_strings_escape_and_commas),
	};

	return cmocka_run_group_tests_name("json_out", tests, NULL, NULL);
}
