// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Configuration loader: the mandatory FlowSchemas, exempt and catch-all, as
 * Kubernetes defines them (bootstrap/default.go) and keeps them
 * (registry/flowcontrol/ensurer: a restated one may not differ), at layer
 * 4: loopback is exempt, every other source is caught by catch-all.
 */
#include "config/decode.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cd_mandatory_schema_index(const char *name)
{
	if (!strcmp(name, SL_EXEMPT_NAME))
		return 0;
	if (!strcmp(name, SL_CATCH_ALL_NAME))
		return 1;
	return -1;
}

struct mandatory_fs {
	const char *name;
	uint32_t precedence;
	enum sl_distinguisher dist;
	const char *cidrs[2];
	const char *rules_text;
};

static const struct mandatory_fs mandatory_fs[2] = {
	{ SL_EXEMPT_NAME, 1, SL_DIST_NONE, { "127.0.0.0/8", "::1/128" },
	  "one rule: subjects [{kind: Network, network: {cidrs: [127.0.0.0/8, \"::1/128\"]}}], destinations [{}]" },
	{ SL_CATCH_ALL_NAME, CD_MAX_PRECEDENCE, SL_DIST_BY_SOURCE, { "0.0.0.0/0", "::/0" },
	  "one rule: subjects [{kind: Network, network: {cidrs: [0.0.0.0/0, \"::/0\"]}}], destinations [{}]" },
};

static void cidr_of(const char *text, struct sl_cidr *out)
{
	char buf[64];
	char *slash;
	int plen;

	snprintf(buf, sizeof(buf), "%s", text);
	slash = strchr(buf, '/');
	*slash = '\0';
	plen = atoi(slash + 1);
	memset(out, 0, sizeof(*out));
	if (inet_pton(AF_INET, buf, out->addr + 12) == 1) {
		out->addr[10] = out->addr[11] = 0xff;
		out->prefix_len = (uint8_t)(96 + plen);
	} else {
		inet_pton(AF_INET6, buf, out->addr);
		out->prefix_len = (uint8_t)plen;
	}
}

int cd_mandatory_schema(struct sl_flow_schema *fs, int which)
{
	const struct mandatory_fs *m = &mandatory_fs[which];
	struct sl_fs_rule *r;

	memset(fs, 0, sizeof(*fs));
	snprintf(fs->name, sizeof(fs->name), "%s", m->name);
	snprintf(fs->level_name, sizeof(fs->level_name), "%s", m->name);
	fs->level = (size_t)which; /* cfg->levels[0] exempt, [1] catch-all */
	fs->precedence = m->precedence;
	fs->distinguisher = m->dist;
	if (m->dist == SL_DIST_BY_SOURCE) {
		fs->prefix_len_v4 = 32;
		fs->prefix_len_v6 = 128;
	}
	fs->seats_per_conn = 1;
	fs->mandatory = true;
	fs->builtin = true;
	fs->rules = r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	fs->n_rules = 1;
	r->subjects = calloc(1, sizeof(*r->subjects));
	r->destinations = calloc(1, sizeof(*r->destinations));
	if (!r->subjects || !r->destinations)
		return -ENOMEM;
	r->n_subjects = r->n_destinations = 1;
	r->subjects[0].kind = SL_SUBJECT_NETWORK;
	r->subjects[0].cidrs = calloc(2, sizeof(*r->subjects[0].cidrs));
	if (!r->subjects[0].cidrs)
		return -ENOMEM;
	r->subjects[0].n_cidrs = 2;
	for (int i = 0; i < 2; i++)
		cidr_of(m->cidrs[i], &r->subjects[0].cidrs[i]);
	return 0;
}

static bool same_cidr_set(const struct sl_cidr *a, size_t na,
			  const struct sl_cidr *b, size_t nb)
{
	/* every a in b and every b in a (the built-in lists have 2) */
	if (na != nb)
		return false;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < na; i++) {
			size_t j;

			for (j = 0; j < nb; j++)
				if (a[i].prefix_len == b[j].prefix_len &&
				    !memcmp(a[i].addr, b[j].addr, 16))
					break;
			if (j == nb)
				return false;
		}
		const struct sl_cidr *t = a;
		size_t tn = na;

		a = b, na = nb, b = t, nb = tn;
	}
	return true;
}

/* The schema's rules are the mandatory one's: one rule, one Network subject
 * with the same CIDRs (in any order), one destination matching everything. */
static bool rules_are_mandatory(const struct sl_flow_schema *fs, const struct mandatory_fs *m)
{
	const struct sl_fs_rule *r = fs->rules;
	struct sl_cidr want[2];

	for (int i = 0; i < 2; i++)
		cidr_of(m->cidrs[i], &want[i]);
	return fs->n_rules == 1 && r->n_subjects == 1 && r->n_destinations == 1 &&
	       r->subjects[0].kind == SL_SUBJECT_NETWORK &&
	       same_cidr_set(r->subjects[0].cidrs, r->subjects[0].n_cidrs, want, 2) &&
	       !r->destinations[0].n_ports && !r->destinations[0].n_addresses;
}

static const char *dist_name(enum sl_distinguisher d)
{
	return d == SL_DIST_BY_SOURCE ? "BySource" :
	       d == SL_DIST_BY_DESTINATION ? "ByDestination" : "none";
}

void cd_check_mandatory_schema(struct load *L, const struct sl_flow_schema *fs, int which,
			       const struct sl_ynode *root)
{
	struct ctx *c = L->c;
	const struct mandatory_fs *m = &mandatory_fs[which];
	const struct sl_ynode *spec = sl_ymap_get(root, "spec");
	const struct sl_ynode *at_spec = spec ? spec : root;
	const struct sl_ynode *n;
	const char *tail = "and a file may not change it (kube-apiserver restores it)";

	if (fs->precedence != m->precedence) {
		n = sl_ymap_get(spec, "matchingPrecedence");
		cd_path_set(c, "spec.matchingPrecedence");
		cd_err(c, n ? n : at_spec, "the mandatory FlowSchema %s has matchingPrecedence %u %s, got %s%u",
		       m->name, m->precedence, tail, n ? "" : "the default ", fs->precedence);
	}
	if (fs->level_name[0] && strcmp(fs->level_name, m->name)) {
		n = sl_ymap_get(sl_ymap_get(spec, "priorityLevelConfiguration"), "name");
		cd_path_set(c, "spec.priorityLevelConfiguration.name");
		cd_err(c, n ? n : at_spec, "the mandatory FlowSchema %s uses the priority level %s %s, got '%s'",
		       m->name, m->name, tail, fs->level_name);
	}
	if (fs->distinguisher != m->dist ||
	    (m->dist == SL_DIST_BY_SOURCE &&
	     (fs->prefix_len_v4 != 32 || fs->prefix_len_v6 != 128))) {
		n = sl_ymap_get(spec, "distinguisherMethod");
		cd_path_set(c, "spec.distinguisherMethod");
		if (m->dist == SL_DIST_NONE)
			cd_err(c, n ? n : at_spec, "the mandatory FlowSchema %s has no distinguisherMethod %s",
			       m->name, tail);
		else
			cd_err(c, n ? n : at_spec, "the mandatory FlowSchema %s has distinguisherMethod {type: %s} (whole addresses) %s, got %s%s",
			       m->name, dist_name(m->dist), tail,
			       n ? "" : "none", n ? dist_name(fs->distinguisher) : "");
	}
	if (fs->seats_per_conn != 1) {
		n = sl_ymap_get(spec, "seatsPerConnection");
		cd_path_set(c, "spec.seatsPerConnection");
		cd_err(c, n ? n : at_spec, "the mandatory FlowSchema %s has seatsPerConnection 1 %s, got %u",
		       m->name, tail, fs->seats_per_conn);
	}
	if (!rules_are_mandatory(fs, m)) {
		n = sl_ymap_get(spec, "rules");
		cd_path_set(c, "spec.rules");
		cd_err(c, n ? n : at_spec, "the mandatory FlowSchema %s has fixed rules (%s) %s",
		       m->name, m->rules_text, "and a file may not change them (kube-apiserver restores them)");
	}
	cd_path_pop(c, 0);
}
