/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Base64 (RFC 4648, the standard alphabet, padded): etcd's JSON gateway
 * carries keys and values so.
 */
#ifndef SLUICE_LIB_BASE64_H
#define SLUICE_LIB_BASE64_H

#include <stddef.h>

/* The encoded length of n bytes, without the NUL. */
#define SL_BASE64_LEN(n) (((n) + 2) / 3 * 4)

/* Encode n bytes into out (NUL-terminated).  The length, or -E2BIG when
 * out_size cannot hold it and its NUL. */
int sl_base64_encode(const void *in, size_t n, char *out, size_t out_size);
/* Decode len characters into out; *n the bytes written.  0, -EINVAL (not
 * base64) or -E2BIG (out too small). */
int sl_base64_decode(const char *in, size_t len, void *out, size_t out_size, size_t *n);

#endif
