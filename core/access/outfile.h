/* SPDX-License-Identifier: MIT */
/*
 * Output files that appear whole or not at all, written safely as root.
 *
 * The directory part of the path is opened one component at a time with
 * O_NOFOLLOW: a symbolic link on the way is followed only when it is owned
 * by root, whyslow's user or the user who ran sudo, and the directory holding
 * it is owned by one of them and writable by no group or others (so /var/run
 * -> /run is followed; a link someone else made, or could replace, is
 * refused). The directory is then held open, so nothing swapped in later
 * changes where the output goes.
 *
 * A regular file (or a new one) is written under a fresh sibling name,
 * NAME.tmp.XXXXXX, created with O_CREAT|O_EXCL|O_NOFOLLOW in that directory,
 * and renamed over NAME when complete: nothing is ever written through a
 * symbolic link or into a file someone else prepared. A symbolic link as NAME
 * is refused. A file NAME is replaced only if it belongs to the user the
 * output is for (the user who ran sudo, or whyslow's own user), and keeps its
 * permission bits and group; someone else's file is refused, never taken
 * over nor handed back to them with root's contents. A device or FIFO
 * (/dev/null, a named pipe) is written in place, opened under sudo with the
 * invoking user's credentials (only what they could open themselves) and
 * never waiting for a FIFO reader. Under sudo a new file is the invoking
 * user's and mode 0600; otherwise 0666 & ~umask. /dev/stdout and /dev/stderr
 * mean whyslow's own.
 *
 * A write error keeps its errno (a full disk is "No space left on device",
 * not EIO): ws_outfile_error() says it, ws_outfile_close() prints it.
 */
#ifndef WS_OUTFILE_H
#define WS_OUTFILE_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

struct ws_outfile_sink;

struct ws_outfile {
	FILE *f;
	const char *path; /* NULL: stdout */
	bool direct;	  /* written in place (a device or FIFO) */
	bool std;	  /* whyslow's stdout or stderr: flushed, never closed */
	int dirfd;	  /* the target's directory, for the rename */
	int fd;		  /* the file written (the temporary one, or the device); -1: std */
	struct ws_outfile_sink *sink; /* keeps the first write error's errno; NULL: std, a tty */
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

/*
 * A binary output (@format, e.g. "pprof") to @path (as ws_outfile_open takes it) is refused when
 * @path is whyslow's stdout or stderr on a terminal: true, having said so.
 */
bool ws_outfile_binary_to_terminal(const char *path, const char *format);

/* Open @path (NULL: stdout; WS_OUTFILE_STDERR: stderr). 0, or -errno having said why. */
int ws_outfile_open(struct ws_outfile *o, const char *path);
/* 0, or -errno of the first write to @o that failed (nothing printed): the output is lost. */
int ws_outfile_error(const struct ws_outfile *o);
/*
 * Flush and close; rename into place if @keep and every write succeeded, the
 * target checked again as at open. 0 or -errno, printed when @keep (without
 * @keep nothing is kept and nothing said: the caller said why already).
 */
int ws_outfile_close(struct ws_outfile *o, bool keep);

#endif
