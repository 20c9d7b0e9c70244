// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* YAML documents as a node tree with positions.  See yaml_doc.h. */
#include "config/yaml_doc.h"

#include "lib/grow.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* One loaded document: libyaml's document owns the scalar text, the arrays
 * below mirror its nodes (index i here is libyaml node i + 1). */
struct ystore {
	yaml_document_t doc;
	struct sl_ynode *nodes;
	const struct sl_ynode **items;
	struct sl_ypair *pairs;
};

static void ystore_free(struct ystore *st)
{
	if (!st)
		return;
	yaml_document_delete(&st->doc);
	free(st->nodes);
	free(st->items);
	free(st->pairs);
	free(st);
}

void sl_ystream_free(struct sl_ystream *ys)
{
	if (!ys)
		return;
	for (size_t i = 0; i < ys->n_docs; i++)
		ystore_free(ys->docs[i].store);
	free(ys->docs);
	memset(ys, 0, sizeof(*ys));
}

/* ---- scalar resolution (YAML 1.2 core schema) ------------------------ */

static bool is_one_of(const char *s, const char *const *words)
{
	for (; *words; words++)
		if (!strcmp(s, *words))
			return true;
	return false;
}

static bool all_digits(const char *s, const char *digits)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!strchr(digits, *s))
			return false;
	return true;
}

static bool looks_float(const char *s)
{
	static const char *const special[] = {
		".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf",
		"-.Inf", "-.INF", ".nan", ".NaN", ".NAN", NULL,
	};
	size_t int_digits = 0, frac_digits = 0;

	if (is_one_of(s, special))
		return true;
	if (*s == '+' || *s == '-')
		s++;
	while (*s >= '0' && *s <= '9')
		s++, int_digits++;
	if (*s == '.') {
		s++;
		while (*s >= '0' && *s <= '9')
			s++, frac_digits++;
	}
	if (!int_digits && !frac_digits)
		return false;
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '+' || *s == '-')
			s++;
		if (!(*s >= '0' && *s <= '9'))
			return false;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	return *s == '\0';
}

static bool looks_int(const char *s)
{
	if (!strncmp(s, "0o", 2))
		return all_digits(s + 2, "01234567");
	if (!strncmp(s, "0x", 2))
		return all_digits(s + 2, "0123456789abcdefABCDEF");
	if (*s == '+' || *s == '-')
		s++;
	return all_digits(s, "0123456789");
}

static enum sl_ytype resolve_plain(const char *s, size_t len)
{
	static const char *const nulls[] = { "~", "null", "Null", "NULL", NULL };
	static const char *const bools[] = { "true", "True", "TRUE", "false",
					     "False", "FALSE", NULL };

	if (strlen(s) != len)
		return SL_Y_STR; /* embedded NUL cannot be a plain scalar, but be safe */
	if (!len || is_one_of(s, nulls))
		return SL_Y_NULL;
	if (is_one_of(s, bools))
		return SL_Y_BOOL;
	if (looks_int(s))
		return SL_Y_INT;
	if (looks_float(s))
		return SL_Y_FLOAT;
	return SL_Y_STR;
}

static enum sl_ytype resolve_scalar(const yaml_node_t *yn)
{
	const char *s = (const char *)yn->data.scalar.value;
	size_t len = yn->data.scalar.length;
	const char *tag = (const char *)yn->tag;
	enum sl_ytype t = resolve_plain(s, len);

	/* An explicit core tag wins when the text fits it (!!int "5"). */
	if (tag && strcmp(tag, YAML_DEFAULT_SCALAR_TAG)) {
		if ((!strcmp(tag, YAML_INT_TAG) && t == SL_Y_INT) ||
		    (!strcmp(tag, YAML_FLOAT_TAG) &&
		     (t == SL_Y_FLOAT || t == SL_Y_INT)) ||
		    (!strcmp(tag, YAML_BOOL_TAG) && t == SL_Y_BOOL) ||
		    (!strcmp(tag, YAML_NULL_TAG) && t == SL_Y_NULL))
			return !strcmp(tag, YAML_FLOAT_TAG) ? SL_Y_FLOAT : t;
		return SL_Y_STR;
	}
	if (yn->data.scalar.style != YAML_PLAIN_SCALAR_STYLE &&
	    yn->data.scalar.style != YAML_ANY_SCALAR_STYLE)
		return SL_Y_STR;
	return t;
}

/* ---- building the tree ------------------------------------------------ */

static struct ystore *build_store(yaml_document_t *doc)
{
	struct ystore *st = calloc(1, sizeof(*st));
	size_t n = (size_t)(doc->nodes.top - doc->nodes.start);
	size_t n_items = 0, n_pairs = 0, ii = 0, pi = 0;

	if (!st)
		return NULL;
	st->doc = *doc;
	for (size_t i = 0; i < n; i++) {
		const yaml_node_t *yn = &doc->nodes.start[i];

		if (yn->type == YAML_SEQUENCE_NODE)
			n_items += (size_t)(yn->data.sequence.items.top -
					    yn->data.sequence.items.start);
		else if (yn->type == YAML_MAPPING_NODE)
			n_pairs += (size_t)(yn->data.mapping.pairs.top -
					    yn->data.mapping.pairs.start);
	}
	st->nodes = calloc(n ? n : 1, sizeof(*st->nodes));
	st->items = calloc(n_items ? n_items : 1, sizeof(*st->items));
	st->pairs = calloc(n_pairs ? n_pairs : 1, sizeof(*st->pairs));
	if (!st->nodes || !st->items || !st->pairs) {
		/* the caller still owns doc: do not delete it twice */
		free(st->nodes);
		free(st->items);
		free(st->pairs);
		free(st);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		const yaml_node_t *yn = &doc->nodes.start[i];
		struct sl_ynode *sn = &st->nodes[i];

		sn->line = (unsigned)yn->start_mark.line + 1;
		sn->column = (unsigned)yn->start_mark.column + 1;
		switch (yn->type) {
		case YAML_SCALAR_NODE:
			sn->type = resolve_scalar(yn);
			sn->str = (const char *)yn->data.scalar.value;
			sn->len = yn->data.scalar.length;
			sn->quoted = yn->data.scalar.style != YAML_PLAIN_SCALAR_STYLE &&
				     yn->data.scalar.style != YAML_ANY_SCALAR_STYLE;
			break;
		case YAML_SEQUENCE_NODE:
			sn->type = SL_Y_SEQ;
			sn->items = &st->items[ii];
			for (yaml_node_item_t *it = yn->data.sequence.items.start;
			     it < yn->data.sequence.items.top; it++)
				st->items[ii++] = &st->nodes[*it - 1];
			sn->n_items = (size_t)(&st->items[ii] - sn->items);
			break;
		case YAML_MAPPING_NODE:
			sn->type = SL_Y_MAP;
			sn->pairs = &st->pairs[pi];
			for (yaml_node_pair_t *p = yn->data.mapping.pairs.start;
			     p < yn->data.mapping.pairs.top; p++) {
				st->pairs[pi].key = &st->nodes[p->key - 1];
				st->pairs[pi].value = &st->nodes[p->value - 1];
				pi++;
			}
			sn->n_pairs = (size_t)(&st->pairs[pi] - sn->pairs);
			break;
		default:
			sn->type = SL_Y_NULL;
			sn->str = "";
			break;
		}
	}
	return st;
}

/* 1-based line and column (in characters) of byte offset off in buf. */
static void offset_position(const char *buf, size_t len, size_t off,
			    unsigned *line, unsigned *col)
{
	unsigned l = 1, c = 1;

	if (off > len)
		off = len;
	for (size_t i = 0; i < off; i++) {
		unsigned char ch = (unsigned char)buf[i];

		if (ch == '\n')
			l++, c = 1;
		else if ((ch & 0xc0) != 0x80)
			c++;
	}
	*line = l;
	*col = c;
}

static int report_parser_error(const yaml_parser_t *p, const char *name,
			       const char *buf, size_t len,
			       struct sl_diags *diags)
{
	const char *problem = p->problem ? p->problem : "unknown error";
	unsigned line, col;

	switch (p->error) {
	case YAML_MEMORY_ERROR:
		sl_diags_add(diags, SL_SEV_ERROR, name, 0, 0, NULL, NULL,
			     "out of memory while parsing YAML");
		return -ENOMEM;
	case YAML_READER_ERROR: {
		size_t off = p->problem_offset;

		/* Point at the start of a broken UTF-8 sequence, not at the
		 * byte after it that gave it away. */
		if (!strcmp(problem, "invalid trailing UTF-8 octet"))
			for (size_t k = 1; k <= 3 && k <= off && off <= len; k++)
				if (((unsigned char)buf[off - k] & 0xc0) == 0xc0) {
					off -= k;
					break;
				}
		offset_position(buf, len, off, &line, &col);
		if (off < len)
			sl_diags_add(diags, SL_SEV_ERROR, name, line, col, NULL,
				     NULL,
				     "invalid YAML input: %s (byte 0x%02x at offset %zu); the file must be UTF-8 text",
				     problem, (unsigned char)buf[off], off);
		else
			sl_diags_add(diags, SL_SEV_ERROR, name, line, col, NULL,
				     NULL, "invalid YAML input: %s", problem);
		return -EINVAL;
	}
	default:
		line = (unsigned)p->problem_mark.line + 1;
		col = (unsigned)p->problem_mark.column + 1;
		if (p->context)
			sl_diags_add(diags, SL_SEV_ERROR, name, line, col, NULL,
				     NULL,
				     "YAML syntax error: %s (%s at line %zu, column %zu)",
				     problem, p->context,
				     p->context_mark.line + 1,
				     p->context_mark.column + 1);
		else
			sl_diags_add(diags, SL_SEV_ERROR, name, line, col, NULL,
				     NULL, "YAML syntax error: %s", problem);
		return -EINVAL;
	}
}

static int push_doc(struct sl_ystream *ys, struct ystore *st, unsigned index)
{
	if (sl_grow((void **)&ys->docs, &ys->cap, ys->n_docs + 1, sizeof(*ys->docs)))
		return -ENOMEM;
	ys->docs[ys->n_docs++] = (struct sl_ydoc){
		.root = &st->nodes[0],
		.index = index,
		.store = st,
	};
	return 0;
}

/*
 * libyaml's scanner is quadratic in the flow nesting depth (a few hundred
 * KiB of "[[[[..." takes minutes), and no configuration nests deeper than a
 * handful of levels.  An event pre-pass stops at SL_YAML_MAX_DEPTH, before
 * the cost grows.  Syntax errors are left to the real pass.
 */
static int check_depth(const char *name, const char *buf, size_t len,
		       struct sl_diags *diags)
{
	yaml_parser_t parser;
	unsigned depth = 0;
	int rc = 0;

	if (!yaml_parser_initialize(&parser))
		return 0; /* the real pass reports it */
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	/* UTF-8 only, as the messages say: libyaml would otherwise take a
	 * UTF-16 file by its byte order mark (issue 26). */
	yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
	for (;;) {
		yaml_event_t ev;
		yaml_event_type_t type;

		if (!yaml_parser_parse(&parser, &ev))
			break;
		type = ev.type;
		if (type == YAML_SEQUENCE_START_EVENT ||
		    type == YAML_MAPPING_START_EVENT) {
			if (++depth > SL_YAML_MAX_DEPTH) {
				sl_diags_add(diags, SL_SEV_ERROR, name,
					     (unsigned)ev.start_mark.line + 1,
					     (unsigned)ev.start_mark.column + 1,
					     NULL, NULL,
					     "YAML nesting is deeper than %d levels",
					     SL_YAML_MAX_DEPTH);
				rc = -EINVAL;
			}
		} else if (type == YAML_SEQUENCE_END_EVENT ||
			   type == YAML_MAPPING_END_EVENT) {
			depth--;
		}
		yaml_event_delete(&ev);
		if (rc || type == YAML_STREAM_END_EVENT)
			break;
	}
	yaml_parser_delete(&parser);
	return rc;
}

int sl_ystream_load(struct sl_ystream *ys, const char *name, const char *buf,
		    size_t len, struct sl_diags *diags)
{
	yaml_parser_t parser;
	unsigned index = 0;
	int rc = 0;

	memset(ys, 0, sizeof(*ys));
	if (!buf)
		buf = "", len = 0;
	if (check_depth(name, buf, len, diags))
		return -EINVAL;
	if (!yaml_parser_initialize(&parser)) {
		sl_diags_add(diags, SL_SEV_ERROR, name, 0, 0, NULL, NULL,
			     "out of memory while parsing YAML");
		return -ENOMEM;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	/* UTF-8 only, as the messages say: libyaml would otherwise take a
	 * UTF-16 file by its byte order mark (issue 26). */
	yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
	for (;;) {
		yaml_document_t doc;
		yaml_node_t *root;
		struct ystore *st;

		if (!yaml_parser_load(&parser, &doc)) {
			rc = report_parser_error(&parser, name, buf, len, diags);
			break;
		}
		root = yaml_document_get_root_node(&doc);
		if (!root) { /* end of stream */
			yaml_document_delete(&doc);
			break;
		}
		index++;
		if (root->type == YAML_SCALAR_NODE &&
		    resolve_scalar(root) == SL_Y_NULL) { /* empty document */
			yaml_document_delete(&doc);
			continue;
		}
		st = build_store(&doc);
		if (!st || push_doc(ys, st, index)) {
			if (st)
				ystore_free(st);
			else
				yaml_document_delete(&doc);
			sl_diags_add(diags, SL_SEV_ERROR, name, 0, 0, NULL,
				     NULL, "out of memory while loading YAML");
			rc = -ENOMEM;
			break;
		}
	}
	yaml_parser_delete(&parser);
	return rc;
}

/* ---- accessors ---------------------------------------------------------- */

static bool key_is(const struct sl_ynode *k, const char *key)
{
	return sl_ynode_is_scalar(k) && k->len == strlen(key) &&
	       !memcmp(k->str, key, k->len);
}

const struct sl_ynode *sl_ymap_get_key(const struct sl_ynode *map,
				       const char *key)
{
	if (!map || map->type != SL_Y_MAP)
		return NULL;
	for (size_t i = 0; i < map->n_pairs; i++)
		if (key_is(map->pairs[i].key, key))
			return map->pairs[i].key;
	return NULL;
}

const struct sl_ynode *sl_ymap_get(const struct sl_ynode *map, const char *key)
{
	if (!map || map->type != SL_Y_MAP)
		return NULL;
	for (size_t i = 0; i < map->n_pairs; i++)
		if (key_is(map->pairs[i].key, key))
			return map->pairs[i].value;
	return NULL;
}

int sl_ynode_int(const struct sl_ynode *n, int64_t *out)
{
	const char *s;
	uint64_t v = 0, limit;
	unsigned base = 10;
	bool neg = false;

	if (!n || n->type != SL_Y_INT)
		return -EINVAL;
	s = n->str;
	if (!strncmp(s, "0x", 2))
		base = 16, s += 2;
	else if (!strncmp(s, "0o", 2))
		base = 8, s += 2;
	else if (*s == '+' || *s == '-')
		neg = *s++ == '-';
	limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; *s; s++) {
		unsigned d = *s <= '9' ? (unsigned)(*s - '0') :
			     (unsigned)((*s | 0x20) - 'a' + 10);

		if (v > (limit - d) / base)
			return -ERANGE;
		v = v * base + d;
	}
	if (neg)
		*out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
	else
		*out = (int64_t)v;
	return 0;
}

int sl_ynode_bool(const struct sl_ynode *n, bool *out)
{
	if (!n || n->type != SL_Y_BOOL)
		return -EINVAL;
	*out = (n->str[0] | 0x20) == 't';
	return 0;
}

const char *sl_ynode_str(const struct sl_ynode *n)
{
	if (!n || n->type != SL_Y_STR || strlen(n->str) != n->len)
		return NULL;
	return n->str;
}

const char *sl_ytype_name(enum sl_ytype t)
{
	switch (t) {
	case SL_Y_NULL:  return "null";
	case SL_Y_BOOL:  return "boolean";
	case SL_Y_INT:   return "integer";
	case SL_Y_FLOAT: return "float";
	case SL_Y_STR:   return "string";
	case SL_Y_SEQ:   return "list";
	case SL_Y_MAP:   return "mapping";
	}
	return "?";
}

char *sl_yquote(const char *s, size_t len, char *buf, size_t size)
{
	enum { MAX_SRC = 60 };
	size_t o = 0;

	if (!size)
		return buf;
#define PUT(str)                                                        \
	do {                                                            \
		const char *p_ = (str);                                 \
		size_t l_ = strlen(p_);                                 \
		if (o + l_ >= size)                                     \
			goto out;                                       \
		memcpy(buf + o, p_, l_);                                \
		o += l_;                                                \
	} while (0)
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		char tmp[8];

		if (i >= MAX_SRC && (c & 0xc0) != 0x80) {
			PUT("...");
			break;
		}
		switch (c) {
		case '\n': PUT("\\n"); continue;
		case '\t': PUT("\\t"); continue;
		case '\r': PUT("\\r"); continue;
		case '\0': PUT("\\0"); continue;
		case '\\': PUT("\\\\"); continue;
		case '\'': PUT("\\'"); continue;
		default: break;
		}
		if (c < 0x20 || c == 0x7f) {
			snprintf(tmp, sizeof(tmp), "\\x%02x", c);
		} else {
			tmp[0] = (char)c;
			tmp[1] = '\0';
		}
		PUT(tmp);
	}
#undef PUT
out:
	buf[o] = '\0';
	return buf;
}

int sl_ynode_describe(const struct sl_ynode *n, char *buf, size_t size)
{
	char q[SL_YQUOTE_MAX];

	if (!n)
		return snprintf(buf, size, "nothing");
	switch (n->type) {
	case SL_Y_NULL:
		return snprintf(buf, size, "null");
	case SL_Y_SEQ:
		return snprintf(buf, size, "a list");
	case SL_Y_MAP:
		return snprintf(buf, size, "a mapping");
	case SL_Y_STR:
		return snprintf(buf, size, "string '%s'",
				sl_yquote(n->str, n->len, q, sizeof(q)));
	default:
		return snprintf(buf, size, "%s %s", sl_ytype_name(n->type),
				sl_yquote(n->str, n->len, q, sizeof(q)));
	}
}
