/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * "Did you mean ...?": the candidate nearest a mistyped word, for the one
 * line an unknown command or option gets.
 */
#ifndef SLUICE_LIB_NEAREST_H
#define SLUICE_LIB_NEAREST_H

#include <stddef.h>

/* Optimal string alignment distance (Damerau-Levenshtein, no substring
 * edited twice), ASCII letters compared without case; SIZE_MAX for a word
 * over 64 bytes. */
size_t sl_edit_distance(const char *a, const char *b);

/* The candidate word is closest to: one it begins, or one within two
 * edits (insert, delete, change, swap two neighbours), the fewest edits
 * first, the first listed on a tie; NULL when none is that close. */
const char *sl_nearest(const char *word, const char *const *candidates, size_t n);

#endif
