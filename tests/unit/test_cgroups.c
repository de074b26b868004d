// SPDX-License-Identifier: MIT
/*
 * Threads' cgroups (session/cgroup.c, session/session_cgroups.c): the path read from /proc, and
 * the history a session keeps of each thread's answers, as a recording gives them back.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "session/cgroup.h"
#include "session/config.h"
#include "session/session.h"
#include "session/session_impl.h"

static struct ws_config cfg;
static struct ws_session *s;

static void open_session(void)
{
	struct ws_session_opts o = { .plugin_dir = PLUGIN_BUILD_DIR, .sources = "sched" };

	memset(&cfg, 0, sizeof(cfg));
	cr_assert_eq(ws_session_open(&s, &o, &cfg), 0);
}

static void close_session(void)
{
	ws_session_free(s);
	ws_config_free(&cfg);
}

/* The cpu line of /proc/self/cgroup (v1), else the unified one: read here the plain way. */
static void expected_path(char *out, size_t len)
{
	char line[4096], v2[4096] = "";
	FILE *f = fopen("/proc/self/cgroup", "r");

	*out = 0;
	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':'), *p = c ? strchr(c + 1, ':') : NULL;

		if (!p)
			continue;
		p[strcspn(p, "\n")] = 0;
		*p = 0;
		if (!c[1])
			snprintf(v2, sizeof(v2), "%s", p + 1);
		for (char *t = strtok(c + 1, ","); t; t = strtok(NULL, ","))
			if (!strcmp(t, "cpu"))
				snprintf(out, len, "%s", p + 1);
	}
	fclose(f);
	if (!*out)
		snprintf(out, len, "%s", v2);
}

Test(cgroups, own_thread_read_from_proc)
{
	char path[4096], want[4096];
	bool v1 = false;

	expected_path(want, sizeof(want));
	cr_assert_eq(ws_cgroup_of_thread(getpid(), gettid(), path, sizeof(path), &v1), 0);
	cr_expect_str_eq(path, want);
	cr_expect_eq(path[0], '/');
	/* a thread that is not there: no path, nothing said */
	cr_expect_eq(ws_cgroup_of_thread(getpid(), 0x7ffffff0, path, sizeof(path), &v1), -ENOENT);
}

Test(cgroups, history_by_time, .init = open_session, .fini = close_session)
{
	uint64_t key = (uint64_t)40 << 32 | 41;
	struct ws_name names[8];

	cr_expect_null(ws_session_cgroup(s, 41, 40, 100));
	cr_assert_eq(ws_session_set_cgroup(s, key, "/a", 100), 0);
	cr_assert_eq(ws_session_set_cgroup(s, key, "/a", 150), 0); /* the same group: no move */
	cr_assert_eq(ws_session_set_cgroup(s, key, "/system.slice/b.service", 200), 0);
	cr_expect_eq(ws_session_ncgroups(s), 2);
	/* before the first answer, the first one; then the last one read by then */
	cr_expect_str_eq(ws_session_cgroup(s, 41, 40, 50), "/a");
	cr_expect_str_eq(ws_session_cgroup(s, 41, 40, 199), "/a");
	cr_expect_str_eq(ws_session_cgroup(s, 41, 40, 200), "/system.slice/b.service");
	cr_expect_str_eq(ws_session_cgroup(s, 41, 40, UINT64_MAX), "/system.slice/b.service");
	/* another process's thread of the same tid is another thread */
	cr_expect_null(ws_session_cgroup(s, 41, 39, 300));
	cr_expect_null(ws_session_cgroup(s, 0, 40, 300));
	/* what a recording writes: every answer, in order */
	cr_assert_eq(ws_session_cgroups(s, 0, names, 8), 2);
	cr_expect_str_eq(names[0].plugin, WS_CGROUP_NAMES);
	cr_expect_eq(names[0].key, key);
	cr_expect_str_eq(names[0].name, "/a");
	cr_expect_str_eq(names[1].name, "/system.slice/b.service");
	cr_expect_eq(ws_session_cgroups(s, 2, names, 8), 0);
	/* a damaged record names nothing */
	cr_expect_eq(ws_session_set_cgroup(s, (uint64_t)40 << 32, "/x", 1), 0);
	cr_expect_eq(ws_session_set_cgroup(s, key, "", 300), 0);
	cr_expect_eq(ws_session_ncgroups(s), 2);
}

Test(cgroups, long_path_keeps_its_end, .init = open_session, .fini = close_session)
{
	char path[400];
	const char *got;

	memset(path, 'x', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = 0;
	memcpy(path + sizeof(path) - 8, "the-end", 7);
	cr_assert_eq(ws_session_set_cgroup(s, 7, path, 1), 0);
	got = ws_session_cgroup(s, 7, 0, 1);
	cr_assert_not_null(got);
	cr_expect_eq(strlen(got), 255);
	cr_expect_eq(strncmp(got, "...", 3), 0);
	cr_expect_str_eq(got + strlen(got) - 7, "the-end");
}

Test(cgroups, live_read_once_per_thread, .init = open_session, .fini = close_session)
{
	char want[4096];
	bool v1;

	cr_assert_eq(ws_cgroup_of_thread(getpid(), gettid(), want, sizeof(want), &v1), 0);
	session_cgroup_seen(s, gettid(), getpid(), 10, false);
	cr_expect_str_eq(ws_session_cgroup(s, gettid(), getpid(), 10), want);
	cr_expect_eq(ws_session_ncgroups(s), 1);
	session_cgroup_seen(s, gettid(), getpid(), 20, false); /* known: not read again */
	session_cgroup_seen(s, gettid(), getpid(), 30, true);  /* read again, the same group */
	cr_expect_eq(ws_session_ncgroups(s), 1);
	/* a thread gone before it was read: not named, not asked again */
	session_cgroup_seen(s, 0x7ffffff0, getpid(), 40, false);
	cr_expect_null(ws_session_cgroup(s, 0x7ffffff0, getpid(), 40));
	cr_expect_eq(ws_session_ncgroups(s), 1);
}

/* An exited child not yet reaped (a zombie): its file names the root group, so it is not read. */
Test(cgroups, zombie_not_read)
{
	char path[4096], name[64], stat[512];
	pid_t child = fork();
	bool v1, zombie = false;

	cr_assert_geq(child, 0);
	if (!child)
		_exit(0);
	snprintf(name, sizeof(name), "/proc/%d/stat", child);
	for (int i = 0; i < 500 && !zombie; i++) {
		FILE *f = fopen(name, "r");
		size_t n = f ? fread(stat, 1, sizeof(stat) - 1, f) : 0;

		if (f)
			fclose(f);
		stat[n] = 0;
		zombie = strstr(stat, ") Z ") != NULL;
		if (!zombie)
			usleep(2000);
	}
	cr_assert(zombie, "the child never became a zombie");
	cr_expect_eq(ws_cgroup_of_thread(child, child, path, sizeof(path), &v1), -ENOENT);
	waitpid(child, NULL, 0);
}

/* A thread gone before its read is named by the cgroup id its record carries, when known. */
Test(cgroups, gone_thread_named_by_id, .init = open_session, .fini = close_session)
{
	struct ws_thread_event ev = { .sz = sizeof(ev), .type = WS_THREAD_NEW };
	char path[4096], m1[512], m2[512];
	uint64_t id = 0;
	bool v1;

	cr_assert_eq(ws_cgroup_of_thread(getpid(), gettid(), path, sizeof(path), &v1), 0);
	cr_assert_eq(ws_cgroup_mounts(m1, sizeof(m1), m2, sizeof(m2)), 0);
	cr_assert_eq(ws_cgroup_dir_id(v1 ? m1 : m2, path, &id), 0);
	session_cgroup_seen(s, gettid(), getpid(), 10, false); /* learns the id of its group */
	ev.ts = 20;
	ev.tid = ev.pid = 0x7ffffff0;
	ev.cg_cpu = v1 ? id : 0;
	ev.cg_dfl = v1 ? 0 : id;
	session_cgroup_born(s, &ev);
	cr_expect_str_eq(ws_session_cgroup(s, ev.tid, ev.pid, 20), path);
	/* an id no read has found names nothing */
	ev.tid = ev.pid = 0x7ffffff1;
	ev.cg_cpu = ev.cg_dfl = id + 1000000;
	session_cgroup_born(s, &ev);
	cr_expect_null(ws_session_cgroup(s, ev.tid, ev.pid, 20));
}

/*
 * watch runs for weeks: the notes of threads no record named since the window's start go
 * (exited, or asleep that long), those named since stay with their whole history, and one whose
 * read failed goes too; the answers are numbered anew, in their order.
 */
Test(cgroups, evicted_by_last_use, .init = open_session, .fini = close_session)
{
	uint64_t a = (uint64_t)40 << 32 | 41, b = (uint64_t)50 << 32 | 51;
	struct ws_name names[8];
	char mine[4096];
	bool v1;

	cr_assert_eq(ws_session_set_cgroup(s, a, "/a", 100), 0);
	cr_assert_eq(ws_session_set_cgroup(s, b, "/c", 150), 0);
	cr_assert_eq(ws_session_set_cgroup(s, a, "/b", 200), 0);
	/* a record at 5000 names thread a again (and one of a thread gone before its read) */
	session_cgroup_seen(s, 41, 40, 5000, false);
	session_cgroup_seen(s, 0x7ffffff0, getpid(), 5000, false);
	cr_expect_eq(s->cg_threads.live, 3);
	/* nothing named before 100 only: nothing goes */
	cr_expect_eq(ws_session_cgroups_evict(s, 100), 1); /* the thread never read */
	cr_expect_eq(ws_session_ncgroups(s), 3);
	cr_expect_eq(ws_session_cgroups_evict(s, 1000), 1); /* b, last named at 150 */
	cr_expect_eq(s->cg_threads.live, 1);
	cr_expect_null(ws_session_cgroup(s, 51, 50, 300));
	cr_expect_eq(ws_session_ncgroups(s), 2);
	/* a's history whole, renumbered */
	cr_expect_str_eq(ws_session_cgroup(s, 41, 40, 150), "/a");
	cr_expect_str_eq(ws_session_cgroup(s, 41, 40, 250), "/b");
	cr_assert_eq(ws_session_cgroups(s, 0, names, 8), 2);
	cr_expect_eq(names[0].key, a);
	cr_expect_str_eq(names[0].name, "/a");
	cr_expect_str_eq(names[1].name, "/b");
	/* named later still: kept; then its window passes too */
	cr_expect_eq(ws_session_cgroups_evict(s, 5000), 0);
	cr_expect_eq(ws_session_cgroups_evict(s, 5001), 1);
	cr_expect_eq(ws_session_ncgroups(s), 0);
	cr_expect_null(ws_session_cgroup(s, 41, 40, 250));
	/* a thread forgotten and named again is read again */
	cr_assert_eq(ws_cgroup_of_thread(getpid(), gettid(), mine, sizeof(mine), &v1), 0);
	session_cgroup_seen(s, gettid(), getpid(), 6000, false);
	cr_expect_eq(ws_session_cgroups_evict(s, 7000), 1);
	session_cgroup_seen(s, gettid(), getpid(), 8000, false);
	cr_expect_str_eq(ws_session_cgroup(s, gettid(), getpid(), 8000), mine);
}

/* A million threads come and go, each named once: what is kept stays the window's. */
Test(cgroups, bounded_over_time, .init = open_session, .fini = close_session)
{
	size_t most = 0;

	for (uint64_t i = 1; i <= 1000000; i++) {
		cr_assert_eq(
			ws_session_set_cgroup(s, (uint64_t)7 << 32 | i, i & 1 ? "/x" : "/y", i), 0);
		/* every 10000 records, forget what the last 20000 did not name */
		if (!(i % 10000) && i > 20000)
			cr_assert_geq(ws_session_cgroups_evict(s, i - 20000), 0);
		if (ws_session_ncgroups(s) > most)
			most = ws_session_ncgroups(s);
	}
	cr_expect_leq(most, 30000, "kept %zu answers", most);
	cr_expect_leq(s->cg_log_cap, 65536, "the log's room grew to %zu", s->cg_log_cap);
	cr_expect_leq(s->cg_threads.cap, 65536, "the table's room grew to %zu", s->cg_threads.cap);
}
