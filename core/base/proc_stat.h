/* SPDX-License-Identifier: MIT */
/*
 * A /proc/PID[/task/TID]/stat line, "TID (COMM) S PPID ...": its comm may hold spaces and ')',
 * so the fields start after the last ')'. One parser for every reader of such lines.
 */
#ifndef WHYSLOW_BASE_PROC_STAT_H
#define WHYSLOW_BASE_PROC_STAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The fields after the comm ("S PPID ...", the state first), or NULL for a malformed line. */
const char *ws_proc_stat_fields(const char *line);

/* The comm into @comm (cut to @len); 0, or -EINVAL for a malformed line. */
int ws_proc_stat_comm(const char *line, char *comm, size_t len);

/*
 * Reads the stat file @path (a line fits in @len, nul-terminated) into @buf: its fields after
 * the comm, or NULL when it cannot be read (the task is gone) or is malformed.
 */
const char *ws_proc_stat_read(const char *path, char *buf, size_t len);

/*
 * Process @pid's parent and whether it is a kernel thread (PF_KTHREAD in its stat's flags):
 * 0, or -ESRCH when it has gone (or its line is malformed).
 */
int ws_proc_stat_of(uint32_t pid, uint32_t *ppid, bool *kthread);

/*
 * The processes in /proc (whyslow's own left out) that @keep keeps, in a malloc'd array:
 * 0, or -errno (/proc unreadable, -ENOMEM; nothing allocated then).
 */
int ws_proc_pids(bool (*keep)(uint32_t pid, void *ctx), void *ctx, uint32_t **pids, size_t *n);

#endif
