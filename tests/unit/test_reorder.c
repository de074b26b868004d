// SPDX-License-Identifier: MIT
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "engine/reorder.h"

struct seen {
	uint64_t ts[4096];
	uint32_t tid[4096];
	int n;
};

static void collect(void *ctx, const struct ws_rec_hdr *rec)
{
	struct seen *s = ctx;

	s->ts[s->n] = rec->ts;
	s->tid[s->n++] = rec->tid;
}

static struct ws_rec_hdr rec(uint64_t ts, uint32_t tid)
{
	struct ws_rec_hdr h = { .size = sizeof(h), .ts = ts, .tid = tid };

	return h;
}

Test(reorder, restores_order_within_the_window)
{
	struct seen s = { 0 };
	struct ws_reorder *r = ws_reorder_new(1000, collect, &s);
	uint64_t order[] = { 5000, 4500, 5200, 4900, 6000, 5100 };

	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		struct ws_rec_hdr h = rec(order[i], i);

		cr_assert_eq(ws_reorder_push(r, &h), 0);
	}
	/* newest is 6000: only records at or before 5000 may leave */
	ws_reorder_flush(r, 0);
	cr_assert_eq(s.n, 3);
	cr_assert_eq(s.ts[0], 4500);
	cr_assert_eq(s.ts[1], 4900);
	cr_assert_eq(s.ts[2], 5000);
	ws_reorder_drain(r);
	cr_assert_eq(s.n, 6);
	for (int i = 1; i < s.n; i++)
		cr_assert_leq(s.ts[i - 1], s.ts[i]);
	cr_assert_eq(ws_reorder_late(r), 0);
	ws_reorder_free(r);
}

Test(reorder, equal_timestamps_keep_arrival_order)
{
	struct seen s = { 0 };
	struct ws_reorder *r = ws_reorder_new(10, collect, &s);

	for (uint32_t i = 0; i < 100; i++) {
		struct ws_rec_hdr h = rec(777, i);

		ws_reorder_push(r, &h);
	}
	ws_reorder_drain(r);
	for (int i = 0; i < 100; i++)
		cr_assert_eq(s.tid[i], (uint32_t)i, "same-CPU records with one stamp must stay in order");
	ws_reorder_free(r);
}

Test(reorder, counts_records_later_than_the_window)
{
	struct seen s = { 0 };
	struct ws_reorder *r = ws_reorder_new(100, collect, &s);
	struct ws_rec_hdr a = rec(1000, 1), b = rec(2000, 2), late = rec(500, 3);

	ws_reorder_push(r, &a);
	ws_reorder_push(r, &b);
	ws_reorder_flush(r, 0);
	ws_reorder_push(r, &late);
	ws_reorder_drain(r);
	cr_assert_eq(s.n, 3, "a late record is still dispatched");
	cr_assert_eq(ws_reorder_late(r), 1);
	ws_reorder_free(r);
}

Test(reorder, random_shuffles_come_out_sorted)
{
	struct seen s = { 0 };
	struct ws_reorder *r = ws_reorder_new(1 << 20, collect, &s);

	srand(7);
	for (int i = 0; i < 4000; i++) {
		/* at most 50us of disorder, far inside the window */
		struct ws_rec_hdr h = rec(100000 + i * 100 + rand() % 50000, i);

		ws_reorder_push(r, &h);
		ws_reorder_flush(r, 0);
	}
	ws_reorder_drain(r);
	cr_assert_eq(s.n, 4000);
	for (int i = 1; i < s.n; i++)
		cr_assert_leq(s.ts[i - 1], s.ts[i]);
	ws_reorder_free(r);
}

Test(reorder, large_records_are_copied_whole)
{
	struct seen s = { 0 };
	struct ws_reorder *r = ws_reorder_new(10, collect, &s);
	unsigned char big[600];
	struct ws_rec_hdr *h = (void *)big;

	memset(big, 0xab, sizeof(big));
	h->size = sizeof(big);
	h->ts = 42;
	h->tid = 9;
	cr_assert_eq(ws_reorder_push(r, h), 0);
	ws_reorder_drain(r);
	cr_assert_eq(s.n, 1);
	cr_assert_eq(s.tid[0], 9);
	ws_reorder_free(r);
}

/* In-order records take the FIFO, older ones the heap: together, still by time then arrival. */
Test(reorder, in_order_and_late_arrivals_merge_by_time_then_arrival)
{
	struct seen s = { 0 };
	struct ws_reorder *r = ws_reorder_new(1 << 20, collect, &s);
	uint64_t ts[] = { 100, 200, 100, 300, 150, 300, 200, 50, 400, 150 };
	uint32_t want[] = { 7, 0, 2, 4, 9, 1, 6, 3, 5, 8 };
	int n = sizeof(ts) / sizeof(ts[0]);

	for (int i = 0; i < n; i++) {
		struct ws_rec_hdr h = rec(ts[i], i);

		cr_assert_eq(ws_reorder_push(r, &h), 0);
	}
	cr_assert_eq(ws_reorder_held(r), (size_t)n);
	ws_reorder_drain(r);
	cr_assert_eq(s.n, n);
	for (int i = 0; i < n; i++)
		cr_assert_eq(s.tid[i], want[i], "position %d: tid %u", i, s.tid[i]);
	cr_assert_eq(ws_reorder_held(r), 0);
	ws_reorder_free(r);
}

/* A FIFO that wraps around its ring, then grows while wrapped, keeps its order. */
Test(reorder, fifo_wraps_and_grows_in_order)
{
	struct seen s = { 0 };
	struct ws_reorder *r = ws_reorder_new(1000, collect, &s);

	for (uint32_t i = 0; i < 4000; i++) {
		struct ws_rec_hdr h = rec(1000 + i * 10, i);

		cr_assert_eq(ws_reorder_push(r, &h), 0);
		/* about 100 held at a time; none let out for a while from the 3000th on */
		if (i < 3000 || i > 3500)
			ws_reorder_flush(r, 0);
	}
	ws_reorder_drain(r);
	cr_assert_eq(s.n, 4000);
	for (int i = 0; i < s.n; i++)
		cr_assert_eq(s.tid[i], (uint32_t)i);
	cr_assert_eq(ws_reorder_late(r), 0);
	ws_reorder_free(r);
}
