// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Shuffle sharding (Kubernetes shufflesharding.go; KEP-1040 "Probability of Collisions"), pure.
 */
#include "lib/shuffle.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int sl_shuffle_entropy_bits(uint32_t deck, uint32_t hand)
{
	double bits;

	if (!deck || !hand)
		return 0;
	/* Exactly as Kubernetes: float64 log2, multiply, ceil. */
	bits = ceil(log2((double)deck) * (double)hand);
	if (bits >= (double)INT_MAX)
		return INT_MAX;
	return (int)bits;
}

static int invalid(char *why, size_t why_len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int invalid(char *why, size_t why_len, const char *fmt, ...)
{
	va_list ap;

	if (why && why_len) {
		va_start(ap, fmt);
		vsnprintf(why, why_len, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

int sl_shuffle_validate(uint32_t deck, uint32_t hand, char *why, size_t why_len)
{
	int bits;

	if (!deck)
		return invalid(why, why_len, "queues must be at least 1");
	if (!hand)
		return invalid(why, why_len, "handSize must be at least 1");
	if (hand > deck)
		return invalid(why, why_len, "handSize %u is larger than queues %u", hand, deck);
	if (deck > SL_SHUFFLE_MAX_DECK)
		return invalid(why, why_len, "queues %u is more than 2^26 (%u)", deck,
			       (unsigned)SL_SHUFFLE_MAX_DECK);
	bits = sl_shuffle_entropy_bits(deck, hand);
	if (bits > SL_SHUFFLE_MAX_BITS)
		return invalid(why, why_len,
			       "handSize %u needs %d bits of entropy with %u queues; at most %d allowed",
			       hand, bits, deck, SL_SHUFFLE_MAX_BITS);
	if (why && why_len)
		why[0] = '\0';
	return 0;
}

int sl_shuffle_deal(uint32_t deck, uint32_t hand, uint64_t v, uint32_t *cards)
{
	uint32_t digit[SL_SHUFFLE_MAX_HAND];

	if (!cards || sl_shuffle_validate(deck, hand, NULL, 0) || hand > SL_SHUFFLE_MAX_HAND)
		return -EINVAL;
	/* 1. Mixed-radix digits: digit i lies in [0, deck - i). */
	for (uint32_t i = 0; i < hand; i++) {
		uint64_t radix = (uint64_t)deck - i;

		digit[i] = (uint32_t)(v % radix);
		v /= radix;
	}
	/* 2. Distinct cards: walk back over the raw digits, stepping over each. */
	for (uint32_t i = 0; i < hand; i++) {
		uint32_t card = digit[i];

		for (uint32_t j = i; j-- > 0;)
			if (card >= digit[j])
				card++;
		cards[i] = card;
	}
	return 0;
}

/*
 * KEP-1040 "Probability of Collisions", probNextCovered.  The recurrence for D_k is evaluated in its
 * hypergeometric form: with m queues covered so far, a fresh hand adds n
 * new ones with probability
 *   h(m, n) = C(N-m, n) · C(m, H-n) / C(N, H),
 * and P_k = Σ_u D_k(u) · h(u, 0).  For a fixed m, h(m, 0) is the product
 * Π_{i<H} (m-i)/(N-i), and h(m, n+1) = h(m, n) · (N-m-n)(H-n) / ((n+1)(m-H+n+1)).
 * Every term is a non-negative product of ratios, so nothing overflows and
 * there is no cancellation: the relative error stays a small multiple of
 * the long double epsilon (about 1e-19 on x86-64), far below the 1e-12 the
 * header promises.
 */
static long double none_new(uint32_t N, uint32_t H, uint32_t m)
{
	long double p = 1.0L;

	for (uint32_t i = 0; i < H; i++)
		p *= (long double)(m - i) / (long double)(N - i);
	return p;
}

double sl_shuffle_mouse_odds(uint32_t queues, uint32_t hand, uint32_t elephants)
{
	uint32_t N = queues, H = hand, top;
	long double *d, *nd, p = 0;

	if (!N || !H || !elephants || H > N)
		return -1.0;
	if (H == N)
		return 1.0;
	/* u ranges over [H, min(N, kH)]; index the arrays by u directly. */
	top = (uint64_t)elephants * H < N ? elephants * H : N;
	d = calloc((size_t)top + 1, sizeof(*d));
	nd = calloc((size_t)top + 1, sizeof(*nd));
	if (!d || !nd) {
		free(d);
		free(nd);
		return -1.0;
	}
	d[H] = 1.0L; /* D_1 */
	for (uint32_t k = 2; k <= elephants; k++) {
		uint32_t hi = (uint64_t)(k - 1) * H < top ? (k - 1) * H : top;

		for (uint32_t u = H; u <= top; u++)
			nd[u] = 0;
		for (uint32_t m = H; m <= hi; m++) {
			long double h;
			uint32_t nmax;

			if (d[m] == 0)
				continue;
			h = none_new(N, H, m);
			nmax = N - m < H ? N - m : H;
			for (uint32_t n = 0;; n++) {
				nd[m + n] += d[m] * h;
				if (n == nmax)
					break;
				h *= (long double)(N - m - n) * (H - n) /
				     ((long double)(n + 1) * (m - H + n + 1));
			}
		}
		long double *t = d;
		d = nd;
		nd = t;
		/* P_k only grows with k: once it is 1 in double, it stays there. */
		if (top == N && (double)d[N] == 1.0)
			break;
	}
	for (uint32_t u = H; u <= top; u++)
		if (d[u] != 0)
			p += d[u] * none_new(N, H, u);
	free(d);
	free(nd);
	return (double)p;
}
