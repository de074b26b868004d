/* SPDX-License-Identifier: MIT */
/*
 * The core's one way to tell the user something on stderr: "whyslow: MSG",
 * with "warning: " for warnings. Errors are said once, by the caller that can
 * explain them (functions below it return -errno). Debug lines are the
 * caller's to gate on -v (a session's verbosity, not a global).
 */
#ifndef WS_LOG_H
#define WS_LOG_H

#include <stdarg.h>

#include <whyslow/plugin.h> /* enum ws_log_level */

void ws_log(enum ws_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same for @who (a source's name): "whyslow: WHO: LEVEL: MSG" (plugins' host log). */
void ws_vlog_as(const char *who, enum ws_log_level level, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
/*
 * Called before each message is written (NULL: nothing): the live status line (status.c)
 * erases itself there, so a message never joins it on the terminal.
 */
void ws_log_set_before(void (*before)(void));

#endif
