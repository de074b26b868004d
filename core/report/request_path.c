// SPDX-License-Identifier: MIT
/*
 * One request explained: the timeline of the thread that received it, from its first receive to
 * its last send, read stretch by stretch. Its CPU time is its own work; a wait long enough is
 * walked along its wakers as any chain is, and the pieces of the chain inside the request are
 * named by their roots; a shorter one is named by the thread's state, as the critical path
 * does. The parts add up to the request's latency: time no stretch covers is "not observed".
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "critpath.h"
#include "requests_impl.h"
#include "base/util.h"

#include <whyslow/syscall_names.h>

#define NOT_OBSERVED "not observed (before the kept history, or records lost)"

const char *requests_intern(struct ws_requests *rq, const char *s)
{
	const char *in = ws_strpool_intern(&rq->names, s);

	if (!in)
		rq->err = -ENOMEM;
	return in ? in : "";
}

const char *requests_name(struct ws_requests *rq, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return requests_intern(rq, buf);
}

static void part_add(struct ws_requests *rq, const char *what, uint64_t ns)
{
	if (!ns)
		return;
	for (size_t i = 0; i < rq->ncur; i++) {
		if (rq->cur[i].what == what) {
			rq->cur[i].ns += ns;
			return;
		}
	}
	if (ws_grow((void **)&rq->cur, &rq->cur_cap, rq->ncur + 1, sizeof(*rq->cur))) {
		rq->err = -ENOMEM;
		return;
	}
	rq->cur[rq->ncur++] = (struct ws_request_part){ .what = what, .ns = ns };
}

static uint64_t overlap(uint64_t a, uint64_t b, uint64_t from, uint64_t to)
{
	uint64_t lo = a > from ? a : from, hi = b < to ? b : to;

	return hi > lo ? hi - lo : 0;
}

/* Keep @c as the example of reason @what when its piece (@ns) is the longest yet. */
static void example(struct ws_requests *rq, const char *what, uint64_t ns, struct ws_chain *c,
		    bool *settled)
{
	struct reason_acc *r = ws_table_get(&rq->reasons, (uint64_t)(uintptr_t)what);
	char *text = NULL;

	if (r && r->example_ns >= ns)
		return;
	if (!rq->ops.render)
		return;
	if (!*settled) {
		ws_chain_settle_root(rq->g, c);
		*settled = true;
	}
	if (rq->ops.render(rq->ops.ctx, c, &text))
		return;
	if (!r) {
		r = ws_table_put(&rq->reasons, (uint64_t)(uintptr_t)what, NULL);
		if (!r) {
			free(text);
			rq->err = -ENOMEM;
			return;
		}
	}
	free(r->example);
	r->example = text;
	r->example_ns = ns;
}

/* Wait @d, walked: its chain's pieces inside [@from, @to) go to their roots. */
static void walked_wait(struct ws_requests *rq, const struct ws_wait_done *d, uint64_t from,
			uint64_t to)
{
	struct ws_chain *c = &rq->chain;
	bool settled = false;

	if (ws_chain_build(rq->g, d, c)) {
		rq->err = -ENOMEM;
		part_add(rq, requests_intern(rq, NOT_OBSERVED),
			 overlap(d->start, d->end, from, to));
		return;
	}
	for (size_t k = 0; k < c->nsegs; k++) {
		const struct ws_segment *s = &c->segs[k];
		uint64_t ns = overlap(s->start, s->start + s->dur, from, to);
		struct ws_seg_root scratch;
		const char *what;

		if (!ns)
			continue;
		what = requests_intern(rq, ws_chain_seg_root(rq->g, c, k, &scratch)->key);
		part_add(rq, what, ns);
		example(rq, what, ns, c, &settled);
	}
}

/* Stretch @iv of @t, not walked, named by its state, its part inside [@from, @to). */
static void stretch(struct ws_requests *rq, const struct ws_thread *t, const struct ws_ival *iv,
		    uint64_t from, uint64_t to)
{
	uint64_t ns = overlap(iv->start, iv->end, from, to);
	char what[256];

	if (!ns)
		return;
	ws_stretch_label(t, iv, iv->claim ? ws_graph_claim(rq->g, iv->claim) : NULL, what,
			 sizeof(what));
	part_add(rq, requests_intern(rq, what), ns);
	if (iv->state == WS_STATE_RUNNING)
		rq->own_cpu += ns;
}

/*
 * The wait that begins with stretch @i of @t (blocked, then runnable; or runnable alone:
 * preempted) up to its switch-in; returns the index of its last stretch.
 */
static size_t wait_at(struct ws_requests *rq, struct ws_thread *t, size_t i, uint64_t from,
		      uint64_t to)
{
	struct ws_ival iv = ws_thread_ival(t, i);
	size_t j = i;
	uint64_t on;

	while (j + 1 < t->n &&
	       (t->iv[j + 1].state == WS_STATE_RUNNABLE || t->iv[j + 1].state == WS_STATE_BLOCKED))
		j++;
	on = ws_thread_end(t, j);
	if (on != WS_NO_END && j + 1 < t->n && t->iv[j + 1].state == WS_STATE_RUNNING &&
	    on - iv.start >= rq->ops.walk_min_ns) {
		struct ws_wait_done d = {
			.t = t,
			.start = iv.start,
			.wake = iv.state == WS_STATE_BLOCKED ? iv.end : iv.start,
			.end = on,
			.cpu = t->iv[j + 1].cpu,
		};

		walked_wait(rq, &d, from, to);
		return j;
	}
	for (size_t k = i; k <= j; k++) {
		struct ws_ival s = ws_thread_ival(t, k);

		stretch(rq, t, &s, from, to);
	}
	return j;
}

void request_path(struct ws_requests *rq, uint32_t tid, uint64_t start, uint64_t end)
{
	struct ws_thread *t = ws_graph_thread_at(rq->g, tid, start);
	uint64_t at = start;

	rq->ncur = 0;
	rq->own_cpu = 0;
	if (!t) {
		part_add(rq, requests_intern(rq, NOT_OBSERVED), end - start);
		return;
	}
	for (size_t i = ws_thread_find(t, start); i < t->n && at < end; i++) {
		struct ws_ival iv = ws_thread_ival(t, i);

		if (iv.start >= end)
			break;
		if (iv.start > at)
			part_add(rq, requests_intern(rq, NOT_OBSERVED), iv.start - at);
		if (iv.state == WS_STATE_BLOCKED || iv.state == WS_STATE_RUNNABLE) {
			i = wait_at(rq, t, i, start, end);
			iv.end = ws_thread_end(t, i);
		} else {
			stretch(rq, t, &iv, start, end);
		}
		at = iv.end == WS_NO_END || iv.end > end ? end : iv.end;
	}
	if (at < end)
		part_add(rq, requests_intern(rq, NOT_OBSERVED), end - at);
}

/* A call that receives: the thread blocked in it waits for data on that descriptor. */
static bool receives(const struct ws_syscall *sys)
{
	return ws_syscall_is(sys, "read") || ws_syscall_is(sys, "recvfrom") ||
	       ws_syscall_is(sys, "recvmsg") || ws_syscall_is(sys, "readv") ||
	       ws_syscall_is(sys, "recvmmsg");
}

uint64_t request_arrival(struct ws_requests *rq, uint32_t tid, uint64_t recv_ts)
{
	struct ws_thread *t = ws_graph_thread_at(rq->g, tid, recv_ts);
	const struct ws_claim *cl;
	size_t i;

	if (!t)
		return recv_ts;
	i = ws_thread_find(t, recv_ts);
	if (i >= t->n || i < t->head + 2 || t->iv[i].state != WS_STATE_RUNNING ||
	    t->iv[i - 1].state != WS_STATE_RUNNABLE || t->iv[i - 2].state != WS_STATE_BLOCKED)
		return recv_ts;
	cl = t->iv[i - 2].claim ? ws_graph_claim(rq->g, t->iv[i - 2].claim) : NULL;
	/* blocked in the very receive that returned the request: its data woke it */
	return cl && receives(&cl->syscall) ? t->iv[i - 1].start : recv_ts;
}
