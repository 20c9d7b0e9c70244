// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libFuzzer target for the replay trace parser (ctl_trace_parse): any
 * bytes as a trace file.  Invariants: it accepts or explains; every row it
 * returns has a finite time.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/trace.h"

#define CHECK(x) do { if (!(x)) { fprintf(stderr, "invariant failed: %s (%s:%d)\n", #x, __FILE__, __LINE__); abort(); } } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctl_trace_row *rows = NULL;
	size_t n = 0;
	bool has_setpoint;
	char *text = malloc(size + 1);

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (!ctl_trace_parse("fuzz.csv", text, size, &rows, &n, &has_setpoint)) {
		CHECK(n == 0 || rows);
		for (size_t i = 0; i < n; i++) {
			CHECK(isfinite(rows[i].t_s));
			CHECK(!i || rows[i].t_s >= rows[i - 1].t_s);
			CHECK(isnan(rows[i].signal) || (isfinite(rows[i].signal) && rows[i].signal >= 0));
			CHECK(has_setpoint || isnan(rows[i].setpoint));
		}
	} else {
		CHECK(!rows && !n);
	}
	free(rows);
	free(text);
	return 0;
}
