// SPDX-License-Identifier: MIT
/* The live status line: see status.h. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "status.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/proc_stat.h"
#include "base/util.h"

#define TTY_EVERY_NS 250000000ULL
#define LOG_EVERY_NS 1000000000ULL

static struct {
	bool tty, lines; /* rewrite one line in place / print a line each time */
	bool shown;	 /* a status line is on the terminal now */
	uint64_t last;
} st;

/* The controlling terminal of @pid is @tty (field 7 of its stat line, the kernel's encoding). */
static bool ctty_is(uint32_t pid, dev_t tty)
{
	char path[32], buf[512];
	const char *f;
	unsigned long nr;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	f = ws_proc_stat_read(path, buf, sizeof(buf));
	if (!f || sscanf(f, "%*c %*d %*d %*d %lu", &nr) != 1 || !nr)
		return false;
	return major(tty) == ((nr >> 8) & 0xfff) &&
	       minor(tty) == ((nr & 0xff) | ((nr >> 12) & 0xfff00));
}

/* @pid's descriptor @fd is the terminal @name: the link's text, never followed (no wait). */
static bool fd_is(uint32_t pid, int fd, const char *name)
{
	char path[48], link[256];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%u/fd/%d", pid, fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return false;
	link[n] = 0;
	return !strcmp(link, name);
}

bool ws_status_tty_shared(bool command, const uint32_t *pids, int npids)
{
	char name[256];
	struct stat err;
	ssize_t n;

	if (fstat(STDERR_FILENO, &err) || !S_ISCHR(err.st_mode) || !isatty(STDERR_FILENO))
		return false;
	if (command)
		return true;
	n = readlink("/proc/self/fd/2", name, sizeof(name) - 1);
	name[n > 0 ? n : 0] = 0;
	for (int i = 0; i < npids; i++) {
		if (ctty_is(pids[i], err.st_rdev))
			return true;
		for (int fd = 0; n > 0 && fd <= 2; fd++)
			if (fd_is(pids[i], fd, name))
				return true;
	}
	return false;
}

void ws_status_init(int verbose, bool off, bool shared)
{
	st.tty = !off && !shared && isatty(STDERR_FILENO) && getenv("TERM") && *getenv("TERM");
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
