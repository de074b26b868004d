// SPDX-License-Identifier: MIT
/* The watch's pid file, and `whyslow dump`, its reader (see watch_pidfile.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "options.h"
#include "watch_pidfile.h"
#include "base/log.h"
#include "record/spool.h"

#define PID_NAME "watch.pid"
/* how long `whyslow dump` waits for the dump to appear */
#define DUMP_WAIT_MS 10000

/* /run/whyslow, ours alone; its descriptor, or -errno with @why said by the caller. */
static int open_run_dir(bool make, const char **why)
{
	struct stat st;
	int fd;

	if (make && mkdir(WS_WATCH_RUN_DIR, 0700) && errno != EEXIST) {
		*why = strerror(errno);
		return -errno;
	}
	fd = open(WS_WATCH_RUN_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		*why = errno == ENOENT ? "no watch has run on this machine" : strerror(errno);
		return -errno;
	}
	if (fstat(fd, &st) || st.st_uid != geteuid() || (st.st_mode & 077)) {
		*why = "not a directory of this user's alone (0700): remove it and start watch again";
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* The pid and spool a pid file names; 0, or -ENOENT (none) or -EINVAL (not one of ours). */
static int read_pidfile(int dirfd, pid_t *pid, char *spool, size_t len)
{
	char buf[4096 + 32], *nl;
	int fd = openat(dirfd, PID_NAME, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t n;
	long v;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EINVAL;
	buf[n] = 0;
	v = strtol(buf, &nl, 10);
	if (v <= 0 || *nl != '\n')
		return -EINVAL;
	*pid = v;
	snprintf(spool, len, "%.*s", (int)strcspn(nl + 1, "\n"), nl + 1);
	return 0;
}

/* Is @pid a running whyslow (not a pid reused by something else since)? */
static bool is_whyslow(pid_t pid)
{
	char path[64], comm[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = 0;
	fclose(f);
	return !strcmp(comm, "whyslow\n");
}

int ws_pidfile_claim(struct ws_pidfile *pf, const char *spool)
{
	const char *why = NULL;
	char other[4096];
	pid_t pid;
	int fd = open_run_dir(true, &why);

	pf->dirfd = -1;
	pf->spool = spool;
	pf->written = false;
	if (fd < 0) {
		ws_log(WS_LOG_ERROR, "%s: %s", WS_WATCH_RUN_DIR, why);
		return fd;
	}
	pf->dirfd = fd;
	if (!read_pidfile(fd, &pid, other, sizeof(other)) && pid != getpid() && is_whyslow(pid)) {
		ws_log(WS_LOG_ERROR,
		       "another whyslow watch runs (pid %d, dumps to %s): one at a time; stop it first",
		       (int)pid, other);
		return -EBUSY;
	}
	return 0;
}

int ws_pidfile_write(struct ws_pidfile *pf)
{
	char tmp[64];
	FILE *f;
	int fd, err = 0;

	snprintf(tmp, sizeof(tmp), ".%s.%d", PID_NAME, (int)getpid());
	unlinkat(pf->dirfd, tmp, 0); /* ours, from a watch of the same pid that died */
	fd = openat(pf->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		err = -errno;
		if (fd >= 0)
			close(fd);
	} else {
		fprintf(f, "%d\n%s\n", (int)getpid(), pf->spool);
		if (fclose(f))
			err = -errno;
		/* a stale file is an earlier watch's (the directory is ours alone): replaced */
		if (!err && renameat(pf->dirfd, tmp, pf->dirfd, PID_NAME))
			err = -errno;
	}
	if (err) {
		unlinkat(pf->dirfd, tmp, 0);
		ws_log(WS_LOG_ERROR, "cannot write %s: %s", WS_WATCH_PID_FILE, strerror(-err));
		return err;
	}
	pf->written = true;
	return 0;
}

void ws_pidfile_release(struct ws_pidfile *pf)
{
	char spool[4096];
	pid_t pid;

	if (pf->dirfd < 0)
		return;
	if (pf->written && !read_pidfile(pf->dirfd, &pid, spool, sizeof(spool)) && pid == getpid())
		unlinkat(pf->dirfd, PID_NAME, 0);
	pf->written = false;
	close(pf->dirfd);
	pf->dirfd = -1;
}

/* The newest dump in @spool by name (names sort by time within one watch), into @out. */
static void newest_dump(const char *spool, char *out, size_t len)
{
	size_t pl = strlen(WS_SPOOL_PREFIX), sl = strlen(WS_SPOOL_SUFFIX);
	struct dirent *e;
	DIR *d = opendir(spool);

	out[0] = 0;
	while (d && (e = readdir(d))) {
		size_t n = strlen(e->d_name);

		if (n > pl + sl && !strncmp(e->d_name, WS_SPOOL_PREFIX, pl) &&
		    !strcmp(e->d_name + n - sl, WS_SPOOL_SUFFIX) && strcmp(e->d_name, out) > 0)
			snprintf(out, len, "%s", e->d_name);
	}
	if (d)
		closedir(d);
}

int ws_cmd_dump(const struct ws_cli *c)
{
	const char *why = NULL;
	char spool[4096], before[256], now[256];
	pid_t pid;
	int fd, err;

	if (c->pids.n) {
		ws_log(WS_LOG_ERROR, "dump takes no PID: it asks the running whyslow watch");
		return 1;
	}
	fd = open_run_dir(false, &why);
	if (fd < 0) {
		ws_log(WS_LOG_ERROR, "no whyslow watch to ask: %s: %s", WS_WATCH_RUN_DIR, why);
		return 1;
	}
	err = read_pidfile(fd, &pid, spool, sizeof(spool));
	close(fd);
	if (err || !is_whyslow(pid)) {
		ws_log(WS_LOG_ERROR, "no whyslow watch runs (%s %s); start one with whyslow watch",
		       WS_WATCH_PID_FILE,
		       err == -ENOENT ? "does not exist"
		       : err	      ? "is not one watch wrote"
				      : "is stale");
		return 1;
	}
	newest_dump(spool, before, sizeof(before));
	if (kill(pid, SIGUSR1)) {
		ws_log(WS_LOG_ERROR, "cannot signal whyslow watch (pid %d): %s", (int)pid,
		       strerror(errno));
		return 1;
	}
	/* the path, once it is there: a dump of a full window takes a second or so */
	for (int i = 0; i < DUMP_WAIT_MS / 100; i++) {
		newest_dump(spool, now, sizeof(now));
		if (strcmp(now, before) > 0) {
			printf("%s/%s\n", spool, now);
			return 0;
		}
		usleep(100000);
	}
	ws_log(WS_LOG_ERROR,
	       "asked whyslow watch (pid %d) for a dump, but none came to %s within %d s: see its log",
	       (int)pid, spool, DUMP_WAIT_MS / 1000);
	return 1;
}
