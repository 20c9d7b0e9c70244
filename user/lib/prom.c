/* Prometheus text exposition.  See prom.h. */
#include <math.h>
#include <stdarg.h>

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
		type == SL_PROM_COUNTER ? "counter" : "gauge");
}

static void name_and_labels(FILE *f, const char *name, va_list ap)
{
	const char *key;
	int n = 0;

	fprintf(f, SL_PROM_PREFIX "%s", name);
	while ((key = va_arg(ap, const char *))) {
		const char *value = va_arg(ap, const char *);

		fprintf(f, "%c%s=\"", n++ ? ',' : '{', key);
		escaped(f, value ? value : "", 1);
		fputc('"', f);
	}
	if (n)
		fputc('}', f);
	fputc(' ', f);
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
