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

/*
 * Is thread @tid of @pid alive (not a zombie, not dead) now? Its /proc/.../stat state, read
 * after the end of its comm (the last ')': a comm may hold one).
 */
static bool thread_alive(uint32_t pid, uint32_t tid)
{
	char name[64], buf[1024], *p;
	ssize_t n;
	int fd;

	snprintf(name, sizeof(name), "/proc/%u/task/%u/stat", pid, tid);
	if ((fd = open(name, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] && !strchr("ZXx", p[2]);
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
	/*
	 * an exiting thread's file names the root group (seen on 6.18: a child read after its exit
	 * was in "/"): alive after the read, it was alive during it
	 */
	return *path && thread_alive(pid, tid) ? 0 : -ENOENT;
}

int ws_cgroup_mounts(char *v1, size_t len1, char *v2, size_t len2)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[1024];

	*v1 = *v2 = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char mnt[512], fstype[64], opts[512];
		const char *sep = strstr(line, " - ");
		char *tok, *save;

		if (!sep || sscanf(line, "%*s %*s %*s %*s %511s", mnt) != 1 ||
		    sscanf(sep + 3, "%63s %*s %511s", fstype, opts) != 2)
			continue;
		if (!strcmp(fstype, "cgroup2") && !*v2)
			snprintf(v2, len2, "%s", mnt);
		if (strcmp(fstype, "cgroup"))
			continue;
		for (tok = strtok_r(opts, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
			if (!strcmp(tok, "cpu"))
				snprintf(v1, len1, "%s", mnt);
	}
	fclose(f);
	return 0;
}

int ws_cgroup_dir_id(const char *mount, const char *path, uint64_t *id)
{
	char dir[8192];
	struct statfs sf;
	struct stat st;
	int fd, n;

	n = snprintf(dir, sizeof(dir), "%s%s", mount, strcmp(path, "/") ? path : "");
	if (n < 0 || (size_t)n >= sizeof(dir))
		return -ENAMETOOLONG;
	/* a cgroup file system has no links; none is followed, and nothing else is looked at */
	fd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstatfs(fd, &sf) ||
	    (sf.f_type != CGROUP_SUPER_MAGIC && sf.f_type != CGROUP2_SUPER_MAGIC) ||
	    fstat(fd, &st)) {
		close(fd);
		return -ENOENT;
	}
	close(fd);
	*id = st.st_ino;
	return 0;
}
