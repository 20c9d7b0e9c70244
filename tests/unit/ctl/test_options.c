// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Unit tests for sluicectl's table-driven option parser (user/ctl/options.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "ctl/ctl.h"
#include "ctl/options.h"

struct pair {
	uint32_t a, b;
};

/* "A:B", both decimal: a custom kind. */
static int parse_pair(const char *arg, void *field, char *why, size_t len)
{
	struct pair *p = field;

	if (sscanf(arg, "%u:%u", &p->a, &p->b) != 2) {
		snprintf(why, len, "'%s' is not A:B", arg);
		return -EINVAL;
	}
	return 0;
}

struct t_opts {
	const char *config;
	bool json, verbose;
	uint16_t port;
	uint32_t count;
	uint64_t hash;
	double interval;
	struct pair pair;
	bool quiet;
};

static const struct sl_opt table[] = {
	SL_ROW_STRING('c', "config", struct t_opts, config, "FILE", "the configuration", SL_OPT_REQUIRED),
	CTL_JSON(struct t_opts, json, "JSON"),
	SL_ROW_FLAG('v', "verbose", struct t_opts, verbose, "more"),
	SL_ROW_NUMBER(SL_OPT_U16, 'P', "port", struct t_opts, port, "PORT", 0, 65535, "a port", 0),
	SL_ROW_NUMBER(SL_OPT_U32, 'n', "count", struct t_opts, count, "N", 1, 100, "a count\nsecond line", 0),
	SL_ROW_NUMBER(SL_OPT_U64, 'x', "hash", struct t_opts, hash, "V", 0, (double)UINT64_MAX, "a hash", 0),
	SL_ROW_NUMBER(SL_OPT_DOUBLE, 'i', "interval", struct t_opts, interval, "S", 0.5, 10, "seconds", 0),
	SL_ROW_CUSTOM(0, "pair", struct t_opts, pair, "A:B", parse_pair, "two numbers", 0),
	{.name = "quiet", .kind = SL_OPT_FLAG, .offset = offsetof(struct t_opts, quiet), .help = "less",
	 .old_short = 'q'},
	SL_ROW_RENAMED('C', "conf", "config"),
	SL_ROW_END,
};

static const struct sl_opt_doc doc = {
	.prog = "sluicectl", .command = "try",
	.args = "[ARG...]",
	.max_args = 3,
	.description = "A command for the tests.\n",
	.epilogue = "Exit status: 0.\n",
};

/* Run the parser over a NULL-terminated word list; stderr goes to err_text. */
static char err_text[1024];

static int run(struct t_opts *o, struct sl_opt_parsed *p, char **words)
{
	int argc = 0, saved, rc;
	FILE *tmp = tmpfile();

	while (words[argc])
		argc++;
	assert_non_null(tmp);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	dup2(fileno(tmp), STDERR_FILENO);
	rc = ctl_parse_options(&doc, table, o, argc, words, p);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	err_text[fread(err_text, 1, sizeof(err_text) - 1, tmp)] = '\0';
	fclose(tmp);
	return rc;
}

#define WORDS(...) ((char *[]){"try", __VA_ARGS__, NULL})

static void test_every_kind_lands_in_its_field(void **state)
{
	struct t_opts o = {.count = 7};
	struct sl_opt_parsed p;

	(void)state;
	assert_int_equal(run(&o, &p, WORDS("--config", "a.yaml", "-jv", "--port=443", "-x", "0xdeadbeef",
					   "--interval", "2.5", "--pair", "3:4")), CTL_PARSE_RUN);
	assert_string_equal(o.config, "a.yaml");
	assert_true(o.json);
	assert_true(o.verbose);
	assert_int_equal(o.port, 443);
	assert_int_equal(o.count, 7); /* not given: the default stays */
	assert_int_equal(o.hash, 0xdeadbeefull);
	assert_true(o.interval == 2.5);
	assert_int_equal(o.pair.a, 3);
	assert_int_equal(o.pair.b, 4);
	assert_true(sl_opt_given(table, &p, "port"));
	assert_false(sl_opt_given(table, &p, "count"));
	assert_false(sl_opt_given(table, &p, "no-such-option"));
}

static void test_positionals_anywhere_in_order(void **state)
{
	struct t_opts o = {0};
	struct sl_opt_parsed p;
	char **w = WORDS("one", "-c", "f", "two", "--json", "--", "--three");

	(void)state;
	assert_int_equal(run(&o, &p, w), CTL_PARSE_RUN);
	assert_int_equal(8 - p.first_arg, 3); /* 8 words, "--" not among the arguments */
	assert_string_equal(w[p.first_arg], "one");
	assert_string_equal(w[p.first_arg + 1], "two");
	assert_string_equal(w[p.first_arg + 2], "--three"); /* after "--": an argument */
	assert_true(o.json);
}

static void test_too_many_or_too_few_arguments(void **state)
{
	struct t_opts o = {0};
	struct sl_opt_parsed p;

	(void)state;
	assert_int_equal(run(&o, &p, WORDS("-c", "f", "1", "2", "3", "4")), CTL_USAGE);
	assert_non_null(strstr(err_text, "unexpected argument '4'"));
}

static void test_values_out_of_bounds_are_refused_by_name(void **state)
{
	static const struct {
		const char *opt, *value, *says;
	} cases[] = {
		{"--port", "65536", "--port: '65536' is not an integer in 0..65535"},
		{"--port", "-1", "--port: '-1' is not an integer in 0..65535"},
		{"--port", "80x", "--port: '80x' is not an integer"},
		{"--port", "", "--port: '' is not an integer"},
		{"--count", "0", "--count: '0' is not an integer in 1..100"},
		{"--count", "101", "--count: '101' is not an integer in 1..100"},
		{"--count", "+5", "--count: '+5' is not an integer"},
		{"--count", "0x10", "--count: '0x10' is not an integer"}, /* hex only for U64 */
		{"--hash", "18446744073709551616", "--hash: '18446744073709551616' is not an integer"},
		{"--interval", "0.25", "--interval: '0.25' is not a number in 0.5..10"},
		{"--interval", "nan", "--interval: 'nan' is not a number"},
		{"--pair", "3", "--pair: '3' is not A:B"},
		{"--config", "", "--config: needs a value"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct t_opts o = {0};
		struct sl_opt_parsed p;
		char *w[] = {"try", "-c", "f", (char *)cases[i].opt, (char *)cases[i].value, NULL};

		assert_int_equal(run(&o, &p, w), CTL_USAGE);
		if (!strstr(err_text, cases[i].says))
			fail_msg("%s %s: said \"%s\", expected \"%s\"", cases[i].opt, cases[i].value,
				 err_text, cases[i].says);
		assert_non_null(strstr(err_text, "sluicectl try: "));
	}
}

static void test_usage_errors(void **state)
{
	struct t_opts o = {0};
	struct sl_opt_parsed p;

	(void)state;
	assert_int_equal(run(&o, &p, WORDS("--json")), CTL_USAGE);
	assert_non_null(strstr(err_text, "--config FILE is required"));
	assert_int_equal(run(&o, &p, WORDS("-c", "f", "--bogus")), CTL_USAGE);
	assert_non_null(strstr(err_text, "unknown option '--bogus'"));
	assert_int_equal(run(&o, &p, WORDS("-c", "f", "-Z")), CTL_USAGE);
	assert_non_null(strstr(err_text, "unknown option '-Z'"));
	assert_int_equal(run(&o, &p, WORDS("-c", "f", "--port")), CTL_USAGE);
	assert_non_null(strstr(err_text, "option '--port' needs a value"));
	assert_non_null(strstr(err_text, "sluicectl try: option '--port' needs a value (see --help)\n"));
}

/* A parse that stops inside a bundle of short options (-hv: --help
 * returns before v) must not leak into the next parse. */
static void test_parses_are_independent(void **state)
{
	struct t_opts o = {0};
	struct sl_opt_parsed p;

	(void)state;
	assert_int_equal(run(&o, &p, WORDS("-hv")), CTL_OK);
	memset(&o, 0, sizeof(o));
	assert_int_equal(run(&o, &p, WORDS("-c", "f")), CTL_PARSE_RUN);
	assert_false(o.verbose);
	assert_string_equal(o.config, "f");
}

/* An old spelling works for one release: its value lands where the new
 * one's does, it counts as the new one given, and a line names the new
 * one.  A mistyped option gets the nearest real one. */
static void test_old_spellings_and_hints(void **state)
{
	struct t_opts o = {0};
	struct sl_opt_parsed p;

	(void)state;
	assert_int_equal(run(&o, &p, WORDS("--conf", "a.yaml")), CTL_PARSE_RUN);
	assert_string_equal(o.config, "a.yaml");
	assert_true(sl_opt_given(table, &p, "config"));
	assert_non_null(strstr(err_text, "sluicectl try: --conf is an old spelling: use --config"));
	memset(&o, 0, sizeof(o));
	assert_int_equal(run(&o, &p, WORDS("-C", "b.yaml", "-q")), CTL_PARSE_RUN);
	assert_string_equal(o.config, "b.yaml");
	assert_true(o.quiet);
	assert_non_null(strstr(err_text, "sluicectl try: -C is an old spelling: use --config"));
	assert_non_null(strstr(err_text, "sluicectl try: -q is an old spelling: use --quiet"));
	assert_int_equal(run(&o, &p, WORDS("-c", "f", "--quiet")), CTL_PARSE_RUN);
	assert_string_equal(err_text, "");
	assert_int_equal(run(&o, &p, WORDS("-c", "f", "--jsno")), CTL_USAGE);
	assert_non_null(strstr(err_text, "unknown option '--jsno': did you mean --json?"));
	assert_int_equal(run(&o, &p, WORDS("-c", "f", "--intervl=3")), CTL_USAGE);
	assert_non_null(strstr(err_text, "did you mean --interval?"));
	assert_int_equal(run(&o, &p, WORDS("-c", "f", "--zzzzzz")), CTL_USAGE);
	assert_null(strstr(err_text, "did you mean"));
}

static void test_help_lists_every_row(void **state)
{
	struct t_opts o = {0};
	struct sl_opt_parsed p;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	ctl_print_usage(f, &doc, table);
	fclose(f);
	assert_non_null(strstr(text, "Usage: sluicectl try --config FILE [--json] [--verbose]"));
	assert_non_null(strstr(text, "[ARG...]"));
	assert_non_null(strstr(text, "A command for the tests."));
	for (size_t i = 0; table[i].name; i++) {
		char want[64];

		snprintf(want, sizeof(want), "--%s ", table[i].name);
		if (table[i].flags & SL_OPT_DEPRECATED)
			continue;
		if (!strstr(strstr(text, "Options:"), want))
			fail_msg("--help does not list %s:\n%s", want, text);
	}
	/* An old spelling is not offered. */
	assert_null(strstr(text, "--conf "));
	assert_null(strstr(text, "-q,"));
	/* Continuation lines of a help text line up under its first line. */
	assert_non_null(strstr(text, "a count\n                              second line"));
	assert_non_null(strstr(text, "-h, --help"));
	assert_non_null(strstr(text, "Exit status: 0."));
	/* No synopsis line runs past 79 columns. */
	for (char *line = text, *nl; (nl = strchr(line, '\n')); line = nl + 1)
		if (line < strstr(text, "\n\n"))
			assert_true(nl - line <= 79);
	free(text);
	/* --help stops the command with success, even without the required option. */
	assert_int_equal(run(&o, &p, WORDS("--help")), CTL_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_kind_lands_in_its_field),
		cmocka_unit_test(test_positionals_anywhere_in_order),
		cmocka_unit_test(test_too_many_or_too_few_arguments),
		cmocka_unit_test(test_values_out_of_bounds_are_refused_by_name),
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_parses_are_independent),
		cmocka_unit_test(test_help_lists_every_row),
		cmocka_unit_test(test_old_spellings_and_hints),
	};

	return cmocka_run_group_tests_name("ctl_options", tests, NULL, NULL);
}
