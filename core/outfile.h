/* SPDX-License-Identifier: MIT */
/*
 * Output files that appear whole or not at all: written under a temporary
 * sibling name and renamed into place when complete. A path that is not a
 * regular file (/dev/null, a pipe, a terminal) is written directly: renaming
 * over it would replace the device with a file.
 */
#ifndef WS_OUTFILE_H
#define WS_OUTFILE_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

struct ws_outfile {
	FILE *f;
	const char *path; /* NULL: stdout or stderr */
	bool direct;	  /* written in place */
	char tmp[PATH_MAX];
};

/* The report's default for `run`: the traced command's stdout stays its own. */
#define WS_OUTFILE_STDERR "<stderr>"

/* Open @path (NULL: stdout; WS_OUTFILE_STDERR: stderr). 0, or -errno having said why. */
int ws_outfile_open(struct ws_outfile *o, const char *path);
/* Flush and close; rename into place if @keep and every write succeeded. 0 or -errno (printed). */
int ws_outfile_close(struct ws_outfile *o, bool keep);

#endif
