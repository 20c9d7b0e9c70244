// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Configuration loader: connection labels.
 *
 *  - kind: ConnectionLabels (spec.rules[]: sources, destinations, ports ->
 *    labels), the only source of labels besides the built-ins;
 *  - the two matcher dialects that read them: the Kubernetes LabelSelector
 *    of FlowSchema `kind: Labels` subjects and the Aperture LabelMatcher of
 *    AverageLatencySchedulingPolicy selectors and workloads;
 *  - the warning for a matcher label that nothing sets.
 */
#include "config/decode.h"
#include "lib/grow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const builtin_labels[] = {
	SL_LABEL_SRC_IP, SL_LABEL_SRC_PORT, SL_LABEL_DST_IP, SL_LABEL_DST_PORT,
	SL_LABEL_PROTO, SL_LABEL_IP_VERSION, SL_LABEL_IFACE,
};

#define BUILTIN_LIST "src.ip, src.port, dst.ip, dst.port, proto, ip.version, iface"

bool cd_is_builtin_label(const char *key)
{
	for (size_t i = 0; i < ARRAY_SIZE(builtin_labels); i++)
		if (!strcmp(key, builtin_labels[i]))
			return true;
	return false;
}

static bool alnum(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9');
}

static bool dns_subdomain(const char *s, size_t len)
{
	size_t start = 0;

	if (!len || len > 253)
		return false;
	for (size_t i = 0; i <= len; i++) {
		if (i == len || s[i] == '.') {
			if (i == start || s[start] == '-' || s[i - 1] == '-')
				return false;
			start = i + 1;
			continue;
		}
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '-'))
			return false;
	}
	return true;
}

const char *cd_label_key_problem(const char *key)
{
	const char *slash = strchr(key, '/'), *name = key;
	size_t len;

	if (!*key)
		return "must not be empty";
	if (slash) {
		if (strchr(slash + 1, '/'))
			return "may contain at most one '/' (prefix/name)";
		if (!dns_subdomain(key, (size_t)(slash - key)))
			return "has an invalid prefix: before the '/' use a DNS subdomain (lowercase letters, digits, '-' and '.') of at most 253 characters";
		name = slash + 1;
	}
	len = strlen(name);
	if (!len || len > 63)
		return "must have a name of 1..63 characters (after an optional 'prefix/')";
	for (size_t i = 0; i < len; i++)
		if (!alnum(name[i]) && name[i] != '-' && name[i] != '_' && name[i] != '.')
			return "may contain only letters, digits, '-', '_' and '.' (after an optional 'prefix/')";
	if (!alnum(name[0]) || !alnum(name[len - 1]))
		return "must start and end with a letter or digit";
	return NULL;
}

/* A label key at node k: reports and returns NULL if invalid. */
static const char *label_key(struct ctx *c, const struct sl_ynode *k)
{
	const char *key, *problem;
	QBUF;

	if (!cd_get_string(c, k, &key))
		return NULL;
	if ((problem = cd_label_key_problem(key))) {
		cd_err(c, k, "label key '%s' %s", Q(k), problem);
		return NULL;
	}
	return key;
}

/* ---- matcher label references ---------------------------------------------- */

/* L->refs is kept sorted by key: one entry (the first use) per key. */
void cd_note_label_ref(struct load *L, const char *key, const struct sl_ynode *k)
{
	struct ctx *c = L->c;
	struct label_ref *r;
	size_t lo = 0, hi = L->n_refs;

	if (cd_is_builtin_label(key))
		return;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int cmp = strcmp(L->refs[mid].key, key);

		if (!cmp)
			return; /* one warning per key is enough */
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (L->n_refs >= CD_MAX_LABEL_REFS)
		return; /* enough to point at */
	if (sl_grow((void **)&L->refs, &L->refs_cap, L->n_refs + 1, sizeof(*L->refs))) {
		cd_oom(c);
		return;
	}
	memmove(&L->refs[lo + 1], &L->refs[lo], (L->n_refs - lo) * sizeof(*L->refs));
	r = &L->refs[lo];
	*r = (struct label_ref){
		.key = strdup(key), .object = strdup(c->object),
		.path = strdup(c->path), .line = k->line, .column = k->column,
	};
	if (!r->key || !r->object || !r->path) {
		free(r->key);
		free(r->object);
		free(r->path);
		memmove(&L->refs[lo], &L->refs[lo + 1], (L->n_refs - lo) * sizeof(*L->refs));
		cd_oom(c);
		return;
	}
	L->n_refs++;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void cd_check_label_refs(struct load *L)
{
	struct ctx *c = L->c;
	const struct sl_config *cfg = L->cfg;
	const char **known = NULL;
	size_t n_known = 0, cap = 0;

	if (!L->n_refs)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(builtin_labels); i++) {
		if (sl_grow((void **)&known, &cap, n_known + 1, sizeof(*known)))
			goto oom;
		known[n_known++] = builtin_labels[i];
	}
	for (size_t o = 0; o < cfg->n_label_objects; o++)
		for (size_t r = 0; r < cfg->label_objects[o].n_rules; r++) {
			const struct sl_labels *ls = &cfg->label_objects[o].rules[r].labels;

			for (size_t k = 0; k < ls->count; k++) {
				if (sl_grow((void **)&known, &cap, n_known + 1, sizeof(*known)))
					goto oom;
				known[n_known++] = ls->items[k].key;
			}
		}
	qsort(known, n_known, sizeof(*known), cmp_str);
	for (size_t i = 0; i < L->n_refs; i++) {
		const struct label_ref *ref = &L->refs[i];
		const char *sug = NULL;

		if (bsearch(&ref->key, known, n_known, sizeof(*known), cmp_str))
			continue;
		snprintf(c->object, sizeof(c->object), "%s", ref->object);
		cd_path_set(c, ref->path);
		if (n_known <= 4096) /* a suggestion is worth a bounded search */
			sug = cd_closest(ref->key, known, n_known);
		cd_err_at(c, SL_SEV_WARNING, ref->line, ref->column,
			  "label '%s' is not built-in (" BUILTIN_LIST ") and no ConnectionLabels object sets it, so no connection has it%s%s%s",
			  ref->key, sug ? "; did you mean '" : "", sug ? sug : "",
			  sug ? "'?" : "");
	}
	free(known);
	return;
oom:
	free(known);
	cd_oom(c);
}

/* ---- requirements (matchLabels/match_labels, matchExpressions/match_list) --- */

static const struct enumval lm_ops[] = {
	{ "In", SL_LM_IN }, { "NotIn", SL_LM_NOT_IN }, { "Exists", SL_LM_EXISTS },
	{ "DoesNotExist", SL_LM_DOES_NOT_EXIST }, { NULL, 0 },
};

static const char *op_name(enum sl_lm_op op)
{
	for (size_t i = 0; lm_ops[i].name; i++)
		if (lm_ops[i].value == (int)op)
			return lm_ops[i].name;
	return "?";
}

static int push_req(struct sl_label_matcher *m, size_t *cap,
		    const struct sl_lm_requirement *r)
{
	if (sl_grow((void **)&m->reqs, cap, m->n_reqs + 1, sizeof(*m->reqs)))
		return -ENOMEM;
	m->reqs[m->n_reqs++] = *r;
	return 0;
}

static void req_release(struct sl_lm_requirement *r)
{
	free(r->key);
	for (size_t i = 0; i < r->n_values; i++)
		free(r->values[i]);
	free(r->values);
	memset(r, 0, sizeof(*r));
}

/* {k: v, ...}: each pair becomes `k In [v]`. */
static void decode_match_labels(struct load *L, const struct sl_ynode *map,
				struct sl_label_matcher *m, size_t *cap)
{
	struct ctx *c = L->c;

	bool *dup;

	if (!cd_expect_map(c, map) || !cd_budget(c, map, map->n_pairs))
		return;
	if (!(dup = cd_dup_keys(c, map)))
		return;
	for (size_t i = 0; i < map->n_pairs; i++) {
		const struct sl_ynode *k = map->pairs[i].key, *v = map->pairs[i].value;
		struct sl_lm_requirement r = { .op = SL_LM_IN };
		const char *key, *val;
		size_t old;
		QBUF;

		if (k->type != SL_Y_STR) {
			cd_err(c, k, "label keys must be strings, got %s", cd_describe(k).s);
			continue;
		}
		if (dup[i])
			continue;
		old = cd_path_push(c, Q(k));
		key = label_key(c, k);
		if (!cd_get_label_value(c, v, &val) || !key)
			goto next;
		cd_note_label_ref(L, key, k);
		r.key = strdup(key);
		r.values = calloc(1, sizeof(*r.values));
		if (r.values)
			r.values[0] = strdup(val);
		r.n_values = 1;
		if (!r.key || !r.values || !r.values[0] || push_req(m, cap, &r)) {
			if (r.values && !r.values[0])
				r.n_values = 0;
			req_release(&r);
			cd_oom(c);
		}
next:
		cd_path_pop(c, old);
	}
	free(dup);
}

enum { RQ_KEY, RQ_OP, RQ_VALUES, RQ_N };
static const struct fdesc req_fields[RQ_N] = {
	[RQ_KEY] = F_CUSTOM("key", .required = true, .type = "label name"),
	[RQ_OP] = F_CUSTOM("operator", .required = true, .type = "In, NotIn, Exists or DoesNotExist"),
	[RQ_VALUES] = F_CUSTOM("values", .type = "list of strings (In, NotIn)"),
};

/* {key, operator, values} into *out (zeroed on failure). */
static bool decode_requirement(struct load *L, const struct sl_ynode *n,
			       struct sl_lm_requirement *out, bool aperture)
{
	struct ctx *c = L->c;
	struct fhit h[RQ_N];
	const struct sl_ynode *vals;
	const char *key = NULL;
	int op = -1;
	bool ok = true;
	size_t old;

	memset(out, 0, sizeof(*out));
	if (!cd_decode_fields(c, n, req_fields, RQ_N, NULL, h))
		return false;
	if (h[RQ_KEY].value) {
		old = cd_path_push(c, "key");
		key = label_key(c, h[RQ_KEY].value);
		if (key)
			cd_note_label_ref(L, key, h[RQ_KEY].value);
		cd_path_pop(c, old);
	}
	if (h[RQ_OP].value) {
		const struct sl_ynode *v = h[RQ_OP].value;

		old = cd_path_push(c, "operator");
		if (aperture && v->type == SL_Y_STR && !strcmp(v->str, "DoesNotExists")) {
			/* Aperture's own validator spells it so. */
			cd_warn(c, v, "'DoesNotExists' is read as DoesNotExist");
			op = SL_LM_DOES_NOT_EXIST;
		} else if (!cd_get_enum(c, v, lm_ops, &op)) {
			op = -1;
		}
		cd_path_pop(c, old);
	}
	vals = h[RQ_VALUES].value;
	if (vals) {
		old = cd_path_push(c, "values");
		if (!cd_expect_seq(c, vals, "label values") || !cd_budget(c, vals, vals->n_items)) {
			ok = false;
			vals = NULL;
		}
		cd_path_pop(c, old);
	}
	if (op == SL_LM_IN || op == SL_LM_NOT_IN) {
		if (!vals || !vals->n_items) {
			old = cd_path_push(c, "values");
			cd_err(c, vals ? vals : h[RQ_OP].value,
			       "operator %s needs a non-empty list of values", op_name((enum sl_lm_op)op));
			cd_path_pop(c, old);
			ok = false;
		}
	} else if (op >= 0 && vals && vals->n_items) {
		old = cd_path_push(c, "values");
		cd_err(c, vals, "operator %s takes no values; remove them",
		       op_name((enum sl_lm_op)op));
		cd_path_pop(c, old);
		ok = false;
	}
	if (vals && vals->n_items) {
		out->values = calloc(vals->n_items, sizeof(*out->values));
		if (!out->values) {
			cd_oom(c);
			return false;
		}
		for (size_t i = 0; i < vals->n_items; i++) {
			const char *s;

			old = cd_path_push(c, "values");
			cd_path_push_index(c, i);
			if (cd_get_label_value(c, vals->items[i], &s)) {
				if (!(out->values[out->n_values] = strdup(s)))
					cd_oom(c);
				else
					out->n_values++;
			} else {
				ok = false;
			}
			cd_path_pop(c, old);
		}
	}
	if (!key || op < 0 || !ok) {
		req_release(out);
		return false;
	}
	out->op = (enum sl_lm_op)op;
	if (!(out->key = strdup(key))) {
		req_release(out);
		cd_oom(c);
		return false;
	}
	return true;
}

static void decode_requirements(struct load *L, const struct sl_ynode *seq,
				struct sl_label_matcher *m, size_t *cap,
				bool aperture)
{
	struct ctx *c = L->c;

	if (!cd_expect_seq(c, seq, "requirements ({key, operator, values})") ||
	    !cd_budget(c, seq, seq->n_items))
		return;
	for (size_t i = 0; i < seq->n_items; i++) {
		struct sl_lm_requirement r;
		size_t old = cd_path_push_index(c, i);

		if (decode_requirement(L, seq->items[i], &r, aperture) &&
		    push_req(m, cap, &r)) {
			req_release(&r);
			cd_oom(c);
		}
		cd_path_pop(c, old);
	}
}

/* ---- Kubernetes LabelSelector ---------------------------------------------- */

enum { LS_MATCH_LABELS, LS_MATCH_EXPRESSIONS, LS_N };
static const struct fdesc selector_fields[LS_N] = {
	[LS_MATCH_LABELS] = F_CUSTOM("matchLabels"),
	[LS_MATCH_EXPRESSIONS] = F_CUSTOM("matchExpressions"),
};

void cd_decode_label_selector(struct load *L, const struct sl_ynode *v,
			      struct sl_label_matcher *m)
{
	struct ctx *c = L->c;
	struct fhit h[LS_N];
	size_t cap = 0, old;

	memset(m, 0, sizeof(*m));
	if (!cd_decode_fields(c, v, selector_fields, LS_N, NULL, h))
		return;
	if (h[LS_MATCH_LABELS].value) {
		old = cd_path_push(c, "matchLabels");
		decode_match_labels(L, h[LS_MATCH_LABELS].value, m, &cap);
		cd_path_pop(c, old);
	}
	if (h[LS_MATCH_EXPRESSIONS].value) {
		old = cd_path_push(c, "matchExpressions");
		decode_requirements(L, h[LS_MATCH_EXPRESSIONS].value, m, &cap, false);
		cd_path_pop(c, old);
	}
}

/* ---- Aperture LabelMatcher ---------------------------------------------------- */

enum { EX_NOT, EX_ALL, EX_ANY, EX_EXISTS, EX_EQUALS, EX_MATCHES, EX_N };
static const struct fdesc expr_fields[EX_N] = {
	[EX_NOT] = F_CUSTOM("not"),
	[EX_ALL] = F_CUSTOM("all"),
	[EX_ANY] = F_CUSTOM("any"),
	[EX_EXISTS] = F_CUSTOM("label_exists"),
	[EX_EQUALS] = F_CUSTOM("label_equals"),
	[EX_MATCHES] = F_CUSTOM("label_matches"),
};

static const struct fdesc list_fields[] = { F_CUSTOM("of") };

enum { EQ_LABEL, EQ_VALUE, EQ_N };
static const struct fdesc equals_fields[EQ_N] = {
	[EQ_LABEL] = F_CUSTOM("label", .required = true),
	[EQ_VALUE] = F_CUSTOM("value"),
};

enum { MA_LABEL, MA_REGEX, MA_N };
static const struct fdesc matches_fields[MA_N] = {
	[MA_LABEL] = F_CUSTOM("label", .required = true),
	[MA_REGEX] = F_CUSTOM("regex", .required = true),
};

#define EXPR_VARIANTS "not, all, any, label_exists, label_equals, label_matches"

static bool decode_expr(struct load *L, const struct sl_ynode *n,
			struct sl_lm_expr *e, unsigned depth);

/* {of: [expr, ...]} */
static bool decode_expr_list(struct load *L, const struct sl_ynode *n,
			     struct sl_lm_expr *e, unsigned depth)
{
	struct ctx *c = L->c;
	struct fhit h[1];
	const struct sl_ynode *of;
	bool ok = true;
	size_t old;

	if (!cd_decode_fields(c, n, list_fields, 1, NULL, h))
		return false;
	if (!(of = h[0].value))
		return true; /* empty: all -> true, any -> false */
	old = cd_path_push(c, "of");
	if (!cd_expect_seq(c, of, "expressions") || !cd_budget(c, of, of->n_items)) {
		cd_path_pop(c, old);
		return false;
	}
	if (of->n_items) {
		e->children = calloc(of->n_items, sizeof(*e->children));
		if (!e->children) {
			cd_oom(c);
			cd_path_pop(c, old);
			return false;
		}
	}
	for (size_t i = 0; i < of->n_items; i++) {
		size_t o2 = cd_path_push_index(c, i);

		if (decode_expr(L, of->items[i], &e->children[e->n_children], depth + 1))
			e->n_children++;
		else
			ok = false;
		cd_path_pop(c, o2);
	}
	cd_path_pop(c, old);
	return ok;
}

static bool dup_into(struct ctx *c, char **dst, const char *s)
{
	if ((*dst = strdup(s)))
		return true;
	cd_oom(c);
	return false;
}

/* One {label, regex} of label_matches into e (SL_LE_MATCHES). */
static bool decode_matches(struct load *L, const struct sl_ynode *n, struct sl_lm_expr *e)
{
	struct ctx *c = L->c;
	struct fhit mh[MA_N];
	const char *key = NULL, *re = NULL;
	char why[256];
	size_t o2;

	e->kind = SL_LE_MATCHES;
	if (!cd_decode_fields(c, n, matches_fields, MA_N, NULL, mh))
		return false;
	if (mh[MA_LABEL].value) {
		o2 = cd_path_push(c, "label");
		key = label_key(c, mh[MA_LABEL].value);
		if (key)
			cd_note_label_ref(L, key, mh[MA_LABEL].value);
		cd_path_pop(c, o2);
	}
	if (mh[MA_REGEX].value) {
		const struct sl_ynode *rv = mh[MA_REGEX].value;
		QBUF;

		o2 = cd_path_push(c, "regex");
		/* compiling (and JIT-compiling) costs more than a node */
		if (cd_get_string(c, rv, &re) && !*re) {
			cd_err(c, rv, "must not be empty (an empty regex matches every value; use label_exists)");
			re = NULL;
		} else if (re && !cd_budget(c, rv, 64 + strlen(re) / 8)) {
			re = NULL;
		} else if (re) {
			if (!dup_into(c, &e->regex, re)) {
				re = NULL;
			} else if (sl_lm_compile_regex(e, why, sizeof(why))) {
				cd_err(c, rv, "regex '%s' does not compile: %s", Q(rv), why);
				re = NULL;
			}
		}
		cd_path_pop(c, o2);
	} else if (mh[MA_REGEX].key) {
		o2 = cd_path_push(c, "regex");
		cd_err(c, mh[MA_REGEX].key, "must not be empty");
		cd_path_pop(c, o2);
	}
	return key && re && dup_into(c, &e->label, key);
}

/* label_matches: one {label, regex}, or (as ASM's reference writes it) a
 * list of them, all of which must match. */
static bool decode_matches_expr(struct load *L, const struct sl_ynode *n, struct sl_lm_expr *e)
{
	struct ctx *c = L->c;
	bool ok = true;

	if (n->type != SL_Y_SEQ)
		return decode_matches(L, n, e);
	e->kind = SL_LE_ALL;
	if (!cd_budget(c, n, n->n_items))
		return false;
	if (n->n_items && !(e->children = calloc(n->n_items, sizeof(*e->children)))) {
		cd_oom(c);
		return false;
	}
	for (size_t i = 0; i < n->n_items; i++) {
		size_t old = cd_path_push_index(c, i);

		memset(&e->children[e->n_children], 0, sizeof(*e->children));
		if (decode_matches(L, n->items[i], &e->children[e->n_children])) {
			e->n_children++;
		} else {
			sl_lm_expr_free(&e->children[e->n_children]);
			ok = false;
		}
		cd_path_pop(c, old);
	}
	if (!n->n_items) {
		cd_err(c, n, "must not be empty: give {label, regex}, or a list of them that must all match");
		ok = false;
	}
	return ok;
}

static bool decode_expr(struct load *L, const struct sl_ynode *n,
			struct sl_lm_expr *e, unsigned depth)
{
	struct ctx *c = L->c;
	struct fhit h[EX_N];
	int which = -1;
	bool ok = false;
	size_t old;

	memset(e, 0, sizeof(*e));
	if (depth > CD_MAX_EXPR_DEPTH) {
		cd_err(c, n, "expressions nest deeper than %d levels", CD_MAX_EXPR_DEPTH);
		return false;
	}
	if (!cd_budget(c, n, 1) || !cd_decode_fields(c, n, expr_fields, EX_N, NULL, h))
		return false;
	/* The first variant in the file counts; every other is an error. */
	for (int i = 0; i < EX_N; i++)
		if (h[i].key && (which < 0 || h[i].key->line < h[which].key->line ||
				 (h[i].key->line == h[which].key->line &&
				  h[i].key->column < h[which].key->column)))
			which = i;
	for (int i = 0; i < EX_N; i++) {
		if (!h[i].key || i == which)
			continue;
		old = cd_path_push(c, expr_fields[i].name);
		cd_err(c, h[i].key,
		       "an expression has exactly one of " EXPR_VARIANTS "; this one also has '%s' (at %s:%u:%u)",
		       expr_fields[which].name, c->file, h[which].key->line,
		       h[which].key->column);
		cd_path_pop(c, old);
		ok = true; /* reported: fail below */
	}
	if (ok)
		return false;
	if (which < 0) {
		/* unknown keys are reported already */
		if (!n->n_pairs)
			cd_err(c, n, "an expression needs exactly one of " EXPR_VARIANTS);
		return false;
	}
	old = cd_path_push(c, expr_fields[which].name);
	if (!h[which].value) {
		cd_err(c, h[which].key, "must not be empty");
		goto out;
	}
	switch (which) {
	case EX_NOT:
		e->kind = SL_LE_NOT;
		e->children = calloc(1, sizeof(*e->children));
		if (!e->children) {
			cd_oom(c);
			break;
		}
		ok = decode_expr(L, h[which].value, &e->children[0], depth + 1);
		if (ok)
			e->n_children = 1;
		break;
	case EX_ALL:
	case EX_ANY:
		e->kind = which == EX_ALL ? SL_LE_ALL : SL_LE_ANY;
		ok = decode_expr_list(L, h[which].value, e, depth);
		break;
	case EX_EXISTS: {
		const char *key = label_key(c, h[which].value);

		e->kind = SL_LE_EXISTS;
		if (key) {
			cd_note_label_ref(L, key, h[which].value);
			ok = dup_into(c, &e->label, key);
		}
		break;
	}
	case EX_EQUALS: {
		struct fhit eh[EQ_N];
		const char *key = NULL, *val = "";
		size_t o2;

		e->kind = SL_LE_EQUALS;
		if (!cd_decode_fields(c, h[which].value, equals_fields, EQ_N, NULL, eh))
			break;
		ok = eh[EQ_LABEL].ok && eh[EQ_VALUE].ok;
		if (eh[EQ_LABEL].value) {
			o2 = cd_path_push(c, "label");
			key = label_key(c, eh[EQ_LABEL].value);
			if (key)
				cd_note_label_ref(L, key, eh[EQ_LABEL].value);
			cd_path_pop(c, o2);
		}
		if (eh[EQ_VALUE].value) {
			o2 = cd_path_push(c, "value");
			if (!cd_get_label_value(c, eh[EQ_VALUE].value, &val))
				ok = false;
			cd_path_pop(c, o2);
		}
		ok = ok && key && dup_into(c, &e->label, key) &&
		     dup_into(c, &e->value, val);
		break;
	}
	case EX_MATCHES:
		ok = decode_matches_expr(L, h[which].value, e);
		break;
	}
out:
	cd_path_pop(c, old);
	if (!ok) {
		sl_lm_expr_free(e);
		memset(e, 0, sizeof(*e));
	}
	return ok;
}

enum { LM_MATCH_LABELS, LM_MATCH_LIST, LM_MATCH_EXPRESSIONS, LM_EXPRESSION, LM_N };
static const struct fdesc matcher_fields[LM_N] = {
	[LM_MATCH_LABELS] = F_CUSTOM("match_labels", .type = "string map: every label equal"),
	[LM_MATCH_LIST] = F_CUSTOM("match_list", .type = "list of {key, operator, values}"),
	[LM_MATCH_EXPRESSIONS] = F_CUSTOM("match_expressions", .type = "deprecated alias of match_list"),
	[LM_EXPRESSION] = F_CUSTOM("expression", .type = "not, all, any, label_exists, label_equals or label_matches"),
};

void cd_decode_label_matcher(struct load *L, const struct sl_ynode *v,
			     struct sl_label_matcher *m)
{
	struct ctx *c = L->c;
	struct fhit h[LM_N];
	size_t cap = 0, old;

	memset(m, 0, sizeof(*m));
	if (!cd_decode_fields(c, v, matcher_fields, LM_N, NULL, h))
		return;
	if (h[LM_MATCH_LABELS].value) {
		old = cd_path_push(c, "match_labels");
		decode_match_labels(L, h[LM_MATCH_LABELS].value, m, &cap);
		cd_path_pop(c, old);
	}
	if (h[LM_MATCH_LIST].value) {
		old = cd_path_push(c, "match_list");
		decode_requirements(L, h[LM_MATCH_LIST].value, m, &cap, true);
		cd_path_pop(c, old);
	}
	if (h[LM_MATCH_EXPRESSIONS].value) {
		/* The deprecated alias counts only without match_list (Aperture selectors/selector.go and multi-matcher.go);
		 * it is still checked. */
		struct sl_label_matcher scratch = { 0 };
		size_t scap = 0;
		bool used = !h[LM_MATCH_LIST].key;

		old = cd_path_push(c, "match_expressions");
		if (!used)
			cd_warn(c, h[LM_MATCH_EXPRESSIONS].key,
				"ignored: match_list is present (match_expressions is its deprecated alias, used only without it)");
		if (!used)
			c->mute_warnings++;
		decode_requirements(L, h[LM_MATCH_EXPRESSIONS].value,
				    used ? m : &scratch, used ? &cap : &scap, true);
		if (!used)
			c->mute_warnings--;
		sl_label_matcher_free(&scratch);
		cd_path_pop(c, old);
	}
	if (h[LM_EXPRESSION].value) {
		old = cd_path_push(c, "expression");
		m->expr = calloc(1, sizeof(*m->expr));
		if (!m->expr) {
			cd_oom(c);
		} else if (!decode_expr(L, h[LM_EXPRESSION].value, m->expr, 1)) {
			free(m->expr);
			m->expr = NULL;
		}
		cd_path_pop(c, old);
	}
}

/* ---- kind: ConnectionLabels ---------------------------------------------------- */

enum { CL_RULES, CL_N };
static const struct fdesc label_object_fields[CL_N] = {
	[CL_RULES] = F_CUSTOM("rules", .required = true, .type = "list of mappings"),
};

enum { LR_SOURCES, LR_DESTINATIONS, LR_PORTS, LR_LABELS, LR_N };
static const struct fdesc label_rule_fields[LR_N] = {
	[LR_SOURCES] = F_CUSTOM("sources", .type = "list of client CIDRs", .dflt = "every client"),
	[LR_DESTINATIONS] = F_CUSTOM("destinations", .type = "list of the host's CIDRs", .dflt = "every address"),
	[LR_PORTS] = F_CUSTOM("ports", .type = "list of ports or ranges", .dflt = "every port"),
	[LR_LABELS] = F_CUSTOM("labels", .required = true, .type = "string map: the labels the connection gets"),
};

static void label_rule_release(struct sl_label_rule *r)
{
	free(r->sources);
	free(r->destinations);
	free(r->ports);
	sl_labels_free(&r->labels);
}

void cd_label_object_release(struct sl_label_object *lo)
{
	for (size_t i = 0; i < lo->n_rules; i++)
		label_rule_release(&lo->rules[i]);
	free(lo->rules);
	free(lo->file);
	memset(lo, 0, sizeof(*lo));
}

static void decode_rule_labels(struct ctx *c, const struct sl_ynode *map,
			       struct sl_labels *out)
{
	if (!cd_expect_map(c, map))
		return;
	if (!map->n_pairs) {
		cd_err(c, map, "must not be empty: a rule gives connections at least one label");
		return;
	}
	if (map->n_pairs > CD_MAX_RULE_LABELS) {
		cd_err(c, map, "%zu labels in one rule; at most %d allowed",
		       map->n_pairs, CD_MAX_RULE_LABELS);
		return;
	}
	if (!cd_budget(c, map, map->n_pairs))
		return;
	bool *dup = cd_dup_keys(c, map);

	if (!dup)
		return;
	for (size_t i = 0; i < map->n_pairs; i++) {
		const struct sl_ynode *k = map->pairs[i].key, *v = map->pairs[i].value;
		const char *key, *val;
		size_t old;
		QBUF;

		if (k->type != SL_Y_STR) {
			cd_err(c, k, "label keys must be strings, got %s", cd_describe(k).s);
			continue;
		}
		if (dup[i])
			continue;
		old = cd_path_push(c, Q(k));
		key = label_key(c, k);
		if (key && cd_is_builtin_label(key)) {
			cd_err(c, k, "'%s' is a built-in label, set from the connection itself (" BUILTIN_LIST "); choose another key",
			       key);
			key = NULL;
		}
		if (!cd_get_label_value(c, v, &val) || !key)
			goto next;
		if (sl_labels_set(out, key, val))
			cd_oom(c);
next:
		cd_path_pop(c, old);
	}
	free(dup);
}

static void decode_label_rule(struct load *L, const struct sl_ynode *n,
			      struct sl_label_rule *r)
{
	struct ctx *c = L->c;
	struct fhit h[LR_N];
	size_t old;

	memset(r, 0, sizeof(*r));
	r->line = n->line;
	r->column = n->column;
	if (!cd_decode_fields(c, n, label_rule_fields, LR_N, NULL, h))
		return;
	if (h[LR_SOURCES].value) {
		old = cd_path_push(c, "sources");
		cd_decode_cidr_list(c, h[LR_SOURCES].value, &r->sources, &r->n_sources,
				    "leave the field out to match any source");
		cd_path_pop(c, old);
	}
	if (h[LR_DESTINATIONS].value) {
		old = cd_path_push(c, "destinations");
		cd_decode_cidr_list(c, h[LR_DESTINATIONS].value, &r->destinations,
				    &r->n_destinations,
				    "leave the field out to match any local address");
		cd_path_pop(c, old);
	}
	if (h[LR_PORTS].value) {
		old = cd_path_push(c, "ports");
		cd_decode_port_list(c, h[LR_PORTS].value, &r->ports, &r->n_ports);
		cd_path_pop(c, old);
	}
	if (h[LR_LABELS].value) {
		old = cd_path_push(c, "labels");
		decode_rule_labels(c, h[LR_LABELS].value, &r->labels);
		cd_path_pop(c, old);
	} else if (h[LR_LABELS].key) {
		old = cd_path_push(c, "labels");
		cd_err(c, h[LR_LABELS].key, "must not be empty: a rule gives connections at least one label");
		cd_path_pop(c, old);
	}
}

void cd_decode_label_object(struct load *L, const struct object *o)
{
	struct ctx *c = L->c;
	struct sl_config *cfg = L->cfg;
	struct sl_label_object *lo;
	struct fhit h[CL_N];
	const struct sl_ynode *rules;
	size_t old;

	cd_register_name(L, KIND_LABELS, o);
	if (sl_grow((void **)&cfg->label_objects, &L->labels_cap, cfg->n_label_objects + 1,
		    sizeof(*cfg->label_objects))) {
		cd_oom(c);
		return;
	}
	lo = &cfg->label_objects[cfg->n_label_objects++];
	memset(lo, 0, sizeof(*lo));
	if (o->name)
		snprintf(lo->name, sizeof(lo->name), "%s", o->name);
	lo->line = o->root->line;
	lo->column = o->root->column;
	if (!(lo->file = strdup(c->file)))
		cd_oom(c);
	if (!o->spec)
		return;
	old = cd_path_push(c, "spec");
	if (!cd_decode_fields(c, o->spec, label_object_fields, CL_N, NULL, h))
		goto out;
	rules = h[CL_RULES].value;
	if (!rules) {
		if (h[CL_RULES].key) {
			cd_path_push(c, "rules");
			cd_warn(c, h[CL_RULES].key, "no rules: this object labels no connection");
		}
		goto out;
	}
	cd_path_push(c, "rules");
	if (!cd_expect_seq(c, rules, "rules ({sources, destinations, ports, labels})"))
		goto out;
	if (!rules->n_items) {
		cd_warn(c, rules, "no rules: this object labels no connection");
		goto out;
	}
	if (!cd_budget(c, rules, rules->n_items))
		goto out;
	lo->rules = calloc(rules->n_items, sizeof(*lo->rules));
	if (!lo->rules) {
		cd_oom(c);
		goto out;
	}
	for (size_t i = 0; i < rules->n_items; i++) {
		size_t o2 = cd_path_push_index(c, i);

		decode_label_rule(L, rules->items[i], &lo->rules[lo->n_rules++]);
		cd_path_pop(c, o2);
	}
out:
	cd_path_pop(c, old);
}

const struct cd_schema cd_schema_labels[] = {
	{ "ConnectionLabels", "spec", label_object_fields, CL_N, NULL, 0 },
	{ "ConnectionLabels", "spec.rules[]", label_rule_fields, LR_N, NULL, 0 },
	{ "*label matcher", "", matcher_fields, LM_N, NULL, 0 },
	{ "*label matcher", "match_list[]", req_fields, RQ_N, NULL, 0 },
	{ NULL },
};
