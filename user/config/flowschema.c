// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Configuration loader: kind FlowSchema (flowcontrol.apiserver.k8s.io/v1), at layer 4.
 *
 *   spec:
 *     priorityLevelConfiguration: {name: ...}      (required)
 *     matchingPrecedence: 1000                      (1..10000; 1 only for exempt)
 *     distinguisherMethod: {type: BySource, prefixLength: 32, ipv6PrefixLength: 128}
 *                          {type: ByDestination}   (ByUser / ByNamespace: aliases)
 *     seatsPerConnection: 1                         (1..100)
 *     rules:
 *     - subjects:                                   (any matches)
 *       - {kind: Network, network: {cidrs: [...]}}
 *       - {kind: Labels, labels: {matchLabels: {...}, matchExpressions: [...]}}
 *       destinations:                               (any matches)
 *       - {protocols: ["*"], ports: ["*"], addresses: [...]}
 *
 * After all documents: FlowSchemas naming a missing level are skipped with
 * a warning (Kubernetes marks them dangling), the mandatory exempt and
 * catch-all schemas are added unless the file restates them (unchanged:
 * Kubernetes registry/flowcontrol/ensurer; fs_mandatory.c), and the list is
 * sorted by (precedence, name).
 */
#include "config/decode.h"
#include "lib/grow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DEF_PRECEDENCE 1000

/* ---- tables --------------------------------------------------------------- */

#define FS struct sl_flow_schema

enum { FS_PLC, FS_PRECEDENCE, FS_DIST, FS_RULES, FS_SEATS, FS_N };
static const struct fdesc fs_fields[FS_N] = {
	[FS_PLC] = F_CUSTOM("priorityLevelConfiguration", .required = true, .type = "mapping"),
	[FS_PRECEDENCE] = F_INT("matchingPrecedence", FS, precedence, 1, CD_MAX_PRECEDENCE, .dflt = "1000"),
	[FS_DIST] = F_CUSTOM("distinguisherMethod", .type = "mapping", .dflt = "none: one flow"),
	[FS_RULES] = F_CUSTOM("rules", .type = "list of mappings (none: matches nothing)"),
	[FS_SEATS] = F_INT("seatsPerConnection", FS, seats_per_conn, 1, 100, .dflt = "1"),
};

static const struct fdesc plc_ref_fields[] = {
	F_CUSTOM("name", .required = true, .type = "a PriorityLevelConfiguration's name"),
};

enum { DI_TYPE, DI_PREFIX, DI_PREFIX6, DI_N };
static const struct fdesc dist_fields[DI_N] = {
	[DI_TYPE] = F_CUSTOM("type", .required = true, 
			      .type = "BySource (the client address, or its prefix) or ByDestination (the local address); "
				      "ByUser and ByNamespace are read as these"),
	[DI_PREFIX] = F_INT("prefixLength", FS, prefix_len_v4, 0, 32, .dflt = "32 (BySource only)"),
	[DI_PREFIX6] = F_INT("ipv6PrefixLength", FS, prefix_len_v6, 0, 128, .dflt = "128 (BySource only)"),
};
#undef FS

enum { RU_SUBJECTS, RU_DESTINATIONS, RU_RESOURCE, RU_NONRESOURCE, RU_N };
static const struct fdesc rule_fields[RU_N] = {
	[RU_SUBJECTS] = F_CUSTOM("subjects", .type = "list of mappings, at least one: a rule without one never matches (every client: kind Network, cidrs [0.0.0.0/0, ::/0])"),
	[RU_DESTINATIONS] = F_CUSTOM("destinations", .type = "list of mappings, at least one: a rule without one never matches ([{}]: every destination)"),
	[RU_RESOURCE] = F_CUSTOM("resourceRules", .type = "not at layer 4: use destinations"),
	[RU_NONRESOURCE] = F_CUSTOM("nonResourceRules", .type = "not at layer 4: use destinations"),
};

enum { SU_KIND, SU_NETWORK, SU_LABELS, SU_USER, SU_GROUP, SU_SA, SU_N };
static const struct fdesc subject_fields[SU_N] = {
	[SU_KIND] = F_CUSTOM("kind", .required = true, .type = "Network or Labels"),
	[SU_NETWORK] = F_CUSTOM("network", .type = "mapping (kind Network)"),
	[SU_LABELS] = F_CUSTOM("labels", .type = "a label selector: matchLabels, matchExpressions (kind Labels)"),
	/* Kubernetes' subject bodies: known only to explain */
	[SU_USER] = F_CUSTOM("user", .type = "not at layer 4: use kind Network or Labels"),
	[SU_GROUP] = F_CUSTOM("group", .type = "not at layer 4: use kind Network or Labels"),
	[SU_SA] = F_CUSTOM("serviceAccount", .type = "not at layer 4: use kind Network or Labels"),
};

static const struct fdesc network_fields[] = {
	F_CUSTOM("cidrs", .required = true, .type = "list of IPv4 or IPv6 CIDRs"),
};

enum { DE_PROTOCOLS, DE_PORTS, DE_ADDRESSES, DE_N };
static const struct fdesc dest_fields[DE_N] = {
	[DE_PROTOCOLS] = F_CUSTOM("protocols", .type = "list of \"TCP\" or \"*\"", .dflt = "TCP"),
	[DE_PORTS] = F_CUSTOM("ports", .type = "list of ports or ranges (\"8000-8099\")", .dflt = "every port"),
	[DE_ADDRESSES] = F_CUSTOM("addresses", .type = "list of the host's CIDRs", .dflt = "every address"),
};

/* What a Kubernetes subject kind or rule list becomes at layer 4. */
#define USE_NETWORK_OR_LABELS \
	"by network (kind: Network, network.cidrs) or by connection labels (kind: Labels)"

static const struct {
	const char *kind, *field, *message;
} k8s_subjects[] = {
	{ "User", "user",
	  "User subjects do not exist at layer 4; match the client " USE_NETWORK_OR_LABELS },
	{ "Group", "group",
	  "Group subjects do not exist at layer 4; match the clients " USE_NETWORK_OR_LABELS },
	{ "ServiceAccount", "serviceAccount",
	  "ServiceAccount subjects do not exist at layer 4; match the workload's source addresses (kind: Network, network.cidrs) or its connection labels (kind: Labels)" },
};

#define RESOURCE_RULES_MSG \
	"resourceRules do not exist at layer 4 (there are no API verbs or resources); match what clients connect to with destinations: [{protocols, ports, addresses}]"
#define NONRESOURCE_RULES_MSG \
	"nonResourceRules do not exist at layer 4 (there are no URLs); match what clients connect to with destinations: [{protocols, ports, addresses}]"

/* ---- release --------------------------------------------------------------- */

static void rule_release(struct sl_fs_rule *r)
{
	for (size_t i = 0; i < r->n_subjects; i++) {
		free(r->subjects[i].cidrs);
		sl_label_matcher_free(&r->subjects[i].labels);
	}
	free(r->subjects);
	for (size_t i = 0; i < r->n_destinations; i++) {
		free(r->destinations[i].ports);
		free(r->destinations[i].addresses);
	}
	free(r->destinations);
	memset(r, 0, sizeof(*r));
}

void cd_flow_schema_release(struct sl_flow_schema *fs)
{
	for (size_t i = 0; i < fs->n_rules; i++)
		rule_release(&fs->rules[i]);
	free(fs->rules);
	free(fs->file);
	memset(fs, 0, sizeof(*fs));
}

/* ---- subjects ------------------------------------------------------------------ */

static void decode_subject(struct load *L, const struct sl_ynode *n,
			   struct sl_subject *s)
{
	struct ctx *c = L->c;
	struct fhit h[SU_N];
	const struct sl_ynode *kind;
	const char *ks;
	size_t old;

	memset(s, 0, sizeof(*s));
	s->line = n->line;
	s->column = n->column;
	if (!cd_decode_fields(c, n, subject_fields, SU_N, NULL, h))
		return;
	if (!(kind = h[SU_KIND].value)) {
		if (h[SU_KIND].key) {
			old = cd_path_push(c, "kind");
			cd_err(c, h[SU_KIND].key, "expected Network or Labels, got null");
			cd_path_pop(c, old);
		}
		return;
	}
	old = cd_path_push(c, "kind");
	ks = sl_ynode_str(kind);
	for (size_t i = 0; ks && i < ARRAY_SIZE(k8s_subjects); i++) {
		if (!strcmp(ks, k8s_subjects[i].kind)) {
			cd_err(c, kind, "%s", k8s_subjects[i].message);
			cd_path_pop(c, old);
			return;
		}
	}
	if (ks && !strcmp(ks, "Network")) {
		s->kind = SL_SUBJECT_NETWORK;
	} else if (ks && !strcmp(ks, "Labels")) {
		s->kind = SL_SUBJECT_LABELS;
	} else {
		static const struct enumval kinds[] = {
			{ "Network", SL_SUBJECT_NETWORK }, { "Labels", SL_SUBJECT_LABELS },
			{ NULL, 0 },
		};
		int x;

		cd_get_enum(c, kind, kinds, &x); /* reports */
		cd_path_pop(c, old);
		return;
	}
	cd_path_pop(c, old);

	/* Bodies of other kinds. */
	for (size_t i = 0; i < ARRAY_SIZE(k8s_subjects); i++) {
		const struct fhit *hk = &h[SU_USER + i];

		if (!hk->key)
			continue;
		old = cd_path_push(c, k8s_subjects[i].field);
		cd_err(c, hk->key, "%s", k8s_subjects[i].message);
		cd_path_pop(c, old);
	}
	if (s->kind == SL_SUBJECT_NETWORK && h[SU_LABELS].key) {
		old = cd_path_push(c, "labels");
		cd_err(c, h[SU_LABELS].key, "only allowed when kind is Labels (kind is Network)");
		cd_path_pop(c, old);
	}
	if (s->kind == SL_SUBJECT_LABELS && h[SU_NETWORK].key) {
		old = cd_path_push(c, "network");
		cd_err(c, h[SU_NETWORK].key, "only allowed when kind is Network (kind is Labels)");
		cd_path_pop(c, old);
	}
	if (s->kind == SL_SUBJECT_NETWORK) {
		struct fhit nh[1];

		old = cd_path_push(c, "network");
		if (!h[SU_NETWORK].value) {
			cd_err(c, h[SU_NETWORK].key ? h[SU_NETWORK].key : n,
			       "a Network subject needs network.cidrs (0.0.0.0/0 and ::/0 match every client)");
		} else if (cd_decode_fields(c, h[SU_NETWORK].value, network_fields, 1, NULL, nh) &&
			   nh[0].value) {
			cd_path_push(c, "cidrs");
			cd_decode_cidr_list(c, nh[0].value, &s->cidrs, &s->n_cidrs,
					    "a Network subject needs at least one CIDR (0.0.0.0/0 and ::/0 match every client)");
		} else if (nh[0].key) {
			cd_path_push(c, "cidrs");
			cd_err(c, nh[0].key, "must not be empty: a Network subject needs at least one CIDR (0.0.0.0/0 and ::/0 match every client)");
		}
		cd_path_pop(c, old);
	} else {
		old = cd_path_push(c, "labels");
		if (!h[SU_LABELS].value)
			cd_err(c, h[SU_LABELS].key ? h[SU_LABELS].key : n,
			       "a Labels subject needs labels: {matchLabels: {...}, matchExpressions: [...]}");
		else
			cd_decode_label_selector(L, h[SU_LABELS].value, &s->labels);
		cd_path_pop(c, old);
	}
}

/* ---- destinations ----------------------------------------------------------------- */

static void decode_protocols(struct ctx *c, const struct sl_ynode *v)
{
	size_t star = SIZE_MAX;

	if (!cd_expect_seq(c, v, "protocols (\"TCP\" or \"*\")"))
		return;
	if (!v->n_items) {
		cd_err(c, v, "must not be empty; use [\"*\"] or leave the field out");
		return;
	}
	if (!cd_budget(c, v, v->n_items))
		return;
	for (size_t i = 0; i < v->n_items; i++) {
		const struct sl_ynode *it = v->items[i];
		const char *s = sl_ynode_str(it);
		size_t old = cd_path_push_index(c, i);
		QBUF;

		if (it->type != SL_Y_STR || !s) {
			cd_err(c, it, "expected a protocol (\"TCP\" or \"*\"), got %s",
			       cd_describe(it).s);
		} else if (!strcmp(s, "*")) {
			if (star == SIZE_MAX)
				star = i;
		} else if (!strcmp(s, "TCP")) {
			/* the only one there is */
		} else if (!strcasecmp(s, "UDP") || !strcasecmp(s, "SCTP") ||
			   !strcasecmp(s, "ICMP") || !strcasecmp(s, "ICMPv6") ||
			   !strcasecmp(s, "QUIC")) {
			cd_err(c, it, "sluice sees only TCP connections (it admits or refuses the SYN), so protocol '%s' can never match; use \"TCP\" or \"*\"",
			       Q(it));
		} else if (!strcasecmp(s, "tcp")) {
			cd_err(c, it, "invalid protocol '%s'; did you mean 'TCP'?", Q(it));
		} else {
			cd_err(c, it, "invalid protocol '%s' (allowed: TCP, *)", Q(it));
		}
		cd_path_pop(c, old);
	}
	if (star != SIZE_MAX && v->n_items > 1) {
		size_t old = cd_path_push_index(c, star);

		cd_err(c, v->items[star], "'*' matches every protocol and must be the only entry");
		cd_path_pop(c, old);
	}
}

static void decode_destination(struct load *L, const struct sl_ynode *n,
			       struct sl_destination *d)
{
	struct ctx *c = L->c;
	struct fhit h[DE_N];
	size_t old;

	memset(d, 0, sizeof(*d));
	d->line = n->line;
	d->column = n->column;
	if (!cd_decode_fields(c, n, dest_fields, DE_N, NULL, h))
		return;
	if (h[DE_PROTOCOLS].value) {
		old = cd_path_push(c, "protocols");
		decode_protocols(c, h[DE_PROTOCOLS].value);
		cd_path_pop(c, old);
	}
	if (h[DE_PORTS].value) {
		old = cd_path_push(c, "ports");
		cd_decode_port_list(c, h[DE_PORTS].value, &d->ports, &d->n_ports);
		cd_path_pop(c, old);
	}
	if (h[DE_ADDRESSES].value) {
		old = cd_path_push(c, "addresses");
		cd_decode_cidr_list(c, h[DE_ADDRESSES].value, &d->addresses,
				    &d->n_addresses,
				    "leave the field out to match any local address");
		cd_path_pop(c, old);
	}
}

/* ---- rules ---------------------------------------------------------------------------- */

static void decode_rule(struct load *L, const struct sl_ynode *n,
			struct sl_fs_rule *r)
{
	struct ctx *c = L->c;
	struct fhit h[RU_N];
	const struct sl_ynode *v;
	bool k8s_rules;
	size_t old;

	memset(r, 0, sizeof(*r));
	r->line = n->line;
	r->column = n->column;
	if (!cd_decode_fields(c, n, rule_fields, RU_N, NULL, h))
		return;
	if (h[RU_RESOURCE].key) {
		old = cd_path_push(c, "resourceRules");
		cd_err(c, h[RU_RESOURCE].key, RESOURCE_RULES_MSG);
		cd_path_pop(c, old);
	}
	if (h[RU_NONRESOURCE].key) {
		old = cd_path_push(c, "nonResourceRules");
		cd_err(c, h[RU_NONRESOURCE].key, NONRESOURCE_RULES_MSG);
		cd_path_pop(c, old);
	}
	k8s_rules = h[RU_RESOURCE].key || h[RU_NONRESOURCE].key;

	old = cd_path_push(c, "subjects");
	v = h[RU_SUBJECTS].value;
	if (!v || (v->type == SL_Y_SEQ && !v->n_items)) {
		cd_err(c, v ? v : h[RU_SUBJECTS].key ? h[RU_SUBJECTS].key : n,
		       "a rule needs at least one subject; without one it can never match");
	} else if (cd_expect_seq(c, v, "subjects ({kind: Network, network: {cidrs: [...]}} or {kind: Labels, labels: {...}})") &&
		   cd_budget(c, v, v->n_items)) {
		r->subjects = calloc(v->n_items, sizeof(*r->subjects));
		if (!r->subjects) {
			cd_oom(c);
		} else {
			for (size_t i = 0; i < v->n_items; i++) {
				size_t o2 = cd_path_push_index(c, i);

				decode_subject(L, v->items[i], &r->subjects[r->n_subjects++]);
				cd_path_pop(c, o2);
			}
		}
	}
	cd_path_pop(c, old);

	old = cd_path_push(c, "destinations");
	v = h[RU_DESTINATIONS].value;
	if (!v || (v->type == SL_Y_SEQ && !v->n_items)) {
		if (!k8s_rules || v)
			cd_err(c, v ? v : h[RU_DESTINATIONS].key ? h[RU_DESTINATIONS].key : n,
			       "a rule needs at least one destination ([{}] matches any); without one it can never match");
	} else if (cd_expect_seq(c, v, "destinations ({protocols, ports, addresses})") &&
		   cd_budget(c, v, v->n_items)) {
		r->destinations = calloc(v->n_items, sizeof(*r->destinations));
		if (!r->destinations) {
			cd_oom(c);
		} else {
			for (size_t i = 0; i < v->n_items; i++) {
				size_t o2 = cd_path_push_index(c, i);

				decode_destination(L, v->items[i],
						   &r->destinations[r->n_destinations++]);
				cd_path_pop(c, o2);
			}
		}
	}
	cd_path_pop(c, old);
}

/* ---- the object ---------------------------------------------------------------------------- */

static const struct enumval dist_types[] = {
	{ "BySource", SL_DIST_BY_SOURCE }, { "ByDestination", SL_DIST_BY_DESTINATION },
	{ NULL, 0 },
};

static void decode_distinguisher(struct ctx *c, const struct sl_ynode *n,
				 struct sl_flow_schema *fs)
{
	struct fhit h[DI_N];
	const struct sl_ynode *t;
	const char *ts;
	size_t old = cd_path_push(c, "distinguisherMethod");
	int x = 0;

	fs->prefix_len_v4 = 32;
	fs->prefix_len_v6 = 128;
	if (!cd_decode_fields(c, n, dist_fields, DI_N, fs, h))
		goto out;
	cd_path_push(c, "type");
	t = h[DI_TYPE].value;
	ts = sl_ynode_str(t);
	if (!t) {
		if (h[DI_TYPE].key)
			cd_err(c, h[DI_TYPE].key, "expected one of BySource, ByDestination, got null");
	} else if (ts && !strcmp(ts, "ByUser")) {
		cd_warn(c, t, "ByUser is read as BySource: at layer 4 the client is known by its source address");
		x = SL_DIST_BY_SOURCE;
	} else if (ts && !strcmp(ts, "ByNamespace")) {
		cd_warn(c, t, "ByNamespace is read as ByDestination: at layer 4 the closest thing to a namespace is the local address the client connects to");
		x = SL_DIST_BY_DESTINATION;
	} else if (!cd_get_enum(c, t, dist_types, &x)) {
		x = 0;
	}
	cd_path_set(c, "spec.distinguisherMethod");
	fs->distinguisher = (enum sl_distinguisher)x;
	if (x && x != SL_DIST_BY_SOURCE) {
		for (int i = DI_PREFIX; i <= DI_PREFIX6; i++) {
			size_t o2;

			if (!h[i].key)
				continue;
			o2 = cd_path_push(c, dist_fields[i].name);
			cd_err(c, h[i].key, "only allowed with type BySource (type is %s)",
			       ts ? ts : "ByDestination");
			cd_path_pop(c, o2);
		}
	}
out:
	cd_path_pop(c, old);
	if (fs->distinguisher != SL_DIST_BY_SOURCE)
		fs->prefix_len_v4 = fs->prefix_len_v6 = 0;
}

void cd_decode_flow_schema(struct load *L, const struct object *o)
{
	struct ctx *c = L->c;
	struct sl_config *cfg = L->cfg;
	struct sl_flow_schema *fs;
	struct obj_src *src;
	struct fhit h[FS_N];
	const struct sl_ynode *rules;
	size_t old;

	cd_register_name(L, KIND_SCHEMA, o);
	if (sl_grow((void **)&cfg->schemas, &L->schemas_cap, cfg->n_schemas + 1, sizeof(*cfg->schemas)) ||
	    sl_grow((void **)&L->schema_src, &L->schema_src_cap, cfg->n_schemas + 1, sizeof(*L->schema_src))) {
		cd_oom(c);
		return;
	}
	fs = &cfg->schemas[cfg->n_schemas];
	src = &L->schema_src[cfg->n_schemas];
	cfg->n_schemas++;
	memset(fs, 0, sizeof(*fs));
	*src = (struct obj_src){ .object = strdup(c->object), .root = o->root };
	if (!src->object)
		cd_oom(c);
	fs->precedence = DEF_PRECEDENCE;
	fs->seats_per_conn = 1;
	fs->line = o->root->line;
	fs->column = o->root->column;
	if (!(fs->file = strdup(c->file)))
		cd_oom(c);
	if (o->name) {
		snprintf(fs->name, sizeof(fs->name), "%s", o->name);
		src->name_line = o->name_node->line;
		src->name_col = o->name_node->column;
		fs->mandatory = cd_mandatory_schema_index(o->name) >= 0;
	} else {
		src->dropped = true; /* the error is reported; keep it out of the list */
	}
	if (!o->spec)
		return;
	old = cd_path_push(c, "spec");
	if (!cd_decode_fields(c, o->spec, fs_fields, FS_N, fs, h)) {
		src->dropped = true;
		goto out;
	}
	if (h[FS_SEATS].value) {
		fs->seats_line = h[FS_SEATS].value->line;
		fs->seats_column = h[FS_SEATS].value->column;
	}
	if (h[FS_PLC].value) {
		struct fhit ph[1];
		const char *name;

		cd_path_push(c, "priorityLevelConfiguration");
		if (cd_decode_fields(c, h[FS_PLC].value, plc_ref_fields, 1, NULL, ph) &&
		    ph[0].value) {
			cd_path_push(c, "name");
			if (cd_get_string(c, ph[0].value, &name)) {
				if (!*name)
					cd_err(c, ph[0].value, "must not be empty");
				else if (strlen(name) >= SL_LEVEL_NAME_SIZE)
					cd_err(c, ph[0].value, "name is %zu characters long; at most %d allowed",
					       strlen(name), SL_LEVEL_NAME_SIZE - 1);
				else {
					snprintf(fs->level_name, sizeof(fs->level_name), "%s", name);
					src->level_ref = ph[0].value;
				}
			}
		} else if (ph[0].key) {
			cd_path_push(c, "name");
			cd_err(c, ph[0].key, "must not be empty");
		}
		cd_path_set(c, "spec");
	} else if (h[FS_PLC].key) {
		cd_path_push(c, "priorityLevelConfiguration");
		cd_err(c, h[FS_PLC].key, "missing required field 'name'");
		cd_path_set(c, "spec");
	}
	if (h[FS_PRECEDENCE].value && h[FS_PRECEDENCE].ok && fs->precedence == 1 &&
	    !(o->name && !strcmp(o->name, SL_EXEMPT_NAME))) {
		cd_path_push(c, "matchingPrecedence");
		cd_err(c, h[FS_PRECEDENCE].value,
		       "matchingPrecedence 1 is reserved for the mandatory exempt FlowSchema; use 2 or more");
		cd_path_set(c, "spec");
	}
	if (h[FS_DIST].value)
		decode_distinguisher(c, h[FS_DIST].value, fs);
	rules = h[FS_RULES].value;
	if (rules) {
		cd_path_push(c, "rules");
		if (cd_expect_seq(c, rules, "rules ({subjects, destinations})") &&
		    cd_budget(c, rules, rules->n_items) && rules->n_items) {
			fs->rules = calloc(rules->n_items, sizeof(*fs->rules));
			if (!fs->rules) {
				cd_oom(c);
			} else {
				for (size_t i = 0; i < rules->n_items; i++) {
					size_t o2 = cd_path_push_index(c, i);

					decode_rule(L, rules->items[i], &fs->rules[fs->n_rules++]);
					cd_path_pop(c, o2);
				}
			}
		}
		cd_path_set(c, "spec");
	}
	if (!fs->mandatory && (!rules || (rules->type == SL_Y_SEQ && !rules->n_items))) {
		const struct sl_ynode *at = rules ? rules : h[FS_RULES].key ? h[FS_RULES].key : o->spec;

		cd_path_push(c, "rules");
		cd_warn(c, at, "no rules: this FlowSchema matches no connection");
	}
out:
	cd_path_pop(c, old);
}

/* ---- after all documents ------------------------------------------------------------------- */

struct order {
	size_t idx;
	const struct sl_flow_schema *fs;
};

static int cmp_order(const void *a, const void *b)
{
	const struct order *x = a, *y = b;
	int r;

	if (x->fs->precedence != y->fs->precedence)
		return x->fs->precedence < y->fs->precedence ? -1 : 1;
	if ((r = strcmp(x->fs->name, y->fs->name)))
		return r;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The levels kube-apiserver suggests (bootstrap/default.go, as of
 * flowcontrol v1: shares, lendable percent, queues, hand size and queue
 * length as defined there), which every cluster has, so real FlowSchemas
 * name them.  sluice does not add them
 * (their shares would change every level's seats): a schema naming one
 * that the file lacks is an error that says how to add it. */
static const struct suggested_level {
	const char *name;
	int shares, lendable, queues, hand, length;
} suggested_levels[] = {
	{ "system", 30, 33, 64, 6, 50 },
	{ "node-high", 40, 25, 64, 6, 50 },
	{ "leader-election", 10, 0, 16, 4, 50 },
	{ "workload-high", 40, 50, 128, 6, 50 },
	{ "workload-low", 100, 90, 128, 6, 50 },
	{ "global-default", 20, 50, 128, 6, 50 },
};

static const struct suggested_level *suggested(const char *name)
{
	for (size_t k = 0; k < sizeof(suggested_levels) / sizeof(suggested_levels[0]); k++)
		if (!strcmp(suggested_levels[k].name, name))
			return &suggested_levels[k];
	return NULL;
}

/* A reference that is a level's name behind a "something-" prefix, as a
 * kustomize base's raw files have it (Kueue's FlowSchema names
 * kueue-visibility, its level is visibility): the prefix's length, and the
 * level in *level; 0 if none. */
static size_t kustomize_prefix(const char *ref, const char **names, size_t n, const char **level)
{
	size_t rl = strlen(ref);

	for (size_t k = 0; names && k < n; k++) {
		size_t nl = strlen(names[k]);

		if (nl && nl + 1 < rl && ref[rl - nl - 1] == '-' && !strcmp(ref + rl - nl, names[k])) {
			*level = names[k];
			return rl - nl;
		}
	}
	return 0;
}

static void dangling(struct load *L, size_t i)
{
	struct ctx *c = L->c;
	struct sl_flow_schema *fs = &L->cfg->schemas[i];
	const struct sl_ynode *at = L->schema_src[i].level_ref;
	const struct suggested_level *s = suggested(fs->level_name);
	const char **names;
	const char *sug = NULL;
	size_t prefix;

	snprintf(c->object, sizeof(c->object), "%s", L->schema_src[i].object);
	if (s) {
		cd_path_set(c, "spec.priorityLevelConfiguration.name");
		cd_err(c, at, "PriorityLevelConfiguration '%s' is one of Kubernetes' suggested levels, which "
		       "every cluster has but sluice does not add (its shares would change every level's "
		       "seats): paste it (kubectl get prioritylevelconfiguration %s -o yaml), or add "
		       "{apiVersion: sluice/v1, kind: PriorityLevelConfiguration, metadata: {name: %s}, spec: "
		       "{type: Limited, limited: {nominalConcurrencyShares: %d, lendablePercent: %d, "
		       "limitResponse: {type: Queue, queuing: {queues: %d, handSize: %d, queueLengthLimit: %d}}}}} "
		       "as kube-apiserver defines it", s->name, s->name, s->name, s->shares, s->lendable,
		       s->queues, s->hand, s->length);
		L->schema_src[i].dropped = true;
		return;
	}
	names = calloc(L->cfg->n_levels, sizeof(*names));

	if (names) {
		for (size_t k = 0; k < L->cfg->n_levels; k++)
			names[k] = L->cfg->levels[k].name;
		sug = cd_closest(fs->level_name, names, L->cfg->n_levels);
	}
	prefix = sug ? 0 : kustomize_prefix(fs->level_name, names, L->cfg->n_levels, &sug);
	cd_path_set(c, "spec.priorityLevelConfiguration.name");
	if (prefix)
		cd_warn(c, at, "PriorityLevelConfiguration '%s' does not exist; this FlowSchema is dangling "
			"and is skipped (it classifies no connection); the file has '%s': a kustomize "
			"namePrefix '%.*s' gives the level that name when built, so paste "
			"`kubectl kustomize` output, or give both the same name",
			fs->level_name, sug, (int)prefix, fs->level_name);
	else
		cd_warn(c, at, "PriorityLevelConfiguration '%s' does not exist; this FlowSchema is dangling and is skipped (it classifies no connection)%s%s%s",
			fs->level_name, sug ? "; did you mean '" : "", sug ? sug : "",
			sug ? "'?" : "");
	free(names);
	L->schema_src[i].dropped = true;
	L->cfg->n_skipped++;
}

void cd_finish_flow_schemas(struct load *L)
{
	struct ctx *c = L->c;
	struct sl_config *cfg = L->cfg;
	struct sl_flow_schema *sorted;
	struct order *ord;
	size_t n = 0, catch_all = SIZE_MAX;

	/* Level references, mandatory restatements. */
	for (size_t i = 0; i < cfg->n_schemas; i++) {
		struct sl_flow_schema *fs = &cfg->schemas[i];
		struct obj_src *src = &L->schema_src[i];
		size_t k;

		if (src->dropped)
			continue;
		if (fs->mandatory) {
			int which = cd_mandatory_schema_index(fs->name);

			if (L->mandatory_schema_in_file[which]) {
				src->dropped = true; /* duplicate: reported with the names */
				continue;
			}
			L->mandatory_schema_in_file[which] = true;
			snprintf(c->object, sizeof(c->object), "%s", src->object ? src->object : "");
			cd_check_mandatory_schema(L, fs, which, src->root);
			fs->level = (size_t)which;
			if (strcmp(fs->level_name, fs->name)) /* its level is its namesake */
				src->dropped = true; /* reported */
			continue;
		}
		if (!fs->level_name[0]) {
			src->dropped = true; /* missing or invalid reference: reported */
			continue;
		}
		for (k = 0; k < cfg->n_levels; k++)
			if (!strcmp(cfg->levels[k].name, fs->level_name))
				break;
		if (k == cfg->n_levels) {
			dangling(L, i);
			continue;
		}
		fs->level = k;
	}
	c->object[0] = '\0';
	cd_path_pop(c, 0);

	/* Add the mandatory schemas the file did not restate. */
	for (int which = 0; which < 2; which++) {
		if (L->mandatory_schema_in_file[which])
			continue;
		if (sl_grow((void **)&cfg->schemas, &L->schemas_cap, cfg->n_schemas + 1, sizeof(*cfg->schemas)) ||
		    sl_grow((void **)&L->schema_src, &L->schema_src_cap, cfg->n_schemas + 1, sizeof(*L->schema_src))) {
			cd_oom(c);
			return;
		}
		L->schema_src[cfg->n_schemas] = (struct obj_src){ 0 };
		if (cd_mandatory_schema(&cfg->schemas[cfg->n_schemas++], which)) {
			cd_oom(c);
			return;
		}
	}

	/* Sort what is kept by (precedence, name); release the rest. */
	ord = calloc(cfg->n_schemas ? cfg->n_schemas : 1, sizeof(*ord));
	sorted = calloc(cfg->n_schemas ? cfg->n_schemas : 1, sizeof(*sorted));
	if (!ord || !sorted) {
		free(ord);
		free(sorted);
		cd_oom(c);
		return;
	}
	for (size_t i = 0; i < cfg->n_schemas; i++)
		if (!L->schema_src[i].dropped)
			ord[n++] = (struct order){ i, &cfg->schemas[i] };
	qsort(ord, n, sizeof(*ord), cmp_order);
	for (size_t i = 0; i < n; i++) {
		sorted[i] = cfg->schemas[ord[i].idx];
		if (!strcmp(sorted[i].name, SL_CATCH_ALL_NAME) && catch_all == SIZE_MAX)
			catch_all = i;
	}
	/* Anything after catch-all (which matches every connection) is dead. */
	for (size_t i = catch_all == SIZE_MAX ? n : catch_all + 1; i < n; i++) {
		const struct obj_src *src = &L->schema_src[ord[i].idx];
		const struct sl_ynode *at = sl_ymap_get(sl_ymap_get(src->root, "spec"),
							"matchingPrecedence");

		snprintf(c->object, sizeof(c->object), "%s", src->object ? src->object : "");
		cd_path_set(c, "spec.matchingPrecedence");
		cd_warn(c, at ? at : src->root,
			"this FlowSchema sorts after the mandatory catch-all (precedence %u, then by name), which matches every connection, so it never matches; use a matchingPrecedence below %u",
			sorted[i].precedence, CD_MAX_PRECEDENCE);
	}
	c->object[0] = '\0';
	cd_path_pop(c, 0);
	for (size_t i = 0; i < cfg->n_schemas; i++) {
		if (L->schema_src[i].dropped)
			cd_flow_schema_release(&cfg->schemas[i]);
		free(L->schema_src[i].object);
		L->schema_src[i].object = NULL;
	}
	free(cfg->schemas);
	free(ord);
	cfg->schemas = sorted;
	cfg->n_schemas = n;
	L->schemas_cap = n;
	/* schema_src no longer parallels cfg->schemas */
	free(L->schema_src);
	L->schema_src = NULL;
	L->schema_src_cap = 0;
}

const struct cd_schema cd_schema_flow_schema[] = {
	{ "FlowSchema", "spec", fs_fields, FS_N, NULL, 0 },
	{ "FlowSchema", "spec.priorityLevelConfiguration", plc_ref_fields, ARRAY_SIZE(plc_ref_fields), NULL, 0 },
	{ "FlowSchema", "spec.distinguisherMethod", dist_fields, DI_N, NULL, 0 },
	{ "FlowSchema", "spec.rules[]", rule_fields, RU_N, NULL, 0 },
	{ "FlowSchema", "spec.rules[].subjects[]", subject_fields, SU_N, NULL, 0 },
	{ "FlowSchema", "spec.rules[].subjects[].network", network_fields, ARRAY_SIZE(network_fields), NULL, 0 },
	{ "FlowSchema", "spec.rules[].destinations[]", dest_fields, DE_N, NULL, 0 },
	{ NULL },
};
