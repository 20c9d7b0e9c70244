// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The decode toolkit every kind uses (config/decode.h): reporting with the
 * field path, "did you mean", field tables walked against one
 * YAML mapping at a time, scalar getters that report what is wrong, and
 * the name rules of metadata.name.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf */
#endif
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config/config.h"
#include "config/decode.h"
#include "config/yaml_doc.h"
#include "lib/grow.h"
#include "lib/nearest.h"
#include "lib/syn_retransmit.h"
#include "sluice_abi.h"

/* ---- decode context and reporting --------------------------------------- */


static void vreport(struct ctx *c, enum sl_severity sev, unsigned line,
		    unsigned col, const char *fmt, va_list ap)
{
	sl_diags_vadd(c->diags, sev, c->file, line, col, c->object, c->path,
		      fmt, ap);
}

void cd_err(struct ctx *c, const struct sl_ynode *at, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(c, SL_SEV_ERROR, at ? at->line : 0, at ? at->column : 0, fmt,
		ap);
	va_end(ap);
}

void cd_warn(struct ctx *c, const struct sl_ynode *at, const char *fmt, ...)
{
	va_list ap;

	if (c->mute_warnings)
		return;
	va_start(ap, fmt);
	vreport(c, SL_SEV_WARNING, at ? at->line : 0, at ? at->column : 0, fmt,
		ap);
	va_end(ap);
}

void cd_err_at(struct ctx *c, enum sl_severity sev, unsigned line,
	       unsigned col, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(c, sev, line, col, fmt, ap);
	va_end(ap);
}

void cd_oom(struct ctx *c)
{
	if (!c->oom)
		sl_diags_add(c->diags, SL_SEV_ERROR, c->file, 0, 0, NULL, NULL,
			     "out of memory");
	c->oom = true;
}

bool cd_budget(struct ctx *c, const struct sl_ynode *at, size_t n)
{
	if (c->over_budget)
		return false;
	if (n <= CD_BUDGET - c->budget) {
		c->budget += n;
		return true;
	}
	c->over_budget = true;
	cd_err(c, at,
	       "the configuration expands to more than %u list items and expressions (YAML aliases used many times?); refusing to load it",
	       CD_BUDGET);
	return false;
}

/* Field path: push returns the old length for cd_path_pop(). */
size_t cd_path_push(struct ctx *c, const char *name)
{
	size_t old = c->plen;
	int n = snprintf(c->path + c->plen, sizeof(c->path) - c->plen, "%s%s",
			 c->plen ? "." : "", name);

	if (n > 0)
		c->plen += (size_t)n < sizeof(c->path) - c->plen ?
				   (size_t)n : sizeof(c->path) - 1 - c->plen;
	return old;
}

size_t cd_path_push_index(struct ctx *c, size_t i)
{
	size_t old = c->plen;
	int n = snprintf(c->path + c->plen, sizeof(c->path) - c->plen, "[%zu]",
			 i);

	if (n > 0)
		c->plen += (size_t)n < sizeof(c->path) - c->plen ?
				   (size_t)n : sizeof(c->path) - 1 - c->plen;
	return old;
}

void cd_path_pop(struct ctx *c, size_t old)
{
	c->plen = old;
	c->path[old] = '\0';
}

void cd_path_set(struct ctx *c, const char *path)
{
	cd_path_pop(c, 0);
	cd_path_push(c, path);
}

struct cd_desc cd_describe(const struct sl_ynode *n)
{
	struct cd_desc d;

	sl_ynode_describe(n, d.s, sizeof(d.s));
	return d;
}

/* ---- suggestions ("did you mean") --------------------------------------- */

char cd_lower(char ch)
{
	return ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch;
}

/* Optimal string alignment (restricted Damerau-Levenshtein) distance,
 * ignoring ASCII case.  SIZE_MAX for words too long to bother. */
static bool prefix_ci(const char *prefix, const char *word)
{
	for (; *prefix; prefix++, word++)
		if (cd_lower(*prefix) != cd_lower(*word))
			return false;
	return true;
}

/* Closest candidate within distance 2 (or equal ignoring case); failing
 * that, the only candidate that the word is a prefix of, or that is a
 * prefix of the word (at least 4 characters: "queueWait", "tickMs"). */
const char *cd_closest(const char *word, const char *const *cands, size_t n)
{
	const char *best = NULL, *pre = NULL;
	size_t best_d = 3, wl = strlen(word), n_pre = 0;

	for (size_t i = 0; i < n; i++) {
		size_t dist = sl_edit_distance(word, cands[i]);

		if (dist < best_d && dist < wl) {
			best = cands[i];
			best_d = dist;
		}
		if (wl >= 4 && strlen(cands[i]) >= 4 &&
		    (prefix_ci(word, cands[i]) || prefix_ci(cands[i], word))) {
			pre = cands[i];
			n_pre++;
		}
	}
	return best ? best : n_pre == 1 ? pre : NULL;
}

void cd_join(char *buf, size_t size, const char *const *words, size_t n)
{
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && o < size; i++) {
		int w = snprintf(buf + o, size - o, "%s%s", i ? ", " : "",
				 words[i]);
		if (w < 0)
			break;
		o += (size_t)w;
	}
}

/* ---- field tables ------------------------------------------------------- */

static void store_int(void *obj, const struct fdesc *f, int64_t v)
{
	char *p = (char *)obj + f->off;

	switch (f->size) {
	case 1: { int8_t x = (int8_t)v; memcpy(p, &x, 1); break; }
	case 2: { int16_t x = (int16_t)v; memcpy(p, &x, 2); break; }
	case 4: { int32_t x = (int32_t)(uint32_t)(uint64_t)v; memcpy(p, &x, 4); break; }
	default: memcpy(p, &v, 8); break;
	}
}

/* "must be between 1 and 100" / "must be at least 1" (no useful upper
 * bound) / "must be at most N"; `below` tells which bound was crossed. */
static void range_text(char *buf, size_t size, int64_t min, int64_t max,
		       bool duration, bool below)
{
	char a[48], b[48];
	bool open_max = duration ? max == INT64_MAX : max >= INT32_MAX;

	if (duration) {
		sl_format_duration((uint64_t)min, a, sizeof(a));
		sl_format_duration((uint64_t)max, b, sizeof(b));
	} else {
		snprintf(a, sizeof(a), "%" PRId64, min);
		snprintf(b, sizeof(b), "%" PRId64, max);
	}
	if (open_max && below)
		snprintf(buf, size, "must be at least %s", a);
	else if (open_max)
		snprintf(buf, size, "must be at most %s", b);
	else
		snprintf(buf, size, "must be between %s and %s", a, b);
}

/* ---- scalar getters (report on failure) ---------------------------------- */

bool cd_get_int(struct ctx *c, const struct sl_ynode *v, int64_t min,
		    int64_t max, const char *hint_low, int64_t *out)
{
	char range[128];
	int64_t x;

	if (v->type != SL_Y_INT) {
		cd_err(c, v, "expected an integer, got %s%s", cd_describe(v).s,
		    v->type == SL_Y_STR && v->quoted && strspn(v->str, "+-0123456789") == v->len && v->len ?
			    " (remove the quotes)" : "");
		return false;
	}
	if (sl_ynode_int(v, &x)) {
		QBUF;
		range_text(range, sizeof(range), min, max, false,
			   v->str[0] == '-');
		cd_err(c, v, "%s, got %s", range, Q(v));
		return false;
	}
	if (x < min || x > max) {
		range_text(range, sizeof(range), min, max, false, x < min);
		cd_err(c, v, "%s, got %" PRId64 "%s%s", range, x,
		    x < min && hint_low ? "; " : "",
		    x < min && hint_low ? hint_low : "");
		return false;
	}
	*out = x;
	return true;
}

bool cd_get_duration(struct ctx *c, const struct sl_ynode *v, int64_t min,
			 int64_t max, const char *hint_low, uint64_t *out)
{
	char why[160], range[128];
	uint64_t x;
	QBUF;

	if (v->type == SL_Y_INT || v->type == SL_Y_FLOAT) {
		cd_err(c, v, "duration %s needs a unit, e.g. %ss", Q(v), Q(v));
		return false;
	}
	if (v->type != SL_Y_STR) {
		cd_err(c, v, "expected a duration such as 5s or 250ms, got %s",
		    cd_describe(v).s);
		return false;
	}
	if (!sl_ynode_str(v)) {
		cd_err(c, v, "invalid duration '%s'", Q(v));
		return false;
	}
	if (cd_parse_duration(v->str, &x, why, sizeof(why))) {
		cd_err(c, v, "duration '%s' %s", Q(v), why);
		return false;
	}
	if ((int64_t)x < min || (int64_t)x > max) {
		range_text(range, sizeof(range), min, max, true,
			   (int64_t)x < min);
		cd_err(c, v, "%s, got %s%s%s", range, Q(v),
		    (int64_t)x < min && hint_low ? "; " : "",
		    (int64_t)x < min && hint_low ? hint_low : "");
		return false;
	}
	*out = x;
	return true;
}

bool cd_get_enum(struct ctx *c, const struct sl_ynode *v,
		     const struct enumval *ev, int *out)
{
	const char *names[16] = { 0 };
	char allowed[256];
	const char *s = sl_ynode_str(v), *sug;
	size_t n = 0;
	QBUF;

	for (; ev[n].name && n < ARRAY_SIZE(names); n++)
		names[n] = ev[n].name;
	cd_join(allowed, sizeof(allowed), names, n);
	if (v->type != SL_Y_STR) {
		cd_err(c, v, "expected one of %s, got %s", allowed, cd_describe(v).s);
		return false;
	}
	for (size_t i = 0; s && i < n; i++) {
		if (!strcmp(s, ev[i].name)) {
			*out = ev[i].value;
			return true;
		}
	}
	sug = s ? cd_closest(s, names, n) : NULL;
	if (sug)
		cd_err(c, v, "invalid value '%s'; did you mean '%s'? (allowed: %s)",
		    Q(v), sug, allowed);
	else
		cd_err(c, v, "invalid value '%s' (allowed: %s)", Q(v), allowed);
	return false;
}

bool cd_get_string(struct ctx *c, const struct sl_ynode *v,
		       const char **out)
{
	if (v->type != SL_Y_STR) {
		cd_err(c, v, "expected a string, got %s%s", cd_describe(v).s,
		    sl_ynode_is_scalar(v) && v->type != SL_Y_NULL ?
			    " (quote it to use it as a string)" : "");
		return false;
	}
	if (!sl_ynode_str(v)) {
		cd_err(c, v, "must not contain NUL characters");
		return false;
	}
	*out = v->str;
	return true;
}

bool cd_get_bool(struct ctx *c, const struct sl_ynode *v, bool *out)
{
	QBUF;

	if (!sl_ynode_bool(v, out))
		return true;
	if (v->type == SL_Y_STR && (!strcasecmp(v->str, "true") ||
				    !strcasecmp(v->str, "false")))
		cd_err(c, v, "expected true or false, got %s (remove the quotes)",
		       cd_describe(v).s);
	else if (v->type == SL_Y_STR && (!strcasecmp(v->str, "yes") ||
					 !strcasecmp(v->str, "no") ||
					 !strcasecmp(v->str, "on") ||
					 !strcasecmp(v->str, "off")))
		cd_err(c, v, "expected true or false, got '%s' (YAML 1.2 booleans are only true and false)",
		       Q(v));
	else
		cd_err(c, v, "expected true or false, got %s", cd_describe(v).s);
	return false;
}

bool cd_get_number(struct ctx *c, const struct sl_ynode *v, double *out)
{
	char *end;
	double x;

	if (v->type != SL_Y_INT && v->type != SL_Y_FLOAT) {
		cd_err(c, v, "expected a number, got %s%s", cd_describe(v).s,
		       v->type == SL_Y_STR && v->quoted && v->len &&
				       strspn(v->str, "+-.0123456789eE") == v->len ?
			       " (remove the quotes)" : "");
		return false;
	}
	if (v->type == SL_Y_INT) {
		int64_t i;

		if (sl_ynode_int(v, &i)) {
			QBUF;

			cd_err(c, v, "number %s is out of range", Q(v));
			return false;
		}
		*out = (double)i;
		return true;
	}
	errno = 0;
	x = strtod(v->str, &end);
	if (*end || !isfinite(x)) {
		QBUF;

		cd_err(c, v, "expected a finite number, got %s", Q(v));
		return false;
	}
	*out = x;
	return true;
}

bool cd_get_label_value(struct ctx *c, const struct sl_ynode *v,
			const char **out)
{
	if (v->type == SL_Y_INT && strspn(v->str, "0123456789") == v->len) {
		*out = v->str;
		return true;
	}
	if (v->type != SL_Y_STR) {
		cd_err(c, v, "expected a string, got %s%s", cd_describe(v).s,
		       sl_ynode_is_scalar(v) && v->type != SL_Y_NULL ?
			       " (quote it to use it as a string)" : "");
		return false;
	}
	return cd_get_string(c, v, out);
}

/* ---- mappings ------------------------------------------------------------ */

bool cd_expect_map(struct ctx *c, const struct sl_ynode *n)
{
	if (n->type == SL_Y_MAP)
		return true;
	cd_err(c, n, "expected a mapping, got %s", cd_describe(n).s);
	return false;
}

bool cd_expect_seq(struct ctx *c, const struct sl_ynode *n, const char *what)
{
	if (n->type == SL_Y_SEQ)
		return true;
	cd_err(c, n, "expected a list of %s, got %s", what, cd_describe(n).s);
	return false;
}

static void unknown_field(struct ctx *c, const struct sl_ynode *key,
			  const struct fdesc *f, size_t nf)
{
	const char *names[MAX_FIELDS];
	char known[512];
	const char *sug;
	size_t old;
	QBUF;

	for (size_t i = 0; i < nf; i++)
		names[i] = f[i].name;
	old = cd_path_push(c, Q(key));
	if (key->len == 2 && !memcmp(key->str, "<<", 2)) {
		cd_err(c, key, "YAML merge keys ('<<') are not supported; write the fields out");
	} else if ((sug = cd_closest(key->str, names, nf))) {
		cd_err(c, key, "unknown field '%s'; did you mean '%s'?", Q(key), sug);
	} else {
		cd_join(known, sizeof(known), names, nf);
		cd_err(c, key, "unknown field '%s' (known fields: %s)", Q(key), known);
	}
	cd_path_pop(c, old);
}

/*
 * Decodes `map` against the table f[0..nf).  Simple fields (FK_INT,
 * FK_DURATION, FK_ENUM, FK_STRING) are stored into obj; hits[i] tells
 * where every field was and whether it was valid.  An optional field set to
 * null counts as absent.  Returns false if `map` is not a mapping.
 */
bool cd_decode_fields(struct ctx *c, const struct sl_ynode *map,
			  const struct fdesc *f, size_t nf, void *obj,
			  struct fhit *hits)
{
	for (size_t i = 0; i < nf; i++)
		hits[i] = (struct fhit){ .ok = true };
	if (!cd_expect_map(c, map)) {
		for (size_t i = 0; i < nf; i++)
			hits[i].ok = false;
		return false;
	}
	for (size_t p = 0; p < map->n_pairs; p++) {
		const struct sl_ynode *k = map->pairs[p].key;
		size_t i;

		if (!sl_ynode_is_scalar(k)) {
			cd_err(c, k, "mapping keys must be strings, got %s",
			    cd_describe(k).s);
			continue;
		}
		for (i = 0; i < nf; i++)
			if (strlen(f[i].name) == k->len &&
			    !memcmp(f[i].name, k->str, k->len))
				break;
		if (i == nf) {
			unknown_field(c, k, f, nf);
			continue;
		}
		if (hits[i].key) {
			size_t old = cd_path_push(c, f[i].name);

			cd_err(c, k, "duplicate key '%s'; also defined at %s:%u:%u",
			    f[i].name, c->file, hits[i].key->line,
			    hits[i].key->column);
			cd_path_pop(c, old);
			continue;
		}
		hits[i].key = k;
		hits[i].value = map->pairs[p].value;
	}
	for (size_t i = 0; i < nf; i++) {
		const struct sl_ynode *v = hits[i].value;
		size_t old;
		bool ok = true;

		if (!hits[i].key) {
			if (f[i].required) {
				old = cd_path_push(c, f[i].name);
				cd_err(c, map, "missing required field '%s'",
				    f[i].name);
				cd_path_pop(c, old);
				hits[i].ok = false;
			}
			continue;
		}
		if (v->type == SL_Y_NULL && !f[i].required) {
			hits[i].value = NULL;
			continue;
		}
		old = cd_path_push(c, f[i].name);
		switch (f[i].kind) {
		case FK_INT: {
			int64_t x;

			ok = cd_get_int(c, v, f[i].min, f[i].max, f[i].hint_low, &x);
			if (ok)
				store_int(obj, &f[i], x);
			break;
		}
		case FK_DURATION: {
			uint64_t x;

			ok = cd_get_duration(c, v, f[i].min, f[i].max, f[i].hint_low,
					  &x);
			if (ok)
				memcpy((char *)obj + f[i].off, &x, sizeof(x));
			break;
		}
		case FK_ENUM: {
			int x;

			ok = cd_get_enum(c, v, f[i].enums, &x);
			if (ok)
				memcpy((char *)obj + f[i].off, &x, sizeof(x));
			break;
		}
		case FK_STRING: {
			const char *s;
			char **slot = (char **)(void *)((char *)obj + f[i].off);

			ok = cd_get_string(c, v, &s);
			if (ok) {
				char *d = strdup(s);

				if (!d) {
					cd_oom(c);
					ok = false;
					break;
				}
				free(*slot);
				*slot = d;
			}
			break;
		}
		case FK_BOOL: {
			bool x;

			ok = cd_get_bool(c, v, &x);
			if (ok)
				memcpy((char *)obj + f[i].off, &x, sizeof(x));
			break;
		}
		case FK_NUMBER: {
			double x;

			ok = cd_get_number(c, v, &x);
			if (ok && (f[i].dmin_open ? !(x > f[i].dmin) : x < f[i].dmin)) {
				cd_err(c, v, "must be %s %g, got %s",
				       f[i].dmin_open ? "greater than" : "at least",
				       f[i].dmin, v->str);
				ok = false;
			} else if (ok && x > f[i].dmax) {
				cd_err(c, v, "must be at most %g, got %s", f[i].dmax,
				       v->str);
				ok = false;
			}
			if (ok)
				memcpy((char *)obj + f[i].off, &x, sizeof(x));
			break;
		}
		case FK_CUSTOM:
			break;
		}
		cd_path_pop(c, old);
		hits[i].ok = ok;
	}
	return true;
}

static int cmp_pair_key(const void *a, const void *b)
{
	const struct sl_ypair *x = *(const struct sl_ypair *const *)a;
	const struct sl_ypair *y = *(const struct sl_ypair *const *)b;
	size_t n = x->key->len < y->key->len ? x->key->len : y->key->len;
	int r = memcmp(x->key->str, y->key->str, n);

	if (r)
		return r;
	if (x->key->len != y->key->len)
		return x->key->len < y->key->len ? -1 : 1;
	return x < y ? -1 : x > y; /* file order */
}

bool *cd_dup_keys(struct ctx *c, const struct sl_ynode *map)
{
	const struct sl_ypair **sorted;
	bool *dup;
	size_t n = 0, run = 0;

	sorted = calloc(map->n_pairs ? map->n_pairs : 1, sizeof(*sorted));
	dup = calloc(map->n_pairs ? map->n_pairs : 1, sizeof(*dup));
	if (!sorted || !dup) {
		free(sorted);
		free(dup);
		cd_oom(c);
		return NULL;
	}
	for (size_t i = 0; i < map->n_pairs; i++)
		if (map->pairs[i].key->type == SL_Y_STR)
			sorted[n++] = &map->pairs[i];
	qsort(sorted, n, sizeof(*sorted), cmp_pair_key);
	for (size_t i = 1; i < n; i++) {
		const struct sl_ynode *k = sorted[i]->key, *first;
		size_t old;
		QBUF;

		if (sorted[run]->key->len != k->len ||
		    memcmp(sorted[run]->key->str, k->str, k->len)) {
			run = i;
			continue;
		}
		first = sorted[run]->key;
		dup[sorted[i] - map->pairs] = true;
		old = cd_path_push(c, Q(k));
		cd_err(c, k, "duplicate key '%s'; also defined at %s:%u:%u", Q(k),
		       c->file, first->line, first->column);
		cd_path_pop(c, old);
	}
	free(sorted);
	return dup;
}

/* A free-form string map (metadata.labels/annotations). */
void cd_decode_string_map(struct ctx *c, const struct sl_ynode *map)
{
	if (!cd_expect_map(c, map))
		return;
	for (size_t i = 0; i < map->n_pairs; i++) {
		const struct sl_ypair *p = &map->pairs[i];
		const char *s;
		size_t old;
		QBUF;

		if (p->key->type != SL_Y_STR) {
			cd_err(c, p->key, "keys must be strings, got %s",
			    cd_describe(p->key).s);
			continue;
		}
		old = cd_path_push(c, Q(p->key));
		cd_get_string(c, p->value, &s);
		cd_path_pop(c, old);
	}
	free(cd_dup_keys(c, map));
}

static bool dns1123_subdomain(const char *s)
{
	for (;;) {
		const char *start = s;

		for (; *s && *s != '.'; s++)
			if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
			      *s == '-'))
				return false;
		if (s == start || *start == '-' || s[-1] == '-')
			return false;
		if (!*s)
			return true;
		s++;
	}
}

bool cd_check_name(struct ctx *c, const struct sl_ynode *n, const char *name)
{
	QBUF;

	if (strlen(name) >= SL_LEVEL_NAME_SIZE) {
		cd_err(c, n, "name '%s' is %zu characters long; at most %d allowed",
		    Q(n), strlen(name), SL_LEVEL_NAME_SIZE - 1);
		return false;
	}
	if (!dns1123_subdomain(name)) {
		char sug[SL_LEVEL_NAME_SIZE];
		size_t i;

		for (i = 0; name[i]; i++)
			sug[i] = name[i] == '_' || name[i] == ' ' ? '-' : cd_lower(name[i]);
		sug[i] = '\0';
		if (dns1123_subdomain(sug))
			cd_err(c, n, "invalid name '%s': use lowercase letters, digits, '-' and '.', starting and ending with a letter or digit; did you mean '%s'?",
			    Q(n), sug);
		else
			cd_err(c, n, "invalid name '%s': use lowercase letters, digits, '-' and '.', starting and ending with a letter or digit",
			    Q(n));
		return false;
	}
	return true;
}

/* ---- unique names per kind ------------------------------------------------ */

static const char *const kind_names[KIND_N] = {
	[KIND_SERVER] = "Server",
	[KIND_LEVEL] = "PriorityLevelConfiguration",
	[KIND_SCHEMA] = "FlowSchema",
	[KIND_LABELS] = "ConnectionLabels",
	[KIND_POLICY] = "AverageLatencySchedulingPolicy",
};

void cd_register_name(struct load *L, int kind, const struct object *o)
{
	struct name_ent *e;

	if (!o->name)
		return;
	if (sl_grow((void **)&L->names, &L->names_cap, L->n_names + 1, sizeof(*L->names))) {
		cd_oom(L->c);
		return;
	}
	e = &L->names[L->n_names];
	*e = (struct name_ent){
		.kind = kind, .seq = L->n_names, .name = strdup(o->name),
		.line = o->name_node->line, .column = o->name_node->column,
	};
	if (!e->name) {
		cd_oom(L->c);
		return;
	}
	L->n_names++;
}

static int cmp_name_ent(const void *a, const void *b)
{
	const struct name_ent *x = a, *y = b;
	int r;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if ((r = strcmp(x->name, y->name)))
		return r;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Same kind and name twice: an error at the later one.  The object of the
 * diagnostic is the later object ("Kind/name" is the same for both). */
void cd_check_duplicate_names(struct load *L)
{
	struct ctx *c = L->c;

	size_t run = 0;

	if (L->n_names < 2)
		return;
	qsort(L->names, L->n_names, sizeof(*L->names), cmp_name_ent);
	for (size_t i = 1; i < L->n_names; i++) {
		const struct name_ent *e = &L->names[i], *first = &L->names[run];

		if (first->kind != e->kind || strcmp(first->name, e->name)) {
			run = i;
			continue;
		}
		snprintf(c->object, sizeof(c->object), "%s/%s", kind_names[e->kind],
			 e->name);
		cd_path_set(c, "metadata.name");
		cd_err_at(c, SL_SEV_ERROR, e->line, e->column,
			  "duplicate %s name '%s'; also defined at %s:%u:%u",
			  kind_names[e->kind], e->name, c->file, first->line,
			  first->column);
	}
	c->object[0] = '\0';
	cd_path_pop(c, 0);
}
