/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The "why" of a refusal (lib): engines explain what they reject in a
 * caller's buffer, which may be NULL or empty. */
#ifndef SLUICE_WHY_H
#define SLUICE_WHY_H

#include <stdarg.h>
#include <stddef.h>

/* Format into why (if there is room); nothing when why is NULL or len 0. */
void sl_why(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

void sl_vwhy(char *why, size_t len, const char *fmt, va_list ap);

/* sl_why, then -EINVAL: `return sl_invalid(why, len, "...", ...);`. */
int sl_invalid(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
