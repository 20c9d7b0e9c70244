// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Connection labels and label matchers (Aperture selectors/selector.go and multi-matcher.go), pure.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "lib/labels.h"

#include <errno.h>
#include <pcre2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- label sets ---------------------------------------------------------- */

static struct sl_label *find(const struct sl_labels *l, const char *key)
{
	for (size_t i = 0; i < l->count; i++)
		if (!strcmp(l->items[i].key, key))
			return &l->items[i];
	return NULL;
}

int sl_labels_set(struct sl_labels *l, const char *key, const char *value)
{
	struct sl_label *it;
	char *v;

	if (!l || !key)
		return -EINVAL;
	v = strdup(value ? value : "");
	if (!v)
		return -ENOMEM;
	it = find(l, key);
	if (it) {
		free(it->value);
		it->value = v;
		return 0;
	}
	if (l->count == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		struct sl_label *items = realloc(l->items, cap * sizeof(*items));

		if (!items) {
			free(v);
			return -ENOMEM;
		}
		l->items = items;
		l->cap = cap;
	}
	it = &l->items[l->count];
	it->key = strdup(key);
	if (!it->key) {
		free(v);
		return -ENOMEM;
	}
	it->value = v;
	l->count++;
	return 0;
}

const char *sl_labels_get(const struct sl_labels *l, const char *key)
{
	const struct sl_label *it;

	if (!l || !key)
		return NULL;
	it = find(l, key);
	return it ? it->value : NULL;
}

void sl_labels_clear(struct sl_labels *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->count; i++) {
		free(l->items[i].key);
		free(l->items[i].value);
	}
	l->count = 0;
}

void sl_labels_free(struct sl_labels *l)
{
	if (!l)
		return;
	sl_labels_clear(l);
	free(l->items);
	l->items = NULL;
	l->cap = 0;
}

int sl_labels_copy(struct sl_labels *dst, const struct sl_labels *src)
{
	for (size_t i = 0; i < src->count; i++) {
		int err = sl_labels_set(dst, src->items[i].key, src->items[i].value);

		if (err) {
			sl_labels_free(dst);
			return err;
		}
	}
	return 0;
}

static int cmp_label(const void *a, const void *b)
{
	return strcmp(((const struct sl_label *)a)->key, ((const struct sl_label *)b)->key);
}

void sl_labels_sort(struct sl_labels *l)
{
	if (l && l->count > 1)
		qsort(l->items, l->count, sizeof(*l->items), cmp_label);
}

/* ---- regexes ------------------------------------------------------------- */

#ifndef PCRE2_MATCH_INVALID_UTF
#define PCRE2_MATCH_INVALID_UTF 0
#endif

int sl_lm_compile_regex(struct sl_lm_expr *e, char *err, size_t err_len)
{
	pcre2_code *re;
	int code;
	PCRE2_SIZE off;

	if (err && err_len)
		err[0] = '\0';
	if (!e || !e->regex) {
		if (err && err_len)
			snprintf(err, err_len, "no regex");
		return -EINVAL;
	}
	/* Label values are mostly ASCII; UTF lets `.` span a multibyte
	 * character, and MATCH_INVALID_UTF keeps a stray byte from turning
	 * every match into an error.  DOLLAR_ENDONLY: `$` is the end of the
	 * value, as in Go's RE2 (Aperture's), not also before a final
	 * newline, so ^Safari$ does not select "Safari\n" (issue 27). */
	re = pcre2_compile((PCRE2_SPTR)e->regex, PCRE2_ZERO_TERMINATED,
			   PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | PCRE2_DOLLAR_ENDONLY, &code, &off, NULL);
	if (!re) {
		if (err && err_len) {
			PCRE2_UCHAR msg[256];

			if (pcre2_get_error_message(code, msg, sizeof(msg)) < 0)
				snprintf((char *)msg, sizeof(msg), "error %d", code);
			snprintf(err, err_len, "%s at offset %zu", (const char *)msg, (size_t)off);
		}
		return -EINVAL;
	}
	/* JIT when the platform has it; the interpreter otherwise. */
	(void)pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
	if (e->re)
		pcre2_code_free(e->re);
	e->re = re;
	return 0;
}

/* Unanchored search.  Any error (match or depth limit, JIT stack, bad
 * UTF, out of memory) is "no match". */
static bool regex_search(const pcre2_code *re, const char *subject)
{
	pcre2_match_context *mctx;
	pcre2_match_data *md;
	int rc = -1;

	mctx = pcre2_match_context_create(NULL);
	md = pcre2_match_data_create(1, NULL);
	if (mctx && md) {
		pcre2_set_match_limit(mctx, SL_REGEX_MATCH_LIMIT);
		pcre2_set_depth_limit(mctx, SL_REGEX_DEPTH_LIMIT);
		rc = pcre2_match(re, (PCRE2_SPTR)subject, strlen(subject), 0, 0, md, mctx);
	}
	pcre2_match_data_free(md);
	pcre2_match_context_free(mctx);
	/* rc == 0: matched, but the ovector was too small for the groups. */
	return rc >= 0;
}

static bool expr_matches(const struct sl_lm_expr *e, const char *value)
{
	struct sl_lm_expr tmp;
	bool hit;

	if (e->re)
		return regex_search(e->re, value);
	/* Not compiled by the caller: compile for this call only. */
	if (!e->regex)
		return false;
	memset(&tmp, 0, sizeof(tmp));
	tmp.regex = e->regex;
	if (sl_lm_compile_regex(&tmp, NULL, 0))
		return false;
	hit = regex_search(tmp.re, value);
	pcre2_code_free(tmp.re);
	return hit;
}

/* ---- evaluation ---------------------------------------------------------- */

static bool in_values(const struct sl_lm_requirement *r, const char *v)
{
	for (size_t i = 0; i < r->n_values; i++)
		if (r->values[i] && !strcmp(r->values[i], v))
			return true;
	return false;
}

static bool req_eval(const struct sl_lm_requirement *r, const struct sl_labels *l)
{
	const char *v = sl_labels_get(l, r->key);

	switch (r->op) {
	case SL_LM_IN:
		return v && in_values(r, v);
	case SL_LM_NOT_IN:
		return !(v && in_values(r, v));
	case SL_LM_EXISTS:
		return v != NULL;
	case SL_LM_DOES_NOT_EXIST:
		return v == NULL;
	}
	return false;
}

bool sl_lm_expr_eval(const struct sl_lm_expr *e, const struct sl_labels *l)
{
	const char *v;

	if (!e)
		return true;
	switch (e->kind) {
	case SL_LE_ALL:
		for (size_t i = 0; i < e->n_children; i++)
			if (!sl_lm_expr_eval(&e->children[i], l))
				return false;
		return true;
	case SL_LE_ANY:
		for (size_t i = 0; i < e->n_children; i++)
			if (sl_lm_expr_eval(&e->children[i], l))
				return true;
		return false;
	case SL_LE_NOT:
		/* A malformed `not` without its child matches nothing. */
		return e->n_children >= 1 && !sl_lm_expr_eval(&e->children[0], l);
	case SL_LE_EQUALS:
		v = e->label ? sl_labels_get(l, e->label) : NULL;
		return v && e->value && !strcmp(v, e->value);
	case SL_LE_EXISTS:
		return e->label && sl_labels_get(l, e->label) != NULL;
	case SL_LE_MATCHES:
		v = e->label ? sl_labels_get(l, e->label) : NULL;
		return v && expr_matches(e, v);
	}
	return false;
}

bool sl_label_matcher_eval(const struct sl_label_matcher *m, const struct sl_labels *l)
{
	if (!m)
		return true;
	for (size_t i = 0; i < m->n_reqs; i++)
		if (!req_eval(&m->reqs[i], l))
			return false;
	return !m->expr || sl_lm_expr_eval(m->expr, l);
}

/* ---- ownership ----------------------------------------------------------- */

static void req_free(struct sl_lm_requirement *r)
{
	free(r->key);
	for (size_t i = 0; i < r->n_values; i++)
		free(r->values[i]);
	free(r->values);
	memset(r, 0, sizeof(*r));
}

void sl_lm_expr_free(struct sl_lm_expr *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->n_children; i++)
		sl_lm_expr_free(&e->children[i]);
	free(e->children);
	free(e->label);
	free(e->value);
	free(e->regex);
	if (e->re)
		pcre2_code_free(e->re);
	memset(e, 0, sizeof(*e));
}

void sl_label_matcher_free(struct sl_label_matcher *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n_reqs; i++)
		req_free(&m->reqs[i]);
	free(m->reqs);
	if (m->expr) {
		sl_lm_expr_free(m->expr);
		free(m->expr);
	}
	memset(m, 0, sizeof(*m));
}

static int dup_str(char **dst, const char *src)
{
	*dst = NULL;
	if (!src)
		return 0;
	*dst = strdup(src);
	return *dst ? 0 : -ENOMEM;
}

static int req_copy(struct sl_lm_requirement *d, const struct sl_lm_requirement *s)
{
	memset(d, 0, sizeof(*d));
	d->op = s->op;
	if (dup_str(&d->key, s->key))
		goto nomem;
	if (s->n_values) {
		d->values = calloc(s->n_values, sizeof(*d->values));
		if (!d->values)
			goto nomem;
		for (size_t i = 0; i < s->n_values; i++) {
			d->n_values = i + 1;
			if (dup_str(&d->values[i], s->values[i]))
				goto nomem;
		}
	}
	return 0;
nomem:
	req_free(d);
	return -ENOMEM;
}

/* On failure d is left empty (freed). */
static int expr_copy(struct sl_lm_expr *d, const struct sl_lm_expr *s)
{
	int err = -ENOMEM;

	memset(d, 0, sizeof(*d));
	d->kind = s->kind;
	if (dup_str(&d->label, s->label) || dup_str(&d->value, s->value) ||
	    dup_str(&d->regex, s->regex))
		goto fail;
	if (s->n_children) {
		d->children = calloc(s->n_children, sizeof(*d->children));
		if (!d->children)
			goto fail;
		for (size_t i = 0; i < s->n_children; i++) {
			err = expr_copy(&d->children[i], &s->children[i]);
			if (err)
				goto fail;
			d->n_children = i + 1;
		}
	}
	if (s->re) {
		err = sl_lm_compile_regex(d, NULL, 0);
		if (err)
			goto fail;
	}
	return 0;
fail:
	sl_lm_expr_free(d);
	return err;
}

int sl_label_matcher_copy(struct sl_label_matcher *dst, const struct sl_label_matcher *src)
{
	int err = -ENOMEM;

	memset(dst, 0, sizeof(*dst));
	if (src->n_reqs) {
		dst->reqs = calloc(src->n_reqs, sizeof(*dst->reqs));
		if (!dst->reqs)
			goto fail;
		for (size_t i = 0; i < src->n_reqs; i++) {
			err = req_copy(&dst->reqs[i], &src->reqs[i]);
			if (err)
				goto fail;
			dst->n_reqs = i + 1;
		}
	}
	if (src->expr) {
		dst->expr = malloc(sizeof(*dst->expr));
		if (!dst->expr) {
			err = -ENOMEM;
			goto fail;
		}
		err = expr_copy(dst->expr, src->expr);
		if (err) {
			free(dst->expr);
			dst->expr = NULL;
			goto fail;
		}
	}
	return 0;
fail:
	sl_label_matcher_free(dst);
	return err;
}

/* ---- visit --------------------------------------------------------------- */

static void expr_visit(const struct sl_lm_expr *e, sl_lm_visit_fn fn, void *ctx)
{
	struct sl_lm_ref ref = { 0 };

	switch (e->kind) {
	case SL_LE_ALL:
	case SL_LE_ANY:
	case SL_LE_NOT:
		for (size_t i = 0; i < e->n_children; i++)
			expr_visit(&e->children[i], fn, ctx);
		return;
	case SL_LE_EQUALS:
		ref.values = (const char *const *)&e->value;
		ref.n_values = e->value ? 1 : 0;
		break;
	case SL_LE_EXISTS:
		break;
	case SL_LE_MATCHES:
		ref.regex = true;
		break;
	}
	if (!e->label)
		return;
	ref.key = e->label;
	if (!ref.n_values)
		ref.values = NULL;
	fn(&ref, ctx);
}

void sl_label_matcher_visit(const struct sl_label_matcher *m, sl_lm_visit_fn fn, void *ctx)
{
	if (!m || !fn)
		return;
	for (size_t i = 0; i < m->n_reqs; i++) {
		const struct sl_lm_requirement *r = &m->reqs[i];
		struct sl_lm_ref ref = { .key = r->key };

		if ((r->op == SL_LM_IN || r->op == SL_LM_NOT_IN) && r->n_values) {
			ref.values = (const char *const *)r->values;
			ref.n_values = r->n_values;
		}
		fn(&ref, ctx);
	}
	if (m->expr)
		expr_visit(m->expr, fn, ctx);
}

/* ---- format -------------------------------------------------------------- */

struct out {
	char *buf;
	size_t size, len; /* len counts what would have been written */
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(o->len < o->size ? o->buf + o->len : NULL,
		      o->len < o->size ? o->size - o->len : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += (size_t)n;
}

static void put_value(struct out *o, const char *v)
{
	if (!v || !*v)
		put(o, "\"\"");
	else
		put(o, "%s", v);
}

static void put_list(struct out *o, char *const *values, size_t n)
{
	put(o, "(");
	for (size_t i = 0; i < n; i++) {
		if (i)
			put(o, ",");
		put_value(o, values[i]);
	}
	put(o, ")");
}

static const char *nz(const char *s)
{
	return s ? s : "?";
}

static void format_expr(struct out *o, const struct sl_lm_expr *e)
{
	switch (e->kind) {
	case SL_LE_ALL:
	case SL_LE_ANY:
	case SL_LE_NOT:
		put(o, "%s(", e->kind == SL_LE_ALL ? "all" : e->kind == SL_LE_ANY ? "any" : "not");
		for (size_t i = 0; i < e->n_children; i++) {
			if (i)
				put(o, ", ");
			format_expr(o, &e->children[i]);
		}
		put(o, ")");
		break;
	case SL_LE_EQUALS:
		put(o, "%s=", nz(e->label));
		put_value(o, e->value);
		break;
	case SL_LE_EXISTS:
		put(o, "%s", nz(e->label));
		break;
	case SL_LE_MATCHES:
		put(o, "%s=~/%s/", nz(e->label), e->regex ? e->regex : "");
		break;
	}
}

int sl_label_matcher_format(const struct sl_label_matcher *m, char *buf, size_t size)
{
	struct out o = { .buf = buf, .size = size };

	if (buf && size)
		buf[0] = '\0';
	if (!m || (!m->n_reqs && !m->expr)) {
		put(&o, "*");
		return (int)o.len;
	}
	for (size_t i = 0; i < m->n_reqs; i++) {
		const struct sl_lm_requirement *r = &m->reqs[i];

		if (i)
			put(&o, ", ");
		switch (r->op) {
		case SL_LM_IN:
			if (r->n_values == 1) {
				put(&o, "%s=", nz(r->key));
				put_value(&o, r->values[0]);
			} else {
				put(&o, "%s in ", nz(r->key));
				put_list(&o, r->values, r->n_values);
			}
			break;
		case SL_LM_NOT_IN:
			put(&o, "%s notin ", nz(r->key));
			put_list(&o, r->values, r->n_values);
			break;
		case SL_LM_EXISTS:
			put(&o, "%s", nz(r->key));
			break;
		case SL_LM_DOES_NOT_EXIST:
			put(&o, "!%s", nz(r->key));
			break;
		}
	}
	if (m->expr) {
		if (m->n_reqs)
			put(&o, ", ");
		format_expr(&o, m->expr);
	}
	return (int)o.len;
}
