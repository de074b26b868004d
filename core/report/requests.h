/* SPDX-License-Identifier: MIT */
/*
 * Requests, found from a server's socket calls alone (docs/DESIGN.md, "Requests"): on the
 * server's end of a connection, a request begins when a receive returns data after the last
 * send on it (or at its first receive) and ends with the last send before the next receive.
 * Each is explained as the critical path of the thread that received it over its duration:
 * its own CPU time, and every wait broken down along its wakers to the root causes, the parts
 * adding up to the request's latency. Waits outside requests are idle by construction.
 */
#ifndef WS_REQUESTS_H
#define WS_REQUESTS_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/chain.h"

/* One part of a request's time: what it went to (a critical path's words), and how long. */
struct ws_request_part {
	const char *what; /* interned: parts of the same name share the pointer */
	uint64_t ns;
};

/* A request, final. */
struct ws_request {
	/* its arrival (the wakeup of its thread blocked in the receive that returned it, else that
	 * receive), its last send */
	uint64_t start, end;
	uint64_t queued_ns; /* from its arrival to the receive returning it: waiting for a CPU */
	uint32_t tid, pid;  /* the thread that received it */
	const char *comm;
	uint32_t proto; /* WS_SOCK_TCP, _UDP, _UNIX */
	const char *local, *peer;
	uint64_t conn; /* the connection's number in this run, from 1 */
	uint32_t recvs, sends;
	uint64_t bytes_in, bytes_out;
	bool other_sender; /* another thread sent (part of) its answer */
	/* records were lost between its first receive and what ended it: it may be two merged,
	 * or cut short, and its parts may miss a wait */
	bool incomplete;
	uint64_t own_cpu_ns;
	/* socket calls its thread made for other connections meanwhile (an event loop serving
	 * several): its CPU time is then not its own alone, and its part says so */
	uint64_t other_calls;
	/* the largest part that is not its own thread's CPU work, when that is less than half
	 * the request; NULL: the request was its own work */
	const char *cause;
	struct ws_request_part *parts; /* longest first */
	int nparts;
};

struct ws_requests;

struct ws_requests_ops {
	/* each request as it becomes final (@rq valid during the call); may be NULL */
	void (*on_request)(void *ctx, const struct ws_request *rq);
	/* a chain as text (an example of a reason); may be NULL */
	int (*render)(void *ctx, const struct ws_chain *c, char **text);
	void *ctx;
	uint64_t walk_min_ns; /* waits at least this long are walked to their roots */
	/* a connection quiet this long has its request ended (before the graph drops the
	 * history it needs) */
	uint64_t idle_after_ns;
	int top;		 /* the slowest requests kept whole */
	uint64_t min_latency_ns; /* shorter requests are left out (0: none) */
	uint32_t port;		 /* only requests on this local port (0: any) */
};

/* Requests of the threads of graph @g. NULL without memory. */
struct ws_requests *ws_requests_new(struct ws_graph *g, const struct ws_requests_ops *ops);
void ws_requests_free(struct ws_requests *rq);
/* A traced thread's socket call, in time order. */
void ws_requests_io(struct ws_requests *rq, const struct ws_sock_io *io);
/* The stream has ended: every request with an answer ends at its last send. Before the graph's
 * flush, which drops the timelines. */
void ws_requests_end(struct ws_requests *rq);

/* What the requests came to, for the report's summary. */
struct ws_request_reason {
	const char *what;
	uint64_t ns, slowest_ns; /* over every request; over the slowest tenth */
	uint64_t requests;	 /* requests with a part of that name */
	char *example;		 /* the chain of its longest single piece, as text (may be NULL) */
	uint64_t example_ns;
};

struct ws_requests_summary {
	uint64_t count, connections, processes;
	uint64_t p50, p90, p99, max;
	uint64_t total_ns, slowest_total_ns; /* latency of all requests; of the slowest tenth */
	uint64_t incomplete;		     /* requests marked so */
	uint64_t unanswered;		     /* receives the connection ended without an answer */
	uint64_t client_calls;		     /* calls on the client's end of a connection */
	uint64_t unknown_role;		     /* calls on sockets whose end was not told */
	uint64_t filtered;		     /* requests left out (min_latency_ns, port) */
	struct ws_request_reason *reasons;   /* most time first */
	size_t nreasons;
	const struct ws_request *slowest; /* longest first */
	size_t nslowest;
};

/* Fill @s (valid until the next call or the free); @top: the slowest requests kept. */
int ws_requests_summary(struct ws_requests *rq, struct ws_requests_summary *s);

#endif
