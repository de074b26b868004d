// SPDX-License-Identifier: MIT
/* --comm's names and the processes that bear them: see comm.h. */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comm.h"

int ws_comm_parse(const char *list, char names[WS_COMM_NAMES][WS_COMM_BYTES], char *why, size_t len)
{
	int n = 0;

	memset(names, 0, WS_COMM_NAMES * WS_COMM_BYTES);
	for (const char *p = list;; p++) {
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);

		if (!l) {
			snprintf(why, len, "an empty name in '%s'", list);
			return -EINVAL;
		}
		if (l >= WS_COMM_BYTES) {
			snprintf(
				why, len,
				"'%.*s' is longer than 15 characters, which a command name never is (the kernel keeps the first 15: give those)",
				(int)l, p);
			return -EINVAL;
		}
		if (n == WS_COMM_NAMES) {
			snprintf(why, len, "more than %d names", WS_COMM_NAMES);
			return -EINVAL;
		}
		memcpy(names[n++], p, l);
		if (!e)
			return n;
		p = e;
	}
}

/* /proc/@pid/comm, and whether the process is a kernel thread (its stat's PF_KTHREAD). */
static bool read_comm(uint32_t pid, char comm[WS_COMM_BYTES], bool *kthread)
{
	char path[64], buf[1024], *p;
	unsigned long flags = 0;
	size_t l;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	if (!(f = fopen(path, "re")))
		return false;
	memset(comm, 0, WS_COMM_BYTES);
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	if (!p)
		return false;
	l = strcspn(buf, "\n");
	if (l >= WS_COMM_BYTES)
		l = WS_COMM_BYTES - 1;
	memcpy(comm, buf, l);
	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	if (!(f = fopen(path, "re")))
		return false;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	/* "pid (comm) state ppid pgrp session tty_nr tpgid flags": the comm may hold ") " */
	if (!p || sscanf(p + 1, " %*c %*u %*d %*d %*d %*d %lu", &flags) != 1)
		return false;
	*kthread = flags & 0x00200000; /* PF_KTHREAD */
	return true;
}

int ws_comm_pids(char names[WS_COMM_NAMES][WS_COMM_BYTES], int nnames, uint32_t **pids, size_t *n)
{
	uint32_t *v = NULL, me = getpid();
	size_t cap = 0;
	struct dirent *e;
	DIR *d = opendir("/proc");

	*pids = NULL;
	*n = 0;
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		uint32_t pid = strtoul(e->d_name, NULL, 10);
		char comm[WS_COMM_BYTES];
		bool kthread = false, named = false;

		if (!pid || pid == me || !read_comm(pid, comm, &kthread) || kthread)
			continue;
		for (int i = 0; i < nnames && !named; i++)
			named = !memcmp(comm, names[i], WS_COMM_BYTES);
		if (!named)
			continue;
		if (*n == cap) {
			uint32_t *g = realloc(v, (cap = cap ? 2 * cap : 64) * sizeof(*v));

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
