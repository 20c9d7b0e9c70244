// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Configuration loader tests: Kubernetes flow-control objects pasted as
 * kubectl prints them (issue 39).  flowcontrol.apiserver.k8s.io/v1 and
 * v1beta3 are read (v1beta3's "0 shares means the default" said at the
 * field), v1beta2 and v1beta1 with their own assuredConcurrencyShares; the server's
 * metadata, a namespace and status are ignored; kind List and a kind's own
 * list (FlowSchemaList) are unwrapped, each item checked at its own lines.
 * The fixtures under tests/unit/configs/pasted/ cite their sources.
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
	};

	return run_config_suite("config_pasted", fixed, N_OF(fixed), bad_cases, N_OF(bad_cases));
}
