// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Reconciling the connection table with the kernel's sockets
 * (dataplane/reconcile.c), over a real BPF hash map: an established entry
 * without a socket gives its seats back, once; one with a socket, one too
 * young for the snapshot, and a half-open one (the expiry sweep's) stay.
 * Needs root (BPF maps).
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "dataplane/dataplane.h"
#include "dataplane/reconcile.h"
#include "sluice_abi.h"

#define SEC 1000000000ULL
#define LEVEL 2

static struct sluice_conn_key key_of(uint8_t host)
{
	struct sluice_conn_key k = {.family = 4, .dport = 8080, .sport = (uint16_t)(40000 + host)};

	k.saddr[10] = k.saddr[11] = k.daddr[10] = k.daddr[11] = 0xff;
	k.saddr[12] = 198, k.saddr[13] = 18, k.saddr[15] = host;
	k.daddr[12] = 198, k.daddr[13] = 18, k.daddr[15] = 1;
	return k;
}

static void put(int fd, struct sluice_conn_key k, uint32_t state, uint64_t established_ns, uint32_t seats)
{
	struct sluice_conn c = {.admitted_ns = established_ns ? established_ns - 1000 : 5 * SEC,
				.established_ns = established_ns, .level = LEVEL, .seats = seats,
				.state = state};

	assert_int_equal(bpf_map_update_elem(fd, &k, &c, BPF_NOEXIST), 0);
}

static bool present(int fd, struct sluice_conn_key k)
{
	struct sluice_conn c;

	return bpf_map_lookup_elem(fd, &k, &c) == 0;
}

static void test_gone_connections_give_their_seats_back(void **state)
{
	struct sluice_seats seats[SLUICE_MAX_LEVELS] = {0};
	struct sl_dataplane dp;
	struct sluice_conn_key live = key_of(10), gone = key_of(11), young = key_of(12),
			       halfopen = key_of(13);
	struct sl_live_sockets socks = {.keys = &live, .n = 1};
	const uint64_t asked = 100 * SEC, grace = SEC;
	int fd;

	(void)state;
	memset(&dp, 0, sizeof(dp));
	for (size_t i = 0; i < SL_MAP__COUNT; i++)
		dp.maps.fd[i] = -1;
	fd = bpf_map_create(BPF_MAP_TYPE_HASH, NULL, sizeof(struct sluice_conn_key),
			    sizeof(struct sluice_conn), 64, NULL);
	if (fd < 0)
		fail_msg("bpf_map_create: %s (the test needs root and BPF)", strerror(errno));
	dp.maps.fd[SL_MAP_CONNS] = fd;
	dp.seats = seats;
	put(fd, live, SLUICE_CONN_ESTABLISHED, 10 * SEC, 1);
	put(fd, gone, SLUICE_CONN_ESTABLISHED, 10 * SEC, 3);
	put(fd, young, SLUICE_CONN_ESTABLISHED, asked - grace / 2, 1);
	put(fd, halfopen, SLUICE_CONN_ADMITTED, 0, 1);
	seats[LEVEL].seats_in_use = 6;

	assert_int_equal(sl_reconcile_with(&dp, &socks, asked, grace), 1);
	assert_false(present(fd, gone));
	assert_true(present(fd, live));
	assert_true(present(fd, young));
	assert_true(present(fd, halfopen));
	assert_int_equal(seats[LEVEL].seats_in_use, 3);

	/* Once: the next pass finds nothing more to release. */
	assert_int_equal(sl_reconcile_with(&dp, &socks, asked, grace), 0);
	assert_int_equal(seats[LEVEL].seats_in_use, 3);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gone_connections_give_their_seats_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
