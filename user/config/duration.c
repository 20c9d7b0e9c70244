// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Durations as the configuration writes them.  See duration.h. */
#include "config/duration.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "config/yaml_doc.h" /* sl_yquote */

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

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
int cd_parse_duration(const char *s, uint64_t *out, char *why,
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
	r = cd_parse_duration(s, &v, why, sizeof(why));
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
