// SPDX-License-Identifier: MIT
/*
 * Requests from socket calls: each connection's server end followed call by call (the rule is
 * in requests.h), each request explained when it ends (request_path.c) and added to the totals
 * the report ranks: latency percentiles, and the reasons by the time they cost requests.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lenhist.h"
#include "requests_impl.h"
#include "base/util.h"

/* A connection's server end, and the request in progress on it. */
struct conn {
	uint64_t id;
	uint32_t proto;
	const char *local, *peer;
	uint64_t last_io;
	bool open; /* a request has begun */
	bool sent; /* ... and answered since its last receive */
	uint32_t tid, pid, other_sender;
	uint64_t start, last_send;
	uint32_t recvs, sends;
	uint64_t bytes_in, bytes_out;
	/* its thread's calls (rq->calls) after its first receive and after its last send by
	 * that thread (0: none), and how many of those were this connection's */
	uint64_t calls_at_start, calls_at_end, own_calls;
};

struct ws_requests *ws_requests_new(struct ws_graph *g, const struct ws_requests_ops *ops)
{
	struct ws_requests *rq = calloc(1, sizeof(*rq));

	if (!rq)
		return NULL;
	rq->g = g;
	rq->ops = *ops;
	ws_strpool_init(&rq->names);
	ws_table_init(&rq->conns, sizeof(struct conn));
	ws_table_init(&rq->pids, sizeof(char));
	ws_table_init(&rq->calls, sizeof(uint64_t));
	ws_table_init(&rq->reasons, sizeof(struct reason_acc));
	ws_table_init(&rq->by_bucket, sizeof(uint64_t));
	return rq;
}

void ws_requests_free(struct ws_requests *rq)
{
	if (!rq)
		return;
	for (size_t i = 0; i < rq->reasons.cap; i++) {
		struct reason_acc *r = ws_table_at(&rq->reasons, i);

		if (r)
			free(r->example);
	}
	for (int i = 0; i < rq->nslow; i++)
		free(rq->slow[i].parts);
	free(rq->slow);
	free(rq->cur);
	free(rq->reqs);
	free(rq->pool);
	free(rq->hist);
	free(rq->hist_ns);
	free(rq->reason_names);
	ws_table_free(&rq->by_bucket);
	free(rq->sum_reasons);
	free(rq->sorted);
	ws_chain_release(&rq->chain);
	ws_table_free(&rq->conns);
	ws_table_free(&rq->pids);
	ws_table_free(&rq->calls);
	ws_table_free(&rq->reasons);
	ws_strpool_free(&rq->names);
	free(rq);
}

static int by_part_ns(const void *a, const void *b)
{
	const struct ws_request_part *x = a, *y = b;

	return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

/* Keep @req among the slowest (ops.top of them), a copy of its parts with it. */
static void keep_slow(struct ws_requests *rq, const struct ws_request *req)
{
	int top = rq->ops.top > 0 ? rq->ops.top : 5, at;
	struct ws_request_part *parts;

	if (rq->nslow == top &&
	    rq->slow[top - 1].end - rq->slow[top - 1].start >= req->end - req->start)
		return;
	if (!rq->slow && !(rq->slow = calloc(top, sizeof(*rq->slow)))) {
		rq->err = -ENOMEM;
		return;
	}
	parts = malloc(sizeof(*parts) * (req->nparts ? req->nparts : 1));
	if (!parts) {
		rq->err = -ENOMEM;
		return;
	}
	memcpy(parts, req->parts, sizeof(*parts) * req->nparts);
	if (rq->nslow == top)
		free(rq->slow[--rq->nslow].parts);
	for (at = rq->nslow;
	     at > 0 && rq->slow[at - 1].end - rq->slow[at - 1].start < req->end - req->start; at--)
		rq->slow[at] = rq->slow[at - 1];
	rq->slow[at] = *req;
	rq->slow[at].parts = parts;
	rq->nslow++;
}

/* Reason @r (named @what) gets its number, for the buckets' keys. */
static int reason_number(struct ws_requests *rq, struct reason_acc *r, const char *what)
{
	if (ws_grow((void **)&rq->reason_names, &rq->reason_names_cap, rq->nreason_names + 1,
		    sizeof(*rq->reason_names)))
		return -ENOMEM;
	rq->reason_names[rq->nreason_names++] = what;
	r->idx = (uint32_t)rq->nreason_names;
	return 0;
}

/* @ns of reason number @idx in a request of latency bucket @b (the histogram's regime). */
static int bucket_add(struct ws_requests *rq, size_t b, uint32_t idx, uint64_t ns)
{
	uint64_t *sum = ws_table_put(&rq->by_bucket, (uint64_t)(b + 1) << 32 | idx, NULL);

	if (!sum)
		return -ENOMEM;
	*sum += ns;
	return 0;
}

/* REQUESTS_EXACT requests kept: from now on, the histogram, those first (see there). */
static int to_histogram(struct ws_requests *rq)
{
	uint64_t *hist = calloc(WS_LENHIST_BUCKETS, sizeof(*hist)),
		 *hist_ns = calloc(WS_LENHIST_BUCKETS, sizeof(*hist_ns));

	if (!hist || !hist_ns) {
		free(hist);
		free(hist_ns);
		return -ENOMEM;
	}
	rq->hist = hist;
	rq->hist_ns = hist_ns;
	for (size_t i = 0; i < rq->nreqs; i++) {
		const struct stored_request *q = &rq->reqs[i];
		size_t b = ws_lenhist_bucket(q->dur);

		rq->hist[b]++;
		rq->hist_ns[b] += q->dur;
		for (uint32_t k = 0; k < q->n; k++) {
			const struct ws_request_part *p = &rq->pool[q->off + k];
			struct reason_acc *r =
				ws_table_get(&rq->reasons, (uint64_t)(uintptr_t)p->what);

			/* (every stored part's reason has its number, but after ENOMEM) */
			if (!r || !r->idx || bucket_add(rq, b, r->idx, p->ns))
				return -ENOMEM;
		}
	}
	free(rq->reqs);
	free(rq->pool);
	rq->reqs = NULL;
	rq->pool = NULL;
	rq->nreqs = rq->reqs_cap = rq->npool = rq->pool_cap = 0;
	return 0;
}

/* Its latency and parts into the totals, where the summary finds them again. */
static void store(struct ws_requests *rq, const struct ws_request *req)
{
	uint64_t dur = req->end - req->start;
	size_t b = 0;

	if (!rq->hist && rq->nreqs == REQUESTS_EXACT && to_histogram(rq)) {
		rq->err = -ENOMEM;
		return;
	}
	rq->count++;
	rq->total += dur;
	if (dur > rq->max)
		rq->max = dur;
	if (rq->hist) {
		b = ws_lenhist_bucket(dur);
		rq->hist[b]++;
		rq->hist_ns[b] += dur;
	} else if (ws_grow((void **)&rq->reqs, &rq->reqs_cap, rq->nreqs + 1, sizeof(*rq->reqs)) ||
		   ws_grow((void **)&rq->pool, &rq->pool_cap, rq->npool + req->nparts,
			   sizeof(*rq->pool))) {
		rq->err = -ENOMEM;
		return;
	} else {
		rq->reqs[rq->nreqs++] = (struct stored_request){ .dur = dur,
								 .off = rq->npool,
								 .n = (uint32_t)req->nparts };
	}
	for (int i = 0; i < req->nparts; i++) {
		const struct ws_request_part *p = &req->parts[i];
		struct reason_acc *r =
			ws_table_put(&rq->reasons, (uint64_t)(uintptr_t)p->what, NULL);

		if (!rq->hist)
			rq->pool[rq->npool++] = *p;
		if (!r || (!r->idx && reason_number(rq, r, p->what))) {
			rq->err = -ENOMEM;
			continue;
		}
		r->ns += p->ns;
		r->requests++;
		if (rq->hist && bucket_add(rq, b, r->idx, p->ns))
			rq->err = -ENOMEM;
	}
}

/* Thread @tid made one more socket call on a server end: how many so far. */
static uint64_t count_call(struct ws_requests *rq, uint32_t tid)
{
	uint64_t *n = ws_table_put(&rq->calls, tid, NULL);

	if (!n) {
		rq->err = -ENOMEM;
		return 0;
	}
	return ++*n;
}

/*
 * Its thread worked for other connections too: its CPU time in the request is not all the
 * request's, and the part is named so (it is still time the request waited for).
 */
static void shared_cpu(struct ws_requests *rq, struct ws_request *req, const char *own)
{
	for (int i = 0; i < req->nparts; i++)
		if (req->parts[i].what == own)
			req->parts[i].what = requests_name(
				rq, "CPU work in %s, also serving other connections", req->comm);
}

/*
 * The request on @c ended with its last send, as a call at @seen showed (a receive, the
 * stream's end, the records' end): explain it, count it, hand it on.
 */
static void request_end(struct ws_requests *rq, struct conn *c, uint64_t seen)
{
	struct ws_request req = {
		.start = c->start,
		.end = c->last_send,
		.tid = c->tid,
		.pid = c->pid,
		.comm = requests_intern(rq, ws_graph_comm(rq->g, c->tid)),
		.proto = c->proto,
		.local = c->local,
		.peer = c->peer,
		.conn = c->id,
		.recvs = c->recvs,
		.sends = c->sends,
		.bytes_in = c->bytes_in,
		.bytes_out = c->bytes_out,
		.other_sender = c->other_sender != 0,
		.incomplete = ws_graph_window_lost(rq->g, c->start, seen),
	};
	const char *port = strrchr(c->local, ':'), *own;
	uint64_t dur;

	req.start = request_arrival(rq, c->tid, c->start);
	req.queued_ns = c->start - req.start;
	dur = req.end - req.start;

	c->open = c->sent = false;
	if (dur < rq->ops.min_latency_ns ||
	    (rq->ops.port && (!port || strtoul(port + 1, NULL, 10) != rq->ops.port))) {
		rq->filtered++;
		return;
	}
	request_path(rq, c->tid, req.start, req.end);
	if (rq->ncur)
		qsort(rq->cur, rq->ncur, sizeof(*rq->cur), by_part_ns);
	req.parts = rq->cur;
	req.nparts = (int)rq->ncur;
	req.own_cpu_ns = rq->own_cpu;
	own = requests_name(rq, "CPU work in %s", req.comm);
	if (c->calls_at_end)
		req.other_calls = c->calls_at_end - c->calls_at_start - c->own_calls;
	if (req.other_calls)
		shared_cpu(rq, &req, own);
	/* its own work when that is at least half of it; else what it waited for most */
	if (rq->own_cpu * 2 < dur) {
		for (int i = 0; i < req.nparts && !req.cause; i++)
			if (req.parts[i].what != own)
				req.cause = req.parts[i].what;
	}
	ws_table_put(&rq->pids, c->pid, NULL);
	rq->incomplete += req.incomplete;
	store(rq, &req);
	keep_slow(rq, &req);
	if (rq->ops.on_request)
		rq->ops.on_request(rq->ops.ctx, &req);
}

/*
 * Connections quiet for ops.idle_after_ns: their answered requests end now, while the history
 * is kept. A request still unanswered stays: a slow answer (a disk read of seconds) is the
 * request a user most wants to see, and it ends at its send like any other.
 */
static void expire(struct ws_requests *rq, uint64_t now)
{
	if (now - rq->last_expiry < rq->ops.idle_after_ns / 4)
		return;
	rq->last_expiry = now;
	for (size_t i = 0; i < rq->conns.cap;) {
		struct conn *c = ws_table_at(&rq->conns, i);

		if (!c || now - c->last_io < rq->ops.idle_after_ns || (c->open && !c->sent)) {
			i++;
			continue;
		}
		if (c->open)
			request_end(rq, c, now);
		ws_table_del(&rq->conns, c); /* the slot now holds the next entry: look again */
	}
}

/* The connection @io is on; a socket reused for another connection starts afresh. */
static struct conn *conn_of(struct ws_requests *rq, const struct ws_sock_io *io)
{
	const char *local = io->local ? io->local : "", *peer = io->peer ? io->peer : "";
	bool added;
	struct conn *c = ws_table_put(&rq->conns, io->sock, &added);

	if (!c) {
		rq->err = -ENOMEM;
		return NULL;
	}
	/*
	 * The kernel reuses a closed socket's memory: another connection with the same names
	 * (a unix socket's path and its unnamed peer) is told by the process using it. The names
	 * are compared, not interned, on every call: interned once per connection.
	 */
	if (!added && (c->proto != io->proto || c->pid != io->pid || strcmp(c->local, local) ||
		       strcmp(c->peer, peer))) {
		if (c->open && c->sent)
			request_end(rq, c, io->ts);
		memset(c, 0, sizeof(*c));
		added = true;
	}
	if (added) {
		c->pid = io->pid;
		c->id = ++rq->conns_seen;
		c->proto = io->proto;
		c->local = requests_intern(rq, local);
		c->peer = requests_intern(rq, peer);
	}
	return c;
}

static void received(struct ws_requests *rq, struct conn *c, const struct ws_sock_io *io,
		     uint64_t calls)
{
	if (!io->bytes) { /* the peer ended the stream */
		if (c->open && c->sent)
			request_end(rq, c, io->ts);
		else if (c->open)
			rq->unanswered++;
		ws_table_del(&rq->conns, c);
		return;
	}
	if (c->open && c->sent)
		request_end(rq, c, io->ts);
	if (!c->open) {
		*c = (struct conn){ .id = c->id,
				    .proto = c->proto,
				    .local = c->local,
				    .peer = c->peer,
				    .open = true,
				    .tid = io->tid,
				    .pid = io->pid,
				    .start = io->ts,
				    .calls_at_start = calls };
	} else if (io->tid == c->tid) {
		c->own_calls++;
	}
	c->recvs++;
	c->bytes_in += io->bytes;
	c->last_io = io->ts;
}

void ws_requests_io(struct ws_requests *rq, const struct ws_sock_io *io)
{
	struct conn *c;
	uint64_t calls;

	if (io->role != WS_SOCK_SERVER) {
		if (io->role == WS_SOCK_CLIENT)
			rq->client_calls++;
		else
			rq->unknown_role++;
		return;
	}
	expire(rq, io->ts);
	calls = count_call(rq, io->tid);
	if (!(c = conn_of(rq, io)))
		return;
	if (io->dir == WS_SOCK_RECV) {
		received(rq, c, io, calls);
		return;
	}
	c->last_io = io->ts;
	if (!c->open)
		return; /* the server spoke first (a greeting): no request asked for it */
	c->sent = true;
	c->last_send = io->ts;
	c->sends++;
	c->bytes_out += io->bytes;
	if (io->tid != c->tid) {
		c->other_sender = io->tid;
	} else {
		c->own_calls++;
		c->calls_at_end = calls;
	}
}

void ws_requests_end(struct ws_requests *rq)
{
	for (size_t i = 0; i < rq->conns.cap; i++) {
		struct conn *c = ws_table_at(&rq->conns, i);

		if (c && c->open && c->sent)
			request_end(rq, c, UINT64_MAX);
		else if (c && c->open)
			rq->unanswered++;
	}
	ws_table_free(&rq->conns);
}
