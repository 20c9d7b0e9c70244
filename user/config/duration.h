/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Durations as the configuration writes them: Go's time.ParseDuration, and
 * the shortest text that parses back to the same value (duration.c).  A
 * leaf of the config layer: the decoder (decode.c) and the public API
 * (config.h) both include it, and it includes neither.
 */
#ifndef SLUICE_CONFIG_DURATION_H
#define SLUICE_CONFIG_DURATION_H

#include <stddef.h>
#include <stdint.h>

#define NSEC ((int64_t)1)
#define USEC (1000 * NSEC)
#define MSEC (1000 * USEC)
#define SEC  (1000 * MSEC)
#define MIN  (60 * SEC)
#define HOUR (60 * MIN)

/*
 * Go-style durations ("250ms", "1m30s", "1.5s", "-" not allowed), units ns,
 * us, µs, ms, s, m, h; at least one number+unit.  A bare number (even "0")
 * is rejected: it needs a unit.  Returns 0, -EINVAL (syntax) or -ERANGE
 * (more than 2^63-1 ns, as in Go).
 */
int sl_parse_duration(const char *s, uint64_t *ns);

/* Shortest Go-style spelling of ns ("1m30s", "250ms", "0s"). snprintf
 * semantics. */
int sl_format_duration(uint64_t ns, char *buf, size_t size);

/* The same parse for the decoder: on failure -EINVAL and a short reason,
 * to follow "duration 'x' ", in why. */
int cd_parse_duration(const char *s, uint64_t *out, char *why, size_t whylen);

/* sl_format_duration into a value, for messages. */
struct cd_durstr { char s[48]; };
struct cd_durstr cd_dur(uint64_t ns);

#endif
