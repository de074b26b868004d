/* SPDX-License-Identifier: MIT */
/*
 * Output files that appear whole or not at all, written safely as root.
 *
 * A regular file (or a new one) is written under a fresh sibling name,
 * NAME.tmp.XXXXXX, created with O_CREAT|O_EXCL|O_NOFOLLOW in the directory
 * opened once, and renamed over NAME when complete: nothing is ever written
 * through a symbolic link or into a file someone else prepared. A symbolic
 * link as NAME is refused. A device or FIFO (/dev/null, a named pipe) is
 * written in place, opened under sudo with the invoking user's credentials
 * (only what they could open themselves) and never waiting for a FIFO reader.
 * Under sudo the file is the invoking user's and mode 0600; otherwise
 * 0666 & ~umask. /dev/stdout and /dev/stderr mean whyslow's own.
 */
#ifndef WS_OUTFILE_H
#define WS_OUTFILE_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

struct ws_outfile {
	FILE *f;
	const char *path; /* NULL: stdout */
	bool direct;	  /* written in place (a device or FIFO) */
	bool std;	  /* whyslow's stdout or stderr: flushed, never closed */
	int dirfd;	  /* the target's directory, for the rename */
	char base[NAME_MAX + 1];
	char tmp[PATH_MAX]; /* the temporary file's path, as shown to the user */
};

/*
 * At start-up: a closed stdin, stdout or stderr is noted and filled with
 * /dev/null, so no file whyslow opens takes its number (and gets the report,
 * or reaches the command as its stdout). ws_outfile_open(NULL) then refuses.
 */
void ws_outfile_guard_std(void);
/* The report's default for `run`: the traced command's stdout stays its own. */
#define WS_OUTFILE_STDERR "<stderr>"

/* Open @path (NULL: stdout; WS_OUTFILE_STDERR: stderr). 0, or -errno having said why. */
int ws_outfile_open(struct ws_outfile *o, const char *path);
/* Flush and close; rename into place if @keep and every write succeeded. 0 or -errno (printed). */
int ws_outfile_close(struct ws_outfile *o, bool keep);

#endif
