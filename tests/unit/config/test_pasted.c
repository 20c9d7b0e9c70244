// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Configuration loader tests: Kubernetes flow-control objects pasted as
 * kubectl prints them (issue 39).  flowcontrol.apiserver.k8s.io/v1 and
 * v1beta3 are read (v1beta3's "0 shares means the default" said at the
 * field), v1beta2 and v1beta1 with their own assuredConcurrencyShares; the server's
 * metadata, a namespace and status are ignored; kind List and a kind's own
 * list (FlowSchemaList) are unwrapped, each item checked at its own lines.
 * The fixtures under tests/unit/configs/pasted/ cite their sources:
 * kubectl's output of the built-in levels, the Kubernetes website's
 * examples (as published at v1, v1beta3 and v1beta2), Kueue's and
 * OpenShift's shipped objects, ASM's reference and Aperture's guides'
 * values files, each pasted whole.
 */
#include <unistd.h>

#include "config_helpers.h"

#include "apf_defaults.h"
#include "config/schema.h"
#include "lib/labels.h"

#define K8S_V1 "apiVersion: flowcontrol.apiserver.k8s.io/v1\n"
#define K8S_V1BETA3 "apiVersion: flowcontrol.apiserver.k8s.io/v1beta3\n"
#define K8S_V1BETA2 "apiVersion: flowcontrol.apiserver.k8s.io/v1beta2\n"
#define LIMITED(shares) \
	"spec:\n  type: Limited\n  limited:\n    nominalConcurrencyShares: " shares "\n" \
	"    limitResponse: {type: Reject}\n"

/* sl_config_find_level, which must find it. */
static const struct sl_level_cfg *level(const struct sl_config *cfg, const char *name)
{
	const struct sl_level_cfg *l = sl_config_find_level(cfg, name);

	if (!l)
		fail_msg("no level %s", name);
	return l;
}

/* What the API server adds to an object, and a namespace kustomize adds,
 * are ignored; so is status. */
static void test_server_metadata_and_status_ignored(void **state)
{
	struct sl_config *cfg;

	(void)state;
	cfg = load_ok(K8S_V1 "kind: PriorityLevelConfiguration\n"
		      "metadata:\n"
		      "  annotations: {apf.kubernetes.io/autoupdate-spec: \"true\"}\n"
		      "  creationTimestamp: \"2025-11-03T08:12:41Z\"\n"
		      "  generation: 3\n"
		      "  managedFields:\n"
		      "  - {apiVersion: flowcontrol.apiserver.k8s.io/v1, manager: kubectl, operation: Update}\n"
		      "  name: batch\n"
		      "  namespace: default\n"
		      "  resourceVersion: \"4711\"\n"
		      "  selfLink: /apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations/batch\n"
		      "  uid: 0f6f4c1e-2b55-4b0c-9d6a-3c2e5d1a7b10\n"
		      LIMITED("12")
		      "status:\n  conditions: []\n");
	assert_int_equal(level(cfg, "batch")->shares, 12);
	sl_config_free(cfg);
}

/* v1 reads 0 as 0; v1beta3 as the default 30, unless the object keeps its
 * 0 with the annotation kube-apiserver honours. */
static void test_v1beta3_zero_shares(void **state)
{
	struct sl_config *cfg;

	(void)state;
	cfg = load_ok(K8S_V1 "kind: PriorityLevelConfiguration\nmetadata: {name: batch}\n" LIMITED("0"));
	assert_int_equal(level(cfg, "batch")->shares, 0);
	sl_config_free(cfg);

	cfg = load_warned(K8S_V1BETA3 "kind: PriorityLevelConfiguration\nmetadata: {name: batch}\n"
			  LIMITED("0"), 1);
	assert_int_equal(level(cfg, "batch")->shares, 30);
	sl_config_free(cfg);

	cfg = load_ok(K8S_V1BETA3 "kind: PriorityLevelConfiguration\nmetadata:\n  name: batch\n"
		      "  annotations: {flowcontrol.k8s.io/v1beta3-preserve-zero: \"\"}\n" LIMITED("0"));
	assert_int_equal(level(cfg, "batch")->shares, 0);
	sl_config_free(cfg);

	cfg = load_ok(K8S_V1BETA3 "kind: PriorityLevelConfiguration\nmetadata: {name: batch}\n" LIMITED("7"));
	assert_int_equal(level(cfg, "batch")->shares, 7);
	sl_config_free(cfg);
}

/* v1beta2 and v1beta1 name the shares assuredConcurrencyShares: the same
 * number, as kube-apiserver converts it. */
static void test_v1beta12_assured_shares(void **state)
{
	struct sl_config *cfg;

	(void)state;
	cfg = load_ok(K8S_V1BETA2 "kind: PriorityLevelConfiguration\nmetadata: {name: batch}\n"
		      "spec:\n  type: Limited\n  limited:\n    assuredConcurrencyShares: 17\n"
		      "    limitResponse: {type: Queue, queuing: {queues: 16, handSize: 4, queueLengthLimit: 50}}\n");
	assert_int_equal(level(cfg, "batch")->shares, 17);
	assert_int_equal(level(cfg, "batch")->lendable_percent, 0);
	assert_true(level(cfg, "batch")->borrowing_limit_percent < 0);
	assert_int_equal(level(cfg, "batch")->queues, 16);
	sl_config_free(cfg);
}

static void test_v1beta3_zero_shares_said(void **state)
{
	(void)state;
	expect_one(K8S_V1BETA3 "kind: PriorityLevelConfiguration\nmetadata: {name: batch}\n" LIMITED("0"),
		   SL_SEV_WARNING, 7, 31, "PriorityLevelConfiguration/batch",
		   "spec.limited.nominalConcurrencyShares",
		   "0 under flowcontrol.apiserver.k8s.io/v1beta3 means the default, 30");
}

/* kubectl get a b -o yaml: kind List; kubectl get flowschemas -o yaml:
 * FlowSchemaList.  Both unwrapped, every item read. */
static void test_lists_unwrapped(void **state)
{
	struct sl_config *cfg;

	(void)state;
	cfg = load_ok("apiVersion: v1\nkind: List\nmetadata: {resourceVersion: \"\"}\nitems:\n"
		      "- " K8S_V1 "  kind: PriorityLevelConfiguration\n  metadata: {name: batch}\n"
		      "  spec: {type: Limited, limited: {nominalConcurrencyShares: 9, limitResponse: {type: Reject}}}\n"
		      "- " K8S_V1 "  kind: FlowSchema\n  metadata: {name: batch}\n"
		      "  spec:\n    priorityLevelConfiguration: {name: batch}\n"
		      "    rules: [{subjects: [{kind: Network, network: {cidrs: [10.0.0.0/8]}}], destinations: [{}]}]\n");
	assert_int_equal(level(cfg, "batch")->shares, 9);
	assert_int_equal(cfg->n_schemas, 3); /* batch, and the mandatory exempt and catch-all */
	sl_config_free(cfg);

	cfg = load_ok(K8S_V1 "kind: FlowSchemaList\nmetadata: {resourceVersion: \"99\"}\nitems:\n"
		      "- " K8S_V1 "  kind: FlowSchema\n  metadata: {name: probes, uid: x}\n"
		      "  spec:\n    priorityLevelConfiguration: {name: exempt}\n    matchingPrecedence: 2\n"
		      "    rules: [{subjects: [{kind: Network, network: {cidrs: [10.0.0.0/8]}}], destinations: [{}]}]\n"
		      "  status: {conditions: [{type: Dangling, status: \"False\"}]}\n");
	assert_int_equal(cfg->n_schemas, 3);
	sl_config_free(cfg);
}

/* The built-in levels as kubectl lists them (the fixture cites its
 * source): every one loads with kube-apiserver's shares and lendable
 * percent (test_engines checks their limits at 600 seats). */
static void test_builtin_levels_fixture(void **state)
{
	char path[512];
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;

	(void)state;
	fixture(path, sizeof(path), "pasted/kubectl-builtin-levels-list.yaml");
	assert_int_equal(sl_config_load_file(path, &cfg, &d), 0);
	assert_int_equal(d.count, 0);
	assert_int_equal(cfg->n_levels, N_DEFAULT);
	for (size_t i = 0; i < N_DEFAULT; i++) {
		const struct sl_level_cfg *l = level(cfg, default_levels[i].name);

		assert_int_equal(l->type == SL_LEVEL_EXEMPT, default_levels[i].exempt);
		assert_int_equal(l->shares, default_levels[i].shares);
		assert_int_equal(l->lendable_percent, default_levels[i].lendable);
	}
	sl_config_free(cfg);
	sl_diags_free(&d);
}

#define ASM_V1 "apiVersion: istio.alibabacloud.com/v1\n"
#define ASM_POLICY(api, mode) api "kind: AverageLatencySchedulingPolicy\nmetadata: {name: p}\nspec:\n" mode \
	"  load_scheduling_core:\n    aimd_load_scheduler:\n      load_scheduler:\n        selectors: [{}]\n"

static enum sl_policy_mode mode_of(const char *yaml)
{
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;
	enum sl_policy_mode m;

	if (load(yaml, &cfg, &d)) {
		sl_diags_print(&d, stderr);
		fail_msg("did not load");
	}
	assert_int_equal(cfg->n_policies, 1);
	m = cfg->policies[0].mode;
	sl_config_free(cfg);
	sl_diags_free(&d);
	return m;
}

/* A policy pasted under ASM's apiVersion runs what its author expects,
 * Aperture's AIMD, unless spec.mode says otherwise; under sluice/v1 it
 * runs sluice's own mode by default, as before. */
static void test_asm_policy_runs_aperture(void **state)
{
	(void)state;
	assert_int_equal(mode_of(ASM_POLICY(ASM_V1, "")), SL_POLICY_APERTURE);
	assert_int_equal(mode_of(ASM_POLICY(ASM_V1, "  mode: sluice\n")), SL_POLICY_SLUICE);
	assert_int_equal(mode_of(ASM_POLICY(API, "")), SL_POLICY_SLUICE);
	assert_int_equal(mode_of(ASM_POLICY(API, "  mode: aperture\n")), SL_POLICY_APERTURE);
}

/* ASM's reference writes label_matches as a list: every one must match. */
static void test_label_matches_list(void **state)
{
	struct sl_config *cfg;
	const struct sl_lm_expr *e;
	struct sl_labels l = {0};

	(void)state;
	cfg = load_ok(API "kind: AverageLatencySchedulingPolicy\nmetadata: {name: p}\nspec:\n"
		      "  load_scheduling_core:\n    aimd_load_scheduler:\n      load_scheduler:\n"
		      "        selectors:\n        - label_matcher:\n            expression:\n"
		      "              label_matches:\n"
		      "              - {label: src.ip, regex: \"^10\\\\.\"}\n"
		      "              - {label: dst.port, regex: \"^80$\"}\n");
	e = cfg->policies[0].selectors[0].matcher.expr;
	assert_non_null(e);
	assert_int_equal(e->kind, SL_LE_ALL);
	assert_int_equal(e->n_children, 2);
	assert_int_equal(e->children[0].kind, SL_LE_MATCHES);
	assert_int_equal(e->children[1].kind, SL_LE_MATCHES);
	assert_int_equal(sl_labels_set(&l, "src.ip", "10.1.2.3"), 0);
	assert_int_equal(sl_labels_set(&l, "dst.port", "80"), 0);
	assert_true(sl_lm_expr_eval(e, &l));
	assert_int_equal(sl_labels_set(&l, "dst.port", "8080"), 0);
	assert_false(sl_lm_expr_eval(e, &l));
	sl_labels_free(&l);
	sl_config_free(cfg);
}

/* A file whose only object was skipped says so, not "empty, comments
 * only, or truncated". */
static void test_only_dangling_file(void **state)
{
	static const char yaml[] = FSN("a") "  priorityLevelConfiguration: {name: nowhere}\n" RULES_ANY;
	char path[] = "/tmp/sluice-test-pasted.XXXXXX";
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;
	int fd = mkstemp(path);
	bool said = false;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, yaml, sizeof(yaml) - 1), (ssize_t)(sizeof(yaml) - 1));
	close(fd);
	assert_int_equal(sl_config_load_file(path, &cfg, &d), -EINVAL);
	unlink(path);
	assert_null(cfg);
	for (size_t i = 0; i < d.count; i++) {
		assert_null(strstr(d.items[i].message, "comments only"));
		said |= d.items[i].severity == SL_SEV_ERROR &&
			strstr(d.items[i].message, "every object of the file was skipped (1 dangling FlowSchema") != NULL;
	}
	assert_true(said);
	sl_diags_free(&d);
}

static void rule_list_type(const struct sl_schema_field *f, void *arg)
{
	char **types = arg;

	if (strcmp(f->kind, "FlowSchema") || strcmp(f->parent, "spec.rules[]"))
		return;
	if (!strcmp(f->name, "subjects"))
		types[0] = strdup(f->type);
	else if (!strcmp(f->name, "destinations"))
		types[1] = strdup(f->type);
}

/* sluicectl schema (and sluice.yaml(5)) and validate agree on a rule's
 * subjects and destinations: at least one of each, or the rule never
 * matches (the schema said "none: every destination"). */
static void test_schema_and_validate_agree_on_rules(void **state)
{
	char *types[2] = {NULL, NULL};

	(void)state;
	assert_int_equal(sl_schema_walk(rule_list_type, types), 0);
	for (int i = 0; i < 2; i++) {
		assert_non_null(types[i]);
		assert_non_null(strstr(types[i], "at least one"));
		assert_null(strstr(types[i], "none:"));
		free(types[i]);
	}
	expect_one(FSP "  rules: [{subjects: [" NET("10.0.0.0/8") "]}]\n", SL_SEV_ERROR, 6, 11, FS_OBJ,
		   "spec.rules[0].destinations", "a rule needs at least one destination");
	expect_one(FSP "  rules: [{destinations: [{}]}]\n", SL_SEV_ERROR, 6, 11, FS_OBJ,
		   "spec.rules[0].subjects", "a rule needs at least one subject");
}

/* ASM's own reference example (cited in the fixture), pasted under ASM's
 * apiVersion with a namespace: it loads, runs Aperture's AIMD, and the
 * only complaints are the two HTTP labels no connection has at layer 4. */
static void test_asm_reference_fixture(void **state)
{
	char path[512];
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;
	const struct sl_lm_expr *e;

	(void)state;
	fixture(path, sizeof(path), "pasted/asm-selector-reference.yaml");
	assert_int_equal(sl_config_load_file(path, &cfg, &d), 0);
	assert_int_equal(d.count, 2);
	assert_non_null(strstr(d.items[0].message, "label 'query' is not built-in"));
	assert_non_null(strstr(d.items[1].message, "label 'user_agent' is not built-in"));
	assert_int_equal(cfg->n_policies, 1);
	assert_int_equal(cfg->policies[0].mode, SL_POLICY_APERTURE);
	e = cfg->policies[0].selectors[0].matcher.expr;
	assert_int_equal(e->kind, SL_LE_ALL);
	assert_int_equal(e->n_children, 1);
	assert_string_equal(e->children[0].label, "user_agent");
	sl_config_free(cfg);
	sl_diags_free(&d);
}

/* ---- published objects, pasted whole ------------------------------------------ */

/* One diagnostic a published fixture must produce, in file order. */
struct want_diag {
	enum sl_severity sev;
	unsigned line, col;
	const char *object, *path, *msg;
};

#define L4_URLS "nonResourceRules do not exist at layer 4"
#define L4_RESOURCES "resourceRules do not exist at layer 4"
#define L4_GROUP "Group subjects do not exist at layer 4"
#define L4_SA "ServiceAccount subjects do not exist at layer 4"
#define BY_USER "ByUser is read as BySource"
#define RULE0 "spec.rules[0]."

/* Loads a fixture (or several, pasted one after another) and checks every
 * diagnostic, and the outcome: an error fails the load. */
static struct sl_config *load_published(const char *const *names, const struct want_diag *want, size_t n_want)
{
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;
	char path[512], *buf = NULL;
	size_t len = 0, errors = 0;
	FILE *out = open_memstream(&buf, &len);

	assert_non_null(out);
	for (size_t i = 0; names[i]; i++) {
		char chunk[4096];
		size_t n;
		FILE *f;

		fixture(path, sizeof(path), names[i]);
		f = fopen(path, "r");
		if (!f)
			fail_msg("cannot read %s", path);
		if (i)
			fputs("---\n", out);
		while ((n = fread(chunk, 1, sizeof(chunk), f)))
			fwrite(chunk, 1, n, out);
		fclose(f);
	}
	assert_int_equal(fclose(out), 0);
	(void)sl_config_load_buffer(names[0], buf, len, &cfg, &d);
	if (d.count != n_want)
		sl_diags_print(&d, stderr);
	assert_int_equal(d.count, n_want);
	for (size_t i = 0; i < n_want; i++) {
		check_diag(&d.items[i], want[i].sev, want[i].line, want[i].col, want[i].object,
			   want[i].path, want[i].msg);
		errors += want[i].sev == SL_SEV_ERROR;
	}
	assert_int_equal(cfg == NULL, errors > 0);
	free(buf);
	sl_diags_free(&d);
	return cfg;
}

/* A Queue level as published: its shares, lendable percent and queuing. */
static void check_queuing(const struct sl_level_cfg *l, uint32_t shares, uint32_t lendable, uint32_t queues,
			  uint32_t hand, uint32_t length)
{
	assert_int_equal(l->shares, shares);
	assert_int_equal(l->lendable_percent, lendable);
	assert_int_equal(l->queues, queues);
	assert_int_equal(l->hand_size, hand);
	assert_int_equal(l->queue_length_limit, length);
}

/* Document `index` (from 0) of a fixture, alone: it must load cleanly. */
static struct sl_config *load_document(const char *name, unsigned index)
{
	char path[512], *yaml = NULL, *doc, *end;
	size_t cap = 0;
	struct sl_config *cfg;
	FILE *f;

	fixture(path, sizeof(path), name);
	f = fopen(path, "r");
	if (!f)
		fail_msg("cannot read %s", path);
	assert_true(getdelim(&yaml, &cap, '\0', f) > 0);
	fclose(f);
	doc = yaml;
	for (unsigned i = 0; i < index; i++) {
		doc = strstr(doc, "\n---\n");
		assert_non_null(doc);
		doc += 5;
	}
	end = strstr(doc, "\n---\n");
	if (end)
		end[1] = '\0';
	cfg = load_ok(doc);
	free(yaml);
	return cfg;
}

#define LOAD_PUBLISHED(want, ...) \
	load_published((const char *const[]){ __VA_ARGS__, NULL }, want, N_OF(want))

/* The Kubernetes website's two examples, JSON-like flow YAML with trailing
 * commas: only what layer 4 cannot see fails. */
static void test_k8s_website_examples(void **state)
{
	static const struct want_diag strangers[] = {
		{ SL_SEV_ERROR, 21, 7, "FlowSchema/health-for-strangers", RULE0 "nonResourceRules", L4_URLS },
		{ SL_SEV_ERROR, 32, 15, "FlowSchema/health-for-strangers", RULE0 "subjects[0].kind", L4_GROUP },
	};
	static const struct want_diag events[] = {
		{ SL_SEV_WARNING, 16, 13, "FlowSchema/list-events-default-service-account",
		  "spec.distinguisherMethod.type", BY_USER },
		{ SL_SEV_ERROR, 23, 7, "FlowSchema/list-events-default-service-account", RULE0 "resourceRules",
		  L4_RESOURCES },
		{ SL_SEV_ERROR, 38, 15, "FlowSchema/list-events-default-service-account", RULE0 "subjects[0].kind",
		  L4_SA },
	};

	(void)state;
	assert_null(LOAD_PUBLISHED(strangers, "pasted/k8s-website-health-for-strangers.yaml"));
	assert_null(LOAD_PUBLISHED(events, "pasted/k8s-website-list-events-default-service-account.yaml"));
}

/* The same examples as the website published them at v1beta2 and v1beta3:
 * each version's object is read, and fails only on what layer 4 cannot
 * see, at its own lines. */
static void test_k8s_website_examples_beta(void **state)
{
	static const struct want_diag strangers_v1beta2[] = {
		{ SL_SEV_ERROR, 17, 5, "FlowSchema/health-for-strangers", RULE0 "nonResourceRules", L4_URLS },
		{ SL_SEV_ERROR, 25, 13, "FlowSchema/health-for-strangers", RULE0 "subjects[0].kind", L4_GROUP },
	};
	static const struct want_diag strangers_v1beta3[] = {
		{ SL_SEV_ERROR, 17, 7, "FlowSchema/health-for-strangers", RULE0 "nonResourceRules", L4_URLS },
		{ SL_SEV_ERROR, 25, 17, "FlowSchema/health-for-strangers", RULE0 "subjects[0].kind", L4_GROUP },
	};
	static const struct want_diag events_v1beta3[] = {
		{ SL_SEV_WARNING, 14, 11, "FlowSchema/list-events-default-service-account",
		  "spec.distinguisherMethod.type", BY_USER },
		{ SL_SEV_ERROR, 19, 7, "FlowSchema/list-events-default-service-account", RULE0 "resourceRules",
		  L4_RESOURCES },
		{ SL_SEV_ERROR, 29, 17, "FlowSchema/list-events-default-service-account", RULE0 "subjects[0].kind",
		  L4_SA },
	};

	(void)state;
	assert_null(LOAD_PUBLISHED(strangers_v1beta2, "pasted/k8s-website-health-for-strangers-v1beta2.yaml"));
	assert_null(LOAD_PUBLISHED(strangers_v1beta3, "pasted/k8s-website-health-for-strangers-v1beta3.yaml"));
	assert_null(LOAD_PUBLISHED(events_v1beta3, "pasted/k8s-website-list-events-v1beta3.yaml"));
}

/* Kueue's kustomize base: the level loads as published (its namespace
 * ignored); its FlowSchema, pasted before it, names the level as the
 * built output does, and is told so. */
static void test_kueue_visibility(void **state)
{
	static const struct want_diag none[] = {};
	static const struct want_diag pair[] = {
		{ SL_SEV_WARNING, 15, 11, "FlowSchema/visibility", "spec.distinguisherMethod.type", BY_USER },
		{ SL_SEV_WARNING, 18, 11, "FlowSchema/visibility", "spec.priorityLevelConfiguration.name",
		  "PriorityLevelConfiguration 'kueue-visibility' does not exist; this FlowSchema is dangling and is "
		  "skipped (it classifies no connection); the file has 'visibility': a kustomize namePrefix "
		  "'kueue-' gives the level that name when built, so paste `kubectl kustomize` output" },
		{ SL_SEV_ERROR, 20, 7, "FlowSchema/visibility", RULE0 "resourceRules", L4_RESOURCES },
		{ SL_SEV_ERROR, 33, 17, "FlowSchema/visibility", RULE0 "subjects[0].kind", L4_GROUP },
		{ SL_SEV_ERROR, 36, 17, "FlowSchema/visibility", RULE0 "subjects[1].kind", L4_GROUP },
	};
	struct sl_config *cfg;

	(void)state;
	cfg = LOAD_PUBLISHED(none, "pasted/kueue-visibility-level.yaml");
	check_queuing(level(cfg, "visibility"), 10, 90, 16, 4, 50);
	sl_config_free(cfg);
	assert_null(LOAD_PUBLISHED(pair, "pasted/kueue-visibility-flowschema.yaml",
				   "pasted/kueue-visibility-level.yaml"));
}

/* OpenShift's v1beta1 manifest: the level with assuredConcurrencyShares
 * loads (the first document alone shows it); the schemas fail only on
 * what layer 4 cannot see, and on a suggested level the file lacks. */
static void test_openshift_v1beta1(void **state)
{
	static const struct want_diag want[] = {
		{ SL_SEV_WARNING, 38, 11, "FlowSchema/openshift-monitoring-metrics", "spec.distinguisherMethod.type",
		  BY_USER },
		{ SL_SEV_ERROR, 41, 11, "FlowSchema/openshift-monitoring-metrics", "spec.priorityLevelConfiguration.name",
		  "'workload-high' is one of Kubernetes' suggested levels" },
		{ SL_SEV_ERROR, 43, 5, "FlowSchema/openshift-monitoring-metrics", RULE0 "nonResourceRules", L4_URLS },
		{ SL_SEV_ERROR, 49, 13, "FlowSchema/openshift-monitoring-metrics", RULE0 "subjects[0].kind", L4_SA },
		{ SL_SEV_WARNING, 64, 11, "FlowSchema/openshift-kube-apiserver-operator",
		  "spec.distinguisherMethod.type", BY_USER },
		{ SL_SEV_ERROR, 69, 5, "FlowSchema/openshift-kube-apiserver-operator", RULE0 "resourceRules",
		  L4_RESOURCES },
		{ SL_SEV_ERROR, 80, 13, "FlowSchema/openshift-kube-apiserver-operator", RULE0 "subjects[0].kind", L4_SA },
		{ SL_SEV_WARNING, 93, 11, "FlowSchema/probes", "spec.distinguisherMethod.type", BY_USER },
		{ SL_SEV_ERROR, 98, 7, "FlowSchema/probes", RULE0 "nonResourceRules", L4_URLS },
		{ SL_SEV_ERROR, 108, 17, "FlowSchema/probes", RULE0 "subjects[0].kind", L4_GROUP },
		{ SL_SEV_ERROR, 111, 17, "FlowSchema/probes", RULE0 "subjects[1].kind", L4_GROUP },
	};
	struct sl_config *cfg;

	(void)state;
	assert_null(LOAD_PUBLISHED(want, "pasted/openshift-v1beta1-flowschema.yaml"));
	cfg = load_document("pasted/openshift-v1beta1-flowschema.yaml", 0);
	check_queuing(level(cfg, "openshift-control-plane-operators"), 10, 0, 128, 6, 50);
	sl_config_free(cfg);
}

/* A live cluster's global-default pair as kubectl printed it. */
static void test_kubectl_capture(void **state)
{
	static const struct want_diag want[] = {
		{ SL_SEV_WARNING, 15, 11, "FlowSchema/global-default", "spec.distinguisherMethod.type", BY_USER },
		{ SL_SEV_ERROR, 20, 5, "FlowSchema/global-default", RULE0 "nonResourceRules", L4_URLS },
		{ SL_SEV_ERROR, 25, 5, "FlowSchema/global-default", RULE0 "resourceRules", L4_RESOURCES },
		{ SL_SEV_ERROR, 38, 13, "FlowSchema/global-default", RULE0 "subjects[0].kind", L4_GROUP },
		{ SL_SEV_ERROR, 41, 13, "FlowSchema/global-default", RULE0 "subjects[1].kind", L4_GROUP },
	};
	struct sl_config *cfg;

	(void)state;
	assert_null(LOAD_PUBLISHED(want, "pasted/kubectl-capture-global-default.yaml"));
	cfg = load_document("pasted/kubectl-capture-global-default.yaml", 1);
	check_queuing(level(cfg, "global-default"), 20, 50, 128, 6, 50);
	sl_config_free(cfg);
}

/* Aperture's guides' values files: one error each, in the names the file
 * uses (its policy's name, the core's older name). */
static void test_aperture_guide_values(void **state)
{
	static const struct want_diag prioritization[] = {
		{ SL_SEV_ERROR, 12, 12, "Aperture blueprint values", "blueprint",
		  "metadata: {name: workload-prioritization}, spec: {load_scheduling_core: "
		  "<policy.service_protection_core>, latency_baseliner: <policy.latency_baseliner>}}; "
		  "service_protection_core is the blueprint's older name for load_scheduling_core" },
	};
	static const struct want_diag feedback[] = {
		{ SL_SEV_ERROR, 7, 1, "Aperture blueprint values", "policy",
		  "metadata: {name: basic-service-protection}" },
	};
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;
	char path[512];

	(void)state;
	assert_null(LOAD_PUBLISHED(prioritization, "pasted/aperture-workload-prioritization-values.yaml"));
	assert_null(LOAD_PUBLISHED(feedback, "pasted/aperture-average-latency-feedback-values.yaml"));
	/* ... and says to rename the scheduler. */
	fixture(path, sizeof(path), "pasted/aperture-average-latency-feedback-values.yaml");
	assert_int_not_equal(sl_config_load_file(path, &cfg, &d), 0);
	assert_non_null(strstr(d.items[0].message,
			       "rename adaptive_load_scheduler, its older name, to aimd_load_scheduler"));
	sl_diags_free(&d);
	/* Translated as it says, the flux meter the blueprint requires is said
	 * and not read. */
	expect_one(ASM_V1 "kind: AverageLatencySchedulingPolicy\nmetadata: {name: p}\nspec:\n"
		   "  load_scheduling_core:\n    aimd_load_scheduler:\n      load_scheduler:\n"
		   "        selectors: [{}]\n  latency_baseliner:\n    latency_tolerance_multiplier: 1.1\n"
		   "    flux_meter: {selectors: [{control_point: ingress}]}\n",
		   SL_SEV_WARNING, 11, 5, "AverageLatencySchedulingPolicy/p", "spec.latency_baseliner.flux_meter",
		   "not read: the latency a policy follows is that of the connections its selectors select");
}

#define LIST_HEAD "apiVersion: v1\nkind: List\nitems:\n"

static const struct bad_case bad_cases[] = {
	/* v1beta2 and v1beta1 have their own names, and no lending. */
	{ "bad_v1beta2_nominal", "apiVersion: flowcontrol.apiserver.k8s.io/v1beta2\nkind: PriorityLevelConfiguration\n"
	  "metadata: {name: batch}\nspec:\n  type: Limited\n  limited:\n    nominalConcurrencyShares: 5\n"
	  "    limitResponse: {type: Reject}\n", 7, 5, "PriorityLevelConfiguration/batch",
	  "spec.limited.nominalConcurrencyShares", "unknown field 'nominalConcurrencyShares'" },
	{ "bad_v1beta1_lendable", "apiVersion: flowcontrol.apiserver.k8s.io/v1beta1\nkind: PriorityLevelConfiguration\n"
	  "metadata: {name: batch}\nspec:\n  type: Limited\n  limited:\n    lendablePercent: 5\n"
	  "    limitResponse: {type: Reject}\n", 7, 5, "PriorityLevelConfiguration/batch",
	  "spec.limited.lendablePercent", "unknown field 'lendablePercent'" },
	{ "bad_asm_version_on_level", ASM_V1 "kind: PriorityLevelConfiguration\nmetadata: {name: x}\n"
	  "spec: {type: Exempt}\n", 1, 13, "PriorityLevelConfiguration/x", "apiVersion",
	  "apiVersion 'istio.alibabacloud.com/v1' has no kind PriorityLevelConfiguration (it has AverageLatencySchedulingPolicy)" },
	{ "bad_label_matches_empty_list", API "kind: AverageLatencySchedulingPolicy\nmetadata: {name: p}\nspec:\n"
	  "  load_scheduling_core:\n    aimd_load_scheduler:\n      load_scheduler:\n"
	  "        selectors: [{label_matcher: {expression: {label_matches: []}}}]\n", 8, 66, POL_OBJ,
	  "spec.load_scheduling_core.aimd_load_scheduler.load_scheduler.selectors[0].label_matcher.expression.label_matches",
	  "must not be empty: give {label, regex}, or a list of them that must all match" },
	/* Every cluster has the suggested levels, so real FlowSchemas name them. */
	{ "bad_suggested_level_missing", FSN("service-accounts") "  priorityLevelConfiguration: {name: workload-low}\n"
	  RULES_ANY, 5, 38, "FlowSchema/service-accounts", "spec.priorityLevelConfiguration.name",
	  "PriorityLevelConfiguration 'workload-low' is one of Kubernetes' suggested levels, which every cluster has "
	  "but sluice does not add (its shares would change every level's seats): paste it (kubectl get "
	  "prioritylevelconfiguration workload-low -o yaml), or add {apiVersion: sluice/v1, kind: "
	  "PriorityLevelConfiguration, metadata: {name: workload-low}, spec: {type: Limited, limited: "
	  "{nominalConcurrencyShares: 100, lendablePercent: 90, limitResponse: {type: Queue, queuing: "
	  "{queues: 128, handSize: 6, queueLengthLimit: 50}}}}}" },
	/* An Aperture blueprint's values file, named as one, with where its
	 * policy goes (not seven errors about the fields an object has). */
	{ "bad_blueprint_values", "blueprint: load-scheduling/average-latency\n"
	  "uri: github.com/fluxninja/aperture/blueprints@latest\npolicy:\n  policy_name: svc\n"
	  "  load_scheduling_core:\n    aimd_load_scheduler: {load_scheduler: {selectors: [{}]}}\n",
	  1, 12, "Aperture blueprint values", "blueprint",
	  "this is the values file of Aperture's blueprint 'load-scheduling/average-latency', not an object: "
	  "write {apiVersion: sluice/v1 (or istio.alibabacloud.com/v1), kind: AverageLatencySchedulingPolicy" },
	{ "bad_list_items_not_a_list", LIST_HEAD "  kind: FlowSchema\n", 4, 3, "List (document 1)", "items",
	  "expected the list's objects, got a mapping" },
	/* An item's error is at its own line, in its own name. */
	{ "bad_list_item_field", LIST_HEAD "- " K8S_V1 "  kind: PriorityLevelConfiguration\n  metadata: {name: a}\n"
	  "  spec: {type: Exempt}\n"
	  "- " K8S_V1 "  kind: PriorityLevelConfiguration\n  metadata: {name: b}\n"
	  "  spec: {type: Limited, limited: {limitResponse: {type: Reject}, nominalShares: 3}}\n",
	  11, 66, "PriorityLevelConfiguration/b", "spec.limited.nominalShares", "unknown field 'nominalShares'" },
};

int main(void)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(test_server_metadata_and_status_ignored),
		cmocka_unit_test(test_v1beta3_zero_shares),
		cmocka_unit_test(test_v1beta3_zero_shares_said),
		cmocka_unit_test(test_v1beta12_assured_shares),
		cmocka_unit_test(test_lists_unwrapped),
		cmocka_unit_test(test_builtin_levels_fixture),
		cmocka_unit_test(test_asm_policy_runs_aperture),
		cmocka_unit_test(test_label_matches_list),
		cmocka_unit_test(test_only_dangling_file),
		cmocka_unit_test(test_schema_and_validate_agree_on_rules),
		cmocka_unit_test(test_asm_reference_fixture),
		cmocka_unit_test(test_k8s_website_examples),
		cmocka_unit_test(test_k8s_website_examples_beta),
		cmocka_unit_test(test_kueue_visibility),
		cmocka_unit_test(test_openshift_v1beta1),
		cmocka_unit_test(test_kubectl_capture),
		cmocka_unit_test(test_aperture_guide_values),
	};

	return run_config_suite("config_pasted", fixed, N_OF(fixed), bad_cases, N_OF(bad_cases));
}
