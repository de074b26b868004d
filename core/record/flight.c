// SPDX-License-Identifier: MIT
/* The flight recorder: see flight.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "flight.h"

/*
 * Each entry: this header, then the record, padded to 8 bytes so that every record lies aligned
 * for its readers. A SKIP entry fills the end of the buffer when the next record does not fit
 * there: that record goes to the start instead, and the skip goes when the oldest reach it.
 */
struct entry {
	uint32_t len; /* of the whole entry, this header included */
	uint32_t skip;
};

struct ws_flight {
	char *buf;
	size_t cap;
	size_t head, tail; /* the oldest entry; where the next goes */
	size_t used;	   /* bytes of [head, tail), skips included; head == tail: empty or full */
	uint64_t keep_ns;
	struct ws_flight_stats st;
};

#define ALIGN8(n) (((n) + 7) & ~(size_t)7)

int ws_flight_new(struct ws_flight **out, uint64_t keep_ns, size_t max_bytes)
{
	struct ws_flight *f;

	*out = NULL;
	max_bytes &= ~(size_t)7;
	/* the largest record (a stack of 64 KiB) must fit four times over */
	if (max_bytes < 4 * (sizeof(struct entry) + 65536))
		return -EINVAL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	/* untouched pages cost nothing: the buffer fills the memory it is allowed as it is used */
	f->buf = malloc(max_bytes);
	if (!f->buf) {
		free(f);
		return -ENOMEM;
	}
	f->cap = max_bytes;
	f->keep_ns = keep_ns;
	*out = f;
	return 0;
}

static const struct entry *at(const struct ws_flight *f, size_t off)
{
	return (const struct entry *)(f->buf + off);
}

/* Drop the oldest entry; @for_room: to make room (counted as evicted) rather than aged out. */
static void drop_oldest(struct ws_flight *f, bool for_room)
{
	const struct entry *e = at(f, f->head);

	if (!e->skip) {
		const struct ws_rec_hdr *r = (const void *)(e + 1);

		f->st.records--;
		if (for_room) {
			f->st.evicted++;
			f->st.evicted_bytes += r->size;
			f->st.first_evicted_ts = r->ts;
		} else {
			f->st.aged++;
		}
	}
	f->used -= e->len;
	f->head += e->len;
	if (f->head == f->cap)
		f->head = 0;
	if (!f->used)
		f->head = f->tail = 0;
}

/* The oldest entries that are skips go with the record before them: none is left at the head. */
static void drop_skips(struct ws_flight *f)
{
	while (f->used && at(f, f->head)->skip)
		drop_oldest(f, true);
}

/* Where an entry of @need bytes can go now, making room at the end a skip; -1: nowhere yet. */
static long place(struct ws_flight *f, size_t need)
{
	if (f->used == f->cap)
		return -1;
	if (f->tail < f->head)
		return f->head - f->tail >= need ? (long)f->tail : -1;
	/* tail >= head: free at the end, then at the start up to head */
	if (f->cap - f->tail >= need)
		return (long)f->tail;
	if (f->head < need)
		return -1;
	if (f->tail < f->cap) {
		struct entry *s = (struct entry *)(f->buf + f->tail);

		s->len = f->cap - f->tail;
		s->skip = 1;
		f->used += s->len;
	}
	f->tail = 0;
	return 0;
}

static void age(struct ws_flight *f, uint64_t now)
{
	while (f->st.records && now > f->keep_ns) {
		const struct ws_rec_hdr *r = (const void *)(at(f, f->head) + 1);

		if (r->ts >= now - f->keep_ns)
			break;
		drop_oldest(f, false);
		drop_skips(f);
	}
}

void ws_flight_push(struct ws_flight *f, const struct ws_rec_hdr *rec)
{
	size_t need = sizeof(struct entry) + ALIGN8((size_t)rec->size);
	struct entry *e;
	long off;

	if (need > f->cap / 4) {
		f->st.too_big++;
		return;
	}
	/* stream time: the newest record's, so an idle machine keeps its last window */
	if (rec->ts > f->st.newest_ts)
		f->st.newest_ts = rec->ts;
	age(f, f->st.newest_ts);
	while ((off = place(f, need)) < 0) {
		drop_oldest(f, true);
		drop_skips(f);
	}
	e = (struct entry *)(f->buf + off);
	e->len = need;
	e->skip = 0;
	memcpy(e + 1, rec, rec->size);
	f->tail = off + need;
	if (f->tail == f->cap)
		f->tail = 0;
	f->used += need;
	f->st.records++;
}

int ws_flight_each(const struct ws_flight *f, int (*fn)(void *ctx, const struct ws_rec_hdr *rec),
		   void *ctx)
{
	size_t off = f->head, left = f->used;

	while (left) {
		const struct entry *e = at(f, off);
		int rc;

		if (!e->skip && (rc = fn(ctx, (const void *)(e + 1))))
			return rc;
		left -= e->len;
		off += e->len;
		if (off == f->cap)
			off = 0;
	}
	return 0;
}

void ws_flight_stats(const struct ws_flight *f, struct ws_flight_stats *st)
{
	*st = f->st;
	st->bytes = f->used;
	st->oldest_ts = 0;
	if (f->st.records)
		st->oldest_ts = ((const struct ws_rec_hdr *)(at(f, f->head) + 1))->ts;
	if (!f->st.records)
		st->newest_ts = 0;
}

void ws_flight_free(struct ws_flight *f)
{
	if (!f)
		return;
	free(f->buf);
	free(f);
}
