#include "lib/log.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *log_prog = "sluice";
static enum sl_log_level log_level = SL_LOG_INFO;

static const char *const level_names[] = {"error", "warning", "info", "debug"};

void sl_log_init(const char *prog, enum sl_log_level level)
{
	log_prog = prog;
	log_level = level;
}

void sl_log_set_level(enum sl_log_level level) { log_level = level; }
enum sl_log_level sl_log_get_level(void) { return log_level; }

void sl_vlog(enum sl_log_level level, const char *fmt, va_list ap)
{
	char stamp[96] = "";

	if (level > log_level)
		return;
	if (!isatty(STDERR_FILENO)) {
		struct timespec ts;
		struct tm tm;

		clock_gettime(CLOCK_REALTIME, &ts);
		gmtime_r(&ts.tv_sec, &tm);
		snprintf(stamp, sizeof(stamp), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ ",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
			 tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
	}
	fprintf(stderr, "%s%s: %s: ", stamp, log_prog, level_names[level]);
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
