// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "reorder.h"
#include "util.h"

/* Records up to this size live in pooled slots; larger ones are allocated. */
#define SLOT_SIZE 128

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

struct ws_reorder {
	uint64_t window, newest, last_out, seq, late;
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

int ws_reorder_push(struct ws_reorder *r, const struct ws_rec_hdr *rec)
{
	struct ws_rec_hdr *copy;

	if (ws_grow((void **)&r->heap, &r->cap, r->n + 1, sizeof(*r->heap)))
		return -ENOMEM;
	if (rec->size <= SLOT_SIZE && r->free_slots) {
		copy = (struct ws_rec_hdr *)r->free_slots;
		r->free_slots = r->free_slots->next;
	} else {
		copy = malloc(rec->size <= SLOT_SIZE ? sizeof(struct slot) : rec->size);
		if (!copy)
			return -ENOMEM;
	}
	memcpy(copy, rec, rec->size);
	r->heap[r->n] = (struct entry){ rec->ts, r->seq++, copy };
	sift_up(r->heap, r->n++);
	if (rec->ts > r->newest)
		r->newest = rec->ts;
	return 0;
}

static void pop_one(struct ws_reorder *r)
{
	struct entry e = r->heap[0];

	r->heap[0] = r->heap[--r->n];
	sift_down(r->heap, r->n, 0);
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
	while (r->n && r->heap[0].ts <= horizon)
		pop_one(r);
}

void ws_reorder_drain(struct ws_reorder *r)
{
	while (r->n)
		pop_one(r);
}

uint64_t ws_reorder_late(const struct ws_reorder *r)
{
	return r->late;
}

size_t ws_reorder_held(const struct ws_reorder *r)
{
	return r->n;
}

void ws_reorder_free(struct ws_reorder *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		release(r, r->heap[i].rec);
	while (r->free_slots) {
		struct slot *s = r->free_slots;

		r->free_slots = s->next;
		free(s);
	}
	free(r->heap);
	free(r);
}
