// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Prometheus text exposition.  See prom.h. */
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "lib/prom.h"

/* Label values escape backslash, double quote and newline; help text
 * escapes backslash and newline. */
static void escaped(FILE *f, const char *s, int quote)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else if (quote && *s == '"')
			fputs("\\\"", f);
		else
			fputc(*s, f);
	}
}

void sl_prom_family(FILE *f, const char *name, enum sl_prom_type type, const char *help)
{
	fprintf(f, "# HELP " SL_PROM_PREFIX "%s ", name);
	escaped(f, help, 0);
	fprintf(f, "\n# TYPE " SL_PROM_PREFIX "%s %s\n", name,
		type == SL_PROM_COUNTER ? "counter" : type == SL_PROM_GAUGE ? "gauge" : "histogram");
}

/* NAME{LABELS} and a space; suffix (or NULL) goes after the name, le (or
 * NULL) is the last label. */
static void series(FILE *f, const char *name, const char *suffix, const char *le, va_list ap)
{
	const char *key;
	int n = 0;

	fprintf(f, SL_PROM_PREFIX "%s%s", name, suffix ? suffix : "");
	while ((key = va_arg(ap, const char *))) {
		const char *value = va_arg(ap, const char *);

		fprintf(f, "%c%s=\"", n++ ? ',' : '{', key);
		escaped(f, value ? value : "", 1);
		fputc('"', f);
	}
	if (le)
		fprintf(f, "%cle=\"%s\"", n++ ? ',' : '{', le);
	if (n)
		fputc('}', f);
	fputc(' ', f);
}

static void name_and_labels(FILE *f, const char *name, va_list ap)
{
	series(f, name, NULL, NULL, ap);
}

void sl_hist_init(struct sl_hist *h, const double *bounds, unsigned n_bounds)
{
	memset(h, 0, sizeof(*h));
	h->bounds = bounds;
	h->n_bounds = n_bounds < SL_HIST_MAX_BOUNDS ? n_bounds : SL_HIST_MAX_BOUNDS;
}

void sl_hist_observe(struct sl_hist *h, double v)
{
	unsigned b = 0;

	if (isnan(v))
		return;
	while (b < h->n_bounds && v > h->bounds[b])
		b++;
	h->bucket[b]++;
	h->count++;
	h->sum += v;
}

void sl_prom_histogram(FILE *f, const char *name, const struct sl_hist *h, uint64_t extra_zeros,
		       ...)
{
	uint64_t cumulative = 0;
	char le[32];
	va_list ap, each;

	va_start(ap, extra_zeros);
	for (unsigned b = 0; b <= h->n_bounds; b++) {
		cumulative += h->bucket[b];
		if (b < h->n_bounds)
			snprintf(le, sizeof(le), "%.15g", h->bounds[b]); /* 0.005, not 0.0050000000000000001 */
		else
			snprintf(le, sizeof(le), "+Inf");
		va_copy(each, ap);
		series(f, name, "_bucket", le, each);
		va_end(each);
		/* A zero lands in every bucket (bounds are >= 0). */
		fprintf(f, "%llu\n", (unsigned long long)(cumulative + extra_zeros));
	}
	va_copy(each, ap);
	series(f, name, "_sum", NULL, each);
	va_end(each);
	fprintf(f, "%.17g\n", h->sum);
	series(f, name, "_count", NULL, ap);
	va_end(ap);
	fprintf(f, "%llu\n", (unsigned long long)(h->count + extra_zeros));
}

void sl_prom_sample(FILE *f, const char *name, double value, ...)
{
	va_list ap;

	va_start(ap, value);
	name_and_labels(f, name, ap);
	va_end(ap);
	if (isnan(value))
		fputs("NaN\n", f);
	else if (isinf(value))
		fputs(value > 0 ? "+Inf\n" : "-Inf\n", f);
	else
		fprintf(f, "%.17g\n", value);
}

void sl_prom_sample_u64(FILE *f, const char *name, uint64_t value, ...)
{
	va_list ap;

	va_start(ap, value);
	name_and_labels(f, name, ap);
	va_end(ap);
	fprintf(f, "%llu\n", (unsigned long long)value);
}

void sl_prom_single(FILE *f, const char *name, enum sl_prom_type type, const char *help,
		    uint64_t value)
{
	sl_prom_family(f, name, type, help);
	sl_prom_sample_u64(f, name, value, NULL);
}
