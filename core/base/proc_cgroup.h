/* SPDX-License-Identifier: MIT */
/*
 * A thread's cgroup as /proc shows it: what the session names threads with (session_cgroups.c)
 * and what a snapshot of a stuck thread carries (hang/procsnap.c).
 */
#ifndef WS_PROC_CGROUP_H
#define WS_PROC_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Thread @tid of @pid's cgroup in the hierarchy that has the cpu controller, from
 * /proc/PID/task/TID/cgroup (read whole, at most 16 KiB; a line cut there is not used): cgroup
 * v1's line naming the cpu controller, else v2's unified "0::" line; *@v1 says which. The path
 * is as the file gives it, relative to the hierarchy's root ("/system.slice/x.service"); a
 * container's holds its runtime's id. 0, or -ENOENT when the thread is gone, exiting (a zombie's
 * file names the root group) or has no such line (nothing printed: a thread may exit at any
 * time).
 */
int ws_cgroup_of_thread(uint32_t pid, uint32_t tid, char *path, size_t len, bool *v1);
/* The same in the hierarchy of controller @ctrl ("memory"): its v1 line, else v2's. */
int ws_cgroup_of_thread_in(uint32_t pid, uint32_t tid, const char *ctrl, char *path, size_t len,
			   bool *v1);

/*
 * @path (as ws_cgroup_of_thread() gives it) into @out of @len bytes: whole when it fits, else
 * its end after "...", which names the group itself (and a container's id).
 */
void ws_cgroup_path_fit(const char *path, char *out, size_t len);

#endif
