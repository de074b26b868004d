// SPDX-License-Identifier: MIT
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* O_PATH, fopencookie, renameat2 */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"
#include "invoker.h"
#include "base/log.h"

/* as the kernel's own limit on links followed in one lookup */
#define MAX_LINKS 40

/*
 * The descriptor behind an output stream. stdio forgets why a write failed
 * (after a failed write the buffer is dropped, the next fflush succeeds and
 * only ferror() is left), so the first errno is kept here.
 */
struct ws_outfile_sink {
	int fd;
	int err; /* errno of the first failed write or close; 0 */
};

static int say(const char *path, int err, const char *why)
{
	ws_log(WS_LOG_ERROR, "cannot write %s: %s; choose another output path", path,
	       why ? why : strerror(err));
	return -err;
}

static bool std_closed[3];

void ws_outfile_guard_std(void)
{
	for (int fd = 0; fd < 3; fd++) {
		if (fcntl(fd, F_GETFD) >= 0)
			continue;
		std_closed[fd] = true;
		/* the lowest free number: this fills @fd (or, failing that, nothing) */
		int nul = open("/dev/null", O_RDWR);

		if (nul >= 0 && nul != fd)
			close(nul);
	}
}

/* whyslow's own stdout or stderr: checked open, so a closed one is an error, not silence */
static int open_std(struct ws_outfile *o, int fd)
{
	o->std = true;
	if (std_closed[fd] || fcntl(fd, F_GETFD) < 0) {
		ws_log(WS_LOG_ERROR, "standard %s is closed; give -o FILE",
		       fd == 1 ? "output" : "error");
		return -EBADF;
	}
	o->f = fd == 1 ? stdout : stderr;
	return 0;
}

static ssize_t sink_write(void *cookie, const char *buf, size_t n)
{
	struct ws_outfile_sink *k = cookie;
	size_t done = 0;

	while (done < n) {
		ssize_t w = write(k->fd, buf + done, n - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (!k->err)
				k->err = w < 0 ? errno : EIO;
			errno = k->err;
			break; /* short: stdio sets the stream's error flag */
		}
		done += w;
	}
	return done;
}

static int sink_close(void *cookie)
{
	struct ws_outfile_sink *k = cookie;

	if (close(k->fd) && errno != EINTR && !k->err)
		k->err = errno;
	k->fd = -1;
	return k->err ? -1 : 0;
}

/*
 * The stream for @o->fd: through a sink that keeps the first errno. A
 * terminal keeps a plain stream, so the report still sees it is one (colour).
 */
static int open_stream(struct ws_outfile *o)
{
	static const cookie_io_functions_t io = { .write = sink_write, .close = sink_close };

	if (isatty(o->fd)) {
		o->f = fdopen(o->fd, "we");
		return o->f ? 0 : -errno;
	}
	o->sink = calloc(1, sizeof(*o->sink));
	if (!o->sink)
		return -ENOMEM;
	o->sink->fd = o->fd;
	o->f = fopencookie(o->sink, "w", io);
	if (o->f)
		return 0;
	free(o->sink);
	o->sink = NULL;
	return -ENOMEM;
}

/* Root, whyslow's own user, and under sudo the user it works for: whose links are trusted. */
static bool trusted_owner(uid_t uid, const struct ws_invoker *inv)
{
	return uid == 0 || uid == geteuid() || (inv->sudo && uid == inv->uid);
}

static void shown_add(char *shown, size_t size, const char *comp)
{
	size_t n = strlen(shown);

	/* for messages only: a name past PATH_MAX is cut short */
	snprintf(shown + n, size - n, "%s%.*s", n && shown[n - 1] != '/' ? "/" : "",
		 (int)(size - n > 2 ? size - n - 2 : 0), comp);
}

/*
 * The directory @dir of output @path, opened one component at a time with
 * O_NOFOLLOW|O_PATH: a symbolic link on the way is followed only if its owner
 * and the owner of the directory holding it are trusted_owner() and that
 * directory is not writable by group or others (sticky or not: in /tmp anyone
 * may have made it). Anything else could be pointed elsewhere by someone else
 * while root writes. An O_PATH descriptor, or -errno having said why.
 */
static int open_dir(const char *path, const char *dir, const struct ws_invoker *inv)
{
	char rest[2 * PATH_MAX], tmp[2 * PATH_MAX], target[PATH_MAX], shown[PATH_MAX];
	int dfd, links = 0, err;
	struct stat dst, st;
	char *p = rest;

	snprintf(rest, sizeof(rest), "%s", dir);
	snprintf(shown, sizeof(shown), "%s", dir[0] == '/' ? "/" : "");
	dfd = open(dir[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &dst)) {
		err = errno;
		goto fail_errno;
	}
	for (;;) {
		char *comp, *cut;
		ssize_t n;
		int fd;

		while (*p == '/')
			p++;
		if (!*p)
			return dfd;
		comp = p;
		p += strcspn(p, "/");
		if (*p)
			*p++ = 0;
		fd = openat(dfd, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st)) {
			err = errno;
			if (fd >= 0)
				close(fd);
			goto fail_errno;
		}
		shown_add(shown, sizeof(shown), comp);
		if (S_ISDIR(st.st_mode)) {
			close(dfd);
			dfd = fd;
			dst = st;
			continue;
		}
		if (!S_ISLNK(st.st_mode)) {
			close(fd);
			err = ENOTDIR;
			goto fail_errno;
		}
		if (!trusted_owner(st.st_uid, inv)) {
			ws_log(WS_LOG_ERROR,
			       "refusing to write %s: %s is a symbolic link owned by uid %u; name its target instead",
			       path, shown, (unsigned)st.st_uid);
			close(fd);
			close(dfd);
			return -ELOOP;
		}
		if (!trusted_owner(dst.st_uid, inv) || (dst.st_mode & (S_IWGRP | S_IWOTH))) {
			ws_log(WS_LOG_ERROR,
			       "refusing to write %s: %s is a symbolic link in a directory others can write to; name its target instead",
			       path, shown);
			close(fd);
			close(dfd);
			return -ELOOP;
		}
		if (++links > MAX_LINKS) {
			close(fd);
			err = ELOOP;
			goto fail_errno;
		}
		n = readlinkat(fd, "", target, sizeof(target) - 1);
		err = n < 0 ? errno : ENOENT;
		close(fd);
		if (n <= 0)
			goto fail_errno;
		if ((size_t)snprintf(tmp, sizeof(tmp), "%.*s/%s", (int)n, target, p) >=
		    sizeof(tmp)) {
			err = ENAMETOOLONG;
			goto fail_errno;
		}
		memcpy(rest, tmp, sizeof(rest));
		p = rest;
		/* messages name the path as resolved: the link's name gives way to its target */
		cut = strrchr(shown, '/');
		if (!cut)
			shown[0] = 0;
		else
			cut[cut == shown] = 0; /* "/d" leaves "/" */
		if (target[0] == '/') {
			close(dfd);
			snprintf(shown, sizeof(shown), "/");
			dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (dfd < 0 || fstat(dfd, &dst)) {
				err = errno;
				goto fail_errno;
			}
		}
	}
fail_errno:
	if (dfd >= 0)
		close(dfd);
	return say(path, err, NULL);
}

/*
 * What NAME is now, and whether it may be replaced: absent (*@exists false),
 * or a regular file of the user the output is for (*@st). A link, a
 * directory or someone else's file is refused (-errno, said); a device or
 * FIFO is 1 (written in place).
 */
static int check_target(struct ws_outfile *o, const struct ws_invoker *inv, struct stat *st,
			bool *exists)
{
	uid_t user = inv->sudo ? inv->uid : geteuid();

	*exists = false;
	if (fstatat(o->dirfd, o->base, st, AT_SYMLINK_NOFOLLOW)) {
		if (errno == ENOENT)
			return 0;
		return say(o->path, errno, NULL);
	}
	*exists = true;
	if (S_ISLNK(st->st_mode)) {
		ws_log(WS_LOG_ERROR,
		       "refusing to write %s: it is a symbolic link; name its target instead",
		       o->path);
		return -ELOOP;
	}
	if (S_ISDIR(st->st_mode))
		return say(o->path, EISDIR, NULL);
	if (!S_ISREG(st->st_mode))
		return 1;
	/*
	 * Someone else's file: replacing it would either take it from them or,
	 * kept theirs, hand them what root wrote (in /tmp, a name another user
	 * prepared for root). Neither is whyslow's to decide.
	 */
	if (st->st_uid != user) {
		ws_log(WS_LOG_ERROR,
		       "refusing to replace %s: it belongs to uid %u, not to uid %u%s; remove it or choose another name",
		       o->path, (unsigned)st->st_uid, (unsigned)user,
		       inv->sudo ? " (who ran sudo: whyslow writes files as that user)" : "");
		return -EPERM;
	}
	return 0;
}

/* A device or FIFO: opened as the invoking user under sudo, never blocking on a FIFO. */
static int open_direct(struct ws_outfile *o, const struct ws_invoker *inv, const struct stat *seen)
{
	int flags = O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
	const char *path = o->path;
	struct stat st;
	int fd, err;

	if (inv->sudo) {
		/* by name, in the user's place: every directory on the way is checked for them */
		fd = ws_invoker_open(inv, path, flags);
		err = -fd;
	} else {
		fd = openat(o->dirfd, o->base, flags);
		err = errno;
	}
	if (fd < 0) {
		if (err == ENXIO)
			return say(path, err,
				   "it is a FIFO with no reader; start the reader first");
		if (err == EACCES && inv->sudo) {
			ws_log(WS_LOG_ERROR,
			       "cannot write %s: %s cannot open it (whyslow opens devices and FIFOs as the user who ran sudo)",
			       path, inv->name[0] ? inv->name : "the invoking user");
			return -EACCES;
		}
		return say(path, err, NULL);
	}
	/* the very device checked: not a file put there meanwhile, nor one a link swapped in */
	if (fstat(fd, &st) || st.st_dev != seen->st_dev || st.st_ino != seen->st_ino ||
	    S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
		close(fd);
		return say(path, EAGAIN, "it changed while being opened; try again");
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	o->direct = true;
	o->fd = fd;
	if ((err = open_stream(o))) {
		close(fd);
		o->fd = -1;
		return say(path, -err, NULL);
	}
	return 0;
}

/* NAME.tmp.XXXXXX in @o->dirfd, created, never opened: O_EXCL|O_NOFOLLOW. */
static int create_tmp(struct ws_outfile *o, const struct ws_invoker *inv)
{
	static const char digits[] = "abcdefghijklmnopqrstuvwxyz0123456789";

	for (int tries = 0; tries < 100; tries++) {
		unsigned char r[6];
		char name[NAME_MAX + 1];
		int fd;

		if (getrandom(r, sizeof(r), 0) != sizeof(r))
			return -EIO;
		size_t n = snprintf(name, sizeof(name), "%.*s.tmp.", NAME_MAX - 11, o->base);

		for (int i = 0; i < 6; i++)
			name[n + i] = digits[r[i] % 36];
		name[n + 6] = 0;
		fd = openat(o->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    inv->sudo ? 0600 : 0666);
		if (fd < 0 && errno == EEXIST)
			continue;
		if (fd < 0)
			return -errno;
		if (inv->sudo && fchown(fd, inv->uid, inv->gid)) {
			int err = errno;

			unlinkat(o->dirfd, name, 0);
			close(fd);
			return -err;
		}
		snprintf(o->tmp + strlen(o->tmp), sizeof(o->tmp) - strlen(o->tmp), "%s", name);
		return fd;
	}
	return -EEXIST;
}

static const char *tmp_name(const struct ws_outfile *o)
{
	const char *s = strrchr(o->tmp, '/');

	return s ? s + 1 : o->tmp;
}

bool ws_outfile_binary_to_terminal(const char *path, const char *format)
{
	int fd = -1;

	if (!path || !strcmp(path, "-") || !strcmp(path, "/dev/stdout"))
		fd = STDOUT_FILENO;
	else if (!strcmp(path, "/dev/stderr") || !strcmp(path, WS_OUTFILE_STDERR))
		fd = STDERR_FILENO;
	if (fd < 0 || !isatty(fd))
		return false;
	ws_log(WS_LOG_ERROR,
	       "--format %s writes a binary profile, not for a terminal: give -o FILE", format);
	return true;
}

int ws_outfile_open(struct ws_outfile *o, const char *path)
{
	const char *slash;
	struct ws_invoker inv;
	struct stat st;
	bool exists;
	int err;
	size_t dlen;

	memset(o, 0, sizeof(*o));
	o->dirfd = -1;
	o->fd = -1;
	o->path = path;
	if (!path || !strcmp(path, "/dev/stdout"))
		return open_std(o, 1);
	if (!strcmp(path, "/dev/stderr") || !strcmp(path, WS_OUTFILE_STDERR)) {
		o->path = "/dev/stderr";
		return open_std(o, 2);
	}
	slash = strrchr(path, '/');
	if ((slash ? slash[1] : path[0]) == 0)
		return say(path, EISDIR, NULL);
	if (strlen(slash ? slash + 1 : path) > NAME_MAX || strlen(path) >= PATH_MAX)
		return say(path, ENAMETOOLONG, NULL);
	snprintf(o->base, sizeof(o->base), "%s", slash ? slash + 1 : path);
	dlen = slash ? (size_t)(slash - path) : 0;
	snprintf(o->tmp, sizeof(o->tmp), "%.*s%s", (int)dlen, path, slash ? "/" : "");
	if ((err = ws_invoker_get(&inv)))
		return err;
	{
		char dir[PATH_MAX];

		snprintf(dir, sizeof(dir), "%.*s", (int)(slash ? (dlen ? dlen : 1) : 1),
			 slash ? path : ".");
		o->dirfd = open_dir(path, dir, &inv);
	}
	if (o->dirfd < 0)
		return o->dirfd;
	err = check_target(o, &inv, &st, &exists);
	if (err == 1) {
		err = open_direct(o, &inv, &st);
		close(o->dirfd);
		o->dirfd = -1;
		return err;
	}
	if (err)
		goto fail;
	o->fd = create_tmp(o, &inv);
	if (o->fd < 0) {
		err = say(path, -o->fd, NULL);
		goto fail;
	}
	if (!(err = open_stream(o)))
		return 0;
	err = say(path, -err, NULL);
	close(o->fd);
	o->fd = -1;
	unlinkat(o->dirfd, tmp_name(o), 0);
fail:
	close(o->dirfd);
	o->dirfd = -1;
	return err;
}

int ws_outfile_error(const struct ws_outfile *o)
{
	if (o->sink && o->sink->err)
		return -o->sink->err;
	return o->f && ferror(o->f) ? -EIO : 0;
}

/*
 * Just before the rename: NAME checked again (it may have changed during a
 * long run), and the temporary file given the mode and group of the file it
 * replaces, as an editor saving it would keep them. Set-id bits are not
 * kept: a report is not a program. 0, 1 (NAME absent: never replace what
 * appears meanwhile), or -errno (said).
 */
static int settle(struct ws_outfile *o)
{
	struct ws_invoker inv;
	struct stat st, now;
	mode_t mode;
	bool exists;
	int err;

	if ((err = ws_invoker_get(&inv)) || (err = check_target(o, &inv, &st, &exists)))
		return err == 1 ? say(o->path, EEXIST, "it became a device or FIFO meanwhile")
				: err;
	if (!exists)
		return 1;
	mode = st.st_mode & 0777;
	if (fstat(o->fd, &now))
		return say(o->path, errno, NULL);
	/* a group it cannot have (not root, not a member): no group access rather than another's */
	if (now.st_gid != st.st_gid && fchown(o->fd, (uid_t)-1, st.st_gid))
		mode &= ~(mode_t)070;
	if (fchmod(o->fd, mode))
		return say(o->path, errno, NULL);
	return 0;
}

/* A filesystem without RENAME_NOREPLACE (EINVAL) still refuses to replace: link, then unlink. */
static int rename_noreplace(int dirfd, const char *from, const char *to)
{
	if (!renameat2(dirfd, from, dirfd, to, RENAME_NOREPLACE))
		return 0;
	if (errno != EINVAL)
		return -errno;
	if (linkat(dirfd, from, dirfd, to, 0))
		return -errno;
	unlinkat(dirfd, from, 0);
	return 0;
}

int ws_outfile_close(struct ws_outfile *o, bool keep)
{
	int err = 0, rc = 0;

	if (!o->f)
		return 0;
	errno = 0;
	if (fflush(o->f) == EOF || ferror(o->f))
		err = ws_outfile_error(o) ?: errno ? -errno : -EIO;
	if (o->std) {
		o->f = NULL;
		if (err && keep)
			ws_log(WS_LOG_ERROR, "cannot write standard %s: %s",
			       o->path && !strcmp(o->path, "/dev/stderr") ? "error" : "output",
			       strerror(-err));
		return err;
	}
	if (!o->direct && keep && !err && fsync(o->fd))
		err = -errno;
	if (!o->direct && keep && !err) {
		rc = settle(o);
		if (rc < 0) {
			err = rc;
			keep = false; /* said already */
		}
	}
	if (fclose(o->f) && !err)
		err = ws_outfile_error(o) ?: errno ? -errno : -EIO;
	o->f = NULL;
	o->fd = -1;
	free(o->sink);
	o->sink = NULL;
	if (!o->direct) {
		/* NAME absent at the check: RENAME_NOREPLACE, nothing that appeared since is lost
		 */
		if (keep && !err && rc == 1)
			err = rename_noreplace(o->dirfd, tmp_name(o), o->base);
		else if (keep && !err && renameat(o->dirfd, tmp_name(o), o->dirfd, o->base))
			err = -errno;
		if (!keep || err)
			unlinkat(o->dirfd, tmp_name(o), 0);
		close(o->dirfd);
		o->dirfd = -1;
	}
	if (keep && err)
		ws_log(WS_LOG_ERROR, "cannot write %s: %s", o->path, strerror(-err));
	return err;
}
