// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <whyslow/syscall_names.h>

#include "clock.h"
#include "stuck.h"
#include "useropen.h"
#include "util.h"
#include "waitfor.h"

#define MAX_PROCS 64 /* processes a snapshot follows owners into */
#define MAX_HOPS 16

/* ---- sampling ------------------------------------------------------------------------------ */

struct sample {
	struct ws_stuck_thread *t;
	size_t n;
	uint32_t pids[MAX_PROCS];
	int npids;
	bool no_syscall_access;
	const struct ws_open_sources *src;
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
	return pshared && !ws_reader_id_of((pid_t)l->pid, &a) && !ws_reader_id_of((pid_t)tgid, &b) &&
	       a.uid == b.uid;
}

static enum ws_open_kind core_kind(const struct ws_task_snap *s)
{
	if (!ws_task_blocked(s))
		return WS_OPEN_NONE;
	if (s->state == 'T' || s->state == 't')
		return WS_OPEN_STOPPED;
	return WS_OPEN_BLOCKED;
}

/* What the sources are told of @t (@frames: storage for its kernel frames). */
static void open_wait_of(const struct ws_stuck_thread *t, struct ws_open_wait *w,
			 const char *frames[WS_SNAP_KSTACK])
{
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
}

/* The sources' words for blocked @t (none of them: an unknown wait). */
static void describe_thread(struct ws_stuck_thread *t, const struct ws_open_sources *src)
{
	struct ws_open_wait w;
	const char *frames[WS_SNAP_KSTACK];

	t->source = -1;
	t->what[0] = 0;
	memset(&t->claim, 0, sizeof(t->claim));
	if (t->kind != WS_OPEN_BLOCKED || !src)
		return;
	open_wait_of(t, &w, frames);
	t->source = src->describe(src->ctx, &w, &t->claim, t->what, sizeof(t->what));
}

/* Who holds the lock @t waits for, if its source says it is one: from the lock itself. */
static void read_owner(struct ws_stuck_thread *t, const struct ws_open_sources *src)
{
	struct live_ctx l = { t->s.pid };
	struct ws_open_wait w;
	const char *frames[WS_SNAP_KSTACK];
	int rc;

	memset(&t->owner, 0, sizeof(t->owner));
	t->owner.sz = sizeof(t->owner);
	t->lock = false;
	if (t->source < 0 || !src || !src->owner)
		return;
	open_wait_of(t, &w, frames);
	rc = src->owner(src->ctx, t->source, &w, &t->claim, tid_live, &l, &t->owner);
	if (rc == 0)
		return;
	t->lock = true;
	if (rc < 0) {
		t->owner.tid = 0;
		snprintf(t->owner.why, sizeof(t->owner.why),
			 "the process's memory is not readable (needs ptrace access)");
	}
}

static bool have_pid(const struct sample *sm, uint32_t pid)
{
	for (int i = 0; i < sm->npids; i++)
		if (sm->pids[i] == pid)
			return true;
	return false;
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
		describe_thread(t, sm->src);
	}
	free(v);
	return 0;
}

/*
 * Sample @pids and every process that owns a lock one of their threads waits
 * for, and read those owners. 0, or -errno when none of @pids could be read.
 */
static int sample(struct sample *sm, const uint32_t *pids, int npids,
		  const struct ws_open_sources *src)
{
	int ok = 0, err = -ESRCH;

	memset(sm, 0, sizeof(*sm));
	sm->src = src;
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

static const struct ws_stuck_thread *find(const struct ws_stuck_thread *t, size_t n, uint32_t tid)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].s.tid == tid)
			return &t[i];
	return NULL;
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
	struct sample a, b;
	struct timespec gap = { (time_t)(gap_ns / 1000000000ULL), (long)(gap_ns % 1000000000ULL) };
	struct ws_waitfor_node *nodes;
	int err, nc;

	memset(st, 0, sizeof(*st));
	if ((err = sample(&a, pids, npids, src))) {
		free(a.t);
		return err;
	}
	nanosleep(&gap, NULL);
	st->mono_ns = ws_clock_mono_now();
	{
		struct timespec now;

		clock_gettime(CLOCK_REALTIME, &now);
		st->wall_ns = (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
	}
	/* the second sample covers every process the first one reached */
	if ((err = sample(&b, a.pids, a.npids, src))) {
		free(a.t);
		free(b.t);
		return err;
	}
	for (size_t i = 0; i < b.n; i++) {
		struct ws_stuck_thread *t = &b.t[i];
		const struct ws_stuck_thread *old = find(a.t, a.n, t->s.tid);

		if (t->kind == WS_OPEN_NONE)
			continue;
		t->steady = same_wait(old, t);
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
			const struct ws_stuck_thread *e = find(earlier->t, earlier->n, t->s.tid);

			if (same_wait(e, t))
				bound(t, t->s.read_mono_ns - e->s.read_mono_ns,
				      "did not run since tracing began");
		}
	}
	free(a.t);
	st->t = b.t;
	st->n = b.n;
	st->no_syscall_access = b.no_syscall_access;

	/* deadlocks: only among steady waits whose owners the lock itself named */
	nodes = calloc(st->n ? st->n : 1, sizeof(*nodes));
	st->cycles = calloc(st->n ? st->n : 1, sizeof(*st->cycles));
	st->cycle_len = calloc(st->n ? st->n : 1, sizeof(*st->cycle_len));
	if (!nodes || !st->cycles || !st->cycle_len) {
		free(nodes);
		ws_stuck_free(st);
		return -ENOMEM;
	}
	for (size_t i = 0; i < st->n; i++) {
		nodes[i].tid = st->t[i].s.tid;
		if (st->t[i].steady)
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

void ws_stuck_free(struct ws_stuck *st)
{
	free(st->t);
	free(st->cycles);
	free(st->cycle_len);
	free(st->texts);
	memset(st, 0, sizeof(*st));
}

/* ---- output -------------------------------------------------------------------------------- */

/* "at least" must not round up: keep three significant digits, rounded down. */
static void fmt_at_least(uint64_t ns, char *buf, size_t len)
{
	uint64_t p = 1;

	while (ns / p >= 1000)
		p *= 10;
	ws_format_duration(ns / p * p, buf, len);
}

static const char *kind_name(const struct ws_stuck_thread *t)
{
	switch (t->kind) {
	case WS_OPEN_NONE:
		return "running";
	case WS_OPEN_STOPPED:
		return "stopped";
	default:
		return t->source >= 0 ? t->claim.kind : "unknown";
	}
}

/* "clock_nanosleep"; "syscall 451" when this build's table does not know it */
static const char *syscall_name(const struct ws_task_snap *s, char *buf, size_t len)
{
	struct ws_syscall sys = { .nr = (int32_t)s->nr, .arch = s->arch };

	return ws_syscall_label(&sys, buf, len);
}

/* The words after "blocked on": its source's ("futex 0x7f.. (FUTEX_WAIT)"), or the core's. */
static void describe(const struct ws_stuck_thread *t, char *buf, size_t len)
{
	if (t->kind == WS_OPEN_STOPPED)
		snprintf(buf, len, "a stop (state %c: a signal or a debugger)", t->s.state);
	else if (t->source >= 0)
		snprintf(buf, len, "%s", t->what);
	else
		snprintf(buf, len, "an unknown wait (state %c%s)", t->s.state,
			 t->s.syscall_denied ? "; its syscall is not readable without ptrace access"
					     : "");
}

/* What named @t's lock holder, for "owner from the ...". */
static const char *evidence_of(const struct ws_stuck_thread *t)
{
	return t->owner.evidence[0] ? t->owner.evidence : "lock itself";
}

static void print_blocked(FILE *f, const struct ws_stuck_thread *t)
{
	char what[160], d[32], e[WS_ESC_LEN];

	describe(t, what, sizeof(what));
	fprintf(f, "tid %u (%s) blocked ", t->s.tid, ws_text_esc(t->s.comm, e, sizeof(e)));
	if (t->at_least_ns) {
		fmt_at_least(t->at_least_ns, d, sizeof(d));
		fprintf(f, "at least %s so far ", d);
	}
	fprintf(f, "on %s %s still waiting", what, ws_dash());
}

static void text_chain(FILE *f, const struct ws_stuck *st, const struct ws_stuck_thread *t)
{
	const struct ws_stuck_thread *seen[MAX_HOPS + 1];
	char e[WS_ESC_LEN];
	int nseen = 0;

	print_blocked(f, t);
	fputc('\n', f);
	if (t->in_cycle) { /* its owners are the DEADLOCK line above */
		fprintf(f, " %s held by tid %u (owner from the %s): the DEADLOCK above\n",
			ws_arrow(), t->owner.tid, evidence_of(t));
		return;
	}
	seen[nseen++] = t;
	while (nseen <= MAX_HOPS) {
		const struct ws_stuck_thread *o;

		if (t->lock && !t->owner.tid) {
			fprintf(f, " %s holder unknown: %s\n", ws_arrow(),
				t->owner.why[0] ? t->owner.why : "no owner evidence");
			return;
		}
		if (!t->owner.tid)
			return;
		o = find(st->t, st->n, t->owner.tid);
		fprintf(f, " %s held by tid %u (%s) (owner from the %s)\n", ws_arrow(),
			t->owner.tid, o ? ws_text_esc(o->s.comm, e, sizeof(e)) : "?",
			evidence_of(t));
		if (!o)
			return;
		for (int i = 0; i < nseen; i++)
			if (seen[i] == o) {
				fprintf(f, " %s which waits as above: a cycle (deadlock)\n",
					ws_arrow());
				return;
			}
		if (o->kind == WS_OPEN_NONE) {
			fprintf(f, " %s tid %u (%s) is running (state %c)\n", ws_arrow(), o->s.tid,
				ws_text_esc(o->s.comm, e, sizeof(e)), o->s.state);
			return;
		}
		fprintf(f, " %s ", ws_arrow());
		print_blocked(f, o);
		fputc('\n', f);
		seen[nseen++] = o;
		t = o;
	}
}

static void json_thread_fields(FILE *f, const struct ws_stuck_thread *t)
{
	char nb[32];

	fprintf(f, "\"tid\":%u,\"pid\":%u,\"comm\":", t->s.tid, t->s.pid);
	ws_json_str(f, t->s.comm);
	fprintf(f, ",\"state\":\"%c\",\"kind\":", t->s.state);
	ws_json_str(f, kind_name(t));
	fprintf(f, ",\"blocked_at_least_ns\":%" PRIu64, t->at_least_ns);
	fputs(",\"blocked_evidence\":", f);
	if (t->since_why)
		ws_json_str(f, t->since_why);
	else
		fputs("null", f);
	if (t->s.in_syscall) {
		fputs(",\"syscall\":", f);
		ws_json_str(f, syscall_name(&t->s, nb, sizeof(nb)));
		fprintf(f, ",\"nr\":%ld,\"args\":[", t->s.nr);
		for (int i = 0; i < 6; i++)
			fprintf(f, "%s\"0x%" PRIx64 "\"", i ? "," : "", t->s.args[i]);
		fputc(']', f);
	}
	if (t->source >= 0)
		ws_json_claim_fields(f, &t->claim);
	if (t->lock && t->owner.tid) {
		fprintf(f, ",\"owner\":%u,\"owner_evidence\":", t->owner.tid);
		ws_json_str(f, t->owner.evidence_key);
	} else if (t->lock) {
		fputs(",\"owner\":null,\"owner_unknown\":", f);
		ws_json_str(f, t->owner.why[0] ? t->owner.why : "no owner evidence");
	}
	fputs(",\"kstack\":[", f);
	for (int i = 0; i < t->s.nkstack; i++) {
		if (i)
			fputc(',', f);
		ws_json_str(f, t->s.kstack[i]);
	}
	fputc(']', f);
}

static void json_chain(FILE *f, const struct ws_stuck *st, const struct ws_stuck_thread *t)
{
	const struct ws_stuck_thread *hop = t;

	fputs("{\"type\":\"open_wait\",\"open\":true,", f);
	json_thread_fields(f, t);
	fprintf(f, ",\"deadlock\":%s,\"links\":[", t->in_cycle ? "true" : "false");
	/* the owners, in order, each once */
	for (int n = 0; n < MAX_HOPS && hop->owner.tid; n++) {
		const struct ws_stuck_thread *o = find(st->t, st->n, hop->owner.tid);

		if (!o || o == t)
			break;
		if (n)
			fputc(',', f);
		fputc('{', f);
		json_thread_fields(f, o);
		fputc('}', f);
		hop = o;
	}
	fputs("]}\n", f);
}

/* "tid 101 (a) waits for mutex 0x.. held by tid 102 (b), which waits for ... held by tid 101 (a)"
 */
static void text_deadlock(FILE *f, const struct ws_stuck *st, const size_t *cyc, size_t len)
{
	char e[WS_ESC_LEN];

	fputs("DEADLOCK: ", f);
	for (size_t k = 0; k < len; k++) {
		const struct ws_stuck_thread *t = &st->t[cyc[k]], *o = &st->t[cyc[(k + 1) % len]];

		if (k)
			fputs(", which waits for ", f);
		else
			fprintf(f, "tid %u (%s) waits for ", t->s.tid,
				ws_text_esc(t->s.comm, e, sizeof(e)));
		fprintf(f, "%s 0x%" PRIx64 " held by tid %u (%s)", t->owner.lock_name,
			t->owner.lock, o->s.tid, ws_text_esc(o->s.comm, e, sizeof(e)));
		if (o->s.pid != t->s.pid)
			fprintf(f, " in pid %u", o->s.pid);
	}
	fputc('\n', f);
}

static void json_deadlock(FILE *f, const struct ws_stuck *st, const size_t *cyc, size_t len)
{
	char nb[32];

	fputs("{\"type\":\"deadlock\",\"threads\":[", f);
	for (size_t k = 0; k < len; k++) {
		const struct ws_stuck_thread *t = &st->t[cyc[k]], *o = &st->t[cyc[(k + 1) % len]];

		fprintf(f, "%s{\"tid\":%u,\"pid\":%u,\"comm\":", k ? "," : "", t->s.tid, t->s.pid);
		ws_json_str(f, t->s.comm);
		fprintf(f, ",\"waits_for\":\"0x%" PRIx64 "\",\"lock\":", t->owner.lock);
		ws_json_str(f, t->owner.lock_name);
		if (t->s.in_syscall) {
			fputs(",\"syscall\":", f);
			ws_json_str(f, syscall_name(&t->s, nb, sizeof(nb)));
		}
		if (t->source >= 0)
			ws_json_claim_fields(f, &t->claim);
		fprintf(f, ",\"held_by\":%u,\"owner_evidence\":", o->s.tid);
		ws_json_str(f, t->owner.evidence_key);
		fputc('}', f);
	}
	fputs("]}\n", f);
}

static bool reported(const struct ws_stuck_thread *t, uint64_t min_block_ns)
{
	return t->kind != WS_OPEN_NONE && (t->in_cycle || t->at_least_ns >= min_block_ns);
}

int ws_stuck_print(FILE *f, const struct ws_stuck *st, uint64_t min_block_ns, bool json,
		   const char *heading)
{
	size_t shown = 0;
	char d[32];

	for (size_t i = 0; i < st->n; i++)
		shown += reported(&st->t[i], min_block_ns);
	if (!json && heading) {
		size_t all = st->n_total > st->n ? st->n_total : st->n;

		ws_format_duration(min_block_ns, d, sizeof(d));
		fprintf(f, "\n%s: %zu of %zu thread%s blocked at least %s\n", heading, shown, all,
			ws_plural(all, "", "s"), d);
	}
	for (size_t c = 0, at = 0; c < (size_t)st->ncycles; at += st->cycle_len[c++]) {
		if (json)
			json_deadlock(f, st, st->cycles + at, st->cycle_len[c]);
		else
			text_deadlock(f, st, st->cycles + at, st->cycle_len[c]);
	}
	for (size_t i = 0; i < st->n; i++) {
		if (!reported(&st->t[i], min_block_ns))
			continue;
		if (json)
			json_chain(f, st, &st->t[i]);
		else
			text_chain(f, st, &st->t[i]);
	}
	if (!json && st->no_syscall_access)
		fputs("(some threads' syscalls were not readable: run as the process's user or with sudo for ptrace access)\n",
		      f);
	return st->ncycles;
}
