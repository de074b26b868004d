// SPDX-License-Identifier: MIT
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* O_PATH */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "invoker.h"
#include "log.h"
#include "outfile.h"

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

/* A device or FIFO: opened as the invoking user under sudo, never blocking on a FIFO. */
static int open_direct(struct ws_outfile *o, const char *path)
{
	int flags = O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
	struct ws_invoker inv;
	struct stat st;
	int fd, err;

	if ((err = ws_invoker_get(&inv)))
		return err;
	if (inv.sudo) {
		fd = ws_invoker_open(&inv, path, flags);
		err = -fd;
	} else {
		fd = open(path, flags);
		err = errno;
	}
	if (fd < 0) {
		if (err == ENXIO)
			return say(path, err,
				   "it is a FIFO with no reader; start the reader first");
		if (err == EACCES && inv.sudo) {
			ws_log(WS_LOG_ERROR,
			       "cannot write %s: %s cannot open it (whyslow opens devices and FIFOs as the user who ran sudo)",
			       path, inv.name[0] ? inv.name : "the invoking user");
			return -EACCES;
		}
		return say(path, err, NULL);
	}
	/* a regular file put there meanwhile is not written in place */
	if (fstat(fd, &st) || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
		close(fd);
		return say(path, EAGAIN, "it changed while being opened; try again");
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	o->direct = true;
	o->f = fdopen(fd, "we");
	if (!o->f) {
		err = errno;
		close(fd);
		return say(path, err, NULL);
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

int ws_outfile_open(struct ws_outfile *o, const char *path)
{
	const char *slash;
	struct ws_invoker inv;
	struct stat st;
	int fd, err;
	size_t dlen;

	memset(o, 0, sizeof(*o));
	o->dirfd = -1;
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
	snprintf(o->base, sizeof(o->base), "%s", slash ? slash + 1 : path);
	dlen = slash ? (size_t)(slash - path) : 0;
	snprintf(o->tmp, sizeof(o->tmp), "%.*s%s", (int)dlen, path, slash ? "/" : "");
	{
		char dir[PATH_MAX];

		snprintf(dir, sizeof(dir), "%.*s", (int)(slash ? (dlen ? dlen : 1) : 1),
			 slash ? path : ".");
		o->dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	if (o->dirfd < 0)
		return say(path, errno, NULL);
	if (fstatat(o->dirfd, o->base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISLNK(st.st_mode)) {
			ws_log(WS_LOG_ERROR,
			       "refusing to write %s: it is a symbolic link; name its target instead",
			       path);
			err = -ELOOP;
			goto fail;
		}
		if (S_ISDIR(st.st_mode)) {
			err = say(path, EISDIR, NULL);
			goto fail;
		}
		if (!S_ISREG(st.st_mode)) {
			close(o->dirfd);
			o->dirfd = -1;
			return open_direct(o, path);
		}
	} else if (errno != ENOENT) {
		err = say(path, errno, NULL);
		goto fail;
	}
	if ((err = ws_invoker_get(&inv)))
		goto fail;
	fd = create_tmp(o, &inv);
	if (fd < 0) {
		err = say(path, -fd, NULL);
		goto fail;
	}
	o->f = fdopen(fd, "we");
	if (o->f)
		return 0;
	err = say(path, errno, NULL);
	close(fd);
	unlinkat(o->dirfd, strrchr(o->tmp, '/') ? strrchr(o->tmp, '/') + 1 : o->tmp, 0);
fail:
	close(o->dirfd);
	o->dirfd = -1;
	return err;
}

static const char *tmp_name(const struct ws_outfile *o)
{
	const char *s = strrchr(o->tmp, '/');

	return s ? s + 1 : o->tmp;
}

int ws_outfile_close(struct ws_outfile *o, bool keep)
{
	int err = 0;

	if (!o->f)
		return 0;
	errno = 0;
	if (fflush(o->f) == EOF || ferror(o->f))
		err = errno ? -errno : -EIO;
	if (o->std) {
		o->f = NULL;
		if (err)
			ws_log(WS_LOG_ERROR, "cannot write standard %s: %s",
			       o->path && !strcmp(o->path, "/dev/stderr") ? "error" : "output",
			       strerror(-err));
		return err;
	}
	if (!o->direct && !err && fsync(fileno(o->f)))
		err = -errno;
	if (fclose(o->f) && !err)
		err = -errno;
	o->f = NULL;
	if (!o->direct) {
		if (keep && !err && renameat(o->dirfd, tmp_name(o), o->dirfd, o->base))
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
