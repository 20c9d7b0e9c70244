// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Configuration loader: YAML documents -> struct sl_config.
 *
 * Shape of the decoder (so that adding kinds and fields stays easy):
 *  - every YAML mapping that is part of the schema is described by a table
 *    of struct fdesc (name, kind, offset into a C struct, bounds, enum
 *    values).  cd_decode_fields() walks one mapping against one table: it
 *    reports unknown keys (with "did you mean"), duplicate keys, missing
 *    required fields, wrong types and out-of-range values, stores the simple
 *    fields and hands back the nodes of every field (struct fhit) so the
 *    caller can decode nested objects (FK_CUSTOM) and check cross-field rules;
 *  - every kind is one entry of kinds[]: a name check and a decode function,
 *    each kind in its own file (server.c, level.c, flowschema.c,
 *    connection_labels.c for ConnectionLabels and the label matchers,
 *    policy.c for AverageLatencySchedulingPolicy), CIDRs and ports in
 *    net.c, the toolkit in decode.c; decode.h is their shared, internal
 *    interface (this file is only the driver: documents, kinds, cross-object
 *    rules, the public API);
 *  - cross-object rules (unique names per kind, one Server, mandatory
 *    objects, FlowSchema -> level references, labels nobody sets) run after
 *    all documents.
 * Decoding never stops at an error: every problem of the file is reported,
 * and the configuration is only handed out when there is none.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf */
#endif
#include "config/config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/decode.h"
#include "config/yaml_doc.h"
#include "lib/read_file.h"
#include "sluice_abi.h"

_Static_assert(SL_LEVEL_NAME_SIZE == SLUICE_LEVEL_NAME_LEN, "level name size");
_Static_assert(SL_MAX_LEVELS == SLUICE_MAX_LEVELS, "max levels");
_Static_assert((int)SL_FAIL_OPEN == SLUICE_FAIL_OPEN &&
	       (int)SL_FAIL_CLOSED == SLUICE_FAIL_CLOSED &&
	       (int)SL_FAIL_STATIC == SLUICE_FAIL_STATIC, "fail mode");
_Static_assert((int)SL_LEVEL_EXEMPT == SLUICE_LEVEL_EXEMPT &&
	       (int)SL_LEVEL_LIMITED == SLUICE_LEVEL_LIMITED, "level type");
_Static_assert((int)SL_RESP_QUEUE == SLUICE_RESP_QUEUE &&
	       (int)SL_RESP_REJECT == SLUICE_RESP_REJECT, "limit response");

#define SL_MAX_FILE_SIZE (16u << 20)     /* config files are small */

/* ---- kinds and documents -------------------------------------------------- */

struct kind_desc {
	const char *name;
	bool spec_required;
	/* validates metadata.name beyond "a non-empty string"; may be NULL */
	bool (*check_name)(struct ctx *c, const struct sl_ynode *n, const char *name);
	void (*decode)(struct load *L, const struct object *o);
};

static const struct kind_desc kinds[] = {
	{ "Server", false, NULL, cd_decode_server },
	{ "PriorityLevelConfiguration", true, cd_check_name, cd_decode_level },
	{ "FlowSchema", true, cd_check_name, cd_decode_flow_schema },
	{ "ConnectionLabels", true, cd_check_name, cd_decode_label_object },
	{ "AverageLatencySchedulingPolicy", true, cd_check_name, cd_decode_policy },
};

/* The apiVersions an object may carry.  Kubernetes' flow-control objects
 * paste as kubectl prints them: v1 reads as sluice/v1; v1beta3 differs in
 * one meaning (said at the object); v1beta2 and v1beta1 with their own
 * names (assuredConcurrencyShares, level.c).  ASM's policy
 * under its own apiVersion runs Aperture's AIMD unless spec.mode says
 * otherwise (policy.c). */
#define APF_KINDS "PriorityLevelConfiguration and FlowSchema"
static const struct api_version {
	const char *name;
	enum cd_api api;
	const char *kinds;      /* the kinds it has ("A and B"), NULL: every kind */
} api_versions[] = {
	{ SL_API_VERSION, CD_API_SLUICE, NULL },
	{ "flowcontrol.apiserver.k8s.io/v1", CD_API_K8S_V1, APF_KINDS },
	{ "flowcontrol.apiserver.k8s.io/v1beta3", CD_API_K8S_V1BETA3, APF_KINDS },
	{ "flowcontrol.apiserver.k8s.io/v1beta2", CD_API_K8S_V1BETA12, APF_KINDS },
	{ "flowcontrol.apiserver.k8s.io/v1beta1", CD_API_K8S_V1BETA12, APF_KINDS },
	{ "istio.alibabacloud.com/v1", CD_API_ASM, "AverageLatencySchedulingPolicy" },
};

/* Whether kind is one of the kinds "A and B" names. */
static bool api_has_kind(const char *kinds, const char *kind)
{
	size_t n = strlen(kind);

	for (const char *p = kinds; (p = strstr(p, kind)); p += n)
		if ((p == kinds || p[-1] == ' ') && (!p[n] || p[n] == ' '))
			return true;
	return false;
}

enum { TOP_API, TOP_KIND, TOP_META, TOP_SPEC, TOP_STATUS, TOP_N };
static const struct fdesc top_fields[TOP_N] = {
	[TOP_API] = F_CUSTOM("apiVersion", .required = true,
			     .type = "sluice/v1; also flowcontrol.apiserver.k8s.io/v1, v1beta3, v1beta2 or v1beta1 for PriorityLevelConfiguration and FlowSchema, istio.alibabacloud.com/v1 for AverageLatencySchedulingPolicy"),
	[TOP_KIND] = F_CUSTOM("kind", .required = true,
			      .type = "Server, PriorityLevelConfiguration, FlowSchema, ConnectionLabels or AverageLatencySchedulingPolicy"),
	[TOP_META] = F_CUSTOM("metadata", .required = true, .type = "mapping"),
	[TOP_SPEC] = F_CUSTOM("spec", .type = "mapping (required but in Server)"),
	[TOP_STATUS] = F_CUSTOM("status", .type = "ignored (the server's, as kubectl prints it)"),
};

/* What kubectl prints of an object's metadata beyond its name, labels and
 * annotations is the server's own, and ignored; so is a namespace (sluice's
 * kinds are cluster-wide; kustomize adds one to every object). */
enum {
	MD_NAME, MD_LABELS, MD_ANNOTATIONS, MD_NAMESPACE, MD_UID, MD_RESOURCE_VERSION,
	MD_GENERATION, MD_CREATION, MD_MANAGED_FIELDS, MD_SELF_LINK, MD_N
};
#define SERVER_SET "ignored (set by the Kubernetes API server)"
static const struct fdesc meta_fields[MD_N] = {
	[MD_NAME] = F_CUSTOM("name", .required = true, .type = "DNS-1123 subdomain, at most 47 characters"),
	[MD_LABELS] = F_CUSTOM("labels", .type = "string map (kept, unused)"),
	[MD_ANNOTATIONS] = F_CUSTOM("annotations", .type = "string map (kept, unused)"),
	[MD_NAMESPACE] = F_CUSTOM("namespace", .type = "ignored (sluice's objects are cluster-wide)"),
	[MD_UID] = F_CUSTOM("uid", .type = SERVER_SET),
	[MD_RESOURCE_VERSION] = F_CUSTOM("resourceVersion", .type = SERVER_SET),
	[MD_GENERATION] = F_CUSTOM("generation", .type = SERVER_SET),
	[MD_CREATION] = F_CUSTOM("creationTimestamp", .type = SERVER_SET),
	[MD_MANAGED_FIELDS] = F_CUSTOM("managedFields", .type = SERVER_SET),
	[MD_SELF_LINK] = F_CUSTOM("selfLink", .type = SERVER_SET),
};

const struct cd_schema cd_schema_object[] = {
	{ "*", "", top_fields, TOP_N, NULL, 0 },
	{ "*", "metadata", meta_fields, MD_N, NULL, 0 },
	{ NULL },
};

static const struct kind_desc *find_kind(const struct sl_ynode *k)
{
	const char *s = sl_ynode_str(k);

	for (size_t i = 0; s && i < ARRAY_SIZE(kinds); i++)
		if (!strcmp(s, kinds[i].name))
			return &kinds[i];
	return NULL;
}

/* Sets c->object: "Kind/name", "Kind (document N)" or "document N". */
static void set_object(struct ctx *c, const struct sl_ynode *root, const struct sl_ydoc *doc)
{
	const struct sl_ynode *kind = sl_ymap_get(root, "kind");
	const struct sl_ynode *name =
		sl_ymap_get(sl_ymap_get(root, "metadata"), "name");
	char k[SL_YQUOTE_MAX], n[SL_YQUOTE_MAX];

	if (!sl_ynode_str(kind) || !kind->len) {
		snprintf(c->object, sizeof(c->object), "document %u", doc->index);
		return;
	}
	sl_yquote(kind->str, kind->len, k, sizeof(k));
	if (sl_ynode_str(name) && name->len) {
		sl_yquote(name->str, name->len, n, sizeof(n));
		snprintf(c->object, sizeof(c->object), "%s/%s", k, n);
	} else {
		snprintf(c->object, sizeof(c->object), "%s (document %u)", k,
			 doc->index);
	}
}

/* The object's apiVersion, once its kind is known (kd, or NULL). */
static void check_api_version(struct ctx *c, const struct fhit *h, const struct kind_desc *kd,
			      struct object *o)
{
	const struct sl_ynode *v = h->value;
	const struct api_version *av = NULL;
	QBUF;

	if (!v && !h->key)
		return; /* missing: reported as a required field */
	cd_path_set(c, "apiVersion");
	if (!v) {
		cd_err(c, h->key, "must not be empty; expected '%s'", SL_API_VERSION);
	} else if (v->type != SL_Y_STR) {
		cd_err(c, v, "expected '%s', got %s", SL_API_VERSION, cd_describe(v).s);
	} else {
		for (size_t i = 0; i < ARRAY_SIZE(api_versions); i++)
			if (strlen(api_versions[i].name) == v->len && !strcmp(v->str, api_versions[i].name))
				av = &api_versions[i];
		if (!av)
			cd_err(c, v, "unsupported apiVersion '%s'; expected '%s' (PriorityLevelConfiguration "
			       "and FlowSchema also take flowcontrol.apiserver.k8s.io/v1, v1beta3, v1beta2 or v1beta1, "
			       "AverageLatencySchedulingPolicy istio.alibabacloud.com/v1)",
			       Q(v), SL_API_VERSION);
		else if (kd && av->kinds && !api_has_kind(av->kinds, kd->name))
			cd_err(c, v, "apiVersion '%s' has no kind %s (it has %s); sluice's own kinds take '%s'",
			       Q(v), kd->name, av->kinds, SL_API_VERSION);
		else
			o->api = av->api;
	}
	cd_path_pop(c, 0);
}

/* An Aperture blueprint's values file (blueprint, uri, policy: ...; the
 * guides' own files may lack the first two) is no object: one error that
 * says where each of its parts goes, in the names the file uses, instead
 * of every field it lacks and has.  Older blueprints called the core
 * service_protection_core and its scheduler adaptive_load_scheduler. */
static bool is_blueprint_values(struct ctx *c, const struct sl_ynode *root)
{
	const struct sl_ynode *bp = sl_ymap_get(root, "blueprint");
	const struct sl_ynode *pol = sl_ymap_get(root, "policy");
	const struct sl_ynode *name = pol && pol->type == SL_Y_MAP ? sl_ymap_get(pol, "policy_name") : NULL;
	const struct sl_ynode *at = bp ? bp : sl_ymap_get_key(root, "policy");
	const char *core = "load_scheduling_core", *sched = NULL;
	char qb[SL_YQUOTE_MAX], qn[SL_YQUOTE_MAX];
	const struct sl_ynode *cn;

	if (sl_ymap_get_key(root, "kind") || sl_ymap_get_key(root, "apiVersion") || (!bp && !name))
		return false;
	if (pol && pol->type == SL_Y_MAP && !sl_ymap_get(pol, core) && sl_ymap_get(pol, "service_protection_core"))
		core = "service_protection_core";
	cn = pol && pol->type == SL_Y_MAP ? sl_ymap_get(pol, core) : NULL;
	if (cn && cn->type == SL_Y_MAP && !sl_ymap_get(cn, "aimd_load_scheduler") &&
	    sl_ymap_get(cn, "adaptive_load_scheduler"))
		sched = "adaptive_load_scheduler";
	snprintf(c->object, sizeof(c->object), "Aperture blueprint values");
	cd_path_set(c, bp ? "blueprint" : "policy");
	cd_err(c, at, "this is the values file of Aperture's blueprint '%s', not an object: write "
	       "{apiVersion: sluice/v1 (or istio.alibabacloud.com/v1), kind: AverageLatencySchedulingPolicy, "
	       "metadata: {name: %s}, spec: {load_scheduling_core: <policy.%s>%s}}%s%s%s",
	       sl_ynode_str(bp) ? sl_yquote(bp->str, bp->len, qb, sizeof(qb)) : "load-scheduling/average-latency",
	       sl_ynode_str(name) ? sl_yquote(name->str, name->len, qn, sizeof(qn)) : "<policy.policy_name>",
	       core,
	       pol && pol->type == SL_Y_MAP && sl_ymap_get(pol, "latency_baseliner") ?
		       ", latency_baseliner: <policy.latency_baseliner>" : ", ...",
	       strcmp(core, "load_scheduling_core") ? "; service_protection_core is the blueprint's older "
						     "name for load_scheduling_core" : "",
	       sched ? "; rename adaptive_load_scheduler, its older name, to aimd_load_scheduler" : "",
	       "");
	cd_path_pop(c, 0);
	return true;
}

static void decode_object(struct load *L, const struct sl_ydoc *doc, const struct sl_ynode *root)
{
	struct ctx *c = L->c;
	struct fhit h[TOP_N], mh[MD_N];
	const struct kind_desc *kd = NULL;
	struct object o = { .doc = doc, .root = root };
	const struct sl_ynode *v;
	QBUF;

	set_object(c, root, doc);
	cd_path_pop(c, 0);
	if (root->type != SL_Y_MAP) {
		cd_err(c, root,
		    "expected an object (a mapping with apiVersion, kind, metadata and spec), got %s",
		    cd_describe(root).s);
		return;
	}
	if (is_blueprint_values(c, root))
		return;
	cd_decode_fields(c, root, top_fields, TOP_N, NULL, h);

	if ((v = h[TOP_KIND].value) || h[TOP_KIND].key) {
		cd_path_set(c, "kind");
		o.kind = v ? v : h[TOP_KIND].key;
		if (!v || v->type != SL_Y_STR) {
			const char *names[ARRAY_SIZE(kinds)];
			char known[256];

			for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
				names[i] = kinds[i].name;
			cd_join(known, sizeof(known), names, ARRAY_SIZE(kinds));
			cd_err(c, o.kind, "expected a kind (%s), got %s", known,
			       cd_describe(v).s);
		} else if (!(kd = find_kind(v))) {
			const char *names[ARRAY_SIZE(kinds)], *sug;
			char known[256];

			for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
				names[i] = kinds[i].name;
			cd_join(known, sizeof(known), names, ARRAY_SIZE(kinds));
			if ((sug = cd_closest(v->str, names, ARRAY_SIZE(kinds))))
				cd_err(c, v, "unknown kind '%s'; did you mean '%s'?",
				    Q(v), sug);
			else
				cd_err(c, v, "unknown kind '%s' (known kinds: %s)",
				    Q(v), known);
		}
		cd_path_pop(c, 0);
	}
	check_api_version(c, &h[TOP_API], kd, &o);
	if ((v = h[TOP_META].value) || h[TOP_META].key) {
		cd_path_set(c, "metadata");
		if (!v) {
			cd_path_push(c, "name");
			cd_err(c, h[TOP_META].key, "missing required field 'name'");
		} else if (cd_decode_fields(c, v, meta_fields, MD_N, NULL, mh)) {
			const struct sl_ynode *n = mh[MD_NAME].value;
			const char *name;

			if (n) {
				cd_path_push(c, "name");
				if (cd_get_string(c, n, &name)) {
					if (!*name)
						cd_err(c, n, "must not be empty");
					else if (!kd || !kd->check_name ||
						 kd->check_name(c, n, name)) {
						o.name = name;
						o.name_node = n;
					}
				}
				cd_path_set(c, "metadata");
			}
			if (mh[MD_LABELS].value) {
				cd_path_push(c, "labels");
				cd_decode_string_map(c, mh[MD_LABELS].value);
				cd_path_set(c, "metadata");
			}
			if (mh[MD_ANNOTATIONS].value) {
				cd_path_push(c, "annotations");
				cd_decode_string_map(c, mh[MD_ANNOTATIONS].value);
			}
		}
		cd_path_pop(c, 0);
	}
	if (!kd)
		return;
	o.spec = h[TOP_SPEC].value;
	if (!o.spec && kd->spec_required) {
		cd_path_set(c, "spec");
		cd_err(c, root, "missing required field 'spec'");
		cd_path_pop(c, 0);
	}
	kd->decode(L, &o);
	cd_path_pop(c, 0);
}

/* kubectl's output of several objects: kind List (apiVersion v1), or a
 * kind's own list (FlowSchemaList, PriorityLevelConfigurationList), with
 * the objects under items.  Returns false when doc is not a list. */
static bool decode_list(struct load *L, const struct sl_ydoc *doc)
{
	const struct sl_ynode *kind = sl_ymap_get(doc->root, "kind");
	const struct sl_ynode *items = sl_ymap_get(doc->root, "items");
	const char *k = sl_ynode_str(kind);
	struct ctx *c = L->c;

	if (!k || !sl_ymap_get_key(doc->root, "items") || kind->len < 4 ||
	    strcmp(k + kind->len - 4, "List"))
		return false;
	if (kind->len > 4) { /* FlowSchemaList: one of ours, or not a list */
		bool known = false;

		for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
			known |= strlen(kinds[i].name) == kind->len - 4 &&
				 !strncmp(kinds[i].name, k, kind->len - 4);
		if (!known)
			return false;
	}
	if (!items || items->type != SL_Y_SEQ) {
		snprintf(c->object, sizeof(c->object), "%s (document %u)", k, doc->index);
		cd_path_set(c, "items");
		cd_err(c, items ? items : kind, "expected the list's objects, got %s",
		       cd_describe(items).s);
		cd_path_pop(c, 0);
		return true;
	}
	for (size_t i = 0; i < items->n_items; i++)
		decode_object(L, doc, items->items[i]);
	return true;
}

static void decode_document(struct load *L, const struct sl_ydoc *doc)
{
	if (doc->root->type == SL_Y_MAP && decode_list(L, doc))
		return;
	decode_object(L, doc, doc->root);
}

/* ---- public API ----------------------------------------------------------- */

static void level_release(struct sl_level_cfg *l)
{
	free(l->file);
}

void sl_config_free(struct sl_config *cfg)
{
	if (!cfg)
		return;
	cd_server_release(&cfg->server);
	for (size_t i = 0; i < cfg->n_levels; i++)
		level_release(&cfg->levels[i]);
	free(cfg->levels);
	for (size_t i = 0; i < cfg->n_schemas; i++)
		cd_flow_schema_release(&cfg->schemas[i]);
	free(cfg->schemas);
	for (size_t i = 0; i < cfg->n_label_objects; i++)
		cd_label_object_release(&cfg->label_objects[i]);
	free(cfg->label_objects);
	for (size_t i = 0; i < cfg->n_policies; i++)
		cd_policy_release(&cfg->policies[i]);
	free(cfg->policies);
	free(cfg->source_file);
	free(cfg);
}

const struct sl_level_cfg *sl_config_find_level(const struct sl_config *cfg,
						const char *name)
{
	if (!cfg || !name)
		return NULL;
	for (size_t i = 0; i < cfg->n_levels; i++)
		if (!strcmp(cfg->levels[i].name, name))
			return &cfg->levels[i];
	return NULL;
}

const struct sl_flow_schema *sl_config_find_schema(const struct sl_config *cfg,
						   const char *name)
{
	if (!cfg || !name)
		return NULL;
	for (size_t i = 0; i < cfg->n_schemas; i++)
		if (!strcmp(cfg->schemas[i].name, name))
			return &cfg->schemas[i];
	return NULL;
}

const struct sl_label_object *sl_config_find_label_object(const struct sl_config *cfg,
							  const char *name)
{
	if (!cfg || !name)
		return NULL;
	for (size_t i = 0; i < cfg->n_label_objects; i++)
		if (!strcmp(cfg->label_objects[i].name, name))
			return &cfg->label_objects[i];
	return NULL;
}

const struct sl_policy_cfg *sl_config_find_policy(const struct sl_config *cfg,
						  const char *name)
{
	if (!cfg || !name)
		return NULL;
	for (size_t i = 0; i < cfg->n_policies; i++)
		if (!strcmp(cfg->policies[i].name, name))
			return &cfg->policies[i];
	return NULL;
}

int sl_config_keep_policy_indices(struct sl_config *cfg, const char (*in_use)[SL_LEVEL_NAME_SIZE],
				  size_t n_in_use)
{
	size_t n = cfg->n_policies, next = 0;
	struct sl_policy_cfg *v;
	bool *taken, *placed;

	if (n < 2 || !n_in_use)
		return 0;
	v = calloc(n, sizeof(*v));
	taken = calloc(n, sizeof(*taken));   /* by source index */
	placed = calloc(n, sizeof(*placed)); /* by destination index */
	if (!v || !taken || !placed) {
		free(v);
		free(taken);
		free(placed);
		return -ENOMEM;
	}
	for (size_t j = 0; j < n_in_use && j < n; j++) {
		const struct sl_policy_cfg *p = sl_config_find_policy(cfg, in_use[j]);

		if (p) {
			size_t i = (size_t)(p - cfg->policies);

			v[j] = *p;
			taken[i] = placed[j] = true;
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (taken[i])
			continue;
		while (placed[next])
			next++;
		v[next] = cfg->policies[i];
		placed[next] = true;
	}
	free(cfg->policies);
	cfg->policies = v;
	free(taken);
	free(placed);
	return 0;
}

/* The configuration every load starts from: server defaults and the two
 * mandatory levels (the mandatory FlowSchemas are added after the file's,
 * by cd_finish_flow_schemas()). */
static int load_init(struct load *L, const char *file)
{
	struct sl_config *cfg = calloc(1, sizeof(*cfg));

	L->cfg = cfg;
	if (!cfg || cd_server_defaults(&cfg->server) ||
	    !(cfg->source_file = strdup(file)))
		return -ENOMEM;
	L->levels_cap = L->level_src_cap = 8;
	cfg->levels = calloc(L->levels_cap, sizeof(*cfg->levels));
	L->level_src = calloc(L->level_src_cap, sizeof(*L->level_src));
	if (!cfg->levels || !L->level_src)
		return -ENOMEM;
	for (int i = 0; i < 2; i++) {
		cd_mandatory_level(&cfg->levels[i], i);
		if (asprintf(&L->level_src[i].object, "PriorityLevelConfiguration/%s",
			     cfg->levels[i].name) < 0) {
			L->level_src[i].object = NULL;
			return -ENOMEM;
		}
		cfg->n_levels++;
	}
	return 0;
}

static void load_release(struct load *L)
{
	for (size_t i = 0; L->level_src && L->cfg && i < L->cfg->n_levels; i++)
		free(L->level_src[i].object);
	free(L->level_src);
	for (size_t i = 0; L->schema_src && L->cfg && i < L->cfg->n_schemas; i++)
		free(L->schema_src[i].object);
	free(L->schema_src);
	for (size_t i = 0; i < L->n_names; i++)
		free(L->names[i].name);
	free(L->names);
	for (size_t i = 0; i < L->n_refs; i++) {
		free(L->refs[i].key);
		free(L->refs[i].object);
		free(L->refs[i].path);
	}
	free(L->refs);
}

int sl_config_load_buffer(const char *display_name, const char *buf,
			  size_t len, struct sl_config **out,
			  struct sl_diags *diags)
{
	struct sl_diags local = SL_DIAGS_INIT;
	struct ctx c = { 0 };
	struct load L = { .c = &c };
	struct sl_ystream ys;
	size_t first, errors;
	int rc;

	if (out)
		*out = NULL;
	if (!diags)
		diags = &local;
	first = diags->count;
	errors = diags->n_errors;
	c.diags = diags;
	c.file = display_name ? display_name : "<config>";

	if (load_init(&L, c.file)) {
		cd_oom(&c);
		rc = -ENOMEM;
		goto done;
	}
	rc = sl_ystream_load(&ys, c.file, buf, len, diags);
	if (rc != -ENOMEM) {
		/* Documents before a syntax error are still checked. */
		for (size_t i = 0; i < ys.n_docs; i++)
			decode_document(&L, &ys.docs[i]);
		c.object[0] = '\0';
		cd_path_pop(&c, 0);
		cd_check_duplicate_names(&L);
		cd_finish_flow_schemas(&L);
		cd_check_label_refs(&L);
		cd_check_fleet(&L);
		c.object[0] = '\0';
		cd_path_pop(&c, 0);
	}
	sl_ystream_free(&ys);
	if (c.oom)
		rc = -ENOMEM;
	else if (diags->n_errors != errors)
		rc = -EINVAL;
done:
	sl_diags_sort(diags, first);
	load_release(&L);
	if (rc || !out) {
		sl_config_free(L.cfg);
	} else {
		*out = L.cfg;
	}
	sl_diags_free(&local);
	return rc;
}

int sl_config_check_file_mode(const char *path, struct sl_diags *diags)
{
	struct stat st;

	if (!path || !strcmp(path, "-") || stat(path, &st))
		return 0; /* standard input, or nothing to check: the load says why */
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		sl_diags_add(diags, SL_SEV_ERROR, path, 0, 0, NULL, NULL,
			     "writable by %s (mode %04o): refused, whoever can write it would steer sluice "
			     "(chmod go-w %s)", st.st_mode & S_IWOTH ? "anyone" : "its group",
			     (unsigned)(st.st_mode & 07777), path);
		return -EPERM;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid())
		sl_diags_add(diags, SL_SEV_WARNING, path, 0, 0, NULL, NULL,
			     "owned by uid %u, neither root nor this process: that user steers sluice",
			     (unsigned)st.st_uid);
	return 0;
}

/* Whether anything in cfg came from its file (not only the built-in
 * exempt and catch-all objects). */
static bool holds_an_object(const struct sl_config *cfg)
{
	for (size_t i = 0; i < cfg->n_levels; i++)
		if (!cfg->levels[i].builtin)
			return true;
	for (size_t i = 0; i < cfg->n_schemas; i++)
		if (!cfg->schemas[i].builtin)
			return true;
	return cfg->server.present || cfg->n_label_objects || cfg->n_policies;
}

int sl_config_load_file(const char *path, struct sl_config **out,
			struct sl_diags *diags)
{
	struct sl_diags local = SL_DIAGS_INIT;
	char *buf = NULL;
	size_t len = 0;
	struct sl_config *cfg = NULL;
	int rc;

	if (out)
		*out = NULL;
	if (!diags)
		diags = &local;
	if (!path) {
		sl_diags_add(diags, SL_SEV_ERROR, NULL, 0, 0, NULL, NULL,
			     "no configuration file given");
		rc = -EINVAL;
		goto out;
	}
	rc = sl_read_file(path, SL_MAX_FILE_SIZE, &buf, &len);
	if (rc == -EFBIG) {
		sl_diags_add(diags, SL_SEV_ERROR, path, 0, 0, NULL, NULL,
			     "configuration file is larger than %u MiB", SL_MAX_FILE_SIZE >> 20);
		goto out;
	}
	if (rc) {
		sl_diags_add(diags, SL_SEV_ERROR, path, 0, 0, NULL, NULL,
			     "cannot %s configuration file: %s",
			     rc == -EISDIR || rc == -EIO || rc == SL_ENOTREG ? "read" : "open",
			     sl_read_file_strerror(rc));
		goto out;
	}
	rc = sl_config_load_buffer(path, buf, len, &cfg, diags);
	if (!rc && !holds_an_object(cfg)) {
		/* A file truncated to nothing (a write cut short, a copy gone
		 * wrong) would otherwise run the host on the built-in objects
		 * alone, and a watched file would apply it (issue 26). */
		if (cfg->n_skipped)
			sl_diags_add(diags, SL_SEV_ERROR, path, 0, 0, NULL, NULL,
				     "every object of the file was skipped (%zu dangling FlowSchema%s: "
				     "see the warning%s above), so it would apply nothing: refused",
				     cfg->n_skipped, cfg->n_skipped == 1 ? "" : "s",
				     cfg->n_skipped == 1 ? "" : "s");
		else
			sl_diags_add(diags, SL_SEV_ERROR, path, 0, 0, NULL, NULL,
				     "the file holds no configuration object (empty, comments only, or "
				     "truncated): refused, nothing is applied");
		rc = -EINVAL;
	}
	if (!rc && out)
		*out = cfg;
	else
		sl_config_free(cfg);
out:
	free(buf);
	sl_diags_free(&local);
	return rc;
}
