/* Logging for sluiced and sluicectl: one line per event, with a level. */
#ifndef SLUICE_LOG_H
#define SLUICE_LOG_H

#include <stdarg.h>
#include <stdbool.h>

enum sl_log_level {
	SL_LOG_ERROR = 0,
	SL_LOG_WARN  = 1,
	SL_LOG_INFO  = 2,
	SL_LOG_DEBUG = 3,
};

/* prog is printed in front of every line; timestamps are added when the
 * output is not a terminal (daemon logs end up in journald or a file). */
void sl_log_init(const char *prog, enum sl_log_level level);
void sl_log_set_level(enum sl_log_level level);
enum sl_log_level sl_log_get_level(void);
void sl_log(enum sl_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sl_vlog(enum sl_log_level level, const char *fmt, va_list ap);

#define pr_err(...)   sl_log(SL_LOG_ERROR, __VA_ARGS__)
#define pr_warn(...)  sl_log(SL_LOG_WARN, __VA_ARGS__)
#define pr_info(...)  sl_log(SL_LOG_INFO, __VA_ARGS__)
#define pr_debug(...) sl_log(SL_LOG_DEBUG, __VA_ARGS__)

#endif
