// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "engine/limits.h"

#include <errno.h>
#include <math.h>

int sl_limits_compute(uint32_t server_cl, const struct sl_limit_input *in, size_t n,
		      struct sl_level_limits *out)
{
	double sum = 0;

	if (!server_cl || !n)
		return -EINVAL;
	/* The sum runs over every level, exempt ones included (Kubernetes apf_controller.go digestConfigObjects). */
	for (size_t i = 0; i < n; i++)
		sum += in[i].shares;

	for (size_t i = 0; i < n; i++) {
		struct sl_level_limits *l = &out[i];
		/* Multiply first, then divide, as Kubernetes does in float64. */
		double nominal = sum > 0 ? ceil((double)server_cl * in[i].shares / sum) : 0;

		l->nominal = (uint32_t)nominal;
		l->lendable = (uint32_t)round(nominal * in[i].lendable_percent / 100.0);
		if (in[i].exempt || in[i].borrowing_limit_percent < 0)
			l->borrowing = server_cl;
		else
			l->borrowing = (uint32_t)round(nominal * in[i].borrowing_limit_percent / 100.0);
		l->min = l->nominal - l->lendable;
		l->max = l->nominal + l->borrowing;
		l->initial = (uint32_t)round(l->nominal - l->lendable / 2.0);
	}
	return 0;
}
