// SPDX-License-Identifier: MIT
/*
 * The cgroup of every thread a record names (traced or not: a runqueue link names the threads
 * that held the CPU, any of the machine's), read from /proc/PID/task/TID/cgroup as the first
 * record that names the thread arrives (session_ring.c, before the reorder window: by its
 * dispatch a short-lived thread is gone), and again only when the thread is made (a tid may be
 * reused) or renames itself (exec, prctl: a runtime or a shell moves itself into a cgroup, then
 * execs); never per event. Each answer is kept with the time of the record that caused it, so a
 * thread that moved is named, at each moment, with the cgroup last read by then (the first one
 * read before that). A new thread gone before its read is named from the cgroup id BPF read as
 * it was made (its fork record), when another thread's read found the group of that id;
 * otherwise it is not named. A recording keeps each answer as a NAME record of source
 * WS_CGROUP_NAMES, so report names the threads as the live run did, from no file of its own
 * machine.
 */
#include "cgroup.h"
#include "session_impl.h"

/* A path longer than this keeps its end, which names the group itself (and a container's id) */
#define PATH_KEEP 255
/* cg_threads' value for a thread asked about whose cgroup could not be read */
#define NOT_READ UINT32_MAX

/* A table key: nonzero for any thread but the idle task (tid 0, never looked up) */
static uint64_t thread_key(uint32_t tid, uint32_t pid)
{
	return (uint64_t)pid << 32 | tid;
}

/* @path's index among the distinct paths, added if new; -ENOMEM */
static int64_t path_intern(struct ws_session *s, const char *path)
{
	char cut[PATH_KEEP + 1];
	char *copy;

	ws_cgroup_path_fit(path, cut, sizeof(cut));
	path = cut;
	for (size_t i = 0; i < s->ncg_paths; i++)
		if (!strcmp(s->cg_paths[i], path))
			return (int64_t)i;
	if (ws_grow((void **)&s->cg_paths, &s->cg_paths_cap, s->ncg_paths + 1,
		    sizeof(*s->cg_paths)) ||
	    !(copy = strdup(path)))
		return -ENOMEM;
	s->cg_paths[s->ncg_paths++] = copy;
	return (int64_t)s->ncg_paths - 1;
}

/* Thread @key was in cgroup @path as of @ts: a note after its earlier ones. 0 or -ENOMEM. */
static int note_add(struct ws_session *s, uint64_t key, const char *path, uint64_t ts)
{
	uint32_t *v = ws_table_put(&s->cg_threads, key, NULL);
	int64_t idx = v ? path_intern(s, path) : -ENOMEM;
	uint32_t prev;

	if (idx < 0)
		return -ENOMEM;
	prev = *v == NOT_READ ? 0 : *v;
	if (prev && s->cg_log[prev - 1].path == (uint32_t)idx)
		return 0; /* the same group again: nothing moved */
	if (ws_grow((void **)&s->cg_log, &s->cg_log_cap, s->ncg_log + 1, sizeof(*s->cg_log)))
		return -ENOMEM;
	s->cg_log[s->ncg_log++] = (struct cg_note){
		.key = key, .ts = ts, .path = (uint32_t)idx, .prev = prev, .seen = ts
	};
	*v = (uint32_t)s->ncg_log; /* the latest note, + 1 */
	return 0;
}

/*
 * Path @idx, just read from /proc in the hierarchy @v1 says, gets its cgroup id, so that a
 * thread made in that group and gone before its own read is named (session_cgroup_born()).
 * Once per distinct path: one open and stat.
 */
static void path_id_learn(struct ws_session *s, int64_t idx, const char *path, bool v1)
{
	char m1[512], m2[512];

	if (!s->cg_mount[0]) {
		if (ws_cgroup_mounts(m1, sizeof(m1), m2, sizeof(m2)))
			return;
		s->cg_v1 = v1;
		snprintf(s->cg_mount, sizeof(s->cg_mount), "%s", v1 ? m1 : m2);
		if (!s->cg_mount[0])
			return;
	}
	if (v1 != s->cg_v1 ||
	    ws_grow((void **)&s->cg_ids, &s->cg_ids_cap, s->ncg_paths, sizeof(*s->cg_ids)))
		return;
	for (size_t i = s->cg_ids_len; i < s->ncg_paths; i++)
		s->cg_ids[i] = 0;
	s->cg_ids_len = s->ncg_paths;
	/* a path cut to its end names no directory */
	if (!s->cg_ids[idx] && strlen(path) <= PATH_KEEP)
		ws_cgroup_dir_id(s->cg_mount, path, &s->cg_ids[idx]);
}

/* Read thread @tid of @pid's cgroup from /proc: 0, or -ENOENT (gone: noted as not read). */
static int thread_read(struct ws_session *s, uint32_t tid, uint32_t pid, uint64_t ts)
{
	uint64_t key = thread_key(tid, pid);
	char path[4096];
	bool v1; /* which hierarchy: the docs say, the name does not */
	int64_t idx;

	if (ws_cgroup_of_thread(pid, tid, path, sizeof(path), &v1)) {
		uint32_t *v = ws_table_put(&s->cg_threads, key, NULL);

		if (v && !*v)
			*v = NOT_READ; /* gone already: not asked again */
		return -ENOENT;
	}
	if (note_add(s, key, path, ts))
		return 0;
	if ((idx = path_intern(s, path)) >= 0) /* interned by note_add: found, not added */
		path_id_learn(s, idx, path, v1);
	return 0;
}

void session_cgroup_seen(struct ws_session *s, uint32_t tid, uint32_t pid, uint64_t ts, bool again)
{
	const uint32_t *v;

	/* a recording's answers come as its NAME records; the idle task has no cgroup */
	if (s->replay || !tid)
		return;
	v = again ? NULL : ws_table_get(&s->cg_threads, thread_key(tid, pid));
	if (!v) {
		thread_read(s, tid, pid, ts);
		return;
	}
	/* named again: its note is needed as long as this record is (ws_session_cgroups_evict) */
	if (*v && *v != NOT_READ && *v <= s->ncg_log && s->cg_log[*v - 1].seen < ts)
		s->cg_log[*v - 1].seen = ts;
}

void session_cgroup_born(struct ws_session *s, const struct ws_thread_event *ev)
{
	uint64_t id = s->cg_v1 ? ev->cg_cpu : ev->cg_dfl;

	if (s->replay || !ev->tid || !thread_read(s, ev->tid, ev->pid, ev->ts) || !id ||
	    !s->cg_mount[0])
		return;
	/* gone already: its group by the id its record carries, if another thread's read found it
	 */
	for (size_t i = 0; i < s->cg_ids_len; i++)
		if (s->cg_ids[i] == id) {
			note_add(s, thread_key(ev->tid, ev->pid), s->cg_paths[i], ev->ts);
			return;
		}
}

const char *ws_session_cgroup(struct ws_session *s, uint32_t tid, uint32_t pid, uint64_t ts)
{
	const uint32_t *v = tid ? ws_table_get(&s->cg_threads, thread_key(tid, pid)) : NULL;
	const struct cg_note *n;

	if (!v || !*v || *v == NOT_READ || *v > s->ncg_log)
		return NULL;
	/* the latest note as of @ts; before the first one, the first one (the earliest read) */
	for (n = &s->cg_log[*v - 1]; n->ts > ts && n->prev; n = &s->cg_log[n->prev - 1])
		;
	return s->cg_paths[n->path];
}

const char *ws_session_cgroup_of(void *s, uint32_t tid, uint32_t pid, uint64_t ts)
{
	return ws_session_cgroup(s, tid, pid, ts);
}

int ws_session_set_cgroup(struct ws_session *s, uint64_t key, const char *path, uint64_t ts)
{
	if (!(uint32_t)key || !*path)
		return 0; /* no thread, no path: a damaged record names nothing */
	return note_add(s, key, path, ts);
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
		out[n].name = s->cg_paths[s->cg_log[i].path];
	}
	return n;
}

long ws_session_cgroups_evict(struct ws_session *s, uint64_t before)
{
	uint32_t *map = s->ncg_log ? calloc(s->ncg_log, sizeof(*map)) : NULL; /* old -> new + 1 */
	struct ws_table kept;
	long gone = 0;
	size_t n = 0;

	if (s->ncg_log && !map)
		return -ENOMEM;
	/* the notes of the threads kept: each one's history, from its latest note back */
	for (size_t i = 0; i < s->cg_threads.cap; i++) {
		const uint32_t *v = ws_table_at(&s->cg_threads, i);

		if (!v)
			continue;
		if (!*v || *v == NOT_READ || *v > s->ncg_log || s->cg_log[*v - 1].seen < before) {
			gone++;
			continue;
		}
		for (uint32_t j = *v; j; j = s->cg_log[j - 1].prev)
			map[j - 1] = 1;
	}
	if (!gone) {
		free(map);
		return 0;
	}
	/* numbered anew, in order; the table first: without memory for it, nothing changed */
	for (size_t i = 0; i < s->ncg_log; i++)
		if (map[i])
			map[i] = (uint32_t)++n;
	ws_table_init(&kept, sizeof(uint32_t));
	for (size_t i = 0; i < s->cg_threads.cap; i++) {
		const uint32_t *v = ws_table_at(&s->cg_threads, i);
		uint32_t *nv;

		if (!v || !*v || *v == NOT_READ || *v > s->ncg_log || !map[*v - 1])
			continue;
		if (!(nv = ws_table_put(&kept, ws_table_key_of(v), NULL))) {
			ws_table_free(&kept);
			free(map);
			return -ENOMEM;
		}
		*nv = map[*v - 1];
	}
	/* a note moves only down (its new number is not above its old one) */
	for (size_t i = 0; i < s->ncg_log; i++)
		if (map[i])
			s->cg_log[map[i] - 1] = s->cg_log[i];
	for (size_t i = 0; i < n; i++)
		if (s->cg_log[i].prev)
			s->cg_log[i].prev = map[s->cg_log[i].prev - 1];
	ws_table_free(&s->cg_threads);
	s->cg_threads = kept;
	s->ncg_log = n;
	free(map);
	/* the room of a busier past given back, half of it kept for what comes */
	if (s->cg_log_cap > 2048 && n < s->cg_log_cap / 4) {
		size_t cap = n > 1024 ? 2 * n : 2048;
		struct cg_note *l = realloc(s->cg_log, cap * sizeof(*l));

		if (l) {
			s->cg_log = l;
			s->cg_log_cap = cap;
		}
	}
	return gone;
}

void session_cgroups_free(struct ws_session *s)
{
	for (size_t i = 0; i < s->ncg_paths; i++)
		free(s->cg_paths[i]);
	free(s->cg_paths);
	free(s->cg_log);
	free(s->cg_ids);
	ws_table_free(&s->cg_threads);
}
