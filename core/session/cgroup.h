/* SPDX-License-Identifier: MIT */
/*
 * attach --cgroup PATH: the processes of a cgroup (v1 or v2) and of its sub-cgroups, and the id
 * the kernel side follows joiners by (ctx.bpf.c's ws_follow_cgroup).
 */
#ifndef WS_CGROUP_H
#define WS_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/proc_cgroup.h"

/*
 * @path must be a directory of a cgroup file system; *@id is its cgroup id (the kernfs inode
 * number, what the kernel's cgroup->kn->id holds). 0, or a negative errno having said why.
 */
int ws_cgroup_id(const char *path, uint64_t *id);

/*
 * The processes in @path and in its sub-cgroups (at most WS_CGROUP_MAX_DIRS directories, each
 * cgroup.procs read whole), malloc'd into *@pids (*@n of them, duplicates removed). 0, or a
 * negative errno having said why.
 */
#define WS_CGROUP_MAX_DIRS 4096
int ws_cgroup_pids(const char *path, uint32_t **pids, size_t *n);

/*
 * The mount points of the cgroup hierarchies whyslow names paths in, from /proc/self/mountinfo:
 * v1's with the cpu controller (a "cgroup" mount, option cpu) and v2's ("cgroup2"); "" when
 * none. 0, or -1 when mountinfo cannot be read.
 */
int ws_cgroup_mounts(char *v1, size_t len1, char *v2, size_t len2);
/* The same for controller @ctrl ("memory") instead of cpu. */
int ws_cgroup_mounts_of(const char *ctrl, char *v1, size_t len1, char *v2, size_t len2);

/*
 * The id of cgroup @path (as ws_cgroup_of_thread() gives it) of the hierarchy mounted at
 * @mount: its directory's inode number, what the kernel's cgroup->kn->id holds. Opened without
 * following a link and checked to be a cgroup file system's. 0 or a negative errno (silent).
 */
int ws_cgroup_dir_id(const char *mount, const char *path, uint64_t *id);

#endif
