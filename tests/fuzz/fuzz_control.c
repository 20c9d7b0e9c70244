// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libFuzzer target for the control protocol's request parser
 * (sl_control_parse): any bytes a local client could send as one request.
 * Invariants: it accepts exactly the documented words, with an argument
 * only where one is allowed, and otherwise says why.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/control.h"

#define CHECK(x) do { if (!(x)) { fprintf(stderr, "invariant failed: %s (%s:%d)\n", #x, __FILE__, __LINE__); abort(); } } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sl_control_req req = {0};
	const char *why = NULL;
	char *line = malloc(size + 1);
	int rc;

	if (!line)
		return 0;
	memcpy(line, data, size);
	line[size] = '\0';
	rc = sl_control_parse(line, &req, &why);
	if (rc) {
		CHECK(rc == -22 && why && *why);
	} else {
		static const char *const words[] = {"levels", "queues", "flows", "controller", "reload", "shadow"};
		int known = 0;

		for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
			known |= !strcmp(req.word, words[i]);
		CHECK(known);
		CHECK(!req.arg || (*req.arg && !strchr(req.arg, ' ')));
		if (!strcmp(req.word, "shadow"))
			CHECK(req.arg && (!strcmp(req.arg, "on") || !strcmp(req.arg, "off")));
		if (!strcmp(req.word, "reload") || !strcmp(req.word, "controller"))
			CHECK(!req.arg);
	}
	free(line);
	return 0;
}
