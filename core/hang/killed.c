// SPDX-License-Identifier: MIT
/* The waits a fatal signal ended, as open waits at the kill: see killed.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <whyslow/syscall_names.h>

#include "killed.h"
#include "base/util.h"

/* Did claim @c see the wait end by a signal? The kill source's claim, or one it ended. */
static bool ended_by_signal(const struct ws_claim *c)
{
	const struct ws_field *by;

	if (!c)
		return false;
	if (!strcmp(c->kind, "signal"))
		return true;
	by = ws_claim_field(c, "ended_by");
	return c->ended_owner && by && by->type == WS_FIELD_STR && !strcmp(by->s, "signal");
}

/*
 * @t's wait that the kill ended: its last blocked stretch, if only runnable and running ones
 * follow (it was woken by the signal and ran to its exit) and the wakeup came with a signal.
 */
static bool killed_wait(struct ws_graph *g, const struct ws_thread *t, struct ws_ival *out)
{
	for (size_t i = t->n; i-- > t->head;) {
		struct ws_ival iv = ws_thread_ival(t, i);

		if (iv.state == WS_STATE_BLOCKED) {
			*out = iv;
			return ended_by_signal(ws_graph_claim(g, iv.claim));
		}
		if (iv.state != WS_STATE_RUNNING && iv.state != WS_STATE_RUNNABLE)
			return false;
	}
	return false;
}

void ws_killed_note(struct ws_killed *k, struct ws_graph *g, const struct ws_thread_event *ev)
{
	struct ws_killed_wait *w;
	struct ws_thread *t;
	struct ws_ival iv;

	if (ev->type != WS_THREAD_EXIT || !ev->exit_signal)
		return;
	if (k->n >= WS_KILLED_MAX || ws_grow((void **)&k->w, &k->cap, k->n + 1, sizeof(*k->w))) {
		k->dropped++;
		return;
	}
	w = &k->w[k->n++];
	memset(w, 0, sizeof(*w));
	w->tid = ev->tid;
	w->pid = ev->pid;
	snprintf(w->comm, sizeof(w->comm), "%s", ev->comm ? ev->comm : "?");
	w->sig = ev->exit_signal;
	w->at_ns = ev->ts;
	w->sys.nr = WS_SYSCALL_NONE;
	/*
	 * A thread killed while it ran (not in a wait the signal ended) is kept too, as running:
	 * it was alive at the kill, so a lock word naming it names a live holder.
	 */
	t = ws_graph_thread(g, ev->tid);
	if (!t || !ws_syscall_known(&ev->sys) || !killed_wait(g, t, &iv))
		return;
	w->since_ns = iv.start;
	w->off_state = 1;
	w->sys = ev->sys;
	if (ev->mem && ev->mem_len) {
		w->mem_len = ev->mem_len < sizeof(w->mem) ? ev->mem_len : sizeof(w->mem);
		memcpy(w->mem, ev->mem, w->mem_len);
	}
}

struct live_ctx {
	const struct ws_killed *k;
	uint32_t pid; /* the waiter's process */
};

/* A holder named by a lock word was alive at the kill: a thread of the killed processes. */
static bool tid_live(void *ctx, uint32_t tid, bool pshared)
{
	const struct live_ctx *l = ctx;

	for (size_t i = 0; i < l->k->n; i++)
		if (l->k->w[i].tid == tid)
			return l->k->w[i].pid == l->pid || pshared;
	return false;
}

static void open_wait_of(const struct ws_killed_wait *kw, struct ws_open_wait *w)
{
	memset(w, 0, sizeof(*w));
	w->sz = sizeof(*w);
	w->tid = kw->tid;
	w->pid = kw->pid;
	w->state = kw->off_state & 2 ? 'D' : 'S';
	w->syscall = kw->sys;
	w->mem = kw->mem_len ? kw->mem : NULL;
	w->mem_len = kw->mem_len;
}

static void thread_of(const struct ws_killed *k, size_t i, const struct ws_open_sources *src,
		      struct ws_stuck_thread *t)
{
	const struct ws_killed_wait *kw = &k->w[i];
	struct live_ctx l = { k, kw->pid };
	struct ws_open_wait w;

	memset(t, 0, sizeof(*t));
	t->s.tid = kw->tid;
	t->s.pid = kw->pid;
	memcpy(t->s.comm, kw->comm,
	       sizeof(t->s.comm) < sizeof(kw->comm) ? sizeof(t->s.comm) : sizeof(kw->comm));
	t->s.comm[sizeof(t->s.comm) - 1] = 0;
	t->s.read_mono_ns = kw->at_ns;
	t->killed_by = kw->sig;
	t->source = -1;
	t->owner.sz = sizeof(t->owner);
	if (!ws_syscall_known(&kw->sys)) {
		t->s.state = 'R';
		t->kind = WS_OPEN_NONE;
		return;
	}
	t->s.state = kw->off_state & 2 ? 'D' : 'S';
	t->s.in_syscall = true;
	t->s.nr = kw->sys.nr;
	t->s.arch = kw->sys.arch;
	memcpy(t->s.args, kw->sys.args, sizeof(t->s.args));
	t->kind = WS_OPEN_BLOCKED;
	t->at_least_ns = kw->at_ns > kw->since_ns ? kw->at_ns - kw->since_ns : 0;
	t->since_why = "from its switch-out to the kill (traced)";
	/* it never ran from the switch-out until the signal woke it */
	t->steady = true;
	if (!src)
		return;
	open_wait_of(kw, &w);
	t->source = src->describe(src->ctx, &w, &t->claim, t->what, sizeof(t->what));
	if (t->source < 0 || !src->owner)
		return;
	ws_stuck_owner_of(t, src, &w, tid_live, &l,
			  "the lock's memory was not read as the thread died");
}

int ws_killed_snapshot(const struct ws_killed *k, const struct ws_open_sources *src,
		       struct ws_stuck *st)
{
	size_t n = k->n;

	memset(st, 0, sizeof(*st));
	if (!n)
		return 0;
	st->t = calloc(n, sizeof(*st->t));
	if (!st->t)
		return -ENOMEM;
	st->n = n;
	st->n_total = n + k->dropped;
	st->at_kill = true;
	for (size_t i = 0; i < n; i++) {
		thread_of(k, i, src, &st->t[i]);
		if (st->t[i].s.read_mono_ns > st->mono_ns)
			st->mono_ns = st->t[i].s.read_mono_ns;
	}
	/* each wait as the thread died: every owner its lock named counts */
	return ws_stuck_cycles(st, false);
}

void ws_killed_free(struct ws_killed *k)
{
	free(k->w);
	memset(k, 0, sizeof(*k));
}
