/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Connection labels and label matchers (pure, no I/O).
 *
 * A connection's labels are string key/value pairs: the built-ins
 * (src.ip, src.port, dst.ip, dst.port, proto, ip.version, iface) and those
 * that ConnectionLabels objects give by source/destination CIDR and port.
 *
 * One matcher type serves both models:
 *  - Kubernetes LabelSelector (FlowSchema `kind: Labels` subjects):
 *    matchLabels + matchExpressions;
 *  - Aperture LabelMatcher (policy selectors and workloads): match_labels,
 *    match_list (alias match_expressions) and an `expression` tree whose
 *    label_matches uses PCRE2 with match limits.
 * Every part present must hold (AND).  An empty matcher matches everything.
 */
#ifndef SLUICE_LABELS_H
#define SLUICE_LABELS_H

#include <stdbool.h>
#include <stddef.h>

/* ---- label sets ---------------------------------------------------------- */

struct sl_label {
	char *key;
	char *value;
};

struct sl_labels {
	struct sl_label *items; /* unordered; keys unique */
	size_t count, cap;
};

#define SL_LABELS_INIT { 0 }

/* Set (add or overwrite).  0 or -ENOMEM. */
int sl_labels_set(struct sl_labels *l, const char *key, const char *value);
/* NULL when absent. */
const char *sl_labels_get(const struct sl_labels *l, const char *key);
void sl_labels_clear(struct sl_labels *l); /* keeps the allocation */
void sl_labels_free(struct sl_labels *l);
/* Deep copy into an empty dst.  0 or -ENOMEM. */
int sl_labels_copy(struct sl_labels *dst, const struct sl_labels *src);
/* Sort by key (for stable output). */
void sl_labels_sort(struct sl_labels *l);

/* Built-in label keys. */
#define SL_LABEL_SRC_IP     "src.ip"
#define SL_LABEL_SRC_PORT   "src.port"
#define SL_LABEL_DST_IP     "dst.ip"
#define SL_LABEL_DST_PORT   "dst.port"
#define SL_LABEL_PROTO      "proto"      /* "tcp" */
#define SL_LABEL_IP_VERSION "ip.version" /* "4" or "6" */
#define SL_LABEL_IFACE      "iface"

/* ---- matchers ------------------------------------------------------------ */

enum sl_lm_op {
	SL_LM_IN,             /* label present and its value in values */
	SL_LM_NOT_IN,         /* label absent, or its value not in values */
	SL_LM_EXISTS,         /* label present (values empty) */
	SL_LM_DOES_NOT_EXIST, /* label absent (values empty) */
};

struct sl_lm_requirement {
	char *key;
	enum sl_lm_op op;
	char **values;
	size_t n_values;
};

enum sl_lm_expr_kind {
	SL_LE_ALL,     /* every child holds (empty: true) */
	SL_LE_ANY,     /* some child holds (empty: false) */
	SL_LE_NOT,     /* exactly one child, negated */
	SL_LE_EQUALS,  /* label == value (absent: false) */
	SL_LE_EXISTS,  /* label present */
	SL_LE_MATCHES, /* label present and the regex matches its value */
};

struct sl_lm_expr {
	enum sl_lm_expr_kind kind;
	struct sl_lm_expr *children; /* ALL/ANY: n_children; NOT: 1 */
	size_t n_children;
	char *label;  /* EQUALS, EXISTS, MATCHES */
	char *value;  /* EQUALS */
	char *regex;  /* MATCHES: the source text */
	void *re;     /* MATCHES: compiled pcre2_code (owned) */
};

struct sl_label_matcher {
	/* match_labels / matchLabels become SL_LM_IN with one value. */
	struct sl_lm_requirement *reqs;
	size_t n_reqs;
	struct sl_lm_expr *expr; /* optional (Aperture `expression`) */
};

/* PCRE2 limits: a label value is short, a pathological regex must not
 * stall the daemon (Aperture selectors/selector.go and multi-matcher.go). */
#define SL_REGEX_MATCH_LIMIT 100000
#define SL_REGEX_DEPTH_LIMIT 1000

/* Compile e->regex into e->re.  Returns 0, or -EINVAL with a message
 * ("missing ) at offset 4") in err. */
int sl_lm_compile_regex(struct sl_lm_expr *e, char *err, size_t err_len);

/* A regex that hits its match limit counts as "no match". */
bool sl_label_matcher_eval(const struct sl_label_matcher *m, const struct sl_labels *l);
bool sl_lm_expr_eval(const struct sl_lm_expr *e, const struct sl_labels *l);

/* Frees everything the matcher owns (not the matcher struct itself). */
void sl_label_matcher_free(struct sl_label_matcher *m);
void sl_lm_expr_free(struct sl_lm_expr *e); /* contents only */
/* Deep copy (regexes recompiled).  0 or negative errno. */
int sl_label_matcher_copy(struct sl_label_matcher *dst, const struct sl_label_matcher *src);

/* Every label a matcher refers to, with the literal values it compares
 * with.  The classifier compiler uses it: a matcher on src.ip/dst.ip/ports
 * is compiled to CIDRs and port points, and a regex on those cannot be. */
struct sl_lm_ref {
	const char *key;
	const char *const *values; /* literal values (In/NotIn/equals), may be 0 */
	size_t n_values;
	bool regex;                /* label_matches on this key */
};
typedef void (*sl_lm_visit_fn)(const struct sl_lm_ref *ref, void *ctx);
void sl_label_matcher_visit(const struct sl_label_matcher *m, sl_lm_visit_fn fn, void *ctx);

/* Human one-line rendering, e.g. `user_tier=gold, env in (a,b), any(...)`
 * for explain output.  snprintf semantics. */
int sl_label_matcher_format(const struct sl_label_matcher *m, char *buf, size_t size);

#endif
