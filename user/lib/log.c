// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "lib/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *log_prog = "sluice";
static enum sl_log_level log_level = SL_LOG_INFO;
static enum { OUT_TERMINAL, OUT_FILE, OUT_JOURNAL } log_out = OUT_TERMINAL;

static sl_log_sink journal_sink;

static const char *const level_names[] = {"error", "warning", "info", "debug"};
/* syslog(3) priorities: LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG. */
static const int level_priority[] = {3, 4, 6, 7};

/* systemd sets JOURNAL_STREAM to the device and inode of the stream it
 * connected: when stderr is still that stream, journald reads us. */
static bool stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2 || fstat(STDERR_FILENO, &st))
		return false;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void sl_log_init(const char *prog, enum sl_log_level level)
{
	log_prog = prog;
	log_level = level;
	log_out = stderr_is_journal() ? OUT_JOURNAL : isatty(STDERR_FILENO) ? OUT_TERMINAL : OUT_FILE;
}

void sl_log_set_level(enum sl_log_level level) { log_level = level; }
void sl_log_set_journal_sink(sl_log_sink sink) { journal_sink = sink; }
bool sl_log_to_journal(void) { return log_out == OUT_JOURNAL; }
enum sl_log_level sl_log_get_level(void) { return log_level; }

int sl_log_parse_level(const char *s, enum sl_log_level *out)
{
	for (int l = SL_LOG_ERROR; l <= SL_LOG_DEBUG; l++)
		if (!strcmp(s, level_names[l]) || (l == SL_LOG_WARN && !strcmp(s, "warn"))) {
			*out = (enum sl_log_level)l;
			return 0;
		}
	return -1;
}

void sl_vlog(enum sl_log_level level, const char *fmt, va_list ap)
{
	char stamp[96] = "";

	if (level > log_level)
		return;
	if (log_out == OUT_JOURNAL && journal_sink) {
		char line[4096];
		va_list copy;
		size_t n;

		va_copy(copy, ap);
		vsnprintf(line, sizeof(line), fmt, copy);
		va_end(copy);
		n = strlen(line);
		if (n && line[n - 1] == '\n')
			line[n - 1] = '\0';
		if (journal_sink(level_priority[level], line))
			return;
	}
	if (log_out == OUT_JOURNAL) {
		/* journald keeps its own time and the unit's name: the
		 * priority is all a line needs in front. */
		fprintf(stderr, "<%d>", level_priority[level]);
	} else {
		if (log_out == OUT_FILE) {
			struct timespec ts;
			struct tm tm;

			clock_gettime(CLOCK_REALTIME, &ts);
			gmtime_r(&ts.tv_sec, &tm);
			snprintf(stamp, sizeof(stamp), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ ",
				 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
				 tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
		}
		fprintf(stderr, "%s%s: %s: ", stamp, log_prog, level_names[level]);
	}
	vfprintf(stderr, fmt, ap);
	if (!*fmt || fmt[strlen(fmt) - 1] != '\n')
		fputc('\n', stderr);
}

void sl_log(enum sl_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sl_vlog(level, fmt, ap);
	va_end(ap);
}

const char *sl_logfmt_value(char *buf, size_t len, const char *v)
{
	size_t o = 0;
	bool plain = *v != '\0';

	for (const char *c = v; *c; c++)
		if (*c <= ' ' || *c == '"' || *c == '=' || *c == '\\' || (unsigned char)*c >= 0x7f)
			plain = false;
	if (plain || len < 3) {
		snprintf(buf, len, "%s", v);
		return buf;
	}
	buf[o++] = '"';
	for (const char *c = v; *c && o + 3 < len; c++) {
		if (*c == '"' || *c == '\\') {
			buf[o++] = '\\';
			buf[o++] = *c;
		} else if (*c == '\n') {
			buf[o++] = '\\';
			buf[o++] = 'n';
		} else {
			buf[o++] = *c;
		}
	}
	buf[o++] = '"';
	buf[o] = '\0';
	return buf;
}
