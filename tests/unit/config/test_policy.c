// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Configuration loader tests: kind AverageLatencySchedulingPolicy.
 *
 * Every rule has a good and a bad example; the bad ones are rows of
 * bad_cases[] (one test each).  Run from the repository root, or point
 * SLUICE_TEST_DATA at tests/unit/configs.
 */
#include "config_helpers.h"
#include "config/duration.h"
#include "config/schema.h"

static const struct bad_case bad_cases[] = {
	/* kind: AverageLatencySchedulingPolicy */
	{ "bad_pol_missing_core", POLN("p") "  control_period: 1s\n" "  mode: aperture\n", 5, 3, POL_OBJ,
	  "spec.load_scheduling_core", "missing required field 'load_scheduling_core'" },
	{ "bad_pol_missing_ls", AIMD "      max_load_multiplier: 2\n" "  mode: aperture\n", 7, 7, POL_OBJ, AP "load_scheduler",
	  "missing required field 'load_scheduler'" },
	{ "bad_pol_unknown", AIMD "      alerter: {}\n" AIMD_END, 7, 7, POL_OBJ, AP "alerter",
	  "unknown field 'alerter' (known fields: gradient, load_multiplier_linear_increment, max_load_multiplier, min_load_multiplier, load_scheduler)" },
	{ "bad_pol_slope_zero", AIMD "      gradient: {slope: 0}\n" AIMD_END "  mode: aperture\n", 7, 25, POL_OBJ, AP "gradient.slope",
	  "must not be 0: the gradient would always be 1 and the controller could never shed load" },
	{ "bad_pol_gradient_order", AIMD "      gradient: {min_gradient: 0.5, max_gradient: 0.2}\n" AIMD_END "  mode: aperture\n", 7, 51,
	  POL_OBJ, AP "gradient.max_gradient", "max_gradient 0.2 is below min_gradient 0.5" },
	{ "bad_pol_gradient_default_order", AIMD "      gradient: {min_gradient: 2}\n" AIMD_END "  mode: aperture\n", 7, 32,
	  POL_OBJ, AP "gradient.min_gradient", "max_gradient (default) 1 is below min_gradient 2" },
	{ "bad_pol_increment_negative", AIMD "      load_multiplier_linear_increment: -0.1\n" AIMD_END "  mode: aperture\n", 7, 41, POL_OBJ,
	  AP "load_multiplier_linear_increment", "must be at least 0, got -0.1" },
	{ "bad_pol_max_lm", AIMD "      max_load_multiplier: -1\n" AIMD_END "  mode: aperture\n", 7, 28, POL_OBJ,
	  AP "max_load_multiplier", "must be at least 0, got -1" },
	{ "bad_pol_min_lm", AIMD "      min_load_multiplier: 2\n" AIMD_END "  mode: aperture\n", 7, 28, POL_OBJ,
	  AP "min_load_multiplier", "must be below max_load_multiplier (2), got 2" },
	{ "bad_pol_min_lm_negative", AIMD "      min_load_multiplier: -0.5\n" AIMD_END "  mode: aperture\n", 7, 28, POL_OBJ,
	  AP "min_load_multiplier", "must be at least 0, got -0.5" },
	{ "bad_pol_number_type", AIMD "      max_load_multiplier: high\n" AIMD_END "  mode: aperture\n", 7, 28, POL_OBJ,
	  AP "max_load_multiplier", "expected a number, got string 'high'" },
	{ "bad_pol_number_quoted", AIMD "      max_load_multiplier: \"2\"\n" AIMD_END "  mode: aperture\n", 7, 28, POL_OBJ,
	  AP "max_load_multiplier", "expected a number, got string '2' (remove the quotes)" },
	{ "bad_pol_nan", AIMD "      max_load_multiplier: .nan\n" AIMD_END "  mode: aperture\n", 7, 28, POL_OBJ,
	  AP "max_load_multiplier", "expected a finite number, got .nan" },
	{ "bad_pol_selectors_empty", LSCH "        selectors: []\n", 8, 20, POL_OBJ, LP "selectors",
	  "must not be empty: a policy without selectors applies to no connection" },
	{ "bad_pol_selectors_missing", LSCH "        scheduler: {}\n", 8, 9, POL_OBJ, LP "selectors",
	  "missing required field 'selectors'" },
	{ "bad_pol_control_point", LSCH "        selectors:\n        - control_point: egress\n", 9, 26, POL_OBJ,
	  SP "control_point",
	  "sluice acts on connections arriving at this host, so the only control point at layer 4 is 'ingress', got 'egress'" },
	{ "bad_pol_agent_group", LSCH "        selectors:\n        - agent_group: edge\n", 9, 24, POL_OBJ,
	  SP "agent_group", "sluice runs one agent per host, in agent group 'default'; a selector for agent group 'edge' would select nothing" },
	{ "bad_pol_service_empty", LSCH "        selectors:\n        - service: \"\"\n", 9, 20, POL_OBJ,
	  SP "service", "must not be empty (the default is 'any')" },
	/* Aperture selects by service; at layer 4 there is no service to know:
	 * accepting the name would select every connection of the host. */
	{ "bad_pol_service_named", LSCH "        selectors:\n        - service: checkout.default.svc.cluster.local\n",
	  9, 20, POL_OBJ, SP "service",
	  "sluice cannot tell services apart at layer 4, so 'checkout.default.svc.cluster.local' would select every connection of the host; use service: any with a label_matcher on dst.port (the service's port)" },
	{ "bad_pol_regex", LSCH "        selectors:\n        - label_matcher: {expression: {label_matches: {label: src.ip, regex: \"(ab\"}}}\n",
	  9, 78, POL_OBJ, SP "label_matcher.expression.label_matches.regex",
	  "regex '(ab' does not compile: missing closing parenthesis at offset 3" },
	{ "bad_pol_regex_empty", LSCH "        selectors:\n        - label_matcher: {expression: {label_matches: {label: src.ip, regex: \"\"}}}\n",
	  9, 78, POL_OBJ, SP "label_matcher.expression.label_matches.regex",
	  "must not be empty (an empty regex matches every value; use label_exists)" },
	{ "bad_pol_regex_missing", LSCH "        selectors:\n        - label_matcher: {expression: {label_matches: {label: src.ip}}}\n",
	  9, 55, POL_OBJ, SP "label_matcher.expression.label_matches.regex", "missing required field 'regex'" },
	{ "bad_pol_expr_two", LSCH "        selectors:\n        - label_matcher: {expression: {label_exists: src.ip, not: {label_exists: dst.ip}}}\n",
	  9, 62, POL_OBJ, SP "label_matcher.expression.not",
	  "an expression has exactly one of not, all, any, label_exists, label_equals, label_matches; this one also has 'label_exists' (at t.yaml:9:40)" },
	{ "bad_pol_expr_none", LSCH "        selectors:\n        - label_matcher: {expression: {}}\n", 9, 39, POL_OBJ,
	  SP "label_matcher.expression", "an expression needs exactly one of not, all, any, label_exists, label_equals, label_matches" },
	{ "bad_pol_expr_unknown", LSCH "        selectors:\n        - label_matcher: {expression: {label_equal: {label: a}}}\n",
	  9, 40, POL_OBJ, SP "label_matcher.expression.label_equal",
	  "unknown field 'label_equal'; did you mean 'label_equals'?" },
	{ "bad_pol_expr_nested", LSCH "        selectors:\n        - label_matcher: {expression: {all: {of: [{not: ~}]}}}\n",
	  9, 52, POL_OBJ, SP "label_matcher.expression.all.of[0].not", "must not be empty" },
	{ "bad_pol_expr_of_type", LSCH "        selectors:\n        - label_matcher: {expression: {any: {of: {label_exists: a}}}}\n",
	  9, 50, POL_OBJ, SP "label_matcher.expression.any.of", "expected a list of expressions, got a mapping" },
	{ "bad_pol_expr_exists_key", LSCH "        selectors:\n        - label_matcher: {expression: {label_exists: \"a b\"}}\n",
	  9, 54, POL_OBJ, SP "label_matcher.expression.label_exists", "label key 'a b' may contain only" },
	{ "bad_pol_match_list_in", LSCH "        selectors:\n        - label_matcher: {match_list: [{key: src.ip, operator: In}]}\n",
	  9, 64, POL_OBJ, SP "label_matcher.match_list[0].values", "operator In needs a non-empty list of values" },
	{ "bad_pol_match_list_dne_values", LSCH "        selectors:\n        - label_matcher: {match_list: [{key: src.ip, operator: DoesNotExist, values: [a]}]}\n",
	  9, 86, POL_OBJ, SP "label_matcher.match_list[0].values", "operator DoesNotExist takes no values; remove them" },
	{ "bad_pol_matcher_k8s_field", LSCH "        selectors:\n        - label_matcher: {matchLabels: {a: b}}\n",
	  9, 27, POL_OBJ, SP "label_matcher.matchLabels", "did you mean 'match_labels'?" },
	{ "bad_pol_workload_priority_zero", SCHED "          workloads:\n          - label_matcher: {}\n"
	  "            parameters: {priority: 0}\n", 12, 36, POL_OBJ, SCP "workloads[0].parameters.priority",
	  "must be greater than 0, got 0" },
	{ "bad_pol_workload_tokens", SCHED "          workloads:\n          - label_matcher: {}\n"
	  "            parameters: {tokens: -1}\n" "  mode: aperture\n", 12, 34, POL_OBJ, SCP "workloads[0].parameters.tokens",
	  "must be at least 0, got -1" },
	{ "bad_pol_workload_timeout", SCHED "          workloads:\n          - label_matcher: {}\n"
	  "            parameters: {queue_timeout: 5}\n", 12, 41, POL_OBJ, SCP "workloads[0].parameters.queue_timeout",
	  "duration 5 needs a unit, e.g. 5s" },
	{ "bad_pol_workload_delay_order", SCHED "          workloads:\n          - label_matcher: {}\n"
	  "            parameters: {queue_delay_target: 2s, queue_delay_interval: 1s}\n", 12, 46, POL_OBJ,
	  SCP "workloads[0].parameters.queue_delay_target",
	  "the delay target 2s must not exceed queue_delay_interval (1s): a standing queue is one whose backlog has lasted the interval" },
	{ "bad_pol_workload_no_matcher", SCHED "          workloads:\n          - name: gold\n", 11, 13, POL_OBJ,
	  SCP "workloads[0].label_matcher", "missing required field 'label_matcher'" },
	{ "bad_pol_workload_dup", SCHED "          workloads:\n"
	  "          - {name: a, label_matcher: {match_labels: {dst.port: \"1\"}}}\n"
	  "          - {name: a, label_matcher: {match_labels: {dst.port: \"2\"}}}\n", 12, 20, POL_OBJ,
	  SCP "workloads[1].name", "duplicate workload name 'a'; also defined at t.yaml:11:20" },
	{ "bad_pol_workload_default_name", SCHED "          workloads:\n"
	  "          - {name: default, label_matcher: {match_labels: {dst.port: \"1\"}}}\n", 11, 20, POL_OBJ,
	  SCP "workloads[0].name", "'default' names the default workload" },
	{ "bad_pol_default_priority", SCHED "          default_workload_parameters: {priority: -1}\n", 10, 51, POL_OBJ,
	  SCP "default_workload_parameters.priority", "must be greater than 0, got -1" },
	{ "bad_pol_scheduler_unknown", SCHED "          fairness_label_key: user\n", 10, 11, POL_OBJ,
	  SCP "fairness_label_key", "unknown field 'fairness_label_key' (known fields: workloads, default_workload_parameters, workload_latency_based_tokens)" },
	{ "bad_pol_wlbt_conflict", LSCH "        selectors: [{}]\n        workload_latency_based_tokens: true\n"
	  "        scheduler: {workload_latency_based_tokens: false}\n" "  mode: aperture\n", 10, 52, POL_OBJ,
	  SCP "workload_latency_based_tokens",
	  "contradicts load_scheduler.workload_latency_based_tokens (at t.yaml:9:40); set it in one place" },
	{ "bad_pol_wlbt_yes", LSCH "        selectors: [{}]\n        workload_latency_based_tokens: yes\n" "  mode: aperture\n", 9, 40,
	  POL_OBJ, LP "workload_latency_based_tokens",
	  "expected true or false, got 'yes' (YAML 1.2 booleans are only true and false)" },
	{ "bad_pol_signal_no_path", POLSPEC "  signal: {type: external}\n", 9, 11, POL_OBJ,
	  "spec.signal.external_path", "type external needs external_path (a file the application writes its latency in ms to) or external_socket" },
	{ "bad_pol_signal_path_and_socket", POLSPEC "  signal: {type: external, external_path: /a, external_socket: /b}\n", 9, 47,
	  POL_OBJ, "spec.signal.external_socket", "give external_path or external_socket, not both" },
	{ "bad_pol_signal_socket_relative", POLSPEC "  signal: {type: external, external_socket: run/x.sock}\n", 9, 45,
	  POL_OBJ, "spec.signal.external_socket", "must be an absolute path, got 'run/x.sock'" },
	{ "bad_pol_signal_socket_long", POLSPEC "  signal: {type: external, external_socket: /aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa}\n", 9, 45,
	  POL_OBJ, "spec.signal.external_socket", "too long (117 bytes); at most 107" },
	{ "bad_pol_signal_socket_with_srtt", POLSPEC "  signal: {type: srtt, external_socket: /x}\n", 9, 24, POL_OBJ,
	  "spec.signal.external_socket", "only allowed when type is external (type is srtt)" },
	{ "bad_pol_signal_path_with_duration", POLSPEC "  signal: {external_path: /x}\n", 9, 12, POL_OBJ,
	  "spec.signal.external_path", "only allowed when type is external (type is duration)" },
	{ "bad_pol_signal_path_relative", POLSPEC "  signal: {type: external, external_path: x}\n", 9, 43,
	  POL_OBJ, "spec.signal.external_path", "must be an absolute path, got 'x'" },
	{ "bad_pol_signal_type", POLSPEC "  signal: {type: rtt}\n", 9, 18, POL_OBJ, "spec.signal.type",
	  "invalid value 'rtt'; did you mean 'srtt'? (allowed: duration, srtt, external)" },
	{ "bad_pol_signal_window", POLSPEC "  signal: {window: 0s}\n" "  mode: aperture\n", 9, 20, POL_OBJ, "spec.signal.window",
	  "must be between 1ms and 24h, got 0s" },
	{ "bad_pol_period", POLSPEC "  control_period: 0s\n" "  mode: aperture\n", 9, 19, POL_OBJ, "spec.control_period",
	  "must be between 1ms and 1h, got 0s" },
	{ "bad_pol_tolerance", POLSPEC "  latency_baseliner: {latency_tolerance_multiplier: 0}\n", 9, 53, POL_OBJ,
	  "spec.latency_baseliner.latency_tolerance_multiplier", "must be greater than 0, got 0" },
	{ "bad_pol_baseliner_unknown", POLSPEC "  latency_baseliner: {latency_tolerance: 1.1}\n", 9, 23, POL_OBJ,
	  "spec.latency_baseliner.latency_tolerance", "unknown field 'latency_tolerance'" },
	{ "bad_pol_name", POLN("P") "  load_scheduling_core: {aimd_load_scheduler: {load_scheduler: {selectors: [{}]}}}\n", 3, 18, "AverageLatencySchedulingPolicy/P",
	  "metadata.name", "invalid name 'P'" },

};

/* The default a workload's queue_timeout is said to have (sluicectl
 * schema, sluice.yaml(5)) is the one its connections get. */
static void schema_queue_timeout(const struct sl_schema_field *f, void *arg)
{
	if (!strcmp(f->name, "queue_timeout"))
		snprintf(arg, 96, "%s", f->dflt);
}

static void test_queue_timeout_default_said_as_used(void **state)
{
	struct sl_config *cfg = load_ok(POLICY);
	char said[96] = "";
	char used[64];

	(void)state;
	assert_int_equal(sl_schema_walk(schema_queue_timeout, said), 0);
	snprintf(used, sizeof(used), "%s ", cd_dur(sl_workload_wait_limit_ns(&cfg->policies[0].default_params)).s);
	assert_true(!strncmp(said, used, strlen(used)));
	sl_config_free(cfg);
}

static void test_policy_defaults(void **state)
{
	struct sl_config *cfg = load_ok(POLICY);
	const struct sl_policy_cfg *p;

	(void)state;
	assert_int_equal(cfg->n_policies, 1);
	p = &cfg->policies[0];
	assert_string_equal(p->name, "p");
	/* the ASM / blueprint defaults */
	assert_true(p->slope == -1);
	assert_true(p->min_gradient == 0.1);
	assert_true(p->max_gradient == 1);
	assert_true(p->load_multiplier_linear_increment == 0.025);
	assert_true(p->max_load_multiplier == 2);
	assert_true(p->min_load_multiplier == 0);
	assert_int_equal(p->n_selectors, 1);
	assert_string_equal(p->selectors[0].control_point, "ingress");
	assert_string_equal(p->selectors[0].service, "any");
	assert_string_equal(p->selectors[0].agent_group, "default");
	assert_int_equal(p->selectors[0].matcher.n_reqs, 0);
	assert_null(p->selectors[0].matcher.expr);
	assert_int_equal(p->n_workloads, 0);
	assert_null(p->workloads);
	assert_true(p->default_params.priority == 1);
	assert_false(p->default_params.tokens_set);
	assert_false(p->default_params.queue_timeout_set);
	assert_true(p->default_params.queue_timeout_ns == SL_QUEUE_TIMEOUT_UNSET);
	assert_false(p->workload_latency_based_tokens);
	assert_int_equal(p->signal, SL_SIGNAL_DURATION);
	assert_null(p->external_path);
	assert_int_equal(p->period_ns, 10 * SEC);
	assert_int_equal(p->signal_window_ns, 30 * SEC);
	assert_int_equal(p->baseline_window_ns, 1800 * SEC);
	assert_int_equal(p->baseline_period_ns, 30 * SEC);
	assert_true(p->tolerance == 1.25);
	assert_string_equal(p->file, "t.yaml");
	assert_int_equal(p->line, 1);
	sl_config_free(cfg);

	/* a workload's parameters default on their own */
	cfg = load_ok(SCHED "          workloads:\n          - label_matcher: {}\n");
	p = &cfg->policies[0];
	assert_int_equal(p->n_workloads, 1);
	assert_null(p->workloads[0].name);
	assert_true(p->workloads[0].params.priority == 1);
	assert_false(p->workloads[0].params.tokens_set);
	assert_true(p->workloads[0].params.queue_timeout_ns == SL_QUEUE_TIMEOUT_UNSET);
	sl_config_free(cfg);
}

static void test_policy_good_values(void **state)
{
	struct sl_config *cfg;
	const struct sl_policy_cfg *p;
	const struct sl_label_matcher *m;

	(void)state;
	/* positive slope (a signal that falls under load), equal gradients */
	cfg = load_ok(AIMD "      gradient: {slope: 0.5, min_gradient: 1, max_gradient: 1}\n"
		      "      min_load_multiplier: 1.99\n" AIMD_END
		      "  signal: {type: srtt, window: 1ms}\n  control_period: 1ms\n"
		      "  latency_baseliner: {latency_tolerance_multiplier: 1, long_term_query_interval: 1ms}\n");
	p = &cfg->policies[0];
	assert_true(p->slope == 0.5);
	assert_true(p->min_gradient == 1 && p->max_gradient == 1);
	assert_true(p->min_load_multiplier == 1.99);
	assert_int_equal(p->signal, SL_SIGNAL_SRTT);
	assert_int_equal(p->signal_window_ns, 1 * MS);
	assert_int_equal(p->period_ns, 1 * MS);
	assert_int_equal(p->baseline_window_ns, 1 * MS);
	sl_config_free(cfg);

	/* the matcher dialect: match_expressions is match_list's old name */
	cfg = load_ok(SEL "          label_matcher:\n"
		      "            match_expressions: [{key: src.ip, operator: In, values: [10.0.0.1]}]\n");
	m = &cfg->policies[0].selectors[0].matcher;
	assert_int_equal(m->n_reqs, 1);
	assert_string_equal(m->reqs[0].values[0], "10.0.0.1");
	sl_config_free(cfg);
	/* ... used only when match_list is absent */
	expect_one(SEL "          label_matcher:\n"
		   "            match_list: [{key: src.ip, operator: Exists}]\n"
		   "            match_expressions: [{key: dst.ip, operator: Exists}]\n",
		   SL_SEV_WARNING, 12, 13, POL_OBJ, SP "label_matcher.match_expressions",
		   "ignored: match_list is present (match_expressions is its deprecated alias, used only without it)");
	cfg = load_warned(SEL "          label_matcher:\n"
			  "            match_list: [{key: src.ip, operator: Exists}]\n"
			  "            match_expressions: [{key: dst.ip, operator: Exists}]\n", 1);
	m = &cfg->policies[0].selectors[0].matcher;
	assert_int_equal(m->n_reqs, 1);
	assert_string_equal(m->reqs[0].key, "src.ip");
	sl_config_free(cfg);
	/* Aperture's validator spells DoesNotExists; read it */
	cfg = load_warned(SEL "          label_matcher: {match_list: [{key: iface, operator: DoesNotExists}]}\n", 1);
	assert_int_equal(cfg->policies[0].selectors[0].matcher.reqs[0].op, SL_LM_DOES_NOT_EXIST);
	sl_config_free(cfg);
	/* the ASM documentation's example regex (a lookahead: PCRE2, not RE2) */
	cfg = load_ok(SEL "          label_matcher:\n            expression:\n"
		      "              label_matches: {label: src.ip, regex: \"^(?!.*Chrome).*Safari\"}\n");
	m = &cfg->policies[0].selectors[0].matcher;
	assert_non_null(m->expr);
	assert_int_equal(m->expr->kind, SL_LE_MATCHES);
	assert_string_equal(m->expr->label, "src.ip");
	assert_non_null(m->expr->re);
	sl_config_free(cfg);
	/* empty all/any lists are allowed (true / false) */
	cfg = load_ok(SEL "          label_matcher: {expression: {any: {}}}\n"
		      "        - label_matcher: {expression: {all: {of: []}}}\n");
	assert_int_equal(cfg->policies[0].selectors[0].matcher.expr->kind, SL_LE_ANY);
	assert_int_equal(cfg->policies[0].selectors[0].matcher.expr->n_children, 0);
	assert_int_equal(cfg->policies[0].selectors[1].matcher.expr->kind, SL_LE_ALL);
	sl_config_free(cfg);
	/* workload_latency_based_tokens on the scheduler is accepted too */
	cfg = load_ok(SCHED "          workload_latency_based_tokens: true\n  mode: aperture\n");
	assert_true(cfg->policies[0].workload_latency_based_tokens);
	sl_config_free(cfg);
	/* an empty matcher matches all: workloads after it are dead */
	expect_one(SCHED "          workloads:\n          - {name: a, label_matcher: {}}\n"
		   "          - {name: b, label_matcher: {match_labels: {dst.port: \"1\"}}}\n",
		   SL_SEV_WARNING, 11, 38, POL_OBJ, SCP "workloads[0].label_matcher",
		   "an empty label_matcher matches every connection, so the workloads after this one are never used");
	/* a queue_timeout longer than a connection may wait in a policy's
	 * scheduler: said with the bound, at the bound */
	expect_one(SCHED "          default_workload_parameters: {queue_timeout: 20s}\n", SL_SEV_WARNING, 10, 56,
		   POL_OBJ, SCP "default_workload_parameters.queue_timeout",
		   "20s is longer than a connection may wait in a policy's scheduler (15s, when most clients' connect has given up); it waits 15s at most");
	/* at or beyond 3 s, a common connect timeout: said, at the field */
	expect_one(SCHED "          default_workload_parameters: {queue_timeout: 3s}\n", SL_SEV_WARNING, 10, 56,
		   POL_OBJ, SCP "default_workload_parameters.queue_timeout",
		   "3s is at or beyond 3s, a common client connect timeout");
	sl_config_free(load_ok(SCHED "          default_workload_parameters: {queue_timeout: 2900ms}\n"));
	/* latency-based tokens over configured ones: Aperture's code, not
	 * ASM's documentation, and validate says so */
	expect_one(SCHED "          workload_latency_based_tokens: true\n"
		   "          workloads:\n          - {name: gold, label_matcher: {}, parameters: {tokens: 5}}\n"
		   "  mode: aperture\n",
		   SL_SEV_WARNING, 10, 42, POL_OBJ, SCP "workload_latency_based_tokens",
		   "the estimate replaces the tokens set for gold once it has one (as Aperture's scheduler does; ASM's documentation says configured tokens win)");
	/* advice on windows and tolerance */
	expect_one(POLICY "  latency_baseliner: {long_term_query_interval: 10s}\n  mode: aperture\n",
		   SL_SEV_WARNING, 9, 49,
		   POL_OBJ, "spec.latency_baseliner.long_term_query_interval",
		   "the baseline window (10s) is shorter than the signal window (30s)");
	expect_one(POLICY "  latency_baseliner: {latency_tolerance_multiplier: 0.9}\n  mode: aperture\n",
		   SL_SEV_WARNING, 9, 53,
		   POL_OBJ, "spec.latency_baseliner.latency_tolerance_multiplier",
		   "0.9 is below 1: latency counts as overloaded whenever it is at its own long-term mean");
}

/* ASM's CRD allows 0 for the increment and the maximum multiplier:
 * Aperture fills a zero field with its default. */
/* A pasted ASM CRD in mode sluice (the default): each Aperture field that
 * mode does not read is named at its line, with the way to run it (issue
 * 27); the advice that only applies to Aperture's mode is not given. */
static void test_sluice_mode_names_ignored_fields(void **state)
{
	static const char crd[] = AIMD
		"      gradient: {slope: -1}\n"                       /* 7 */
		"      load_multiplier_linear_increment: 0.05\n"      /* 8 */
		"      max_load_multiplier: 2\n"                      /* 9 */
		"      load_scheduler:\n"                             /* 10 */
		"        selectors: [{}]\n"                           /* 11 */
		"        workload_latency_based_tokens: true\n"       /* 12 */
		"        scheduler:\n"                                /* 13 */
		"          workloads:\n"                              /* 14 */
		"          - {name: gold, label_matcher: {}, parameters: {priority: 4, tokens: 5}}\n" /* 15 */
		"  signal: {type: duration, window: 5s}\n"            /* 16 */
		"  latency_baseliner: {latency_tolerance_multiplier: 20, long_term_query_interval: 1s}\n" /* 17 */
		"  control_period: 1s\n";                             /* 18 */
	/* In file order (diagnostics are sorted); the tolerance's (17:53)
	 * comes between, checked apart. */
	static const struct { unsigned line, col; const char *path; } want[] = {
		{ 7, 7, "spec.load_scheduling_core.aimd_load_scheduler.gradient" },
		{ 8, 7, "spec.load_scheduling_core.aimd_load_scheduler.load_multiplier_linear_increment" },
		{ 9, 7, "spec.load_scheduling_core.aimd_load_scheduler.max_load_multiplier" },
		{ 12, 9, "spec.load_scheduling_core.aimd_load_scheduler.load_scheduler.workload_latency_based_tokens" },
		{ 15, 71, "spec.load_scheduling_core.aimd_load_scheduler.load_scheduler.scheduler.workloads[0].parameters.tokens" },
		{ 16, 28, "spec.signal.window" },
		{ 17, 57, "spec.latency_baseliner.long_term_query_interval" },
		{ 18, 3, "spec.control_period" },
	};
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;
	size_t n = sizeof(want) / sizeof(want[0]);

	(void)state;
	assert_int_equal(load(crd, &cfg, &d), 0); /* warnings: it still loads */
	if (d.count != n + 1)
		sl_diags_print(&d, stderr);
	assert_int_equal(d.count, n + 1);
	for (size_t i = 0, k = 0; i < n; i++, k++) {
		if (k == 6)
			k++; /* the tolerance's */
		check_diag(&d.items[k], SL_SEV_WARNING, want[i].line, want[i].col, POL_OBJ, want[i].path,
			   "ignored in mode sluice (the default), which runs a gradient on a limit in flight");
	}
	assert_non_null(strstr(d.items[0].message, "set spec.mode: aperture"));
	/* The tolerance is read, clamped: said with the value it takes. */
	check_diag(&d.items[6], SL_SEV_WARNING, 17, 53, POL_OBJ,
		   "spec.latency_baseliner.latency_tolerance_multiplier",
		   "mode sluice (the default) uses it within [1, 10]: 20 is taken as 10");
	for (size_t i = 0; i < d.count; i++) /* Aperture-only advice is not given */
		assert_null(strstr(d.items[i].message, "the estimate replaces"));
	assert_int_equal(cfg->policies[0].mode, SL_POLICY_SLUICE);
	sl_config_free(cfg);
	sl_diags_free(&d);
	/* An explicit mode: sluice says so without "the default". */
	expect_one(POLICY "  control_period: 1s\n  mode: sluice\n", SL_SEV_WARNING, 9, 3, POL_OBJ,
		   "spec.control_period", "ignored in mode sluice, which runs");
	/* With mode: aperture the same fields are read: nothing to say. */
	cfg = load_ok(AIMD "      gradient: {slope: -1}\n" AIMD_END "  control_period: 1s\n  mode: aperture\n");
	assert_int_equal(cfg->policies[0].mode, SL_POLICY_APERTURE);
	sl_config_free(cfg);
	/* A signal other than duration runs Aperture's mode: nothing either. */
	cfg = load_ok(AIMD "      gradient: {slope: -1}\n" AIMD_END "  signal: {type: srtt}\n");
	assert_int_equal(cfg->policies[0].mode, SL_POLICY_APERTURE);
	sl_config_free(cfg);
}

static void test_zero_means_default(void **state)
{
	struct sl_config *cfg = load_ok(AIMD "      load_multiplier_linear_increment: 0\n"
					"      max_load_multiplier: 0\n" AIMD_END "  mode: aperture\n");

	(void)state;
	assert_true(cfg->policies[0].load_multiplier_linear_increment == 0.025);
	assert_true(cfg->policies[0].max_load_multiplier == 2);
	sl_config_free(cfg);
}

static void test_expression_depth_and_aliases(void **state)
{
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	/* a recursive alias: the decoder stops at its depth limit */
	assert_int_equal(load(SEL "          label_matcher: {expression: &e {not: *e}}\n", &cfg, &d), -EINVAL);
	assert_null(cfg);
	assert_true(d.n_errors >= 1);
	assert_non_null(strstr(d.items[0].message, "expressions nest deeper than 32 levels"));
	sl_diags_free(&d);

	/* rules x CIDRs multiplied through aliases */
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	fprintf(f, API "kind: ConnectionLabels\nmetadata: {name: bomb}\nspec:\n  rules:\n"
		   "  - &r {sources: &s [");
	for (int k = 0; k < 2000; k++)
		fprintf(f, "%s10.0.0.0/8", k ? ", " : "");
	fprintf(f, "], labels: {a: b}}\n");
	for (int k = 0; k < 1100; k++)
		fprintf(f, "  - *r\n");
	fclose(f);
	assert_int_equal(sl_config_load_buffer("t.yaml", buf, len, &cfg, &d), -EINVAL);
	assert_int_equal(d.n_errors, 1);
	assert_non_null(strstr(d.items[0].message, "expands to more than 1048576 list items"));
	sl_diags_free(&d);
	free(buf);
}

/* ---- warnings ------------------------------------------------------------------ */

/* A reload keeps each kept policy at its index (its data-path gate):
 * added ones take the free indices, removed ones free theirs. */
#define PORT_POL(name, port) POLN(name) "  load_scheduling_core:\n    aimd_load_scheduler:\n" \
	"      load_scheduler:\n        selectors: [{label_matcher: {match_labels: {dst.port: \"" port "\"}}}]\n"

static void assert_order(const struct sl_config *cfg, const char *const *want, size_t n)
{
	assert_int_equal(cfg->n_policies, n);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(cfg->policies[i].name, want[i]);
}

static void test_keep_policy_indices(void **state)
{
	static const char in_use[][SL_LEVEL_NAME_SIZE] = {"a", "b", "c"};
	struct sl_config *cfg;

	(void)state;
	/* A new policy first in the file, the old ones reordered: each old one
	 * where it was, the new one at the free index. */
	cfg = load_ok(PORT_POL("n", "1") "---\n" PORT_POL("c", "2") "---\n" PORT_POL("a", "3") "---\n"
		      PORT_POL("b", "4"));
	assert_int_equal(sl_config_keep_policy_indices(cfg, in_use, 3), 0);
	assert_order(cfg, (const char *const[]){"a", "b", "c", "n"}, 4);
	/* The selectors moved with their policies. */
	assert_string_equal(cfg->policies[3].selectors[0].matcher.reqs[0].values[0], "1");
	assert_string_equal(cfg->policies[0].selectors[0].matcher.reqs[0].values[0], "3");
	sl_config_free(cfg);
	/* b removed: a and c keep theirs... c's index 2 is out of range with
	 * two policies, so c moves to the index b left. */
	cfg = load_ok(PORT_POL("c", "2") "---\n" PORT_POL("a", "3"));
	assert_int_equal(sl_config_keep_policy_indices(cfg, in_use, 3), 0);
	assert_order(cfg, (const char *const[]){"a", "c"}, 2);
	sl_config_free(cfg);
	/* a removed, one added: b and c stay, the new one takes a's. */
	cfg = load_ok(PORT_POL("b", "4") "---\n" PORT_POL("c", "2") "---\n" PORT_POL("z", "9"));
	assert_int_equal(sl_config_keep_policy_indices(cfg, in_use, 3), 0);
	assert_order(cfg, (const char *const[]){"z", "b", "c"}, 3);
	/* Nothing in use (a start): file order. */
	assert_int_equal(sl_config_keep_policy_indices(cfg, in_use, 0), 0);
	assert_order(cfg, (const char *const[]){"z", "b", "c"}, 3);
	sl_config_free(cfg);
}

int main(void)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(test_keep_policy_indices),
		cmocka_unit_test(test_policy_defaults),
		cmocka_unit_test(test_queue_timeout_default_said_as_used),
		cmocka_unit_test(test_policy_good_values),
		cmocka_unit_test(test_expression_depth_and_aliases),
		cmocka_unit_test(test_zero_means_default),
		cmocka_unit_test(test_sluice_mode_names_ignored_fields),
	};

	return run_config_suite("config_policy", fixed, N_OF(fixed), bad_cases, N_OF(bad_cases));
}
