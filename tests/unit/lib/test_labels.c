// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Unit tests for connection labels and label matchers (Aperture selectors/selector.go and multi-matcher.go),
 * including the label_matcher vectors of tests/vectors/aimd.json. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "vectors.h"
#include <jansson.h>

#include "lib/labels.h"

static char *xstrdup(const char *s)
{
	char *d = strdup(s);

	assert_non_null(d);
	return d;
}

/* ---- builders (everything on the heap, as the config parser does) ------- */

/* values: NULL-terminated. */
static void add_req(struct sl_label_matcher *m, const char *key, enum sl_lm_op op, ...)
{
	struct sl_lm_requirement *r;
	const char *v;
	va_list ap;

	m->reqs = realloc(m->reqs, (m->n_reqs + 1) * sizeof(*m->reqs));
	assert_non_null(m->reqs);
	r = &m->reqs[m->n_reqs++];
	memset(r, 0, sizeof(*r));
	r->key = xstrdup(key);
	r->op = op;
	va_start(ap, op);
	while ((v = va_arg(ap, const char *))) {
		r->values = realloc(r->values, (r->n_values + 1) * sizeof(*r->values));
		assert_non_null(r->values);
		r->values[r->n_values++] = xstrdup(v);
	}
	va_end(ap);
}

static struct sl_lm_expr e_eq(const char *label, const char *value)
{
	struct sl_lm_expr e = { .kind = SL_LE_EQUALS };

	e.label = xstrdup(label);
	e.value = xstrdup(value);
	return e;
}

static struct sl_lm_expr e_exists(const char *label)
{
	struct sl_lm_expr e = { .kind = SL_LE_EXISTS };

	e.label = xstrdup(label);
	return e;
}

static struct sl_lm_expr e_re(const char *label, const char *regex)
{
	struct sl_lm_expr e = { .kind = SL_LE_MATCHES };
	char err[128];

	e.label = xstrdup(label);
	e.regex = xstrdup(regex);
	if (sl_lm_compile_regex(&e, err, sizeof(err)))
		fail_msg("compile %s: %s", regex, err);
	assert_non_null(e.re);
	return e;
}

/* kind ALL/ANY/NOT followed by n children passed by value. */
static struct sl_lm_expr e_node(enum sl_lm_expr_kind kind, size_t n, ...)
{
	struct sl_lm_expr e = { .kind = kind };
	va_list ap;

	if (n) {
		e.children = calloc(n, sizeof(*e.children));
		assert_non_null(e.children);
	}
	va_start(ap, n);
	for (size_t i = 0; i < n; i++)
		e.children[i] = va_arg(ap, struct sl_lm_expr);
	va_end(ap);
	e.n_children = n;
	return e;
}

static struct sl_lm_expr e_not(struct sl_lm_expr child)
{
	return e_node(SL_LE_NOT, 1, child);
}

static void set_expr(struct sl_label_matcher *m, struct sl_lm_expr e)
{
	assert_null(m->expr);
	m->expr = malloc(sizeof(*m->expr));
	assert_non_null(m->expr);
	*m->expr = e;
}

/* A matcher with only an expression; evaluate it and free everything. */
static bool eval_expr_once(struct sl_lm_expr e, const struct sl_labels *l)
{
	struct sl_label_matcher m = { 0 };
	bool r;

	set_expr(&m, e);
	r = sl_label_matcher_eval(&m, l);
	assert_true(r == sl_lm_expr_eval(m.expr, l));
	sl_label_matcher_free(&m);
	return r;
}

/* The labels most tests use. */
static void std_labels(struct sl_labels *l)
{
	assert_int_equal(sl_labels_set(l, "user_type", "guest"), 0);
	assert_int_equal(sl_labels_set(l, "path", "/api/v1/cart"), 0);
	assert_int_equal(sl_labels_set(l, "empty", ""), 0);
	assert_int_equal(sl_labels_set(l, SL_LABEL_DST_PORT, "443"), 0);
}

/* ---- label sets ---------------------------------------------------------- */

static void test_labels_set_get_copy_sort(void **state)
{
	struct sl_labels l = SL_LABELS_INIT, c = SL_LABELS_INIT;
	char key[16];

	(void)state;
	assert_null(sl_labels_get(&l, "a"));
	assert_int_equal(sl_labels_set(&l, "b", "1"), 0);
	assert_int_equal(sl_labels_set(&l, "a", ""), 0);
	assert_int_equal(sl_labels_set(&l, "b", "2"), 0); /* overwrite */
	assert_int_equal(l.count, 2);
	assert_string_equal(sl_labels_get(&l, "b"), "2");
	assert_string_equal(sl_labels_get(&l, "a"), "");
	assert_null(sl_labels_get(&l, "c"));
	assert_null(sl_labels_get(&l, NULL));
	assert_int_equal(sl_labels_set(&l, NULL, "x"), -EINVAL);
	/* Growth past the first allocation. */
	for (int i = 0; i < 40; i++) {
		snprintf(key, sizeof(key), "k%02d", 39 - i);
		assert_int_equal(sl_labels_set(&l, key, key), 0);
	}
	assert_int_equal(l.count, 42);
	assert_int_equal(sl_labels_copy(&c, &l), 0);
	assert_int_equal(c.count, 42);
	assert_true(c.items[0].key != l.items[0].key);
	sl_labels_sort(&c);
	assert_string_equal(c.items[0].key, "a");
	assert_string_equal(c.items[1].key, "b");
	assert_string_equal(c.items[2].key, "k00");
	assert_string_equal(c.items[41].key, "k39");
	assert_string_equal(sl_labels_get(&c, "k17"), "k17");
	sl_labels_clear(&l);
	assert_int_equal(l.count, 0);
	assert_non_null(l.items); /* allocation kept */
	assert_null(sl_labels_get(&l, "a"));
	assert_string_equal(sl_labels_get(&c, "b"), "2"); /* the copy is deep */
	assert_int_equal(sl_labels_set(&l, "z", "1"), 0);
	sl_labels_free(&l);
	sl_labels_free(&c);
	assert_null(l.items);
	assert_int_equal(l.count, 0);
	sl_labels_free(&l); /* twice is fine */
}

/* ---- requirements -------------------------------------------------------- */

static bool eval_req(const char *key, enum sl_lm_op op, const char *v1, const char *v2,
		     const struct sl_labels *l)
{
	struct sl_label_matcher m = { 0 };
	bool r;

	add_req(&m, key, op, v1, v2, (const char *)NULL);
	r = sl_label_matcher_eval(&m, l);
	sl_label_matcher_free(&m);
	return r;
}

static void test_match_labels(void **state)
{
	struct sl_labels l = SL_LABELS_INIT, none = SL_LABELS_INIT;

	(void)state;
	std_labels(&l);
	/* match_labels{k: v} is In with one value. */
	assert_true(eval_req("user_type", SL_LM_IN, "guest", NULL, &l));
	assert_false(eval_req("user_type", SL_LM_IN, "gold", NULL, &l));
	assert_false(eval_req("user_type", SL_LM_IN, "Guest", NULL, &l));
	assert_false(eval_req("user_type", SL_LM_IN, "gues", NULL, &l));
	assert_false(eval_req("tier", SL_LM_IN, "guest", NULL, &l));
	/* v = "": presence is required. */
	assert_true(eval_req("empty", SL_LM_IN, "", NULL, &l));
	assert_false(eval_req("missing", SL_LM_IN, "", NULL, &l));
	assert_false(eval_req("user_type", SL_LM_IN, "", NULL, &l));
	assert_false(eval_req("empty", SL_LM_IN, "", NULL, &none));
	sl_labels_free(&l);
}

static void test_in_notin(void **state)
{
	struct sl_labels l = SL_LABELS_INIT;
	struct sl_label_matcher m = { 0 };

	(void)state;
	std_labels(&l);
	assert_true(eval_req("user_type", SL_LM_IN, "sub", "guest", &l));
	assert_false(eval_req("user_type", SL_LM_IN, "sub", "gold", &l));
	assert_false(eval_req("user_type", SL_LM_IN, "g.est", NULL, &l)); /* literal */
	assert_false(eval_req("nope", SL_LM_IN, "guest", "sub", &l));
	assert_true(eval_req("empty", SL_LM_IN, "x", "", &l));
	/* NotIn: true when missing. */
	assert_false(eval_req("user_type", SL_LM_NOT_IN, "sub", "guest", &l));
	assert_true(eval_req("user_type", SL_LM_NOT_IN, "sub", "gold", &l));
	assert_true(eval_req("nope", SL_LM_NOT_IN, "x", NULL, &l));
	assert_false(eval_req("empty", SL_LM_NOT_IN, "", NULL, &l));
	assert_true(eval_req("empty", SL_LM_NOT_IN, "x", NULL, &l));
	/* An (invalid) empty value list: In nothing is false, NotIn true. */
	add_req(&m, "user_type", SL_LM_IN, (const char *)NULL);
	assert_false(sl_label_matcher_eval(&m, &l));
	m.reqs[0].op = SL_LM_NOT_IN;
	assert_true(sl_label_matcher_eval(&m, &l));
	sl_label_matcher_free(&m);
	sl_labels_free(&l);
}

static void test_exists_does_not_exist(void **state)
{
	struct sl_labels l = SL_LABELS_INIT, none = SL_LABELS_INIT;

	(void)state;
	std_labels(&l);
	assert_true(eval_req("user_type", SL_LM_EXISTS, NULL, NULL, &l));
	assert_true(eval_req("empty", SL_LM_EXISTS, NULL, NULL, &l)); /* "" is present */
	assert_false(eval_req("nope", SL_LM_EXISTS, NULL, NULL, &l));
	assert_false(eval_req("user_type", SL_LM_DOES_NOT_EXIST, NULL, NULL, &l));
	assert_false(eval_req("empty", SL_LM_DOES_NOT_EXIST, NULL, NULL, &l));
	assert_true(eval_req("nope", SL_LM_DOES_NOT_EXIST, NULL, NULL, &l));
	assert_true(eval_req("nope", SL_LM_DOES_NOT_EXIST, NULL, NULL, &none));
	assert_false(eval_req("nope", SL_LM_EXISTS, NULL, NULL, &none));
	sl_labels_free(&l);
}

static void test_empty_matcher_and_and(void **state)
{
	struct sl_labels l = SL_LABELS_INIT, none = SL_LABELS_INIT;
	struct sl_label_matcher m = { 0 };

	(void)state;
	std_labels(&l);
	assert_true(sl_label_matcher_eval(&m, &l));
	assert_true(sl_label_matcher_eval(&m, &none));
	assert_true(sl_label_matcher_eval(NULL, &l));
	/* AND of every requirement and the expression. */
	add_req(&m, "user_type", SL_LM_IN, "guest", (const char *)NULL);
	add_req(&m, "tier", SL_LM_DOES_NOT_EXIST, (const char *)NULL);
	set_expr(&m, e_eq("path", "/api/v1/cart"));
	assert_true(sl_label_matcher_eval(&m, &l));
	assert_int_equal(sl_labels_set(&l, "path", "/other"), 0);
	assert_false(sl_label_matcher_eval(&m, &l)); /* expr fails */
	assert_int_equal(sl_labels_set(&l, "path", "/api/v1/cart"), 0);
	assert_int_equal(sl_labels_set(&l, "tier", "x"), 0);
	assert_false(sl_label_matcher_eval(&m, &l)); /* second req fails */
	assert_false(sl_label_matcher_eval(&m, &none));
	sl_label_matcher_free(&m);
	assert_null(m.reqs);
	assert_null(m.expr);
	assert_int_equal(m.n_reqs, 0);
	sl_label_matcher_free(&m); /* twice is fine */
	sl_labels_free(&l);
}

/* ---- expressions --------------------------------------------------------- */

static void test_expr_leaves(void **state)
{
	struct sl_labels l = SL_LABELS_INIT;

	(void)state;
	std_labels(&l);
	assert_true(eval_expr_once(e_eq("user_type", "guest"), &l));
	assert_false(eval_expr_once(e_eq("user_type", "gold"), &l));
	assert_false(eval_expr_once(e_eq("missing", ""), &l)); /* missing: false */
	assert_true(eval_expr_once(e_eq("empty", ""), &l));
	assert_false(eval_expr_once(e_eq("empty", "x"), &l));
	assert_true(eval_expr_once(e_exists("empty"), &l));
	assert_false(eval_expr_once(e_exists("missing"), &l));
	assert_false(eval_expr_once(e_re("missing", ""), &l)); /* missing: false */
	assert_false(eval_expr_once(e_re("missing", ".*"), &l));
	assert_true(eval_expr_once(e_re("empty", ""), &l));
	assert_true(eval_expr_once(e_re("empty", "^$"), &l));
	assert_false(eval_expr_once(e_re("empty", "."), &l));
	assert_true(sl_lm_expr_eval(NULL, &l));
	sl_labels_free(&l);
}

static void test_expr_all_any_not(void **state)
{
	struct sl_labels l = SL_LABELS_INIT, none = SL_LABELS_INIT;

	(void)state;
	std_labels(&l);
	assert_true(eval_expr_once(e_node(SL_LE_ALL, 0), &l));
	assert_true(eval_expr_once(e_node(SL_LE_ALL, 0), &none));
	assert_false(eval_expr_once(e_node(SL_LE_ANY, 0), &l));
	assert_false(eval_expr_once(e_node(SL_LE_ANY, 0), &none));
	assert_false(eval_expr_once(e_not(e_node(SL_LE_ALL, 0)), &l));
	assert_true(eval_expr_once(e_not(e_node(SL_LE_ANY, 0)), &l));
	assert_true(eval_expr_once(e_not(e_exists("nope")), &l));
	assert_false(eval_expr_once(e_not(e_exists("path")), &l));
	assert_true(eval_expr_once(e_not(e_eq("nope", "x")), &l)); /* not(false) */
	assert_true(eval_expr_once(e_node(SL_LE_ALL, 2, e_exists("path"), e_eq("user_type", "guest")), &l));
	assert_false(eval_expr_once(e_node(SL_LE_ALL, 2, e_exists("path"), e_eq("user_type", "x")), &l));
	assert_true(eval_expr_once(e_node(SL_LE_ANY, 2, e_exists("nope"), e_eq("user_type", "guest")), &l));
	assert_false(eval_expr_once(e_node(SL_LE_ANY, 2, e_exists("nope"), e_eq("user_type", "x")), &l));
	/* Nested: all(any(tier=gold, user_type=guest), not(path=~/admin/), not(not(empty))). */
	struct sl_lm_expr nested =
		e_node(SL_LE_ALL, 3,
		       e_node(SL_LE_ANY, 2, e_eq("tier", "gold"), e_eq("user_type", "guest")),
		       e_not(e_re("path", "admin")),
		       e_not(e_not(e_exists("empty"))));
	struct sl_label_matcher m = { 0 };

	set_expr(&m, nested);
	assert_true(sl_label_matcher_eval(&m, &l));
	assert_int_equal(sl_labels_set(&l, "path", "/admin/x"), 0);
	assert_false(sl_label_matcher_eval(&m, &l));
	assert_int_equal(sl_labels_set(&l, "path", "/api"), 0);
	assert_int_equal(sl_labels_set(&l, "user_type", "sub"), 0);
	assert_false(sl_label_matcher_eval(&m, &l));
	assert_int_equal(sl_labels_set(&l, "tier", "gold"), 0);
	assert_true(sl_label_matcher_eval(&m, &l));
	assert_false(sl_label_matcher_eval(&m, &none));
	/* A `not` without a child is malformed: it matches nothing. */
	struct sl_lm_expr bad = { .kind = SL_LE_NOT };
	assert_false(sl_lm_expr_eval(&bad, &l));
	sl_label_matcher_free(&m);
	sl_labels_free(&l);
}

/* ---- regexes ------------------------------------------------------------- */

static bool re_on(const char *regex, const char *value)
{
	struct sl_labels l = SL_LABELS_INIT;
	bool r;

	assert_int_equal(sl_labels_set(&l, "v", value), 0);
	r = eval_expr_once(e_re("v", regex), &l);
	sl_labels_free(&l);
	return r;
}

static void test_regex_search_semantics(void **state)
{
	(void)state;
	/* Unanchored search. */
	assert_true(re_on("cart", "/api/v1/cart"));
	assert_true(re_on("v[0-9]+", "/api/v1/cart"));
	assert_false(re_on("^cart", "/api/v1/cart"));
	assert_true(re_on("cart$", "/api/v1/cart"));
	assert_false(re_on("^/api$", "/api/v1/cart"));
	assert_true(re_on("^/api/v1/cart$", "/api/v1/cart"));
	assert_true(re_on("^10\\.0\\.", "10.0.3.4"));
	assert_false(re_on("^10\\.0\\.", "10.01.3.4"));
	assert_true(re_on("(?i)CHROME", "chrome"));
	/* UTF: `.` spans one character; a stray byte is not an error. */
	assert_true(re_on("^caf.$", "caf\xc3\xa9"));
	assert_true(re_on("tail", "\xff\xfe tail"));
	assert_false(re_on("^\\xff", "\xff\xfe tail"));
	/* `$` is the end of the value, as in RE2 (PCRE2 alone would match
	 * before a final newline too). */
	assert_false(re_on("^Safari$", "Safari\n"));
	assert_true(re_on("^Safari$", "Safari"));
	assert_true(re_on("^Safari\n$", "Safari\n"));
	/* Multi-line mode is asked for, as in RE2: (?m)$ ends each line. */
	assert_true(re_on("(?m)^Safari$", "Safari\nChrome"));
}

static void test_regex_asm_example(void **state)
{
	static const char *re = "^(?!.*Chrome).*Safari";

	(void)state;
	assert_true(re_on(re, "Mozilla/5.0 (Macintosh) AppleWebKit/605.1.15 Version/17.0 Safari/605"));
	assert_false(re_on(re, "Mozilla/5.0 (X11) AppleWebKit/537.36 Chrome/120 Safari/537"));
	assert_false(re_on(re, "Mozilla/5.0 Firefox/121"));
}

static void test_regex_pathological(void **state)
{
	(void)state;
	/* Catastrophic backtracking: stopped by the match limit, "no match". */
	assert_false(re_on("(a+)+$", "aaaaaaaaaaaaaaaaaaaaaaaaaaaa!"));
	assert_false(re_on("(a|aa)+$", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"));
	assert_false(re_on("^(\\w+\\s?)*$", "An input string that takes a long time or even makes this regex hang!"));
	/* The same regexes still work on ordinary input. */
	assert_true(re_on("(a+)+$", "baaaa"));
	assert_true(re_on("^(\\w+\\s?)*$", "short words"));
}

static void test_regex_compile_errors(void **state)
{
	struct sl_lm_expr e = { .kind = SL_LE_MATCHES };
	char err[128];

	(void)state;
	e.regex = xstrdup("user_(tier|x");
	assert_int_equal(sl_lm_compile_regex(&e, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "missing closing parenthesis at offset 12");
	assert_null(e.re);
	free(e.regex);
	e.regex = xstrdup("(abc");
	assert_int_equal(sl_lm_compile_regex(&e, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "missing closing parenthesis at offset 4");
	free(e.regex);
	e.regex = xstrdup("[z-a]");
	assert_int_equal(sl_lm_compile_regex(&e, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "range out of order in character class at offset 3");
	/* A short buffer truncates; no buffer is allowed. */
	assert_int_equal(sl_lm_compile_regex(&e, err, 6), -EINVAL);
	assert_string_equal(err, "range");
	assert_int_equal(sl_lm_compile_regex(&e, NULL, 0), -EINVAL);
	free(e.regex);
	e.regex = NULL;
	assert_int_equal(sl_lm_compile_regex(&e, err, sizeof(err)), -EINVAL);
	assert_int_equal(sl_lm_compile_regex(NULL, err, sizeof(err)), -EINVAL);
	/* Recompiling replaces (and frees) the previous code. */
	e.regex = xstrdup("a");
	assert_int_equal(sl_lm_compile_regex(&e, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	void *first = e.re;
	assert_non_null(first);
	assert_int_equal(sl_lm_compile_regex(&e, err, sizeof(err)), 0);
	assert_non_null(e.re);
	e.label = xstrdup("v");
	sl_lm_expr_free(&e);
	assert_null(e.re);
	assert_null(e.regex);
}

static void test_regex_uncompiled_is_compiled_on_the_fly(void **state)
{
	struct sl_labels l = SL_LABELS_INIT;
	struct sl_lm_expr e = { .kind = SL_LE_MATCHES };

	(void)state;
	assert_int_equal(sl_labels_set(&l, "v", "hello world"), 0);
	e.label = xstrdup("v");
	e.regex = xstrdup("o w");
	assert_true(sl_lm_expr_eval(&e, &l));
	assert_null(e.re);
	free(e.regex);
	e.regex = xstrdup("(");
	assert_false(sl_lm_expr_eval(&e, &l)); /* uncompilable: no match */
	sl_lm_expr_free(&e);
	sl_labels_free(&l);
}

/* ---- copy / free --------------------------------------------------------- */

static void build_full(struct sl_label_matcher *m)
{
	memset(m, 0, sizeof(*m));
	add_req(m, "user_tier", SL_LM_IN, "gold", (const char *)NULL);
	add_req(m, "env", SL_LM_IN, "a", "b", (const char *)NULL);
	add_req(m, "env", SL_LM_NOT_IN, "c", (const char *)NULL);
	add_req(m, "k", SL_LM_DOES_NOT_EXIST, (const char *)NULL);
	add_req(m, "k2", SL_LM_EXISTS, (const char *)NULL);
	set_expr(m, e_node(SL_LE_ALL, 3,
			   e_node(SL_LE_ANY, 2, e_eq(SL_LABEL_DST_PORT, "443"), e_exists("sni")),
			   e_not(e_re("ua", "^(?!.*Chrome).*Safari")),
			   e_node(SL_LE_ANY, 0)));
}

static void test_copy_and_free(void **state)
{
	struct sl_label_matcher src, dst, empty = { 0 }, dst2;
	struct sl_labels l = SL_LABELS_INIT;

	(void)state;
	build_full(&src);
	assert_int_equal(sl_label_matcher_copy(&dst, &src), 0);
	assert_int_equal(dst.n_reqs, 5);
	assert_true(dst.reqs[1].values != src.reqs[1].values);
	assert_true(dst.reqs[1].values[1] != src.reqs[1].values[1]);
	assert_string_equal(dst.reqs[1].values[1], "b");
	assert_true(dst.expr != src.expr);
	struct sl_lm_expr *re_src = &src.expr->children[1].children[0];
	struct sl_lm_expr *re_dst = &dst.expr->children[1].children[0];
	assert_non_null(re_dst->re);
	assert_true(re_dst->re != re_src->re); /* recompiled */
	assert_true(re_dst->regex != re_src->regex);
	sl_label_matcher_free(&src);

	/* The copy works alone.  The last all() member, any{}, is false, so
	 * evaluate the parts. */
	assert_int_equal(sl_labels_set(&l, "ua", "Chrome/120 Safari/537"), 0);
	assert_true(sl_lm_expr_eval(&dst.expr->children[1], &l));
	assert_int_equal(sl_labels_set(&l, "ua", "Safari/605"), 0);
	assert_false(sl_lm_expr_eval(&dst.expr->children[1], &l));
	assert_false(sl_label_matcher_eval(&dst, &l));
	dst.expr->children[2].kind = SL_LE_ALL; /* all{} is true */
	assert_int_equal(sl_labels_set(&l, "ua", "curl"), 0);
	assert_int_equal(sl_labels_set(&l, "user_tier", "gold"), 0);
	assert_int_equal(sl_labels_set(&l, "env", "a"), 0);
	assert_int_equal(sl_labels_set(&l, "k2", ""), 0);
	assert_int_equal(sl_labels_set(&l, "sni", "x"), 0);
	assert_true(sl_label_matcher_eval(&dst, &l));

	/* Copy of a copy, and of an empty matcher. */
	assert_int_equal(sl_label_matcher_copy(&dst2, &dst), 0);
	assert_true(sl_label_matcher_eval(&dst2, &l));
	sl_label_matcher_free(&dst2);
	assert_int_equal(sl_label_matcher_copy(&dst2, &empty), 0);
	assert_null(dst2.reqs);
	assert_null(dst2.expr);
	sl_label_matcher_free(&dst2);
	sl_label_matcher_free(&dst);
	sl_labels_free(&l);
}

/* ---- visit --------------------------------------------------------------- */

static void collect(const struct sl_lm_ref *ref, void *ctx)
{
	char *out = ctx;
	size_t len = strlen(out);

	len += snprintf(out + len, 1024 - len, "%s%s[", ref->key, ref->regex ? "~" : "");
	for (size_t i = 0; i < ref->n_values; i++)
		len += snprintf(out + len, 1024 - len, "%s%s", i ? "," : "", ref->values[i]);
	if (!ref->n_values)
		assert_null(ref->values);
	snprintf(out + len, 1024 - len, "] ");
}

static void test_visit(void **state)
{
	struct sl_label_matcher m, empty = { 0 };
	char out[1024] = "";

	(void)state;
	build_full(&m);
	sl_label_matcher_visit(&m, collect, out);
	assert_string_equal(out, "user_tier[gold] env[a,b] env[c] k[] k2[] dst.port[443] sni[] ua~[] ");
	out[0] = '\0';
	sl_label_matcher_visit(&empty, collect, out);
	assert_string_equal(out, "");
	sl_label_matcher_visit(NULL, collect, out);
	sl_label_matcher_visit(&m, NULL, out);
	sl_label_matcher_free(&m);
}

/* ---- format -------------------------------------------------------------- */

static void test_format(void **state)
{
	struct sl_label_matcher m, e = { 0 };
	char buf[256], small[10];
	const char *want = "user_tier=gold, env in (a,b), env notin (c), !k, k2, "
			   "all(any(dst.port=443, sni), not(ua=~/^(?!.*Chrome).*Safari/), any())";
	int n;

	(void)state;
	assert_int_equal(sl_label_matcher_format(&e, buf, sizeof(buf)), 1);
	assert_string_equal(buf, "*");
	assert_int_equal(sl_label_matcher_format(NULL, buf, sizeof(buf)), 1);
	assert_string_equal(buf, "*");
	build_full(&m);
	n = sl_label_matcher_format(&m, buf, sizeof(buf));
	assert_string_equal(buf, want);
	assert_int_equal(n, (int)strlen(want));
	/* snprintf semantics: the full length, a truncated NUL-terminated buffer. */
	assert_int_equal(sl_label_matcher_format(&m, small, sizeof(small)), n);
	assert_string_equal(small, "user_tier");
	assert_int_equal(sl_label_matcher_format(&m, NULL, 0), n);
	sl_label_matcher_free(&m);

	/* Only an expression; empty values are visible. */
	add_req(&e, "empty", SL_LM_IN, "", (const char *)NULL);
	add_req(&e, "x", SL_LM_NOT_IN, "", "y", (const char *)NULL);
	set_expr(&e, e_node(SL_LE_ALL, 0));
	sl_label_matcher_format(&e, buf, sizeof(buf));
	assert_string_equal(buf, "empty=\"\", x notin (\"\",y), all()");
	sl_label_matcher_free(&e);
	set_expr(&e, e_eq("a", "b"));
	sl_label_matcher_format(&e, buf, sizeof(buf));
	assert_string_equal(buf, "a=b");
	sl_label_matcher_free(&e);
}

/* ---- aimd.json vectors --------------------------------------------------- */

static int expr_from_json(json_t *j, struct sl_lm_expr *e);

static int children_from_json(json_t *arr, struct sl_lm_expr *e)
{
	size_t i;
	json_t *c;

	if (!json_is_array(arr))
		return -1;
	e->n_children = json_array_size(arr);
	e->children = e->n_children ? calloc(e->n_children, sizeof(*e->children)) : NULL;
	json_array_foreach(arr, i, c)
		if (expr_from_json(c, &e->children[i]))
			return -1;
	return 0;
}

/* Aperture's `expression`: exactly one variant. */
static int expr_from_json(json_t *j, struct sl_lm_expr *e)
{
	const char *k;
	json_t *v;
	char err[128];

	memset(e, 0, sizeof(*e));
	if (json_object_size(j) != 1)
		return -1;
	json_object_foreach(j, k, v) {
		if (!strcmp(k, "all") || !strcmp(k, "any")) {
			e->kind = !strcmp(k, "all") ? SL_LE_ALL : SL_LE_ANY;
			return children_from_json(json_object_get(v, "of"), e);
		} else if (!strcmp(k, "not")) {
			e->kind = SL_LE_NOT;
			e->children = calloc(1, sizeof(*e->children));
			e->n_children = 1;
			return expr_from_json(v, e->children);
		} else if (!strcmp(k, "label_exists")) {
			e->kind = SL_LE_EXISTS;
			e->label = xstrdup(json_string_value(v));
		} else if (!strcmp(k, "label_equals")) {
			e->kind = SL_LE_EQUALS;
			e->label = xstrdup(json_string_value(json_object_get(v, "label")));
			e->value = xstrdup(json_string_value(json_object_get(v, "value")));
		} else if (!strcmp(k, "label_matches")) {
			e->kind = SL_LE_MATCHES;
			e->label = xstrdup(json_string_value(json_object_get(v, "label")));
			e->regex = xstrdup(json_string_value(json_object_get(v, "regex")));
			if (sl_lm_compile_regex(e, err, sizeof(err)))
				fail_msg("%s: %s", e->regex, err);
		} else {
			return -1;
		}
	}
	return 0;
}

static void matcher_from_json(json_t *j, struct sl_label_matcher *m)
{
	json_t *ml = json_object_get(j, "match_labels");
	json_t *list = json_object_get(j, "match_list");
	json_t *expr = json_object_get(j, "expression"), *v, *r;
	const char *k;
	size_t i;

	memset(m, 0, sizeof(*m));
	json_object_foreach(ml, k, v)
		add_req(m, k, SL_LM_IN, json_string_value(v), (const char *)NULL);
	if (!list)
		list = json_object_get(j, "match_expressions");
	json_array_foreach(list, i, r) {
		const char *op = json_string_value(json_object_get(r, "operator"));
		json_t *vals = json_object_get(r, "values"), *x;
		struct sl_lm_requirement *req;
		size_t n;

		add_req(m, json_string_value(json_object_get(r, "key")),
			!strcmp(op, "In") ? SL_LM_IN : !strcmp(op, "NotIn") ? SL_LM_NOT_IN :
			!strcmp(op, "Exists") ? SL_LM_EXISTS : SL_LM_DOES_NOT_EXIST,
			(const char *)NULL);
		assert_true(!strcmp(op, "In") || !strcmp(op, "NotIn") || !strcmp(op, "Exists") ||
			    !strcmp(op, "DoesNotExist"));
		req = &m->reqs[m->n_reqs - 1];
		req->n_values = json_array_size(vals);
		req->values = req->n_values ? calloc(req->n_values, sizeof(char *)) : NULL;
		json_array_foreach(vals, n, x)
			req->values[n] = xstrdup(json_string_value(x));
	}
	if (expr) {
		struct sl_lm_expr e;

		assert_int_equal(expr_from_json(expr, &e), 0);
		set_expr(m, e);
	}
}

static void test_aimd_label_matcher_vectors(void **state)
{
	json_t *root = load_vectors("aimd.json");
	json_t *vec = json_object_get(root, "label_matcher"), *row;
	size_t idx;

	(void)state;
	assert_true(json_array_size(vec) >= 13);
	json_array_foreach(vec, idx, row) {
		const char *name = json_string_value(json_object_get(row, "name"));
		struct sl_labels l = SL_LABELS_INIT;
		struct sl_label_matcher m, c;
		const char *k;
		json_t *v;
		bool want = json_is_true(json_object_get(row, "result"));

		json_object_foreach(json_object_get(row, "labels"), k, v)
			assert_int_equal(sl_labels_set(&l, k, json_string_value(v)), 0);
		matcher_from_json(json_object_get(row, "matcher"), &m);
		if (sl_label_matcher_eval(&m, &l) != want)
			fail_msg("vector \"%s\": want %s", name, want ? "true" : "false");
		/* A deep copy agrees. */
		assert_int_equal(sl_label_matcher_copy(&c, &m), 0);
		sl_label_matcher_free(&m);
		if (sl_label_matcher_eval(&c, &l) != want)
			fail_msg("vector \"%s\" (copy): want %s", name, want ? "true" : "false");
		sl_label_matcher_free(&c);
		sl_labels_free(&l);
	}
	json_decref(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_labels_set_get_copy_sort),
		cmocka_unit_test(test_match_labels),
		cmocka_unit_test(test_in_notin),
		cmocka_unit_test(test_exists_does_not_exist),
		cmocka_unit_test(test_empty_matcher_and_and),
		cmocka_unit_test(test_expr_leaves),
		cmocka_unit_test(test_expr_all_any_not),
		cmocka_unit_test(test_regex_search_semantics),
		cmocka_unit_test(test_regex_asm_example),
		cmocka_unit_test(test_regex_pathological),
		cmocka_unit_test(test_regex_compile_errors),
		cmocka_unit_test(test_regex_uncompiled_is_compiled_on_the_fly),
		cmocka_unit_test(test_copy_and_free),
		cmocka_unit_test(test_visit),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_aimd_label_matcher_vectors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
