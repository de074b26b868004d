// SPDX-License-Identifier: MIT
/*
 * Who ran on each CPU, and what every thread seen is called, traced or not: a chain names
 * the thread that held a CPU or woke a traced one, which may be any thread of the machine.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "graph_impl.h"
#include "base/util.h"

/* ---- names -------------------------------------------------------------------------------- */

static struct graph_name **name_recent_slot(struct ws_graph *g, uint32_t tid)
{
	return &g->names_recent[tid % RECENT_THREADS];
}

/* The name of @tid from names_recent, or NULL when it is not there. */
static struct graph_name *name_recent(struct ws_graph *g, uint32_t tid)
{
	struct graph_name *n = *name_recent_slot(g, tid);

	return n && ws_table_key_of(n) == tid ? n : NULL;
}

/* The table moved its entries: none of names_recent points into it any more. */
static void names_moved(struct ws_graph *g)
{
	memset(g->names_recent, 0, sizeof(g->names_recent));
}

/* The name entry of @tid, added blank if absent; NULL without memory or for tid 0. */
static struct graph_name *name_put(struct ws_graph *g, uint32_t tid)
{
	struct graph_name *n = name_recent(g, tid);
	size_t cap = g->names.cap;

	if (n || !tid)
		return n;
	n = ws_table_put(&g->names, tid, NULL);
	if (g->names.cap != cap)
		names_moved(g);
	if (n)
		*name_recent_slot(g, tid) = n;
	return n;
}

const char *graph_name_set(struct ws_graph *g, uint32_t tid, uint32_t pid, const char *comm,
			   uint64_t ts)
{
	struct graph_name *n = name_put(g, tid);

	if (!n)
		return NULL; /* a name is a label: without memory the thread is "?" */
	n->pid = pid;
	n->seen = ts;
	if (comm)
		strncpy(n->comm, comm, WS_COMM - 1);
	return n->comm;
}

const struct graph_name *graph_name(struct ws_graph *g, uint32_t tid)
{
	struct graph_name *n = name_recent(g, tid);

	if (n || !tid)
		return n;
	n = ws_table_get(&g->names, tid);
	if (n)
		*name_recent_slot(g, tid) = n;
	return n;
}

const char *ws_graph_comm(struct ws_graph *g, uint32_t tid)
{
	const struct graph_name *n = graph_name(g, tid);

	if (tid == 0)
		return "swapper";
	return n && n->comm[0] ? n->comm : "?";
}

uint32_t ws_graph_pid_of(struct ws_graph *g, uint32_t tid)
{
	const struct graph_name *n = graph_name(g, tid);

	return n ? n->pid : 0;
}

/*
 * Forget names not seen since @before, unless a thread still alive holds the tid: with tid
 * churn the table would otherwise follow every tid ever seen. Rebuilt only when it has grown
 * well past the live threads, so the cost stays proportional to what is dropped.
 */
void graph_names_evict(struct ws_graph *g, uint64_t before)
{
	struct ws_table kept;

	if (g->names.live < 4096 || g->names.live < 4 * g->threads.live)
		return;
	ws_table_init(&kept, sizeof(struct graph_name));
	for (size_t i = 0; i < g->names.cap; i++) {
		const struct graph_name *n = ws_table_at(&g->names, i);
		uint32_t tid = n ? ws_table_key_of(n) : 0;
		struct graph_name *k;

		if (!n || (n->seen < before && !ws_graph_thread(g, tid)))
			continue;
		k = ws_table_put(&kept, tid, NULL);
		if (!k) {
			ws_table_free(&kept); /* keep them all, then */
			return;
		}
		*k = *n;
	}
	ws_table_free(&g->names);
	g->names = kept;
	names_moved(g);
}

/* ---- CPU runs ----------------------------------------------------------------------------- */

/* Time of @cpu's latest run kept (0: none). */
uint64_t graph_cpu_last_ts(struct ws_graph *g, uint16_t cpu)
{
	struct cpu_hist *h = cpu < g->ncpus ? &g->cpus[cpu] : NULL;

	return h && h->n > h->head ? h->r[h->n - 1].ts : 0;
}

int ws_graph_set_ncpus(struct ws_graph *g, uint32_t ncpus)
{
	struct cpu_hist *p;

	if (!ncpus || ncpus > WS_MAX_CPUS || g->ncpus)
		return -EINVAL;
	p = calloc(ncpus, sizeof(*p));
	if (!p)
		return -ENOMEM;
	g->cpus = p;
	g->ncpus = ncpus;
	g->ncpus_known = true;
	return 0;
}

void graph_cpu_push(struct ws_graph *g, uint16_t cpu, uint64_t ts, uint32_t tid, uint32_t pid)
{
	struct cpu_hist *h;

	if (cpu >= g->ncpus && (g->ncpus_known || cpu >= WS_MAX_CPUS)) {
		/* a CPU the machine does not have: a crafted record, not a switch */
		g->st.cpu_refused++;
		return;
	}
	if (cpu >= g->ncpus) {
		size_t n = cpu + 1;
		struct cpu_hist *p = realloc(g->cpus, n * sizeof(*p));

		if (!p) {
			graph_oom(g, ts);
			return;
		}
		memset(p + g->ncpus, 0, (n - g->ncpus) * sizeof(*p));
		g->cpus = p;
		g->ncpus = n;
	}
	h = &g->cpus[cpu];
	if (!h->listed) {
		if (ws_grow((void **)&g->used, &g->used_cap, g->nused + 1, sizeof(*g->used))) {
			graph_oom(g, ts);
			return;
		}
		g->used[g->nused++] = cpu;
		h->listed = true;
	}
	if (ws_grow((void **)&h->r, &h->cap, h->n + 1, sizeof(*h->r))) {
		graph_oom(g, ts);
		return;
	}
	if (h->n > h->head && ts < h->r[h->n - 1].ts)
		h->unsorted = true;
	h->r[h->n++] = (struct cpu_run){ .ts = ts, .tid = tid, .pid = pid };
	g->live_runs++;
}

void graph_cpu_left(struct ws_graph *g, uint16_t cpu, uint32_t tid, uint64_t off)
{
	struct cpu_hist *h = cpu < g->ncpus ? &g->cpus[cpu] : NULL;

	/* a later switch on @cpu already ended its run there: nothing to mend */
	if (h && h->n > h->head && h->r[h->n - 1].tid == tid && h->r[h->n - 1].ts < off)
		graph_cpu_push(g, cpu, off, WS_CPU_UNRECORDED, 0);
}

uint64_t ws_graph_cpu_evicted_to(struct ws_graph *g, uint16_t cpu)
{
	return cpu < g->ncpus ? g->cpus[cpu].evicted_to : 0;
}

/* The first run of @h in [@lo, h->n) at or after @ts (@inclusive) or after it; h->n if none. */
static size_t bisect(const struct cpu_hist *h, size_t lo, uint64_t ts, bool inclusive)
{
	size_t hi = h->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (h->r[mid].ts < ts || (!inclusive && h->r[mid].ts == ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static size_t run_from(const struct cpu_hist *h, uint64_t ts, bool inclusive)
{
	return bisect(h, h->head, ts, inclusive);
}

/* When the run on @cpu in progress just before @ts began (0: none kept). */
uint64_t graph_cpu_run_start(struct ws_graph *g, uint16_t cpu, uint64_t ts)
{
	struct cpu_hist *h = cpu < g->ncpus ? &g->cpus[cpu] : NULL;
	size_t i;

	if (!h || h->n <= h->head)
		return 0;
	i = bisect(h, h->head, ts, true);
	return i > h->head ? h->r[i - 1].ts : 0;
}

/*
 * run_from(@h, @ts, false), begun where the last search ended: a chain's walk over a busy
 * waker asks about later and later times, each a run or two on, and a search over all of a
 * long history for each was a tenth of building such a chain. Runs in time order have one
 * answer however it is found; others (after a late record) are searched as they always were.
 */
static size_t run_after(struct cpu_hist *h, uint64_t ts)
{
	size_t i = h->near;

	if (h->unsorted || i <= h->head || i > h->n || h->r[i - 1].ts > ts)
		return h->near = run_from(h, ts, false);
	/* the answer is at i or after: a few steps, then a search over the rest */
	for (int step = 0; step < 8; step++, i++)
		if (i == h->n || h->r[i].ts > ts)
			return h->near = i;
	return h->near = bisect(h, i, ts, false);
}

/* Where a walk over @h's runs in [from, to) starts: the run in progress at @from. */
static size_t runs_from(struct cpu_hist *h, uint64_t from)
{
	size_t lo = run_after(h, from);

	return lo > h->head ? lo - 1 : h->head;
}

/*
 * Run @i of @h clipped to [from, to) into *@s and *@e: 1 when it overlaps, 0 when it ends by
 * @from, -1 when it starts at or after @to (a walk in time order is over).
 */
static int run_clip(const struct cpu_hist *h, size_t i, uint64_t from, uint64_t to, uint64_t *s,
		    uint64_t *e)
{
	*s = h->r[i].ts;
	*e = i + 1 < h->n ? h->r[i + 1].ts : to;
	if (*s >= to)
		return -1;
	if (*e <= from)
		return 0;
	*s = *s < from ? from : *s;
	*e = *e > to ? to : *e;
	return 1;
}

int ws_graph_cpu_users(struct ws_graph *g, uint16_t cpu, uint64_t from, uint64_t to,
		       struct ws_cpu_user *out, int max)
{
	struct cpu_hist *h;
	uint64_t s, e;
	int n = 0, in;

	if (cpu >= g->ncpus || max <= 0)
		return 0;
	h = &g->cpus[cpu];
	/* the history is in time order: start at the last switch at or before @from */
	for (size_t i = runs_from(h, from);
	     i < h->n && (in = run_clip(h, i, from, to, &s, &e)) >= 0; i++) {
		int k;

		if (!in)
			continue;
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

/*
 * The idle task's time on @cpu over [from, to] as ws_graph_cpu_users(.., WS_CPU_HOLDERS) counts
 * it, without gathering and sorting every holder: a busy waker's every runnable interval asks
 * this (is it waiting for a busy CPU, or for an idle one to wake?). Past WS_CPU_HOLDERS runs the
 * holders may be more than it counts, and which it counts is its rule: it is asked then.
 */
uint64_t ws_graph_cpu_idle(struct ws_graph *g, uint16_t cpu, uint64_t from, uint64_t to)
{
	struct ws_cpu_user all[WS_CPU_HOLDERS];
	struct cpu_hist *h;
	uint64_t idle = 0, s, e;
	int runs = 0, n, in;

	if (cpu >= g->ncpus)
		return 0;
	h = &g->cpus[cpu];
	/* the same runs, clipped the same way, as ws_graph_cpu_users() */
	for (size_t i = runs_from(h, from);
	     i < h->n && (in = run_clip(h, i, from, to, &s, &e)) >= 0; i++) {
		if (!in)
			continue;
		if (++runs > WS_CPU_HOLDERS)
			goto many;
		if (h->r[i].tid == 0)
			idle += e - s;
	}
	return idle;
many:
	idle = 0;
	n = ws_graph_cpu_users(g, cpu, from, to, all, WS_CPU_HOLDERS);
	for (int i = 0; i < n; i++)
		if (all[i].tid == 0)
			idle += all[i].ns;
	return idle;
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
	return ws_shrink((void **)&h->r, &h->cap, h->n, sizeof(*h->r));
}

/* Drop runs that ended before @before on every CPU; returns the bytes given back. */
size_t graph_cpus_evict(struct ws_graph *g, uint64_t before)
{
	size_t freed = 0;

	for (size_t u = 0; u < g->nused; u++)
		freed += cpu_evict(g, &g->cpus[g->used[u]], before);
	return freed;
}

/* CPU runs that eviction at @before would keep. */
uint64_t graph_runs_kept(struct ws_graph *g, uint64_t before)
{
	uint64_t runs = 0;

	for (size_t u = 0; u < g->nused; u++) {
		struct cpu_hist *h = &g->cpus[g->used[u]];

		runs += h->n - run_from(h, before, true);
	}
	return runs;
}

void graph_cpus_free(struct ws_graph *g)
{
	for (size_t c = 0; c < g->ncpus; c++)
		free(g->cpus[c].r);
	free(g->cpus);
	free(g->used);
	ws_table_free(&g->names);
}
