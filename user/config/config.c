// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Configuration loader: YAML documents -> struct sl_config.
 *
 * Shape of the decoder (so that adding kinds and fields stays easy):
 *  - every YAML mapping that is part of the schema is described by a table
 *    of struct fdesc (name, kind, offset into a C struct, bounds, enum
 *    values).  cd_decode_fields() walks one mapping against one table: it
 *    reports unknown keys (with "did you mean"), duplicate keys, missing
 *    required fields, wrong types and out-of-range values, stores the simple
 *    fields and hands back the nodes of every field (struct fhit) so the
 *    caller can decode nested objects (FK_CUSTOM) and check cross-field rules;
 *  - every kind is one entry of kinds[]: a name check and a decode function;
 *    Server and PriorityLevelConfiguration live here, FlowSchema in
 *    config_flowschema.c, ConnectionLabels and the label matchers in
 *    config_labels.c, AverageLatencySchedulingPolicy in config_policy.c,
 *    CIDRs and ports in config_net.c; config_decode.h is their shared,
 *    internal interface;
 *  - cross-object rules (unique names per kind, one Server, mandatory
 *    objects, FlowSchema -> level references, labels nobody sets) run after
 *    all documents.
 * Decoding never stops at an error: every problem of the file is reported,
 * and the configuration is only handed out when there is none.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf */
#endif
#include "config/config.h"
#include "lib/read_file.h"
#include "config/decode.h"
#include "lib/hostport.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/shuffle.h"
#include "sluice_abi.h"
#include "config/yaml_doc.h"

_Static_assert(SL_LEVEL_NAME_SIZE == SLUICE_LEVEL_NAME_LEN, "level name size");
_Static_assert(SL_MAX_LEVELS == SLUICE_MAX_LEVELS, "max levels");
_Static_assert((int)SL_FAIL_OPEN == SLUICE_FAIL_OPEN &&
	       (int)SL_FAIL_CLOSED == SLUICE_FAIL_CLOSED, "fail mode");
_Static_assert((int)SL_LEVEL_EXEMPT == SLUICE_LEVEL_EXEMPT &&
	       (int)SL_LEVEL_LIMITED == SLUICE_LEVEL_LIMITED, "level type");
_Static_assert((int)SL_RESP_QUEUE == SLUICE_RESP_QUEUE &&
	       (int)SL_RESP_REJECT == SLUICE_RESP_REJECT, "limit response");

#define SL_MAX_FILE_SIZE (16u << 20)     /* config files are small */
#define MAX_ENTROPY_BITS SL_SHUFFLE_MAX_BITS /* shuffle sharding, spec/apf.md 2.2 */
#define MAX_DECK_SIZE    SL_SHUFFLE_MAX_DECK

/* ---- defaults ----------------------------------------------------------- */

#define DEF_SERVER_CL        600
#define DEF_HEARTBEAT        (3 * SEC)
#define DEF_TICK             (100 * MSEC)
#define DEF_HANDSHAKE        (10 * SEC)
#define DEF_PIN_DIR          "/sys/fs/bpf/sluice"
#define DEF_CONNS            SLUICE_DEFAULT_CONNS
#define DEF_CLASSES          SLUICE_DEFAULT_CLASSES
#define DEF_CONTROL_SOCKET   "/run/sluice/sluiced.sock"
#define DEF_EVENTS           1000
#define DEF_LIMITED_SHARES   30
#define DEF_QUEUES           64
#define DEF_HAND_SIZE        8
#define DEF_QUEUE_LEN        50
#define DEF_QUEUE_WAIT       (15 * SEC)
#define CATCH_ALL_SHARES     5

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

int cd_grow(void *arr, size_t *cap, size_t n, size_t size)
{
	void **a = arr;
	size_t ncap;
	void *p;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 8;
	if (ncap > SIZE_MAX / size)
		return -ENOMEM;
	p = realloc(*a, ncap * size);
	if (!p)
		return -ENOMEM;
	*a = p;
	*cap = ncap;
	return 0;
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
static size_t osa_distance(const char *a, const char *b)
{
	enum { MAXW = 64 };
	unsigned short d[MAXW + 1][MAXW + 1];
	size_t la = strlen(a), lb = strlen(b);

	if (la > MAXW || lb > MAXW)
		return SIZE_MAX;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = (unsigned short)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (unsigned short)j;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++) {
			unsigned cost = cd_lower(a[i - 1]) != cd_lower(b[j - 1]);
			unsigned v = d[i - 1][j] + 1u;

			if (d[i][j - 1] + 1u < v)
				v = d[i][j - 1] + 1u;
			if (d[i - 1][j - 1] + cost < v)
				v = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 && cd_lower(a[i - 1]) == cd_lower(b[j - 2]) &&
			    cd_lower(a[i - 2]) == cd_lower(b[j - 1]) &&
			    d[i - 2][j - 2] + 1u < v)
				v = d[i - 2][j - 2] + 1u;
			d[i][j] = (unsigned short)v;
		}
	}
	return d[la][lb];
}

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
		size_t dist = osa_distance(word, cands[i]);

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

/* ---- durations ---------------------------------------------------------- */

struct dur_unit {
	const char *name;
	int64_t ns;
};

static const struct dur_unit dur_units[] = {
	{ "ns", NSEC }, { "us", USEC }, { "\xc2\xb5s", USEC }, /* U+00B5 */
	{ "\xce\xbcs", USEC }, /* U+03BC */
	{ "ms", MSEC }, { "s", SEC }, { "m", MIN }, { "h", HOUR },
};

#define DUR_UNITS_HELP "ns, us, \xc2\xb5s, ms, s, m, h"

/* Go's time.ParseDuration, minus negative values and bare numbers.  On
 * failure writes a short reason (to follow "duration 'x' ") into why. */
static int parse_duration(const char *s, uint64_t *out, char *why,
			  size_t whylen)
{
	const char *orig = s;
	uint64_t total = 0;
	const uint64_t max = (uint64_t)INT64_MAX;

	if (*s == '-') {
		snprintf(why, whylen, "must not be negative");
		return -EINVAL;
	}
	if (*s == '+')
		s++;
	if (!*s) {
		snprintf(why, whylen, "is empty; expected a number and a unit, e.g. 5s");
		return -EINVAL;
	}
	if (strspn(s, "0123456789.") == strlen(s) &&
	    strspn(s, "0123456789") > 0) {
		snprintf(why, whylen, "needs a unit, e.g. %ss", orig);
		return -EINVAL;
	}
	while (*s) {
		uint64_t v = 0, f = 0;
		double scale = 1.0;
		bool pre = false, post = false, overflow = false;
		const char *u;
		size_t ulen;
		const struct dur_unit *unit = NULL;

		if (!(*s == '.' || (*s >= '0' && *s <= '9'))) {
			snprintf(why, whylen,
				 "is not a duration; expected a number and a unit, e.g. 5s or 1m30s");
			return -EINVAL;
		}
		for (; *s >= '0' && *s <= '9'; s++) {
			pre = true;
			if (v > (UINT64_MAX - 9) / 10)
				overflow = true;
			else
				v = v * 10 + (uint64_t)(*s - '0');
		}
		if (*s == '.') {
			s++;
			for (; *s >= '0' && *s <= '9'; s++) {
				post = true;
				if (overflow || f > (UINT64_MAX - 9) / 10)
					continue; /* drop digits beyond precision */
				f = f * 10 + (uint64_t)(*s - '0');
				scale *= 10;
			}
		}
		if (!pre && !post) {
			snprintf(why, whylen,
				 "is not a duration; expected a number and a unit, e.g. 5s or 1m30s");
			return -EINVAL;
		}
		u = s;
		while (*s && *s != '.' && !(*s >= '0' && *s <= '9'))
			s++;
		ulen = (size_t)(s - u);
		if (!ulen) {
			snprintf(why, whylen, "needs a unit after the last number, e.g. %ss",
				 orig);
			return -EINVAL;
		}
		for (size_t i = 0; i < ARRAY_SIZE(dur_units); i++)
			if (strlen(dur_units[i].name) == ulen &&
			    !memcmp(dur_units[i].name, u, ulen))
				unit = &dur_units[i];
		if (!unit) {
			char q[SL_YQUOTE_MAX];

			snprintf(why, whylen, "has unknown unit '%s' (valid units: " DUR_UNITS_HELP ")",
				 sl_yquote(u, ulen, q, sizeof(q)));
			return -EINVAL;
		}
		if (overflow || v > max / (uint64_t)unit->ns)
			goto range;
		v *= (uint64_t)unit->ns;
		if (f > 0) {
			v += (uint64_t)((double)f * ((double)unit->ns / scale));
			if (v > max)
				goto range;
		}
		if (total > max - v)
			goto range;
		total += v;
	}
	*out = total;
	return 0;
range:
	snprintf(why, whylen, "is too long (at most 2562047h47m16.854775807s)");
	return -ERANGE;
}

int sl_parse_duration(const char *s, uint64_t *ns)
{
	char why[128];
	uint64_t v;
	int r;

	if (!s || !ns)
		return -EINVAL;
	r = parse_duration(s, &v, why, sizeof(why));
	if (!r)
		*ns = v;
	return r;
}

/* whole[.fraction]suffix, the fraction rem/unit without trailing zeros
 * (unit is a power of ten). */
static int fmt_fraction(char *buf, size_t size, uint64_t whole, uint64_t rem,
			uint64_t unit, const char *suffix)
{
	char frac[24];
	size_t n = 0;

	for (uint64_t u = unit / 10; u && rem && n < sizeof(frac) - 1; u /= 10) {
		frac[n++] = (char)('0' + rem / u);
		rem %= u;
	}
	frac[n] = '\0';
	if (!n)
		return snprintf(buf, size, "%" PRIu64 "%s", whole, suffix);
	return snprintf(buf, size, "%" PRIu64 ".%s%s", whole, frac, suffix);
}

int sl_format_duration(uint64_t ns, char *buf, size_t size)
{
	char tmp[64];
	size_t o = 0;
	uint64_t h, m, s;

	if (ns == 0)
		return snprintf(buf, size, "0s");
	if (ns < (uint64_t)USEC)
		return snprintf(buf, size, "%" PRIu64 "ns", ns);
	if (ns < (uint64_t)MSEC)
		return fmt_fraction(buf, size, ns / USEC, ns % USEC, USEC, "us");
	if (ns < (uint64_t)SEC)
		return fmt_fraction(buf, size, ns / MSEC, ns % MSEC, MSEC, "ms");
	h = ns / (uint64_t)HOUR;
	m = ns % (uint64_t)HOUR / (uint64_t)MIN;
	s = ns % (uint64_t)MIN;
	if (h)
		o += (size_t)snprintf(tmp + o, sizeof(tmp) - o, "%" PRIu64 "h", h);
	if (m)
		o += (size_t)snprintf(tmp + o, sizeof(tmp) - o, "%" PRIu64 "m", m);
	if (s)
		fmt_fraction(tmp + o, sizeof(tmp) - o, s / SEC, s % SEC, SEC, "s");
	return snprintf(buf, size, "%s", tmp);
}

struct cd_durstr cd_dur(uint64_t ns)
{
	struct cd_durstr d;

	sl_format_duration(ns, d.s, sizeof(d.s));
	return d;
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
	if (parse_duration(v->str, &x, why, sizeof(why))) {
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

/* ---- kind: Server --------------------------------------------------------- */

static const struct enumval fail_modes[] = {
	{ "open", SL_FAIL_OPEN }, { "closed", SL_FAIL_CLOSED }, { NULL, 0 },
};

enum {
	SV_LIMIT, SV_FAIL_MODE, SV_HEARTBEAT, SV_TICK, SV_HANDSHAKE,
	SV_INTERFACES, SV_PIN_DIR, SV_TABLE_SIZES, SV_METRICS, SV_EVENTS,
	SV_CONTROL, SV_SHADOW, SV_OVERBOOK, SV_N
};

#define SRV struct sl_server_cfg
static const struct fdesc server_fields[SV_N] = {
	[SV_LIMIT] = F_INT("serverConcurrencyLimit", SRV, server_concurrency_limit, 1, INT32_MAX),
	[SV_FAIL_MODE] = F_ENUM("failMode", SRV, fail_mode, fail_modes),
	[SV_HEARTBEAT] = F_DUR("heartbeatTimeout", SRV, heartbeat_timeout_ns, 0, 24 * HOUR),
	[SV_TICK] = F_DUR("tick", SRV, tick_ns, 1 * MSEC, 10 * SEC),
	[SV_HANDSHAKE] = F_DUR("handshakeTimeout", SRV, handshake_timeout_ns, 1 * MSEC, 24 * HOUR),
	[SV_INTERFACES] = F_CUSTOM("interfaces"),
	[SV_PIN_DIR] = F_STR("pinDir", SRV, pin_dir),
	[SV_TABLE_SIZES] = F_CUSTOM("tableSizes"),
	[SV_METRICS] = F_STR("metricsAddress", SRV, metrics_address),
	[SV_EVENTS] = F_INT("eventsPerSecond", SRV, events_per_second, 0, UINT32_MAX),
	[SV_CONTROL] = F_STR("controlSocket", SRV, control_socket),
	[SV_SHADOW] = F_BOOL("shadow", SRV, shadow),
	[SV_OVERBOOK] = F_NUM("ticketOverbooking", SRV, ticket_overbooking, 0, 16),
};

static const struct fdesc table_size_fields[] = {
	F_INT("connections", SRV, table_sizes.connections, 1024, 16777216),
	F_INT("classes", SRV, table_sizes.classes, 1024, 1048576),
};
#undef SRV

static int server_defaults(struct sl_server_cfg *s)
{
	memset(s, 0, sizeof(*s));
	s->server_concurrency_limit = DEF_SERVER_CL;
	s->fail_mode = SL_FAIL_OPEN;
	s->heartbeat_timeout_ns = DEF_HEARTBEAT;
	s->tick_ns = DEF_TICK;
	s->handshake_timeout_ns = DEF_HANDSHAKE;
	s->table_sizes.connections = DEF_CONNS;
	s->table_sizes.classes = DEF_CLASSES;
	s->events_per_second = DEF_EVENTS;
	s->ticket_overbooking = 1;
	s->pin_dir = strdup(DEF_PIN_DIR);
	s->control_socket = strdup(DEF_CONTROL_SOCKET);
	return s->pin_dir && s->control_socket ? 0 : -ENOMEM;
}

static void server_release(struct sl_server_cfg *s)
{
	free(s->interfaces);
	free(s->pin_dir);
	free(s->metrics_address);
	free(s->control_socket);
	free(s->file);
	memset(s, 0, sizeof(*s));
}

/* Linux dev_valid_name(): 1..15 bytes, not "." or "..", no '/', ':' or
 * whitespace. */
static const char *ifname_problem(const char *s)
{
	size_t len = strlen(s);

	if (!len)
		return "must not be empty";
	if (len >= SL_IFNAME_SIZE)
		return NULL; /* reported with the length */
	if (!strcmp(s, ".") || !strcmp(s, ".."))
		return "is not a valid interface name";
	for (; *s; s++)
		if (*s == '/' || *s == ':' || *s == ' ' || (*s >= '\t' && *s <= '\r'))
			return "must not contain '/', ':' or whitespace";
	return NULL;
}

static void decode_interfaces(struct ctx *c, const struct sl_ynode *v,
			      struct sl_server_cfg *s)
{
	if (v->type != SL_Y_SEQ) {
		cd_err(c, v, "expected a list of interface names, got %s",
		    cd_describe(v).s);
		return;
	}
	if (!v->n_items)
		return;
	if (v->n_items > 4096) {
		cd_err(c, v, "%zu interfaces listed; at most 4096 allowed", v->n_items);
		return;
	}
	s->interfaces = calloc(v->n_items, sizeof(*s->interfaces));
	if (!s->interfaces) {
		cd_oom(c);
		return;
	}
	for (size_t i = 0; i < v->n_items; i++) {
		const struct sl_ynode *it = v->items[i];
		size_t old = cd_path_push_index(c, i);
		const char *name, *problem;
		QBUF;

		if (!cd_get_string(c, it, &name))
			goto next;
		if (strlen(name) >= SL_IFNAME_SIZE) {
			cd_err(c, it, "interface name '%s' is %zu characters long; at most %d allowed",
			    Q(it), strlen(name), SL_IFNAME_SIZE - 1);
			goto next;
		}
		if ((problem = ifname_problem(name))) {
			cd_err(c, it, "interface name '%s' %s", Q(it), problem);
			goto next;
		}
		for (size_t j = 0; j < i; j++) {
			const struct sl_ynode *o = v->items[j];

			if (o->type == SL_Y_STR && o->len == it->len &&
			    !memcmp(o->str, it->str, it->len)) {
				cd_err(c, it, "duplicate interface '%s'; also listed at %s:%u:%u",
				    Q(it), c->file, o->line, o->column);
				goto next;
			}
		}
		memcpy(s->interfaces[s->n_interfaces++], name, strlen(name) + 1);
next:
		cd_path_pop(c, old);
	}
}

static void decode_server_spec(struct ctx *c, const struct sl_ynode *spec,
			       struct sl_server_cfg *s)
{
	struct fhit h[SV_N], th[ARRAY_SIZE(table_size_fields)];
	size_t old = cd_path_push(c, "spec");

	if (!cd_decode_fields(c, spec, server_fields, SV_N, s, h))
		goto out;
	if (h[SV_INTERFACES].value) {
		size_t o2 = cd_path_push(c, "interfaces");

		decode_interfaces(c, h[SV_INTERFACES].value, s);
		cd_path_pop(c, o2);
	}
	if (h[SV_TABLE_SIZES].value) {
		size_t o2 = cd_path_push(c, "tableSizes");

		cd_decode_fields(c, h[SV_TABLE_SIZES].value, table_size_fields,
			      ARRAY_SIZE(table_size_fields), s, th);
		cd_path_pop(c, o2);
	}
	if (h[SV_PIN_DIR].value && h[SV_PIN_DIR].ok) {
		size_t o2 = cd_path_push(c, "pinDir");
		const struct sl_ynode *v = h[SV_PIN_DIR].value;
		QBUF;

		if (s->pin_dir[0] != '/')
			cd_err(c, v, "must be an absolute path, got '%s'", Q(v));
		else if (strlen(s->pin_dir) >= 1024)
			cd_err(c, v, "path is %zu characters long; at most 1023 allowed",
			    strlen(s->pin_dir));
		cd_path_pop(c, o2);
	}
	if (h[SV_CONTROL].value && h[SV_CONTROL].ok) {
		size_t o2 = cd_path_push(c, "controlSocket");
		const struct sl_ynode *v = h[SV_CONTROL].value;
		QBUF;

		if (s->control_socket[0] != '/')
			cd_err(c, v, "must be an absolute path, got '%s'", Q(v));
		else if (strlen(s->control_socket) >= 108)
			cd_err(c, v, "path is %zu bytes long; a Unix socket path holds at most 107",
			       strlen(s->control_socket));
		cd_path_pop(c, o2);
	}
	if (h[SV_METRICS].value && h[SV_METRICS].ok) {
		size_t o2 = cd_path_push(c, "metricsAddress");
		struct sockaddr_storage ss;
		socklen_t sl;
		char why[128];
		QBUF;

		if (!s->metrics_address[0])
			cd_err(c, h[SV_METRICS].value,
			    "must not be empty; expected host:port, e.g. 127.0.0.1:9464 (omit the field to disable metrics)");
		else if (sl_parse_hostport(s->metrics_address, &ss, &sl, why, sizeof(why)))
			cd_err(c, h[SV_METRICS].value, "'%s': %s", Q(h[SV_METRICS].value), why);
		cd_path_pop(c, o2);
	}
	/* Cross-field advice, only with valid values. */
	if (h[SV_HEARTBEAT].ok && h[SV_TICK].ok && s->heartbeat_timeout_ns &&
	    s->heartbeat_timeout_ns < 2 * s->tick_ns) {
		const char *field = h[SV_HEARTBEAT].value ? "heartbeatTimeout" : "tick";
		const struct sl_ynode *at = h[SV_HEARTBEAT].value ?
			h[SV_HEARTBEAT].value : h[SV_TICK].value;
		size_t o2 = cd_path_push(c, field);

		cd_warn(c, at ? at : spec,
		     "heartbeatTimeout %s is shorter than two ticks (tick %s); the failsafe may trigger between heartbeats",
		     cd_dur(s->heartbeat_timeout_ns).s,
		     cd_dur(s->tick_ns).s);
		cd_path_pop(c, o2);
	}
	if (h[SV_FAIL_MODE].value && h[SV_FAIL_MODE].ok && h[SV_HEARTBEAT].ok &&
	    s->fail_mode == SL_FAIL_CLOSED && !s->heartbeat_timeout_ns) {
		size_t o2 = cd_path_push(c, "failMode");

		cd_warn(c, h[SV_FAIL_MODE].value,
		     "failMode closed has no effect while heartbeatTimeout is 0s (failsafe disabled)");
		cd_path_pop(c, o2);
	}
out:
	cd_path_pop(c, old);
}

static void decode_server(struct load *L, const struct object *o)
{
	struct ctx *c = L->c;
	struct sl_server_cfg scratch, *s = &L->cfg->server;

	if (L->server_seen) {
		size_t old = cd_path_push(c, "kind");

		cd_err(c, o->kind, "only one Server object is allowed; also defined at %s:%u:%u",
		    c->file, L->server_line, L->server_col);
		cd_path_pop(c, old);
		/* decode anyway to report its own errors */
		if (server_defaults(&scratch)) {
			cd_oom(c);
			return;
		}
		s = &scratch;
	} else {
		L->server_seen = true;
		L->server_line = o->kind->line;
		L->server_col = o->kind->column;
		s->present = true;
		s->line = o->root->line;
		s->column = o->root->column;
		if (!(s->file = strdup(c->file)))
			cd_oom(c);
	}
	if (o->spec)
		decode_server_spec(c, o->spec, s);
	if (s == &scratch)
		server_release(&scratch);
}

/* ---- kind: PriorityLevelConfiguration ------------------------------------ */

static const struct enumval level_types[] = {
	{ "Exempt", SL_LEVEL_EXEMPT }, { "Limited", SL_LEVEL_LIMITED }, { NULL, 0 },
};

static const struct enumval limit_responses[] = {
	{ "Queue", SL_RESP_QUEUE }, { "Reject", SL_RESP_REJECT }, { NULL, 0 },
};

#define LVL struct sl_level_cfg

enum { PL_TYPE, PL_EXEMPT, PL_LIMITED, PL_PORTS, PL_SEATS, PL_N };
static const struct fdesc level_fields[PL_N] = {
	[PL_TYPE] = F_ENUM("type", LVL, type, level_types, .required = true),
	[PL_EXEMPT] = F_CUSTOM("exempt"),
	[PL_LIMITED] = F_CUSTOM("limited"),
	/* moved to FlowSchema: known here only to say so */
	[PL_PORTS] = F_CUSTOM("ports"),
	[PL_SEATS] = F_CUSTOM("seatsPerConnection"),
};

static const struct fdesc exempt_fields[] = {
	F_INT("nominalConcurrencyShares", LVL, shares, 0, INT32_MAX),
	F_INT("lendablePercent", LVL, lendable_percent, 0, 100),
};

enum { LM_SHARES, LM_LENDABLE, LM_BORROWING, LM_RESPONSE, LM_N };
static const struct fdesc limited_fields[LM_N] = {
	[LM_SHARES] = F_INT("nominalConcurrencyShares", LVL, shares, 0, INT32_MAX),
	[LM_LENDABLE] = F_INT("lendablePercent", LVL, lendable_percent, 0, 100),
	[LM_BORROWING] = F_INT("borrowingLimitPercent", LVL, borrowing_limit_percent, 0, INT32_MAX),
	[LM_RESPONSE] = F_CUSTOM("limitResponse"),
};

enum { LR_TYPE, LR_QUEUING, LR_N };
static const struct fdesc response_fields[LR_N] = {
	[LR_TYPE] = F_ENUM("type", LVL, limit_response, limit_responses, .required = true),
	[LR_QUEUING] = F_CUSTOM("queuing"),
};

enum { QU_QUEUES, QU_HAND, QU_LENGTH, QU_WAIT, QU_N };
static const struct fdesc queuing_fields[QU_N] = {
	[QU_QUEUES] = F_INT("queues", LVL, queues, 1, MAX_DECK_SIZE,
			    .hint_low = "to turn queuing off, use limitResponse.type: Reject"),
	[QU_HAND] = F_INT("handSize", LVL, hand_size, 1, INT32_MAX),
	[QU_LENGTH] = F_INT("queueLengthLimit", LVL, queue_length_limit, 1, INT32_MAX),
	[QU_WAIT] = F_DUR("queueWaitLimit", LVL, queue_wait_limit_ns, 1 * MSEC, 1 * HOUR),
};
#undef LVL

/*
 * Shuffle-sharding advice (spec/apf.md §8): warn when 4 elephant flows
 * cover a mouse flow's whole hand with probability above
 * SL_MOUSE_ODDS_WARN.  One queue is a plain FIFO by choice (no hashing),
 * not poor shuffle sharding: no advice there.
 */
static void check_mouse_odds(struct ctx *c, const struct sl_ynode *qnode,
			     const struct fhit *h, const struct sl_level_cfg *l)
{
	const struct sl_ynode *at = h[QU_HAND].value ? h[QU_HAND].value :
				    h[QU_QUEUES].value ? h[QU_QUEUES].value : qnode;
	double p1, p4;
	char better[160] = "";
	bool hand_helps;
	size_t old;

	if (l->queues <= 1)
		return;
	p4 = sl_shuffle_mouse_odds(l->queues, l->hand_size, 4);
	if (!(p4 > SL_MOUSE_ODDS_WARN))
		return;
	p1 = sl_shuffle_mouse_odds(l->queues, l->hand_size, 1);
	/* Suggest the fewest queues (doubling) that bring it under 1%. */
	for (uint64_t q = (uint64_t)l->queues * 2; q <= MAX_DECK_SIZE; q *= 2) {
		double pq;

		if (sl_shuffle_validate((uint32_t)q, l->hand_size, NULL, 0))
			break;
		pq = sl_shuffle_mouse_odds((uint32_t)q, l->hand_size, 4);
		if (pq >= 0 && pq <= 0.01) {
			snprintf(better, sizeof(better), " (e.g. %" PRIu64 " queues: %.3g)",
				 q, pq);
			break;
		}
	}
	/* A bigger hand helps only when queues are plenty. */
	hand_helps = !sl_shuffle_validate(l->queues, l->hand_size + 1, NULL, 0) &&
		     sl_shuffle_mouse_odds(l->queues, l->hand_size + 1, 4) < p4;
	old = c->plen;
	if (h[QU_HAND].value || h[QU_QUEUES].value)
		cd_path_push(c, h[QU_HAND].value ? "handSize" : "queues");
	cd_warn(c, at,
		"with %u queues and handSize %u, 4 elephant flows crush a mouse flow with probability %.3g (one elephant: %.3g); raise queues%s%s",
		l->queues, l->hand_size, p4, p1, better,
		hand_helps ? " or handSize" : "");
	cd_path_pop(c, old);
}

/* Kubernetes shuffle-sharding rules (validation.go, spec/apf.md 2.2). */
static void check_queuing(struct ctx *c, const struct sl_ynode *qnode,
			  const struct fhit *h, const struct sl_level_cfg *l)
{
	const struct sl_ynode *hand = h[QU_HAND].value, *queues = h[QU_QUEUES].value;
	int bits;

	if (!h[QU_HAND].ok || !h[QU_QUEUES].ok)
		return;
	if (l->hand_size > l->queues) {
		if (hand) {
			size_t old = cd_path_push(c, "handSize");

			cd_err(c, hand, "must not exceed queues (%u), got %u",
			    l->queues, l->hand_size);
			cd_path_pop(c, old);
		} else {
			size_t old = cd_path_push(c, "queues");

			cd_err(c, queues ? queues : qnode,
			    "%u queues are fewer than the default handSize %u; set handSize to at most %u",
			    l->queues, l->hand_size, l->queues);
			cd_path_pop(c, old);
		}
		return;
	}
	bits = sl_shuffle_entropy_bits(l->queues, l->hand_size);
	if (bits <= MAX_ENTROPY_BITS &&
	    !sl_shuffle_validate(l->queues, l->hand_size, NULL, 0)) {
		check_mouse_odds(c, qnode, h, l);
		return;
	}
	if (hand || !queues) {
		size_t old = cd_path_push(c, "handSize");

		cd_err(c, hand ? hand : qnode,
		    "%u needs %d bits of entropy with %u queues; at most %d allowed",
		    l->hand_size, bits, l->queues, MAX_ENTROPY_BITS);
		cd_path_pop(c, old);
	} else {
		size_t old = cd_path_push(c, "queues");

		cd_err(c, queues,
		    "%u queues need %d bits of entropy with the default handSize %u; at most %d allowed",
		    l->queues, bits, l->hand_size, MAX_ENTROPY_BITS);
		cd_path_pop(c, old);
	}
}

static void decode_queuing(struct ctx *c, const struct sl_ynode *q,
			   struct sl_level_cfg *l)
{
	struct fhit h[QU_N];
	size_t old = cd_path_push(c, "queuing");

	if (cd_decode_fields(c, q, queuing_fields, QU_N, l, h)) {
		check_queuing(c, q, h, l);
		if (h[QU_WAIT].value && h[QU_WAIT].ok &&
		    l->queue_wait_limit_ns > (uint64_t)SYN_RETRY_WINDOW) {
			size_t o2 = cd_path_push(c, "queueWaitLimit");

			cd_warn(c, h[QU_WAIT].value,
			     "%s is longer than Linux clients keep retrying a connection (the last SYN retransmit comes after about 63s with the default net.ipv4.tcp_syn_retries=6); deferred connections will have given up",
			     cd_dur(l->queue_wait_limit_ns).s);
			cd_path_pop(c, o2);
		}
	}
	cd_path_pop(c, old);
}

static void queuing_defaults(struct sl_level_cfg *l)
{
	l->queues = DEF_QUEUES;
	l->hand_size = DEF_HAND_SIZE;
	l->queue_length_limit = DEF_QUEUE_LEN;
	l->queue_wait_limit_ns = DEF_QUEUE_WAIT;
}

static void queuing_clear(struct sl_level_cfg *l)
{
	l->queues = l->hand_size = l->queue_length_limit = 0;
	l->queue_wait_limit_ns = 0;
}

static void decode_limit_response(struct ctx *c, const struct sl_ynode *n,
				  struct sl_level_cfg *l)
{
	struct fhit h[LR_N];
	size_t old = cd_path_push(c, "limitResponse");

	l->limit_response = SL_RESP_REJECT;
	if (!cd_decode_fields(c, n, response_fields, LR_N, l, h))
		goto out;
	if (h[LR_TYPE].ok && l->limit_response == SL_RESP_QUEUE) {
		queuing_defaults(l);
		if (h[LR_QUEUING].value)
			decode_queuing(c, h[LR_QUEUING].value, l);
	} else if (h[LR_QUEUING].value) {
		struct sl_level_cfg scratch = { 0 };

		if (h[LR_TYPE].ok) {
			size_t o2 = cd_path_push(c, "queuing");

			cd_err(c, h[LR_QUEUING].key,
			    "only allowed when type is Queue (type is Reject)");
			cd_path_pop(c, o2);
		}
		queuing_defaults(&scratch);
		c->mute_warnings++;
		decode_queuing(c, h[LR_QUEUING].value, &scratch);
		c->mute_warnings--;
	}
	if (l->limit_response != SL_RESP_QUEUE)
		queuing_clear(l);
out:
	cd_path_pop(c, old);
}

static void limited_defaults(struct sl_level_cfg *l)
{
	l->shares = DEF_LIMITED_SHARES;
	l->lendable_percent = 0;
	l->borrowing_limit_percent = -1;
	l->limit_response = SL_RESP_REJECT;
	queuing_clear(l);
}

static void exempt_defaults(struct sl_level_cfg *l)
{
	l->shares = 0;
	l->lendable_percent = 0;
	l->borrowing_limit_percent = -1;
	l->limit_response = SL_RESP_REJECT;
	queuing_clear(l);
}

static void decode_limited(struct ctx *c, const struct sl_ynode *n,
			   struct sl_level_cfg *l)
{
	struct fhit h[LM_N];
	size_t old = cd_path_push(c, "limited");

	if (cd_decode_fields(c, n, limited_fields, LM_N, l, h) &&
	    h[LM_RESPONSE].value)
		decode_limit_response(c, h[LM_RESPONSE].value, l);
	cd_path_pop(c, old);
}

static void decode_exempt(struct ctx *c, const struct sl_ynode *n,
			  struct sl_level_cfg *l)
{
	struct fhit h[ARRAY_SIZE(exempt_fields)];
	size_t old = cd_path_push(c, "exempt");

	cd_decode_fields(c, n, exempt_fields, ARRAY_SIZE(exempt_fields), l, h);
	cd_path_pop(c, old);
}

/* The built-in mandatory levels (spec/apf.md §6.1). */
static int mandatory_level(struct sl_level_cfg *l, int which)
{
	memset(l, 0, sizeof(*l));
	if (which == 0) {
		snprintf(l->name, sizeof(l->name), "%s", SL_EXEMPT_NAME);
		l->type = SL_LEVEL_EXEMPT;
		exempt_defaults(l);
	} else {
		snprintf(l->name, sizeof(l->name), "%s", SL_CATCH_ALL_NAME);
		l->type = SL_LEVEL_LIMITED;
		limited_defaults(l);
		l->shares = CATCH_ALL_SHARES;
	}
	l->mandatory = true;
	l->builtin = true;
	return 0;
}

/* Node at spec.<a>.<b>..., or NULL. */
static const struct sl_ynode *node_at(const struct sl_ynode *n, ...)
{
	va_list ap;
	const char *k;

	va_start(ap, n);
	while (n && (k = va_arg(ap, const char *)))
		n = sl_ymap_get(n, k);
	va_end(ap);
	return n;
}

/* A file restating a mandatory level may not change it, except the exempt
 * level's nominalConcurrencyShares and lendablePercent (spec/apf.md §6.3:
 * Kubernetes restores mandatory objects to their built-in spec). */
static void check_mandatory_level(struct ctx *c, const struct object *o,
				  const struct sl_level_cfg *l, int which)
{
	struct sl_level_cfg want;
	const struct sl_ynode *spec = o->spec ? o->spec : o->root;
	const struct sl_ynode *lim = node_at(o->spec, "limited", NULL);
	const char *name = which ? SL_CATCH_ALL_NAME : SL_EXEMPT_NAME;
	struct {
		const char *field, *want, *got;
		const struct sl_ynode *at;
		bool differs, defaulted;
	} f[5];
	static const char *const paths[5] = {
		"spec.type", "spec.limited.nominalConcurrencyShares",
		"spec.limited.lendablePercent", "spec.limited.borrowingLimitPercent",
		"spec.limited.limitResponse.type",
	};
	char sh[24], lp[24], bp[24];
	size_t n = 0;

	if (!l->type)
		return; /* type already reported */
	mandatory_level(&want, which);
	f[n++] = (typeof(f[0])){ "type", which ? "Limited" : "Exempt",
				 l->type == SL_LEVEL_EXEMPT ? "Exempt" : "Limited",
				 node_at(o->spec, "type", NULL), l->type != want.type, false };
	if (which && l->type == SL_LEVEL_LIMITED) {
		const struct sl_ynode *s = node_at(lim, "nominalConcurrencyShares", NULL);
		const struct sl_ynode *lend = node_at(lim, "lendablePercent", NULL);
		const struct sl_ynode *b = node_at(lim, "borrowingLimitPercent", NULL);
		const struct sl_ynode *r = node_at(lim, "limitResponse", "type", NULL);

		snprintf(sh, sizeof(sh), "%d", l->shares);
		snprintf(lp, sizeof(lp), "%d", l->lendable_percent);
		snprintf(bp, sizeof(bp), "%d", l->borrowing_limit_percent);
		f[n++] = (typeof(f[0])){ "nominalConcurrencyShares", "5", sh,
					 s, l->shares != want.shares, !s };
		f[n++] = (typeof(f[0])){ "lendablePercent", "0", lp,
					 lend, l->lendable_percent != 0, !lend };
		f[n++] = (typeof(f[0])){ "borrowingLimitPercent", "unset", bp,
					 b, l->borrowing_limit_percent != -1, false };
		f[n++] = (typeof(f[0])){ "limitResponse.type", "Reject",
					 l->limit_response == SL_RESP_QUEUE ? "Queue" : "Reject",
					 r, l->limit_response != SL_RESP_REJECT, false };
	}
	for (size_t i = 0; i < n; i++) {
		if (!f[i].differs)
			continue;
		cd_path_set(c, paths[i]);
		if (which)
			cd_err(c, f[i].at ? f[i].at : lim ? lim : spec,
			       "the mandatory level %s has %s %s and a file may not change it (spec/apf.md §6.3), got %s%s",
			       name, f[i].field, f[i].want,
			       f[i].defaulted ? "the default " : "", f[i].got);
		else
			cd_err(c, f[i].at ? f[i].at : spec,
			       "the mandatory level %s has type Exempt; a file may change only its exempt.nominalConcurrencyShares and exempt.lendablePercent (spec/apf.md §6.3)",
			       name);
	}
	cd_path_pop(c, 0);
}

static void decode_level_spec(struct load *L, const struct object *o,
			      struct sl_level_cfg *l)
{
	struct ctx *c = L->c;
	struct sl_level_cfg scratch;
	struct fhit h[PL_N];
	size_t old = cd_path_push(c, "spec");

	if (!cd_decode_fields(c, o->spec, level_fields, PL_N, l, h))
		goto out;
	if (!h[PL_TYPE].ok)
		l->type = 0;
	if (l->type == SL_LEVEL_EXEMPT)
		exempt_defaults(l);
	/* The block for the type goes into l, a block for the other type is
	 * an error but still decoded (into scratch) to report its problems. */
	if (h[PL_EXEMPT].value) {
		struct sl_level_cfg *dst = l;

		if (l->type != SL_LEVEL_EXEMPT) {
			if (l->type == SL_LEVEL_LIMITED) {
				size_t o2 = cd_path_push(c, "exempt");

				cd_err(c, h[PL_EXEMPT].key, "only allowed when type is Exempt (type is Limited)");
				cd_path_pop(c, o2);
			}
			memset(&scratch, 0, sizeof(scratch));
			dst = &scratch;
			c->mute_warnings++;
		}
		decode_exempt(c, h[PL_EXEMPT].value, dst);
		if (dst == &scratch)
			c->mute_warnings--;
	}
	if (h[PL_LIMITED].value) {
		struct sl_level_cfg *dst = l;

		if (l->type != SL_LEVEL_LIMITED) {
			if (l->type == SL_LEVEL_EXEMPT) {
				size_t o2 = cd_path_push(c, "limited");

				cd_err(c, h[PL_LIMITED].key, "only allowed when type is Limited (type is Exempt)");
				cd_path_pop(c, o2);
			}
			memset(&scratch, 0, sizeof(scratch));
			limited_defaults(&scratch);
			dst = &scratch;
			c->mute_warnings++;
		}
		decode_limited(c, h[PL_LIMITED].value, dst);
		if (dst == &scratch)
			c->mute_warnings--;
	}
	if (h[PL_PORTS].key) {
		size_t o2 = cd_path_push(c, "ports");

		cd_err(c, h[PL_PORTS].key,
		       "priority levels no longer own ports: FlowSchemas classify connections now; add a FlowSchema whose priorityLevelConfiguration.name is '%s' and list the ports in its spec.rules[].destinations[].ports",
		       l->name[0] ? l->name : "this level");
		cd_path_pop(c, o2);
	}
	if (h[PL_SEATS].key) {
		size_t o2 = cd_path_push(c, "seatsPerConnection");

		cd_err(c, h[PL_SEATS].key,
		       "seatsPerConnection is set per FlowSchema now (FlowSchema spec.seatsPerConnection)");
		cd_path_pop(c, o2);
	}
out:
	cd_path_pop(c, old);
}

static void decode_level(struct load *L, const struct object *o)
{
	struct ctx *c = L->c;
	struct sl_config *cfg = L->cfg;
	struct sl_level_cfg tmp;
	int which = -1;
	size_t idx;

	cd_register_name(L, KIND_LEVEL, o);
	memset(&tmp, 0, sizeof(tmp));
	limited_defaults(&tmp);
	if (o->name)
		snprintf(tmp.name, sizeof(tmp.name), "%s", o->name);
	if (o->name && !strcmp(o->name, SL_EXEMPT_NAME))
		which = 0;
	else if (o->name && !strcmp(o->name, SL_CATCH_ALL_NAME))
		which = 1;
	if (o->spec)
		decode_level_spec(L, o, &tmp);
	if (which >= 0) {
		struct sl_level_cfg *l = &cfg->levels[which];

		if (o->spec)
			check_mandatory_level(c, o, &tmp, which);
		if (L->mandatory_level_in_file[which])
			return; /* a duplicate: reported with the names */
		L->mandatory_level_in_file[which] = true;
		if (which == 0 && tmp.type == SL_LEVEL_EXEMPT) {
			l->shares = tmp.shares;
			l->lendable_percent = tmp.lendable_percent;
		}
		l->builtin = false;
		l->line = o->root->line;
		l->column = o->root->column;
		if (!(l->file = strdup(c->file)))
			cd_oom(c);
		L->level_src[which].name_line = o->name_node->line;
		L->level_src[which].name_col = o->name_node->column;
		return;
	}
	if (cfg->n_levels == SL_MAX_LEVELS) {
		size_t old = cd_path_push(c, "kind");

		cd_err(c, o->kind, "too many PriorityLevelConfiguration objects; at most %d are supported (the mandatory exempt and catch-all included)",
		       SL_MAX_LEVELS);
		cd_path_pop(c, old);
		return;
	}
	if (cd_grow(&cfg->levels, &L->levels_cap, cfg->n_levels, sizeof(*cfg->levels)) ||
	    cd_grow(&L->level_src, &L->level_src_cap, cfg->n_levels, sizeof(*L->level_src))) {
		cd_oom(c);
		return;
	}
	idx = cfg->n_levels++;
	cfg->levels[idx] = tmp;
	cfg->levels[idx].line = o->root->line;
	cfg->levels[idx].column = o->root->column;
	if (!(cfg->levels[idx].file = strdup(c->file)))
		cd_oom(c);
	L->level_src[idx] = (struct obj_src){
		.object = strdup(c->object),
		.name_line = o->name_node ? o->name_node->line : 0,
		.name_col = o->name_node ? o->name_node->column : 0,
	};
	if (!L->level_src[idx].object)
		cd_oom(c);
}

/* Lowercase letters, digits, '-' and '.', every dot-separated label
 * starting and ending with a letter or digit (Kubernetes DNS-1123
 * subdomain). */
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
	if (cd_grow(&L->names, &L->names_cap, L->n_names, sizeof(*L->names))) {
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
static void check_duplicate_names(struct load *L)
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

/* ---- kinds and documents -------------------------------------------------- */

struct kind_desc {
	const char *name;
	bool spec_required;
	/* validates metadata.name beyond "a non-empty string"; may be NULL */
	bool (*check_name)(struct ctx *c, const struct sl_ynode *n, const char *name);
	void (*decode)(struct load *L, const struct object *o);
};

static const struct kind_desc kinds[] = {
	{ "Server", false, NULL, decode_server },
	{ "PriorityLevelConfiguration", true, cd_check_name, decode_level },
	{ "FlowSchema", true, cd_check_name, cd_decode_flow_schema },
	{ "ConnectionLabels", true, cd_check_name, cd_decode_label_object },
	{ "AverageLatencySchedulingPolicy", true, cd_check_name, cd_decode_policy },
};

enum { TOP_API, TOP_KIND, TOP_META, TOP_SPEC, TOP_N };
static const struct fdesc top_fields[TOP_N] = {
	[TOP_API] = F_CUSTOM("apiVersion", .required = true),
	[TOP_KIND] = F_CUSTOM("kind", .required = true),
	[TOP_META] = F_CUSTOM("metadata", .required = true),
	[TOP_SPEC] = F_CUSTOM("spec"),
};

enum { MD_NAME, MD_LABELS, MD_ANNOTATIONS, MD_N };
static const struct fdesc meta_fields[MD_N] = {
	[MD_NAME] = F_CUSTOM("name", .required = true),
	[MD_LABELS] = F_CUSTOM("labels"),
	[MD_ANNOTATIONS] = F_CUSTOM("annotations"),
};

static const struct kind_desc *find_kind(const struct sl_ynode *k)
{
	const char *s = sl_ynode_str(k);

	for (size_t i = 0; s && i < ARRAY_SIZE(kinds); i++)
		if (!strcmp(s, kinds[i].name))
			return &kinds[i];
	return NULL;
}

/* Sets c->object: "Kind/name", "Kind (document N)" or "document N". */
static void set_object(struct ctx *c, const struct sl_ydoc *doc)
{
	const struct sl_ynode *kind = sl_ymap_get(doc->root, "kind");
	const struct sl_ynode *name =
		sl_ymap_get(sl_ymap_get(doc->root, "metadata"), "name");
	char k[SL_YQUOTE_MAX], n[SL_YQUOTE_MAX];

	if (!sl_ynode_str(kind) || !kind->len) {
		snprintf(c->object, sizeof(c->object), "document %u", doc->index);
		return;
	}
	sl_yquote(kind->str, kind->len, k, sizeof(k));
	if (sl_ynode_str(name) && name->len) {
		sl_yquote(name->str, name->len, n, sizeof(n));
		snprintf(c->object, sizeof(c->object), "%s/%s", k, n);
	} else {
		snprintf(c->object, sizeof(c->object), "%s (document %u)", k,
			 doc->index);
	}
}

static void decode_document(struct load *L, const struct sl_ydoc *doc)
{
	struct ctx *c = L->c;
	struct fhit h[TOP_N], mh[MD_N];
	const struct kind_desc *kd = NULL;
	struct object o = { .doc = doc, .root = doc->root };
	const struct sl_ynode *v;
	QBUF;

	set_object(c, doc);
	cd_path_pop(c, 0);
	if (doc->root->type != SL_Y_MAP) {
		cd_err(c, doc->root,
		    "expected an object (a mapping with apiVersion, kind, metadata and spec), got %s",
		    cd_describe(doc->root).s);
		return;
	}
	cd_decode_fields(c, doc->root, top_fields, TOP_N, NULL, h);

	if ((v = h[TOP_API].value) || h[TOP_API].key) {
		cd_path_set(c, "apiVersion");
		if (!v)
			cd_err(c, h[TOP_API].key, "must not be empty; expected '%s'",
			    SL_API_VERSION);
		else if (v->type != SL_Y_STR)
			cd_err(c, v, "expected '%s', got %s", SL_API_VERSION,
			    cd_describe(v).s);
		else if (strcmp(v->str, SL_API_VERSION) || v->len != strlen(SL_API_VERSION))
			cd_err(c, v, "unsupported apiVersion '%s'; expected '%s'",
			    Q(v), SL_API_VERSION);
		cd_path_pop(c, 0);
	}
	if ((v = h[TOP_KIND].value) || h[TOP_KIND].key) {
		cd_path_set(c, "kind");
		o.kind = v ? v : h[TOP_KIND].key;
		if (!v || v->type != SL_Y_STR) {
			const char *names[ARRAY_SIZE(kinds)];
			char known[256];

			for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
				names[i] = kinds[i].name;
			cd_join(known, sizeof(known), names, ARRAY_SIZE(kinds));
			cd_err(c, o.kind, "expected a kind (%s), got %s", known,
			       cd_describe(v).s);
		} else if (!(kd = find_kind(v))) {
			const char *names[ARRAY_SIZE(kinds)], *sug;
			char known[256];

			for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
				names[i] = kinds[i].name;
			cd_join(known, sizeof(known), names, ARRAY_SIZE(kinds));
			if ((sug = cd_closest(v->str, names, ARRAY_SIZE(kinds))))
				cd_err(c, v, "unknown kind '%s'; did you mean '%s'?",
				    Q(v), sug);
			else
				cd_err(c, v, "unknown kind '%s' (known kinds: %s)",
				    Q(v), known);
		}
		cd_path_pop(c, 0);
	}
	if ((v = h[TOP_META].value) || h[TOP_META].key) {
		cd_path_set(c, "metadata");
		if (!v) {
			cd_path_push(c, "name");
			cd_err(c, h[TOP_META].key, "missing required field 'name'");
		} else if (cd_decode_fields(c, v, meta_fields, MD_N, NULL, mh)) {
			const struct sl_ynode *n = mh[MD_NAME].value;
			const char *name;

			if (n) {
				cd_path_push(c, "name");
				if (cd_get_string(c, n, &name)) {
					if (!*name)
						cd_err(c, n, "must not be empty");
					else if (!kd || !kd->check_name ||
						 kd->check_name(c, n, name)) {
						o.name = name;
						o.name_node = n;
					}
				}
				cd_path_set(c, "metadata");
			}
			if (mh[MD_LABELS].value) {
				cd_path_push(c, "labels");
				cd_decode_string_map(c, mh[MD_LABELS].value);
				cd_path_set(c, "metadata");
			}
			if (mh[MD_ANNOTATIONS].value) {
				cd_path_push(c, "annotations");
				cd_decode_string_map(c, mh[MD_ANNOTATIONS].value);
			}
		}
		cd_path_pop(c, 0);
	}
	if (!kd)
		return;
	o.spec = h[TOP_SPEC].value;
	if (!o.spec && kd->spec_required) {
		cd_path_set(c, "spec");
		cd_err(c, doc->root, "missing required field 'spec'");
		cd_path_pop(c, 0);
	}
	kd->decode(L, &o);
	cd_path_pop(c, 0);
}

/* ---- public API ----------------------------------------------------------- */

static void level_release(struct sl_level_cfg *l)
{
	free(l->file);
}

void sl_config_free(struct sl_config *cfg)
{
	if (!cfg)
		return;
	server_release(&cfg->server);
	for (size_t i = 0; i < cfg->n_levels; i++)
		level_release(&cfg->levels[i]);
	free(cfg->levels);
	for (size_t i = 0; i < cfg->n_schemas; i++)
		cd_flow_schema_release(&cfg->schemas[i]);
	free(cfg->schemas);
	for (size_t i = 0; i < cfg->n_label_objects; i++)
		cd_label_object_release(&cfg->label_objects[i]);
	free(cfg->label_objects);
	for (size_t i = 0; i < cfg->n_policies; i++)
		cd_policy_release(&cfg->policies[i]);
	free(cfg->policies);
	free(cfg->source_file);
	free(cfg);
}

const struct sl_level_cfg *sl_config_find_level(const struct sl_config *cfg,
						const char *name)
{
	if (!cfg || !name)
		return NULL;
	for (size_t i = 0; i < cfg->n_levels; i++)
		if (!strcmp(cfg->levels[i].name, name))
			return &cfg->levels[i];
	return NULL;
}

const struct sl_flow_schema *sl_config_find_schema(const struct sl_config *cfg,
						   const char *name)
{
	if (!cfg || !name)
		return NULL;
	for (size_t i = 0; i < cfg->n_schemas; i++)
		if (!strcmp(cfg->schemas[i].name, name))
			return &cfg->schemas[i];
	return NULL;
}

const struct sl_label_object *sl_config_find_label_object(const struct sl_config *cfg,
							  const char *name)
{
	if (!cfg || !name)
		return NULL;
	for (size_t i = 0; i < cfg->n_label_objects; i++)
		if (!strcmp(cfg->label_objects[i].name, name))
			return &cfg->label_objects[i];
	return NULL;
}

const struct sl_policy_cfg *sl_config_find_policy(const struct sl_config *cfg,
						  const char *name)
{
	if (!cfg || !name)
		return NULL;
	for (size_t i = 0; i < cfg->n_policies; i++)
		if (!strcmp(cfg->policies[i].name, name))
			return &cfg->policies[i];
	return NULL;
}

/* The configuration every load starts from: server defaults and the two
 * mandatory levels (the mandatory FlowSchemas are added after the file's,
 * by cd_finish_flow_schemas()). */
static int load_init(struct load *L, const char *file)
{
	struct sl_config *cfg = calloc(1, sizeof(*cfg));

	L->cfg = cfg;
	if (!cfg || server_defaults(&cfg->server) ||
	    !(cfg->source_file = strdup(file)))
		return -ENOMEM;
	L->levels_cap = L->level_src_cap = 8;
	cfg->levels = calloc(L->levels_cap, sizeof(*cfg->levels));
	L->level_src = calloc(L->level_src_cap, sizeof(*L->level_src));
	if (!cfg->levels || !L->level_src)
		return -ENOMEM;
	for (int i = 0; i < 2; i++) {
		mandatory_level(&cfg->levels[i], i);
		if (asprintf(&L->level_src[i].object, "PriorityLevelConfiguration/%s",
			     cfg->levels[i].name) < 0) {
			L->level_src[i].object = NULL;
			return -ENOMEM;
		}
		cfg->n_levels++;
	}
	return 0;
}

static void load_release(struct load *L)
{
	for (size_t i = 0; L->level_src && L->cfg && i < L->cfg->n_levels; i++)
		free(L->level_src[i].object);
	free(L->level_src);
	for (size_t i = 0; L->schema_src && L->cfg && i < L->cfg->n_schemas; i++)
		free(L->schema_src[i].object);
	free(L->schema_src);
	for (size_t i = 0; i < L->n_names; i++)
		free(L->names[i].name);
	free(L->names);
	for (size_t i = 0; i < L->n_refs; i++) {
		free(L->refs[i].key);
		free(L->refs[i].object);
		free(L->refs[i].path);
	}
	free(L->refs);
}

int sl_config_load_buffer(const char *display_name, const char *buf,
			  size_t len, struct sl_config **out,
			  struct sl_diags *diags)
{
	struct sl_diags local = SL_DIAGS_INIT;
	struct ctx c = { 0 };
	struct load L = { .c = &c };
	struct sl_ystream ys;
	size_t first, errors;
	int rc;

	if (out)
		*out = NULL;
	if (!diags)
		diags = &local;
	first = diags->count;
	errors = diags->n_errors;
	c.diags = diags;
	c.file = display_name ? display_name : "<config>";

	if (load_init(&L, c.file)) {
		cd_oom(&c);
		rc = -ENOMEM;
		goto done;
	}
	rc = sl_ystream_load(&ys, c.file, buf, len, diags);
	if (rc != -ENOMEM) {
		/* Documents before a syntax error are still checked. */
		for (size_t i = 0; i < ys.n_docs; i++)
			decode_document(&L, &ys.docs[i]);
		c.object[0] = '\0';
		cd_path_pop(&c, 0);
		check_duplicate_names(&L);
		cd_finish_flow_schemas(&L);
		cd_check_label_refs(&L);
		c.object[0] = '\0';
		cd_path_pop(&c, 0);
	}
	sl_ystream_free(&ys);
	if (c.oom)
		rc = -ENOMEM;
	else if (diags->n_errors != errors)
		rc = -EINVAL;
done:
	sl_diags_sort(diags, first);
	load_release(&L);
	if (rc || !out) {
		sl_config_free(L.cfg);
	} else {
		*out = L.cfg;
	}
	sl_diags_free(&local);
	return rc;
}

int sl_config_load_file(const char *path, struct sl_config **out,
			struct sl_diags *diags)
{
	struct sl_diags local = SL_DIAGS_INIT;
	char *buf = NULL;
	size_t len = 0;
	int rc;

	if (out)
		*out = NULL;
	if (!diags)
		diags = &local;
	if (!path) {
		sl_diags_add(diags, SL_SEV_ERROR, NULL, 0, 0, NULL, NULL,
			     "no configuration file given");
		rc = -EINVAL;
		goto out;
	}
	rc = sl_read_file(path, SL_MAX_FILE_SIZE, &buf, &len);
	if (rc == -EFBIG) {
		sl_diags_add(diags, SL_SEV_ERROR, path, 0, 0, NULL, NULL,
			     "configuration file is larger than %u MiB", SL_MAX_FILE_SIZE >> 20);
		goto out;
	}
	if (rc) {
		sl_diags_add(diags, SL_SEV_ERROR, path, 0, 0, NULL, NULL,
			     "cannot %s configuration file: %s",
			     rc == -EISDIR || rc == -EIO ? "read" : "open", strerror(-rc));
		goto out;
	}
	rc = sl_config_load_buffer(path, buf, len, out, diags);
out:
	free(buf);
	sl_diags_free(&local);
	return rc;
}
