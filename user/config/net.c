// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Configuration loader: addresses and ports (CIDR lists of FlowSchema
 * subjects/destinations and ConnectionLabels rules; port lists).
 */
#include "config/decode.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const uint8_t v4_mapped_prefix[12] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
};

/* Text of a CIDR as the operator writes it. */
static void cidr_text(const struct sl_cidr *c, char *buf, size_t size)
{
	char a[INET6_ADDRSTRLEN];

	if (c->prefix_len >= 96 && !memcmp(c->addr, v4_mapped_prefix, 12)) {
		inet_ntop(AF_INET, c->addr + 12, a, sizeof(a));
		snprintf(buf, size, "%s/%u", a, c->prefix_len - 96);
	} else {
		inet_ntop(AF_INET6, c->addr, a, sizeof(a));
		snprintf(buf, size, "%s/%u", a, c->prefix_len);
	}
}

static bool host_bits_zero(const uint8_t *addr, unsigned prefix)
{
	for (unsigned b = prefix; b < 128; b++)
		if (addr[b / 8] & (0x80 >> (b % 8)))
			return false;
	return true;
}

static void clear_host_bits(uint8_t *addr, unsigned prefix)
{
	for (unsigned b = prefix; b < 128; b++)
		addr[b / 8] &= (uint8_t)~(0x80 >> (b % 8));
}

bool cd_decode_cidr(struct ctx *c, const struct sl_ynode *v, struct sl_cidr *out)
{
	char addr[INET6_ADDRSTRLEN + 8];
	const char *s, *slash;
	struct sl_cidr r = { 0 };
	unsigned long prefix = 0;
	bool v4, has_prefix;
	size_t alen;
	QBUF;

	if (v->type != SL_Y_STR || !sl_ynode_str(v)) {
		cd_err(c, v, "expected a CIDR such as 10.0.0.0/8 or fd00::/8, got %s",
		       cd_describe(v).s);
		return false;
	}
	s = v->str;
	slash = strchr(s, '/');
	has_prefix = slash != NULL;
	alen = has_prefix ? (size_t)(slash - s) : strlen(s);
	if (alen == 0 || alen >= sizeof(addr))
		goto syntax;
	memcpy(addr, s, alen);
	addr[alen] = '\0';
	if (inet_pton(AF_INET, addr, r.addr + 12) == 1) {
		memcpy(r.addr, v4_mapped_prefix, 12);
		v4 = true;
	} else if (inet_pton(AF_INET6, addr, r.addr) == 1) {
		v4 = false;
	} else {
		goto syntax;
	}
	if (has_prefix) {
		const char *p = slash + 1;

		if (!*p || strspn(p, "0123456789") != strlen(p) || strlen(p) > 3 ||
		    (p[0] == '0' && p[1]))
			goto syntax;
		prefix = strtoul(p, NULL, 10);
		if (prefix > (v4 ? 32u : 128u)) {
			cd_err(c, v, "prefix length %lu is out of range for %s (0..%u) in '%s'",
			       prefix, v4 ? "IPv4" : "IPv6", v4 ? 32 : 128, Q(v));
			return false;
		}
	} else {
		prefix = v4 ? 32 : 128;
	}
	r.prefix_len = (uint8_t)(v4 ? 96 + prefix : prefix);
	if (!host_bits_zero(r.addr, r.prefix_len)) {
		struct sl_cidr net = r, host = r;
		char a[64], b[64];

		clear_host_bits(net.addr, net.prefix_len);
		host.prefix_len = 128;
		cidr_text(&net, a, sizeof(a));
		cidr_text(&host, b, sizeof(b));
		cd_err(c, v, "CIDR '%s' has host bits set; did you mean %s (or %s for the one host)?",
		       Q(v), a, b);
		return false;
	}
	*out = r;
	return true;
syntax:
	cd_err(c, v, "invalid CIDR '%s': expected an IPv4 or IPv6 address with an optional prefix length, e.g. 10.0.0.0/8 or fd00::/8",
	       Q(v));
	return false;
}

void cd_decode_cidr_list(struct ctx *c, const struct sl_ynode *v,
			 struct sl_cidr **out, size_t *n, const char *empty_hint)
{
	*out = NULL;
	*n = 0;
	if (!cd_expect_seq(c, v, "CIDRs (e.g. [10.0.0.0/8, \"fd00::/8\"])"))
		return;
	if (!v->n_items) {
		if (empty_hint)
			cd_err(c, v, "must not be empty; %s", empty_hint);
		return;
	}
	if (!cd_budget(c, v, v->n_items))
		return;
	*out = calloc(v->n_items, sizeof(**out));
	if (!*out) {
		cd_oom(c);
		return;
	}
	for (size_t i = 0; i < v->n_items; i++) {
		size_t old = cd_path_push_index(c, i);

		if (cd_decode_cidr(c, v->items[i], &(*out)[*n]))
			(*n)++;
		cd_path_pop(c, old);
	}
}

/* Decimal number at *s (saturating at 99999999), advancing *s. */
static long scan_number(const char **s)
{
	long v = 0;

	for (; **s >= '0' && **s <= '9'; (*s)++)
		if (v < 99999999)
			v = v * 10 + (**s - '0');
	return v;
}

int cd_parse_port_range(const char *s, long *lo, long *hi)
{
	if (!(*s >= '0' && *s <= '9'))
		return -EINVAL;
	*lo = *hi = scan_number(&s);
	while (*s == ' ')
		s++;
	if (*s) {
		if (*s++ != '-')
			return -EINVAL;
		while (*s == ' ')
			s++;
		if (!(*s >= '0' && *s <= '9'))
			return -EINVAL;
		*hi = scan_number(&s);
		if (*s)
			return -EINVAL;
	}
	return *lo < 1 || *lo > 65535 || *hi < 1 || *hi > 65535 ? -ERANGE : 0;
}

struct port_item {
	uint16_t lo, hi;
	size_t idx; /* list index */
};

static int cmp_port_item(const void *a, const void *b)
{
	const struct port_item *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Overlaps inside one list: a warning at the later entry (O(n log n)). */
static void warn_port_overlaps(struct ctx *c, const struct sl_ynode *v,
			       const struct port_item *items, size_t n)
{
	struct port_item *s = malloc(n * sizeof(*s));
	size_t reach = 0; /* index in s of the entry reaching furthest so far */

	if (!s) {
		cd_oom(c);
		return;
	}
	memcpy(s, items, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_port_item);
	for (size_t i = 1; i < n; i++) {
		const struct port_item *prev = &s[reach], *cur = &s[i];
		const struct port_item *later = cur->idx > prev->idx ? cur : prev;
		const struct port_item *earlier = later == cur ? prev : cur;
		const struct sl_ynode *ln = v->items[later->idx];
		const struct sl_ynode *en = v->items[earlier->idx];
		size_t old;

		if (cur->lo <= prev->hi) {
			old = cd_path_push_index(c, later->idx);
			if (later->lo == later->hi && earlier->lo == earlier->hi)
				cd_warn(c, ln, "port %u is listed twice (also listed at %s:%u:%u)",
					later->lo, c->file, en->line, en->column);
			else
				cd_warn(c, ln, "overlaps the entry at %s:%u:%u (ports %u-%u)",
					c->file, en->line, en->column,
					cur->lo > prev->lo ? cur->lo : prev->lo,
					cur->hi < prev->hi ? cur->hi : prev->hi);
			cd_path_pop(c, old);
		}
		if (cur->hi > prev->hi)
			reach = i;
	}
	free(s);
}

void cd_decode_port_list(struct ctx *c, const struct sl_ynode *v,
			 struct sl_port_range **out, size_t *n)
{
	struct port_item *items;
	size_t star = SIZE_MAX, n_items = 0;

	*out = NULL;
	*n = 0;
	if (!cd_expect_seq(c, v, "ports, port ranges or \"*\" (e.g. [80, \"9000-9100\"])"))
		return;
	if (!v->n_items) {
		cd_err(c, v, "must not be empty; use [\"*\"] for any port, or leave the field out");
		return;
	}
	if (!cd_budget(c, v, v->n_items))
		return;
	items = calloc(v->n_items, sizeof(*items));
	if (!items) {
		cd_oom(c);
		return;
	}
	for (size_t i = 0; i < v->n_items; i++) {
		const struct sl_ynode *it = v->items[i];
		size_t old = cd_path_push_index(c, i);
		long lo = 0, hi = 0;
		int r;
		QBUF;

		if (it->type == SL_Y_INT) {
			int64_t x;

			if (sl_ynode_int(it, &x) || x < 1 || x > 65535) {
				cd_err(c, it, "port %s is out of range; ports are 1..65535",
				       Q(it));
				goto next;
			}
			lo = hi = (long)x;
		} else if (it->type == SL_Y_STR && it->len == 1 && it->str[0] == '*') {
			if (star == SIZE_MAX)
				star = i;
			goto next;
		} else if (it->type == SL_Y_STR && sl_ynode_str(it)) {
			r = cd_parse_port_range(it->str, &lo, &hi);
			if (r == -EINVAL) {
				cd_err(c, it, "expected a port (1..65535), a port range like \"9000-9100\" or \"*\", got string '%s'",
				       Q(it));
				goto next;
			}
			if (r == -ERANGE) {
				cd_err(c, it, "port range '%s' is out of range; ports are 1..65535",
				       Q(it));
				goto next;
			}
			if (lo > hi) {
				cd_err(c, it, "port range '%s' is reversed; write \"%ld-%ld\"",
				       Q(it), hi, lo);
				goto next;
			}
		} else {
			cd_err(c, it, "expected a port (1..65535), a port range like \"9000-9100\" or \"*\", got %s",
			       cd_describe(it).s);
			goto next;
		}
		items[n_items++] = (struct port_item){
			.lo = (uint16_t)lo, .hi = (uint16_t)hi, .idx = i,
		};
next:
		cd_path_pop(c, old);
	}
	if (star != SIZE_MAX && v->n_items > 1) {
		size_t old = cd_path_push_index(c, star);

		cd_err(c, v->items[star], "'*' matches every port and must be the only entry");
		cd_path_pop(c, old);
	}
	if (star == SIZE_MAX && n_items) {
		warn_port_overlaps(c, v, items, n_items);
		*out = calloc(n_items, sizeof(**out));
		if (!*out) {
			cd_oom(c);
		} else {
			for (size_t i = 0; i < n_items; i++)
				(*out)[i] = (struct sl_port_range){ items[i].lo, items[i].hi };
			*n = n_items;
		}
	}
	free(items);
}
