// SPDX-License-Identifier: MIT
/* File locks other processes hold on a process's open files: see filelocks.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "filelocks.h"
#include "procsnap.h"

/* One open file of the process: its descriptor and the file's identity. */
struct open_file {
	int fd;
	int mnt_id;
	uint64_t ino;
	dev_t dev; /* from mnt_id (mountinfo); 0 when not found */
};

/* @fd's mount and inode from /proc/@pid/fdinfo/@fd; false when not there. */
static bool fdinfo(uint32_t pid, int fd, struct open_file *of)
{
	char path[64], line[128];
	bool ino = false, mnt = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/fdinfo/%d", pid, fd);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f) && !(ino && mnt)) {
		if (sscanf(line, "ino: %" SCNu64, &of->ino) == 1)
			ino = true;
		else if (sscanf(line, "mnt_id: %d", &of->mnt_id) == 1)
			mnt = true;
	}
	fclose(f);
	of->fd = fd;
	return ino && mnt;
}

/* The device of each file from its mount (/proc/@pid/mountinfo: "ID PARENT MAJ:MIN ..."). */
static void devices(uint32_t pid, struct open_file *of, int n)
{
	char path[64], line[512];
	unsigned int maj, min;
	int id;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/mountinfo", pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%d %*d %u:%u", &id, &maj, &min) != 3)
			continue;
		for (int i = 0; i < n; i++)
			if (of[i].mnt_id == id)
				of[i].dev = makedev(maj, min);
		/* a line longer than the buffer: skip its rest, it is not the start of another */
		while (!strchr(line, '\n') && fgets(line, sizeof(line), f))
			;
	}
	fclose(f);
}

/* The open files of @pid (at most WS_FLOCK_FDS) into *@out (malloc'd). Count or -errno. */
static int open_files(uint32_t pid, struct open_file **out)
{
	char path[64];
	struct open_file *of;
	struct dirent *d;
	int n = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%u/fdinfo", pid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	of = calloc(WS_FLOCK_FDS, sizeof(*of));
	if (!of) {
		closedir(dir);
		return -ENOMEM;
	}
	while (n < WS_FLOCK_FDS && (d = readdir(dir))) {
		char *end;
		long fd = strtol(d->d_name, &end, 10);

		if (*end || end == d->d_name || fd < 0)
			continue;
		if (fdinfo(pid, (int)fd, &of[n]))
			n++;
	}
	closedir(dir);
	devices(pid, of, n);
	*out = of;
	return n;
}

int ws_file_locks_of(uint32_t pid, struct ws_file_lock *out, int max)
{
	struct open_file *of = NULL;
	char line[256];
	int nof = open_files(pid, &of), n = 0, lines = 0;
	FILE *f;

	if (nof <= 0)
		return nof;
	f = fopen("/proc/locks", "re");
	if (!f) {
		free(of);
		return -errno;
	}
	/* "1: POSIX  ADVISORY  WRITE 4821 fe:00:10952937 0 EOF"; a blocked request has "->" */
	while (n < max && lines++ < WS_FLOCK_LINES && fgets(line, sizeof(line), f)) {
		char kind[8], type[8], adv[16];
		unsigned int maj, min;
		uint64_t ino;
		int holder;

		if (strstr(line, "->") || sscanf(line, "%*d: %7s %15s %7s %d %x:%x:%" SCNu64, kind,
						 adv, type, &holder, &maj, &min, &ino) != 7)
			continue;
		/* its own locks are not what it waits for; an OFD lock names no process (-1) */
		if (holder <= 0 || (uint32_t)holder == pid)
			continue;
		for (int i = 0; i < nof && n < max; i++) {
			struct ws_file_lock *l = &out[n];
			char fdpath[64];
			ssize_t len;

			if (of[i].ino != ino || of[i].dev != makedev(maj, min))
				continue;
			memset(l, 0, sizeof(*l));
			l->fd = of[i].fd;
			l->holder = (uint32_t)holder;
			snprintf(l->kind, sizeof(l->kind), "%s", kind);
			snprintf(l->type, sizeof(l->type), "%s", type);
			snprintf(fdpath, sizeof(fdpath), "/proc/%u/fd/%d", pid, of[i].fd);
			len = readlink(fdpath, l->path, sizeof(l->path) - 1);
			l->path[len > 0 ? len : 0] = 0;
			snprintf(l->holder_comm, sizeof(l->holder_comm), "?"); /* when gone */
			ws_procsnap_comm(l->holder, 0, l->holder_comm, sizeof(l->holder_comm));
			n++;
			break; /* one descriptor per lock is enough to name the file */
		}
	}
	fclose(f);
	free(of);
	return n;
}
