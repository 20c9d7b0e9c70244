// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Configuration loader tests: kind PriorityLevelConfiguration, the
 * mandatory levels, queuing and the shuffle-sharding advice.
 *
 * Every rule has a good and a bad example; the bad ones are rows of
 * bad_cases[] (one test each).  Run from the repository root, or point
 * SLUICE_TEST_DATA at tests/unit/configs.
 */
#include "config_helpers.h"

static const struct bad_case bad_cases[] = {
	/* kind: PriorityLevelConfiguration: metadata */
	{ "bad_level_name_too_long",
	  PLN("a23456789012345678901234567890123456789012345678") "  type: Exempt\n", 3, 18,
	  "PriorityLevelConfiguration/a23456789012345678901234567890123456789012345678",
	  "metadata.name", "is 48 characters long; at most 47 allowed" },
	{ "bad_level_name_upper", PLN("Web_Tier") "  type: Exempt\n", 3, 18,
	  "PriorityLevelConfiguration/Web_Tier", "metadata.name",
	  "invalid name 'Web_Tier': use lowercase letters, digits, '-' and '.', starting and ending with a letter or digit; did you mean 'web-tier'?" },
	{ "bad_level_name_dash", PLN("-web") "  type: Exempt\n", 3, 18,
	  "PriorityLevelConfiguration/-web", "metadata.name", "invalid name '-web'" },
	{ "bad_level_name_empty_label", PLN("a..b") "  type: Exempt\n", 3, 18,
	  "PriorityLevelConfiguration/a..b", "metadata.name", "invalid name 'a..b'" },
	{ "bad_level_missing_spec", API "kind: PriorityLevelConfiguration\nmetadata: {name: web}\n", 1, 1,
	  PL_OBJ, "spec", "missing required field 'spec'" },
	{ "bad_level_spec_list", API "kind: PriorityLevelConfiguration\nmetadata: {name: web}\nspec: [Limited]\n",
	  4, 7, PL_OBJ, "spec", "expected a mapping, got a list" },

	/* spec.type, exempt, limited */
	{ "bad_level_missing_type", PL "  limited: {}\n", 5, 3, PL_OBJ, "spec.type",
	  "missing required field 'type'" },
	{ "bad_level_null_type", PL "  type:\n", 5, 8, PL_OBJ, "spec.type",
	  "expected one of Exempt, Limited, got null" },
	{ "bad_level_type", PL "  type: Limted\n", 5, 9, PL_OBJ, "spec.type",
	  "invalid value 'Limted'; did you mean 'Limited'? (allowed: Exempt, Limited)" },
	{ "bad_level_type_case", PL "  type: limited\n", 5, 9, PL_OBJ, "spec.type",
	  "did you mean 'Limited'?" },
	{ "bad_level_exempt_with_limited", PL "  type: Limited\n  exempt: {lendablePercent: 5}\n  limited: {limitResponse: {type: Reject}}\n", 6, 3,
	  PL_OBJ, "spec.exempt", "only allowed when type is Exempt (type is Limited)" },
	{ "bad_level_limited_with_exempt", PL "  type: Exempt\n  limited:\n    nominalConcurrencyShares: 5\n",
	  6, 3, PL_OBJ, "spec.limited", "only allowed when type is Limited (type is Exempt)" },
	{ "bad_level_limited_not_map", PL "  type: Limited\n  limited: 30\n", 6, 12, PL_OBJ,
	  "spec.limited", "expected a mapping, got integer 30" },
	{ "bad_exempt_shares", PL "  type: Exempt\n  exempt: {nominalConcurrencyShares: -1}\n", 6, 38,
	  PL_OBJ, "spec.exempt.nominalConcurrencyShares", "must be at least 0, got -1" },
	{ "bad_exempt_lendable", PL "  type: Exempt\n  exempt: {lendablePercent: 101}\n", 6, 29,
	  PL_OBJ, "spec.exempt.lendablePercent", "must be between 0 and 100, got 101" },
	{ "bad_exempt_unknown", PL "  type: Exempt\n  exempt: {borrowingLimitPercent: 5}\n", 6, 12,
	  PL_OBJ, "spec.exempt.borrowingLimitPercent", "unknown field 'borrowingLimitPercent'" },
	{ "bad_limited_shares", PL "  type: Limited\n  limited:\n    nominalConcurrencyShares: -1\n    limitResponse: {type: Reject}\n", 7, 31,
	  PL_OBJ, "spec.limited.nominalConcurrencyShares", "must be at least 0, got -1" },
	{ "bad_limited_shares_type", PL "  type: Limited\n  limited:\n    nominalConcurrencyShares: lots\n    limitResponse: {type: Reject}\n", 7, 31,
	  PL_OBJ, "spec.limited.nominalConcurrencyShares", "expected an integer, got string 'lots'" },
	{ "bad_limited_lendable_high", PL "  type: Limited\n  limited:\n    lendablePercent: 101\n    limitResponse: {type: Reject}\n", 7, 22,
	  PL_OBJ, "spec.limited.lendablePercent", "must be between 0 and 100, got 101" },
	{ "bad_limited_lendable_low", PL "  type: Limited\n  limited:\n    lendablePercent: -1\n    limitResponse: {type: Reject}\n", 7, 22,
	  PL_OBJ, "spec.limited.lendablePercent", "must be between 0 and 100, got -1" },
	{ "bad_limited_borrowing", PL "  type: Limited\n  limited:\n    borrowingLimitPercent: -5\n    limitResponse: {type: Reject}\n", 7, 28,
	  PL_OBJ, "spec.limited.borrowingLimitPercent", "must be at least 0, got -5" },

	/* Kubernetes refuses a Limited level without limited or without its
	 * limitResponse; sluice used to make it Reject silently (issue 27). */
	{ "bad_level_limited_missing", PL "  type: Limited\n", 5, 9, PL_OBJ, "spec.limited",
	  "required when type is Limited" },
	{ "bad_level_limited_null", PL "  type: Limited\n  limited:\n", 5, 9, PL_OBJ, "spec.limited",
	  "required when type is Limited" },
	{ "bad_response_missing", PL "  type: Limited\n  limited: {nominalConcurrencyShares: 5}\n", 6, 12,
	  PL_OBJ, "spec.limited.limitResponse", "required: a Limited level says what happens over its limit" },
	{ "bad_response_null", PL "  type: Limited\n  limited: {limitResponse: ~}\n", 6, 13,
	  PL_OBJ, "spec.limited.limitResponse", "required: a Limited level says what happens over its limit" },

	/* limitResponse */
	{ "bad_response_missing_type", PL "  type: Limited\n  limited:\n    limitResponse:\n      queuing: {queues: 16}\n",
	  8, 7, PL_OBJ, "spec.limited.limitResponse.type", "missing required field 'type'" },
	{ "bad_response_type", PL "  type: Limited\n  limited:\n    limitResponse: {type: Queued}\n",
	  7, 27, PL_OBJ, "spec.limited.limitResponse.type",
	  "invalid value 'Queued'; did you mean 'Queue'? (allowed: Queue, Reject)" },
	{ "bad_response_queuing_with_reject",
	  PL "  type: Limited\n  limited:\n    limitResponse:\n      type: Reject\n      queuing: {queues: 8}\n",
	  9, 7, PL_OBJ, "spec.limited.limitResponse.queuing", "only allowed when type is Queue (type is Reject)" },
	{ "bad_response_unknown", PL "  type: Limited\n  limited:\n    limitResponse: {type: Queue, queueing: {}}\n",
	  7, 34, PL_OBJ, "spec.limited.limitResponse.queueing",
	  "unknown field 'queueing'; did you mean 'queuing'?" },

	/* queuing (Kubernetes shuffle-sharding rules) */
	{ "bad_queues_zero", QUEUE "        queues: 0\n", 10, 17, PL_OBJ, QPATH "queues",
	  "must be between 1 and 10000000, got 0; to turn queuing off, use limitResponse.type: Reject" },
	{ "bad_queues_deck", QUEUE "        queues: 67108865\n        handSize: 1\n", 10, 17, PL_OBJ,
	  QPATH "queues", "must be between 1 and 10000000, got 67108865" },
	/* Kubernetes' bound (10^7), which the QueueSet enforces too: past it a
	 * reload would fail after the data path flipped. */
	{ "bad_queues_k8s_bound", QUEUE "        queues: 10000001\n        handSize: 1\n", 10, 17, PL_OBJ,
	  QPATH "queues", "must be between 1 and 10000000, got 10000001" },
	{ "bad_hand_zero", QUEUE "        handSize: 0\n", 10, 19, PL_OBJ, QPATH "handSize",
	  "must be at least 1, got 0" },
	{ "bad_hand_above_queues", QUEUE "        queues: 4\n        handSize: 5\n", 11, 19, PL_OBJ,
	  QPATH "handSize", "must not exceed queues (4), got 5" },
	{ "bad_default_hand_above_queues", QUEUE "        queues: 4\n", 10, 17, PL_OBJ, QPATH "queues",
	  "4 queues are fewer than the default handSize 8; set handSize to at most 4" },
	{ "bad_entropy", QUEUE "        queues: 128\n        handSize: 9\n", 11, 19, PL_OBJ,
	  QPATH "handSize", "9 needs 63 bits of entropy with 128 queues; at most 60 allowed" },
	{ "bad_entropy_512_8", QUEUE "        queues: 512\n        handSize: 8\n", 11, 19, PL_OBJ,
	  QPATH "handSize", "8 needs 72 bits of entropy with 512 queues; at most 60 allowed" },
	{ "bad_entropy_default_hand", QUEUE "        queues: 1048576\n", 10, 17, PL_OBJ,
	  QPATH "queues", "1048576 queues need 160 bits of entropy with the default handSize 8; at most 60 allowed" },
	{ "bad_queue_length_zero", QUEUE "        queueLengthLimit: 0\n", 10, 27, PL_OBJ,
	  QPATH "queueLengthLimit", "must be at least 1, got 0" },
	{ "bad_queue_wait_bare", QUEUE "        queueWaitLimit: 15\n", 10, 25, PL_OBJ,
	  QPATH "queueWaitLimit", "duration 15 needs a unit, e.g. 15s" },
	{ "bad_queue_wait_zero", QUEUE "        queueWaitLimit: 0s\n", 10, 25, PL_OBJ,
	  QPATH "queueWaitLimit", "must be between 1ms and 1h, got 0s" },
	{ "bad_queuing_unknown_field", QUEUE "        queues: 64\n        handsize: 4\n", 11, 9, PL_OBJ,
	  QPATH "handsize", "unknown field 'handsize'; did you mean 'handSize'?" },

	/* fields that moved from PriorityLevelConfiguration to FlowSchema */
	{ "bad_level_ports_moved", PL "  type: Limited\n  ports: [80]\n  limited: {limitResponse: {type: Reject}}\n", 6, 3, PL_OBJ, "spec.ports",
	  "priority levels no longer own ports: FlowSchemas classify connections now; add a FlowSchema whose priorityLevelConfiguration.name is 'web'" },
	{ "bad_level_seats_moved", PL "  type: Limited\n  seatsPerConnection: 2\n  limited: {limitResponse: {type: Reject}}\n", 6, 3, PL_OBJ,
	  "spec.seatsPerConnection", "seatsPerConnection is set per FlowSchema now (FlowSchema spec.seatsPerConnection)" },

	/* mandatory levels: only exempt's shares and lendablePercent may change */
	{ "bad_exempt_level_type", PLN("exempt") "  type: Limited\n", 5, 9,
	  "PriorityLevelConfiguration/exempt", "spec.type",
	  "the mandatory level exempt has type Exempt; a file may change only its exempt.nominalConcurrencyShares and exempt.lendablePercent (kube-apiserver restores it)" },
	{ "bad_catch_all_shares", PLN("catch-all") "  type: Limited\n  limited: {nominalConcurrencyShares: 10}\n",
	  6, 39, "PriorityLevelConfiguration/catch-all", "spec.limited.nominalConcurrencyShares",
	  "the mandatory level catch-all has nominalConcurrencyShares 5 and a file may not change it (kube-apiserver restores it), got 10" },
	{ "bad_catch_all_default_shares", PLN("catch-all") "  type: Limited\n", 5, 3,
	  "PriorityLevelConfiguration/catch-all", "spec.limited.nominalConcurrencyShares",
	  "has nominalConcurrencyShares 5 and a file may not change it (kube-apiserver restores it), got the default 30" },
	{ "bad_catch_all_queue", PLN("catch-all") "  type: Limited\n  limited:\n    nominalConcurrencyShares: 5\n"
	  "    limitResponse: {type: Queue}\n", 8, 27, "PriorityLevelConfiguration/catch-all",
	  "spec.limited.limitResponse.type", "the mandatory level catch-all has limitResponse.type Reject and a file may not change it (kube-apiserver restores it), got Queue" },
	{ "bad_catch_all_type", PLN("catch-all") "  type: Exempt\n", 5, 9, "PriorityLevelConfiguration/catch-all",
	  "spec.type", "the mandatory level catch-all has type Limited and a file may not change it (kube-apiserver restores it), got Exempt" },
	{ "bad_catch_all_borrowing", PLN("catch-all") "  type: Limited\n  limited:\n    nominalConcurrencyShares: 5\n"
	  "    borrowingLimitPercent: 10\n", 8, 28, "PriorityLevelConfiguration/catch-all",
	  "spec.limited.borrowingLimitPercent", "has borrowingLimitPercent unset and a file may not change it (kube-apiserver restores it), got 10" },

};

static void test_level_defaults(void **state)
{
	struct sl_config *cfg;
	const struct sl_level_cfg *l;

	(void)state;
	/* Limited with only its limitResponse: shares 30 */
	cfg = load_ok(PL "  type: Limited\n  limited: {limitResponse: {type: Reject}}\n");
	l = &cfg->levels[2];
	assert_string_equal(l->name, "web");
	assert_int_equal(l->type, SL_LEVEL_LIMITED);
	assert_int_equal(l->shares, 30);
	assert_int_equal(l->lendable_percent, 0);
	assert_int_equal(l->borrowing_limit_percent, -1);
	assert_int_equal(l->limit_response, SL_RESP_REJECT);
	assert_int_equal(l->queues, 0);
	assert_int_equal(l->hand_size, 0);
	assert_int_equal(l->queue_length_limit, 0);
	assert_false(l->mandatory);
	assert_false(l->builtin);
	sl_config_free(cfg);

	/* Exempt: shares 0 */
	cfg = load_ok(PL "  type: Exempt\n");
	l = &cfg->levels[2];
	assert_int_equal(l->type, SL_LEVEL_EXEMPT);
	assert_int_equal(l->shares, 0);
	assert_int_equal(l->lendable_percent, 0);
	assert_int_equal(l->borrowing_limit_percent, -1);
	sl_config_free(cfg);

	/* Queue without a queuing block: Kubernetes v1 defaults */
	cfg = load_ok(PL "  type: Limited\n  limited: {limitResponse: {type: Queue}}\n");
	l = &cfg->levels[2];
	assert_int_equal(l->limit_response, SL_RESP_QUEUE);
	assert_int_equal(l->queues, 64);
	assert_int_equal(l->hand_size, 8);
	assert_int_equal(l->queue_length_limit, 50);
	/* sluice's own wait bounds, for clients that give up after 3 s */
	assert_int_equal(l->queue_wait_limit_ns, 2 * SEC);
	assert_int_equal(l->delay_target_ns, 100 * SEC / 1000);
	assert_int_equal(l->delay_interval_ns, 1 * SEC);
	sl_config_free(cfg);

	/* partial queuing block: the rest defaults */
	cfg = load_ok(QUEUE "        queues: 32\n");
	l = &cfg->levels[2];
	assert_int_equal(l->queues, 32);
	assert_int_equal(l->hand_size, 8);
	assert_int_equal(l->queue_length_limit, 50);
	sl_config_free(cfg);
}

static void test_level_good_values(void **state)
{
	struct sl_config *cfg;
	const struct sl_level_cfg *l;

	(void)state;
	cfg = load_ok(PL "  type: Exempt\n  exempt: {nominalConcurrencyShares: 0, lendablePercent: 100}\n");
	l = &cfg->levels[2];
	assert_int_equal(l->lendable_percent, 100);
	sl_config_free(cfg);

	cfg = load_ok(PL "  type: Limited\n  limited:\n    nominalConcurrencyShares: 0\n"
		      "    lendablePercent: 0\n    borrowingLimitPercent: 0\n"
		      "    limitResponse: {type: Reject}\n");
	l = &cfg->levels[2];
	assert_int_equal(l->shares, 0);
	assert_int_equal(l->borrowing_limit_percent, 0);
	sl_config_free(cfg);

	/* names: dots, dashes, digits, 47 characters */
	cfg = load_ok(PLN("a.b-c.0") "  type: Exempt\n---\n"
		      PLN("a2345678901234567890123456789012345678901234567") "  type: Exempt\n");
	assert_string_equal(cfg->levels[2].name, "a.b-c.0");
	assert_int_equal(strlen(cfg->levels[3].name), 47);
	sl_config_free(cfg);

	/* labels and annotations are accepted (and ignored); anchors work */
	cfg = load_ok(API "kind: PriorityLevelConfiguration\nmetadata:\n  name: web\n"
		      "  labels: &l {team: net}\n  annotations: *l\nspec: {type: Exempt}\n");
	sl_config_free(cfg);
}

static void test_mandatory_levels(void **state)
{
	struct sl_config *cfg;
	const struct sl_level_cfg *l;

	(void)state;
	/* exempt: nominalConcurrencyShares and lendablePercent may change */
	cfg = load_ok(PLN("web") "  type: Limited\n  limited: {limitResponse: {type: Reject}}\n---\n"
		      PLN("exempt") "  type: Exempt\n  exempt: {nominalConcurrencyShares: 7, lendablePercent: 40}\n");
	check_mandatory(cfg);
	assert_int_equal(cfg->n_levels, 3);
	l = &cfg->levels[0];
	assert_int_equal(l->shares, 7);
	assert_int_equal(l->lendable_percent, 40);
	assert_false(l->builtin);
	assert_string_equal(l->file, "t.yaml");
	assert_int_equal(l->line, 8);
	assert_string_equal(cfg->levels[2].name, "web"); /* file levels after the mandatory ones */
	sl_config_free(cfg);

	/* restating exempt without changes */
	cfg = load_ok(PLN("exempt") "  type: Exempt\n");
	assert_int_equal(cfg->n_levels, 2);
	assert_int_equal(cfg->levels[0].shares, 0);
	sl_config_free(cfg);

	/* exempt: nothing else may change (a limited block is the only other spot) */
	expect_one(PLN("exempt") "  type: Exempt\n  limited: {nominalConcurrencyShares: 1}\n", SL_SEV_ERROR,
		   6, 3, "PriorityLevelConfiguration/exempt", "spec.limited",
		   "only allowed when type is Limited (type is Exempt)");

	/* catch-all restated exactly as built in: fine */
	cfg = load_ok(PLN("catch-all") "  type: Limited\n  limited:\n    nominalConcurrencyShares: 5\n"
		      "    lendablePercent: 0\n    limitResponse: {type: Reject}\n");
	check_mandatory(cfg);
	assert_int_equal(cfg->n_levels, 2);
	assert_false(cfg->levels[1].builtin);
	assert_int_equal(cfg->levels[1].line, 1);
	sl_config_free(cfg);
}

static void test_queuing_rules_good(void **state)
{
	/* boundary cases of the entropy rule (shufflesharding.go) */
	static const struct { const char *yaml; unsigned q, h, warnings; } ok[] = {
		{ QUEUE "        queues: 1024\n        handSize: 6\n", 1024, 6, 0 },  /* 60 bits */
		{ QUEUE "        queues: 64\n        handSize: 10\n", 64, 10, 0 },   /* 60 bits */
		{ QUEUE "        queues: 1000\n        handSize: 6\n", 1000, 6, 0 },  /* ceil(59.79) */
		{ QUEUE "        queues: 1\n        handSize: 1\n", 1, 1, 0 },      /* one FIFO */
		{ QUEUE "        queues: 8\n        handSize: 8\n", 8, 8, 1 },      /* hand = deck: no isolation */
		{ QUEUE "        queues: 10000000\n        handSize: 2\n", 10000000, 2, 0 },
		{ QUEUE "        queueLengthLimit: 1\n        queueWaitLimit: 1ms\n"
		  "        queueDelayTarget: 1ms\n        queueDelayInterval: 1ms\n", 64, 8, 1 }, /* the interval never acts */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct sl_config *cfg = load_warned(ok[i].yaml, ok[i].warnings);

		assert_int_equal(cfg->levels[2].queues, ok[i].q);
		assert_int_equal(cfg->levels[2].hand_size, ok[i].h);
		sl_config_free(cfg);
	}
}

/* Kubernetes' own parameters (Kubernetes bootstrap/default.go and the v1 defaults) get no
 * shuffle-sharding advice; poorer ones do, with the numbers. */
static void test_mouse_odds_warning(void **state)
{
	static const struct { unsigned q, h; } quiet[] = {
		{ 64, 6 }, { 16, 4 }, { 128, 6 }, { 64, 8 }, { 32, 12 },
	};
	char yaml[512];

	(void)state;
	for (size_t i = 0; i < sizeof(quiet) / sizeof(quiet[0]); i++) {
		snprintf(yaml, sizeof(yaml), QUEUE "        queues: %u\n        handSize: %u\n",
			 quiet[i].q, quiet[i].h);
		sl_config_free(load_ok(yaml));
	}
	expect_one(QUEUE "        queues: 16\n        handSize: 6\n", SL_SEV_WARNING, 11, 19, PL_OBJ,
		   QPATH "handSize",
		   "with 16 queues and handSize 6, 4 elephant flows crush a mouse flow with probability 0.342 (one elephant: 0.000125); raise queues (e.g. 64 queues: 0.000747)");
	/* handSize defaulted: the warning sits on queues */
	expect_one(QUEUE "        queues: 16\n", SL_SEV_WARNING, 10, 17, PL_OBJ, QPATH "queues",
		   "with 16 queues and handSize 8, 4 elephant flows crush a mouse flow with probability 0.");
	/* a bigger hand helps when queues are plenty */
	expect_one(QUEUE "        queues: 16\n        handSize: 1\n", SL_SEV_WARNING, 11, 19, PL_OBJ,
		   QPATH "handSize", "raise queues (e.g. 512 queues: 0.00779) or handSize");
	/* queues: 2 (two FIFOs, hand 1) is poor isolation */
	expect_one(QUEUE "        queues: 2\n        handSize: 1\n", SL_SEV_WARNING, 11, 19, PL_OBJ,
		   QPATH "handSize", "with 2 queues and handSize 1, 4 elephant flows crush a mouse flow with probability 0.938 (one elephant: 0.5)");
}

int main(void)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(test_level_defaults),
		cmocka_unit_test(test_level_good_values),
		cmocka_unit_test(test_mandatory_levels),
		cmocka_unit_test(test_queuing_rules_good),
		cmocka_unit_test(test_mouse_odds_warning),
	};

	return run_config_suite("config_level", fixed, N_OF(fixed), bad_cases, N_OF(bad_cases));
}
