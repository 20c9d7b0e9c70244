/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * YAML documents as a read-only node tree with positions.
 *
 * sl_ystream_load() parses a (multi-document) YAML buffer with libyaml's
 * document API and exposes every non-empty document as a tree of
 * struct sl_ynode.  Scalars are resolved with the YAML 1.2 core schema
 * (null, boolean, integer, float, string); a quoted or block scalar is always
 * a string.  Aliases share the anchored node (no expansion), so a tree may
 * be a DAG and, with a recursive alias, even cyclic: walk it by schema, never
 * blindly.  Positions are 1-based; columns count characters.
 *
 * libyaml does not reject duplicate mapping keys; the pairs are kept in file
 * order so a decoder can report them.
 */
#ifndef SLUICE_YAML_DOC_H
#define SLUICE_YAML_DOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/diag.h"

enum sl_ytype {
	SL_Y_NULL,  /* ~, null, Null, NULL or nothing */
	SL_Y_BOOL,  /* true/false (any of the three core-schema casings) */
	SL_Y_INT,   /* 42, -7, 0x2a, 0o52 */
	SL_Y_FLOAT, /* 1.5, 1e3, .inf, .nan */
	SL_Y_STR,
	SL_Y_SEQ,
	SL_Y_MAP,
};

struct sl_ynode;

struct sl_ypair {
	const struct sl_ynode *key;
	const struct sl_ynode *value;
};

struct sl_ynode {
	enum sl_ytype type;
	unsigned line;   /* 1-based */
	unsigned column; /* 1-based */
	/* Scalars (SL_Y_NULL..SL_Y_STR): the text as written, unescaped.
	 * NUL-terminated, but a double-quoted "\0" can embed a NUL: use len. */
	const char *str;
	size_t len;
	bool quoted; /* quoted or block scalar */
	/* SL_Y_SEQ */
	const struct sl_ynode *const *items;
	size_t n_items;
	/* SL_Y_MAP, pairs in file order (duplicates kept) */
	const struct sl_ypair *pairs;
	size_t n_pairs;
};

struct sl_ydoc {
	const struct sl_ynode *root; /* never NULL */
	unsigned index;              /* 1-based document number in the stream */
	void *store;                 /* private */
};

struct sl_ystream {
	struct sl_ydoc *docs; /* non-empty documents, in file order */
	size_t n_docs;
	size_t cap;           /* private */
};

#define SL_YAML_MAX_DEPTH 64 /* mappings and lists nested deeper are an error */

/*
 * Parses buf[0..len) (need not be NUL-terminated).  Empty documents (a bare
 * "---", only comments, or a null root) are skipped.  On a YAML syntax or
 * encoding error, adds one error diagnostic at libyaml's position, keeps the
 * documents parsed before the error in *ys and returns -EINVAL.  Nesting
 * deeper than SL_YAML_MAX_DEPTH is refused up front (-EINVAL, no documents).
 * Returns -ENOMEM when memory runs out (also reported), 0 on success.
 * *ys must be freed with sl_ystream_free() in every case.
 */
int sl_ystream_load(struct sl_ystream *ys, const char *name, const char *buf,
		    size_t len, struct sl_diags *diags);
void sl_ystream_free(struct sl_ystream *ys);

/* Typed accessors.  They never report; the caller words the diagnostic. */
static inline bool sl_ynode_is_scalar(const struct sl_ynode *n)
{
	return n && n->type <= SL_Y_STR;
}

/* Value of the first pair whose key is the string `key`, or NULL. */
const struct sl_ynode *sl_ymap_get(const struct sl_ynode *map, const char *key);

/* Key node of that pair, or NULL. */
const struct sl_ynode *sl_ymap_get_key(const struct sl_ynode *map,
				       const char *key);

/* 0 and *out for an SL_Y_INT node; -ERANGE if it does not fit in int64;
 * -EINVAL for any other node. */
int sl_ynode_int(const struct sl_ynode *n, int64_t *out);

/* 0 and *out for an SL_Y_BOOL node, -EINVAL otherwise. */
int sl_ynode_bool(const struct sl_ynode *n, bool *out);

/* The string of a scalar that is a string without embedded NULs, else NULL. */
const char *sl_ynode_str(const struct sl_ynode *n);

/* "null", "boolean", "integer", "float", "string", "list", "mapping" */
const char *sl_ytype_name(enum sl_ytype t);

/*
 * Describes a node for messages: "string 'abc'", "integer 42", "float 1.5",
 * "boolean true", "null", "a list", "a mapping".  Scalar text goes through
 * sl_yquote().  snprintf semantics.
 */
int sl_ynode_describe(const struct sl_ynode *n, char *buf, size_t size);

/*
 * Writes s[0..len) for a message: control characters, quotes and
 * backslashes escaped C-style, cut to about 60 characters with "..." at a
 * UTF-8 boundary.  No surrounding quotes.  Returns buf.
 */
char *sl_yquote(const char *s, size_t len, char *buf, size_t size);

#define SL_YQUOTE_MAX 256 /* a buffer this large always fits sl_yquote() */

#endif /* SLUICE_YAML_DOC_H */
