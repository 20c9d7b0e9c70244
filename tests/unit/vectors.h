/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Reading the reference vectors (spec/vectors/NAME.json, copied to
 * tests/vectors) in cmocka tests.  Include after <cmocka.h>. */
#ifndef SLUICE_TEST_VECTORS_H
#define SLUICE_TEST_VECTORS_H

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

/* SLUICE_VECTORS overrides the directory (default: run from the repo root). */
static inline const char *vectors_dir(void)
{
	const char *d = getenv("SLUICE_VECTORS");

	return d ? d : "tests/vectors";
}

/* The parsed file; a missing or broken file fails the test, never skips. */
static inline json_t *load_vectors(const char *name)
{
	char path[512];
	json_error_t jerr;
	json_t *root;

	snprintf(path, sizeof(path), "%s/%s", vectors_dir(), name);
	root = json_load_file(path, 0, &jerr);
	if (!root)
		fail_msg("%s:%d: %s", path, jerr.line, jerr.text);
	return root;
}

#endif
