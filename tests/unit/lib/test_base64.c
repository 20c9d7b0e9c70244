// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Base64 (user/lib/base64.c) against RFC 4648's test vectors, and what it refuses. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "lib/base64.h"

static void test_rfc4648_vectors(void **state)
{
	static const char *const plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
	static const char *const coded[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
	char enc[16], dec[16];
	size_t n;

	(void)state;
	for (size_t i = 0; i < 7; i++) {
		assert_int_equal(sl_base64_encode(plain[i], strlen(plain[i]), enc, sizeof(enc)), strlen(coded[i]));
		assert_string_equal(enc, coded[i]);
		assert_int_equal(sl_base64_decode(coded[i], strlen(coded[i]), dec, sizeof(dec), &n), 0);
		assert_int_equal(n, strlen(plain[i]));
		assert_memory_equal(dec, plain[i], n);
	}
}

static void test_binary_round_trip(void **state)
{
	unsigned char in[256], out[256];
	char enc[SL_BASE64_LEN(256) + 1];
	size_t n;

	(void)state;
	for (int i = 0; i < 256; i++)
		in[i] = (unsigned char)(255 - i);
	assert_int_equal(sl_base64_encode(in, 256, enc, sizeof(enc)), SL_BASE64_LEN(256));
	assert_int_equal(sl_base64_decode(enc, strlen(enc), out, sizeof(out), &n), 0);
	assert_int_equal(n, 256);
	assert_memory_equal(in, out, 256);
}

static void test_refused(void **state)
{
	char out[8];
	size_t n;

	(void)state;
	assert_int_equal(sl_base64_encode("foobar", 6, out, 8), -E2BIG);   /* 8 + NUL */
	assert_int_equal(sl_base64_decode("Zm9", 3, out, sizeof(out), &n), -EINVAL);
	assert_int_equal(sl_base64_decode("Zm!v", 4, out, sizeof(out), &n), -EINVAL);
	assert_int_equal(sl_base64_decode("Z===", 4, out, sizeof(out), &n), -EINVAL);
	assert_int_equal(sl_base64_decode("Zg==Zg==", 8, out, sizeof(out), &n), -EINVAL); /* padding inside */
	assert_int_equal(sl_base64_decode("Zm9vYmFy", 8, out, 5, &n), -E2BIG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc4648_vectors),
		cmocka_unit_test(test_binary_round_trip),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
