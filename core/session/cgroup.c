// SPDX-License-Identifier: MIT
/*
 * A cgroup named on the command line by root: its directory is checked to be a cgroup file
 * system's (statfs), read with openat relative to it (no path is built from what a process could
 * rename meanwhile), and the walk of its sub-cgroups is bounded.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* O_PATH */
#endif
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

int ws_cgroup_mounts(char *v1, size_t len1, char *v2, size_t len2)
{
	return ws_cgroup_mounts_of("cpu", v1, len1, v2, len2);
}

int ws_cgroup_mounts_of(const char *ctrl, char *v1, size_t len1, char *v2, size_t len2)
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
			if (!strcmp(tok, ctrl))
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
