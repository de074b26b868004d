// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <whyslow/syscall_names.h>

#include "stuck.h"
#include "ustack_now.h"
#include "waitfor.h"
#include "access/useropen.h"
#include "base/clock.h"
#include "base/util.h"

#define MAX_PROCS 64 /* processes a snapshot follows owners into */
/* user stacks one snapshot reads at most (~0.5 ms each here once its files are open: 1,000
 * blocked threads took `stuck` 1 s) */
#define MAX_STACKS 2000

/* ---- sampling ------------------------------------------------------------------------------ */

struct sample {
	struct ws_stuck_thread *t;
	size_t n;
	uint32_t pids[MAX_PROCS];
	int npids;
	bool no_syscall_access;
	const struct ws_open_sources *src;
	struct ws_ustack_now *un; /* read the blocked threads' user stacks (NULL: not) */
	size_t nstacks;
	struct ws_gil_waits *gil; /* which waits are for a CPython GIL (NULL: not asked) */
};

struct live_ctx {
	uint32_t pid; /* the waiter's process */
};

/*
 * A lock's owner must be a live thread of the waiter's process, or for a process-shared lock of
 * a process of the same user: a lock word is written by whoever maps it, and another user's
 * process named there is that user's claim, not evidence (it would let anyone have root's
 * report blame any process).
 */
static bool tid_live(void *ctx, uint32_t tid, bool pshared)
{
	const struct live_ctx *l = ctx;
	uint32_t tgid = ws_procsnap_tgid(tid);
	struct ws_reader_id a, b;

	if (!tgid)
		return false;
	if (tgid == l->pid)
		return true;
	return pshared && !ws_reader_id_of((pid_t)l->pid, &a) &&
	       !ws_reader_id_of((pid_t)tgid, &b) && a.uid == b.uid;
}

static enum ws_open_kind core_kind(const struct ws_task_snap *s)
{
	if (!ws_task_blocked(s))
		return WS_OPEN_NONE;
	if (s->state == 'T' || s->state == 't')
		return WS_OPEN_STOPPED;
	return WS_OPEN_BLOCKED;
}

/* Storage for what a ws_open_wait points to. */
struct open_wait_names {
	const char *kstack[WS_SNAP_KSTACK];
	const char *ustack[WS_STACK_MAX_FRAMES];
};

/* What the sources are told of @t (@names: storage for its frames' names). */
static void open_wait_of(const struct ws_stuck_thread *t, struct ws_open_wait *w,
			 struct open_wait_names *names)
{
	const char **frames = names->kstack;

	memset(w, 0, sizeof(*w));
	w->sz = sizeof(*w);
	w->tid = t->s.tid;
	w->pid = t->s.pid;
	w->state = t->s.state;
	w->syscall.arch = t->s.arch;
	w->syscall.nr = t->s.in_syscall ? (int32_t)t->s.nr : WS_SYSCALL_NONE;
	if (t->s.in_syscall)
		memcpy(w->syscall.args, t->s.args, sizeof(w->syscall.args));
	for (int i = 0; i < t->s.nkstack && i < WS_SNAP_KSTACK; i++)
		frames[i] = t->s.kstack[i];
	w->nkstack = t->s.nkstack;
	w->kstack = frames;
	for (uint32_t i = 0; t->ustack && i < t->ustack->n && i < WS_STACK_MAX_FRAMES; i++) {
		if (t->ustack->frames[i].kernel)
			break;
		names->ustack[w->nustack++] = t->ustack->frames[i].f.sym;
	}
	w->ustack = names->ustack;
}

/* The sources' words for blocked @t (none of them: an unknown wait). */
static void describe_thread(struct ws_stuck_thread *t, const struct ws_open_sources *src)
{
	struct ws_open_wait w;
	struct open_wait_names names;

	t->source = -1;
	t->what[0] = 0;
	memset(&t->claim, 0, sizeof(t->claim));
	if (t->kind != WS_OPEN_BLOCKED || !src)
		return;
	open_wait_of(t, &w, &names);
	t->source = src->describe(src->ctx, &w, &t->claim, t->what, sizeof(t->what));
}

/*
 * A wait for the GIL: held by the thread state the GIL names as its last holder while it is
 * locked (its condition variable's word names nobody; the futex source says only "futex").
 */
static void gil_owner(struct ws_stuck_thread *t)
{
	const struct ws_gil_wait *g = &t->gil;
	struct live_ctx l = { t->s.pid };
	const char *why = NULL;

	memset(&t->owner, 0, sizeof(t->owner));
	t->owner.sz = sizeof(t->owner);
	t->lock = true;
	t->owner.lock = g->addr;
	snprintf(t->owner.lock_name, sizeof(t->owner.lock_name), "the GIL");
	if (!g->read)
		why = "the GIL's state is not readable in the process's memory now";
	else if (!g->st.locked)
		why = "the GIL was free when read: it was changing hands";
	else if (!g->st.holder_tid || g->st.holder_tid == t->s.tid ||
		 !tid_live(&l, g->st.holder_tid, false))
		why = "the GIL's last holder is not another live thread of this process";
	if (why) {
		snprintf(t->owner.why, sizeof(t->owner.why), "%s", why);
		return;
	}
	t->owner.tid = g->st.holder_tid;
	snprintf(t->owner.evidence, sizeof(t->owner.evidence), "GIL's last_holder");
	snprintf(t->owner.evidence_key, sizeof(t->owner.evidence_key), "gil_last_holder");
}

/*
 * Is @st waiting in sem_wait()? A semaphore's word counts, it names no owner: read as a mutex,
 * it gives a wrong reason (a CPython threading.Lock is one, so its deadlocks read "a PI/PP
 * mutex waited on with a plain futex call").
 */
static bool in_sem_wait(const struct ws_stack *st)
{
	static const char *const sem[] = { "__new_sem_wait", "sem_wait", "sem_timedwait",
					   "sem_clockwait", "__sem_wait" };

	for (uint32_t i = 0; st && i < st->n; i++) {
		const char *sym = st->frames[i].f.sym;

		if (st->frames[i].kernel || !sym)
			continue;
		for (size_t k = 0; k < sizeof(sem) / sizeof(sem[0]); k++)
			if (!strncmp(sym, sem[k], strlen(sem[k])))
				return true;
	}
	return false;
}

/* Who holds the lock @t waits for, if its source says it is one: from the lock itself. */
static void read_owner(struct ws_stuck_thread *t, const struct ws_open_sources *src)
{
	struct live_ctx l = { t->s.pid };
	struct ws_open_wait w;
	struct open_wait_names names;

	memset(&t->owner, 0, sizeof(t->owner));
	t->owner.sz = sizeof(t->owner);
	t->lock = false;
	if (t->gil.waits) {
		gil_owner(t);
		return;
	}
	if (t->source < 0 || !src || !src->owner)
		return;
	open_wait_of(t, &w, &names);
	ws_stuck_owner_of(t, src, &w, tid_live, &l,
			  "the process's memory is not readable (needs ptrace access)");
	if (t->lock && !t->owner.tid && in_sem_wait(t->ustack))
		snprintf(t->owner.why, sizeof(t->owner.why), "%s",
			 "a semaphore (sem_wait): it records no owner to name");
}

/*
 * Is blocked @t asleep where take_gil waits for a CPython GIL? Told from what it is doing (a
 * futex call, its word the first argument), whichever source explained the wait.
 */
static void read_gil(struct sample *sm, struct ws_stuck_thread *t)
{
	const char *call;

	if (!sm->gil || !t->s.in_syscall)
		return;
	call = ws_syscall_name(t->s.arch, (int)t->s.nr);
	if (!call || strcmp(call, "futex"))
		return;
	ws_gil_wait_read(sm->gil, t->s.pid, t->s.args[0], &t->gil);
	/* what it waits for, from what it was doing: not "a condition variable, not a lock" */
	if (t->gil.waits)
		snprintf(t->what, sizeof(t->what),
			 "%s (futex 0x%" PRIx64 ", where take_gil waits for it)", t->gil.name,
			 t->gil.addr);
}

void ws_stuck_owner_of(struct ws_stuck_thread *t, const struct ws_open_sources *src,
		       const struct ws_open_wait *w, ws_tid_live_fn is_live, void *live_ctx,
		       const char *unreadable)
{
	int rc = src->owner(src->ctx, t->source, w, &t->claim, is_live, live_ctx, &t->owner);

	if (rc == 0)
		return;
	t->lock = true;
	if (rc < 0) {
		t->owner.tid = 0;
		snprintf(t->owner.why, sizeof(t->owner.why), "%s", unreadable);
	}
}

/* A frame of @st that retries a lock between sleeps: SQLite's busy handler (NULL: none). */
static const char *busy_frame(const struct ws_stack *st)
{
	for (uint32_t i = 0; st && i < st->n; i++) {
		const char *sym = st->frames[i].f.sym;

		if (!st->frames[i].kernel && sym && strstr(sym, "BusyHandler"))
			return sym;
	}
	return NULL;
}

/* Locks a thread may poll for: at most this many named per thread */
#define MAX_FLOCKS 4

/*
 * A thread asleep in nanosleep may be polling for a file lock (SQLite's busy handler, an
 * F_SETLK retry loop): the locks other processes hold on files its process has open, read once
 * per process. Only evidence that a lock was held: nothing says it waits for that one.
 */
static void read_file_locks(struct ws_stuck *st)
{
	struct ws_file_lock found[MAX_FLOCKS];
	uint32_t pid = 0;
	int n = 0;

	for (size_t i = 0; i < st->n; i++) {
		struct ws_stuck_thread *t = &st->t[i];
		struct ws_syscall sys = { .nr = (int32_t)t->s.nr, .arch = t->s.arch };

		if (t->kind != WS_OPEN_BLOCKED || !t->s.in_syscall ||
		    !(ws_syscall_is(&sys, "nanosleep") || ws_syscall_is(&sys, "clock_nanosleep")))
			continue;
		if (t->s.pid != pid) {
			pid = t->s.pid;
			n = ws_file_locks_of(pid, found, MAX_FLOCKS);
		}
		if (n <= 0 || !(t->flocks = malloc((size_t)n * sizeof(*found))))
			continue;
		memcpy(t->flocks, found, (size_t)n * sizeof(*found));
		t->nflocks = (uint32_t)n;
		t->polls_in = busy_frame(t->ustack);
	}
}

static bool have_pid(const struct sample *sm, uint32_t pid)
{
	for (int i = 0; i < sm->npids; i++)
		if (sm->pids[i] == pid)
			return true;
	return false;
}

/* Read @t's user stack into it, if this sample reads them. */
static void read_stack(struct sample *sm, struct ws_stuck_thread *t)
{
	if (!sm->un || t->kind == WS_OPEN_NONE)
		return;
	if (sm->nstacks >= MAX_STACKS) {
		t->ustack_why = "not read: too many threads blocked";
		return;
	}
	sm->nstacks++;
	if (ws_ustack_now_read(sm->un, &t->s, &t->ustack, &t->ustack_why) == -ENOMEM)
		t->ustack_why = "not read: out of memory";
}

/* Snapshot one process into @sm. 0 or -errno. */
static int sample_pid(struct sample *sm, uint32_t pid)
{
	struct ws_task_snap *v;
	struct ws_stuck_thread *nt;
	size_t n;
	int err = ws_procsnap_take(pid, &v, &n);

	if (err)
		return err;
	nt = realloc(sm->t, (sm->n + n) * sizeof(*nt));
	if (!nt) {
		free(v);
		return -ENOMEM;
	}
	sm->t = nt;
	for (size_t i = 0; i < n; i++) {
		struct ws_stuck_thread *t = &sm->t[sm->n++];

		memset(t, 0, sizeof(*t));
		t->s = v[i];
		t->kind = core_kind(&t->s);
		if (t->s.syscall_denied)
			sm->no_syscall_access = true;
		read_stack(sm, t);
		describe_thread(t, sm->src);
		read_gil(sm, t);
	}
	free(v);
	return 0;
}

/*
 * Sample @pids and every process that owns a lock one of their threads waits
 * for, and read those owners. 0, or -errno when none of @pids could be read.
 */
static int sample(struct sample *sm, const uint32_t *pids, int npids,
		  const struct ws_open_sources *src, struct ws_ustack_now *un,
		  struct ws_gil_waits *gil)
{
	int ok = 0, err = -ESRCH;

	memset(sm, 0, sizeof(*sm));
	sm->src = src;
	sm->un = un;
	sm->gil = gil;
	for (int i = 0; i < npids && sm->npids < MAX_PROCS; i++) {
		if (have_pid(sm, pids[i]))
			continue;
		sm->pids[sm->npids++] = pids[i];
		int e = sample_pid(sm, pids[i]);

		if (e == -ENOMEM)
			return e;
		if (!e)
			ok++;
		else
			err = e;
	}
	if (!ok)
		return err;
	/* owners first in the named processes, then in processes they lead to */
	for (size_t i = 0; i < sm->n; i++) {
		struct ws_stuck_thread *t = &sm->t[i];
		uint32_t tgid;

		read_owner(t, src);
		if (!t->owner.tid || sm->npids == MAX_PROCS)
			continue;
		tgid = ws_procsnap_tgid(t->owner.tid);
		if (tgid && !have_pid(sm, tgid)) {
			sm->pids[sm->npids++] = tgid;
			if (sample_pid(sm, tgid) == -ENOMEM)
				return -ENOMEM;
		}
	}
	return 0;
}

/* The same wait in both samples, and no timeslice between them: it never ran. */
static bool same_wait(const struct ws_stuck_thread *a, const struct ws_stuck_thread *b)
{
	return a && ws_task_blocked(&a->s) && ws_task_blocked(&b->s) && a->kind == b->kind &&
	       a->source == b->source && !strcmp(a->claim.kind, b->claim.kind) &&
	       a->s.in_syscall == b->s.in_syscall && a->s.nr == b->s.nr &&
	       !memcmp(a->s.args, b->s.args, sizeof(a->s.args)) && a->s.have_timeslices &&
	       b->s.have_timeslices && a->s.timeslices == b->s.timeslices;
}

static void bound(struct ws_stuck_thread *t, uint64_t ns, const char *why)
{
	if (ns > t->at_least_ns) {
		t->at_least_ns = ns;
		t->since_why = why;
	}
}

int ws_stuck_take(struct ws_stuck *st, const uint32_t *pids, int npids, uint64_t gap_ns,
		  const struct ws_stuck *earlier, const struct ws_open_sources *src)
{
	return ws_stuck_take_flags(st, pids, npids, gap_ns, earlier, src, 0);
}

int ws_stuck_take_flags(struct ws_stuck *st, const uint32_t *pids, int npids, uint64_t gap_ns,
			const struct ws_stuck *earlier, const struct ws_open_sources *src,
			unsigned int flags)
{
	struct sample a, b;
	struct timespec gap = { (time_t)(gap_ns / 1000000000ULL), (long)(gap_ns % 1000000000ULL) };
	struct ws_ustack_now *un = NULL;
	struct ws_gil_waits *gil = NULL;
	int err;

	memset(st, 0, sizeof(*st));
	/* without it, a GIL wait is a futex wait like another: said, not fatal */
	if (ws_gil_waits_new(&gil) == -ENOMEM)
		return -ENOMEM;
	if ((err = sample(&a, pids, npids, src, NULL, gil))) {
		free(a.t);
		ws_gil_waits_free(gil);
		return err;
	}
	nanosleep(&gap, NULL);
	st->mono_ns = ws_clock_mono_now();
	{
		struct timespec now;

		clock_gettime(CLOCK_REALTIME, &now);
		st->wall_ns = (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
	}
	/* the second sample covers every process the first one reached; its stacks are kept */
	if ((flags & WS_STUCK_STACKS) && (err = ws_ustack_now_new(&un))) {
		free(a.t);
		ws_gil_waits_free(gil);
		return err;
	}
	err = sample(&b, a.pids, a.npids, src, un, gil);
	ws_ustack_now_free(un);
	ws_gil_waits_free(gil);
	if (err) {
		free(a.t);
		ws_stuck_free_threads(b.t, b.n);
		return err;
	}
	for (size_t i = 0; i < b.n; i++) {
		struct ws_stuck_thread *t = &b.t[i];
		const struct ws_stuck_thread *old = ws_stuck_find(a.t, a.n, t->s.tid);

		if (t->kind == WS_OPEN_NONE)
			continue;
		t->steady = same_wait(old, t);
		/*
		 * Asleep for the GIL in both samples, and it did not change hands between them:
		 * the same wait, though take_gil wakes every switch interval to ask for it (it
		 * can only leave once the GIL changed hands, and switch_number says it did not).
		 */
		if (!t->steady && old && ws_gil_wait_same(&old->gil, &t->gil)) {
			t->steady = true;
			bound(t, t->s.read_mono_ns - old->s.read_mono_ns,
			      "waited for the GIL in both samples, and it did not change hands");
		}
		/*
		 * A lock whose waiter and holder both never ran between the samples
		 * cannot have changed hands: keep the owner read in between.
		 */
		if (t->steady && old->owner.tid) {
			t->owner = old->owner;
			t->lock = old->lock;
		}
		bound(t, t->s.off_cpu_ns, "time since it last ran (sched clock)");
		if (t->steady)
			bound(t, t->s.read_mono_ns - old->s.read_mono_ns,
			      "did not run between two samples");
		if (earlier) {
			const struct ws_stuck_thread *e =
				ws_stuck_find(earlier->t, earlier->n, t->s.tid);

			if (same_wait(e, t))
				bound(t, t->s.read_mono_ns - e->s.read_mono_ns,
				      "did not run since tracing began");
		}
	}
	free(a.t);
	st->t = b.t;
	st->n = b.n;
	st->no_syscall_access = b.no_syscall_access;
	read_file_locks(st);

	/* deadlocks: only among steady waits whose owners the lock itself named */
	return ws_stuck_cycles(st, true);
}

int ws_stuck_cycles(struct ws_stuck *st, bool steady_only)
{
	size_t cap = st->n ? st->n : 1;
	struct ws_waitfor_node *nodes = calloc(cap, sizeof(*nodes));
	int nc;

	st->cycles = calloc(cap, sizeof(*st->cycles));
	st->cycle_len = calloc(cap, sizeof(*st->cycle_len));
	if (!nodes || !st->cycles || !st->cycle_len) {
		free(nodes);
		ws_stuck_free(st);
		return -ENOMEM;
	}
	for (size_t i = 0; i < st->n; i++) {
		nodes[i].tid = st->t[i].s.tid;
		if (!steady_only || st->t[i].steady)
			nodes[i].owner = st->t[i].owner.tid;
	}
	nc = ws_waitfor_cycles(nodes, st->n, st->cycles, st->cycle_len, (int)st->n);
	free(nodes);
	if (nc < 0) {
		ws_stuck_free(st);
		return nc;
	}
	st->ncycles = nc;
	for (size_t c = 0, at = 0; c < (size_t)nc; at += st->cycle_len[c++])
		for (size_t k = 0; k < st->cycle_len[c]; k++)
			st->t[st->cycles[at + k]].in_cycle = true;
	return 0;
}

void ws_stuck_describe(struct ws_stuck *st, const struct ws_open_sources *src)
{
	for (size_t i = 0; i < st->n; i++)
		describe_thread(&st->t[i], src);
}

int ws_stuck_stack_record(const struct ws_stuck_thread *t, struct ws_rec_hdr **out)
{
	struct ws_rec_hdr hdr = { .tid = t->s.tid, .pid = t->s.pid, .ts = t->s.read_mono_ns };
	struct ws_stack st;

	*out = NULL;
	if (!t->ustack || !ws_stuck_since(t))
		return -ENOENT;
	st = *t->ustack;
	st.wait_start = ws_stuck_since(t);
	st.wait_end = t->s.read_mono_ns;
	return ws_stackrec_encode(&hdr, &st, out);
}
