// SPDX-License-Identifier: MIT
/*
 * Thread timelines and wake edges. Everything here is driven by records in
 * timestamp order; nothing links two threads except a wakeup one of them did.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "graph_impl.h"
#include "base/syscall_fmt.h"
#include "base/util.h"

/*
 * The thread's last switch-out: the kernel's TASK_DEAD in the raw state (tp_btf), or the
 * EXIT_DEAD/EXIT_ZOMBIE the classic tracepoint reports for it. Any other state, even after
 * its exit was seen, is a real wait: an exiting thread still sleeps in exit_mm() and on
 * faults of its robust futex list.
 */
#define WS_TASK_GONE (0x80 | 0x10 | 0x20)

static bool pid_traced(struct ws_graph *g, uint32_t pid)
{
	return g->ops.pid_traced(g->ops.ctx, pid);
}

/* ---- thread table ------------------------------------------------------------------- */

static struct ws_thread **recent_slot(struct ws_graph *g, uint32_t tid)
{
	return &g->recent[tid % RECENT_THREADS];
}

/* Remove @tid from the table of current incarnations. */
static void thread_unlink(struct ws_graph *g, uint32_t tid)
{
	struct ws_thread **r = recent_slot(g, tid);

	if (*r && (*r)->tid == tid)
		*r = NULL;
	ws_table_del_key(&g->threads, tid);
}

/* The current incarnation of @tid, or NULL. */
static inline struct ws_thread *thread_of(struct ws_graph *g, uint32_t tid)
{
	struct ws_thread **r = recent_slot(g, tid), **t;

	if (*r && (*r)->tid == tid)
		return *r;
	t = ws_table_get(&g->threads, tid);
	if (!t)
		return NULL;
	*r = *t;
	return *t;
}

struct ws_thread *ws_graph_thread(struct ws_graph *g, uint32_t tid)
{
	return thread_of(g, tid);
}

struct ws_thread *ws_graph_thread_at(struct ws_graph *g, uint32_t tid, uint64_t ts)
{
	struct ws_thread *t = ws_graph_thread(g, tid);

	if (t && t->born <= ts)
		return t;
	/* the tid may have been reused since: look among the threads that exited */
	struct ws_thread **d = ws_table_get(&g->dead_by_tid, tid);

	for (t = d ? *d : NULL; t; t = t->older_dead)
		if (t->born <= ts && ts <= t->died)
			return t;
	/* no incarnation of @tid existed then; never lend it another one's timeline */
	return NULL;
}

/* ---- timelines ------------------------------------------------------------------------- */

/*
 * A new timeline for @tid (none is current). Kept out of thread_get(), which runs twice per
 * switch and nearly always finds the thread: inlined, its saving and restoring of registers
 * cost every call.
 */
static __attribute__((noinline)) struct ws_thread *thread_new(struct ws_graph *g, uint32_t tid,
							      uint32_t pid, uint64_t ts)
{
	const struct graph_name *n;
	struct ws_thread **s, *t;
	bool added;

	s = ws_table_put(&g->threads, tid, &added);
	if (s && !added)
		return *s;
	t = s ? calloc(1, sizeof(*t)) : NULL;
	if (!t) {
		if (s)
			ws_table_del(&g->threads, s);
		graph_oom(g, ts);
		return NULL;
	}
	t->tid = tid;
	t->pid = pid;
	t->born = ts;
	t->died = WS_NO_END;
	n = graph_name(g, tid);
	if (n && n->comm[0])
		memcpy(t->comm, n->comm, WS_COMM);
	*s = t;
	g->st.threads++;
	return t;
}

static struct ws_thread *thread_get(struct ws_graph *g, uint32_t tid, uint32_t pid, uint64_t ts)
{
	struct ws_thread *t;

	if (!tid)
		return NULL; /* the idle task is no thread of a traced process */
	t = thread_of(g, tid);
	return t ? t : thread_new(g, tid, pid, ts);
}

/*
 * The timeline of thread @tid of @pid if the graph follows it: a traced process's thread, or a
 * helper its source flagged (@helper: a kernel thread working for them, ws_switch.helpers),
 * counted apart. NULL when it is neither, or without memory.
 */
static struct ws_thread *followed_thread(struct ws_graph *g, uint32_t tid, uint32_t pid,
					 bool helper, uint64_t ts)
{
	bool traced = pid_traced(g, pid);
	struct ws_thread *t;

	if (!traced && !helper)
		return NULL;
	t = thread_get(g, tid, pid, ts);
	if (t && !traced && !t->helper) {
		t->helper = true;
		g->helpers++;
	}
	return t;
}

static struct ws_span *cur(struct ws_thread *t)
{
	return t->n > t->head ? &t->iv[t->n - 1] : NULL;
}

static enum ws_thread_state cur_state(struct ws_thread *t)
{
	struct ws_span *c = cur(t);

	return c && t->last_end == WS_NO_END ? c->state : WS_STATE_UNKNOWN;
}

uint64_t graph_running_since(struct ws_thread *t)
{
	return cur_state(t) == WS_STATE_RUNNING ? cur(t)->start : 0;
}

/* Append a stretch of @t from @ts; false (memory counted as run out) if there is no room. */
static bool span_push(struct ws_graph *g, struct ws_thread *t, uint64_t ts, uint8_t state,
		      uint16_t cpu)
{
	if (ws_grow((void **)&t->iv, &t->cap, t->n + 1, sizeof(*t->iv))) {
		graph_oom(g, ts);
		return false;
	}
	t->iv[t->n++] = (struct ws_span){ .start = ts, .cpu = cpu, .state = state };
	g->st.live_intervals++;
	return true;
}

/* Close the open interval at @ts and open one in @state. */
static void transition(struct ws_graph *g, struct ws_thread *t, uint64_t ts, uint8_t state,
		       uint16_t cpu)
{
	struct ws_span *c = cur(t);

	if (c && t->last_end == WS_NO_END && ts < c->start)
		ts = c->start;
	/*
	 * The last stretch was closed with no next one (memory ran out for it): the time since is
	 * a stretch not observed, not more of the last one.
	 */
	if (c && t->last_end != WS_NO_END && ts > t->last_end &&
	    !span_push(g, t, t->last_end, WS_STATE_UNKNOWN, c->cpu)) {
		return;
	}
	/* without room for the next stretch, the last one still ends here */
	t->last_end = span_push(g, t, ts, state, cpu) ? WS_NO_END : ts;
}

size_t ws_thread_find(const struct ws_thread *t, uint64_t ts)
{
	size_t lo = t->head, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		uint64_t end = ws_thread_end(t, mid);

		if (end <= ts && end != WS_NO_END)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static uint32_t infer(struct ws_graph *g, struct ws_thread *t, uint64_t start, uint32_t off_state,
		      const struct ws_wake *wk)
{
	struct ws_wait w = {
		.sz = sizeof(w),
		.tid = t->tid,
		.pid = t->pid,
		.start_ns = start,
		.off_state = off_state,
		.wake = wk,
		.waker_traced = pid_traced(g, wk->waker_pid),
	};
	struct ws_thread *waker;
	struct ws_claim c;

	/* a helper's timeline is followed as a traced thread's is */
	if (!w.waker_traced && !(wk->ctx & (WS_CTX_HARDIRQ | WS_CTX_SOFTIRQ)) &&
	    (waker = ws_graph_thread(g, wk->waker_tid)) != NULL && waker->helper)
		w.waker_traced = true;
	ws_zero(&c, sizeof(c));
	c.sz = sizeof(c);
	if (g->ops.infer && g->ops.infer(g->ops.ctx, &w, &c) > 0) {
		/* the syscall it waited in goes with every claim, whoever made it */
		c.syscall = wk->wakee_sys;
		ws_syscall_normalize(&c.syscall);
		return graph_claim_intern_near(g, &c, &t->last_claim);
	}
	return graph_core_claim(g, "unknown", "no source could explain this wakeup");
}

static void release_pending(struct ws_graph *g, struct ws_thread *t)
{
	if (t->pending)
		graph_claim_put(g, t->pending_claim);
	t->pending = false;
}

/* The thread is gone at @ts: close its timeline and keep it only for chains that need it. */
static void thread_retire(struct ws_graph *g, struct ws_thread *t, uint64_t ts)
{
	struct ws_span *c = cur(t);

	if (c && t->last_end == WS_NO_END)
		t->last_end = ts < c->start ? c->start : ts;
	release_pending(g, t);
	graph_claim_put(g, t->reclaim_claim);
	t->reclaim_claim = 0;
	graph_claim_put(g, t->limit_claim);
	t->limit_claim = 0;
	graph_claim_put(g, t->high_claim);
	t->high_claim = 0;
	t->exited = true;
	t->died = c && t->last_end > ts ? t->last_end : ts;
	t->off_start = 0;
	thread_unlink(g, t->tid);
	graph_dead_add(g, t);
}

/* @t's period off CPU is over at @ts, on @cpu: hand it out as a wait if it is one. */
static void wait_over(struct ws_graph *g, struct ws_thread *t, uint64_t ts, uint16_t cpu)
{
	if (t->off_start && g->ops.on_wait && !t->helper &&
	    (ts - t->off_start >= g->min_block ||
	     (t->tid == g->follow_tid && ts - t->off_start >= g->follow_min))) {
		struct ws_wait_done d = {
			.t = t,
			.start = t->off_start,
			.wake = t->wake_ts ? t->wake_ts : ts,
			.end = ts,
			.cpu = cpu,
			.below_min_block = ts - t->off_start < g->min_block,
		};

		g->ops.on_wait(g->ops.ctx, &d);
	}
	t->off_start = 0;
	t->wake_ts = 0;
}

/*
 * @t's current stretch began inside direct memory reclaim: its time is the reclaim's (on CPU:
 * its work; blocked: a wait of it, whose claim the wakeup's is turned into, reclaim_wait).
 */
static void reclaim_mark(struct ws_graph *g, struct ws_thread *t)
{
	struct ws_span *c = cur(t);

	if (!t->reclaim_claim || !c || t->last_end != WS_NO_END || (c->flags & WS_IVAL_RECLAIM))
		return;
	c->flags |= WS_IVAL_RECLAIM;
	if (c->state == WS_STATE_RUNNING)
		c->claim = graph_claim_ref(g, t->reclaim_claim);
}

/*
 * The claim @id just set on @t's blocked stretch @b: a wait of the reclaim if @b began inside;
 * a swap-in after a reclaim at a memory cgroup's limit in the same run on CPU (the fault that
 * charged the page at the limit, then read it) names that group.
 */
static void reclaim_wait(struct ws_graph *g, struct ws_thread *t, struct ws_span *b)
{
	if ((b->flags & WS_IVAL_RECLAIM) && t->reclaim_claim)
		b->claim = graph_reclaim_wait(g, t->reclaim_claim, b->claim);
	else if (t->high_claim)
		b->claim = graph_reclaim_wait(g, t->high_claim, b->claim);
	else if (t->limit_claim)
		b->claim = graph_swapin_limit(g, t->limit_claim, b->claim);
}

/* @ev: @t begins or ends direct memory reclaim (the kernel's tracepoints, in its context). */
static void reclaim_event(struct ws_graph *g, struct ws_thread *t, const struct ws_thread_event *ev)
{
	struct ws_span *c = cur(t);
	const struct ws_claim *rc;
	bool running = cur_state(t) == WS_STATE_RUNNING;

	if (ev->type == WS_THREAD_RECLAIM_BEGIN) {
		graph_claim_put(g, t->reclaim_claim);
		t->reclaim_claim = graph_reclaim_claim(g, t, ev);
		/* its run goes on as the reclaim's from here */
		if (running && c->start < ev->ts)
			transition(g, t, ev->ts, WS_STATE_RUNNING, c->cpu);
		if (running)
			reclaim_mark(g, t);
		return;
	}
	if (running && (c->flags & WS_IVAL_RECLAIM) && c->start < ev->ts)
		transition(g, t, ev->ts, WS_STATE_RUNNING, c->cpu);
	graph_claim_put(g, t->limit_claim);
	t->limit_claim = 0;
	/* a group found at its limit, ended on CPU: a swap-in waited for next is that group's */
	rc = ws_graph_claim(g, t->reclaim_claim);
	if (running && rc && ws_claim_field(rc, "limit_bytes"))
		t->limit_claim = t->reclaim_claim;
	else
		graph_claim_put(g, t->reclaim_claim);
	t->reclaim_claim = 0;
}

static void switch_in(struct ws_graph *g, struct ws_thread *t, const struct ws_switch *sw);

/*
 * @t leaves its CPU at @sw->ts, woken but never seen getting the CPU back: its switch-in was
 * not traced. Seen on 6.18 with nothing lost: some threads (a VM agent's) leave their CPU with
 * no sched_switch at all, so the thread they hand it to arrives unseen. It got the CPU after
 * its wakeup and after the run last seen on that CPU began: its wait ends there, the earliest
 * it can have (its runnable part may have been longer, never shorter), and what follows up to
 * this switch-out is not observed.
 */
static void switch_in_unseen(struct ws_graph *g, struct ws_thread *t, const struct ws_switch *sw)
{
	uint64_t after = graph_cpu_run_start(g, sw->cpu, sw->ts);
	struct ws_switch in = { .sz = sizeof(in),
				.cpu = sw->cpu,
				.next_tid = t->tid,
				.next_pid = t->pid,
				.ts = after > cur(t)->start ? after : cur(t)->start };

	g->st.switch_ins_unseen++;
	if (sw->ts <= cur(t)->start) {
		/* a record out of order (events_late): nothing of the stretch is known */
		cur(t)->state = WS_STATE_UNKNOWN;
		t->off_start = 0;
		t->wake_ts = 0;
		return;
	}
	if (in.ts > sw->ts)
		in.ts = sw->ts;
	if (in.ts > cur(t)->start) {
		switch_in(g, t, &in);
		cur(t)->state = WS_STATE_UNKNOWN;
		return;
	}
	/* it may have run at once: its wait ends at its wakeup, the rest is not observed */
	cur(t)->state = WS_STATE_UNKNOWN;
	wait_over(g, t, in.ts, in.cpu);
}

/*
 * @t leaves its CPU at @sw->ts, and the source says the off-CPU period it began last ended
 * unreported (ws_switch.prev_unseen): neither its wakeup nor its switch-in arrived. Blocked or
 * runnable here, switch_out() tells that return it did not see. Still running here, that
 * period's switch-out was left for later and lost with them, or never written: from when that
 * period began (sw->prev_unseen_ns before), or else from its last switch-in, what it did is not
 * observed (not one run on CPU, which a chain through it would call its CPU work).
 */
static void prev_period_unseen(struct ws_graph *g, struct ws_thread *t, const struct ws_switch *sw)
{
	struct ws_span *c = cur(t);
	uint32_t ago = sw->prev_unseen_ns;
	uint64_t from = ago && ago != UINT32_MAX && ago < sw->ts ? sw->ts - ago : 0;

	if (cur_state(t) != WS_STATE_RUNNING)
		return;
	g->st.switch_ins_unseen++;
	release_pending(g, t);
	t->off_start = 0;
	t->wake_ts = 0;
	if (from > c->start && from < sw->ts)
		transition(g, t, from, WS_STATE_UNKNOWN, sw->cpu);
	else
		c->state = WS_STATE_UNKNOWN;
}

static void switch_out(struct ws_graph *g, struct ws_thread *t, const struct ws_switch *sw)
{
	struct ws_span *c;
	/* transition() may move t->iv: keep the ending stint's start, not a pointer into it */
	uint64_t stint_start;
	uint64_t ts = sw->ts;

	if (cur_state(t) == WS_STATE_RUNNABLE) {
		switch_in_unseen(g, t, sw);
	} else if (cur_state(t) == WS_STATE_BLOCKED) {
		/*
		 * Neither its wakeup nor its switch-in was seen (records lost, or a wakeup
		 * the kernel side could not tell from a cancelled sleep): when it woke and
		 * ran is unknown, so the stretch is not observed, not one long wait; chains
		 * over it say so (incomplete).
		 */
		cur(t)->state = WS_STATE_UNKNOWN;
		g->st.switch_ins_unseen++;
	}
	c = cur(t);
	stint_start = c ? c->start : WS_NO_END;
	if (sw->prev_state & WS_TASK_GONE) {
		thread_retire(g, t, ts);
		return;
	}
	if (sw->prev_state == 0) {
		release_pending(g, t);
		transition(g, t, ts, WS_STATE_RUNNABLE, sw->cpu);
		t->off_start = ts;
		t->wake_ts = ts;
		return;
	}
	transition(g, t, ts, WS_STATE_BLOCKED, sw->cpu);
	reclaim_mark(g, t);
	t->off_start = ts;
	t->off_state = sw->prev_state;
	t->wake_ts = 0;
	/*
	 * The wakeup that ends this sleep may have been stamped just before the
	 * switch-out: the waker saw the task dequeued while the switch itself
	 * was still being traced. Only a wakeup seen during the stint that is
	 * ending now can be that one.
	 */
	if (t->pending && stint_start != WS_NO_END && t->pending_ts >= stint_start) {
		struct ws_span *b = cur(t);

		b->claim = t->pending_claim;
		reclaim_wait(g, t, b);
		t->pending = false;
		transition(g, t, ts, WS_STATE_RUNNABLE, sw->cpu);
		t->wake_ts = ts;
		g->st.races++;
	} else {
		release_pending(g, t);
	}
}

/*
 * The source did not report @t leaving the CPU at @off (it summarises short
 * periods) but says so now, with the record that ends the period: put the
 * switch-out in. Nothing of @t happened in between (it was off CPU), so its
 * timeline stays in order. A blocked stretch that is already over (@wake) was
 * shorter than the resolution: its cause was not recorded.
 */
static void late_switch_out(struct ws_graph *g, struct ws_thread *t, uint64_t off, uint32_t state,
			    uint32_t cpu, uint64_t wake)
{
	struct ws_switch sw = { .sz = sizeof(sw),
				.ts = off,
				.cpu = cpu,
				.prev_tid = t->tid,
				.prev_pid = t->pid,
				.prev_state = state };
	enum ws_thread_state s = cur_state(t);

	g->late_outs = true;
	/* off CPU already: a switch-out after it means a switch-in unseen (see switch_out) */
	if ((s == WS_STATE_BLOCKED || s == WS_STATE_RUNNABLE) && off <= cur(t)->start)
		return;
	switch_out(g, t, &sw);
	if (state && wake && cur_state(t) == WS_STATE_BLOCKED) {
		cur(t)->claim = graph_core_claim(
			g, "unknown", "blocked shorter than the resolution: cause not recorded");
		transition(g, t, wake, WS_STATE_RUNNABLE, cpu);
		t->wake_ts = wake;
	}
}

/* @t's latest running stretch had summarised periods off CPU in it (see WS_IVAL_SHORT_INSIDE). */
static void mark_short_inside(struct ws_thread *t)
{
	for (size_t i = t->n; i > t->head; i--) {
		/* a stretch not observed may be where it ran: not an older one's doing */
		if (t->iv[i - 1].state == WS_STATE_UNKNOWN)
			return;
		if (t->iv[i - 1].state == WS_STATE_RUNNING) {
			t->iv[i - 1].flags |= WS_IVAL_SHORT_INSIDE;
			return;
		}
	}
}

static void short_add(struct ws_thread *t, const struct ws_short_waits *sh)
{
	if (sh->n)
		mark_short_inside(t);
	t->short_waits.n += sh->n;
	t->short_waits.blocked_ns += sh->blocked_ns;
	t->short_waits.runnable_ns += sh->runnable_ns;
}

/*
 * @t's runnable period ending at @sw (its switch-in) began with it throttled by the CPU quota
 * of cgroup @sw->next_throttle_cg: that stretch is the quota's, not a wait for a CPU, up to
 * the end of the throttle when the source saw it (after that it did wait for the CPU: a
 * runnable stretch as any other), else up to the switch-in.
 */
static void quota_throttled(struct ws_graph *g, struct ws_thread *t, const struct ws_switch *sw)
{
	struct ws_claim c = { .sz = sizeof(c), .strength = WS_CLAIM_SPECIFIC, .root = true };
	uint64_t end = sw->next_unthrottled_ts;
	struct ws_span *r = cur(t);

	if (cur_state(t) != WS_STATE_RUNNABLE || r->start >= sw->ts)
		return;
	c.owner = UINT16_MAX;
	snprintf(c.kind, sizeof(c.kind), "%s", WS_CLAIM_QUOTA);
	snprintf(
		c.evidence, sizeof(c.evidence), "%s",
		end ? "throttled at its switch-out (task_struct.throttled), until its cfs_rq was unthrottled"
		    : "throttled at its switch-out (task_struct.throttled); the throttle's end not seen");
	if (g->ops.quota_name && sw->next_throttle_cg != UINT64_MAX)
		g->ops.quota_name(g->ops.ctx, t->tid, t->pid, sw->next_throttle_cg, &c);
	graph_claim_put(g, r->claim);
	r->claim = graph_claim_intern(g, &c);
	r->flags |= WS_IVAL_THROTTLED;
	r->cpu = sw->cpu;
	if (end > r->start && end < sw->ts)
		transition(g, t, end, WS_STATE_RUNNABLE, sw->cpu);
}

static void switch_in(struct ws_graph *g, struct ws_thread *t, const struct ws_switch *sw)
{
	enum ws_thread_state s = cur_state(t);
	uint64_t ts = sw->ts;

	if (sw->next_throttle_cg)
		quota_throttled(g, t, sw);

	if (s == WS_STATE_BLOCKED) {
		cur(t)->claim = graph_core_claim(g, "unknown", "no wakeup recorded for this wait");
		reclaim_wait(g, t, cur(t));
		t->wake_ts = ts;
		g->st.waits_unexplained++;
	}
	/* a new run on CPU: a reclaim or a throttle of the last one says nothing of its waits */
	graph_claim_put(g, t->limit_claim);
	t->limit_claim = 0;
	graph_claim_put(g, t->high_claim);
	t->high_claim = 0;
	transition(g, t, ts, WS_STATE_RUNNING, sw->cpu);
	reclaim_mark(g, t);
	/* the runnable stretch ran on the CPU it got back on */
	if (t->n >= 2 && t->iv[t->n - 2].state == WS_STATE_RUNNABLE)
		t->iv[t->n - 2].cpu = sw->cpu;
	wait_over(g, t, ts, sw->cpu);
}

/*
 * strncpy(t->comm, @comm, WS_COMM - 1), copied whole from @named when there is one: the names
 * table's copy of the same @comm (graph_name_set()), cut the same way, its last byte 0 as
 * t->comm's always is. A second strncpy on every switch was 1.5% of `report`'s instructions.
 */
static void thread_comm_set(struct ws_thread *t, const char *comm, const char *named)
{
	if (named)
		memcpy(t->comm, named, WS_COMM);
	else
		strncpy(t->comm, comm, WS_COMM - 1);
}

void ws_graph_switch(struct ws_graph *g, const struct ws_switch *sw)
{
	/* looked up only when the record does not say it; before next's name is set */
	uint32_t prev_pid = sw->prev_pid ? sw->prev_pid : ws_graph_pid_of(g, sw->prev_tid);
	uint8_t helpers = sw->helpers;
	const char *next_named;
	struct ws_thread *t;

	g->st.switches++;
	if (sw->ts > g->last_ts)
		g->last_ts = sw->ts;
	/* no name is set again before next_named is used below */
	next_named = graph_name_set(g, sw->next_tid, sw->next_pid, sw->next_comm, sw->ts);
	/* prev's own switch-in may not have been reported: it held the CPU since then */
	if (sw->prev_run_start && sw->prev_run_start < sw->ts &&
	    sw->prev_run_start > graph_cpu_last_ts(g, sw->cpu))
		graph_cpu_push(g, sw->cpu, sw->prev_run_start, sw->prev_tid, prev_pid);
	/* next left a CPU unreported (late_switch_out): that CPU's history did not see it go */
	if (sw->next_off_ts && sw->next_off_ts <= sw->ts)
		graph_cpu_left(g, (uint16_t)sw->next_off_cpu, sw->next_tid, sw->next_off_ts);
	graph_cpu_push(g, sw->cpu, sw->ts, sw->next_tid, sw->next_pid);
	if (sw->prev_out_later)
		g->late_outs = true;
	if (sw->prev_tid && !sw->prev_out_later) {
		t = followed_thread(g, sw->prev_tid, prev_pid, helpers & WS_SWITCH_PREV_HELPER,
				    sw->ts);
		if (t && sw->prev_unseen)
			prev_period_unseen(g, t, sw);
		if (t)
			switch_out(g, t, sw);
	}
	if (sw->next_tid) {
		t = followed_thread(g, sw->next_tid, sw->next_pid, helpers & WS_SWITCH_NEXT_HELPER,
				    sw->ts);
		if (t) {
			if (sw->next_comm)
				thread_comm_set(t, sw->next_comm, next_named);
			if (sw->next_off_ts && sw->next_off_ts <= sw->ts)
				late_switch_out(g, t, sw->next_off_ts, sw->next_off_state,
						sw->next_off_cpu, sw->next_wake_ts);
			short_add(t, &sw->next_short);
			switch_in(g, t, sw);
		}
	}
}

void ws_graph_wake(struct ws_graph *g, const struct ws_wake *wk)
{
	struct ws_thread *t;
	struct ws_span *c;
	bool helper;

	g->st.wakes++;
	if (wk->ts > g->last_ts)
		g->last_ts = wk->ts;
	if (!(wk->ctx & (WS_CTX_HARDIRQ | WS_CTX_SOFTIRQ)))
		graph_name_set(g, wk->waker_tid, wk->waker_pid, wk->waker_comm, wk->ts);
	/* the waker's stretch up to now had summarised waits in it: say so before any chain
	 * reads that stretch (its next written switch-in would say it too late) */
	if (wk->waker_short && (t = ws_graph_thread(g, wk->waker_tid)) != NULL &&
	    cur_state(t) == WS_STATE_RUNNING)
		mark_short_inside(t);
	helper = wk->wakee_helper;
	t = followed_thread(g, wk->wakee_tid, wk->wakee_pid, helper, wk->ts);
	if (!t)
		return;
	if (wk->off_ts && wk->off_ts <= wk->ts) {
		graph_cpu_left(g, (uint16_t)wk->off_cpu, t->tid, wk->off_ts);
		late_switch_out(g, t, wk->off_ts, wk->off_state, wk->off_cpu, 0);
	}
	switch (cur_state(t)) {
	case WS_STATE_BLOCKED:
		c = cur(t);
		c->claim = infer(g, t, c->start, t->off_state, wk);
		reclaim_wait(g, t, c);
		transition(g, t, wk->ts, WS_STATE_RUNNABLE, wk->cpu);
		t->wake_ts = wk->ts;
		break;
	case WS_STATE_RUNNING:
		/* see switch_out(): this wakeup belongs to the sleep about to begin */
		release_pending(g, t);
		t->pending = true;
		t->pending_ts = wk->ts;
		t->pending_claim = infer(g, t, wk->ts, 0, wk);
		break;
	case WS_STATE_UNKNOWN:
		/*
		 * First sight (attach): we never saw it go to sleep, so no wait to explain; from
		 * the wakeup on it waits for a CPU, reported as a preempted thread's wait is (the
		 * summary counts that time off CPU too).
		 */
		transition(g, t, wk->ts, WS_STATE_RUNNABLE, wk->cpu);
		t->off_start = wk->ts;
		t->wake_ts = wk->ts;
		break;
	default:
		break;
	}
}

void ws_graph_thread_event(struct ws_graph *g, const struct ws_thread_event *ev)
{
	struct ws_thread *t;

	switch (ev->type) {
	case WS_THREAD_NEW:
	case WS_THREAD_COMM:
		graph_name_set(g, ev->tid, ev->pid, ev->comm, ev->ts);
		t = ws_graph_thread(g, ev->tid);
		if (t && ev->type == WS_THREAD_NEW) {
			/* a reused tid: whatever had it before is gone */
			thread_retire(g, t, ev->ts);
			t = NULL;
		}
		if (t && ev->comm)
			strncpy(t->comm, ev->comm, WS_COMM - 1);
		break;
	case WS_THREAD_EXIT:
		/* it still runs its exit path (and may wake joiners) until its last switch-out */
		t = ws_graph_thread(g, ev->tid);
		if (t)
			short_add(t, &ev->short_waits);
		break;
	case WS_THREAD_SHORT_CAUSES:
		t = ws_graph_thread(g, ev->tid);
		if (t)
			graph_short_causes(g, t, ev);
		break;
	case WS_THREAD_RECLAIM_BEGIN:
	case WS_THREAD_RECLAIM_END:
		t = ws_graph_thread(g, ev->tid);
		if (t)
			reclaim_event(g, t, ev);
		break;
	case WS_THREAD_MEMORY_HIGH:
		/* the wait it begins (its switch-out is written with or after this) is the
		 * throttle's, whatever ends it: kept until its next switch-in */
		t = ws_graph_thread(g, ev->tid);
		if (t) {
			graph_claim_put(g, t->high_claim);
			t->high_claim = graph_reclaim_claim(g, t, ev);
		}
		break;
	}
}

void ws_graph_open_wait(struct ws_graph *g, uint32_t tid, uint32_t pid, const char *comm,
			uint64_t since, uint32_t off_state)
{
	struct ws_thread *t;

	if (!pid_traced(g, pid))
		return;
	t = thread_get(g, tid, pid, since);
	/* an event already said more than /proc did */
	if (!t || t->n > t->head || cur_state(t) != WS_STATE_UNKNOWN)
		return;
	if (comm && !t->comm[0])
		strncpy(t->comm, comm, WS_COMM - 1);
	transition(g, t, since, WS_STATE_BLOCKED, 0);
	t->off_start = since;
	t->off_state = off_state;
	t->wake_ts = 0;
}

bool ws_graph_open_at_end(struct ws_graph *g, uint32_t tid, uint64_t since, uint64_t at,
			  uint32_t off_state, const struct ws_claim *c)
{
	struct ws_thread *t = thread_of(g, tid);

	if (!t)
		return false;
	switch (cur_state(t)) {
	case WS_STATE_BLOCKED:
		break;
	case WS_STATE_RUNNING:
		/*
		 * Its switch-out was held back (the source writes it with the record that ends
		 * the wait, and none did): /proc bounds when it left the CPU. Without that
		 * bound, when in this run it left is not known: the run stays as it is.
		 */
		if (!since || since >= at)
			return false;
		if (since < cur(t)->start)
			since = cur(t)->start;
		release_pending(g, t);
		transition(g, t, since, WS_STATE_BLOCKED, cur(t)->cpu);
		if (cur_state(t) != WS_STATE_BLOCKED)
			return false; /* no memory for it: counted */
		t->off_start = since;
		t->off_state = off_state;
		t->wake_ts = 0;
		break;
	default:
		/* woken already, or its stretch not observed: the records know better */
		return false;
	}
	if (c && cur(t)->claim == CLAIM_NONE)
		cur(t)->claim = graph_claim_intern(g, c);
	if (at > g->last_ts)
		g->last_ts = at;
	return true;
}

void ws_graph_retire_pid(struct ws_graph *g, uint32_t pid, uint64_t ts)
{
	struct ws_thread *gone[64];
	size_t n;

	/* retiring unlinks from the table: collect first, then retire */
	do {
		n = 0;
		for (size_t i = 0; i < g->threads.cap && n < 64; i++) {
			struct ws_thread *t = graph_thread_at(g, i);

			if (t && t->pid == pid)
				gone[n++] = t;
		}
		for (size_t i = 0; i < n; i++)
			thread_retire(g, gone[i], ts);
	} while (n == 64);
}
