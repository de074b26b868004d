/* SPDX-License-Identifier: MIT */
/*
 * The last few records of one kind on each CPU, for a source whose evidence
 * is written in the same interrupt bracket (or the same tracepoint) as the
 * wakeup it explains: blkio's completions, net's packet wakeups, kill's
 * signals. The decoder pushes each record; infer asks for the newest one on
 * the wakeup's CPU that matches it. Header-only: plugins link nothing.
 */
#ifndef WHYSLOW_RECENT_H
#define WHYSLOW_RECENT_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <whyslow/record.h>

struct ws_recent {
	size_t rec_size;      /* bytes kept of each record (the record struct's size) */
	unsigned int per_cpu; /* slots per CPU; the oldest is overwritten */
	unsigned int ncpus;   /* CPUs with slots so far */
	uint64_t seq;	      /* records pushed: a slot's seq is its push order, 0 = empty */
	unsigned char *slots; /* ncpus * per_cpu slots of ws_recent_slot_size() bytes */
	unsigned int *next;   /* per CPU: the slot the next push overwrites */
};

/* A slot: its push order, then the record's bytes (8-aligned, as records are). */
struct ws_recent_slot {
	uint64_t seq;
};

static inline size_t ws_recent_slot_size(const struct ws_recent *r)
{
	return sizeof(struct ws_recent_slot) + (r->rec_size + 7) / 8 * 8;
}

static inline void *ws_recent_rec(const struct ws_recent_slot *s)
{
	return (void *)(s + 1);
}

static inline struct ws_recent_slot *ws_recent_slot(const struct ws_recent *r, unsigned int cpu,
						    unsigned int i)
{
	return (struct ws_recent_slot *)(r->slots +
					 ((size_t)cpu * r->per_cpu + i) * ws_recent_slot_size(r));
}

static inline void ws_recent_init(struct ws_recent *r, size_t rec_size, unsigned int per_cpu)
{
	memset(r, 0, sizeof(*r));
	r->rec_size = rec_size;
	r->per_cpu = per_cpu;
}

static inline void ws_recent_free(struct ws_recent *r)
{
	free(r->slots);
	free(r->next);
	ws_recent_init(r, r->rec_size, r->per_cpu);
}

/*
 * Keep @rec (at most rec_size bytes of it; a shorter record is zero-padded)
 * as the newest on its CPU. Returns the stored copy, or NULL when out of
 * memory.
 */
static inline void *ws_recent_push(struct ws_recent *r, const struct ws_rec_hdr *rec)
{
	struct ws_recent_slot *s;

	if (rec->cpu >= r->ncpus) {
		unsigned int n = rec->cpu + 1u;
		size_t old = (size_t)r->ncpus * r->per_cpu * ws_recent_slot_size(r);
		size_t want = (size_t)n * r->per_cpu * ws_recent_slot_size(r);
		unsigned char *slots = (unsigned char *)realloc(r->slots, want);
		unsigned int *next;

		if (!slots)
			return NULL;
		r->slots = slots;
		next = (unsigned int *)realloc(r->next, n * sizeof(*next));
		if (!next)
			return NULL;
		r->next = next;
		memset(slots + old, 0, want - old);
		memset(next + r->ncpus, 0, (n - r->ncpus) * sizeof(*next));
		r->ncpus = n;
	}
	s = ws_recent_slot(r, rec->cpu, r->next[rec->cpu]);
	r->next[rec->cpu] = (r->next[rec->cpu] + 1) % r->per_cpu;
	memset(ws_recent_rec(s), 0, r->rec_size);
	memcpy(ws_recent_rec(s), rec, rec->size < r->rec_size ? rec->size : r->rec_size);
	s->seq = ++r->seq;
	return ws_recent_rec(s);
}

/* Whether a kept record is the one asked for. */
typedef bool (*ws_recent_match_fn)(const void *rec, const void *arg);

/*
 * The newest record kept on @cpu that @match accepts and that was pushed
 * before @before (0: any), or NULL; its push order in *@seq when @seq is set.
 */
static inline const void *ws_recent_newest(const struct ws_recent *r, uint32_t cpu, uint64_t before,
					   ws_recent_match_fn match, const void *arg, uint64_t *seq)
{
	const struct ws_recent_slot *best = NULL;

	for (unsigned int i = 0; cpu < r->ncpus && i < r->per_cpu; i++) {
		const struct ws_recent_slot *s = ws_recent_slot(r, cpu, i);

		if (!s->seq || (before && s->seq >= before) || (best && s->seq <= best->seq) ||
		    !match(ws_recent_rec(s), arg))
			continue;
		best = s;
	}
	if (seq)
		*seq = best ? best->seq : 0;
	return best ? ws_recent_rec(best) : NULL;
}

#endif /* WHYSLOW_RECENT_H */
