// SPDX-License-Identifier: MIT
#include <stdio.h>

#include "log.h"

static const char *const level_tag[] = { "error", "warning", "info", "debug" };

void ws_log(enum ws_log_level level, const char *fmt, ...)
{
	va_list ap;

	/* one write per message where stdio allows: lines of parallel loads stay whole */
	flockfile(stderr);
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
	fprintf(stderr, "whyslow: %s: %s: ", who ? who : "core", level_tag[level & 3]);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	funlockfile(stderr);
}
