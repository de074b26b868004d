// SPDX-License-Identifier: MIT
/*
 * The cgroup whose CPU quota throttled a traced thread (ws_graph_ops.quota_name): the sched
 * source gives only its id, the inode number of its directory. Named here from the thread's
 * /proc/TID/cgroup (its cpu controller's path; the throttled group is it or an ancestor, the one
 * whose directory has that inode) and the group's own files (cpu.cfs_quota_us and
 * cpu.cfs_period_us on cgroup v1, cpu.max on v2). Read once per cgroup, when its first
 * throttle ends, while the thread still lives; never from a recording (its pids are not this
 * machine's now). The quota is the one read then: a later change is not seen.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cgroup.h"
#include "session_impl.h"

/* A claim field holds this much of a path (struct ws_field.s, its 0 included). */
#define FIELD_LEN 40

static bool read_u64s(const char *dir, const char *file, const char *fmt, long long *a,
		      long long *b)
{
	char name[1024], buf[128];
	FILE *f;
	bool ok;

	snprintf(name, sizeof(name), "%s/%s", dir, file);
	if (!(f = fopen(name, "re")))
		return false;
	ok = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	if (!ok)
		return false;
	if (b && !strncmp(buf, "max ", 4)) { /* v2 cpu.max with no quota */
		*a = -1;
		return sscanf(buf + 4, "%lld", b) == 1;
	}
	return b ? sscanf(buf, fmt, a, b) == 2 : sscanf(buf, fmt, a) == 1;
}

/* Find cgroup @id among @tid's cpu cgroup and its ancestors; fill @q. */
static void quota_find(uint32_t pid, uint32_t tid, struct session_quota *q)
{
	char m1[512], m2[512], path[512], dir[1100];
	long long quota = -1, period = 0;
	bool v1 = false;

	if (ws_cgroup_mounts(m1, sizeof(m1), m2, sizeof(m2)) ||
	    ws_cgroup_of_thread(pid, tid, path, sizeof(path), &v1))
		return;
	for (;;) {
		struct stat st;
		char *slash;

		snprintf(dir, sizeof(dir), "%s%s", v1 ? m1 : m2, strcmp(path, "/") ? path : "");
		if (!stat(dir, &st) && (uint64_t)st.st_ino == q->id)
			break;
		slash = strrchr(path, '/');
		if (!slash || !strcmp(path, "/"))
			return;
		slash[slash == path ? 1 : 0] = 0;
	}
	snprintf(q->path, sizeof(q->path), "%s", path);
	if (v1) {
		read_u64s(dir, "cpu.cfs_quota_us", "%lld", &quota, NULL);
		read_u64s(dir, "cpu.cfs_period_us", "%lld", &period, NULL);
	} else {
		read_u64s(dir, "cpu.max", "%lld %lld", &quota, &period);
	}
	q->quota_us = quota > 0 ? (uint64_t)quota : 0;
	q->period_us = period > 0 ? (uint64_t)period : 0;
}

void session_quota_name(void *ctx, uint32_t tid, uint32_t pid, uint64_t cg, struct ws_claim *c)
{
	struct ws_session *s = ctx;
	struct session_quota *q = NULL;
	size_t n;

	for (size_t i = 0; i < s->nquotas && !q; i++)
		if (s->quotas[i].id == cg)
			q = &s->quotas[i];
	if (!q &&
	    !ws_grow((void **)&s->quotas, &s->quotas_cap, s->nquotas + 1, sizeof(*s->quotas))) {
		q = &s->quotas[s->nquotas++];
		memset(q, 0, sizeof(*q));
		q->id = cg;
		if (!s->replay)
			quota_find(pid, tid, q);
	}
	ws_session_host.claim_u64(c, "cgroup_id", cg);
	if (!q || !q->path[0])
		return;
	/* a path longer than a field keeps its end, the group's own name */
	n = strlen(q->path);
	if (n < FIELD_LEN) {
		ws_session_host.claim_str(c, "quota_cgroup", q->path);
	} else {
		char cut[FIELD_LEN];

		snprintf(cut, sizeof(cut), "...%s", q->path + n - (FIELD_LEN - 4));
		ws_session_host.claim_str(c, "quota_cgroup", cut);
	}
	if (q->quota_us && q->period_us) {
		ws_session_host.claim_u64(c, "quota_us", q->quota_us);
		ws_session_host.claim_u64(c, "period_us", q->period_us);
	}
}
