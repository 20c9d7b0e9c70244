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
#include <string.h>

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
	struct sl_tx_step st;

	(void)state;
	c = sl_tx_watch_step(&w, &r, &st);
	assert_true(st.changed);
	assert_false(c.rst_handoff);
	assert_int_equal(st.lost, 0);
	assert_int_equal(st.say, SL_TX_SAY_NONE);
	c = sl_tx_watch_step(&w, &r, &st);
	assert_false(st.changed);
	/* The program goes; before the features are read again, drops. */
	r.tx_dropped = 9;
	c = sl_tx_watch_step(&w, &r, &st);
	assert_true(st.changed);
	assert_true(c.rst_handoff);
	assert_int_equal(c.reason, SLUICE_IFR_DROPS);
	assert_int_equal(st.lost, 4);
	assert_int_equal(st.say, SL_TX_SAY_DROPS);
	/* Now the features say it: no NDO_XMIT, the old drops forgotten. */
	r.xdp_features = BARE_VETH;
	c = sl_tx_watch_step(&w, &r, &st);
	assert_true(st.changed);
	assert_true(c.rst_handoff);
	assert_int_equal(c.reason, SLUICE_IFR_NO_NDO_XMIT);
	assert_int_equal(st.lost, 0);
	assert_int_equal(st.say, SL_TX_SAY_NONE);
	/* The program is back: XDP_TX again. */
	r.xdp_features = NAPI_VETH;
	c = sl_tx_watch_step(&w, &r, &st);
	assert_true(st.changed);
	assert_false(c.rst_handoff);
	/* New drops: counted, the hand-off again, said no more. */
	r.tx_dropped = 10;
	c = sl_tx_watch_step(&w, &r, &st);
	assert_true(c.rst_handoff);
	assert_int_equal(st.lost, 1);
	assert_int_equal(st.say, SL_TX_SAY_NONE);
	/* It stays on the hand-off while the device is as it was. */
	c = sl_tx_watch_step(&w, &r, &st);
	assert_false(st.changed);
	assert_true(c.rst_handoff);
}

/* Without a hand-off on a device that does not deliver XDP_TX: said once. */
static void test_watch_unproven(void **state)
{
	struct sl_tx_watch w = {0};
	struct sl_tx_reading r = native(BARE_VETH, 0);
	struct sl_tx_step st;

	(void)state;
	r.handoff_ready = false;
	sl_tx_watch_step(&w, &r, &st);
	assert_int_equal(st.say, SL_TX_SAY_UNPROVEN);
	sl_tx_watch_step(&w, &r, &st);
	assert_int_equal(st.say, SL_TX_SAY_NONE);
	/* A counter that went back (a new map): nothing counted as lost. */
	r.tx_dropped = 0;
	w.tp_last = 100;
	sl_tx_watch_step(&w, &r, &st);
	assert_int_equal(st.lost, 0);
}

static struct sl_tx_reading virtio(uint64_t driver_dropped)
{
	struct sl_tx_reading r = native(0x7full, 0); /* ... | NDO_XMIT: virtio_net */

	r.driver_known = true;
	r.driver_dropped = driver_dropped;
	return r;
}

/* virtio_net drops XDP_TX frames on a full ring and fires no tracepoint:
 * its own counter is the loss, counted once, said once, and the hand-off
 * takes over.  What it counted before sluice watched is no loss of ours. */
static void test_watch_driver_only(void **state)
{
	struct sl_tx_watch w = {0};
	struct sl_tx_reading r = virtio(7);
	struct sl_tx_choice c;
	struct sl_tx_step st;

	(void)state;
	c = sl_tx_watch_step(&w, &r, &st);
	assert_false(c.rst_handoff);
	assert_int_equal(c.reason, SLUICE_IFR_NDO_XMIT);
	assert_int_equal(st.lost, 0);
	r.driver_dropped = 7 + 93;
	c = sl_tx_watch_step(&w, &r, &st);
	assert_true(st.changed);
	assert_true(c.rst_handoff);
	assert_int_equal(c.reason, SLUICE_IFR_DROPS);
	assert_int_equal(st.lost, 93);
	assert_int_equal(st.lost_driver_only, 93);
	assert_int_equal(st.say, SL_TX_SAY_DROPS);
	r.driver_dropped += 2; /* frames already in flight: counted, not said again */
	c = sl_tx_watch_step(&w, &r, &st);
	assert_false(st.changed);
	assert_int_equal(st.lost, 2);
	assert_int_equal(st.say, SL_TX_SAY_NONE);
	assert_int_equal(w.lost, 95);
}

/* veth counts its XDP_TX errors where the tracepoints see them too: a drop
 * is counted once, as the larger of the two. */
static void test_watch_driver_and_tracepoint(void **state)
{
	struct sl_tx_watch w = {0};
	struct sl_tx_reading r = virtio(0);
	struct sl_tx_step st;

	(void)state;
	r.xdp_features = NAPI_VETH;
	sl_tx_watch_step(&w, &r, &st);
	r.tx_dropped = 10;
	r.driver_dropped = 10;
	sl_tx_watch_step(&w, &r, &st);
	assert_int_equal(st.lost, 10);
	assert_int_equal(st.lost_driver_only, 0);
	/* Read between the two counts: the rest arrives next time. */
	r.tx_dropped = 15;
	r.driver_dropped = 12;
	sl_tx_watch_step(&w, &r, &st);
	assert_int_equal(st.lost, 5);
	assert_int_equal(st.lost_driver_only, 0);
	r.tx_dropped = 15;
	r.driver_dropped = 18;
	sl_tx_watch_step(&w, &r, &st);
	assert_int_equal(st.lost, 6);
	assert_int_equal(st.lost_driver_only, 6);
}

/* A driver whose counter appears only now (statistics unreadable before),
 * or goes back (its statistics were reset): a new start, nothing lost. */
static void test_watch_driver_counter_restarts(void **state)
{
	struct sl_tx_watch w = {0};
	struct sl_tx_reading r = virtio(0);
	struct sl_tx_choice c;
	struct sl_tx_step st;

	(void)state;
	r.driver_known = false;
	sl_tx_watch_step(&w, &r, &st);
	r.driver_known = true;
	r.driver_dropped = 500;
	c = sl_tx_watch_step(&w, &r, &st);
	assert_int_equal(st.lost, 0);
	assert_false(c.rst_handoff);
	r.driver_dropped = 3;
	c = sl_tx_watch_step(&w, &r, &st);
	assert_int_equal(st.lost, 0);
	assert_false(c.rst_handoff);
	r.driver_dropped = 4;
	c = sl_tx_watch_step(&w, &r, &st);
	assert_int_equal(st.lost, 1);
	assert_true(c.rst_handoff);
}

/* names[] as the kernel lays them out: 32 bytes each. */
static bool driver_drops(const char *const *names, const uint64_t *values, size_t n, uint64_t *drops)
{
	char flat[16][SL_TX_STAT_NAME_LEN] = {{0}};

	for (size_t i = 0; i < n; i++)
		strncpy(flat[i], names[i], SL_TX_STAT_NAME_LEN);
	return sl_tx_driver_drops(&flat[0][0], values, n, drops);
}

/* The counter's names on the drivers and kernels sluice meets. */
static void test_driver_drops_names(void **state)
{
	/* virtio_net on 6.12: totals, then per queue. */
	const char *v612[] = {"rx_drops", "rx_xdp_tx", "tx_xdp_tx", "tx_xdp_tx_drops", "rx0_xdp_drops",
			      "tx0_xdp_tx", "tx0_xdp_tx_drops", "tx1_xdp_tx_drops"};
	const uint64_t v612_val[] = {1, 2, 3, 40, 5, 6, 30, 10};
	/* virtio_net on 6.1: per queue only. */
	const char *v61[] = {"rx_queue_0_xdp_drops", "tx_queue_0_xdp_tx", "tx_queue_0_xdp_tx_drops",
			     "tx_queue_1_xdp_tx_drops"};
	const uint64_t v61_val[] = {1, 2, 30, 12};
	/* veth: its XDP_TX errors per receive queue (not xdp_xmit_errors:
	 * frames others redirected into it). */
	const char *veth[] = {"peer_ifindex", "rx_queue_0_xdp_tx", "rx_queue_0_xdp_tx_errors",
			      "rx_queue_1_xdp_tx_errors", "tx_queue_0_xdp_xmit_errors"};
	const uint64_t veth_val[] = {2, 3, 4, 5, 99};
	const char *none[] = {"rx_packets", "tx_packets", "rx_xdp_drops"};
	const uint64_t none_val[] = {1, 2, 3};
	uint64_t d = 123;

	(void)state;
	assert_true(driver_drops(v612, v612_val, 8, &d));
	assert_int_equal(d, 40);
	assert_true(driver_drops(v61, v61_val, 4, &d));
	assert_int_equal(d, 42);
	assert_true(driver_drops(veth, veth_val, 5, &d));
	assert_int_equal(d, 9);
	assert_false(driver_drops(none, none_val, 3, &d));
	assert_false(driver_drops(none, none_val, 0, &d));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_choose),
		cmocka_unit_test(test_watch_peer_comes_and_goes),
		cmocka_unit_test(test_watch_unproven),
		cmocka_unit_test(test_watch_driver_only),
		cmocka_unit_test(test_watch_driver_and_tracepoint),
		cmocka_unit_test(test_watch_driver_counter_restarts),
		cmocka_unit_test(test_driver_drops_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
