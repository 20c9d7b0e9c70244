/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Formatting helpers shared by the daemon and the CLI (pure). */
#ifndef SLUICE_FMT_H
#define SLUICE_FMT_H

#include <stddef.h>
#include <stdint.h>

#include "sluice_abi.h"

#define SL_ADDR_STRLEN 46

/* A v4-mapped address prints as dotted quad, anything else as IPv6. */
const char *sl_fmt_addr(const uint8_t addr[16], char *buf, size_t len);
/* "198.18.0.2:41234" or "[fd00::2]:41234"; port in network order. */
const char *sl_fmt_endpoint(const uint8_t addr[16], uint16_t port_be, char *buf, size_t len);
/* Parse an IPv4 or IPv6 literal into the v4-mapped 16-byte form.
 * Returns 4 or 6, or -EINVAL. */
int sl_parse_addr(const char *s, uint8_t out[16]);

#endif
