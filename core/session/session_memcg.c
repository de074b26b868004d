// SPDX-License-Identifier: MIT
/*
 * The memory cgroup at whose limit a traced thread reclaimed (ws_graph_ops.reclaim_name): the
 * sched source gives only its id, the inode number of its directory, and the limit as the
 * kernel's counter held it then. Named here from the thread's /proc/TID/cgroup (its memory
 * controller's path; the group is it or an ancestor, the one whose directory has that inode).
 * Read once per cgroup, as the record of its first reclaim arrives (not after the reorder window:
 * the thread may be gone by then, and its file names the root group); never from a recording
 * (its pids are not this machine's now).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cgroup.h"
#include "session_impl.h"

/* A claim field holds this much of a path (struct ws_field.s, its 0 included). */
#define FIELD_LEN 40

/* Find memory cgroup @m->id among @tid's memory cgroup and its ancestors: its path. */
static void memcg_find(uint32_t pid, uint32_t tid, struct session_memcg *m)
{
	char m1[512], m2[512], path[512], dir[1100];
	bool v1 = false;

	if (ws_cgroup_mounts_of("memory", m1, sizeof(m1), m2, sizeof(m2)) ||
	    ws_cgroup_of_thread_in(pid, tid, "memory", path, sizeof(path), &v1))
		return;
	for (;;) {
		struct stat st;
		char *slash;

		snprintf(dir, sizeof(dir), "%s%s", v1 ? m1 : m2, strcmp(path, "/") ? path : "");
		if (!stat(dir, &st) && (uint64_t)st.st_ino == m->id)
			break;
		slash = strrchr(path, '/');
		if (!slash || !strcmp(path, "/"))
			return;
		slash[slash == path ? 1 : 0] = 0;
	}
	snprintf(m->path, sizeof(m->path), "%s", path);
}

/*
 * Group @cg, named from thread @tid of @pid if it is not yet: tried again at later reclaims
 * (the thread may have exited, or left the group, before its read), at most MEMCG_TRIES times.
 */
#define MEMCG_TRIES 8
static struct session_memcg *memcg_of(struct ws_session *s, uint32_t tid, uint32_t pid, uint64_t cg)
{
	struct session_memcg *m = NULL;

	for (size_t i = 0; i < s->nmemcgs && !m; i++)
		if (s->memcgs[i].id == cg)
			m = &s->memcgs[i];
	if (!m &&
	    !ws_grow((void **)&s->memcgs, &s->memcgs_cap, s->nmemcgs + 1, sizeof(*s->memcgs))) {
		m = &s->memcgs[s->nmemcgs++];
		memset(m, 0, sizeof(*m));
		m->id = cg;
	}
	if (m && !m->path[0] && m->tries < MEMCG_TRIES && !s->replay) {
		m->tries++;
		memcg_find(pid, tid, m);
	}
	return m;
}

void session_memcg_arrived(struct ws_session *s, const struct ws_rec_hdr *h)
{
	uint64_t cg;

	if (ws_sched_reclaim_cg(h, &cg))
		memcg_of(s, h->tid, h->pid, cg);
}

void session_reclaim_name(void *ctx, uint32_t tid, uint32_t pid, uint64_t cg, struct ws_claim *c)
{
	struct session_memcg *m = memcg_of(ctx, tid, pid, cg);
	char cut[FIELD_LEN];

	if (!m || !m->path[0])
		return;
	/* a path longer than a field keeps its end, the group's own name */
	ws_cgroup_path_fit(m->path, cut, sizeof(cut));
	ws_session_host.claim_str(c, "reclaim_cgroup", cut);
}
