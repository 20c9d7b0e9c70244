// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "engine/classifier.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

static const uint8_t v4_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

bool sl_addr_is_v4(const uint8_t addr[16])
{
	return !memcmp(addr, v4_prefix, sizeof(v4_prefix));
}

bool sl_cidr_contains(const struct sl_cidr *c, const uint8_t addr[16])
{
	unsigned full = c->prefix_len / 8, rest = c->prefix_len % 8;

	if (memcmp(c->addr, addr, full))
		return false;
	if (rest) {
		uint8_t mask = (uint8_t)(0xff << (8 - rest));

		return (c->addr[full] & mask) == (addr[full] & mask);
	}
	return true;
}

bool sl_addr_is_loopback(const uint8_t addr[16])
{
	static const uint8_t one[16] = {[15] = 1};

	if (sl_addr_is_v4(addr))
		return addr[12] == 127;
	return !memcmp(addr, one, 16);
}

bool sl_cidr_is_loopback(const struct sl_cidr *c)
{
	/* 127.0.0.0/8 is ::ffff:127.0.0.0/104; a shorter v6 prefix than /128
	 * has its host bits clear, so ::1 is in the test only as ::1/128. */
	return c->prefix_len >= 104 && sl_addr_is_loopback(c->addr);
}

const char *sl_cidr_format(const struct sl_cidr *c, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	if (sl_addr_is_v4(c->addr) && c->prefix_len >= 96) {
		inet_ntop(AF_INET, c->addr + 12, a, sizeof(a));
		snprintf(buf, len, "%s/%u", a, c->prefix_len - 96);
	} else {
		inet_ntop(AF_INET6, c->addr, a, sizeof(a));
		snprintf(buf, len, "%s/%u", a, c->prefix_len);
	}
	return buf;
}

static void addr_string(const uint8_t addr[16], char *buf, size_t len)
{
	if (sl_addr_is_v4(addr))
		inet_ntop(AF_INET, addr + 12, buf, (socklen_t)len);
	else
		inet_ntop(AF_INET6, addr, buf, (socklen_t)len);
}

static bool any_cidr(const struct sl_cidr *c, size_t n, const uint8_t addr[16])
{
	for (size_t i = 0; i < n; i++)
		if (sl_cidr_contains(&c[i], addr))
			return true;
	return false;
}

static bool any_port(const struct sl_port_range *r, size_t n, uint16_t port)
{
	for (size_t i = 0; i < n; i++)
		if (port >= r[i].lo && port <= r[i].hi)
			return true;
	return false;
}

int sl_conn_labels(const struct sl_config *cfg, const struct sl_conn_tuple *t,
		   struct sl_labels *out)
{
	char buf[INET6_ADDRSTRLEN];
	int err = 0;

	sl_labels_clear(out);
	addr_string(t->saddr, buf, sizeof(buf));
	err |= sl_labels_set(out, SL_LABEL_SRC_IP, buf);
	addr_string(t->daddr, buf, sizeof(buf));
	err |= sl_labels_set(out, SL_LABEL_DST_IP, buf);
	snprintf(buf, sizeof(buf), "%u", t->sport);
	err |= sl_labels_set(out, SL_LABEL_SRC_PORT, buf);
	snprintf(buf, sizeof(buf), "%u", t->dport);
	err |= sl_labels_set(out, SL_LABEL_DST_PORT, buf);
	err |= sl_labels_set(out, SL_LABEL_PROTO, "tcp");
	err |= sl_labels_set(out, SL_LABEL_IP_VERSION, sl_addr_is_v4(t->saddr) ? "4" : "6");
	err |= sl_labels_set(out, SL_LABEL_IFACE, t->iface ? t->iface : "");
	if (err)
		return -12; /* -ENOMEM */

	for (size_t o = 0; o < cfg->n_label_objects; o++) {
		const struct sl_label_object *obj = &cfg->label_objects[o];

		for (size_t r = 0; r < obj->n_rules; r++) {
			const struct sl_label_rule *rule = &obj->rules[r];

			if (rule->n_sources && !any_cidr(rule->sources, rule->n_sources, t->saddr))
				continue;
			if (rule->n_destinations &&
			    !any_cidr(rule->destinations, rule->n_destinations, t->daddr))
				continue;
			if (rule->n_ports && !any_port(rule->ports, rule->n_ports, t->dport))
				continue;
			for (size_t l = 0; l < rule->labels.count; l++)
				if (sl_labels_set(out, rule->labels.items[l].key, rule->labels.items[l].value))
					return -12;
		}
	}
	return 0;
}

static bool subject_matches(const struct sl_subject *s, const struct sl_conn_tuple *t,
			    const struct sl_labels *labels)
{
	if (s->kind == SL_SUBJECT_NETWORK)
		return any_cidr(s->cidrs, s->n_cidrs, t->saddr);
	return sl_label_matcher_eval(&s->labels, labels);
}

static bool destination_matches(const struct sl_destination *d, const struct sl_conn_tuple *t)
{
	if (d->n_ports && !any_port(d->ports, d->n_ports, t->dport))
		return false;
	if (d->n_addresses && !any_cidr(d->addresses, d->n_addresses, t->daddr))
		return false;
	return true;
}

/* A rule matches when any subject and any destination match. */
static bool rule_matches(const struct sl_fs_rule *r, const struct sl_conn_tuple *t,
			 const struct sl_labels *labels, size_t *subject, size_t *destination)
{
	size_t s, d;

	for (s = 0; s < r->n_subjects; s++)
		if (subject_matches(&r->subjects[s], t, labels))
			break;
	if (s == r->n_subjects)
		return false;
	for (d = 0; d < r->n_destinations; d++)
		if (destination_matches(&r->destinations[d], t))
			break;
	if (d == r->n_destinations)
		return false;
	*subject = s;
	*destination = d;
	return true;
}

static bool policy_selects(const struct sl_policy_cfg *p, const struct sl_labels *labels)
{
	/* Selectors are OR-ed (Aperture selectors/selector.go and multi-matcher.go).  The control point of a
	 * connection is always "ingress", its service always "any" (the
	 * loader refuses others). */
	for (size_t i = 0; i < p->n_selectors; i++)
		if (sl_label_matcher_eval(&p->selectors[i].matcher, labels))
			return true;
	return false;
}

void sl_classify(const struct sl_config *cfg, const struct sl_conn_tuple *t,
		 const struct sl_labels *labels, struct sl_class_result *out)
{
	out->schema = out->rule = out->subject = out->destination = SL_NONE;
	out->level = out->policy = out->workload = out->also_policy = SL_NONE;

	/* cfg->schemas is sorted by (precedence, name): first match wins. */
	for (size_t i = 0; i < cfg->n_schemas && out->schema == SL_NONE; i++) {
		const struct sl_flow_schema *fs = &cfg->schemas[i];

		for (size_t r = 0; r < fs->n_rules; r++) {
			if (rule_matches(&fs->rules[r], t, labels, &out->subject, &out->destination)) {
				out->schema = i;
				out->rule = r;
				out->level = fs->level;
				break;
			}
		}
	}
	for (size_t p = 0; p < cfg->n_policies; p++) {
		const struct sl_policy_cfg *pol = &cfg->policies[p];

		if (!policy_selects(pol, labels))
			continue;
		if (out->policy != SL_NONE) {
			out->also_policy = p;
			break;
		}
		out->policy = p;
		/* Ties go to the lowest workload index (Aperture selectors/selector.go and multi-matcher.go). */
		for (size_t w = 0; w < pol->n_workloads; w++) {
			if (sl_label_matcher_eval(&pol->workloads[w].matcher, labels)) {
				out->workload = w;
				break;
			}
		}
	}
}

const char *sl_flow_distinguisher(const struct sl_flow_schema *fs, const struct sl_conn_tuple *t,
				  char *buf, size_t len)
{
	struct sl_cidr c;

	switch (fs->distinguisher) {
	case SL_DIST_BY_SOURCE:
		memcpy(c.addr, t->saddr, 16);
		c.prefix_len = sl_addr_is_v4(t->saddr) ? (uint8_t)(96 + fs->prefix_len_v4)
						       : fs->prefix_len_v6;
		/* Mask the host bits. */
		for (unsigned b = c.prefix_len; b < 128; b++)
			c.addr[b / 8] &= (uint8_t)~(0x80 >> (b % 8));
		if ((sl_addr_is_v4(t->saddr) && fs->prefix_len_v4 == 32) ||
		    (!sl_addr_is_v4(t->saddr) && fs->prefix_len_v6 == 128))
			addr_string(c.addr, buf, len);
		else
			sl_cidr_format(&c, buf, len);
		return buf;
	case SL_DIST_BY_DESTINATION:
		addr_string(t->daddr, buf, len);
		return buf;
	default:
		if (len)
			buf[0] = '\0';
		return buf;
	}
}
