/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Growing arrays (lib): one rule for the many "append, doubling the
 * capacity" arrays of the compilers.
 */
#ifndef SLUICE_GROW_H
#define SLUICE_GROW_H

#include <stddef.h>

/* Make room for `need` elements of `elem` bytes in *v (capacity *cap),
 * doubling from 8.  0, or -ENOMEM with *v and *cap unchanged. */
int sl_grow(void **v, size_t *cap, size_t need, size_t elem);

#endif
