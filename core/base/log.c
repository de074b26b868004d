// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

static const char *const level_tag[] = { "error", "warning", "info", "debug" };
static void (*before_msg)(void);

/*
 * Is stderr the journal? systemd sets JOURNAL_STREAM to that stream's "DEVICE:INODE" (a
 * descendant's stderr, redirected, is not it). Then each message starts with the syslog level
 * journald reads from a "<N>" prefix (sd-daemon(3)): `journalctl -p warning` finds them.
 */
static int journal_level(enum ws_log_level level)
{
	static int journal = -1;			  /* not asked yet */
	static const int syslog_level[] = { 3, 4, 6, 7 }; /* err, warning, info, debug */

	if (journal < 0) {
		const char *js = getenv("JOURNAL_STREAM");
		unsigned long long dev, ino;
		struct stat st;

		journal = js && sscanf(js, "%llu:%llu", &dev, &ino) == 2 &&
			  !fstat(STDERR_FILENO, &st) && (unsigned long long)st.st_dev == dev &&
			  (unsigned long long)st.st_ino == ino;
	}
	return journal ? syslog_level[level & 3] : -1;
}

static void level_prefix(enum ws_log_level level)
{
	int l = journal_level(level);

	if (l >= 0)
		fprintf(stderr, "<%d>", l);
}

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
	level_prefix(level);
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
	level_prefix(level);
	fprintf(stderr, "whyslow: %s: %s: ", who ? who : "core", level_tag[level & 3]);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	funlockfile(stderr);
}
