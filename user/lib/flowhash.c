// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "lib/flowhash.h"

#include <string.h>

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

static uint64_t load_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

#define SIPROUND                                                   \
	do {                                                       \
		v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32); \
		v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;             \
		v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;             \
		v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32); \
	} while (0)

uint64_t sl_siphash24(const uint8_t key[16], const void *data, size_t len)
{
	const uint8_t *in = data;
	uint64_t k0 = load_le64(key), k1 = load_le64(key + 8);
	uint64_t v0 = 0x736f6d6570736575ULL ^ k0, v1 = 0x646f72616e646f6dULL ^ k1;
	uint64_t v2 = 0x6c7967656e657261ULL ^ k0, v3 = 0x7465646279746573ULL ^ k1;
	uint64_t b = (uint64_t)len << 56, m;
	size_t i, tail = len & 7;

	for (i = 0; i + 8 <= len; i += 8) {
		m = load_le64(in + i);
		v3 ^= m;
		SIPROUND;
		SIPROUND;
		v0 ^= m;
	}
	for (size_t t = 0; t < tail; t++)
		b |= (uint64_t)in[i + t] << (8 * t);
	v3 ^= b;
	SIPROUND;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

uint64_t sl_flow_hash(const uint8_t key[16], const char *schema, const char *distinguisher)
{
	size_t ls = strlen(schema), ld = strlen(distinguisher);
	uint8_t buf[512];

	/* Names are short (<= 47) and distinguishers are addresses or CIDRs. */
	if (ls + 1 + ld > sizeof(buf))
		ld = sizeof(buf) - 1 - ls;
	memcpy(buf, schema, ls);
	buf[ls] = 0;
	memcpy(buf + ls + 1, distinguisher, ld);
	return sl_siphash24(key, buf, ls + 1 + ld);
}
