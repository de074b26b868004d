// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "reorder.h"
#include "base/util.h"

/*
 * Records up to this size live in pooled slots; larger ones are allocated. The two common
 * kinds (a switch, 120 bytes, and a wakeup, 192) both fit: one malloc/free per record cost
 * more than the rest of the reorder.
 */
#define SLOT_SIZE 256

struct entry {
	uint64_t ts, seq;
	struct ws_rec_hdr *rec;
};

struct slot {
	union {
		struct slot *next;
		unsigned char data[SLOT_SIZE];
	};
};

/*
 * Two queues, each in (ts, seq) order, and the older of their heads leaves first. Records
 * almost always arrive in order (a recording is written sorted; live, most CPUs' records
 * interleave in order): those go to the back of a FIFO, O(1). Only one older than the
 * FIFO's last goes through the heap. The order out is the heap-only order, as before:
 * by timestamp, then by arrival.
 */
struct ws_reorder {
	uint64_t window, newest, last_out, seq, late;
	struct entry *run; /* the FIFO: a ring of run_cap (a power of 2) entries */
	size_t run_head, run_n, run_cap;
	struct entry *heap;
	size_t n, cap;
	struct slot *free_slots;
	ws_dispatch_fn fn;
	void *ctx;
};

static int before(const struct entry *a, const struct entry *b)
{
	return a->ts < b->ts || (a->ts == b->ts && a->seq < b->seq);
}

static void sift_up(struct entry *h, size_t i)
{
	while (i > 0) {
		size_t p = (i - 1) / 2;
		struct entry t;

		if (!before(&h[i], &h[p]))
			break;
		t = h[i];
		h[i] = h[p];
		h[p] = t;
		i = p;
	}
}

static void sift_down(struct entry *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		struct entry t;

		if (l < n && before(&h[l], &h[m]))
			m = l;
		if (r < n && before(&h[r], &h[m]))
			m = r;
		if (m == i)
			return;
		t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

struct ws_reorder *ws_reorder_new(uint64_t window_ns, ws_dispatch_fn fn, void *ctx)
{
	struct ws_reorder *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->window = window_ns;
	r->fn = fn;
	r->ctx = ctx;
	return r;
}

static void release(struct ws_reorder *r, struct ws_rec_hdr *rec)
{
	if (rec->size <= SLOT_SIZE) {
		struct slot *s = (struct slot *)rec;

		s->next = r->free_slots;
		r->free_slots = s;
	} else {
		free(rec);
	}
}

static struct entry *run_at(const struct ws_reorder *r, size_t i)
{
	return &r->run[(r->run_head + i) & (r->run_cap - 1)];
}

/* Room for one more in the FIFO: a bigger ring, its entries unwrapped to the front. */
static int run_grow(struct ws_reorder *r)
{
	size_t ncap = r->run_cap ? 2 * r->run_cap : 256;
	struct entry *nr;

	if (r->run_n < r->run_cap)
		return 0;
	nr = malloc(ncap * sizeof(*nr));
	if (!nr)
		return -ENOMEM;
	for (size_t i = 0; i < r->run_n; i++)
		nr[i] = *run_at(r, i);
	free(r->run);
	r->run = nr;
	r->run_head = 0;
	r->run_cap = ncap;
	return 0;
}

/* Whether @e can go to the back of the FIFO and keep it in order (seq only grows). */
static bool in_order(const struct ws_reorder *r, const struct entry *e)
{
	return !r->run_n || run_at(r, r->run_n - 1)->ts <= e->ts;
}

static int queue(struct ws_reorder *r, const struct entry *e)
{
	if (in_order(r, e)) {
		if (run_grow(r))
			return -ENOMEM;
		*run_at(r, r->run_n++) = *e;
		return 0;
	}
	if (ws_grow((void **)&r->heap, &r->cap, r->n + 1, sizeof(*r->heap)))
		return -ENOMEM;
	r->heap[r->n] = *e;
	sift_up(r->heap, r->n++);
	return 0;
}

int ws_reorder_push(struct ws_reorder *r, const struct ws_rec_hdr *rec)
{
	struct entry e = { rec->ts, r->seq };
	struct ws_rec_hdr *copy;

	if (rec->size <= SLOT_SIZE && r->free_slots) {
		copy = (struct ws_rec_hdr *)r->free_slots;
		r->free_slots = r->free_slots->next;
	} else {
		copy = malloc(rec->size <= SLOT_SIZE ? sizeof(struct slot) : rec->size);
		if (!copy)
			return -ENOMEM;
	}
	memcpy(copy, rec, rec->size);
	e.rec = copy;
	if (queue(r, &e)) {
		release(r, copy);
		return -ENOMEM;
	}
	r->seq++;
	if (rec->ts > r->newest)
		r->newest = rec->ts;
	return 0;
}

/* The entry to leave next, or NULL when nothing is held. */
static const struct entry *oldest(const struct ws_reorder *r)
{
	const struct entry *f = r->run_n ? run_at(r, 0) : NULL;

	if (!r->n)
		return f;
	return f && before(f, &r->heap[0]) ? f : &r->heap[0];
}

/*
 * The FIFO's head, taken out. It also starts fetching the record handed out two after it:
 * that one was copied in a whole window ago and has left the cache since. (In a function
 * of its own, with nothing but prefetches, GCC 12 takes the prefetches for no effect and
 * drops the call.)
 */
static struct entry run_pop(struct ws_reorder *r)
{
	struct entry e = *run_at(r, 0);

	r->run_head = (r->run_head + 1) & (r->run_cap - 1);
	r->run_n--;
	if (r->run_n > 2) {
		const char *p = (const char *)run_at(r, 2)->rec;

		/* the lines of a 192-byte record (a wakeup) wherever in its line it starts */
		__builtin_prefetch(p);
		__builtin_prefetch(p + 64);
		__builtin_prefetch(p + 128);
		__builtin_prefetch(p + 192);
	}
	return e;
}

static void pop_one(struct ws_reorder *r)
{
	struct entry e;

	if (r->n && oldest(r) == r->heap) {
		e = r->heap[0];
		r->heap[0] = r->heap[--r->n];
		sift_down(r->heap, r->n, 0);
	} else {
		e = run_pop(r);
	}
	if (e.ts < r->last_out)
		r->late++;
	else
		r->last_out = e.ts;
	r->fn(r->ctx, e.rec);
	release(r, e.rec);
}

void ws_reorder_flush(struct ws_reorder *r, uint64_t now)
{
	uint64_t horizon = r->newest > now ? r->newest : now;

	if (horizon < r->window)
		return;
	horizon -= r->window;
	for (const struct entry *e = oldest(r); e && e->ts <= horizon; e = oldest(r))
		pop_one(r);
}

void ws_reorder_drain(struct ws_reorder *r)
{
	while (r->n || r->run_n)
		pop_one(r);
}

uint64_t ws_reorder_late(const struct ws_reorder *r)
{
	return r->late;
}

size_t ws_reorder_held(const struct ws_reorder *r)
{
	return r->n + r->run_n;
}

void ws_reorder_free(struct ws_reorder *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		release(r, r->heap[i].rec);
	for (size_t i = 0; i < r->run_n; i++)
		release(r, run_at(r, i)->rec);
	while (r->free_slots) {
		struct slot *s = r->free_slots;

		r->free_slots = s->next;
		free(s);
	}
	free(r->heap);
	free(r->run);
	free(r);
}
