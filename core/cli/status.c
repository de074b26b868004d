// SPDX-License-Identifier: MIT
/* The live status line: see status.h. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "status.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/util.h"

#define TTY_EVERY_NS 250000000ULL
#define LOG_EVERY_NS 1000000000ULL

static struct {
	bool tty, lines; /* rewrite one line in place / print a line each time */
	bool shown;	 /* a status line is on the terminal now */
	uint64_t last;
} st;

void ws_status_init(int verbose, bool off)
{
	st.tty = !off && isatty(STDERR_FILENO) && getenv("TERM") && *getenv("TERM");
	st.lines = !off && !st.tty && verbose > 0;
	st.shown = false;
	st.last = ws_clock_mono_now();
	/* a warning mid-run would otherwise be written at the end of the status line */
	ws_log_set_before(st.tty ? ws_status_clear : NULL);
}

bool ws_status_colour(void)
{
	const char *no = getenv("NO_COLOR");

	return isatty(STDERR_FILENO) && !(no && *no);
}

void ws_status_tick(struct ws_session *s)
{
	uint64_t now = ws_clock_mono_now();
	struct ws_progress p;
	char elapsed[32];

	if (!(st.tty || st.lines) || now - st.last < (st.tty ? TTY_EVERY_NS : LOG_EVERY_NS))
		return;
	st.last = now;
	ws_session_progress(s, &p);
	ws_format_duration(p.elapsed_ns - p.elapsed_ns % 100000000ULL, elapsed, sizeof(elapsed));
	/* "\r\033[K": back to the start of the line and erase it, so the line is rewritten */
	fprintf(stderr,
		"%swhyslow: %" PRIu64 " threads, %" PRIu64 " events, %s%" PRIu64 " lost%s, %s%s",
		st.tty ? "\r\033[K" : "", p.threads, p.records,
		p.lost && ws_status_colour() ? "\033[1;31m" : "", p.lost,
		p.lost && ws_status_colour() ? "\033[0m" : "", elapsed, st.tty ? "" : "\n");
	fflush(stderr);
	st.shown = st.tty;
}

void ws_status_clear(void)
{
	if (!st.shown)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	st.shown = false;
}
