// SPDX-License-Identifier: MIT
/* What the requests came to: latency percentiles, and the reasons by the time they cost. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lenhist.h"
#include "requests_impl.h"

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int by_reason_ns(const void *a, const void *b)
{
	const struct ws_request_reason *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns < y->ns ? 1 : -1;
	return strcmp(x->what, y->what);
}

/* The value below which @p percent of the sorted @v lie (nearest rank). */
static uint64_t percentile(const uint64_t *v, size_t n, unsigned p)
{
	size_t rank = (n * p + 99) / 100;

	return n ? v[rank ? rank - 1 : 0] : 0;
}

static void slowest_clear(struct ws_requests *rq)
{
	for (size_t i = 0; i < rq->reasons.cap; i++) {
		struct reason_acc *r = ws_table_at(&rq->reasons, i);

		if (r)
			r->slowest_ns = 0;
	}
}

/*
 * Past REQUESTS_EXACT: each reason's time in the slowest tenth, from the buckets above the one
 * holding the tenth's fastest request, and that bucket's share the tenth takes of its requests
 * (they are within 3% of each other in length: its reasons are taken in that share).
 */
static uint64_t slowest_buckets(struct ws_requests *rq, uint64_t n)
{
	uint64_t want = (n + 9) / 10, above = 0;
	size_t edge = ws_lenhist_bucket_of_rank(rq->hist, n - want + 1);
	double total = 0, share;

	slowest_clear(rq);
	for (size_t b = edge + 1; b < WS_LENHIST_BUCKETS; b++) {
		above += rq->hist[b];
		total += (double)rq->hist_ns[b];
	}
	share = rq->hist[edge] && want > above ? (double)(want - above) / rq->hist[edge] : 0;
	if (share > 1)
		share = 1;
	total += share * (double)rq->hist_ns[edge];
	for (size_t i = 0; i < rq->by_bucket.cap; i++) {
		uint64_t *ns = ws_table_at(&rq->by_bucket, i), key;
		struct reason_acc *r;

		if (!ns)
			continue;
		key = ws_table_key_of(ns);
		if ((key >> 32) - 1 < edge || (uint32_t)key - 1 >= rq->nreason_names)
			continue;
		r = ws_table_get(&rq->reasons,
				 (uint64_t)(uintptr_t)rq->reason_names[(uint32_t)key - 1]);
		if (r)
			r->slowest_ns += (key >> 32) - 1 == edge ? (uint64_t)(share * *ns) : *ns;
	}
	return (uint64_t)total;
}

/* Each reason's time in the slowest tenth of the requests (ties at its edge included). */
static uint64_t slowest_tenth(struct ws_requests *rq, uint64_t edge)
{
	uint64_t total = 0;

	slowest_clear(rq);
	for (size_t i = 0; i < rq->nreqs; i++) {
		const struct stored_request *s = &rq->reqs[i];

		if (s->dur < edge)
			continue;
		total += s->dur;
		for (uint32_t k = 0; k < s->n; k++) {
			const struct ws_request_part *p = &rq->pool[s->off + k];
			struct reason_acc *r =
				ws_table_get(&rq->reasons, (uint64_t)(uintptr_t)p->what);

			if (r)
				r->slowest_ns += p->ns;
		}
	}
	return total;
}

int ws_requests_summary(struct ws_requests *rq, struct ws_requests_summary *s)
{
	size_t n = rq->hist ? 0 : rq->nreqs, k = 0;

	memset(s, 0, sizeof(*s));
	s->count = rq->count;
	s->total_ns = rq->total;
	s->connections = rq->conns_seen;
	s->processes = rq->pids.live;
	s->incomplete = rq->incomplete;
	s->unanswered = rq->unanswered;
	s->client_calls = rq->client_calls;
	s->unknown_role = rq->unknown_role;
	s->filtered = rq->filtered;
	s->slowest = rq->slow;
	s->nslowest = rq->nslow;
	free(rq->sorted);
	free(rq->sum_reasons);
	rq->sorted = malloc(sizeof(*rq->sorted) * (n ? n : 1));
	rq->sum_reasons =
		malloc(sizeof(*rq->sum_reasons) * (rq->reasons.live ? rq->reasons.live : 1));
	if (!rq->sorted || !rq->sum_reasons)
		return -ENOMEM;
	if (rq->hist) {
		s->p50 = ws_lenhist_percentile(rq->hist, rq->count, 50, rq->max);
		s->p90 = ws_lenhist_percentile(rq->hist, rq->count, 90, rq->max);
		s->p99 = ws_lenhist_percentile(rq->hist, rq->count, 99, rq->max);
		s->max = rq->max;
		s->slowest_total_ns = slowest_buckets(rq, rq->count);
	} else {
		for (size_t i = 0; i < n; i++)
			rq->sorted[i] = rq->reqs[i].dur;
		if (n)
			qsort(rq->sorted, n, sizeof(*rq->sorted), by_u64);
		s->p50 = percentile(rq->sorted, n, 50);
		s->p90 = percentile(rq->sorted, n, 90);
		s->p99 = percentile(rq->sorted, n, 99);
		s->max = n ? rq->sorted[n - 1] : 0;
		/* the slowest tenth: at least one request */
		s->slowest_total_ns =
			slowest_tenth(rq, n ? rq->sorted[n - (n + 9) / 10] : UINT64_MAX);
	}
	for (size_t i = 0; i < rq->reasons.cap; i++) {
		struct reason_acc *r = ws_table_at(&rq->reasons, i);

		if (!r || !r->requests)
			continue;
		rq->sum_reasons[k++] = (struct ws_request_reason){
			.what = (const char *)(uintptr_t)ws_table_key_of(r),
			.ns = r->ns,
			.slowest_ns = r->slowest_ns,
			.requests = r->requests,
			.example = r->example,
			.example_ns = r->example_ns,
		};
	}
	if (k)
		qsort(rq->sum_reasons, k, sizeof(*rq->sum_reasons), by_reason_ns);
	s->reasons = rq->sum_reasons;
	s->nreasons = k;
	return rq->err;
}
