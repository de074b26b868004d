// SPDX-License-Identifier: MIT
/* /proc stat lines: the fields after a comm that may hold ')' (proc_stat.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc_stat.h"

const char *ws_proc_stat_fields(const char *line)
{
	const char *close = strrchr(line, ')');

	/* ") S": a space, then at least the state */
	if (!close || close[1] != ' ' || !close[2] || !strchr(line, '(') ||
	    strchr(line, '(') > close)
		return NULL;
	return close + 2;
}

int ws_proc_stat_comm(const char *line, char *comm, size_t len)
{
	const char *open = strchr(line, '('), *close = strrchr(line, ')');
	size_t n;

	if (!len || !ws_proc_stat_fields(line))
		return -EINVAL;
	n = (size_t)(close - open - 1);
	if (n >= len)
		n = len - 1;
	memcpy(comm, open + 1, n);
	comm[n] = 0;
	return 0;
}

const char *ws_proc_stat_read(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	if (len < 2)
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = 0;
	return ws_proc_stat_fields(buf);
}

int ws_proc_stat_of(uint32_t pid, uint32_t *ppid, bool *kthread)
{
	char path[64], buf[1024];
	unsigned long flags = 0;
	const char *f;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	f = ws_proc_stat_read(path, buf, sizeof(buf));
	/* "state ppid pgrp session tty_nr tpgid flags" */
	if (!f || sscanf(f, "%*c %u %*d %*d %*d %*d %lu", ppid, &flags) != 2)
		return -ESRCH;
	*kthread = flags & 0x00200000; /* PF_KTHREAD */
	return 0;
}

int ws_proc_pids(bool (*keep)(uint32_t pid, void *ctx), void *ctx, uint32_t **pids, size_t *n)
{
	uint32_t *v = NULL, me = (uint32_t)getpid();
	size_t cap = 0;
	struct dirent *e;
	DIR *d = opendir("/proc");

	*pids = NULL;
	*n = 0;
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		uint32_t pid = (uint32_t)strtoul(e->d_name, NULL, 10);

		if (!pid || pid == me || !keep(pid, ctx))
			continue;
		if (*n == cap) {
			uint32_t *g = realloc(v, (cap = cap ? 2 * cap : 256) * sizeof(*v));

			if (!g) {
				free(v);
				closedir(d);
				*n = 0;
				return -ENOMEM;
			}
			v = g;
		}
		v[(*n)++] = pid;
	}
	closedir(d);
	*pids = v;
	return 0;
}
