/* SPDX-License-Identifier: MIT */
/*
 * Opening a file a traced program names (a library in its maps, its perf map, a debuglink), as
 * that program's user, for root's symbolizer. Such a path is hostile input: it may name a FIFO
 * that blocks open() for good, a file only root may read, or a FUSE file whose daemon never
 * answers. So the open happens in a helper process with the traced process's filesystem
 * credentials (no capabilities unless the process is root's, no new privileges, a seccomp filter
 * that allows opening and nothing else), which passes the descriptor back; a request that does
 * not end within its deadline kills the helper. What comes back is a regular file that process's
 * user could open, not on FUSE. (OpenSSH's privilege separation is the model.)
 */
#ifndef WS_USEROPEN_H
#define WS_USEROPEN_H

#include <errno.h>
#include <stdbool.h>
#include <sys/types.h>

#define WS_READER_MAX_GROUPS 64

/* Whose permissions a file is opened with. */
struct ws_reader_id {
	uid_t uid; /* the filesystem uid and gid: what the kernel checks an open() against */
	gid_t gid;
	int ngroups;
	gid_t groups[WS_READER_MAX_GROUPS];
};

/* @pid's credentials, from /proc/PID/status. 0, or -errno (-ENOENT: it is gone). */
int ws_reader_id_of(pid_t pid, struct ws_reader_id *id);

/* Parse the text of a /proc/PID/status file (unit-tested). 0 or -EINVAL. */
int ws_reader_id_parse(const char *status, struct ws_reader_id *id);

/* Flags of ws_useropen(). */
/* refuse a symbolic link as the last component */
#define WS_UOPEN_NOFOLLOW 1u
/* the file must belong to the reader's uid or to root (perf's rule for /tmp/perf-PID.map) */
#define WS_UOPEN_OWNED 2u

/* Errors of ws_useropen() besides the open's own (-EACCES, -ENOENT, -ELOOP...). */
#define WS_UOPEN_ENOTREG (-ESPIPE)  /* not a regular file: a FIFO, a device, a socket, a dir */
#define WS_UOPEN_EFUSE (-EXDEV)	    /* on a FUSE filesystem: its daemon could block a read */
#define WS_UOPEN_EOWNER (-EPERM)    /* WS_UOPEN_OWNED and someone else's */
#define WS_UOPEN_ETIME (-ETIMEDOUT) /* the open did not end in time (or too many did not) */

struct ws_useropen;

int ws_useropen_new(struct ws_useropen **out);
/* Ends every helper (they also die with this process). */
void ws_useropen_free(struct ws_useropen *uo);

/* The deadline of one open, 1000 ms unless set (tests shorten it). */
void ws_useropen_set_timeout(struct ws_useropen *uo, int ms);

/*
 * Open @path read-only as @id: a descriptor (O_CLOEXEC) on a regular file, or -errno. With @id
 * NULL (the process's user is not known) it is opened as nobody, and only a file of root's (or
 * nobody's) is taken. When this process is not root, its helper runs as itself: it has no one
 * else's permissions to lend, but a lookup may block all the same. With @uo NULL (no helpers:
 * tests of the layers above) the same rules apply in this process, with no deadline.
 */
int ws_useropen(struct ws_useropen *uo, const struct ws_reader_id *id, const char *path,
		unsigned int flags);

/*
 * Start the helper for @id now if there is none, so that a first open waits for no fork: forked
 * later from a grown reader under load, it took 700 ms, and a Python process whose interpreter
 * was found that late had lost its first waits' frames. 0 or -errno.
 */
int ws_useropen_prepare(struct ws_useropen *uo, const struct ws_reader_id *id);

/* The running helper's pid for @id, 0 when none (for tests). */
pid_t ws_useropen_helper_pid(struct ws_useropen *uo, const struct ws_reader_id *id);

/* Words for a sentence after "symbols unavailable: ", for an error of ws_useropen(). */
const char *ws_useropen_strerror(int err);

#endif
