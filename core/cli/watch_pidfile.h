/* SPDX-License-Identifier: MIT */
/*
 * The running watch's pid file, /run/whyslow/watch.pid ("PID\nSPOOL\n"; the directory 0700,
 * the file 0600, both root's): one watch at a time, and `whyslow dump` finds it there.
 */
#ifndef WS_WATCH_PIDFILE_H
#define WS_WATCH_PIDFILE_H

#include <stdbool.h>

/* where watch says it runs, and where `whyslow dump` looks (root's alone: 0700, the file 0600) */
#define WS_WATCH_RUN_DIR "/run/whyslow"
#define WS_WATCH_PID_FILE WS_WATCH_RUN_DIR "/watch.pid"

struct ws_pidfile {
	int dirfd;
	const char *spool;
	bool written;
};

/* Before tracing: the directory made or checked, and no other watch running. 0 or -errno, said. */
int ws_pidfile_claim(struct ws_pidfile *pf, const char *spool);
/* Write it (replacing a stale one of an earlier watch). 0 or -errno, said. */
int ws_pidfile_write(struct ws_pidfile *pf);
/* Remove it if it is still ours; close the directory. */
void ws_pidfile_release(struct ws_pidfile *pf);

#endif
