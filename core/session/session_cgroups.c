// SPDX-License-Identifier: MIT
/*
 * The cgroup of every thread a record names (traced or not: a runqueue link names the threads
 * that held the CPU, any of the machine's), read from /proc/PID/task/TID/cgroup once, when a
 * record first names the thread (or when a traced thread is made: a tid reused is read again);
 * never per event, never in BPF. A thread is named with the cgroup it was in then: one moved
 * later keeps that name (ws_session_cgroup()'s callers say so). A thread gone before its first
 * record was handled is not named. A recording keeps each answer as a NAME record of source
 * WS_CGROUP_NAMES, so report names the threads as the live run did, from no file of its own
 * machine.
 */
#include "cgroup.h"
#include "session_impl.h"

/* A path longer than this keeps its end, which names the group itself (and a container's id) */
#define PATH_KEEP 255

/* A table key: nonzero for any thread but the idle task (tid 0, never looked up) */
static uint64_t thread_key(uint32_t tid, uint32_t pid)
{
	return (uint64_t)pid << 32 | tid;
}

/* @path's index among the distinct paths (+1: 0 is "not read"), added if new; 0 without memory */
static uint32_t path_intern(struct ws_session *s, const char *path)
{
	char cut[PATH_KEEP + 1];
	size_t n = strlen(path);
	char *copy;

	if (n > PATH_KEEP) {
		snprintf(cut, sizeof(cut), "...%s", path + n - (PATH_KEEP - 3));
		path = cut;
	}
	for (size_t i = 0; i < s->ncg_paths; i++)
		if (!strcmp(s->cg_paths[i], path))
			return (uint32_t)i + 1;
	if (ws_grow((void **)&s->cg_paths, &s->cg_paths_cap, s->ncg_paths + 1,
		    sizeof(*s->cg_paths)) ||
	    !(copy = strdup(path)))
		return 0;
	s->cg_paths[s->ncg_paths++] = copy;
	return (uint32_t)s->ncg_paths;
}

/* Thread @key's cgroup is path @idx (0: not known): kept, and noted for a recording. */
static void thread_set(struct ws_session *s, uint64_t key, uint32_t idx)
{
	uint32_t *v = ws_table_put(&s->cg_threads, key, NULL);

	if (!v)
		return;
	*v = idx;
	if (idx &&
	    !ws_grow((void **)&s->cg_log, &s->cg_log_cap, s->ncg_log + 1, sizeof(*s->cg_log)))
		s->cg_log[s->ncg_log++] = (struct cg_note){ .key = key, .path = idx };
}

void session_cgroup_seen(struct ws_session *s, uint32_t tid, uint32_t pid, bool again)
{
	uint64_t key = thread_key(tid, pid);
	char path[4096];
	bool v1; /* which hierarchy: the docs say, the name does not */

	/* a recording's answers come as its NAME records; the idle task has no cgroup */
	if (s->replay || !tid || (!again && ws_table_get(&s->cg_threads, key)))
		return;
	if (ws_cgroup_of_thread(pid, tid, path, sizeof(path), &v1)) {
		thread_set(s, key, 0); /* gone already: not asked again */
		return;
	}
	thread_set(s, key, path_intern(s, path));
}

const char *ws_session_cgroup(struct ws_session *s, uint32_t tid, uint32_t pid)
{
	const uint32_t *v = tid ? ws_table_get(&s->cg_threads, thread_key(tid, pid)) : NULL;

	return v && *v && *v <= s->ncg_paths ? s->cg_paths[*v - 1] : NULL;
}

int ws_session_set_cgroup(struct ws_session *s, uint64_t key, const char *path)
{
	uint32_t idx;

	if (!(uint32_t)key || !*path)
		return 0; /* no thread, no path: a damaged record names nothing */
	idx = path_intern(s, path);
	if (!idx)
		return -ENOMEM;
	thread_set(s, key, idx);
	return 0;
}

size_t ws_session_ncgroups(struct ws_session *s)
{
	return s->ncg_log;
}

size_t ws_session_cgroups(struct ws_session *s, size_t from, struct ws_name *out, size_t max)
{
	size_t n = 0;

	for (size_t i = from; i < s->ncg_log && n < max; i++, n++) {
		out[n].plugin = WS_CGROUP_NAMES;
		out[n].key = s->cg_log[i].key;
		out[n].name = s->cg_paths[s->cg_log[i].path - 1];
	}
	return n;
}

void session_cgroups_free(struct ws_session *s)
{
	for (size_t i = 0; i < s->ncg_paths; i++)
		free(s->cg_paths[i]);
	free(s->cg_paths);
	free(s->cg_log);
	ws_table_free(&s->cg_threads);
}
