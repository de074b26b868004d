// SPDX-License-Identifier: MIT
/* The spool of dumps: see spool.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* renameat2, mkostemp */
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "spool.h"

/* what a dump may never leave free on the spool's file system: this fraction of it */
#define RESERVE_DIV 20

/* Temporary files of watches that died while writing (their pid runs no more): not dumps. */
static void remove_stale(struct ws_spool *sp)
{
	int fd = dup(sp->dirfd);
	struct dirent *e;
	DIR *d;

	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d))) {
		long pid;

		if (sscanf(e->d_name, ".tmp-%ld-", &pid) == 1 && pid > 0 && kill((pid_t)pid, 0) &&
		    errno == ESRCH)
			unlinkat(sp->dirfd, e->d_name, 0);
	}
	closedir(d);
}

int ws_spool_open(struct ws_spool *sp, const char *dir, uint64_t quota_bytes, char *why,
		  size_t whylen)
{
	struct stat st;
	int err;

	memset(sp, 0, sizeof(*sp));
	sp->dirfd = -1;
	if (mkdir(dir, 0700) && errno != EEXIST) {
		err = -errno;
		snprintf(why, whylen, "cannot make it: %s", strerror(errno));
		return err;
	}
	/* O_NOFOLLOW: a link put there is refused, never followed to where it points */
	sp->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sp->dirfd < 0) {
		err = -errno;
		snprintf(
			why, whylen, "%s",
			errno == ELOOP || errno == ENOTDIR
				? "not a directory (a symbolic link is refused): give a directory of your own"
				: strerror(errno));
		return err;
	}
	if (fstat(sp->dirfd, &st) || st.st_uid != geteuid() || (st.st_mode & 022)) {
		snprintf(
			why, whylen,
			"owned by another user, or group or others can write it: give a directory of your own");
		close(sp->dirfd);
		sp->dirfd = -1;
		return -EPERM;
	}
	sp->dir = dir;
	sp->quota_bytes = quota_bytes;
	remove_stale(sp);
	return 0;
}

void ws_spool_close(struct ws_spool *sp)
{
	if (sp->dirfd >= 0)
		close(sp->dirfd);
	sp->dirfd = -1;
}

static bool is_dump(const char *name)
{
	size_t n = strlen(name), pl = strlen(WS_SPOOL_PREFIX), sl = strlen(WS_SPOOL_SUFFIX);

	return n > pl + sl && !strncmp(name, WS_SPOOL_PREFIX, pl) &&
	       !strcmp(name + n - sl, WS_SPOOL_SUFFIX);
}

/* The dumps of the spool, oldest first (by modification time, then name). */
struct dump {
	char name[256];
	uint64_t bytes; /* with its sidecar */
	struct timespec mtime;
};

static int by_age(const void *a, const void *b)
{
	const struct dump *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	return strcmp(x->name, y->name);
}

static uint64_t size_at(int dirfd, const char *name)
{
	struct stat st;

	return !fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode) ? st.st_size
										      : 0;
}

static int list_dumps(struct ws_spool *sp, struct dump **out, size_t *n)
{
	int fd = dup(sp->dirfd);
	size_t cap = 0;
	struct dirent *e;
	DIR *d;

	*out = NULL;
	*n = 0;
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	rewinddir(d);
	while ((e = readdir(d))) {
		struct stat st;
		char side[300];

		if (!is_dump(e->d_name) || strlen(e->d_name) >= sizeof((*out)->name) ||
		    fstatat(sp->dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (*n == cap) {
			struct dump *g = realloc(*out, (cap = cap ? 2 * cap : 16) * sizeof(**out));

			if (!g) {
				closedir(d);
				return -ENOMEM;
			}
			*out = g;
		}
		snprintf((*out)[*n].name, sizeof((*out)[*n].name), "%s", e->d_name);
		snprintf(side, sizeof(side), "%s%s", e->d_name, WS_SPOOL_SIDECAR);
		(*out)[*n].bytes = st.st_size + size_at(sp->dirfd, side);
		(*out)[*n].mtime = st.st_mtim;
		(*n)++;
	}
	closedir(d);
	if (*n) /* an empty spool has no array (qsort's base must not be NULL) */
		qsort(*out, *n, sizeof(**out), by_age);
	return 0;
}

uint64_t ws_spool_usage(struct ws_spool *sp)
{
	struct dump *v;
	uint64_t total = 0;
	size_t n;

	if (list_dumps(sp, &v, &n))
		return 0;
	for (size_t i = 0; i < n; i++)
		total += v[i].bytes;
	free(v);
	return total;
}

static void remove_dump(struct ws_spool *sp, const char *name)
{
	char side[300];

	snprintf(side, sizeof(side), "%s%s", name, WS_SPOOL_SIDECAR);
	unlinkat(sp->dirfd, side, 0);
	unlinkat(sp->dirfd, name, 0);
}

int ws_spool_trim(struct ws_spool *sp, const char *keep)
{
	struct dump *v;
	uint64_t total = 0;
	size_t n;
	int err = list_dumps(sp, &v, &n), removed = 0;

	if (err)
		return err;
	for (size_t i = 0; i < n; i++)
		total += v[i].bytes;
	/* the oldest first; the one just written last of all */
	for (int pass = 0; pass < 2 && total > sp->quota_bytes; pass++)
		for (size_t i = 0; i < n && total > sp->quota_bytes; i++) {
			if (!v[i].bytes || (pass == 0) != !!strcmp(v[i].name, keep))
				continue;
			remove_dump(sp, v[i].name);
			total -= v[i].bytes;
			v[i].bytes = 0;
			removed++;
		}
	free(v);
	return removed;
}

int ws_spool_begin(struct ws_spool *sp, uint64_t need, struct ws_spool_file *out)
{
	struct statvfs vfs;
	uint64_t avail, reserve;
	int fd;

	memset(out, 0, sizeof(*out));
	if (fstatvfs(sp->dirfd, &vfs))
		return -errno;
	avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
	reserve = (uint64_t)vfs.f_blocks * vfs.f_frsize / RESERVE_DIV;
	if (avail < reserve || avail - reserve < need)
		return -ENOSPC;
	snprintf(out->tmp, sizeof(out->tmp), ".tmp-%d-%u", (int)getpid(), sp->seq);
	/* O_EXCL: a name already there (whoever made it) is never opened, let alone truncated */
	fd = openat(sp->dirfd, out->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	if (fd < 0)
		return -errno;
	out->f = fdopen(fd, "w");
	if (!out->f) {
		int err = -errno;

		close(fd);
		unlinkat(sp->dirfd, out->tmp, 0);
		return err;
	}
	return 0;
}

void ws_spool_abort(struct ws_spool *sp, struct ws_spool_file *sf)
{
	if (sf->f)
		fclose(sf->f);
	sf->f = NULL;
	unlinkat(sp->dirfd, sf->tmp, 0);
}

int ws_spool_commit(struct ws_spool *sp, struct ws_spool_file *sf, const char *name)
{
	int err = 0;

	if (fflush(sf->f) || fsync(fileno(sf->f)))
		err = -errno;
	if (fclose(sf->f) && !err)
		err = -errno;
	sf->f = NULL;
	/* RENAME_NOREPLACE: a name someone else put there stays theirs */
	if (!err && renameat2(sp->dirfd, sf->tmp, sp->dirfd, name, RENAME_NOREPLACE))
		err = -errno;
	if (err)
		unlinkat(sp->dirfd, sf->tmp, 0);
	return err;
}

void ws_spool_name(struct ws_spool *sp, char *buf, size_t len)
{
	time_t now = time(NULL);
	struct tm tm;
	char when[32] = "";

	if (gmtime_r(&now, &tm))
		strftime(when, sizeof(when), "%Y%m%dT%H%M%SZ", &tm);
	snprintf(buf, len, "%s%s-%d-%04u%s", WS_SPOOL_PREFIX, when, (int)getpid(), sp->seq++,
		 WS_SPOOL_SUFFIX);
}
