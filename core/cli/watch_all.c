// SPDX-License-Identifier: MIT
/* watch -a: the processes to attach to, from /proc (see cmd_watch.h). */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd_watch.h"

/* Process @pid's parent, and whether it is a kernel thread; -errno when it has gone. */
static int stat_of(uint32_t pid, uint32_t *ppid, bool *kthread)
{
	char path[64], buf[1024], *p;
	unsigned long flags = 0;
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	/* "pid (comm) state ppid pgrp session tty_nr tpgid flags": the comm may hold ") " */
	ok = p && sscanf(p + 1, " %*c %u %*d %*d %*d %*d %lu", ppid, &flags) == 2;
	*kthread = flags & 0x00200000; /* PF_KTHREAD */
	return ok ? 0 : -ESRCH;
}

int ws_watch_all_pids(uint32_t **pids, int *n)
{
	uint32_t *v = NULL, me = getpid();
	int cap = 0;
	struct dirent *e;
	DIR *d = opendir("/proc");

	*pids = NULL;
	*n = 0;
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		uint32_t pid = strtoul(e->d_name, NULL, 10), ppid;
		bool kthread;

		/* kernel threads are followed as helpers where they work for a traced thread;
		 * whyslow and the helpers it forked would trace their own tracing */
		if (!pid || pid == me || stat_of(pid, &ppid, &kthread) || kthread || ppid == me)
			continue;
		if (*n == cap) {
			uint32_t *g = realloc(v, (cap = cap ? 2 * cap : 256) * sizeof(*v));

			if (!g) {
				free(v);
				closedir(d);
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
