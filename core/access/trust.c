// SPDX-License-Identifier: MIT
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* O_PATH */
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trust.h"

/* as the kernel's own limit on links followed in one lookup */
#define MAX_LINKS 40

struct walk {
	const char *path; /* as the caller named it, for messages */
	char *err;
	size_t errlen;
	char shown[PATH_MAX]; /* what has been resolved so far, for messages */
};

static bool owner_ok(const struct stat *st)
{
	return st->st_uid == 0 || st->st_uid == geteuid();
}

/* A directory or file on the way: owner, then group/other write (sticky dirs excepted). */
static int check_node(struct walk *w, const struct stat *st)
{
	const char *at = w->shown[0] ? w->shown : "/";

	if (!owner_ok(st)) {
		snprintf(
			w->err, w->errlen,
			"%s: refused: %s is owned by uid %u, not root; chown root it or use a root-owned directory",
			w->path, at, (unsigned)st->st_uid);
		return -EPERM;
	}
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) &&
	    !(S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX))) {
		snprintf(w->err, w->errlen,
			 "%s: refused: %s is writable by group or others; run chmod go-w on it",
			 w->path, at);
		return -EPERM;
	}
	return 0;
}

/*
 * A symbolic link is only as good as whoever can replace it: its owner and
 * anyone who can write its directory (sticky or not: the owner of a link in
 * /tmp is who counts, and that check is the owner one).
 */
static int check_link(struct walk *w, const struct stat *link, const struct stat *dir)
{
	if (!owner_ok(link) || !owner_ok(dir) || (dir->st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(
			w->err, w->errlen,
			"%s: refused: %s is a symbolic link that uid %u %s; name its target instead",
			w->path, w->shown, (unsigned)(owner_ok(link) ? dir->st_uid : link->st_uid),
			owner_ok(link) ? "(or group/others) can replace" : "owns");
		return -EPERM;
	}
	return 0;
}

static int fail_errno(struct walk *w, int e)
{
	snprintf(w->err, w->errlen, "%s: %s", w->path, strerror(e));
	return -e;
}

static void shown_add(struct walk *w, const char *comp, size_t len)
{
	size_t n = strlen(w->shown);

	snprintf(w->shown + n, sizeof(w->shown) - n, "/%.*s", (int)len, comp);
}

static int open_root(struct walk *w, int *dfd)
{
	struct stat st;
	int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return fail_errno(w, errno);
	w->shown[0] = 0;
	if (fstat(fd, &st) || check_node(w, &st)) {
		int e = errno;

		close(fd);
		return w->err[0] ? -EPERM : fail_errno(w, e);
	}
	if (*dfd >= 0)
		close(*dfd);
	*dfd = fd;
	return 0;
}

/* Re-open the checked O_PATH descriptor for reading, as the kind the caller wants. */
static int reopen(struct walk *w, int fd, const struct stat *checked, enum ws_trust_kind kind)
{
	struct stat st;
	int r;

	if (kind == WS_TRUST_DIR && !S_ISDIR(checked->st_mode))
		return fail_errno(w, ENOTDIR);
	if (kind == WS_TRUST_FILE && S_ISDIR(checked->st_mode))
		return fail_errno(w, EISDIR);
	if (kind == WS_TRUST_FILE && !S_ISREG(checked->st_mode)) {
		snprintf(w->err, w->errlen, "%s: refused: not a regular file", w->path);
		return -EINVAL;
	}
	/* the magic link names the very inode checked, whatever the path names now */
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	r = open(proc, O_RDONLY | O_CLOEXEC | (kind == WS_TRUST_DIR ? O_DIRECTORY : 0));
	if (r < 0)
		return fail_errno(w, errno);
	if (fstat(r, &st) || st.st_dev != checked->st_dev || st.st_ino != checked->st_ino) {
		close(r);
		snprintf(w->err, w->errlen, "%s: refused: it changed while being checked", w->path);
		return -EAGAIN;
	}
	return r;
}

int ws_trusted_open(const char *path, enum ws_trust_kind kind, char *err, size_t errlen)
{
	struct walk w = { .path = path, .err = err, .errlen = errlen };
	char rest[2 * PATH_MAX], tmp[2 * PATH_MAX], target[PATH_MAX];
	int dfd = -1, links = 0, rc;
	struct stat dst, st;
	char *p;

	err[0] = 0;
	if (!path || !*path)
		return fail_errno(&w, ENOENT);
	if (path[0] == '/') {
		snprintf(rest, sizeof(rest), "%s", path);
	} else {
		/* relative: the working directory and everything above it count too */
		if (!getcwd(rest, PATH_MAX))
			return fail_errno(&w, errno);
		if (strlen(rest) + strlen(path) + 2 > sizeof(rest))
			return fail_errno(&w, ENAMETOOLONG);
		strcat(rest, "/");
		strcat(rest, path);
	}
	if ((rc = open_root(&w, &dfd)))
		return rc;
	if (fstat(dfd, &dst)) {
		rc = fail_errno(&w, errno);
		goto out;
	}
	p = rest;
	for (;;) {
		size_t len;
		char *comp;
		bool last;
		int fd;

		while (*p == '/')
			p++;
		if (!*p) /* the path named a directory ("/", "dir/.") */
			break;
		comp = p;
		len = strcspn(p, "/");
		p += len;
		if (*p)
			*p++ = 0;
		while (*p == '/')
			p++;
		last = !*p;
		if (!strcmp(comp, ".")) {
			if (!last)
				continue;
			break;
		}
		fd = openat(dfd, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st)) {
			rc = fail_errno(&w, errno);
			if (fd >= 0)
				close(fd);
			goto out;
		}
		shown_add(&w, comp, len);
		if (S_ISLNK(st.st_mode)) {
			ssize_t n;

			if (++links > MAX_LINKS) {
				close(fd);
				rc = fail_errno(&w, ELOOP);
				goto out;
			}
			if ((rc = check_link(&w, &st, &dst))) {
				close(fd);
				goto out;
			}
			n = readlinkat(fd, "", target, sizeof(target) - 1);
			close(fd);
			if (n <= 0) {
				rc = fail_errno(&w, n < 0 ? errno : ENOENT);
				goto out;
			}
			target[n] = 0;
			if ((size_t)snprintf(tmp, sizeof(tmp), "%s/%s", target, p) >= sizeof(tmp)) {
				rc = fail_errno(&w, ENAMETOOLONG);
				goto out;
			}
			memcpy(rest, tmp, sizeof(rest));
			p = rest;
			/* the shown path drops the link's name: messages name what was checked */
			*strrchr(w.shown, '/') = 0;
			if (target[0] == '/' && (rc = open_root(&w, &dfd)))
				goto out;
			if (target[0] == '/' && fstat(dfd, &dst)) {
				rc = fail_errno(&w, errno);
				goto out;
			}
			continue;
		}
		if ((rc = check_node(&w, &st))) {
			close(fd);
			goto out;
		}
		if (last) {
			rc = reopen(&w, fd, &st, kind);
			close(fd);
			goto out;
		}
		if (!S_ISDIR(st.st_mode)) {
			close(fd);
			rc = fail_errno(&w, ENOTDIR);
			goto out;
		}
		close(dfd);
		dfd = fd;
		dst = st;
	}
	rc = reopen(&w, dfd, &dst, kind);
out:
	close(dfd);
	return rc;
}
