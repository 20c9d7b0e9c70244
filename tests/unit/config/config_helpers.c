// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The configuration tests' shared helpers.  See config_helpers.h. */
#include <arpa/inet.h>

#include "config_helpers.h"

const char *data_dir(void)
{
	const char *d = getenv("SLUICE_TEST_DATA");

	return d && *d ? d : "tests/unit/configs";
}

void fixture(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", data_dir(), name);
}

int load(const char *yaml, struct sl_config **cfg, struct sl_diags *d)
{
	return sl_config_load_buffer("t.yaml", yaml, strlen(yaml), cfg, d);
}

/* Loads YAML that must load without any diagnostic. */
struct sl_config *load_ok(const char *yaml)
{
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;
	int rc = load(yaml, &cfg, &d);

	if (rc || d.count) {
		fprintf(stderr, "unexpected diagnostics for:\n%s\n", yaml);
		sl_diags_print(&d, stderr);
	}
	assert_int_equal(rc, 0);
	assert_int_equal(d.count, 0);
	assert_non_null(cfg);
	sl_diags_free(&d);
	return cfg;
}

void check_diag(const struct sl_diag *g, enum sl_severity sev,
		       unsigned line, unsigned col, const char *object,
		       const char *path, const char *msg)
{
	if (g->severity != sev || g->line != line || g->column != col ||
	    strcmp(g->object, object) || strcmp(g->path, path) ||
	    !strstr(g->message, msg)) {
		char got[1024];

		sl_diag_format(g, got, sizeof(got));
		fprintf(stderr, "expected: %u:%u: %s: %s: %s: ...%s...\n"
				"got:      %s\n",
			line, col, sl_severity_name(sev), object, path, msg, got);
	}
	assert_int_equal(g->severity, sev);
	assert_int_equal(g->line, line);
	assert_int_equal(g->column, col);
	assert_string_equal(g->object, object);
	assert_string_equal(g->path, path);
	assert_non_null(strstr(g->message, msg));
}

/* The YAML must produce exactly one diagnostic, as described.  An error
 * fails the load (-EINVAL, no config); a warning does not. */
void expect_one(const char *yaml, enum sl_severity sev, unsigned line,
		       unsigned col, const char *object, const char *path,
		       const char *msg)
{
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;
	int rc = load(yaml, &cfg, &d);

	if (d.count != 1) {
		fprintf(stderr, "expected one diagnostic for:\n%s\ngot %zu:\n",
			yaml, d.count);
		sl_diags_print(&d, stderr);
	}
	assert_int_equal(d.count, 1);
	check_diag(&d.items[0], sev, line, col, object, path, msg);
	if (sev == SL_SEV_ERROR) {
		assert_int_equal(rc, -EINVAL);
		assert_null(cfg);
		assert_int_equal(sl_diags_error_count(&d), 1);
	} else {
		assert_int_equal(rc, 0);
		assert_non_null(cfg);
		assert_int_equal(sl_diags_warning_count(&d), 1);
	}
	sl_config_free(cfg);
	sl_diags_free(&d);
}

char *read_stream(void (*fn)(const struct sl_diags *, FILE *),
			 const struct sl_diags *d)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);

	assert_non_null(f);
	fn(d, f);
	assert_int_equal(fclose(f), 0);
	return s;
}

static void run_bad_case(void **state)
{
	const struct bad_case *bc = *state;

	expect_one(bc->yaml, SL_SEV_ERROR, bc->line, bc->col, bc->object,
		   bc->path, bc->msg);
}

/* Loads YAML that must load with exactly n_warn warnings and no error. */
struct sl_config *load_warned(const char *yaml, size_t n_warn)
{
	struct sl_diags d = SL_DIAGS_INIT;
	struct sl_config *cfg = NULL;
	int rc = load(yaml, &cfg, &d);

	if (rc || d.n_errors || d.n_warnings != n_warn) {
		fprintf(stderr, "expected %zu warnings for:\n%s\ngot:\n", n_warn, yaml);
		sl_diags_print(&d, stderr);
	}
	assert_int_equal(rc, 0);
	assert_int_equal(d.n_errors, 0);
	assert_int_equal(d.n_warnings, n_warn);
	assert_non_null(cfg);
	sl_diags_free(&d);
	return cfg;
}

static const uint8_t v4_mapped_prefix[16] = { [10] = 0xff, [11] = 0xff };

/* "a.b.c.d/n" or "x::/n" as stored: v4-mapped, prefix 96 + n for IPv4 */
void check_cidr(const struct sl_cidr *c, const char *addr, unsigned plen)
{
	uint8_t want[16];

	if (inet_pton(AF_INET, addr, want + 12) == 1) {
		memcpy(want, v4_mapped_prefix, 12);
		plen += 96;
	} else {
		assert_int_equal(inet_pton(AF_INET6, addr, want), 1);
	}
	assert_memory_equal(c->addr, want, 16);
	assert_int_equal(c->prefix_len, plen);
}

/* The mandatory objects every configuration has (Kubernetes bootstrap/default.go). */
void check_mandatory(const struct sl_config *cfg)
{
	const struct sl_level_cfg *l;
	const struct sl_flow_schema *fs;

	assert_true(cfg->n_levels >= 2);
	l = &cfg->levels[0];
	assert_string_equal(l->name, "exempt");
	assert_int_equal(l->type, SL_LEVEL_EXEMPT);
	assert_true(l->mandatory);
	assert_int_equal(l->borrowing_limit_percent, -1);
	l = &cfg->levels[1];
	assert_string_equal(l->name, "catch-all");
	assert_int_equal(l->type, SL_LEVEL_LIMITED);
	assert_true(l->mandatory);
	assert_int_equal(l->shares, 5);
	assert_int_equal(l->lendable_percent, 0);
	assert_int_equal(l->borrowing_limit_percent, -1);
	assert_int_equal(l->limit_response, SL_RESP_REJECT);
	assert_int_equal(l->queues, 0);

	fs = sl_config_find_schema(cfg, "exempt");
	assert_non_null(fs);
	assert_ptr_equal(fs, &cfg->schemas[0]); /* precedence 1 sorts first */
	assert_true(fs->mandatory);
	assert_int_equal(fs->precedence, 1);
	assert_string_equal(fs->level_name, "exempt");
	assert_int_equal(fs->level, 0);
	assert_int_equal(fs->distinguisher, SL_DIST_NONE);
	assert_int_equal(fs->seats_per_conn, 1);
	assert_int_equal(fs->n_rules, 1);
	assert_int_equal(fs->rules[0].n_subjects, 1);
	assert_int_equal(fs->rules[0].subjects[0].kind, SL_SUBJECT_NETWORK);
	assert_int_equal(fs->rules[0].subjects[0].n_cidrs, 2);
	check_cidr(&fs->rules[0].subjects[0].cidrs[0], "127.0.0.0", 8);
	check_cidr(&fs->rules[0].subjects[0].cidrs[1], "::1", 128);
	assert_int_equal(fs->rules[0].n_destinations, 1);
	assert_int_equal(fs->rules[0].destinations[0].n_ports, 0);
	assert_int_equal(fs->rules[0].destinations[0].n_addresses, 0);

	fs = sl_config_find_schema(cfg, "catch-all");
	assert_non_null(fs);
	assert_true(fs->mandatory);
	assert_int_equal(fs->precedence, 10000);
	assert_string_equal(fs->level_name, "catch-all");
	assert_int_equal(fs->level, 1);
	assert_int_equal(fs->distinguisher, SL_DIST_BY_SOURCE);
	assert_int_equal(fs->prefix_len_v4, 32);
	assert_int_equal(fs->prefix_len_v6, 128);
	assert_int_equal(fs->n_rules, 1);
	assert_int_equal(fs->rules[0].subjects[0].n_cidrs, 2);
	check_cidr(&fs->rules[0].subjects[0].cidrs[0], "0.0.0.0", 0);
	check_cidr(&fs->rules[0].subjects[0].cidrs[1], "::", 0);
	assert_int_equal(fs->rules[0].destinations[0].n_ports, 0);
}

int run_config_suite(const char *name, const struct CMUnitTest *fixed, size_t n_fixed,
		     const struct bad_case *bad, size_t n_bad)
{
	struct CMUnitTest *tests = calloc(n_fixed + n_bad, sizeof(*tests));
	int rc;

	assert_non_null(tests);
	for (size_t i = 0; i < n_fixed; i++)
		tests[i] = fixed[i];
	for (size_t i = 0; i < n_bad; i++)
		tests[n_fixed + i] = (struct CMUnitTest){
			.name = bad[i].name,
			.test_func = run_bad_case,
			.initial_state = (void *)(uintptr_t)&bad[i],
		};
	rc = _cmocka_run_group_tests(name, tests, n_fixed + n_bad, NULL, NULL);
	free(tests);
	return rc;
}
