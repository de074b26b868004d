/* SPDX-License-Identifier: MIT */
/* Private to the requests (request_conns.c: the connections and totals; request_path.c: one
 * request explained). */
#ifndef WS_REQUESTS_IMPL_H
#define WS_REQUESTS_IMPL_H

#include <whyslow/table.h>

#include "requests.h"
#include "base/strpool.h"

/* One request's parts, where the summary finds them again (the slowest tenth's shares). */
struct stored_request {
	uint64_t dur;
	size_t off;
	uint32_t n;
};

/*
 * The first REQUESTS_EXACT requests are kept (a latency and its parts' names each): exact
 * percentiles and slowest tenth. Past that, an attach left on would grow by a megabyte a second
 * on a busy database: the latencies go into a log histogram (lenhist.h: percentiles within
 * 1.6%) and each reason's time into its latency's bucket (the slowest tenth then read from
 * the buckets above its edge, and the edge bucket in the share it takes), and the memory stops
 * growing.
 */
#define REQUESTS_EXACT 65536

/* A reason's totals: the value of rq->reasons, keyed by its interned name. */
struct reason_acc {
	uint64_t ns, slowest_ns, requests;
	uint64_t example_ns;
	char *example;
	uint32_t idx; /* its number in rq->reason_names, from 1; 0 before its first request */
};

struct ws_requests {
	struct ws_graph *g;
	struct ws_requests_ops ops;
	struct ws_strpool names;
	struct ws_table conns; /* socket -> struct conn (request_conns.c) */
	struct ws_table pids;  /* processes that served a request -> nothing */
	struct ws_table calls; /* thread -> its socket calls on server ends so far (uint64_t) */
	uint64_t conns_seen, last_expiry;

	/* the request being explained: its parts so far */
	struct ws_request_part *cur;
	size_t ncur, cur_cap;
	uint64_t own_cpu;
	struct ws_chain chain; /* a wait of it, walked */

	/* every request's latency and parts, until REQUESTS_EXACT of them */
	struct stored_request *reqs;
	size_t nreqs, reqs_cap;
	struct ws_request_part *pool;
	size_t npool, pool_cap;
	/* past them: WS_LENHIST_BUCKETS counts and latency sums (NULL before), and each reason's
	 * time per bucket: (bucket + 1) << 32 | its idx -> ns (uint64_t) */
	uint64_t *hist, *hist_ns;
	struct ws_table by_bucket;
	const char **reason_names; /* by idx - 1 */
	size_t nreason_names, reason_names_cap;
	uint64_t count, total, max; /* every request */
	struct ws_table reasons;    /* interned name -> struct reason_acc */
	struct ws_request *slow;    /* the slowest, longest first, parts their own */
	int nslow;
	uint64_t incomplete, unanswered, client_calls, unknown_role, filtered;

	/* what ws_requests_summary() hands out */
	struct ws_request_reason *sum_reasons;
	uint64_t *sorted;
	int err;
};

/* @s's interned copy ("" when out of memory). */
const char *requests_intern(struct ws_requests *rq, const char *s);
/* The interned copy of what @fmt formats (cut at 255 bytes). */
const char *requests_name(struct ws_requests *rq, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * When the request that thread @tid's receive at @recv_ts returned arrived: the wakeup that
 * ended its wait inside that very receive, or @recv_ts when it did not wait in it (the data was
 * there, or it waited in epoll_wait for any of several sockets).
 */
uint64_t request_arrival(struct ws_requests *rq, uint32_t tid, uint64_t recv_ts);
/* Explain thread @tid's time over [@start, @end) into rq->cur and rq->own_cpu. */
void request_path(struct ws_requests *rq, uint32_t tid, uint64_t start, uint64_t end);

#endif
