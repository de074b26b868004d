// SPDX-License-Identifier: MIT
/*
 * What history the graph keeps: a window back from the newest record, within a byte
 * budget, and whatever a wait still in progress may need. What was lost (ring-buffer loss,
 * memory) is remembered as time windows so the chains over them say they are incomplete.
 */
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__ /* known only once a libc header is in */
#include <malloc.h>
#endif

#include "graph_impl.h"
#include "base/util.h"

/*
 * Memory ran out around @ts: something of the history was not kept. Nothing is allocated here
 * (that is what failed); the window only grows, and every chain that overlaps it is marked
 * incomplete, the summary counts the failures.
 */
void graph_oom(struct ws_graph *g, uint64_t ts)
{
	if (!g->st.oom || ts < g->oom_from)
		g->oom_from = ts;
	if (ts > g->oom_to)
		g->oom_to = ts;
	g->st.oom++;
}

void ws_graph_loss(struct ws_graph *g, uint64_t from, uint64_t to)
{
	if (ws_grow((void **)&g->losses, &g->losses_cap, g->nlosses + 1, sizeof(*g->losses))) {
		graph_oom(g, from);
		graph_oom(g, to);
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

/* Interval @iv of @t is final and leaves the history: show it to whoever exports timelines. */
static void ival_done(struct ws_graph *g, const struct ws_thread *t, const struct ws_ival *iv)
{
	/* a helper's time is the kernel's, not the program's: not in its timelines' totals */
	if (g->ops.on_ival && !t->helper)
		g->ops.on_ival(g->ops.ctx, t, iv, iv->claim ? ws_graph_claim(g, iv->claim) : NULL);
}

/* Interval @iv of @t leaves the history for good: shown, its claim let go, no longer counted. */
static void ival_drop(struct ws_graph *g, const struct ws_thread *t, const struct ws_ival *iv)
{
	ival_done(g, t, iv);
	graph_claim_put(g, iv->claim);
	g->st.live_intervals--;
}

static size_t thread_evict(struct ws_graph *g, struct ws_thread *t, uint64_t before)
{
	while (t->head < t->n) {
		struct ws_ival iv = ws_thread_ival(t, t->head);

		if (iv.end == WS_NO_END || iv.end >= before)
			break;
		if (iv.end > t->evicted_to)
			t->evicted_to = iv.end;
		ival_drop(g, t, &iv);
		t->head++;
	}
	graph_short_evict(g, t);
	if (t->head > 64 && t->head * 2 > t->n) {
		memmove(t->iv, t->iv + t->head, (t->n - t->head) * sizeof(*t->iv));
		t->n -= t->head;
		t->head = 0;
	}
	return ws_shrink((void **)&t->iv, &t->cap, t->n, sizeof(*t->iv));
}

static size_t thread_free(struct ws_graph *g, struct ws_thread *t)
{
	size_t bytes = sizeof(*t) + t->cap * sizeof(*t->iv);

	for (size_t i = t->head; i < t->n; i++) {
		struct ws_ival iv = ws_thread_ival(t, i);

		ival_drop(g, t, &iv);
	}
	if (g->ops.on_gone)
		g->ops.on_gone(g->ops.ctx, t);
	if (t->shs)
		bytes += sizeof(*t->shs) + t->shs->cap * sizeof(*t->shs->b);
	graph_short_free(g, t);
	free(t->iv);
	free(t);
	return bytes;
}

/*
 * Exited threads kept at most, the latest to die: a program that churns threads (thousands a
 * second) would otherwise have the graph hold every one that died within max_window (issue
 * 36). Past twice this many, the earliest to die go, counted; a chain that needed one is
 * marked incomplete (ws_graph_dead_dropped()).
 */
#define DEAD_KEPT 4096

void graph_dead_add(struct ws_graph *g, struct ws_thread *t)
{
	struct ws_thread **latest = ws_table_put(&g->dead_by_tid, t->tid, NULL);

	t->next_dead = g->dead;
	g->dead = t;
	g->ndead++;
	if (latest) {
		t->older_dead = *latest;
		*latest = t;
	} else {
		graph_oom(g, t->died); /* kept, but chains will not find it */
	}
	if (g->ndead >= 2 * DEAD_KEPT)
		graph_dead_trim(g);
}

/* @t (in g->dead, unlinked from the list by the caller) goes: out of the tid index, freed. */
static size_t dead_free(struct ws_graph *g, struct ws_thread *t)
{
	struct ws_thread **latest = ws_table_get(&g->dead_by_tid, t->tid), **pp = latest;

	while (pp && *pp && *pp != t)
		pp = &(*pp)->older_dead;
	if (pp && *pp) {
		*pp = t->older_dead;
		if (!*latest)
			ws_table_del(&g->dead_by_tid, latest);
	}
	g->ndead--;
	return thread_free(g, t);
}

void graph_dead_trim(struct ws_graph *g)
{
	struct ws_thread **pp = &g->dead;
	size_t k = 0;

	/* intervals leave outside an eviction pass: what a claim names may have changed */
	g->ival_passes++;
	while (*pp && k++ < DEAD_KEPT)
		pp = &(*pp)->next_dead;
	while (*pp) {
		struct ws_thread *t = *pp;

		*pp = t->next_dead;
		if (t->died > g->dead_dropped_to)
			g->dead_dropped_to = t->died;
		g->st.dead_dropped++;
		dead_free(g, t);
	}
}

bool ws_graph_dead_dropped(const struct ws_graph *g, uint64_t ts)
{
	return g->st.dead_dropped && ts <= g->dead_dropped_to;
}

static void thread_flush(struct ws_graph *g, struct ws_thread *t)
{
	for (size_t i = t->head; i < t->n; i++) {
		struct ws_ival iv = ws_thread_ival(t, i);

		ws_thread_prefetch(t, i);
		if (iv.end == WS_NO_END) {
			iv.end = g->last_ts > iv.start ? g->last_ts : iv.start;
			iv.flags |= WS_IVAL_OPEN;
		}
		ival_done(g, t, &iv);
	}
}

uint64_t ws_graph_ival_pass(const struct ws_graph *g)
{
	return g->ival_passes;
}

void ws_graph_flush(struct ws_graph *g)
{
	g->ival_passes++;
	for (size_t i = 0; i < g->threads.cap; i++) {
		struct ws_thread *t = graph_thread_at(g, i);

		if (t)
			thread_flush(g, t);
	}
	for (struct ws_thread *t = g->dead; t; t = t->next_dead)
		thread_flush(g, t);
	g->ops.on_ival = NULL;
}

uint64_t graph_history_bytes(struct ws_graph *g)
{
	return g->st.live_intervals * sizeof(struct ws_span) +
	       g->live_runs * sizeof(struct cpu_run) +
	       g->live_batches * sizeof(struct ws_short_batch);
}

/* Bytes of history that eviction at @before would keep. */
static uint64_t bytes_kept(struct ws_graph *g, uint64_t before)
{
	uint64_t iv = 0, sb = 0;

	for (size_t i = 0; i < g->threads.cap; i++) {
		struct ws_thread *t = graph_thread_at(g, i);

		if (t) {
			iv += t->n - ws_thread_find(t, before);
			sb += graph_short_kept(t, before);
		}
	}
	for (struct ws_thread *t = g->dead; t; t = t->next_dead) {
		if (t->died >= before) {
			iv += t->n - t->head;
			sb += t->shs ? t->shs->n : 0;
		}
	}
	return iv * sizeof(struct ws_span) + graph_runs_kept(g, before) * sizeof(struct cpu_run) +
	       sb * sizeof(struct ws_short_batch);
}

/*
 * Over budget: move the horizon forward until half the budget is kept (the
 * slack spares a search on every pass). Waits reaching back past it are then
 * reported incomplete (each thread's evicted_to), as for max_window.
 */
static uint64_t budget_horizon(struct ws_graph *g, uint64_t before, uint64_t now)
{
	uint64_t lo = before, hi = now;

	if (!g->max_history || graph_history_bytes(g) <= g->max_history ||
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
	size_t freed = 0, k = 0;

	g->ival_passes++;

	/* keep what any wait still in progress may need to be explained */
	for (size_t i = 0; i < g->threads.cap; i++) {
		struct ws_thread *t = graph_thread_at(g, i);
		uint64_t run;

		/* a helper's sleep is no wait of the program's (its chains are clipped to one) */
		if (!t || t->helper)
			continue;
		if (t->off_start && t->off_start < oldest_open)
			oldest_open = t->off_start;
		/*
		 * Switch-outs written late: a thread seen running since @run may be in a wait
		 * that began after it (sh in wait4 for the whole run, its switch-out written with
		 * the wakeup that ends it). Bounded by max_window and max_history like any wait.
		 */
		run = g->late_outs ? graph_running_since(t) : 0;
		if (run && run < oldest_open)
			oldest_open = run;
	}
	if (oldest_open > before)
		before = oldest_open;
	before = budget_horizon(g, before, now);
	for (size_t i = 0; i < g->threads.cap; i++) {
		struct ws_thread *t = graph_thread_at(g, i);

		if (t)
			freed += thread_evict(g, t, before);
	}
	for (pp = &g->dead; *pp;) {
		struct ws_thread *t = *pp;

		if (t->died < before) {
			*pp = t->next_dead;
			freed += dead_free(g, t);
		} else {
			pp = &t->next_dead;
		}
	}
	freed += graph_cpus_evict(g, before);
	graph_names_evict(g, before);
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
