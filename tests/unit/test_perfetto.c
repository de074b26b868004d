// SPDX-License-Identifier: MIT
/*
 * The Perfetto export's wakeup arrows: each end must lie in a slice of its thread's track (a
 * flow binds to the slice that encloses it; Perfetto drops one with none), and a track's
 * slices must nest. A traced thread's timeline gives the slices; a thread without one there
 * (untraced, a kernel helper, before it was first seen) gets marker slices, and chains reach
 * the export in the order their waits end, not in the order of their wakeups.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report/perfetto.h"

#define PID 100
#define VICTIM 101
#define OTHER 102
#define TRACED_WAKER 103
#define HELPER 17  /* a kernel thread working for the traced process */
#define UNTRACED 7 /* a thread of another process */
#define MS 1000000ULL

static struct ws_perfetto *p;
static struct ws_thread threads[4];

static struct ws_thread *thread(int i, uint32_t tid, uint32_t pid, const char *comm, bool helper)
{
	struct ws_thread *t = &threads[i];

	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->pid = pid;
	snprintf(t->comm, sizeof(t->comm), "%s", comm);
	t->helper = helper;
	t->born = 1 * MS;
	return t;
}

/* A traced thread's timeline over [0 ms, 100 ms): blocked to @wake, then running. */
static void timeline(const struct ws_thread *t, uint64_t wake)
{
	struct ws_ival blocked = { .start = t->born, .end = wake, .state = WS_STATE_BLOCKED };
	struct ws_ival running = { .start = wake, .end = 100 * MS, .state = WS_STATE_RUNNING };

	cr_assert_eq(ws_perfetto_ival(p, t, &blocked, NULL), 0);
	cr_assert_eq(ws_perfetto_ival(p, t, &running, NULL), 0);
}

static void link_of(struct ws_link *l, const struct ws_thread *t, uint32_t tid, uint32_t pid,
		    const char *comm, uint64_t start, uint64_t end, uint32_t woken_by)
{
	memset(l, 0, sizeof(*l));
	l->thread = t;
	l->tid = tid;
	l->pid = pid;
	l->comm = comm;
	l->kind = "wakeup";
	l->start = start;
	l->dur = end - start;
	l->woken_by = woken_by;
	l->has_woken_by = woken_by != 0;
}

/* A chain of two links: @wakee's wait [start, wake) ended by @waker's wakeup. */
static void chain2(struct ws_thread *wakee, const struct ws_thread *waker, uint32_t waker_tid,
		   uint32_t waker_pid, const char *waker_comm, uint64_t start, uint64_t wake)
{
	struct ws_chain c;

	memset(&c, 0, sizeof(c));
	c.victim = wakee;
	c.start = start;
	c.wake = c.end = wake;
	c.nlinks = 2;
	link_of(&c.links[0], wakee, wakee->tid, wakee->pid, wakee->comm, start, wake, waker_tid);
	link_of(&c.links[1], waker, waker_tid, waker_pid, waker_comm, start, wake, 0);
	cr_assert_eq(ws_perfetto_chain(p, &c), 0);
}

struct slice {
	uint32_t tid;
	uint64_t a, b; /* ns */
};

/* "key":123.456 (microseconds with nanosecond decimals) in @line, as ns */
static bool us_of(const char *line, const char *key, uint64_t *ns)
{
	const char *s = strstr(line, key);
	uint64_t us;
	unsigned int frac;

	if (!s || sscanf(s + strlen(key), "%" SCNu64 ".%3u", &us, &frac) != 2)
		return false;
	*ns = us * 1000 + frac;
	return true;
}

static bool tid_of(const char *line, uint32_t *tid)
{
	const char *s = strstr(line, "\"tid\":");

	return s && sscanf(s + 6, "%" SCNu32, tid) == 1;
}

/*
 * Write the export and check it: every flow end lies in a slice of its tid (bounds included),
 * and no two slices of a tid overlap without nesting. Returns the number of flows.
 */
static int check_export(int *nmarkers)
{
	struct slice sl[64];
	struct slice fl[64];
	int nsl = 0, nfl = 0;
	struct ws_clock clock = { 0 };
	char *text = NULL, *line, *save = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	cr_assert_not_null(m);
	cr_assert_eq(ws_perfetto_write(p, m, &clock), 0);
	cr_assert_eq(fclose(m), 0);
	*nmarkers = 0;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct slice s;
		uint64_t dur;

		if (strstr(line, "\"ph\":\"X\"")) {
			cr_assert(tid_of(line, &s.tid) && us_of(line, "\"ts\":", &s.a) &&
					  us_of(line, "\"dur\":", &dur),
				  "bad slice: %s", line);
			s.b = s.a + dur;
			cr_assert_lt(nsl, 64);
			sl[nsl++] = s;
			*nmarkers += strstr(line, "\"cat\":\"wakeup\"") != NULL;
		} else if (strstr(line, "\"ph\":\"s\"") || strstr(line, "\"ph\":\"f\"")) {
			cr_assert(tid_of(line, &s.tid) && us_of(line, "\"ts\":", &s.a),
				  "bad flow end: %s", line);
			cr_assert_lt(nfl, 64);
			fl[nfl++] = s;
		}
	}
	free(text);
	for (int i = 0; i < nfl; i++) {
		bool in = false;

		for (int j = 0; j < nsl && !in; j++)
			in = sl[j].tid == fl[i].tid && sl[j].a <= fl[i].a && fl[i].a <= sl[j].b;
		cr_expect(in, "the flow end at %" PRIu64 " ns is in no slice of tid %u", fl[i].a,
			  fl[i].tid);
	}
	for (int i = 0; i < nsl; i++)
		for (int j = i + 1; j < nsl; j++) {
			const struct slice *x = &sl[i], *y = &sl[j];
			bool overlap = x->tid == y->tid && x->a < y->b && y->a < x->b;
			bool nested =
				(x->a <= y->a && y->b <= x->b) || (y->a <= x->a && x->b <= y->b);

			cr_expect(!overlap || nested,
				  "tid %u: slices [%" PRIu64 ", %" PRIu64 "] and [%" PRIu64
				  ", %" PRIu64 "] overlap",
				  x->tid, x->a, x->b, y->a, y->b);
		}
	return nfl / 2;
}

static void setup(void)
{
	p = ws_perfetto_new();
	cr_assert_not_null(p);
}

static void teardown(void)
{
	ws_perfetto_free(p);
}

TestSuite(perfetto, .init = setup, .fini = teardown);

/* A traced waker's own slices carry the arrow: no marker. */
Test(perfetto, traced_waker_needs_no_marker)
{
	struct ws_thread *v = thread(0, VICTIM, PID, "victim", false);
	struct ws_thread *w = thread(1, TRACED_WAKER, PID, "waker", false);
	int markers;

	timeline(v, 40 * MS);
	timeline(w, 10 * MS);
	chain2(v, w, w->tid, w->pid, w->comm, 5 * MS, 40 * MS);
	cr_assert_eq(check_export(&markers), 1);
	cr_assert_eq(markers, 0);
}

/* A kernel helper's timeline is followed but not exported: its end of the arrow gets a marker. */
Test(perfetto, helper_waker_gets_a_marker)
{
	struct ws_thread *v = thread(0, VICTIM, PID, "victim", false);
	struct ws_thread *h = thread(1, HELPER, HELPER, "rcu_exp_gp_kthr", true);
	int markers;

	timeline(v, 40 * MS);
	chain2(v, h, h->tid, h->pid, h->comm, 5 * MS, 40 * MS);
	cr_assert_eq(check_export(&markers), 1);
	cr_assert_eq(markers, 1);
}

/* A chain that goes on through a helper: the helper was woken too, and that end needs one. */
Test(perfetto, helper_wakee_gets_a_marker)
{
	struct ws_thread *v = thread(0, VICTIM, PID, "victim", false);
	struct ws_thread *h = thread(1, HELPER, HELPER, "kworker/0:1", true);
	struct ws_thread *w = thread(2, TRACED_WAKER, PID, "waker", false);
	struct ws_chain c;
	int markers;

	timeline(v, 40 * MS);
	timeline(w, 10 * MS);
	memset(&c, 0, sizeof(c));
	c.victim = v;
	c.start = 5 * MS;
	c.wake = c.end = 40 * MS;
	c.nlinks = 3;
	link_of(&c.links[0], v, v->tid, v->pid, v->comm, 5 * MS, 40 * MS, HELPER);
	link_of(&c.links[1], h, h->tid, h->pid, h->comm, 20 * MS, 30 * MS, TRACED_WAKER);
	link_of(&c.links[2], w, w->tid, w->pid, w->comm, 5 * MS, 30 * MS, 0);
	cr_assert_eq(ws_perfetto_chain(p, &c), 0);
	cr_assert_eq(check_export(&markers), 2);
	cr_assert_eq(markers, 2);
}

/*
 * One untraced thread wakes two victims; the later wakeup's chain comes first (the other
 * victim waited long for a CPU after its wakeup). Both arrows need their own marker.
 */
Test(perfetto, markers_in_any_order)
{
	struct ws_thread *a = thread(0, VICTIM, PID, "a", false);
	struct ws_thread *b = thread(1, OTHER, PID, "b", false);
	int markers;

	timeline(a, 40 * MS);
	timeline(b, 20 * MS);
	chain2(a, NULL, UNTRACED, UNTRACED, "cron", 5 * MS, 40 * MS);
	chain2(b, NULL, UNTRACED, UNTRACED, "cron", 5 * MS, 20 * MS);
	/* a third wakeup 300 ns after the second: its marker is cut short, not overlapping */
	chain2(a, NULL, UNTRACED, UNTRACED, "cron", 5 * MS, 20 * MS + 300);
	cr_assert_eq(check_export(&markers), 3);
	cr_assert_eq(markers, 3);
}

/* A waker seen only later (before its first event) gets a marker too. */
Test(perfetto, waker_before_its_timeline)
{
	struct ws_thread *v = thread(0, VICTIM, PID, "victim", false);
	struct ws_thread *w = thread(1, TRACED_WAKER, PID, "waker", false);
	int markers;

	w->born = 50 * MS;
	timeline(v, 40 * MS);
	timeline(w, 60 * MS);
	chain2(v, w, w->tid, w->pid, w->comm, 5 * MS, 40 * MS);
	cr_assert_eq(check_export(&markers), 1);
	cr_assert_eq(markers, 1);
}

/* The export as one string (freed by the caller). */
static char *export_text(void)
{
	struct ws_clock clock = { 0 };
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	cr_assert_not_null(m);
	cr_assert_eq(ws_perfetto_write(p, m, &clock), 0);
	cr_assert_eq(fclose(m), 0);
	return text;
}

/* Copy the JSON string value after @key in @line (no escapes in these tests) into @out. */
static void str_of(const char *line, const char *key, char *out, size_t len)
{
	const char *s = strstr(line, key), *e;

	cr_assert_not_null(s, "no %s in %s", key, line);
	s += strlen(key);
	e = strchr(s, '"');
	cr_assert_not_null(e);
	snprintf(out, len, "%.*s", (int)(e - s), s);
}

/* The args object of @line, from its "{" to the end of the line. */
static void args_of(const char *line, char *out, size_t len)
{
	const char *s = strstr(line, "\"args\":{");

	cr_assert_not_null(s, "no args in %s", line);
	snprintf(out, len, "%s", s);
}

static void futex_claim(struct ws_claim *cl, uint64_t addr)
{
	memset(cl, 0, sizeof(*cl));
	snprintf(cl->kind, sizeof(cl->kind), "futex");
	snprintf(cl->evidence, sizeof(cl->evidence), "futex wait");
	cl->nfields = 1;
	snprintf(cl->fields[0].key, sizeof(cl->fields[0].key), "addr");
	cl->fields[0].type = WS_FIELD_HEX;
	cl->fields[0].u = addr;
}

/* The name and args of the export's first two complete slices of category @cat (NULL: any).
 * Asserts there are exactly two. */
static void two_slices(const char *cat, char name[2][128], char args[2][512])
{
	char *text = export_text(), *line, *save = NULL, want[64];
	int n = 0;

	snprintf(want, sizeof(want), "\"cat\":\"%s\"", cat ? cat : "");
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strstr(line, "\"ph\":\"X\"") || (cat && !strstr(line, want)))
			continue;
		cr_assert_lt(n, 2);
		str_of(line, "\"name\":\"", name[n], sizeof(name[n]));
		args_of(line, args[n], sizeof(args[n]));
		n++;
	}
	free(text);
	cr_assert_eq(n, 2);
}

/*
 * Perfetto groups and aggregates slices by name: waits of one kind share a name whatever
 * their values, and the values (here the futex address) are in args.
 */
Test(perfetto, futex_waits_share_a_name)
{
	struct ws_thread *a = thread(0, VICTIM, PID, "a", false);
	struct ws_thread *b = thread(1, OTHER, PID, "b", false);
	struct ws_ival ia = { .start = 1 * MS, .end = 2 * MS, .state = WS_STATE_BLOCKED };
	struct ws_ival ib = { .start = 3 * MS, .end = 4 * MS, .state = WS_STATE_BLOCKED };
	struct ws_claim ca, cb;
	char name[2][128], args[2][512];

	futex_claim(&ca, 0x7f0000001000);
	futex_claim(&cb, 0x7f0000002000);
	cr_assert_eq(ws_perfetto_ival(p, a, &ia, &ca), 0);
	cr_assert_eq(ws_perfetto_ival(p, b, &ib, &cb), 0);
	two_slices(NULL, name, args);
	cr_expect_str_eq(name[0], name[1]);
	cr_expect_str_eq(name[0], "blocked: futex");
	cr_expect_str_neq(args[0], args[1]);
	cr_expect_not_null(strstr(args[0], "\"addr\":\"0x7f0000001000\""), "%s", args[0]);
	cr_expect_not_null(strstr(args[1], "\"addr\":\"0x7f0000002000\""), "%s", args[1]);
}

/* Markers are named by what they are; the thread at the arrow's other end is in args. */
Test(perfetto, markers_share_a_name)
{
	struct ws_thread *a = thread(0, VICTIM, PID, "a", false);
	struct ws_thread *b = thread(1, OTHER, PID, "b", false);
	char name[2][128], args[2][512];

	timeline(a, 40 * MS);
	timeline(b, 20 * MS);
	chain2(a, NULL, UNTRACED, UNTRACED, "cron", 5 * MS, 40 * MS);
	chain2(b, NULL, UNTRACED + 1, UNTRACED + 1, "atd", 5 * MS, 20 * MS);
	two_slices("wakeup", name, args);
	cr_expect_str_eq(name[0], name[1]);
	cr_expect_str_eq(name[0], "wakes");
	cr_expect_str_neq(args[0], args[1]);
}

/* Issue 32: pid 30's leader is in /b, pid 20's in /a, pid 40's cgroup is not known. */
static const char *cg_of(void *ctx, uint32_t tid, uint32_t pid, uint64_t ts)
{
	(void)ctx;
	(void)ts;
	(void)tid;
	return pid == 30 ? "/b" : pid == 20 ? "/a" : NULL;
}

/* The metadata line @name of process @pid in @text, into @out ("" when there is none). */
static void proc_meta(const char *text, const char *name, uint32_t pid, char *out, size_t len)
{
	char key[96];
	const char *at, *end;

	snprintf(key, sizeof(key), "\"name\":\"%s\",\"pid\":%u,", name, pid);
	at = strstr(text, key);
	out[0] = 0;
	if (!at)
		return;
	end = strchr(at, '\n');
	snprintf(out, len, "%.*s", (int)(end ? end - at : (long)strlen(at)), at);
}

/* Processes are labelled with their cgroup and sorted by it: one cgroup's next to each other. */
Test(perfetto, processes_grouped_by_cgroup)
{
	char *text, line[256];

	ws_perfetto_set_cgroups(p, cg_of, NULL);
	timeline(thread(0, 30, 30, "b1", false), 10 * MS);
	timeline(thread(1, 31, 30, "b1-worker", false), 10 * MS);
	timeline(thread(2, 20, 20, "a1", false), 10 * MS);
	timeline(thread(3, 40, 40, "nowhere", false), 10 * MS);
	text = export_text();
	proc_meta(text, "process_labels", 20, line, sizeof(line));
	cr_assert(strstr(line, "\"args\":{\"labels\":\"/a\"}"), "%s", line);
	proc_meta(text, "process_sort_index", 20, line, sizeof(line));
	cr_assert(strstr(line, "\"sort_index\":0}"), "%s", line);
	proc_meta(text, "process_labels", 30, line, sizeof(line));
	cr_assert(strstr(line, "\"labels\":\"/b\""), "%s", line);
	proc_meta(text, "process_sort_index", 30, line, sizeof(line));
	cr_assert(strstr(line, "\"sort_index\":1}"), "%s", line);
	/* not known: no label, after every cgroup */
	proc_meta(text, "process_labels", 40, line, sizeof(line));
	cr_assert_str_eq(line, "");
	proc_meta(text, "process_sort_index", 40, line, sizeof(line));
	cr_assert(strstr(line, "\"sort_index\":2}"), "%s", line);
	free(text);
}
