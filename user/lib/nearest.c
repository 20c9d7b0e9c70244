// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The candidate nearest a mistyped word.  See nearest.h. */
#include "lib/nearest.h"

#include <stdint.h>
#include <string.h>

#define MAX_WORD 64
#define NEAR_ENOUGH 2

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

size_t sl_edit_distance(const char *a, const char *b)
{
	unsigned short d[MAX_WORD + 1][MAX_WORD + 1];
	size_t la = strlen(a), lb = strlen(b);

	if (la > MAX_WORD || lb > MAX_WORD)
		return SIZE_MAX;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = (unsigned short)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (unsigned short)j;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++) {
			unsigned cost = lower(a[i - 1]) != lower(b[j - 1]);
			unsigned v = d[i - 1][j] + 1u;

			if (d[i][j - 1] + 1u < v)
				v = d[i][j - 1] + 1u;
			if (d[i - 1][j - 1] + cost < v)
				v = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
			    lower(a[i - 2]) == lower(b[j - 1]) && d[i - 2][j - 2] + 1u < v)
				v = d[i - 2][j - 2] + 1u;
			d[i][j] = (unsigned short)v;
		}
	}
	return d[la][lb];
}

const char *sl_nearest(const char *word, const char *const *candidates, size_t n)
{
	const char *best = NULL;
	size_t best_d = NEAR_ENOUGH + 1, len = strlen(word);

	if (!len)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		size_t d;

		if (!candidates[i])
			continue;
		if (!strncmp(candidates[i], word, len))
			return candidates[i];
		d = sl_edit_distance(word, candidates[i]);
		if (d < best_d) {
			best_d = d;
			best = candidates[i];
		}
	}
	return best;
}
