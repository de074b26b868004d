// SPDX-License-Identifier: MIT
/*
 * /proc/PID/task/TID/cgroup, read whole and bounded; its lines are written by the kernel, its
 * paths named by whoever made the cgroups (a container runtime, a delegated user): taken as
 * text, never followed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "proc_cgroup.h"
#include "proc_stat.h"

/* One line of /proc/PID/cgroup, "ID:CONTROLLERS:PATH" (NUL-terminated, no newline). */
static void cgroup_line(char *line, const char *ctrl_name, char *path, size_t len, bool *v1,
			bool *found_v1)
{
	char *ctrl = strchr(line, ':'), *p = ctrl ? strchr(ctrl + 1, ':') : NULL;
	char *tok, *save;

	if (!p)
		return;
	*p++ = 0;
	if (!ctrl[1] && !*path && !*found_v1) {
		snprintf(path, len, "%s", p); /* v2: "0::/path" */
		*v1 = false;
	}
	for (tok = strtok_r(ctrl + 1, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (!strcmp(tok, ctrl_name)) {
			snprintf(path, len, "%s", p);
			*v1 = *found_v1 = true;
		}
}

/* Is thread @tid of @pid alive (not a zombie, not dead) now? Its /proc/.../stat state. */
static bool thread_alive(uint32_t pid, uint32_t tid)
{
	char name[64], buf[1024];
	const char *f;

	snprintf(name, sizeof(name), "/proc/%u/task/%u/stat", pid, tid);
	f = ws_proc_stat_read(name, buf, sizeof(buf));
	return f && !strchr("ZXx", f[0]);
}

int ws_cgroup_of_thread(uint32_t pid, uint32_t tid, char *path, size_t len, bool *v1)
{
	return ws_cgroup_of_thread_in(pid, tid, "cpu", path, len, v1);
}

int ws_cgroup_of_thread_in(uint32_t pid, uint32_t tid, const char *ctrl, char *path, size_t len,
			   bool *v1)
{
	char name[64], buf[16384], *line, *nl;
	bool found_v1 = false;
	ssize_t n, got = 0;
	int fd;

	snprintf(name, sizeof(name), "/proc/%u/task/%u/cgroup", pid, tid);
	if ((fd = open(name, O_RDONLY | O_CLOEXEC)) < 0)
		return -ENOENT;
	while (got < (ssize_t)sizeof(buf) - 1 &&
	       (n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
		got += n;
	close(fd);
	buf[got] = 0;
	*path = 0;
	/* whole lines only: a path cut at the buffer's end is not a path */
	for (line = buf; (nl = strchr(line, '\n')); line = nl + 1) {
		*nl = 0;
		cgroup_line(line, ctrl, path, len, v1, &found_v1);
	}
	/*
	 * an exiting thread's file names the root group (seen on 6.18: a child read after its exit
	 * was in "/"): alive after the read, it was alive during it
	 */
	return *path && thread_alive(pid, tid) ? 0 : -ENOENT;
}

void ws_cgroup_path_fit(const char *path, char *out, size_t len)
{
	size_t n = strlen(path);

	if (!len)
		return;
	if (n < len || len < 8)
		snprintf(out, len, "%s", path);
	else
		snprintf(out, len, "...%s", path + n - (len - 4));
}
