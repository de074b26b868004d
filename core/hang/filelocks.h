/* SPDX-License-Identifier: MIT */
/*
 * File locks other processes hold on the files a process has open, from /proc/locks: evidence
 * for a thread that polls for a lock (SQLite's busy handler, an F_SETLK retry loop sleeps
 * between tries, so nothing in its own wait names the lock). A lock held on a file it has open
 * is what /proc/locks shows, not proof that it waits for that lock: said as such.
 *
 * Only /proc is read (the fds' inodes from /proc/PID/fdinfo, their devices from
 * /proc/PID/mountinfo, their names with readlink): no file the process names is opened or
 * stat()ed, so nothing it controls can block the reader (a FUSE file, a FIFO). Bounded: at most
 * WS_FLOCK_FDS descriptors and WS_FLOCK_LINES lines of /proc/locks.
 */
#ifndef WS_FILELOCKS_H
#define WS_FILELOCKS_H

#include <stdint.h>

#define WS_FLOCK_FDS 4096
#define WS_FLOCK_LINES 100000

struct ws_file_lock {
	int fd;		      /* the process's descriptor on the locked file */
	uint32_t holder;      /* the process holding the lock (/proc/locks' pid) */
	char kind[8];	      /* POSIX, FLOCK, OFDLCK */
	char type[8];	      /* READ, WRITE */
	char path[256];	      /* the file, as /proc/PID/fd names it */
	char holder_comm[16]; /* /proc/HOLDER/comm, "?" when gone */
};

/*
 * Up to @max locks that processes other than @pid hold on files @pid has open, into @out.
 * Returns how many, or a negative errno (/proc/PID/fdinfo not readable: -EACCES, gone: -ENOENT).
 */
int ws_file_locks_of(uint32_t pid, struct ws_file_lock *out, int max);

#endif
