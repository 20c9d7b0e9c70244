/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What the oldest supported verifier (Debian 12's 6.1) needs to follow a
 * bound the code already checks. */
#ifndef SLUICE_BPF_BOUNDS_H
#define SLUICE_BPF_BOUNDS_H

/*
 * Make the next bound check of V reach the verifier.  Verifiers before
 * 6.18 lose what they know of a byte-swapped value (clang emits be16 for
 * bpf_ntohs, and 6.1 and 6.12 forget its range), and 6.1 loses a bound
 * that went through a stack spill; clang, which knows better, drops a
 * check it can prove redundant.  An empty asm hides V from clang, so the
 * check stays and the verifier learns the range from it.  Costs nothing.
 */
#ifndef SLUICE_TEST_UNBOUNDED
#define verifier_opaque(v) asm volatile("" : "+r"(v))
#else
/* The kernel matrix's test of itself (tests/kernels/matrix.sh): the object
 * without these, which this host's 6.18 loads and 6.1 refuses. */
#define verifier_opaque(v) ((void)(v))
#endif

#endif /* SLUICE_BPF_BOUNDS_H */
