// SPDX-License-Identifier: MIT
/*
 * What the periods the kernel summarised below the resolution waited for (sched 1.6: a few
 * buckets per thread, by syscall and first argument, or the runqueue): kept per thread for its
 * whole life (the short_waits lines), and per running stretch they were in (a chain through
 * that stretch names them), evicted with the stretch.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <whyslow/syscall_names.h>

#include "graph.h"
#include "graph_impl.h"
#include "base/syscall_fmt.h"
#include "base/util.h"

static bool same_cause(const struct ws_short_cause *a, const struct ws_short_cause *b)
{
	return a->nr == b->nr && a->res == b->res && a->arch == b->arch;
}

/* Add @c into the @max causes of @v (*@n used); false when it is new and @v is full. */
static bool cause_merge(struct ws_short_cause *v, uint32_t *n, uint32_t max,
			const struct ws_short_cause *c)
{
	for (uint32_t i = 0; i < *n; i++) {
		if (!same_cause(&v[i], c))
			continue;
		v[i].n += c->n;
		v[i].ns += c->ns;
		/* the latest waker and state: a cause's waker seldom changes */
		if (c->waker)
			v[i].waker = c->waker;
		v[i].state = c->state;
		return true;
	}
	if (*n >= max)
		return false;
	v[(*n)++] = *c;
	return true;
}

/* @t's running stretch that the summarised periods reported now were in (see the caller). */
static bool stretch_of(const struct ws_thread *t, uint64_t *start)
{
	for (size_t i = t->n; i > t->head; i--) {
		if (t->iv[i - 1].state == WS_STATE_UNKNOWN)
			return false;
		if (t->iv[i - 1].state == WS_STATE_RUNNING) {
			*start = t->iv[i - 1].start;
			return true;
		}
	}
	return false;
}

static struct ws_short_sum *sum_of(struct ws_thread *t)
{
	if (!t->shs)
		t->shs = calloc(1, sizeof(*t->shs));
	return t->shs;
}

/*
 * The causes of @t's periods summarised since its last written record (ev->causes), which the
 * record that follows counts: into its whole-life sums, and onto the running stretch they were
 * in (the latest: it has been off CPU since, in the period that record ends).
 */
void graph_short_causes(struct ws_graph *g, struct ws_thread *t, const struct ws_thread_event *ev)
{
	struct ws_short_sum *s = sum_of(t);
	struct ws_short_batch *b;
	uint64_t start;

	if (!s) {
		graph_oom(g, ev->ts);
		return;
	}
	for (uint32_t i = 0; i < ev->ncauses && i < WS_SHORT_CAUSES; i++)
		cause_merge(s->kept, &s->nkept, WS_SHORT_KEPT, &ev->causes[i]);
	if (!ev->ncauses || !stretch_of(t, &start))
		return;
	if (s->n && s->b[s->n - 1].start == start) {
		b = &s->b[s->n - 1];
	} else {
		if (ws_grow((void **)&s->b, &s->cap, s->n + 1, sizeof(*s->b))) {
			graph_oom(g, ev->ts);
			return;
		}
		b = &s->b[s->n++];
		memset(b, 0, sizeof(*b));
		b->start = start;
		g->live_batches++;
	}
	/*
	 * The kernel's totals run on from the stretch's start to its thread's next written
	 * switch-in: a second report in one stretch (its wakeups flush the causes so far,
	 * sched.bpf.c waker_flush) carries them all again. Buckets start over at every report:
	 * those add up.
	 */
	if (ev->causes_total.n >= b->total.n) {
		b->total = ev->causes_total;
	} else {
		b->total.n += ev->causes_total.n;
		b->total.blocked_ns += ev->causes_total.blocked_ns;
		b->total.runnable_ns += ev->causes_total.runnable_ns;
	}
	for (uint32_t i = 0; i < ev->ncauses && i < WS_SHORT_CAUSES; i++)
		cause_merge(b->c, &b->nc, WS_SHORT_CAUSES, &ev->causes[i]);
}

/* @t's stretches before its evicted_to are gone: so are their causes. */
void graph_short_evict(struct ws_graph *g, struct ws_thread *t)
{
	struct ws_short_sum *s = t->shs;
	size_t k = 0;

	if (!s)
		return;
	while (k < s->n && s->b[k].start < t->evicted_to)
		k++;
	if (!k)
		return;
	memmove(s->b, s->b + k, (s->n - k) * sizeof(*s->b));
	s->n -= k;
	g->live_batches -= k;
	ws_shrink((void **)&s->b, &s->cap, s->n, sizeof(*s->b));
}

/* Index of @s's first batch whose stretch began at or after @ts. */
static size_t first_at(const struct ws_short_sum *s, uint64_t ts)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->b[mid].start < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Batches of @t that eviction at @before would keep (their stretch began at or after it). */
uint64_t graph_short_kept(const struct ws_thread *t, uint64_t before)
{
	return t->shs ? t->shs->n - first_at(t->shs, before) : 0;
}

void graph_short_free(struct ws_graph *g, struct ws_thread *t)
{
	if (!t->shs)
		return;
	if (g)
		g->live_batches -= t->shs->n;
	free(t->shs->b);
	free(t->shs);
	t->shs = NULL;
}

/* Costliest first. */
static int by_ns(const void *a, const void *b)
{
	const struct ws_short_cause *x = a, *y = b;

	return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

void ws_short_top(struct ws_short_summary *out, const struct ws_short_cause *v, uint32_t n)
{
	struct ws_short_cause all[WS_SHORT_KEPT * 2];
	uint32_t m = n < WS_SHORT_KEPT * 2 ? n : WS_SHORT_KEPT * 2;
	uint64_t shown_n = 0, shown_ns = 0;

	memcpy(all, v, m * sizeof(*all));
	qsort(all, m, sizeof(*all), by_ns);
	out->nc = m < WS_SHORT_SHOWN ? m : WS_SHORT_SHOWN;
	memcpy(out->c, all, out->nc * sizeof(*out->c));
	for (uint32_t i = 0; i < out->nc; i++) {
		shown_n += out->c[i].n;
		shown_ns += out->c[i].ns;
	}
	/* the rest: causes past those shown, and periods no bucket of the kernel held */
	out->other_n = out->n > shown_n ? out->n - shown_n : 0;
	out->other_ns = out->ns > shown_ns ? out->ns - shown_ns : 0;
}

bool ws_graph_short_in(const struct ws_thread *t, uint64_t a, uint64_t b,
		       struct ws_short_summary *out)
{
	const struct ws_short_sum *s = t->shs;
	struct ws_short_cause v[WS_SHORT_KEPT * 2];
	uint32_t nv = 0;
	size_t i = ws_thread_find(t, a);

	memset(out, 0, sizeof(*out));
	if (!s)
		return false;
	/* from the stretch @a falls in: its causes are reported with its next record */
	for (size_t k = first_at(s, i < t->n ? t->iv[i].start : a); k < s->n; k++) {
		const struct ws_short_batch *bt = &s->b[k];

		if (bt->start >= b)
			break;
		out->n += bt->total.n;
		out->ns += bt->total.blocked_ns + bt->total.runnable_ns;
		/* a cause past what is kept here is in other_* (ws_short_top) */
		for (uint32_t j = 0; j < bt->nc; j++)
			cause_merge(v, &nv, WS_SHORT_KEPT * 2, &bt->c[j]);
	}
	ws_short_top(out, v, nv);
	return out->n > 0;
}

int ws_short_cause_label(const struct ws_short_cause *c, char *buf, size_t len)
{
	struct ws_syscall sys = { .nr = c->nr, .arch = c->arch };
	const char *name;
	char num[32];

	if (c->nr == WS_SHORT_RUNQUEUE)
		return snprintf(buf, len, "the runqueue (preempted)");
	sys.args[0] = c->res;
	name = ws_syscall_label(&sys, num, sizeof(num));
	if (!name)
		return snprintf(buf, len, "%s",
				c->state & 2 ? "an uninterruptible sleep outside a syscall"
					     : "a sleep outside a syscall");
	/* the calls whose first argument is the futex word */
	if (!strcmp(name, "futex") || !strcmp(name, "futex_wait"))
		return snprintf(buf, len, "futex 0x%" PRIx64, c->res);
	if (ws_syscall_fd(&sys) >= 0)
		return snprintf(buf, len, "%s fd %d", name, ws_syscall_fd(&sys));
	return snprintf(buf, len, "%s", name);
}
