/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Reading a logfmt line ("event=reload result=ok file=\"a b\""): its
 * key=value pairs in order, a quoted value unescaped.  Pure. */
#ifndef SLUICE_LOGFMT_H
#define SLUICE_LOGFMT_H

#include <stddef.h>

/* fn gets each pair (key not terminated, value unescaped and terminated,
 * in a buffer of the caller's size: longer values are cut).  Words that
 * are not key=value ("...: the running reload is replaced") are skipped.
 * Stops early when fn returns non-zero and returns that; else 0. */
typedef int (*sl_logfmt_fn)(const char *key, size_t key_len, const char *value, void *arg);
int sl_logfmt_each(const char *line, char *value_buf, size_t value_len, sl_logfmt_fn fn, void *arg);

#endif
