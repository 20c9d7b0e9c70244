// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Which way an interface's refusals leave (engine/tx_path.c): XDP_TX only
 * where it is proven (generic mode, or a device advertising NDO_XMIT) and
 * no drop was seen since the device's features last changed; the hand-off
 * otherwise; XDP_TX when there is no hand-off.  Drops are counted once,
 * said once, and forgotten when the device changes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "engine/tx_path.h"

#define BARE_VETH  0x23ull /* BASIC | REDIRECT | RX_SG: a veth whose peer has no NAPI */
#define NAPI_VETH  0x67ull /* ... | NDO_XMIT | NDO_XMIT_SG: its peer has an XDP program or GRO */

static struct sl_tx_reading native(uint64_t features, uint64_t dropped)
{
	return (struct sl_tx_reading){.handoff_ready = true, .features_known = true,
				      .xdp_features = features, .tx_dropped = dropped};
}

static void test_choose(void **state)
{
	struct sl_tx_reading r = native(BARE_VETH, 0);
	struct sl_tx_choice c;

	(void)state;
	c = sl_tx_choose(&r, false);
	assert_true(c.rst_handoff);
	assert_int_equal(c.reason, SLUICE_IFR_NO_NDO_XMIT);
	r.xdp_features = NAPI_VETH;
	c = sl_tx_choose(&r, false);
	assert_false(c.rst_handoff);
	assert_int_equal(c.reason, SLUICE_IFR_NDO_XMIT);
	/* A veth nobody vouched for: its NDO_XMIT may be a GRO-only peer's,
	 * which never polls the frames. */
	r.xmit_unproven = true;
	c = sl_tx_choose(&r, false);
	assert_true(c.rst_handoff);
	assert_int_equal(c.reason, SLUICE_IFR_VETH_PEER);
	assert_string_equal(sl_tx_reason_name(SLUICE_IFR_VETH_PEER), "veth_peer");
	r.xmit_unproven = false;
	/* Proven, yet seen dropping: the hand-off. */
	c = sl_tx_choose(&r, true);
	assert_true(c.rst_handoff);
	assert_int_equal(c.reason, SLUICE_IFR_DROPS);
	/* Generic XDP_TX is the stack's transmit, whatever the device says. */
	r.generic = true;
	r.xdp_features = BARE_VETH;
	c = sl_tx_choose(&r, false);
	assert_false(c.rst_handoff);
	assert_int_equal(c.reason, SLUICE_IFR_GENERIC);
	assert_true(sl_tx_choose(&r, true).rst_handoff);
	/* Nothing known of the device: the safe way. */
	r = native(0, 0);
	r.features_known = false;
	c = sl_tx_choose(&r, false);
	assert_true(c.rst_handoff);
	assert_int_equal(c.reason, SLUICE_IFR_UNKNOWN);
	/* No hand-off: XDP_TX is all there is. */
	r = native(BARE_VETH, 0);
	r.handoff_ready = false;
	c = sl_tx_choose(&r, true);
	assert_false(c.rst_handoff);
	assert_int_equal(c.reason, SLUICE_IFR_NO_HANDOFF);
	assert_string_equal(sl_tx_reason_name(SLUICE_IFR_NO_NDO_XMIT), "no_ndo_xmit");
	assert_string_equal(sl_tx_reason_name(99), "?");
}

/* A peer that had a program and loses it: XDP_TX until the features say
 * so; the drops in between are counted and said once; a peer that loads a
 * program again brings XDP_TX back, and new drops are counted but not
 * said again. */
static void test_watch_peer_comes_and_goes(void **state)
{
	struct sl_tx_watch w = {0};
	struct sl_tx_reading r = native(NAPI_VETH, 5); /* drops of an earlier life */
	struct sl_tx_choice c;
	enum sl_tx_say say;
	uint64_t lost;
	bool changed;

	(void)state;
	c = sl_tx_watch_step(&w, &r, &changed, &lost, &say);
	assert_true(changed);
	assert_false(c.rst_handoff);
	assert_int_equal(lost, 0);
	assert_int_equal(say, SL_TX_SAY_NONE);
	c = sl_tx_watch_step(&w, &r, &changed, &lost, &say);
	assert_false(changed);
	/* The program goes; before the features are read again, drops. */
	r.tx_dropped = 9;
	c = sl_tx_watch_step(&w, &r, &changed, &lost, &say);
	assert_true(changed);
	assert_true(c.rst_handoff);
	assert_int_equal(c.reason, SLUICE_IFR_DROPS);
	assert_int_equal(lost, 4);
	assert_int_equal(say, SL_TX_SAY_DROPS);
	/* Now the features say it: no NDO_XMIT, the old drops forgotten. */
	r.xdp_features = BARE_VETH;
	c = sl_tx_watch_step(&w, &r, &changed, &lost, &say);
	assert_true(changed);
	assert_true(c.rst_handoff);
	assert_int_equal(c.reason, SLUICE_IFR_NO_NDO_XMIT);
	assert_int_equal(lost, 0);
	assert_int_equal(say, SL_TX_SAY_NONE);
	/* The program is back: XDP_TX again. */
	r.xdp_features = NAPI_VETH;
	c = sl_tx_watch_step(&w, &r, &changed, &lost, &say);
	assert_true(changed);
	assert_false(c.rst_handoff);
	/* New drops: counted, the hand-off again, said no more. */
	r.tx_dropped = 10;
	c = sl_tx_watch_step(&w, &r, &changed, &lost, &say);
	assert_true(c.rst_handoff);
	assert_int_equal(lost, 1);
	assert_int_equal(say, SL_TX_SAY_NONE);
	/* It stays on the hand-off while the device is as it was. */
	c = sl_tx_watch_step(&w, &r, &changed, &lost, &say);
	assert_false(changed);
	assert_true(c.rst_handoff);
}

/* Without a hand-off on a device that does not deliver XDP_TX: said once. */
static void test_watch_unproven(void **state)
{
	struct sl_tx_watch w = {0};
	struct sl_tx_reading r = native(BARE_VETH, 0);
	enum sl_tx_say say;
	uint64_t lost;
	bool changed;

	(void)state;
	r.handoff_ready = false;
	sl_tx_watch_step(&w, &r, &changed, &lost, &say);
	assert_int_equal(say, SL_TX_SAY_UNPROVEN);
	sl_tx_watch_step(&w, &r, &changed, &lost, &say);
	assert_int_equal(say, SL_TX_SAY_NONE);
	/* A counter that went back (a new map): nothing counted as lost. */
	r.tx_dropped = 0;
	w.drops_last = 100;
	sl_tx_watch_step(&w, &r, &changed, &lost, &say);
	assert_int_equal(lost, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_choose),
		cmocka_unit_test(test_watch_peer_comes_and_goes),
		cmocka_unit_test(test_watch_unproven),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
