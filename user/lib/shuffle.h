/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Shuffle sharding (Kubernetes shufflesharding.go; KEP-1040 "Probability of Collisions"), pure.
 */
#ifndef SLUICE_SHUFFLE_H
#define SLUICE_SHUFFLE_H

#include <stddef.h>
#include <stdint.h>

#define SL_SHUFFLE_MAX_HAND   15
#define SL_SHUFFLE_MAX_DECK   (1u << 26)
#define SL_SHUFFLE_MAX_BITS   60

/* ceil(log2(deck) * hand), computed as Kubernetes does (double). */
int sl_shuffle_entropy_bits(uint32_t deck, uint32_t hand);

/* Kubernetes shufflesharding.go ValidateParameters dealer validation.  0, or -EINVAL with the reason in why
 * ("handSize 9 needs 63 bits of entropy with 128 queues; at most 60 allowed"). */
int sl_shuffle_validate(uint32_t deck, uint32_t hand, char *why, size_t why_len);

/* Kubernetes shufflesharding.go DealIntoHand: deal a hand of `hand` distinct cards from `deck` for hash value v,
 * in deal order.  Parameters must validate.  0 or -EINVAL. */
int sl_shuffle_deal(uint32_t deck, uint32_t hand, uint64_t v, uint32_t *cards);

/* KEP-1040 "Probability of Collisions": probability that a mouse flow's hand lies entirely inside the union
 * of k elephant hands (N queues, hand size H).  Exact to >= 12 significant
 * digits.  Returns a negative value when the parameters are invalid. */
double sl_shuffle_mouse_odds(uint32_t queues, uint32_t hand, uint32_t elephants);

#endif
