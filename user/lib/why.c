// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "lib/why.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

void sl_vwhy(char *why, size_t len, const char *fmt, va_list ap)
{
	if (why && len)
		vsnprintf(why, len, fmt, ap);
}

void sl_why(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sl_vwhy(why, len, fmt, ap);
	va_end(ap);
}

int sl_invalid(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sl_vwhy(why, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}
