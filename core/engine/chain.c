// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "chain.h"
#include "chain_impl.h"
#include "base/util.h"

/* The thread a claim hands the explanation to, or NULL where the chain ends. */
static struct ws_thread *next_thread(struct ws_graph *g, const struct ws_claim *cl, uint64_t ts)
{
	if (!cl || cl->root || !cl->woken_by)
		return NULL;
	return ws_graph_thread_at(g, cl->woken_by, ts);
}

/*
 * Up to where over [a, b] the timeline of @t, a lock's holder, is known. A holder did nothing to
 * end the wait (a waker ran to wake it): it may have left its CPU since its last switch-in, a
 * switch-out the scheduler source reports only with the next wakeup (ws_switch.prev_out_later).
 * Its stretch still open on CPU is then not known to be running: that part is not observed.
 */
static uint64_t held_known_to(const struct ws_thread *t, uint64_t a, uint64_t b)
{
	struct ws_ival iv;

	if (!t->n || t->last_end != WS_NO_END)
		return b;
	iv = ws_thread_ival(t, t->n - 1);
	if (iv.state != WS_STATE_RUNNING || iv.start >= b)
		return b;
	return iv.start > a ? iv.start : a;
}

/*
 * The claim of a stretch: a wait's, the quota's that kept a runnable one off the CPU, or the
 * memory reclaim's a running one worked for.
 */
static const struct ws_claim *ival_claim(struct ws_graph *g, const struct ws_ival *iv)
{
	return iv->state == WS_STATE_BLOCKED ||
			       (iv->state == WS_STATE_RUNNABLE &&
				(iv->flags & WS_IVAL_THROTTLED)) ||
			       (iv->state == WS_STATE_RUNNING && (iv->flags & WS_IVAL_RECLAIM))
		       ? ws_graph_claim(g, iv->claim)
		       : NULL;
}

static const char *state_kind(const struct ws_ival *iv, const struct ws_claim *cl)
{
	switch (iv->state) {
	case WS_STATE_RUNNING:
		return cl ? cl->kind : WS_KIND_RUNNING;
	case WS_STATE_RUNNABLE:
		return cl ? cl->kind : WS_KIND_RUNQUEUE;
	case WS_STATE_BLOCKED:
		return cl ? cl->kind : WS_KIND_UNKNOWN;
	default:
		return WS_KIND_UNKNOWN;
	}
}

/*
 * Runnable over [s, e] with the CPU idle for @idle of it: waiting for the CPU to wake up when
 * it was mostly idle, for other threads otherwise.
 */
static const char *runnable_kind_of_idle(uint64_t s, uint64_t e, uint64_t idle)
{
	return e > s && idle * 2 >= e - s ? WS_KIND_WAKEUP_LATENCY : WS_KIND_RUNQUEUE;
}

/* Who held @cpu over [s, e] (the idle task left out, its time in *idle), and the kind. */
static const char *runnable_kind(struct ws_graph *g, uint16_t cpu, uint64_t s, uint64_t e,
				 struct ws_link *l)
{
	/* room for many: the holders are gathered in time order and only then sorted */
	struct ws_cpu_user all[WS_CPU_HOLDERS];
	int n = ws_graph_cpu_users(g, cpu, s, e, all, WS_CPU_HOLDERS), k = 0;

	l->idle_ns = 0;
	l->ran_more = 0;
	l->ran_more_ns = 0;
	for (int i = 0; i < n; i++) {
		/*
		 * Never its own holder, nor one not recorded: a switch-out summarised in the kernel
		 * comes late, and what ran on the CPU after it went unrecorded (untraced tasks).
		 */
		if (all[i].tid == l->tid || all[i].tid == WS_CPU_UNRECORDED)
			continue;
		if (all[i].tid == 0) {
			l->idle_ns += all[i].ns;
		} else if (k < WS_CHAIN_MAX_RAN) {
			l->ran[k++] = all[i];
		} else {
			l->ran_more++;
			l->ran_more_ns += all[i].ns;
		}
	}
	l->nran = k;
	return runnable_kind_of_idle(s, e, l->idle_ns);
}

/* runnable_kind() of a piece of a wait: only its kind, not who held the CPU */
static const char *runnable_piece_kind(struct ws_graph *g, uint16_t cpu, uint64_t s, uint64_t e)
{
	return runnable_kind_of_idle(s, e, ws_graph_cpu_idle(g, cpu, s, e));
}

/*
 * What @t was doing for most of [a, b]: its intervals grouped by state and, when blocked, by
 * the resource their claims name (every request on one disk is one cause, each wait on one
 * futex too; a claim naming none is its own), the largest group winning. A thread running in
 * 50 ms slices between preemptions was "running", not "preempted"; 200 short writes to vda
 * outweigh 20 ms of running. @d->iv is the group's longest interval, clipped to [d->s, d->e]
 * (a blocked one is where the walk continues); what returns points to it. NULL when @t's
 * timeline does not reach into the window at all.
 */
struct dominant {
	struct ws_ival iv;
	uint64_t s, e;	       /* iv clipped to the window */
	uint64_t first, total; /* the group's first start, its clipped total */
	uint64_t longest;      /* its longest separate piece */
	uint32_t pieces;       /* its separate pieces (adjacent intervals are one) */
	uint8_t flags;	       /* WS_IVAL_* of any of its intervals */
};

#define GROUPS 32

/* The groups of intervals seen so far over one window, as dominant() builds them. */
struct dom_acc {
	struct group {
		uint8_t state;
		uint64_t key;
		uint64_t total, first, longest_iv, piece, longest, end;
		uint32_t pieces;
		uint8_t flags;
		struct ws_ival iv; /* a copy: a timeline keeps no struct ws_ival to point to */
	} gr[GROUPS];
	int n;
};

/* Count @iv, the next interval of the timeline, clipped to [a, b], into its group. */
static void dom_add(struct ws_graph *g, struct dom_acc *acc, const struct ws_ival *iv, uint64_t a,
		    uint64_t b)
{
	uint64_t cs = iv->start > a ? iv->start : a;
	uint64_t ce = iv->end < b ? iv->end : b;
	uint64_t key;
	struct group *p;
	int k;

	if (ce <= cs)
		return;
	key = iv->state == WS_STATE_BLOCKED || (iv->flags & (WS_IVAL_THROTTLED | WS_IVAL_RECLAIM))
		      ? ws_graph_claim_group(g, iv->claim)
		      : 0;
	for (k = 0; k < acc->n && (acc->gr[k].state != iv->state || acc->gr[k].key != key); k++)
		;
	if (k == acc->n) {
		if (acc->n == GROUPS)
			return; /* a window this busy: the first groups stand for it */
		acc->gr[acc->n++] = (struct group){ .state = iv->state, .key = key, .first = cs };
	}
	p = &acc->gr[k];
	p->flags |= iv->flags;
	p->total += ce - cs;
	if (ce - cs > p->longest_iv) {
		p->longest_iv = ce - cs;
		p->iv = *iv;
	}
	/* a blocked interval is one wait; running or runnable ones that touch are one stretch */
	if (!p->pieces || iv->state == WS_STATE_BLOCKED || cs != p->end) {
		p->pieces++;
		p->piece = 0;
	}
	p->piece += ce - cs;
	p->end = ce;
	if (p->piece > p->longest)
		p->longest = p->piece;
}

/* The largest group of @acc over [a, b] into @d; NULL when it has none. */
static const struct ws_ival *dom_result(const struct dom_acc *acc, uint64_t a, uint64_t b,
					struct dominant *d)
{
	int best = -1;

	for (int k = 0; k < acc->n; k++)
		if (best < 0 || acc->gr[k].total > acc->gr[best].total)
			best = k;
	if (best < 0)
		return NULL;
	d->iv = acc->gr[best].iv;
	d->s = d->iv.start > a ? d->iv.start : a;
	d->e = d->iv.end < b ? d->iv.end : b;
	d->first = acc->gr[best].first;
	d->total = acc->gr[best].total;
	d->longest = acc->gr[best].longest;
	d->pieces = acc->gr[best].pieces;
	d->flags = acc->gr[best].flags;
	return &d->iv;
}

static const struct ws_ival *dominant(struct ws_graph *g, const struct ws_thread *t, uint64_t a,
				      uint64_t b, struct dominant *d)
{
	struct dom_acc acc;

	acc.n = 0;
	for (size_t i = ws_thread_find(t, a); i < t->n && t->iv[i].start < b; i++) {
		struct ws_ival iv = ws_thread_ival(t, i);

		ws_thread_prefetch(t, i);
		dom_add(g, &acc, &iv, a, b);
	}
	return dom_result(&acc, a, b, d);
}

/* @flags: the WS_IVAL_* of every interval the link stands for (a group's, not only @iv's) */
static void fill_link(struct ws_graph *g, struct ws_link *l, const struct ws_thread *t,
		      const struct ws_ival *iv, uint8_t flags, uint64_t s, uint64_t e)
{
	const struct ws_claim *cl = iv ? ival_claim(g, iv) : NULL;

	memset(l, 0, sizeof(*l));
	l->thread = t;
	l->tid = t->tid;
	l->pid = t->pid;
	l->comm = t->comm[0] ? t->comm : ws_graph_comm(g, t->tid);
	l->start = s;
	l->dur = e - s;
	l->waits = 1;
	l->longest = e - s;
	l->flags = flags;
	l->kind = iv ? state_kind(iv, cl) : WS_KIND_UNKNOWN;
	l->claim = cl;
	l->cpu = iv ? iv->cpu : 0;
	if (cl) {
		l->evidence = cl->evidence;
		l->woken_by = cl->woken_by;
		l->has_woken_by = cl->woken_by != 0;
	} else if (!iv || iv->state == WS_STATE_UNKNOWN) {
		l->evidence = "this thread's timeline was not observed here";
	} else if (iv->state == WS_STATE_RUNNING && (flags & WS_IVAL_SHORT_INSIDE) &&
		   ws_graph_short_in(t, s, e, &l->shorts)) {
		l->evidence =
			"on CPU, but also off it in between for periods shorter than the resolution, summed in the kernel by cause";
	} else if (iv->state == WS_STATE_RUNNING && (flags & WS_IVAL_SHORT_INSIDE)) {
		l->evidence =
			"on CPU, but also off it in between for periods shorter than the resolution, summed in the kernel: their causes were not recorded";
	} else if (iv->state == WS_STATE_RUNNING) {
		l->evidence = "it was on CPU: its own work delayed the wakeup";
	} else if (iv->state == WS_STATE_RUNNABLE && cl) {
		/* throttled: its claim said so (kind, evidence) */
	} else if (iv->state == WS_STATE_RUNNABLE) {
		l->kind = runnable_kind(g, iv->cpu, s, e, l);
		l->evidence =
			strcmp(l->kind, WS_KIND_WAKEUP_LATENCY) == 0
				? "runnable while the CPU ran its idle task: it was waking up (IPI, leaving a C-state), not busy with others"
				: "runnable, waiting for a CPU others held";
	} else {
		l->evidence = "blocked; no claim recorded";
	}
}

#define WHY_DROPPED "history this far back was dropped (max_window, max_history)"

/* Why the waker named at @ts has no timeline: untraced, or an exited thread dropped early. */
static const char *waker_missing(struct ws_graph *g, uint64_t ts)
{
	return ws_graph_dead_dropped(g, ts)
		       ? "the waker exited and was dropped: too many exited threads to keep"
		       : "the waker was not traced";
}

/* The chain looked at @t's timeline from @from: was any of it already dropped? */
static void check_kept(struct ws_chain *c, uint64_t evicted_to, uint64_t from)
{
	if (from < evicted_to && !c->incomplete) {
		c->incomplete = true;
		c->why_incomplete = WHY_DROPPED;
	}
}

/* A runqueue link names who held its CPU: was that CPU's history kept? */
static void check_cpu_kept(struct ws_graph *g, struct ws_chain *c, const struct ws_link *l)
{
	if (strcmp(l->kind, WS_KIND_RUNQUEUE) == 0 || strcmp(l->kind, WS_KIND_WAKEUP_LATENCY) == 0)
		check_kept(c, ws_graph_cpu_evicted_to(g, l->cpu), l->start);
}

/*
 * Follow the dominant interval of each waker from thread @t over [a, b],
 * appending links to @c until a root, a cycle or the depth limit. @first, if not NULL, is
 * dominant() of @t over [a, b] already (segments_of() found it on its own walk over them).
 */
static void walk(struct ws_graph *g, struct ws_chain *c, struct ws_thread *t, uint64_t a,
		 uint64_t b, const struct dom_acc *first)
{
	while (t && c->nlinks < WS_CHAIN_MAX_LINKS) {
		struct ws_link *l = &c->links[c->nlinks];
		const struct ws_ival *iv;
		struct dominant d = { .s = a, .e = b };
		uint64_t s, e;

		for (int i = 0; i < c->nlinks; i++) {
			if (c->links[i].thread == t) {
				c->incomplete = true;
				c->why_incomplete = "the chain loops back on itself";
				return;
			}
		}
		check_kept(c, t->evicted_to, a);
		iv = first ? dom_result(first, a, b, &d) : dominant(g, t, a, b, &d);
		first = NULL;
		s = d.s;
		e = d.e;
		fill_link(g, l, t, iv, d.flags, s, e);
		check_cpu_kept(g, c, l);
		if (iv) {
			/* the link is the whole group; the walk goes on in its longest part */
			l->start = d.first;
			l->dur = d.total;
			l->waits = d.pieces;
			l->longest = d.longest;
		}
		c->nlinks++;
		if (!iv || iv->state == WS_STATE_UNKNOWN) {
			c->incomplete = true;
			c->why_incomplete = "a waker's timeline was not observed";
			return;
		}
		if (iv->state != WS_STATE_BLOCKED)
			return;
		t = next_thread(g, l->claim, iv->end);
		if (l->has_woken_by && !t && l->claim && !l->claim->root) {
			c->incomplete = true;
			c->why_incomplete = waker_missing(g, iv->end);
		}
		a = s;
		b = e;
	}
	if (t && c->nlinks == WS_CHAIN_MAX_LINKS) {
		c->incomplete = true;
		c->why_incomplete = "the chain is deeper than the depth limit";
	}
}

/*
 * A piece of one kind: its mix stays unwritten (nothing reads past nmix, 0 here). A waker's
 * every interval becomes a piece, and clearing the 192 bytes of mix for each was as dear as
 * the rest of building the segments.
 */
static int push_seg(struct ws_chain *c, const char *kind, const struct ws_thread *t, uint64_t s,
		    uint64_t e, const struct ws_claim *cl)
{
	struct ws_segment *p;

	if (e <= s)
		return 0;
	if (ws_grow((void **)&c->segs, &c->segs_cap, c->nsegs + 1, sizeof(*c->segs)))
		return -ENOMEM;
	p = &c->segs[c->nsegs++];
	p->thread = t;
	p->kind = kind;
	p->tid = t->tid;
	p->start = s;
	p->dur = e - s;
	p->claim = cl;
	p->nmix = 0;
	return 0;
}

/* Close a run of merged pieces: it takes the kind that filled most of it. */
static void run_close(struct ws_segment *run, struct ws_segment *out)
{
	int best = 0;

	for (int k = 1; k < run->nmix; k++)
		if (run->mix[k].ns > run->mix[best].ns)
			best = k;
	run->kind = run->mix[best].kind;
	run->claim = run->mix[best].claim;
	if (run->nmix == 1)
		run->nmix = 0;
	*out = *run;
}

static void mix_add(struct ws_segment *run, const char *kind, const struct ws_claim *claim,
		    uint64_t ns)
{
	int k;

	for (k = 0; k < run->nmix; k++)
		if (run->mix[k].kind == kind && run->mix[k].claim == claim)
			break;
	if (k == WS_SEG_MIX)
		k = WS_SEG_MIX - 1; /* more kinds than slots: the last one stands for the rest */
	else if (k == run->nmix)
		run->mix[run->nmix++] = (struct ws_seg_mix){ kind, claim, 0 };
	run->mix[k].ns += ns;
}

/* @s may itself be a merged piece (coalesce() runs again as the list grows). */
static void run_add(struct ws_segment *run, const struct ws_segment *s)
{
	if (s->nmix)
		for (int k = 0; k < s->nmix; k++)
			mix_add(run, s->mix[k].kind, s->mix[k].claim, s->mix[k].ns);
	else
		mix_add(run, s->kind, s->claim, s->dur);
	run->dur = s->start + s->dur - run->start;
}

/*
 * Merge the pieces c->segs[from..] of [a, b] that are shorter than its
 * 1/WS_CHAIN_SEG_PARTS into runs at least that long, in place: the pieces
 * still tile [a, b] exactly, and there are at most about 3 * WS_CHAIN_SEG_PARTS.
 */
static void coalesce(struct ws_chain *c, size_t from, uint64_t a, uint64_t b)
{
	uint64_t q = (b - a) / WS_CHAIN_SEG_PARTS;
	struct ws_segment run;
	size_t out = from;
	bool open = false;

	if (c->nsegs - from <= WS_CHAIN_SEG_PARTS)
		return;
	/*
	 * @s is read in place, not copied (a piece is 248 bytes): what is written, at out, is
	 * never past it, and a run closed before @s holds at least one piece before it.
	 */
	for (size_t i = from; i < c->nsegs; i++) {
		const struct ws_segment *s = &c->segs[i];

		if (s->dur >= q) {
			if (open)
				run_close(&run, &c->segs[out++]);
			open = false;
			if (out != i)
				c->segs[out] = *s;
			out++;
			continue;
		}
		if (!open) {
			run = *s;
			run.dur = 0;
			run.nmix = 0;
			open = true;
		}
		run_add(&run, s);
		if (run.dur >= q) {
			run_close(&run, &c->segs[out++]);
			open = false;
		}
	}
	if (open)
		run_close(&run, &c->segs[out++]);
	c->nsegs = out;
}

/*
 * Break [a, b] into the pieces of @t's timeline, gaps included, so they add up to b - a; and
 * count them into @dom as dominant() would (the walk's first step is over the same window: one
 * pass over a waker's millions of intervals instead of two). Stopping once [a, b] is covered
 * skips only intervals dominant() would not reach: a timeline's intervals do not overlap.
 */
static int segments_of(struct ws_graph *g, struct ws_chain *c, const struct ws_thread *t,
		       uint64_t a, uint64_t b, struct dom_acc *dom)
{
	/* pieces of another window before these (a wait's blocked part) are not merged in */
	size_t from = c->nsegs;
	uint64_t at = a;
	int err;

	check_kept(c, t->evicted_to, a);
	dom->n = 0;
	for (size_t i = ws_thread_find(t, a); i < t->n && t->iv[i].start < b && at < b; i++) {
		const struct ws_ival whole = ws_thread_ival(t, i), *iv = &whole;
		const struct ws_claim *cl = ival_claim(g, iv);
		uint64_t s = iv->start > at ? iv->start : at;
		uint64_t e = iv->end < b ? iv->end : b;
		const char *kind = state_kind(iv, cl);

		ws_thread_prefetch(t, i);
		dom_add(g, dom, iv, a, b);
		if (iv->state == WS_STATE_RUNNABLE && !cl)
			kind = runnable_piece_kind(g, iv->cpu, s, e);
		if ((err = push_seg(c, WS_KIND_UNKNOWN, t, at, s, NULL)))
			return err;
		if ((err = push_seg(c, kind, t, s, e, cl)))
			return err;
		if (e > at)
			at = e;
		/* merge as we go: a waker with millions of slices must not need them all at once */
		if (c->nsegs >= 4 * WS_CHAIN_SEG_PARTS)
			coalesce(c, from, a, b);
	}
	if (at < b && (err = push_seg(c, WS_KIND_UNKNOWN, t, at, b, NULL)))
		return err;
	coalesce(c, from, a, b);
	return 0;
}

/* Was @t kept off the CPU by a CPU quota during [a, b]? */
static bool throttled_in(const struct ws_thread *t, uint64_t a, uint64_t b)
{
	for (size_t i = ws_thread_find(t, a); i < t->n && t->iv[i].start < b; i++)
		if (t->iv[i].state == WS_STATE_RUNNABLE && (t->iv[i].flags & WS_IVAL_THROTTLED))
			return true;
	return false;
}

static bool wait_blocked(const struct ws_wait_done *d, struct ws_ival *out)
{
	const struct ws_thread *t = d->t;

	for (size_t i = ws_thread_find(t, d->start); i < t->n && t->iv[i].start <= d->wake; i++) {
		if (t->iv[i].state == WS_STATE_BLOCKED && t->iv[i].start == d->start) {
			*out = ws_thread_ival(t, i);
			return true;
		}
	}
	return false;
}

const struct ws_claim *ws_chain_wait_claim(struct ws_graph *g, const struct ws_wait_done *d)
{
	struct ws_ival iv;

	return wait_blocked(d, &iv) ? ws_graph_claim(g, iv.claim) : NULL;
}

int ws_chain_build(struct ws_graph *g, const struct ws_wait_done *d, struct ws_chain *c)
{
	struct ws_thread *t = d->t;
	struct ws_ival blocked_iv;
	const struct ws_ival *blocked = NULL;
	const struct ws_claim *cl = NULL;
	struct ws_thread *w;
	struct dom_acc dom, queued;
	uint64_t bdur = d->wake - d->start, rdur = d->end - d->wake, known;
	int err;

	c->victim = t;
	c->start = d->start;
	c->wake = d->wake;
	c->end = d->end;
	c->incomplete = false;
	c->why_incomplete = NULL;
	c->nlinks = 0;
	c->nsegs = 0;
	c->nroots = 0; /* until the segments are final */
	c->root[0] = 0;
	c->root_ns = 0;
	c->links_root[0] = 0;

	if (wait_blocked(d, &blocked_iv)) {
		blocked = &blocked_iv;
		cl = ws_graph_claim(g, blocked->claim);
	}
	/*
	 * A wait a signal ended is a root (the sender did not cause it), unless the lock it
	 * waited for named its holder: what the holder did meanwhile is what it waited for.
	 */
	if (blocked && d->held_by)
		w = ws_graph_thread_at(g, d->held_by, d->wake);
	else
		w = blocked ? next_thread(g, cl, d->wake) : NULL;
	known = w && d->held_by ? held_known_to(w, d->start, d->wake) : d->wake;

	/* segments: the waker's timeline explains the blocked part; then our own queueing */
	if (blocked && w) {
		err = segments_of(g, c, w, d->start, known, &dom);
		if (!err)
			err = push_seg(c, WS_KIND_UNKNOWN, w, known, d->wake, NULL);
	} else
		err = push_seg(c, blocked ? (cl ? cl->kind : WS_KIND_UNKNOWN) : WS_KIND_UNKNOWN, t,
			       d->start, d->wake, cl);
	if (!err && throttled_in(t, d->wake, d->end))
		err = segments_of(g, c, t, d->wake, d->end, &queued);
	else if (!err)
		err = push_seg(c, runnable_piece_kind(g, d->cpu, d->wake, d->end), t, d->wake,
			       d->end, NULL);
	if (err)
		return err;

	/* the main chain follows whichever part explains more of the wait */
	if (blocked && bdur >= rdur) {
		fill_link(g, &c->links[0], t, blocked, blocked->flags, d->start, d->wake);
		c->nlinks = 1;
		if (w && d->held_by) {
			c->links[0].held_by = d->held_by;
			c->links[0].held_evidence = d->held_evidence;
		}
		if (w)
			walk(g, c, w, d->start, known, &dom);
		else if (cl && !cl->root && cl->woken_by) {
			c->incomplete = true;
			c->why_incomplete = waker_missing(g, d->wake);
		}
	} else if (throttled_in(t, d->wake, d->end)) {
		/* its own stretches explain it: the quota's, then any wait for the CPU */
		walk(g, c, t, d->wake, d->end, &queued);
	} else {
		struct ws_ival rq = {
			.start = d->wake, .end = d->end, .state = WS_STATE_RUNNABLE, .cpu = d->cpu
		};

		fill_link(g, &c->links[0], t, &rq, 0, d->wake, d->end);
		c->nlinks = 1;
		check_cpu_kept(g, c, &c->links[0]);
	}
	if (ws_graph_window_lost(g, d->start, d->end)) {
		c->incomplete = true;
		c->why_incomplete = "records were lost during this wait";
	}
	if (ws_graph_window_oom(g, d->start, d->end)) {
		c->incomplete = true;
		c->why_incomplete = "whyslow ran out of memory during this wait";
	}
	chain_root_of_link(g, &c->links[c->nlinks - 1], c->root, sizeof(c->root));
	chain_roots_reset(c);
	return 0;
}

int ws_chain_walk_segment(struct ws_graph *g, const struct ws_segment *s, struct ws_chain *out)
{
	struct ws_thread *t = (struct ws_thread *)s->thread;

	memset(out, 0, sizeof(*out));
	if (t && strcmp(s->kind, WS_KIND_UNKNOWN) != 0)
		walk(g, out, t, s->start, s->start + s->dur, NULL);
	return out->nlinks;
}

void ws_chain_release(struct ws_chain *c)
{
	free(c->segs);
	c->segs = NULL;
	c->segs_cap = c->nsegs = 0;
	free(c->roots);
	c->roots = NULL;
	c->nroots = c->roots_cap = 0;
}
