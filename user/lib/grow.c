// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "lib/grow.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

int sl_grow(void **v, size_t *cap, size_t need, size_t elem)
{
	size_t c = *cap ? *cap : 8;
	void *nv;

	if (need <= *cap)
		return 0;
	while (c < need) {
		if (c > SIZE_MAX / 2 / elem)
			return -ENOMEM;
		c *= 2;
	}
	nv = realloc(*v, c * elem);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = c;
	return 0;
}
