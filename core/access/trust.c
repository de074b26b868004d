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
	char shown[PATH_MAX];	 /* what has been resolved so far, for messages */
	char rest[2 * PATH_MAX]; /* what is left to resolve, cut in place as it goes */
	char *p;		 /* where in rest the next component starts */
	int dfd;		 /* O_PATH descriptor of the directory checked so far */
	struct stat dst;	 /* and its stat, as checked */
	int links;		 /* symbolic links followed so far */
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

/* The path, made absolute, into w->rest. */
static int full_path(struct walk *w, const char *path)
{
	if (path[0] == '/') {
		snprintf(w->rest, sizeof(w->rest), "%s", path);
	} else {
		/* relative: the working directory and everything above it count too */
		if (!getcwd(w->rest, PATH_MAX))
			return fail_errno(w, errno);
		if (strlen(w->rest) + strlen(path) + 2 > sizeof(w->rest))
			return fail_errno(w, ENAMETOOLONG);
		strcat(w->rest, "/");
		strcat(w->rest, path);
	}
	return 0;
}

/*
 * Cut the next component out of *p in place and step past it and its slashes: NULL when none
 * is left; *last says whether it was the final one.
 */
static char *next_component(char **p, size_t *len, bool *last)
{
	char *comp;

	while (**p == '/')
		(*p)++;
	if (!**p)
		return NULL;
	comp = *p;
	*len = strcspn(*p, "/");
	*p += *len;
	if (**p)
		*(*p)++ = 0;
	while (**p == '/')
		(*p)++;
	*last = !**p;
	return comp;
}

/*
 * The link at @fd (stat @st, in the checked directory w->dst): once it is found trusted, the
 * walk goes on along its target followed by what was left, from / again if the target is
 * absolute. Closes @fd.
 */
static int follow_link(struct walk *w, int fd, const struct stat *st)
{
	char tmp[2 * PATH_MAX], target[PATH_MAX];
	ssize_t n;
	int rc;

	if (++w->links > MAX_LINKS) {
		close(fd);
		return fail_errno(w, ELOOP);
	}
	if ((rc = check_link(w, st, &w->dst))) {
		close(fd);
		return rc;
	}
	n = readlinkat(fd, "", target, sizeof(target) - 1);
	close(fd);
	if (n <= 0)
		return fail_errno(w, n < 0 ? errno : ENOENT);
	target[n] = 0;
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/%s", target, w->p) >= sizeof(tmp))
		return fail_errno(w, ENAMETOOLONG);
	memcpy(w->rest, tmp, sizeof(w->rest));
	w->p = w->rest;
	/* the shown path drops the link's name: messages name what was checked */
	*strrchr(w->shown, '/') = 0;
	if (target[0] == '/' && (rc = open_root(w, &w->dfd)))
		return rc;
	if (target[0] == '/' && fstat(w->dfd, &w->dst))
		return fail_errno(w, errno);
	return 0;
}

/*
 * Resolve w->rest from w->dfd one component at a time, never following a link the kernel
 * would resolve unchecked (O_NOFOLLOW), each node checked before it is used; the last one is
 * reopened as @kind. Returns that descriptor or a negative errno; w->dfd stays the caller's to
 * close.
 */
static int walk_components(struct walk *w, enum ws_trust_kind kind)
{
	struct stat st;
	int rc;

	w->p = w->rest;
	for (;;) {
		size_t len;
		char *comp;
		bool last;
		int fd;

		comp = next_component(&w->p, &len, &last);
		if (!comp) /* the path named a directory ("/", "dir/.") */
			break;
		if (!strcmp(comp, ".")) {
			if (!last)
				continue;
			break;
		}
		fd = openat(w->dfd, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st)) {
			rc = fail_errno(w, errno);
			if (fd >= 0)
				close(fd);
			return rc;
		}
		shown_add(w, comp, len);
		if (S_ISLNK(st.st_mode)) {
			if ((rc = follow_link(w, fd, &st)))
				return rc;
			continue;
		}
		if ((rc = check_node(w, &st))) {
			close(fd);
			return rc;
		}
		if (last) {
			rc = reopen(w, fd, &st, kind);
			close(fd);
			return rc;
		}
		if (!S_ISDIR(st.st_mode)) {
			close(fd);
			return fail_errno(w, ENOTDIR);
		}
		close(w->dfd);
		w->dfd = fd;
		w->dst = st;
	}
	return reopen(w, w->dfd, &w->dst, kind);
}

int ws_trusted_open(const char *path, enum ws_trust_kind kind, char *err, size_t errlen)
{
	struct walk w = { .path = path, .err = err, .errlen = errlen, .dfd = -1 };
	int rc;

	err[0] = 0;
	if (!path || !*path)
		return fail_errno(&w, ENOENT);
	if ((rc = full_path(&w, path)))
		return rc;
	if ((rc = open_root(&w, &w.dfd)))
		return rc;
	if (fstat(w.dfd, &w.dst))
		rc = fail_errno(&w, errno);
	else
		rc = walk_components(&w, kind);
	close(w.dfd);
	return rc;
}
