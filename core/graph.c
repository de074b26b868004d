// SPDX-License-Identifier: MIT
/*
 * Thread timelines and wake edges. Everything here is driven by records in
 * timestamp order; nothing links two threads except a wakeup one of them did.
 */
#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "syscall_fmt.h"
#include "util.h"

#define CLAIM_NONE 0
/*
 * The thread's last switch-out: the kernel's TASK_DEAD in the raw state (tp_btf), or the
 * EXIT_DEAD/EXIT_ZOMBIE the classic tracepoint reports for it. Any other state, even after
 * its exit was seen, is a real wait: an exiting thread still sleeps in exit_mm() and on
 * faults of its robust futex list.
 */
#define WS_TASK_GONE (0x80 | 0x10 | 0x20)

struct claim_slot {
	struct ws_claim c;
	uint64_t hash;
	uint64_t group; /* see ws_graph_claim_group */
	uint32_t refs;	/* 0: free */
};

struct name_slot {
	uint32_t tid, pid; /* tid 0: empty */
	char comm[WS_COMM];
	uint64_t seen; /* last record naming it, so names of long-gone tids can go */
};

struct cpu_run {
	uint64_t ts;
	uint32_t tid, pid;
};

struct cpu_hist {
	struct cpu_run *r;
	size_t head, n, cap;
	uint64_t evicted_to; /* runs before this were dropped */
	bool listed;	     /* in ws_graph.used */
};

struct loss {
	uint64_t from, to;
};

struct ws_graph {
	struct ws_graph_ops ops;
	uint64_t min_block, max_window;
	uint64_t max_history; /* bytes of intervals and CPU runs kept at most */
	size_t live_runs;     /* CPU run entries kept, all CPUs */

	struct ws_thread **threads; /* open addressing by tid; current incarnations */
	size_t nthreads, threads_cap;
	struct ws_thread *dead;

	struct name_slot *names;
	size_t nnames, names_cap;

	struct claim_slot *claims; /* id = index; 0 unused */
	size_t nclaims, claims_cap;
	uint32_t *claim_index; /* open addressing: hash -> id */
	size_t claim_index_cap, claims_live;
	uint32_t *claim_free;
	size_t nfree, free_cap;

	struct cpu_hist *cpus;
	size_t ncpus;
	/*
	 * The CPU ids seen, in first-seen order: the loops over every CPU walk
	 * these, so one record with cpu = 65535 costs one slot, not 65,536 per pass.
	 */
	uint16_t *used;
	size_t nused, used_cap;

	struct loss *losses;
	size_t nlosses, losses_cap;

	uint64_t last_ts;    /* the latest record's time: where open intervals end at a flush */
	uint32_t follow_tid; /* every wait of this thread goes to on_wait (ws_graph_follow) */
	/* out of memory: what could not be kept spans [oom_from, oom_to]; chains there are
	 * incomplete */
	uint64_t oom_from, oom_to;
	uint64_t follow_min;
	struct ws_graph_stats st;
};

/*
 * Memory ran out around @ts: something of the history was not kept. Nothing is allocated here
 * (that is what failed); the window only grows, and every chain that overlaps it is marked
 * incomplete, the summary counts the failures.
 */
static void oom(struct ws_graph *g, uint64_t ts)
{
	if (!g->st.oom || ts < g->oom_from)
		g->oom_from = ts;
	if (ts > g->oom_to)
		g->oom_to = ts;
	g->st.oom++;
}

/* ---- thread table ------------------------------------------------------------------- */

static struct ws_thread **thread_slot(struct ws_graph *g, uint32_t tid)
{
	size_t mask = g->threads_cap - 1, i = ws_hash64(tid) & mask;

	while (g->threads[i] && g->threads[i]->tid != tid)
		i = (i + 1) & mask;
	return &g->threads[i];
}

static int threads_grow(struct ws_graph *g)
{
	struct ws_thread **old = g->threads;
	size_t oldcap = g->threads_cap;

	g->threads_cap = oldcap ? oldcap * 2 : 1024;
	g->threads = calloc(g->threads_cap, sizeof(*g->threads));
	if (!g->threads) {
		g->threads = old;
		g->threads_cap = oldcap;
		return -ENOMEM;
	}
	for (size_t i = 0; i < oldcap; i++)
		if (old[i])
			*thread_slot(g, old[i]->tid) = old[i];
	free(old);
	return 0;
}

/* Remove @tid from the open-addressing table, keeping probe chains intact. */
static void thread_unlink(struct ws_graph *g, uint32_t tid)
{
	size_t mask = g->threads_cap - 1;
	struct ws_thread **s = thread_slot(g, tid);
	size_t i = s - g->threads;

	if (!*s)
		return;
	*s = NULL;
	g->nthreads--;
	for (size_t j = (i + 1) & mask; g->threads[j]; j = (j + 1) & mask) {
		struct ws_thread *t = g->threads[j];

		g->threads[j] = NULL;
		*thread_slot(g, t->tid) = t;
	}
}

struct ws_thread *ws_graph_thread(struct ws_graph *g, uint32_t tid)
{
	return g->threads_cap ? *thread_slot(g, tid) : NULL;
}

struct ws_thread *ws_graph_thread_at(struct ws_graph *g, uint32_t tid, uint64_t ts)
{
	struct ws_thread *t = ws_graph_thread(g, tid);

	if (t && t->born <= ts)
		return t;
	/* the tid may have been reused since: look among the threads that exited */
	for (struct ws_thread *d = g->dead; d; d = d->next_dead)
		if (d->tid == tid && d->born <= ts && ts <= d->died)
			return d;
	/* no incarnation of @tid existed then; never lend it another one's timeline */
	return NULL;
}

/* ---- names of all threads seen, traced or not ----------------------------------------- */

static struct name_slot *name_slot(struct ws_graph *g, uint32_t tid, bool create)
{
	size_t mask, i;

	if (create && (g->nnames + 1) * 2 > g->names_cap) {
		struct name_slot *old = g->names;
		size_t oldcap = g->names_cap;

		g->names_cap = oldcap ? oldcap * 2 : 1024;
		g->names = calloc(g->names_cap, sizeof(*g->names));
		if (!g->names) {
			g->names = old;
			g->names_cap = oldcap;
			return NULL;
		}
		g->nnames = 0;
		for (size_t k = 0; k < oldcap; k++) {
			if (old[k].tid) {
				struct name_slot *n = name_slot(g, old[k].tid, true);

				*n = old[k];
			}
		}
		free(old);
	}
	if (!g->names_cap)
		return NULL;
	mask = g->names_cap - 1;
	for (i = ws_hash64(tid) & mask; g->names[i].tid; i = (i + 1) & mask)
		if (g->names[i].tid == tid)
			return &g->names[i];
	if (!create)
		return NULL;
	g->names[i].tid = tid;
	g->nnames++;
	return &g->names[i];
}

static void name_set(struct ws_graph *g, uint32_t tid, uint32_t pid, const char *comm, uint64_t ts)
{
	struct name_slot *n;

	if (!tid)
		return;
	n = name_slot(g, tid, true);
	if (!n)
		return;
	n->pid = pid;
	n->seen = ts;
	if (comm)
		strncpy(n->comm, comm, WS_COMM - 1);
}

const char *ws_graph_comm(struct ws_graph *g, uint32_t tid)
{
	struct name_slot *n = name_slot(g, tid, false);

	if (tid == 0)
		return "swapper";
	return n && n->comm[0] ? n->comm : "?";
}

uint32_t ws_graph_pid_of(struct ws_graph *g, uint32_t tid)
{
	struct name_slot *n = name_slot(g, tid, false);

	return n ? n->pid : 0;
}

/* ---- claims: interned, so equal explanations share one copy ------------------------------ */

/* The bytes of a claim that can differ: unused fields are zero (see infer). */
static size_t claim_used(const struct ws_claim *c)
{
	unsigned int n = c->nfields < WS_CLAIM_FIELDS ? c->nfields : WS_CLAIM_FIELDS;

	return offsetof(struct ws_claim, fields) + n * sizeof(c->fields[0]);
}

static uint32_t *claim_index_slot(struct ws_graph *g, const struct ws_claim *c, uint64_t h)
{
	size_t mask = g->claim_index_cap - 1, i = h & mask;

	while (g->claim_index[i]) {
		struct claim_slot *s = &g->claims[g->claim_index[i]];

		if (s->hash == h && s->c.owner == c->owner &&
		    memcmp(&s->c, c, claim_used(c)) == 0 &&
		    memcmp(&s->c.syscall, &c->syscall, sizeof(c->syscall)) == 0)
			break;
		i = (i + 1) & mask;
	}
	return &g->claim_index[i];
}

static int claim_index_rebuild(struct ws_graph *g, size_t cap)
{
	free(g->claim_index);
	g->claim_index = calloc(cap, sizeof(*g->claim_index));
	if (!g->claim_index)
		return -ENOMEM;
	g->claim_index_cap = cap;
	for (size_t id = 1; id < g->nclaims; id++)
		if (g->claims[id].refs)
			*claim_index_slot(g, &g->claims[id].c, g->claims[id].hash) = id;
	return 0;
}

int ws_graph_resource(struct ws_graph *g, const struct ws_claim *c, char *buf, size_t len)
{
	int n = 0;

	if (len)
		buf[0] = 0;
	if (c && len && g->ops.resource)
		n = g->ops.resource(g->ops.ctx, c, buf, len);
	if (n <= 0 || (size_t)n >= len) {
		if (len)
			buf[0] = 0;
		return 0;
	}
	return n;
}

int ws_graph_root_label(struct ws_graph *g, const struct ws_claim *c, const char *comm, char *buf,
			size_t len)
{
	int n = 0;

	if (!len)
		return 0;
	buf[0] = 0;
	if (c && g->ops.root_label)
		n = g->ops.root_label(g->ops.ctx, c, comm, buf, len);
	if (n <= 0) {
		buf[0] = 0;
		return 0;
	}
	return strlen(buf); /* a long label is cut, as the summary prints it */
}

/*
 * Odd keys name a resource (its source, kind and name hashed); even keys are a claim's own id,
 * for claims that name none. Computed once, when the claim is first interned.
 */
static uint64_t claim_group_of(struct ws_graph *g, const struct ws_claim *c, uint32_t id)
{
	char res[128];
	int n = ws_graph_resource(g, c, res, sizeof(res));

	if (n <= 0)
		return (uint64_t)id << 1;
	return (ws_hash_bytes(res, n) ^ ws_hash_bytes(c->kind, strnlen(c->kind, sizeof(c->kind))) ^
		((uint64_t)c->owner << 48)) |
	       1;
}

uint64_t ws_graph_claim_group(struct ws_graph *g, uint32_t id)
{
	return id && id < g->nclaims && g->claims[id].refs ? g->claims[id].group : 0;
}

/* Intern @c (whose padding and unused bytes must be zero); returns an id, 0 on ENOMEM. */
static uint32_t claim_intern(struct ws_graph *g, const struct ws_claim *c)
{
	uint64_t h = ws_hash_bytes(c, claim_used(c)) ^ c->owner ^
		     ws_hash_bytes(&c->syscall, sizeof(c->syscall));
	uint32_t *slot, id;

	if ((g->claims_live + 1) * 2 > g->claim_index_cap &&
	    claim_index_rebuild(g, g->claim_index_cap ? g->claim_index_cap * 2 : 256)) {
		oom(g, g->last_ts);
		return CLAIM_NONE;
	}
	slot = claim_index_slot(g, c, h);
	if (*slot) {
		g->claims[*slot].refs++;
		return *slot;
	}
	if (g->nfree) {
		id = g->claim_free[--g->nfree];
	} else {
		if (ws_grow((void **)&g->claims, &g->claims_cap, g->nclaims + 1,
			    sizeof(*g->claims))) {
			oom(g, g->last_ts);
			return CLAIM_NONE;
		}
		if (!g->nclaims)
			g->nclaims = 1; /* id 0 means "no claim" */
		id = g->nclaims++;
	}
	g->claims[id].c = *c;
	g->claims[id].hash = h;
	g->claims[id].group = claim_group_of(g, c, id);
	g->claims[id].refs = 1;
	g->claims_live++;
	*slot = id;
	return id;
}

static void claim_put(struct ws_graph *g, uint32_t id)
{
	struct claim_slot *s;

	if (id == CLAIM_NONE)
		return;
	s = &g->claims[id];
	if (--s->refs)
		return;
	g->claims_live--;
	if (!ws_grow((void **)&g->claim_free, &g->free_cap, g->nfree + 1, sizeof(uint32_t)))
		g->claim_free[g->nfree++] = id;
	/* linear probing without tombstones: re-place the rest of the probe run */
	size_t mask = g->claim_index_cap - 1;
	uint32_t *slot = claim_index_slot(g, &s->c, s->hash);
	size_t i = slot - g->claim_index;

	*slot = CLAIM_NONE;
	for (size_t j = (i + 1) & mask; g->claim_index[j]; j = (j + 1) & mask) {
		uint32_t moved = g->claim_index[j];

		g->claim_index[j] = CLAIM_NONE;
		*claim_index_slot(g, &g->claims[moved].c, g->claims[moved].hash) = moved;
	}
}

const struct ws_claim *ws_graph_claim(struct ws_graph *g, uint32_t id)
{
	return id && id < g->nclaims && g->claims[id].refs ? &g->claims[id].c : NULL;
}

/* A claim made by the core itself when no source has one. */
static uint32_t core_claim(struct ws_graph *g, const char *kind, const char *evidence)
{
	struct ws_claim c;

	memset(&c, 0, sizeof(c));
	c.sz = sizeof(c);
	c.strength = WS_CLAIM_FALLBACK;
	c.root = true;
	c.owner = UINT16_MAX;
	strncpy(c.kind, kind, sizeof(c.kind) - 1);
	strncpy(c.evidence, evidence, sizeof(c.evidence) - 1);
	return claim_intern(g, &c);
}

/* ---- timelines ------------------------------------------------------------------------- */

static struct ws_thread *thread_get(struct ws_graph *g, uint32_t tid, uint32_t pid, uint64_t ts)
{
	struct ws_thread **s, *t;

	if ((g->nthreads + 1) * 2 > g->threads_cap && threads_grow(g)) {
		oom(g, ts);
		return NULL;
	}
	s = thread_slot(g, tid);
	if (*s)
		return *s;
	t = calloc(1, sizeof(*t));
	if (!t) {
		oom(g, ts);
		return NULL;
	}
	t->tid = tid;
	t->pid = pid;
	t->born = ts;
	t->died = WS_NO_END;
	struct name_slot *n = name_slot(g, tid, false);

	if (n && n->comm[0])
		memcpy(t->comm, n->comm, WS_COMM);
	*s = t;
	g->nthreads++;
	g->st.threads++;
	return t;
}

static struct ws_ival *cur(struct ws_thread *t)
{
	return t->n > t->head ? &t->iv[t->n - 1] : NULL;
}

static enum ws_thread_state cur_state(struct ws_thread *t)
{
	struct ws_ival *c = cur(t);

	return c && c->end == WS_NO_END ? c->state : WS_STATE_UNKNOWN;
}

/* Close the open interval at @ts and open one in @state. */
static void transition(struct ws_graph *g, struct ws_thread *t, uint64_t ts, uint8_t state,
		       uint16_t cpu)
{
	struct ws_ival *c = cur(t);

	if (c && c->end == WS_NO_END) {
		c->end = ts < c->start ? c->start : ts;
		ts = c->end;
	}
	if (ws_grow((void **)&t->iv, &t->cap, t->n + 1, sizeof(*t->iv))) {
		oom(g, ts);
		return;
	}
	t->iv[t->n++] =
		(struct ws_ival){ .start = ts, .end = WS_NO_END, .cpu = cpu, .state = state };
	g->st.live_intervals++;
}

size_t ws_thread_find(const struct ws_thread *t, uint64_t ts)
{
	size_t lo = t->head, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->iv[mid].end <= ts && t->iv[mid].end != WS_NO_END)
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
		.waker_traced = g->ops.pid_traced(g->ops.ctx, wk->waker_pid),
	};
	struct ws_claim c;

	memset(&c, 0, sizeof(c));
	c.sz = sizeof(c);
	if (g->ops.infer && g->ops.infer(g->ops.ctx, &w, &c) > 0) {
		/* the syscall it waited in goes with every claim, whoever made it */
		if (wk->sz >= offsetof(struct ws_wake, waker_sys)) {
			c.syscall = wk->wakee_sys;
			ws_syscall_normalize(&c.syscall);
		}
		return claim_intern(g, &c);
	}
	return core_claim(g, "unknown", "no source could explain this wakeup");
}

static void release_pending(struct ws_graph *g, struct ws_thread *t)
{
	if (t->pending)
		claim_put(g, t->pending_claim);
	t->pending = false;
}

/* The thread is gone at @ts: close its timeline and keep it only for chains that need it. */
static void thread_retire(struct ws_graph *g, struct ws_thread *t, uint64_t ts)
{
	struct ws_ival *c = cur(t);

	if (c && c->end == WS_NO_END)
		c->end = ts < c->start ? c->start : ts;
	release_pending(g, t);
	t->exited = true;
	t->died = c && c->end > ts ? c->end : ts;
	t->off_start = 0;
	thread_unlink(g, t->tid);
	t->next_dead = g->dead;
	g->dead = t;
}

static void switch_out(struct ws_graph *g, struct ws_thread *t, const struct ws_switch *sw)
{
	struct ws_ival *c = cur(t);
	/* transition() may move t->iv: keep the ending stint's start, not a pointer into it */
	uint64_t stint_start = c ? c->start : WS_NO_END;
	uint64_t ts = sw->ts;

	if (cur_state(t) == WS_STATE_BLOCKED) {
		/*
		 * It leaves the CPU, yet it was off it: its return (a wakeup and a
		 * switch-in) never arrived. Seen on 6.18, rarely, with nothing lost
		 * in the ring and no bpf_printk from either program either. When it
		 * woke and ran is unknown, so the stretch is not observed, not one
		 * long wait; chains over it say so (incomplete).
		 */
		c->state = WS_STATE_UNKNOWN;
		g->st.switch_ins_unseen++;
	}
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
		struct ws_ival *b = cur(t);

		b->claim = t->pending_claim;
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

	if (s != WS_STATE_RUNNING && s != WS_STATE_UNKNOWN)
		return;
	switch_out(g, t, &sw);
	if (state && wake && cur_state(t) == WS_STATE_BLOCKED) {
		cur(t)->claim = core_claim(
			g, "unknown", "blocked shorter than the resolution: cause not recorded");
		transition(g, t, wake, WS_STATE_RUNNABLE, cpu);
		t->wake_ts = wake;
	}
}

/* @t's latest running stretch had summarised periods off CPU in it (see WS_IVAL_SHORT_INSIDE). */
static void mark_short_inside(struct ws_thread *t)
{
	for (size_t i = t->n; i > t->head; i--) {
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

static void switch_in(struct ws_graph *g, struct ws_thread *t, const struct ws_switch *sw)
{
	enum ws_thread_state s = cur_state(t);
	uint64_t ts = sw->ts;

	if (s == WS_STATE_BLOCKED) {
		cur(t)->claim = core_claim(g, "unknown", "no wakeup recorded for this wait");
		t->wake_ts = ts;
		g->st.waits_unexplained++;
	}
	transition(g, t, ts, WS_STATE_RUNNING, sw->cpu);
	if (t->off_start && g->ops.on_wait &&
	    (ts - t->off_start >= g->min_block ||
	     (t->tid == g->follow_tid && ts - t->off_start >= g->follow_min))) {
		struct ws_wait_done d = {
			.t = t,
			.start = t->off_start,
			.wake = t->wake_ts ? t->wake_ts : ts,
			.end = ts,
			.cpu = sw->cpu,
			.below_min_block = ts - t->off_start < g->min_block,
		};

		/* the runnable stretch ran on the CPU it got back on */
		if (t->n >= 2 && t->iv[t->n - 2].state == WS_STATE_RUNNABLE)
			t->iv[t->n - 2].cpu = sw->cpu;
		g->ops.on_wait(g->ops.ctx, &d);
	} else if (t->n >= 2 && t->iv[t->n - 2].state == WS_STATE_RUNNABLE) {
		t->iv[t->n - 2].cpu = sw->cpu;
	}
	t->off_start = 0;
	t->wake_ts = 0;
}

/* Time of @cpu's latest run kept (0: none). */
static uint64_t cpu_last_ts(struct ws_graph *g, uint16_t cpu)
{
	struct cpu_hist *h = cpu < g->ncpus ? &g->cpus[cpu] : NULL;

	return h && h->n > h->head ? h->r[h->n - 1].ts : 0;
}

static void cpu_push(struct ws_graph *g, uint16_t cpu, uint64_t ts, uint32_t tid, uint32_t pid)
{
	struct cpu_hist *h;

	if (cpu >= g->ncpus) {
		size_t n = cpu + 1;
		struct cpu_hist *p = realloc(g->cpus, n * sizeof(*p));

		if (!p) {
			oom(g, ts);
			return;
		}
		memset(p + g->ncpus, 0, (n - g->ncpus) * sizeof(*p));
		g->cpus = p;
		g->ncpus = n;
	}
	h = &g->cpus[cpu];
	if (!h->listed) {
		if (ws_grow((void **)&g->used, &g->used_cap, g->nused + 1, sizeof(*g->used))) {
			oom(g, ts);
			return;
		}
		g->used[g->nused++] = cpu;
		h->listed = true;
	}
	if (ws_grow((void **)&h->r, &h->cap, h->n + 1, sizeof(*h->r))) {
		oom(g, ts);
		return;
	}
	h->r[h->n++] = (struct cpu_run){ .ts = ts, .tid = tid, .pid = pid };
	g->live_runs++;
}

void ws_graph_switch(struct ws_graph *g, const struct ws_switch *sw)
{
	bool summarised =
		sw->sz >= offsetof(struct ws_switch, prev_out_later) + sizeof(sw->prev_out_later);
	uint32_t prev_pid = ws_graph_pid_of(g, sw->prev_tid);
	struct ws_thread *t;

	g->st.switches++;
	if (sw->ts > g->last_ts)
		g->last_ts = sw->ts;
	name_set(g, sw->next_tid, sw->next_pid, sw->next_comm, sw->ts);
	if (sw->prev_pid)
		prev_pid = sw->prev_pid;
	/* prev's own switch-in may not have been reported: it held the CPU since then */
	if (summarised && sw->prev_run_start && sw->prev_run_start < sw->ts &&
	    sw->prev_run_start > cpu_last_ts(g, sw->cpu))
		cpu_push(g, sw->cpu, sw->prev_run_start, sw->prev_tid, prev_pid);
	cpu_push(g, sw->cpu, sw->ts, sw->next_tid, sw->next_pid);
	if (sw->prev_tid && g->ops.pid_traced(g->ops.ctx, prev_pid) &&
	    !(summarised && sw->prev_out_later)) {
		t = thread_get(g, sw->prev_tid, prev_pid, sw->ts);
		if (t)
			switch_out(g, t, sw);
	}
	if (sw->next_tid && g->ops.pid_traced(g->ops.ctx, sw->next_pid)) {
		t = thread_get(g, sw->next_tid, sw->next_pid, sw->ts);
		if (t) {
			if (sw->next_comm)
				strncpy(t->comm, sw->next_comm, WS_COMM - 1);
			if (summarised && sw->next_off_ts && sw->next_off_ts <= sw->ts)
				late_switch_out(g, t, sw->next_off_ts, sw->next_off_state,
						sw->next_off_cpu, sw->next_wake_ts);
			if (summarised)
				short_add(t, &sw->next_short);
			switch_in(g, t, sw);
		}
	}
}

void ws_graph_wake(struct ws_graph *g, const struct ws_wake *wk)
{
	struct ws_thread *t;
	struct ws_ival *c;

	g->st.wakes++;
	if (wk->ts > g->last_ts)
		g->last_ts = wk->ts;
	if (!(wk->ctx & (WS_CTX_HARDIRQ | WS_CTX_SOFTIRQ)))
		name_set(g, wk->waker_tid, wk->waker_pid, wk->waker_comm, wk->ts);
	/* the waker's stretch up to now had summarised waits in it: say so before any chain
	 * reads that stretch (its next written switch-in would say it too late) */
	if (wk->sz >= offsetof(struct ws_wake, waker_short) + sizeof(wk->waker_short) &&
	    wk->waker_short && (t = ws_graph_thread(g, wk->waker_tid)) != NULL &&
	    cur_state(t) == WS_STATE_RUNNING)
		mark_short_inside(t);
	if (!g->ops.pid_traced(g->ops.ctx, wk->wakee_pid))
		return;
	t = thread_get(g, wk->wakee_tid, wk->wakee_pid, wk->ts);
	if (!t)
		return;
	if (wk->sz >= offsetof(struct ws_wake, off_cpu) + sizeof(wk->off_cpu) && wk->off_ts &&
	    wk->off_ts <= wk->ts)
		late_switch_out(g, t, wk->off_ts, wk->off_state, wk->off_cpu, 0);
	switch (cur_state(t)) {
	case WS_STATE_BLOCKED:
		c = cur(t);
		c->claim = infer(g, t, c->start, t->off_state, wk);
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
		/* first sight (attach): we never saw it go to sleep, so no wait to explain */
		transition(g, t, wk->ts, WS_STATE_RUNNABLE, wk->cpu);
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
		name_set(g, ev->tid, ev->pid, ev->comm, ev->ts);
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
		if (t && ev->sz >= offsetof(struct ws_thread_event, short_waits) +
					   sizeof(ev->short_waits))
			short_add(t, &ev->short_waits);
		break;
	}
}

void ws_graph_open_wait(struct ws_graph *g, uint32_t tid, uint32_t pid, const char *comm,
			uint64_t since, uint32_t off_state)
{
	struct ws_thread *t;

	if (!g->ops.pid_traced(g->ops.ctx, pid))
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

void ws_graph_loss(struct ws_graph *g, uint64_t from, uint64_t to)
{
	if (ws_grow((void **)&g->losses, &g->losses_cap, g->nlosses + 1, sizeof(*g->losses))) {
		oom(g, from);
		oom(g, to);
		return;
	}
	g->losses[g->nlosses++] = (struct loss){ from, to };
}

bool ws_graph_window_lost(struct ws_graph *g, uint64_t from, uint64_t to)
{
	for (size_t i = 0; i < g->nlosses; i++)
		if (g->losses[i].from <= to && g->losses[i].to >= from)
			return true;
	return false;
}

bool ws_graph_window_oom(struct ws_graph *g, uint64_t from, uint64_t to)
{
	return g->st.oom && g->oom_from <= to && g->oom_to >= from;
}

uint64_t ws_graph_cpu_evicted_to(struct ws_graph *g, uint16_t cpu)
{
	return cpu < g->ncpus ? g->cpus[cpu].evicted_to : 0;
}

int ws_graph_cpu_users(struct ws_graph *g, uint16_t cpu, uint64_t from, uint64_t to,
		       struct ws_cpu_user *out, int max)
{
	struct cpu_hist *h;
	int n = 0;

	if (cpu >= g->ncpus || max <= 0)
		return 0;
	h = &g->cpus[cpu];
	/* the history is in time order: start at the last switch at or before @from */
	size_t lo = h->head, hi = h->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (h->r[mid].ts <= from)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo > h->head ? lo - 1 : h->head; i < h->n; i++) {
		uint64_t s = h->r[i].ts, e = i + 1 < h->n ? h->r[i + 1].ts : to;
		int k;

		if (s >= to)
			break;
		if (e <= from)
			continue;
		s = s < from ? from : s;
		e = e > to ? to : e;
		for (k = 0; k < n && out[k].tid != h->r[i].tid; k++)
			;
		if (k == n) {
			if (n == max)
				continue;
			out[n++] = (struct ws_cpu_user){ .tid = h->r[i].tid, .pid = h->r[i].pid };
		}
		out[k].ns += e - s;
	}
	for (int i = 1; i < n; i++) /* longest first; n is small */
		for (int j = i; j > 0 && out[j].ns > out[j - 1].ns; j--) {
			struct ws_cpu_user tmp = out[j];

			out[j] = out[j - 1];
			out[j - 1] = tmp;
		}
	return n;
}

/* ---- eviction -------------------------------------------------------------------------- */

/*
 * An array that was sized for a burst and is now mostly empty gives the
 * memory back, so RSS follows the history kept, not its high-water mark.
 */
static size_t shrink(void **arr, size_t *cap, size_t n, size_t elem)
{
	size_t ncap = n * 2 < 256 ? 256 : n * 2;
	void *p;

	if (*cap <= 256 || *cap < 4 * n)
		return 0;
	p = realloc(*arr, ncap * elem);
	if (!p)
		return 0;
	*arr = p;
	ncap = *cap - ncap;
	*cap -= ncap;
	return ncap * elem;
}

/* Interval @iv of @t is final and leaves the history: show it to whoever exports timelines. */
static void ival_done(struct ws_graph *g, const struct ws_thread *t, const struct ws_ival *iv)
{
	if (g->ops.on_ival)
		g->ops.on_ival(g->ops.ctx, t, iv, iv->claim ? ws_graph_claim(g, iv->claim) : NULL);
}

static size_t thread_evict(struct ws_graph *g, struct ws_thread *t, uint64_t before)
{
	while (t->head < t->n && t->iv[t->head].end != WS_NO_END && t->iv[t->head].end < before) {
		if (t->iv[t->head].end > t->evicted_to)
			t->evicted_to = t->iv[t->head].end;
		ival_done(g, t, &t->iv[t->head]);
		claim_put(g, t->iv[t->head].claim);
		t->head++;
		g->st.live_intervals--;
	}
	if (t->head > 64 && t->head * 2 > t->n) {
		memmove(t->iv, t->iv + t->head, (t->n - t->head) * sizeof(*t->iv));
		t->n -= t->head;
		t->head = 0;
	}
	return shrink((void **)&t->iv, &t->cap, t->n, sizeof(*t->iv));
}

static size_t thread_free(struct ws_graph *g, struct ws_thread *t)
{
	size_t bytes = sizeof(*t) + t->cap * sizeof(*t->iv);

	for (size_t i = t->head; i < t->n; i++) {
		ival_done(g, t, &t->iv[i]);
		claim_put(g, t->iv[i].claim);
		g->st.live_intervals--;
	}
	free(t->iv);
	free(t);
	return bytes;
}

static void thread_flush(struct ws_graph *g, struct ws_thread *t)
{
	for (size_t i = t->head; i < t->n; i++) {
		struct ws_ival iv = t->iv[i];

		if (iv.end == WS_NO_END)
			iv.end = g->last_ts > iv.start ? g->last_ts : iv.start;
		ival_done(g, t, &iv);
	}
}

void ws_graph_flush(struct ws_graph *g)
{
	for (size_t i = 0; i < g->threads_cap; i++)
		if (g->threads[i])
			thread_flush(g, g->threads[i]);
	for (struct ws_thread *t = g->dead; t; t = t->next_dead)
		thread_flush(g, t);
	g->ops.on_ival = NULL;
}

static size_t cpu_evict(struct ws_graph *g, struct cpu_hist *h, uint64_t before)
{
	/* the run in progress at @before stays: it says who held the CPU then */
	while (h->head + 1 < h->n && h->r[h->head + 1].ts < before) {
		h->head++;
		g->live_runs--;
		h->evicted_to = h->r[h->head].ts;
	}
	if (h->head > 64 && h->head * 2 > h->n) {
		memmove(h->r, h->r + h->head, (h->n - h->head) * sizeof(*h->r));
		h->n -= h->head;
		h->head = 0;
	}
	return shrink((void **)&h->r, &h->cap, h->n, sizeof(*h->r));
}

/*
 * Forget names not seen since @before, unless a thread still alive holds the tid: with tid
 * churn the table would otherwise follow every tid ever seen. Rebuilt only when it has grown
 * well past the live threads, so the cost stays proportional to what is dropped.
 */
static void names_evict(struct ws_graph *g, uint64_t before)
{
	struct name_slot *old = g->names;
	size_t oldcap = g->names_cap;

	if (g->nnames < 4096 || g->nnames < 4 * g->nthreads)
		return;
	g->names = calloc(oldcap, sizeof(*g->names));
	if (!g->names) {
		g->names = old;
		return;
	}
	g->nnames = 0;
	for (size_t i = 0; i < oldcap; i++) {
		if (!old[i].tid || (old[i].seen < before && !ws_graph_thread(g, old[i].tid)))
			continue;
		*name_slot(g, old[i].tid, true) = old[i];
	}
	free(old);
}

static uint64_t history_bytes(struct ws_graph *g)
{
	return g->st.live_intervals * sizeof(struct ws_ival) +
	       g->live_runs * sizeof(struct cpu_run);
}

/* Bytes of history that eviction at @before would keep. */
static uint64_t bytes_kept(struct ws_graph *g, uint64_t before)
{
	uint64_t iv = 0, runs = 0;

	for (size_t i = 0; i < g->threads_cap; i++)
		if (g->threads[i])
			iv += g->threads[i]->n - ws_thread_find(g->threads[i], before);
	for (struct ws_thread *t = g->dead; t; t = t->next_dead)
		if (t->died >= before)
			iv += t->n - t->head;
	for (size_t u = 0; u < g->nused; u++) {
		struct cpu_hist *h = &g->cpus[g->used[u]];
		size_t lo = h->head, hi = h->n;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (h->r[mid].ts < before)
				lo = mid + 1;
			else
				hi = mid;
		}
		runs += h->n - lo;
	}
	return iv * sizeof(struct ws_ival) + runs * sizeof(struct cpu_run);
}

/*
 * Over budget: move the horizon forward until half the budget is kept (the
 * slack spares a search on every pass). Waits reaching back past it are then
 * reported incomplete (each thread's evicted_to), as for max_window.
 */
static uint64_t budget_horizon(struct ws_graph *g, uint64_t before, uint64_t now)
{
	uint64_t lo = before, hi = now;

	if (!g->max_history || history_bytes(g) <= g->max_history ||
	    bytes_kept(g, before) <= g->max_history)
		return before;
	while (lo + 1000000 < hi) { /* 1 ms is fine enough */
		uint64_t mid = lo + (hi - lo) / 2;

		if (bytes_kept(g, mid) > g->max_history / 2)
			lo = mid;
		else
			hi = mid;
	}
	g->st.history_trims++;
	if (!g->st.shortest_history_ns || now - hi < g->st.shortest_history_ns)
		g->st.shortest_history_ns = now - hi;
	return hi;
}

void ws_graph_evict(struct ws_graph *g, uint64_t now)
{
	uint64_t before = now > g->max_window ? now - g->max_window : 0;
	uint64_t oldest_open = now;
	struct ws_thread **pp;
	size_t freed = 0;

	/* keep what any wait still in progress may need to be explained */
	for (size_t i = 0; i < g->threads_cap; i++) {
		struct ws_thread *t = g->threads[i];

		if (t && t->off_start && t->off_start < oldest_open)
			oldest_open = t->off_start;
	}
	if (oldest_open > before)
		before = oldest_open;
	before = budget_horizon(g, before, now);
	for (size_t i = 0; i < g->threads_cap; i++)
		if (g->threads[i])
			freed += thread_evict(g, g->threads[i], before);
	for (pp = &g->dead; *pp;) {
		struct ws_thread *t = *pp;

		if (t->died < before) {
			*pp = t->next_dead;
			freed += thread_free(g, t);
		} else {
			pp = &t->next_dead;
		}
	}
	for (size_t u = 0; u < g->nused; u++)
		freed += cpu_evict(g, &g->cpus[g->used[u]], before);
	names_evict(g, before);

	size_t k = 0;

	for (size_t i = 0; i < g->nlosses; i++)
		if (g->losses[i].to >= before)
			g->losses[k++] = g->losses[i];
	g->nlosses = k;
#ifdef __GLIBC__
	/* glibc keeps freed heap pages mapped; after a burst, hand them back */
	if (freed >= (4u << 20))
		malloc_trim(0);
#endif
}

void ws_graph_retire_pid(struct ws_graph *g, uint32_t pid, uint64_t ts)
{
	struct ws_thread *gone[64];
	size_t n;

	/* retiring unlinks from the table: collect first, then retire */
	do {
		n = 0;
		for (size_t i = 0; i < g->threads_cap && n < 64; i++)
			if (g->threads[i] && g->threads[i]->pid == pid)
				gone[n++] = g->threads[i];
		for (size_t i = 0; i < n; i++)
			thread_retire(g, gone[i], ts);
	} while (n == 64);
}

/* ---- life cycle ------------------------------------------------------------------------ */

struct ws_graph *ws_graph_new(const struct ws_graph_ops *ops, uint64_t min_block_ns,
			      uint64_t max_window_ns, uint64_t max_history_bytes)
{
	struct ws_graph *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->ops = *ops;
	g->min_block = min_block_ns;
	g->max_window = max_window_ns;
	g->max_history = max_history_bytes;
	if (threads_grow(g)) {
		free(g);
		return NULL;
	}
	return g;
}

void ws_graph_follow(struct ws_graph *g, uint32_t tid, uint64_t min_ns)
{
	g->follow_tid = tid;
	g->follow_min = min_ns ? min_ns : 1;
}

void ws_graph_free(struct ws_graph *g)
{
	if (!g)
		return;
	g->ops.on_ival = NULL; /* freeing is not the end of a timeline; ws_graph_flush() is */
	for (size_t i = 0; i < g->threads_cap; i++)
		if (g->threads[i])
			thread_free(g, g->threads[i]);
	while (g->dead) {
		struct ws_thread *t = g->dead;

		g->dead = t->next_dead;
		thread_free(g, t);
	}
	for (size_t c = 0; c < g->ncpus; c++)
		free(g->cpus[c].r);
	free(g->cpus);
	free(g->used);
	free(g->threads);
	free(g->names);
	free(g->claims);
	free(g->claim_index);
	free(g->claim_free);
	free(g->losses);
	free(g);
}

void ws_graph_stats(struct ws_graph *g, struct ws_graph_stats *st)
{
	*st = g->st;
	st->claims = g->claims_live;
	st->history_bytes = history_bytes(g);
}
