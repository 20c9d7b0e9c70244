// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Unit tests for the default route's device (user/lib/default_route.c),
 * on the text of /proc/net/route and /proc/net/ipv6_route as Linux
 * writes it. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/default_route.h"

static const char v4_head[] =
	"Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n";

static void test_v4_lowest_metric(void **state)
{
	static const char route[] =
		"Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
		"ens5\t00000000\t0101A8C0\t0003\t0\t0\t600\t00000000\t0\t0\t0\n"
		"eth1\t00000000\t0102A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0\n"
		"eth1\t0001A8C0\t00000000\t0001\t0\t0\t100\t00FFFFFF\t0\t0\t0\n";
	char dev[64];

	(void)state;
	assert_int_equal(sl_default_route_dev(route, NULL, dev, sizeof(dev)), 0);
	assert_string_equal(dev, "eth1");
}

static void test_v4_down_or_reject_do_not_count(void **state)
{
	static const char route[] =
		"Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
		"eth0\t00000000\t0101A8C0\t0002\t0\t0\t0\t00000000\t0\t0\t0\n"   /* not up */
		"eth9\t00000000\t00000000\t0201\t0\t0\t0\t00000000\t0\t0\t0\n"   /* reject */
		"lo\t00000000\t00000000\t0001\t0\t0\t0\t00000000\t0\t0\t0\n"
		"eno1\t00000000\t0101A8C0\t0003\t0\t0\t900\t00000000\t0\t0\t0\n";
	char dev[64];

	(void)state;
	assert_int_equal(sl_default_route_dev(route, NULL, dev, sizeof(dev)), 0);
	assert_string_equal(dev, "eno1");
}

/* No IPv4 default: IPv6's, past the kernel's unreachable default on lo. */
static void test_v6_fallback(void **state)
{
	static const char v6[] =
		"fd000000000000000000000000000000 40 00000000000000000000000000000000 00 "
		"00000000000000000000000000000000 00000100 00000001 00000000 00000001 wan0\n"
		"00000000000000000000000000000000 00 00000000000000000000000000000000 00 "
		"fe800000000000000000000000000001 00000400 00000001 00000000 00000003 wan0\n"
		"00000000000000000000000000000000 00 00000000000000000000000000000000 00 "
		"00000000000000000000000000000000 ffffffff 00000001 00000000 00200200 lo\n";
	char dev[64];

	(void)state;
	assert_int_equal(sl_default_route_dev(v4_head, v6, dev, sizeof(dev)), 0);
	assert_string_equal(dev, "wan0");
}

static void test_none(void **state)
{
	static const char v6_lo_only[] =
		"00000000000000000000000000000000 00 00000000000000000000000000000000 00 "
		"00000000000000000000000000000000 ffffffff 00000001 00000000 00200200 lo\n";
	char dev[64] = "unchanged";

	(void)state;
	assert_int_equal(sl_default_route_dev(v4_head, v6_lo_only, dev, sizeof(dev)), -ENOENT);
	assert_string_equal(dev, "unchanged");
	assert_int_equal(sl_default_route_dev(NULL, NULL, dev, sizeof(dev)), -ENOENT);
	assert_int_equal(sl_default_route_dev("", "", dev, sizeof(dev)), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v4_lowest_metric),
		cmocka_unit_test(test_v4_down_or_reject_do_not_count),
		cmocka_unit_test(test_v6_fallback),
		cmocka_unit_test(test_none),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
