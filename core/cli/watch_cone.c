// SPDX-License-Identifier: MIT
/* The causal cone of watch's triggers: see watch_cone.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "watch_cone.h"
#include "sched/sched_rec.h"
#include "stacks/capture.h"

/* A set of thread ids (0, the idle task, is never in one): open addressing, bounded. */
struct tidset {
	uint32_t *v;
	size_t cap, n, max; /* cap: a power of two, twice max at least */
};

struct cpu_span {
	uint16_t cpu;
	uint64_t from, to;
};

/* more chains than this in one dump (a storm): their walks cost more than the whole window */
#define CONE_MAX_CHAINS 64

struct ws_cone {
	struct tidset own;	  /* the chains' threads */
	struct tidset pids, near; /* their processes; and those of the threads they met */
	struct tidset members;	  /* the threads of those processes the records name */
	struct cpu_span cpus[WS_CONE_MAX_CPUS];
	size_t ncpus, nchains;
	uint64_t from; /* UINT64_MAX: nothing added */
	bool given_up;
	struct ws_graph *g;  /* the watch's: which threads it follows */
	struct ws_chain hop; /* a segment's walk */
};

static int set_init(struct tidset *s, size_t max)
{
	s->cap = 1;
	while (s->cap < 2 * max)
		s->cap <<= 1;
	s->max = max;
	s->n = 0;
	s->v = calloc(s->cap, sizeof(*s->v));
	return s->v ? 0 : -ENOMEM;
}

static size_t slot(const struct tidset *s, uint32_t tid)
{
	size_t i = (tid * 2654435761u) & (s->cap - 1);

	while (s->v[i] && s->v[i] != tid)
		i = (i + 1) & (s->cap - 1);
	return i;
}

static bool set_has(const struct tidset *s, uint32_t tid)
{
	return tid && s->v[slot(s, tid)] == tid;
}

/* false: the set is full */
static bool set_add(struct tidset *s, uint32_t tid)
{
	size_t i;

	if (!tid)
		return true;
	i = slot(s, tid);
	if (s->v[i])
		return true;
	if (s->n == s->max)
		return false;
	s->v[i] = tid;
	s->n++;
	return true;
}

int ws_cone_new(struct ws_cone **out)
{
	struct ws_cone *c = calloc(1, sizeof(*c));

	*out = NULL;
	if (!c)
		return -ENOMEM;
	if (set_init(&c->own, WS_CONE_MAX_THREADS) || set_init(&c->pids, WS_CONE_MAX_THREADS) ||
	    set_init(&c->near, WS_CONE_MAX_NEAR) || set_init(&c->members, WS_CONE_MAX_NEAR)) {
		ws_cone_free(c);
		return -ENOMEM;
	}
	c->from = UINT64_MAX;
	*out = c;
	return 0;
}

void ws_cone_free(struct ws_cone *c)
{
	if (!c)
		return;
	free(c->own.v);
	free(c->pids.v);
	free(c->near.v);
	free(c->members.v);
	free(c);
}

void ws_cone_reset(struct ws_cone *c)
{
	memset(c->own.v, 0, c->own.cap * sizeof(*c->own.v));
	memset(c->pids.v, 0, c->pids.cap * sizeof(*c->pids.v));
	memset(c->near.v, 0, c->near.cap * sizeof(*c->near.v));
	memset(c->members.v, 0, c->members.cap * sizeof(*c->members.v));
	c->own.n = c->pids.n = c->near.n = c->members.n = 0;
	c->ncpus = c->nchains = 0;
	c->from = UINT64_MAX;
	c->given_up = false;
}

/*
 * Thread @t (or @tid, looked up in @g) is in the cone from the state it was in at @at: a waker
 * blocked since before the wait began is read from its switch-out, with its claim.
 */
static void add_thread(struct ws_cone *c, struct ws_graph *g, const struct ws_thread *t,
		       uint32_t tid, uint64_t at)
{
	uint64_t from = at;
	size_t i;

	if (!t && tid)
		t = ws_graph_thread(g, tid);
	/* a thread the graph does not follow (untraced) has no timeline to keep: the records that
	 * name it with a traced one are kept for that one */
	if (!t)
		return;
	i = ws_thread_find(t, at);
	if (i < t->n && t->iv[i].start < from)
		from = t->iv[i].start;
	if (!set_add(&c->own, t->tid) || !set_add(&c->pids, t->pid))
		c->given_up = true;
	if (from < c->from)
		c->from = from;
}

static void add_cpu(struct ws_cone *c, uint16_t cpu, uint64_t from, uint64_t to)
{
	if (c->ncpus == WS_CONE_MAX_CPUS) {
		c->given_up = true;
		return;
	}
	c->cpus[c->ncpus++] = (struct cpu_span){ cpu, from, to };
}

static void add_links(struct ws_cone *c, struct ws_graph *g, const struct ws_chain *ch, uint64_t at)
{
	for (int i = 0; i < ch->nlinks; i++) {
		const struct ws_link *l = &ch->links[i];

		add_thread(c, g, l->thread, l->tid, at < l->start ? at : l->start);
		if (l->has_woken_by)
			add_thread(c, g, NULL, l->woken_by, at);
		if (l->held_by)
			add_thread(c, g, NULL, l->held_by, at);
		/* who held that CPU: every switch there (its holders need not be traced) */
		if (!strcmp(l->kind, WS_KIND_RUNQUEUE) || !strcmp(l->kind, WS_KIND_WAKEUP_LATENCY))
			add_cpu(c, l->cpu, l->start, l->start + l->dur);
	}
}

void ws_cone_add(struct ws_cone *c, struct ws_graph *g, const struct ws_chain *ch)
{
	if (c->given_up)
		return;
	c->g = g;
	if (++c->nchains > CONE_MAX_CHAINS) {
		c->given_up = true;
		return;
	}
	add_thread(c, g, ch->victim, 0, ch->start);
	add_links(c, g, ch, ch->start);
	/* each segment's root is a walk of its own (the report's totals, folded): its threads too
	 */
	for (size_t i = 0; i < ch->nsegs && !c->given_up; i++) {
		const struct ws_segment *s = &ch->segs[i];

		add_thread(c, g, s->thread, s->tid, s->start);
		if (ws_chain_walk_segment(g, s, &c->hop) > 0)
			add_links(c, g, &c->hop, s->start);
	}
}

bool ws_cone_usable(const struct ws_cone *c)
{
	return !c->given_up && c->own.n;
}

uint64_t ws_cone_from(const struct ws_cone *c)
{
	return c->from > WS_CONE_MARGIN_NS ? c->from - WS_CONE_MARGIN_NS : 0;
}

size_t ws_cone_threads(const struct ws_cone *c, uint32_t *tids, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < c->own.cap && n < max; i++)
		if (c->own.v[i])
			tids[n++] = c->own.v[i];
	return n;
}

size_t ws_cone_nthreads(const struct ws_cone *c)
{
	return c->own.n;
}

size_t ws_cone_npids(const struct ws_cone *c)
{
	return c->pids.n + c->near.n;
}

static bool on_cpus(const struct ws_cone *c, const struct ws_rec_hdr *rec)
{
	for (size_t i = 0; i < c->ncpus; i++)
		if (c->cpus[i].cpu == rec->cpu && rec->ts + WS_CONE_MARGIN_NS >= c->cpus[i].from &&
		    rec->ts <= c->cpus[i].to + WS_CONE_MARGIN_NS)
			return true;
	return false;
}

static bool own(const struct ws_cone *c, uint32_t tid)
{
	return set_has(&c->own, tid);
}

/* A process the dump keeps whole (from the cone's start): the chains', or one they met. */
static bool in(const struct ws_cone *c, uint32_t pid)
{
	return set_has(&c->pids, pid) || set_has(&c->near, pid);
}

static void add_near(struct ws_cone *c, uint32_t tid, uint32_t pid)
{
	/*
	 * Only a thread the watch followed: a process it did not trace left only the records that
	 * name a traced one, a timeline full of holes
	 */
	if (!tid || !pid || !c->g || !ws_graph_thread(c->g, tid))
		return;
	if ((!set_has(&c->pids, pid) && !set_add(&c->near, pid)) || !set_add(&c->members, tid))
		c->given_up = true;
}

/* Thread @tid of @pid: one of the kept processes' (its short periods' causes are kept too)? */
static void add_member(struct ws_cone *c, uint32_t tid, uint32_t pid)
{
	if (in(c, pid) && !set_add(&c->members, tid))
		c->given_up = true;
}

void ws_cone_near(struct ws_cone *c, const struct ws_rec_hdr *rec)
{
	if (c->given_up || rec->ts < ws_cone_from(c))
		return;
	/*
	 * Not who held a runqueue link's CPU: the switches there are kept (the CPU's timeline, its
	 * holders' shares), and the chain names its holders in ran[] already
	 */
	if (rec->ctx == WS_CTX_TASK)
		add_member(c, rec->tid, rec->pid);
	if (rec->kind == WS_SCHED_SWITCH && rec->size >= WS_SCHED_SWITCH_V0_SIZE) {
		const struct ws_sched_switch *sw = (const void *)rec;

		add_member(c, sw->next_tid, sw->next_pid);
	} else if (rec->kind == WS_SCHED_WAKING && rec->size >= WS_SCHED_WAKING_V0_SIZE) {
		const struct ws_sched_waking *wk = (const void *)rec;

		add_member(c, wk->wakee_tid, wk->wakee_pid);
		/* whoever woke one of the cone's threads: that wait's chain reads its timeline */
		if (rec->ctx == WS_CTX_TASK && own(c, wk->wakee_tid))
			add_near(c, rec->tid, rec->pid);
	}
}

bool ws_cone_keeps(const struct ws_cone *c, const struct ws_rec_hdr *rec)
{
	switch (rec->kind) {
	case WS_KIND_LOST: /* every chain over a loss is said incomplete: all of them */
		return true;
	/* what names, makes and ends the cone's threads: whatever its time */
	case WS_KIND_PROC_EXIT:
	case WS_SCHED_EXIT:
	case WS_SCHED_COMM:
	case WS_KIND_OPEN_WAIT:
		return in(c, rec->pid);
	case WS_SCHED_FORK:
		return in(c, rec->pid) || (rec->size >= WS_SCHED_FORK_V0_SIZE &&
					   in(c, ((const struct ws_sched_fork *)rec)->child_pid));
	}
	if (rec->ts < ws_cone_from(c))
		return false;
	if (in(c, rec->pid))
		return true;
	switch (rec->kind) {
	case WS_SCHED_SWITCH:
		return rec->size >= WS_SCHED_SWITCH_V0_SIZE &&
		       (in(c, ((const struct ws_sched_switch *)rec)->next_pid) || on_cpus(c, rec));
	case WS_SCHED_WAKING:
		return rec->size >= WS_SCHED_WAKING_V0_SIZE &&
		       in(c, ((const struct ws_sched_waking *)rec)->wakee_pid);
	case WS_SCHED_SHORT_CAUSES: /* written as another thread switches it in */
		return rec->size >= sizeof(struct ws_sched_short_causes) &&
		       set_has(&c->members, ((const struct ws_sched_short_causes *)rec)->tid);
	case WS_SCHED_RECLAIM:
		return false; /* the current thread's own, of another process */
	case WS_KIND_STACK:
		return rec->size >= sizeof(struct ws_rec_stack) &&
		       in(c, ((const struct ws_rec_stack *)rec)->pid);
	}
	/*
	 * A source's record written in another process's context: an interrupt's (a completion
	 * proves a wakeup done in the same bracket; the bracket's thread is no one's), or the idle
	 * task's
	 */
	return rec->ctx != WS_CTX_TASK || !rec->tid;
}

size_t ws_cone_pids(const struct ws_cone *c, uint32_t *pids, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < c->pids.cap && n < max; i++)
		if (c->pids.v[i])
			pids[n++] = c->pids.v[i];
	for (size_t i = 0; i < c->near.cap && n < max; i++)
		if (c->near.v[i])
			pids[n++] = c->near.v[i];
	return n;
}
