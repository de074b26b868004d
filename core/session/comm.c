// SPDX-License-Identifier: MIT
/* --comm's names and the processes that bear them: see comm.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "base/proc_stat.h"

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

/* /proc/@pid/comm, the first WS_COMM_BYTES - 1 bytes of it. */
static bool read_comm(uint32_t pid, char comm[WS_COMM_BYTES])
{
	char path[64], buf[64], *p;
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
	return true;
}

struct comm_names {
	char (*names)[WS_COMM_BYTES];
	int n;
};

/* A process (not a kernel thread) that bears one of the names. */
static bool named(uint32_t pid, void *ctx)
{
	const struct comm_names *c = ctx;
	char comm[WS_COMM_BYTES];
	uint32_t ppid;
	bool kthread;

	if (!read_comm(pid, comm) || ws_proc_stat_of(pid, &ppid, &kthread) || kthread)
		return false;
	for (int i = 0; i < c->n; i++)
		if (!memcmp(comm, c->names[i], WS_COMM_BYTES))
			return true;
	return false;
}

int ws_comm_pids(char names[WS_COMM_NAMES][WS_COMM_BYTES], int nnames, uint32_t **pids, size_t *n)
{
	struct comm_names c = { names, nnames };

	return ws_proc_pids(named, &c, pids, n);
}
