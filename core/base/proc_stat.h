/* SPDX-License-Identifier: MIT */
/*
 * A /proc/PID[/task/TID]/stat line, "TID (COMM) S PPID ...": its comm may hold spaces and ')',
 * so the fields start after the last ')'. One parser for every reader of such lines.
 */
#ifndef WHYSLOW_BASE_PROC_STAT_H
#define WHYSLOW_BASE_PROC_STAT_H

#include <stddef.h>

/* The fields after the comm ("S PPID ...", the state first), or NULL for a malformed line. */
const char *ws_proc_stat_fields(const char *line);

/* The comm into @comm (cut to @len); 0, or -EINVAL for a malformed line. */
int ws_proc_stat_comm(const char *line, char *comm, size_t len);

/*
 * Reads the stat file @path (a line fits in @len, nul-terminated) into @buf: its fields after
 * the comm, or NULL when it cannot be read (the task is gone) or is malformed.
 */
const char *ws_proc_stat_read(const char *path, char *buf, size_t len);

#endif
