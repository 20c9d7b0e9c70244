/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Logging for sluiced and sluicectl: one line per event, with a level. */
#ifndef SLUICE_LOG_H
#define SLUICE_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

enum sl_log_level {
	SL_LOG_ERROR = 0,
	SL_LOG_WARN  = 1,
	SL_LOG_INFO  = 2,
	SL_LOG_DEBUG = 3,
};

/* Lines go to stderr in one of three shapes, chosen here:
 *  - journald (JOURNAL_STREAM names stderr): "<3>text", the syslog
 *    priority first and nothing else (journald adds time and unit);
 *  - a file or pipe: "2026-12-01T17:00:00.000Z prog: level: text";
 *  - a terminal: "prog: level: text". */
void sl_log_init(const char *prog, enum sl_log_level level);
void sl_log_set_level(enum sl_log_level level);
enum sl_log_level sl_log_get_level(void);
/* "error", "warning" (or "warn"), "info", "debug": 0, or -1. */
int sl_log_parse_level(const char *s, enum sl_log_level *out);
/* A logfmt value: v as it is, or quoted with \" \\ \n escaped when it
 * holds a space, a quote, '=' or a control character (or is empty). */
const char *sl_logfmt_value(char *buf, size_t len, const char *v);
/* Under journald, a line may go to the journal with fields of its own
 * (daemon/journal.c: EVENT=reload ...): the sink gets the syslog priority
 * and the line; false sends it to stderr as before. */
typedef bool (*sl_log_sink)(int priority, const char *line);
void sl_log_set_journal_sink(sl_log_sink sink);
/* Whether lines go to journald (JOURNAL_STREAM names stderr). */
bool sl_log_to_journal(void);
void sl_log(enum sl_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sl_vlog(enum sl_log_level level, const char *fmt, va_list ap);

#define pr_err(...)   sl_log(SL_LOG_ERROR, __VA_ARGS__)
#define pr_warn(...)  sl_log(SL_LOG_WARN, __VA_ARGS__)
#define pr_info(...)  sl_log(SL_LOG_INFO, __VA_ARGS__)
#define pr_debug(...) sl_log(SL_LOG_DEBUG, __VA_ARGS__)

#endif
