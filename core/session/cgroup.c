// SPDX-License-Identifier: MIT
/*
 * A cgroup named on the command line by root: its directory is checked to be a cgroup file
 * system's (statfs), read with openat relative to it (no path is built from what a process could
 * rename meanwhile), and the walk of its sub-cgroups is bounded.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "cgroup.h"
#include "base/log.h"

/* linux/magic.h */
#define CGROUP_SUPER_MAGIC 0x27e0eb
#define CGROUP2_SUPER_MAGIC 0x63677270

/* Open @path as a cgroup directory. An fd, or a negative errno having said why. */
static int open_cgroup(const char *path)
{
	struct statfs sf;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0) {
		int err = -errno;

		ws_log(WS_LOG_ERROR,
		       "--cgroup %s: %s; give a cgroup's directory, e.g. /sys/fs/cgroup/system.slice/NAME.service",
		       path, strerror(-err));
		return err;
	}
	if (fstatfs(fd, &sf) ||
	    (sf.f_type != CGROUP_SUPER_MAGIC && sf.f_type != CGROUP2_SUPER_MAGIC)) {
		ws_log(WS_LOG_ERROR,
		       "--cgroup %s: not a directory of a cgroup file system (mounted under /sys/fs/cgroup)",
		       path);
		close(fd);
		return -EINVAL;
	}
	return fd;
}

int ws_cgroup_id(const char *path, uint64_t *id)
{
	struct stat st;
	int fd = open_cgroup(path);

	if (fd < 0)
		return fd;
	if (fstat(fd, &st)) {
		int err = -errno;

		ws_log(WS_LOG_ERROR, "--cgroup %s: %s", path, strerror(-err));
		close(fd);
		return err;
	}
	close(fd);
	*id = st.st_ino;
	return 0;
}

struct walk {
	uint32_t *pids;
	size_t n, cap;
	size_t dirs;
	bool cut; /* past WS_CGROUP_MAX_DIRS */
};

static int add_pid(struct walk *w, uint32_t pid)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->pids[i] == pid)
			return 0; /* v1: a process is in a cgroup of each hierarchy, once here */
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 64;
		uint32_t *p = realloc(w->pids, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		w->pids = p;
		w->cap = cap;
	}
	w->pids[w->n++] = pid;
	return 0;
}

/* The pids in @dirfd's cgroup.procs (a cgroup removed meanwhile has none: not an error). */
static int read_procs(struct walk *w, int dirfd)
{
	int fd = openat(dirfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
	unsigned long pid;
	FILE *f;
	int err = 0;

	if (fd < 0)
		return errno == ENOENT || errno == ENODEV ? 0 : -errno;
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	while (!err && fscanf(f, "%lu", &pid) == 1)
		if (pid && pid <= UINT32_MAX)
			err = add_pid(w, (uint32_t)pid);
	fclose(f);
	return err;
}

/* @dirfd's processes, then its sub-cgroups' (closes @dirfd). */
static int walk_dir(struct walk *w, int dirfd, int depth)
{
	DIR *d;
	struct dirent *e;
	int err;

	if (++w->dirs > WS_CGROUP_MAX_DIRS) {
		w->cut = true;
		close(dirfd);
		return 0;
	}
	if ((err = read_procs(w, dirfd)) || !(d = fdopendir(dirfd))) {
		close(dirfd);
		return err ? err : -ENOMEM;
	}
	while (!err && (e = readdir(d))) {
		int sub;

		if (e->d_type != DT_DIR || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		/* O_NOFOLLOW: a cgroup file system has no links; none is followed */
		sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub >= 0 && depth < 32)
			err = walk_dir(w, sub, depth + 1);
		else if (sub >= 0)
			close(sub);
	}
	closedir(d);
	return err;
}

int ws_cgroup_pids(const char *path, uint32_t **pids, size_t *n)
{
	struct walk w = { 0 };
	int fd = open_cgroup(path), err;

	if (fd < 0)
		return fd;
	err = walk_dir(&w, fd, 0);
	if (err) {
		ws_log(WS_LOG_ERROR, "--cgroup %s: cannot read its processes: %s", path,
		       strerror(-err));
		free(w.pids);
		return err;
	}
	if (w.cut)
		ws_log(WS_LOG_WARN,
		       "--cgroup %s: more than %d cgroups under it; the processes of the rest are traced only when they start or join one",
		       path, WS_CGROUP_MAX_DIRS);
	*pids = w.pids;
	*n = w.n;
	return 0;
}

/* One line of /proc/PID/cgroup, "ID:CONTROLLERS:PATH" (NUL-terminated, no newline). */
static void cgroup_line(char *line, char *path, size_t len, bool *v1, bool *found_v1)
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
		if (!strcmp(tok, "cpu")) {
			snprintf(path, len, "%s", p);
			*v1 = *found_v1 = true;
		}
}

int ws_cgroup_of_thread(uint32_t pid, uint32_t tid, char *path, size_t len, bool *v1)
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
		cgroup_line(line, path, len, v1, &found_v1);
	}
	return *path ? 0 : -ENOENT;
}
