// SPDX-License-Identifier: MIT
#include <stdio.h>

#include "log.h"

static const char *const level_tag[] = { "error", "warning", "info", "debug" };
static void (*before_msg)(void);

void ws_log_set_before(void (*before)(void))
{
	before_msg = before;
}

void ws_log(enum ws_log_level level, const char *fmt, ...)
{
	va_list ap;

	/* one write per message where stdio allows: lines of parallel loads stay whole */
	flockfile(stderr);
	if (before_msg)
		before_msg();
	fputs(level == WS_LOG_WARN ? "whyslow: warning: " : "whyslow: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	funlockfile(stderr);
}

void ws_vlog_as(const char *who, enum ws_log_level level, const char *fmt, va_list ap)
{
	flockfile(stderr);
	if (before_msg)
		before_msg();
	fprintf(stderr, "whyslow: %s: %s: ", who ? who : "core", level_tag[level & 3]);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	funlockfile(stderr);
}
