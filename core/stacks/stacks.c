// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stacks.h"
#include "base/util.h"

#define BUCKETS 1024

struct bucket {
	struct ws_stack **v; /* arrival order */
	size_t n, cap;
};

struct ws_stacks {
	struct bucket b[BUCKETS];
	uint64_t capture_ns;
};

struct ws_stacks *ws_stacks_new(void)
{
	struct ws_stacks *s = calloc(1, sizeof(struct ws_stacks));

	if (s)
		s->capture_ns = UINT64_MAX;
	return s;
}

void ws_stacks_set_capture(struct ws_stacks *s, uint64_t min_ns)
{
	s->capture_ns = min_ns;
}

uint64_t ws_stacks_capture(const struct ws_stacks *s)
{
	return s->capture_ns;
}

void ws_stacks_free(struct ws_stacks *s)
{
	if (!s)
		return;
	for (int i = 0; i < BUCKETS; i++) {
		for (size_t k = 0; k < s->b[i].n; k++)
			ws_stack_free(s->b[i].v[k]);
		free(s->b[i].v);
	}
	free(s);
}

int ws_stacks_keep(struct ws_stacks *s, struct ws_stack *st)
{
	struct bucket *b = &s->b[st->wait_tid % BUCKETS];

	if (ws_grow((void **)&b->v, &b->cap, b->n + 1, sizeof(*b->v))) {
		ws_stack_free(st);
		return -ENOMEM;
	}
	b->v[b->n++] = st;
	return 0;
}

int ws_stacks_add(struct ws_stacks *s, const struct ws_rec_hdr *rec)
{
	struct ws_stack *st;
	int err = ws_stackrec_decode(rec, &st);

	return err ? err : ws_stacks_keep(s, st);
}

void ws_stacks_evict(struct ws_stacks *s, uint64_t ts)
{
	for (int i = 0; i < BUCKETS; i++) {
		struct bucket *b = &s->b[i];
		size_t k = 0;

		for (size_t j = 0; j < b->n; j++) {
			if (b->v[j]->wait_end < ts)
				ws_stack_free(b->v[j]);
			else
				b->v[k++] = b->v[j];
		}
		b->n = k;
	}
}

static uint64_t overlap(const struct ws_stack *st, uint64_t from, uint64_t to)
{
	uint64_t a = st->wait_start > from ? st->wait_start : from;
	uint64_t e = st->wait_end < to ? st->wait_end : to;

	/* a point-like interval still counts when it lies inside */
	return e > a ? e - a : (e == a && st->wait_end >= from && st->wait_start <= to);
}

int ws_stacks_find(const struct ws_stacks *s, uint8_t role, uint32_t wait_tid, uint64_t from,
		   uint64_t to, const struct ws_stack *out[WS_STACK_PARTS])
{
	const struct bucket *b = &s->b[wait_tid % BUCKETS];
	const struct ws_stack *best = NULL;
	uint64_t best_ov = 0;
	int n = 0;

	out[0] = out[1] = NULL;
	for (size_t j = 0; j < b->n; j++) {
		const struct ws_stack *st = b->v[j];
		uint64_t ov;

		if (st->wait_tid != wait_tid || st->role != role)
			continue;
		ov = overlap(st, from, to);
		if (ov > best_ov) {
			best = st;
			best_ov = ov;
		}
	}
	if (!best)
		return 0;
	out[n++] = best;
	for (size_t j = 0; j < b->n && n < WS_STACK_PARTS; j++) {
		const struct ws_stack *st = b->v[j];

		if (st != best && st->wait_tid == wait_tid && st->role == role &&
		    st->tid == best->tid && st->wait_start == best->wait_start &&
		    st->wait_end == best->wait_end)
			out[n++] = st;
	}
	return n;
}
