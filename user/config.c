// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Configuration loader: YAML documents -> struct sl_config.
 *
 * Shape of the decoder (so that adding kinds and fields stays easy):
 *  - every YAML mapping that is part of the schema is described by a table
 *    of struct fdesc (name, kind, offset into a C struct, bounds, enum
 *    values).  decode_fields() walks one mapping against one table: it
 *    reports unknown keys (with "did you mean"), duplicate keys, missing
 *    required fields, wrong types and out-of-range values, stores the simple
 *    fields and hands back the nodes of every field (struct fhit) so the
 *    caller can decode nested objects (FK_CUSTOM) and check cross-field rules;
 *  - every kind is one entry of kinds[]: a name check and a decode function;
 *  - cross-object rules (unique names, one Server, ports owned by one level)
 *    run after all documents.
 * Decoding never stops at an error: every problem of the file is reported,
 * and the configuration is only handed out when there is none.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sluice_abi.h"
#include "yaml_doc.h"

_Static_assert(SL_LEVEL_NAME_SIZE == SLUICE_LEVEL_NAME_LEN, "level name size");
_Static_assert(SL_MAX_LEVELS == SLUICE_MAX_LEVELS, "max levels");
_Static_assert(SL_MAX_PROTECTED_PORTS == SLUICE_PORT_TABLE_SIZE, "port table");
_Static_assert((int)SL_FAIL_OPEN == SLUICE_FAIL_OPEN &&
	       (int)SL_FAIL_CLOSED == SLUICE_FAIL_CLOSED, "fail mode");
_Static_assert((int)SL_LEVEL_EXEMPT == SLUICE_LEVEL_EXEMPT &&
	       (int)SL_LEVEL_LIMITED == SLUICE_LEVEL_LIMITED, "level type");
_Static_assert((int)SL_RESP_QUEUE == SLUICE_RESP_QUEUE &&
	       (int)SL_RESP_REJECT == SLUICE_RESP_REJECT, "limit response");

#define NSEC ((int64_t)1)
#define USEC (1000 * NSEC)
#define MSEC (1000 * USEC)
#define SEC  (1000 * MSEC)
#define MIN  (60 * SEC)
#define HOUR (60 * MIN)

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define SL_MAX_FILE_SIZE (16u << 20)     /* config files are small */
#define MAX_ENTROPY_BITS 60              /* shuffle sharding, spec/apf.md 2.2 */
#define MAX_DECK_SIZE    (1 << 26)
#define SYN_RETRY_WINDOW (63 * SEC)      /* last SYN retransmit, Linux defaults */

/* ---- defaults ----------------------------------------------------------- */

#define DEF_SERVER_CL        600
#define DEF_HEARTBEAT        (3 * SEC)
#define DEF_TICK             (100 * MSEC)
#define DEF_HANDSHAKE        (10 * SEC)
#define DEF_PIN_DIR          "/sys/fs/bpf/sluice"
#define DEF_CONNS            SLUICE_DEFAULT_CONNS
#define DEF_EVENTS           1000
#define DEF_LIMITED_SHARES   30
#define DEF_QUEUES           64
#define DEF_HAND_SIZE        8
#define DEF_QUEUE_LEN        50
#define DEF_QUEUE_WAIT       (15 * SEC)
#define DEF_SEATS_PER_CONN   1

/* ---- decode context and reporting --------------------------------------- */

struct ctx {
	struct sl_diags *diags;
	const char *file;
	char object[2 * SL_YQUOTE_MAX + 32]; /* "Kind/name" */
	char path[320];   /* "spec.limited.lendablePercent" */
	size_t plen;
	bool oom;
};

static void vreport(struct ctx *c, enum sl_severity sev, unsigned line,
		    unsigned col, const char *fmt, va_list ap)
{
	sl_diags_vadd(c->diags, sev, c->file, line, col, c->object, c->path,
		      fmt, ap);
}

__attribute__((format(printf, 3, 4)))
static void err(struct ctx *c, const struct sl_ynode *at, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(c, SL_SEV_ERROR, at ? at->line : 0, at ? at->column : 0, fmt,
		ap);
	va_end(ap);
}

__attribute__((format(printf, 3, 4)))
static void warn(struct ctx *c, const struct sl_ynode *at, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(c, SL_SEV_WARNING, at ? at->line : 0, at ? at->column : 0, fmt,
		ap);
	va_end(ap);
}

__attribute__((format(printf, 5, 6)))
static void err_at(struct ctx *c, enum sl_severity sev, unsigned line,
		   unsigned col, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(c, sev, line, col, fmt, ap);
	va_end(ap);
}

static void oom(struct ctx *c)
{
	if (!c->oom)
		sl_diags_add(c->diags, SL_SEV_ERROR, c->file, 0, 0, NULL, NULL,
			     "out of memory");
	c->oom = true;
}

/* Field path: push returns the old length for path_pop(). */
static size_t path_push(struct ctx *c, const char *name)
{
	size_t old = c->plen;
	int n = snprintf(c->path + c->plen, sizeof(c->path) - c->plen, "%s%s",
			 c->plen ? "." : "", name);

	if (n > 0)
		c->plen += (size_t)n < sizeof(c->path) - c->plen ?
				   (size_t)n : sizeof(c->path) - 1 - c->plen;
	return old;
}

static size_t path_push_index(struct ctx *c, size_t i)
{
	size_t old = c->plen;
	int n = snprintf(c->path + c->plen, sizeof(c->path) - c->plen, "[%zu]",
			 i);

	if (n > 0)
		c->plen += (size_t)n < sizeof(c->path) - c->plen ?
				   (size_t)n : sizeof(c->path) - 1 - c->plen;
	return old;
}

static void path_pop(struct ctx *c, size_t old)
{
	c->plen = old;
	c->path[old] = '\0';
}

static void path_set(struct ctx *c, const char *path)
{
	path_pop(c, 0);
	path_push(c, path);
}

/* Quoted text of a scalar for messages. */
#define QBUF char q_[SL_YQUOTE_MAX]
#define Q(n) sl_yquote((n)->str, (n)->len, q_, sizeof(q_))

/* "string 'abc'", "a mapping", ... */
struct desc { char s[SL_YQUOTE_MAX + 32]; };
static struct desc describe(const struct sl_ynode *n)
{
	struct desc d;

	sl_ynode_describe(n, d.s, sizeof(d.s));
	return d;
}

/* ---- suggestions ("did you mean") --------------------------------------- */

static char lower(char ch)
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
			unsigned cost = lower(a[i - 1]) != lower(b[j - 1]);
			unsigned v = d[i - 1][j] + 1u;

			if (d[i][j - 1] + 1u < v)
				v = d[i][j - 1] + 1u;
			if (d[i - 1][j - 1] + cost < v)
				v = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
			    lower(a[i - 2]) == lower(b[j - 1]) &&
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
		if (lower(*prefix) != lower(*word))
			return false;
	return true;
}

/* Closest candidate within distance 2 (or equal ignoring case); failing
 * that, the only candidate that the word is a prefix of, or that is a
 * prefix of the word (at least 4 characters: "queueWait", "tickMs"). */
static const char *closest(const char *word, const char *const *cands,
			   size_t n)
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

static void join(char *buf, size_t size, const char *const *words, size_t n)
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

struct durstr { char s[48]; };
static struct durstr dur(int64_t ns)
{
	struct durstr d;

	sl_format_duration((uint64_t)ns, d.s, sizeof(d.s));
	return d;
}

/* ---- field tables ------------------------------------------------------- */

enum fkind {
	FK_INT,      /* integer, stored in a 1/2/4/8-byte integer */
	FK_DURATION, /* duration string, stored in uint64_t nanoseconds */
	FK_ENUM,     /* string from enums[], stored as int */
	FK_STRING,   /* string, stored as malloc'ed char * */
	FK_CUSTOM,   /* decoded by the caller from the returned hit */
};

struct enumval {
	const char *name;
	int value;
};

struct fdesc {
	const char *name;
	enum fkind kind;
	size_t off, size;
	int64_t min, max;            /* FK_INT, FK_DURATION (ns) */
	const struct enumval *enums; /* FK_ENUM, NULL-name terminated */
	const char *hint_low;        /* appended to "too small" errors */
	bool required;
};

struct fhit {
	const struct sl_ynode *key;   /* NULL if absent */
	const struct sl_ynode *value; /* NULL if absent or null (optional) */
	bool ok;                      /* absent, or present and valid */
};

#define MAX_FIELDS 24
#define FLD(T, m) .off = offsetof(T, m), .size = sizeof(((T *)0)->m)
#define F_INT(n, T, m, lo, hi, ...) \
	{ .name = n, .kind = FK_INT, FLD(T, m), .min = lo, .max = hi, __VA_ARGS__ }
#define F_DUR(n, T, m, lo, hi, ...) \
	{ .name = n, .kind = FK_DURATION, FLD(T, m), .min = lo, .max = hi, __VA_ARGS__ }
#define F_ENUM(n, T, m, ev, ...) \
	{ .name = n, .kind = FK_ENUM, FLD(T, m), .enums = ev, __VA_ARGS__ }
#define F_STR(n, T, m, ...) \
	{ .name = n, .kind = FK_STRING, FLD(T, m), __VA_ARGS__ }
#define F_CUSTOM(n, ...) { .name = n, .kind = FK_CUSTOM, __VA_ARGS__ }

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

static bool get_int(struct ctx *c, const struct sl_ynode *v, int64_t min,
		    int64_t max, const char *hint_low, int64_t *out)
{
	char range[128];
	int64_t x;

	if (v->type != SL_Y_INT) {
		err(c, v, "expected an integer, got %s%s", describe(v).s,
		    v->type == SL_Y_STR && v->quoted && strspn(v->str, "+-0123456789") == v->len && v->len ?
			    " (remove the quotes)" : "");
		return false;
	}
	if (sl_ynode_int(v, &x)) {
		QBUF;
		range_text(range, sizeof(range), min, max, false,
			   v->str[0] == '-');
		err(c, v, "%s, got %s", range, Q(v));
		return false;
	}
	if (x < min || x > max) {
		range_text(range, sizeof(range), min, max, false, x < min);
		err(c, v, "%s, got %" PRId64 "%s%s", range, x,
		    x < min && hint_low ? "; " : "",
		    x < min && hint_low ? hint_low : "");
		return false;
	}
	*out = x;
	return true;
}

static bool get_duration(struct ctx *c, const struct sl_ynode *v, int64_t min,
			 int64_t max, const char *hint_low, uint64_t *out)
{
	char why[160], range[128];
	uint64_t x;
	QBUF;

	if (v->type == SL_Y_INT || v->type == SL_Y_FLOAT) {
		err(c, v, "duration %s needs a unit, e.g. %ss", Q(v), Q(v));
		return false;
	}
	if (v->type != SL_Y_STR) {
		err(c, v, "expected a duration such as 5s or 250ms, got %s",
		    describe(v).s);
		return false;
	}
	if (!sl_ynode_str(v)) {
		err(c, v, "invalid duration '%s'", Q(v));
		return false;
	}
	if (parse_duration(v->str, &x, why, sizeof(why))) {
		err(c, v, "duration '%s' %s", Q(v), why);
		return false;
	}
	if ((int64_t)x < min || (int64_t)x > max) {
		range_text(range, sizeof(range), min, max, true,
			   (int64_t)x < min);
		err(c, v, "%s, got %s%s%s", range, Q(v),
		    (int64_t)x < min && hint_low ? "; " : "",
		    (int64_t)x < min && hint_low ? hint_low : "");
		return false;
	}
	*out = x;
	return true;
}

static bool get_enum(struct ctx *c, const struct sl_ynode *v,
		     const struct enumval *ev, int *out)
{
	const char *names[16];
	char allowed[256];
	const char *s = sl_ynode_str(v), *sug;
	size_t n = 0;
	QBUF;

	for (; ev[n].name && n < ARRAY_SIZE(names); n++)
		names[n] = ev[n].name;
	join(allowed, sizeof(allowed), names, n);
	if (v->type != SL_Y_STR) {
		err(c, v, "expected one of %s, got %s", allowed, describe(v).s);
		return false;
	}
	for (size_t i = 0; s && i < n; i++) {
		if (!strcmp(s, ev[i].name)) {
			*out = ev[i].value;
			return true;
		}
	}
	sug = s ? closest(s, names, n) : NULL;
	if (sug)
		err(c, v, "invalid value '%s'; did you mean '%s'? (allowed: %s)",
		    Q(v), sug, allowed);
	else
		err(c, v, "invalid value '%s' (allowed: %s)", Q(v), allowed);
	return false;
}

static bool get_string(struct ctx *c, const struct sl_ynode *v,
		       const char **out)
{
	if (v->type != SL_Y_STR) {
		err(c, v, "expected a string, got %s%s", describe(v).s,
		    sl_ynode_is_scalar(v) && v->type != SL_Y_NULL ?
			    " (quote it to use it as a string)" : "");
		return false;
	}
	if (!sl_ynode_str(v)) {
		err(c, v, "must not contain NUL characters");
		return false;
	}
	*out = v->str;
	return true;
}

/* ---- mappings ------------------------------------------------------------ */

static bool expect_map(struct ctx *c, const struct sl_ynode *n)
{
	if (n->type == SL_Y_MAP)
		return true;
	err(c, n, "expected a mapping, got %s", describe(n).s);
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
	old = path_push(c, Q(key));
	if (key->len == 2 && !memcmp(key->str, "<<", 2)) {
		err(c, key, "YAML merge keys ('<<') are not supported; write the fields out");
	} else if ((sug = closest(key->str, names, nf))) {
		err(c, key, "unknown field '%s'; did you mean '%s'?", Q(key), sug);
	} else {
		join(known, sizeof(known), names, nf);
		err(c, key, "unknown field '%s' (known fields: %s)", Q(key), known);
	}
	path_pop(c, old);
}

/*
 * Decodes `map` against the table f[0..nf).  Simple fields (FK_INT,
 * FK_DURATION, FK_ENUM, FK_STRING) are stored into obj; hits[i] tells
 * where every field was and whether it was valid.  An optional field set to
 * null counts as absent.  Returns false if `map` is not a mapping.
 */
static bool decode_fields(struct ctx *c, const struct sl_ynode *map,
			  const struct fdesc *f, size_t nf, void *obj,
			  struct fhit *hits)
{
	for (size_t i = 0; i < nf; i++)
		hits[i] = (struct fhit){ .ok = true };
	if (!expect_map(c, map)) {
		for (size_t i = 0; i < nf; i++)
			hits[i].ok = false;
		return false;
	}
	for (size_t p = 0; p < map->n_pairs; p++) {
		const struct sl_ynode *k = map->pairs[p].key;
		size_t i;

		if (!sl_ynode_is_scalar(k)) {
			err(c, k, "mapping keys must be strings, got %s",
			    describe(k).s);
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
			size_t old = path_push(c, f[i].name);

			err(c, k, "duplicate key '%s'; also defined at %s:%u:%u",
			    f[i].name, c->file, hits[i].key->line,
			    hits[i].key->column);
			path_pop(c, old);
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
				old = path_push(c, f[i].name);
				err(c, map, "missing required field '%s'",
				    f[i].name);
				path_pop(c, old);
				hits[i].ok = false;
			}
			continue;
		}
		if (v->type == SL_Y_NULL && !f[i].required) {
			hits[i].value = NULL;
			continue;
		}
		old = path_push(c, f[i].name);
		switch (f[i].kind) {
		case FK_INT: {
			int64_t x;

			ok = get_int(c, v, f[i].min, f[i].max, f[i].hint_low, &x);
			if (ok)
				store_int(obj, &f[i], x);
			break;
		}
		case FK_DURATION: {
			uint64_t x;

			ok = get_duration(c, v, f[i].min, f[i].max, f[i].hint_low,
					  &x);
			if (ok)
				memcpy((char *)obj + f[i].off, &x, sizeof(x));
			break;
		}
		case FK_ENUM: {
			int x;

			ok = get_enum(c, v, f[i].enums, &x);
			if (ok)
				memcpy((char *)obj + f[i].off, &x, sizeof(x));
			break;
		}
		case FK_STRING: {
			const char *s;
			char **slot = (char **)(void *)((char *)obj + f[i].off);

			ok = get_string(c, v, &s);
			if (ok) {
				char *d = strdup(s);

				if (!d) {
					oom(c);
					ok = false;
					break;
				}
				free(*slot);
				*slot = d;
			}
			break;
		}
		case FK_CUSTOM:
			break;
		}
		path_pop(c, old);
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

/* A free-form string map (metadata.labels/annotations). */
static void decode_string_map(struct ctx *c, const struct sl_ynode *map)
{
	const struct sl_ypair **sorted;
	size_t n = 0;

	if (!expect_map(c, map))
		return;
	sorted = calloc(map->n_pairs ? map->n_pairs : 1, sizeof(*sorted));
	if (!sorted) {
		oom(c);
		return;
	}
	for (size_t i = 0; i < map->n_pairs; i++) {
		const struct sl_ypair *p = &map->pairs[i];
		const char *s;
		size_t old;
		QBUF;

		if (p->key->type != SL_Y_STR) {
			err(c, p->key, "keys must be strings, got %s",
			    describe(p->key).s);
			continue;
		}
		sorted[n++] = p;
		old = path_push(c, Q(p->key));
		get_string(c, p->value, &s);
		path_pop(c, old);
	}
	qsort(sorted, n, sizeof(*sorted), cmp_pair_key);
	for (size_t i = 1; i < n; i++) {
		const struct sl_ynode *k = sorted[i]->key, *first;
		size_t j = i, old;
		QBUF;

		while (j > 0 && sorted[j - 1]->key->len == k->len &&
		       !memcmp(sorted[j - 1]->key->str, k->str, k->len))
			j--;
		if (j == i)
			continue;
		first = sorted[j]->key;
		old = path_push(c, Q(k));
		err(c, k, "duplicate key '%s'; also defined at %s:%u:%u", Q(k),
		    c->file, first->line, first->column);
		path_pop(c, old);
	}
	free(sorted);
}

/* ---- load state ----------------------------------------------------------- */

struct port_ent {
	uint16_t lo, hi;
	uint32_t level;  /* index in cfg->levels */
	uint32_t item;   /* index in spec.ports */
	unsigned line, column;
};

struct level_src {
	unsigned name_line, name_col; /* metadata.name value, 0 if no valid name */
	char *object;                 /* "PriorityLevelConfiguration/web" */
};

struct load {
	struct ctx *c;
	struct sl_config *cfg;
	size_t levels_cap;
	struct level_src *src; /* parallel to cfg->levels */
	bool server_seen;
	unsigned server_line, server_col;
	struct port_ent *ports;
	size_t n_ports, ports_cap;
};

/* What decode_document() found at the top of an object. */
struct object {
	const struct sl_ydoc *doc;
	const struct sl_ynode *root, *kind, *name_node, *spec;
	const char *name; /* NULL unless metadata.name is a valid name */
};

/* ---- kind: Server --------------------------------------------------------- */

static const struct enumval fail_modes[] = {
	{ "open", SL_FAIL_OPEN }, { "closed", SL_FAIL_CLOSED }, { NULL, 0 },
};

enum {
	SV_LIMIT, SV_FAIL_MODE, SV_HEARTBEAT, SV_TICK, SV_HANDSHAKE,
	SV_INTERFACES, SV_PIN_DIR, SV_TABLE_SIZES, SV_METRICS, SV_EVENTS, SV_N
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
};

static const struct fdesc table_size_fields[] = {
	F_INT("connections", SRV, table_sizes.connections, 1024, 16777216),
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
	s->events_per_second = DEF_EVENTS;
	s->pin_dir = strdup(DEF_PIN_DIR);
	return s->pin_dir ? 0 : -ENOMEM;
}

static void server_release(struct sl_server_cfg *s)
{
	free(s->interfaces);
	free(s->pin_dir);
	free(s->metrics_address);
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
		err(c, v, "expected a list of interface names, got %s",
		    describe(v).s);
		return;
	}
	if (!v->n_items)
		return;
	s->interfaces = calloc(v->n_items, sizeof(*s->interfaces));
	if (!s->interfaces) {
		oom(c);
		return;
	}
	for (size_t i = 0; i < v->n_items; i++) {
		const struct sl_ynode *it = v->items[i];
		size_t old = path_push_index(c, i);
		const char *name, *problem;
		QBUF;

		if (!get_string(c, it, &name))
			goto next;
		if (strlen(name) >= SL_IFNAME_SIZE) {
			err(c, it, "interface name '%s' is %zu characters long; at most %d allowed",
			    Q(it), strlen(name), SL_IFNAME_SIZE - 1);
			goto next;
		}
		if ((problem = ifname_problem(name))) {
			err(c, it, "interface name '%s' %s", Q(it), problem);
			goto next;
		}
		for (size_t j = 0; j < i; j++) {
			const struct sl_ynode *o = v->items[j];

			if (o->type == SL_Y_STR && o->len == it->len &&
			    !memcmp(o->str, it->str, it->len)) {
				err(c, it, "duplicate interface '%s'; also listed at %s:%u:%u",
				    Q(it), c->file, o->line, o->column);
				goto next;
			}
		}
		memcpy(s->interfaces[s->n_interfaces++], name, strlen(name) + 1);
next:
		path_pop(c, old);
	}
}

static void decode_server_spec(struct ctx *c, const struct sl_ynode *spec,
			       struct sl_server_cfg *s)
{
	struct fhit h[SV_N], th[ARRAY_SIZE(table_size_fields)];
	size_t old = path_push(c, "spec");

	if (!decode_fields(c, spec, server_fields, SV_N, s, h))
		goto out;
	if (h[SV_INTERFACES].value) {
		size_t o2 = path_push(c, "interfaces");

		decode_interfaces(c, h[SV_INTERFACES].value, s);
		path_pop(c, o2);
	}
	if (h[SV_TABLE_SIZES].value) {
		size_t o2 = path_push(c, "tableSizes");

		decode_fields(c, h[SV_TABLE_SIZES].value, table_size_fields,
			      ARRAY_SIZE(table_size_fields), s, th);
		path_pop(c, o2);
	}
	if (h[SV_PIN_DIR].value && h[SV_PIN_DIR].ok) {
		size_t o2 = path_push(c, "pinDir");
		const struct sl_ynode *v = h[SV_PIN_DIR].value;
		QBUF;

		if (s->pin_dir[0] != '/')
			err(c, v, "must be an absolute path, got '%s'", Q(v));
		else if (strlen(s->pin_dir) >= 1024)
			err(c, v, "path is %zu characters long; at most 1023 allowed",
			    strlen(s->pin_dir));
		path_pop(c, o2);
	}
	if (h[SV_METRICS].value && h[SV_METRICS].ok && !s->metrics_address[0]) {
		size_t o2 = path_push(c, "metricsAddress");

		err(c, h[SV_METRICS].value,
		    "must not be empty; expected host:port, e.g. 127.0.0.1:9464 (omit the field to disable metrics)");
		path_pop(c, o2);
	}
	/* Cross-field advice, only with valid values. */
	if (h[SV_HEARTBEAT].ok && h[SV_TICK].ok && s->heartbeat_timeout_ns &&
	    s->heartbeat_timeout_ns < 2 * s->tick_ns) {
		const char *field = h[SV_HEARTBEAT].value ? "heartbeatTimeout" : "tick";
		const struct sl_ynode *at = h[SV_HEARTBEAT].value ?
			h[SV_HEARTBEAT].value : h[SV_TICK].value;
		size_t o2 = path_push(c, field);

		warn(c, at ? at : spec,
		     "heartbeatTimeout %s is shorter than two ticks (tick %s); the failsafe may trigger between heartbeats",
		     dur((int64_t)s->heartbeat_timeout_ns).s,
		     dur((int64_t)s->tick_ns).s);
		path_pop(c, o2);
	}
	if (h[SV_FAIL_MODE].value && h[SV_FAIL_MODE].ok && h[SV_HEARTBEAT].ok &&
	    s->fail_mode == SL_FAIL_CLOSED && !s->heartbeat_timeout_ns) {
		size_t o2 = path_push(c, "failMode");

		warn(c, h[SV_FAIL_MODE].value,
		     "failMode closed has no effect while heartbeatTimeout is 0s (failsafe disabled)");
		path_pop(c, o2);
	}
out:
	path_pop(c, old);
}

static void decode_server(struct load *L, const struct object *o)
{
	struct ctx *c = L->c;
	struct sl_server_cfg scratch, *s = &L->cfg->server;

	if (L->server_seen) {
		size_t old = path_push(c, "kind");

		err(c, o->kind, "only one Server object is allowed; also defined at %s:%u:%u",
		    c->file, L->server_line, L->server_col);
		path_pop(c, old);
		/* decode anyway to report its own errors */
		if (server_defaults(&scratch)) {
			oom(c);
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
			oom(c);
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
	[PL_PORTS] = F_CUSTOM("ports"),
	[PL_SEATS] = F_INT("seatsPerConnection", LVL, seats_per_conn, 1, 100),
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
			size_t old = path_push(c, "handSize");

			err(c, hand, "must not exceed queues (%u), got %u",
			    l->queues, l->hand_size);
			path_pop(c, old);
		} else {
			size_t old = path_push(c, "queues");

			err(c, queues ? queues : qnode,
			    "%u queues are fewer than the default handSize %u; set handSize to at most %u",
			    l->queues, l->hand_size, l->queues);
			path_pop(c, old);
		}
		return;
	}
	bits = (int)ceil(log2((double)l->queues) * (double)l->hand_size);
	if (bits <= MAX_ENTROPY_BITS)
		return;
	if (hand || !queues) {
		size_t old = path_push(c, "handSize");

		err(c, hand ? hand : qnode,
		    "%u needs %d bits of entropy with %u queues; at most %d allowed",
		    l->hand_size, bits, l->queues, MAX_ENTROPY_BITS);
		path_pop(c, old);
	} else {
		size_t old = path_push(c, "queues");

		err(c, queues,
		    "%u queues need %d bits of entropy with the default handSize %u; at most %d allowed",
		    l->queues, bits, l->hand_size, MAX_ENTROPY_BITS);
		path_pop(c, old);
	}
}

static void decode_queuing(struct ctx *c, const struct sl_ynode *q,
			   struct sl_level_cfg *l)
{
	struct fhit h[QU_N];
	size_t old = path_push(c, "queuing");

	if (decode_fields(c, q, queuing_fields, QU_N, l, h)) {
		check_queuing(c, q, h, l);
		if (h[QU_WAIT].value && h[QU_WAIT].ok &&
		    l->queue_wait_limit_ns > (uint64_t)SYN_RETRY_WINDOW) {
			size_t o2 = path_push(c, "queueWaitLimit");

			warn(c, h[QU_WAIT].value,
			     "%s is longer than Linux clients keep retrying a connection (the last SYN retransmit comes after about 63s with the default net.ipv4.tcp_syn_retries=6); deferred connections will have given up",
			     dur((int64_t)l->queue_wait_limit_ns).s);
			path_pop(c, o2);
		}
	}
	path_pop(c, old);
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
	size_t old = path_push(c, "limitResponse");

	l->limit_response = SL_RESP_REJECT;
	if (!decode_fields(c, n, response_fields, LR_N, l, h))
		goto out;
	if (h[LR_TYPE].ok && l->limit_response == SL_RESP_QUEUE) {
		queuing_defaults(l);
		if (h[LR_QUEUING].value)
			decode_queuing(c, h[LR_QUEUING].value, l);
	} else if (h[LR_QUEUING].value) {
		struct sl_level_cfg scratch = { 0 };

		if (h[LR_TYPE].ok) {
			size_t o2 = path_push(c, "queuing");

			err(c, h[LR_QUEUING].key,
			    "only allowed when type is Queue (type is Reject)");
			path_pop(c, o2);
		}
		queuing_defaults(&scratch);
		decode_queuing(c, h[LR_QUEUING].value, &scratch);
	}
	if (l->limit_response != SL_RESP_QUEUE)
		queuing_clear(l);
out:
	path_pop(c, old);
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
	size_t old = path_push(c, "limited");

	if (decode_fields(c, n, limited_fields, LM_N, l, h) &&
	    h[LM_RESPONSE].value)
		decode_limit_response(c, h[LM_RESPONSE].value, l);
	path_pop(c, old);
}

static void decode_exempt(struct ctx *c, const struct sl_ynode *n,
			  struct sl_level_cfg *l)
{
	struct fhit h[ARRAY_SIZE(exempt_fields)];
	size_t old = path_push(c, "exempt");

	decode_fields(c, n, exempt_fields, ARRAY_SIZE(exempt_fields), l, h);
	path_pop(c, old);
}

/* Decimal number at *s (saturating at 99999999), advancing *s. */
static long scan_number(const char **s)
{
	long v = 0;

	for (; **s >= '0' && **s <= '9'; (*s)++)
		if (v < 99999999)
			v = v * 10 + (**s - '0');
	return v;
}

/* "80", "9000-9100", "9000 - 9100" -> 0 and the range; -EINVAL if it is
 * not that shape, -ERANGE if a number is outside 1..65535 (lo and hi set). */
static int parse_port_range(const char *s, long *lo, long *hi)
{
	if (!(*s >= '0' && *s <= '9'))
		return -EINVAL;
	*lo = *hi = scan_number(&s);
	while (*s == ' ')
		s++;
	if (*s) {
		if (*s++ != '-')
			return -EINVAL;
		while (*s == ' ')
			s++;
		if (!(*s >= '0' && *s <= '9'))
			return -EINVAL;
		*hi = scan_number(&s);
		if (*s)
			return -EINVAL;
	}
	return *lo < 1 || *lo > 65535 || *hi < 1 || *hi > 65535 ? -ERANGE : 0;
}

static int add_port_ent(struct load *L, const struct port_ent *e)
{
	if (L->n_ports == L->ports_cap) {
		size_t ncap = L->ports_cap ? L->ports_cap * 2 : 64;
		struct port_ent *n = realloc(L->ports, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		L->ports = n;
		L->ports_cap = ncap;
	}
	L->ports[L->n_ports++] = *e;
	return 0;
}

static void decode_ports(struct load *L, const struct sl_ynode *v,
			 struct sl_level_cfg *l, uint32_t level)
{
	struct ctx *c = L->c;

	if (v->type != SL_Y_SEQ) {
		err(c, v, "expected a list of ports and port ranges (e.g. [80, \"9000-9100\"]), got %s",
		    describe(v).s);
		return;
	}
	if (!v->n_items)
		return;
	l->ports = calloc(v->n_items, sizeof(*l->ports));
	if (!l->ports) {
		oom(c);
		return;
	}
	for (size_t i = 0; i < v->n_items; i++) {
		const struct sl_ynode *it = v->items[i];
		size_t old = path_push_index(c, i);
		long lo = 0, hi = 0;
		int r;
		QBUF;

		if (it->type == SL_Y_INT) {
			int64_t x;

			if (sl_ynode_int(it, &x) || x < 1 || x > 65535) {
				err(c, it, "port %s is out of range; ports are 1..65535",
				    Q(it));
				goto next;
			}
			lo = hi = (long)x;
		} else if (it->type == SL_Y_STR && sl_ynode_str(it)) {
			r = parse_port_range(it->str, &lo, &hi);
			if (r == -EINVAL) {
				err(c, it, "expected a port (1..65535) or a port range like \"9000-9100\", got string '%s'",
				    Q(it));
				goto next;
			}
			if (r == -ERANGE) {
				err(c, it, "port range '%s' is out of range; ports are 1..65535",
				    Q(it));
				goto next;
			}
			if (lo > hi) {
				err(c, it, "port range '%s' is reversed; write \"%ld-%ld\"",
				    Q(it), hi, lo);
				goto next;
			}
		} else {
			err(c, it, "expected a port (1..65535) or a port range like \"9000-9100\", got %s",
			    describe(it).s);
			goto next;
		}
		l->ports[l->n_ports++] = (struct sl_port_range){
			.lo = (uint16_t)lo, .hi = (uint16_t)hi,
		};
		if (add_port_ent(L, &(struct port_ent){
			    .lo = (uint16_t)lo, .hi = (uint16_t)hi,
			    .level = level, .item = (uint32_t)i,
			    .line = it->line, .column = it->column }))
			oom(c);
next:
		path_pop(c, old);
	}
}

static void decode_level(struct load *L, const struct object *o)
{
	struct ctx *c = L->c;
	struct sl_config *cfg = L->cfg;
	struct sl_level_cfg *l, scratch;
	struct fhit h[PL_N];
	uint32_t idx;
	size_t old;

	if (cfg->n_levels == L->levels_cap) {
		size_t ncap = L->levels_cap ? L->levels_cap * 2 : 8;
		struct sl_level_cfg *nl = realloc(cfg->levels, ncap * sizeof(*nl));
		struct level_src *ns;

		if (!nl) {
			oom(c);
			return;
		}
		cfg->levels = nl;
		ns = realloc(L->src, ncap * sizeof(*ns));
		if (!ns) {
			oom(c);
			return;
		}
		L->src = ns;
		L->levels_cap = ncap;
	}
	idx = (uint32_t)cfg->n_levels++;
	l = &cfg->levels[idx];
	memset(l, 0, sizeof(*l));
	L->src[idx] = (struct level_src){ .object = strdup(c->object) };
	if (!L->src[idx].object)
		oom(c);
	l->line = o->root->line;
	l->column = o->root->column;
	if (!(l->file = strdup(c->file)))
		oom(c);
	l->seats_per_conn = DEF_SEATS_PER_CONN;
	limited_defaults(l);
	if (o->name) {
		snprintf(l->name, sizeof(l->name), "%s", o->name);
		L->src[idx].name_line = o->name_node->line;
		L->src[idx].name_col = o->name_node->column;
		for (size_t i = 0; i < idx; i++) {
			if (!L->src[i].name_line || strcmp(cfg->levels[i].name, l->name))
				continue;
			old = path_push(c, "metadata.name");
			err(c, o->name_node,
			    "duplicate PriorityLevelConfiguration name '%s'; also defined at %s:%u:%u",
			    l->name, c->file, L->src[i].name_line,
			    L->src[i].name_col);
			path_pop(c, old);
			break;
		}
	}
	if (idx == SL_MAX_LEVELS) {
		old = path_push(c, "kind");
		err(c, o->kind, "too many PriorityLevelConfiguration objects; at most %d are supported",
		    SL_MAX_LEVELS);
		path_pop(c, old);
	}
	if (!o->spec)
		return;

	old = path_push(c, "spec");
	if (!decode_fields(c, o->spec, level_fields, PL_N, l, h))
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
				size_t o2 = path_push(c, "exempt");

				err(c, h[PL_EXEMPT].key, "only allowed when type is Exempt (type is Limited)");
				path_pop(c, o2);
			}
			memset(&scratch, 0, sizeof(scratch));
			dst = &scratch;
		}
		decode_exempt(c, h[PL_EXEMPT].value, dst);
	}
	if (h[PL_LIMITED].value) {
		struct sl_level_cfg *dst = l;

		if (l->type != SL_LEVEL_LIMITED) {
			if (l->type == SL_LEVEL_EXEMPT) {
				size_t o2 = path_push(c, "limited");

				err(c, h[PL_LIMITED].key, "only allowed when type is Limited (type is Exempt)");
				path_pop(c, o2);
			}
			memset(&scratch, 0, sizeof(scratch));
			limited_defaults(&scratch);
			dst = &scratch;
		}
		decode_limited(c, h[PL_LIMITED].value, dst);
	}
	if (h[PL_PORTS].value) {
		size_t o2 = path_push(c, "ports");

		decode_ports(L, h[PL_PORTS].value, l, idx);
		path_pop(c, o2);
	}
out:
	path_pop(c, old);
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

static bool check_level_name(struct ctx *c, const struct sl_ynode *n,
			     const char *name)
{
	QBUF;

	if (strlen(name) >= SL_LEVEL_NAME_SIZE) {
		err(c, n, "name '%s' is %zu characters long; at most %d allowed",
		    Q(n), strlen(name), SL_LEVEL_NAME_SIZE - 1);
		return false;
	}
	if (!dns1123_subdomain(name)) {
		char sug[SL_LEVEL_NAME_SIZE];
		size_t i;

		for (i = 0; name[i]; i++)
			sug[i] = name[i] == '_' || name[i] == ' ' ? '-' : lower(name[i]);
		sug[i] = '\0';
		if (dns1123_subdomain(sug))
			err(c, n, "invalid name '%s': use lowercase letters, digits, '-' and '.', starting and ending with a letter or digit; did you mean '%s'?",
			    Q(n), sug);
		else
			err(c, n, "invalid name '%s': use lowercase letters, digits, '-' and '.', starting and ending with a letter or digit",
			    Q(n));
		return false;
	}
	return true;
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
	{ "PriorityLevelConfiguration", true, check_level_name, decode_level },
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
	path_pop(c, 0);
	if (doc->root->type != SL_Y_MAP) {
		err(c, doc->root,
		    "expected an object (a mapping with apiVersion, kind, metadata and spec), got %s",
		    describe(doc->root).s);
		return;
	}
	decode_fields(c, doc->root, top_fields, TOP_N, NULL, h);

	if ((v = h[TOP_API].value) || h[TOP_API].key) {
		path_set(c, "apiVersion");
		if (!v)
			err(c, h[TOP_API].key, "must not be empty; expected '%s'",
			    SL_API_VERSION);
		else if (v->type != SL_Y_STR)
			err(c, v, "expected '%s', got %s", SL_API_VERSION,
			    describe(v).s);
		else if (strcmp(v->str, SL_API_VERSION) || v->len != strlen(SL_API_VERSION))
			err(c, v, "unsupported apiVersion '%s'; expected '%s'",
			    Q(v), SL_API_VERSION);
		path_pop(c, 0);
	}
	if ((v = h[TOP_KIND].value) || h[TOP_KIND].key) {
		path_set(c, "kind");
		o.kind = v ? v : h[TOP_KIND].key;
		if (!v || v->type != SL_Y_STR) {
			err(c, o.kind, "expected a kind (%s, %s), got %s",
			    kinds[0].name, kinds[1].name, describe(v).s);
		} else if (!(kd = find_kind(v))) {
			const char *names[ARRAY_SIZE(kinds)], *sug;
			char known[256];

			for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
				names[i] = kinds[i].name;
			join(known, sizeof(known), names, ARRAY_SIZE(kinds));
			if ((sug = closest(v->str, names, ARRAY_SIZE(kinds))))
				err(c, v, "unknown kind '%s'; did you mean '%s'?",
				    Q(v), sug);
			else
				err(c, v, "unknown kind '%s' (known kinds: %s)",
				    Q(v), known);
		}
		path_pop(c, 0);
	}
	if ((v = h[TOP_META].value) || h[TOP_META].key) {
		path_set(c, "metadata");
		if (!v) {
			path_push(c, "name");
			err(c, h[TOP_META].key, "missing required field 'name'");
		} else if (decode_fields(c, v, meta_fields, MD_N, NULL, mh)) {
			const struct sl_ynode *n = mh[MD_NAME].value;
			const char *name;

			if (n) {
				path_push(c, "name");
				if (get_string(c, n, &name)) {
					if (!*name)
						err(c, n, "must not be empty");
					else if (!kd || !kd->check_name ||
						 kd->check_name(c, n, name)) {
						o.name = name;
						o.name_node = n;
					}
				}
				path_set(c, "metadata");
			}
			if (mh[MD_LABELS].value) {
				path_push(c, "labels");
				decode_string_map(c, mh[MD_LABELS].value);
				path_set(c, "metadata");
			}
			if (mh[MD_ANNOTATIONS].value) {
				path_push(c, "annotations");
				decode_string_map(c, mh[MD_ANNOTATIONS].value);
			}
		}
		path_pop(c, 0);
	}
	if (!kd)
		return;
	o.spec = h[TOP_SPEC].value;
	if (!o.spec && kd->spec_required) {
		path_set(c, "spec");
		err(c, doc->root, "missing required field 'spec'");
		path_pop(c, 0);
	}
	kd->decode(L, &o);
	path_pop(c, 0);
}

/* ---- cross-object checks: one level per port ------------------------------ */

/* Segment tree over ports 0..65535 holding, for the ports claimed so far,
 * the min and max owning level: finds in O(log) whether a range touches a
 * port of another level.  With a "next free port" union-find each port is
 * claimed once, so the whole check is O((ports + entries) log). */
#define NPORTS 65536
struct port_index {
	int32_t mn[2 * NPORTS], mx[2 * NPORTS]; /* empty: INT32_MAX / -1 */
	int32_t owner[NPORTS];                  /* entry index, -1 free */
	uint32_t next_free[NPORTS + 1];
};

static uint32_t next_free(struct port_index *pi, uint32_t p)
{
	while (pi->next_free[p] != p) {
		pi->next_free[p] = pi->next_free[pi->next_free[p]];
		p = pi->next_free[p];
	}
	return p;
}

static void claim(struct port_index *pi, uint32_t p, int32_t ent, int32_t level)
{
	uint32_t i = NPORTS + p;

	pi->owner[p] = ent;
	pi->next_free[p] = p + 1;
	pi->mn[i] = pi->mx[i] = level;
	for (i >>= 1; i; i >>= 1) {
		pi->mn[i] = pi->mn[2 * i] < pi->mn[2 * i + 1] ? pi->mn[2 * i] : pi->mn[2 * i + 1];
		pi->mx[i] = pi->mx[2 * i] > pi->mx[2 * i + 1] ? pi->mx[2 * i] : pi->mx[2 * i + 1];
	}
}

/* Leftmost claimed port in [lo,hi] whose level differs from `level`
 * (other = true) or any claimed port (other = false); -1 if none. */
static int32_t find_claimed(const struct port_index *pi, uint32_t node,
			    uint32_t nl, uint32_t nr, uint32_t lo, uint32_t hi,
			    int32_t level, bool other)
{
	uint32_t mid;
	int32_t r;

	if (nr < lo || nl > hi || pi->mx[node] < 0)
		return -1;
	if (other && pi->mn[node] >= level && pi->mx[node] <= level)
		return -1;
	if (nl == nr)
		return (int32_t)nl;
	mid = nl + (nr - nl) / 2;
	r = find_claimed(pi, 2 * node, nl, mid, lo, hi, level, other);
	if (r < 0)
		r = find_claimed(pi, 2 * node + 1, mid + 1, nr, lo, hi, level, other);
	return r;
}

static void level_object(const struct load *L, uint32_t level, char *buf,
			 size_t size)
{
	snprintf(buf, size, "%s", L->src[level].object ? L->src[level].object :
			 "PriorityLevelConfiguration");
}

static void port_text(char *buf, size_t size, const struct port_ent *e)
{
	if (e->lo == e->hi)
		snprintf(buf, size, "port %u", e->lo);
	else
		snprintf(buf, size, "port range %u-%u", e->lo, e->hi);
}

static void check_ports(struct load *L)
{
	struct ctx *c = L->c;
	struct port_index *pi;
	size_t distinct = 0;
	bool full_reported = false;

	if (!L->n_ports)
		return;
	pi = malloc(sizeof(*pi));
	if (!pi) {
		oom(c);
		return;
	}
	for (uint32_t i = 0; i < 2 * NPORTS; i++) {
		pi->mn[i] = INT32_MAX;
		pi->mx[i] = -1;
	}
	for (uint32_t p = 0; p < NPORTS; p++)
		pi->owner[p] = -1;
	for (uint32_t p = 0; p <= NPORTS; p++)
		pi->next_free[p] = p;

	for (size_t k = 0; k < L->n_ports; k++) {
		const struct port_ent *e = &L->ports[k];
		int32_t level = (int32_t)e->level, p;
		char what[48], other[sizeof(c->object)];

		level_object(L, e->level, c->object, sizeof(c->object));
		path_set(c, "spec.ports");
		path_push_index(c, e->item);
		port_text(what, sizeof(what), e);

		p = find_claimed(pi, 1, 0, NPORTS - 1, e->lo, e->hi, level, true);
		if (p >= 0) {
			const struct port_ent *o = &L->ports[pi->owner[p]];

			level_object(L, o->level, other, sizeof(other));
			if (e->lo == e->hi)
				err_at(c, SL_SEV_ERROR, e->line, e->column,
				       "port %d already belongs to %s (listed at %s:%u:%u); a port may belong to at most one level",
				       p, other, c->file, o->line, o->column);
			else
				err_at(c, SL_SEV_ERROR, e->line, e->column,
				       "%s includes port %d, which already belongs to %s (listed at %s:%u:%u); a port may belong to at most one level",
				       what, p, other, c->file, o->line, o->column);
		} else if ((p = find_claimed(pi, 1, 0, NPORTS - 1, e->lo, e->hi,
					     level, false)) >= 0) {
			const struct port_ent *o = &L->ports[pi->owner[p]];

			if (e->lo == e->hi)
				err_at(c, SL_SEV_WARNING, e->line, e->column,
				       "port %d is listed twice for this level (also listed at %s:%u:%u)",
				       p, c->file, o->line, o->column);
			else
				err_at(c, SL_SEV_WARNING, e->line, e->column,
				       "%s overlaps port %d, also listed for this level at %s:%u:%u",
				       what, p, c->file, o->line, o->column);
		}
		for (uint32_t q = next_free(pi, e->lo); q <= e->hi;
		     q = next_free(pi, q + 1)) {
			claim(pi, q, (int32_t)k, level);
			if (++distinct == SL_MAX_PROTECTED_PORTS + 1 && !full_reported) {
				err_at(c, SL_SEV_ERROR, e->line, e->column,
				       "%s brings the number of protected ports above %d, the size of the port table",
				       what, SL_MAX_PROTECTED_PORTS);
				full_reported = true;
			}
		}
	}
	free(pi);
	c->object[0] = '\0';
	path_pop(c, 0);
}

/* ---- public API ----------------------------------------------------------- */

static void level_release(struct sl_level_cfg *l)
{
	free(l->ports);
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

	L.cfg = calloc(1, sizeof(*L.cfg));
	if (!L.cfg || server_defaults(&L.cfg->server) ||
	    !(L.cfg->source_file = strdup(c.file))) {
		oom(&c);
		rc = -ENOMEM;
		goto done;
	}
	rc = sl_ystream_load(&ys, c.file, buf, len, diags);
	if (rc != -ENOMEM) {
		/* Documents before a syntax error are still checked. */
		for (size_t i = 0; i < ys.n_docs; i++)
			decode_document(&L, &ys.docs[i]);
		c.object[0] = '\0';
		path_pop(&c, 0);
		check_ports(&L);
	}
	sl_ystream_free(&ys);
	if (c.oom)
		rc = -ENOMEM;
	else if (diags->n_errors != errors)
		rc = -EINVAL;
done:
	sl_diags_sort(diags, first);
	for (size_t i = 0; L.cfg && i < L.cfg->n_levels; i++)
		free(L.src[i].object);
	free(L.src);
	free(L.ports);
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
	size_t len = 0, cap = 0;
	struct stat st;
	int fd, rc;

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
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		sl_diags_add(diags, SL_SEV_ERROR, path, 0, 0, NULL, NULL,
			     "cannot open configuration file: %s", strerror(-rc));
		goto out;
	}
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		rc = -EISDIR;
		sl_diags_add(diags, SL_SEV_ERROR, path, 0, 0, NULL, NULL,
			     "cannot read configuration file: %s", strerror(EISDIR));
		close(fd);
		goto out;
	}
	for (;;) {
		ssize_t n;

		if (len == cap) {
			size_t ncap = cap ? cap * 2 : 16384;
			char *nb;

			if (cap >= SL_MAX_FILE_SIZE + 1) {
				rc = -EFBIG;
				sl_diags_add(diags, SL_SEV_ERROR, path, 0, 0, NULL, NULL,
					     "configuration file is larger than %u MiB",
					     SL_MAX_FILE_SIZE >> 20);
				close(fd);
				goto out;
			}
			if (ncap > SL_MAX_FILE_SIZE + 1)
				ncap = SL_MAX_FILE_SIZE + 1;
			nb = realloc(buf, ncap);
			if (!nb) {
				rc = -ENOMEM;
				sl_diags_add(diags, SL_SEV_ERROR, path, 0, 0, NULL, NULL,
					     "out of memory reading the configuration file");
				close(fd);
				goto out;
			}
			buf = nb;
			cap = ncap;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			sl_diags_add(diags, SL_SEV_ERROR, path, 0, 0, NULL, NULL,
				     "cannot read configuration file: %s",
				     strerror(-rc));
			close(fd);
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	rc = sl_config_load_buffer(path, buf, len, out, diags);
out:
	free(buf);
	sl_diags_free(&local);
	return rc;
}
