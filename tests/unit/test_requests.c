// SPDX-License-Identifier: MIT
/*
 * Requests from socket calls: the rule that cuts a connection's calls into requests, and each
 * request explained from its thread's timeline, the parts adding up to its latency, a wait
 * after its last send (the server idle until the next request) never counted in it.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_infer.h"
#include "base/clock.h"
#include "base/util.h"
#include "report/report.h"
#include "report/report_impl.h"
#include "report/requests.h"
#include "report/requests_impl.h"

#define MS GRAPH_TEST_MS
#define PID GRAPH_TEST_PID
#define SOCK 0xffff888012345678ull

static struct ws_graph *g;
static struct ws_requests *rq;
static struct ws_request got[8];
static struct ws_request_part got_parts[8][16];
static int ngot;
static bool totals_only; /* many requests: only the totals are looked at */

static void on_request(void *ctx, const struct ws_request *q)
{
	(void)ctx;
	if (totals_only)
		return;
	cr_assert_lt(ngot, 8);
	cr_assert_leq(q->nparts, 16);
	got[ngot] = *q;
	memcpy(got_parts[ngot], q->parts, sizeof(*q->parts) * q->nparts);
	got[ngot].parts = got_parts[ngot];
	ngot++;
}

static void begin(void)
{
	struct ws_graph_ops gops = { .infer = graph_infer_waker,
				     .pid_traced = graph_test_pid_traced };
	struct ws_requests_ops ops = { .on_request = on_request,
				       .walk_min_ns = MS / 64,
				       .idle_after_ns = 2000 * MS,
				       .top = 3 };

	ngot = 0;
	totals_only = false;
	g = ws_graph_new(&gops, 1 * MS, 10000 * MS, 0);
	cr_assert_not_null(g);
	rq = ws_requests_new(g, &ops);
	cr_assert_not_null(rq);
}

static void end(void)
{
	ws_requests_free(rq);
	ws_graph_free(g);
}

/* Thread 7 (srv) on @sock: a receive of @bytes (0: the peer's end) or a send, at @ns. */
static void io_ns(uint64_t ns, uint64_t sock, uint32_t dir, uint64_t bytes, uint32_t role)
{
	struct ws_sock_io io = { .sz = sizeof(io),
				 .ts = ns,
				 .sock = sock,
				 .tid = 7,
				 .pid = PID,
				 .bytes = bytes,
				 .dir = dir,
				 .proto = WS_SOCK_TCP,
				 .role = role,
				 .local = "127.0.0.1:5432",
				 .peer = "127.0.0.1:40000" };

	ws_requests_io(rq, &io);
}

static void io_at(uint64_t ms, uint64_t sock, uint32_t dir, uint64_t bytes, uint32_t role)
{
	io_ns(ms * MS, sock, dir, bytes, role);
}

static void io(uint64_t ms, uint32_t dir, uint64_t bytes)
{
	io_at(ms, SOCK, dir, bytes, WS_SOCK_SERVER);
}

static uint64_t parts_sum(const struct ws_request *q)
{
	uint64_t sum = 0;

	for (int i = 0; i < q->nparts; i++)
		sum += q->parts[i].ns;
	return sum;
}

static const struct ws_request_part *part(const struct ws_request *q, const char *what)
{
	for (int i = 0; i < q->nparts; i++)
		if (strstr(q->parts[i].what, what))
			return &q->parts[i];
	return NULL;
}

TestSuite(requests, .init = begin, .fini = end);

Test(requests, a_request_is_its_thread_s_time_from_first_receive_to_last_send)
{
	graph_test_switch_named(g, 1, 0, 0, 0, 7, "srv");
	graph_test_switch_named(g, 1, 1, 0, 0, 8, "holder");
	io(10, WS_SOCK_RECV, 100);			   /* request A begins */
	graph_test_switch(g, 12, 0, 7, 1, 0);		   /* srv waits for the holder */
	graph_test_wake(g, 30, 1, 8, 7, 0);		   /* which wakes it */
	graph_test_switch_named(g, 31, 0, 0, 0, 7, "srv"); /* 1 ms for a CPU */
	graph_test_switch(g, 32, 1, 8, 1, 0);
	io(33, WS_SOCK_SEND, 10);	      /* A's answer */
	graph_test_switch(g, 34, 0, 7, 1, 0); /* idle until the next request */
	graph_test_switch_named(g, 78, 1, 0, 0, 8, "holder");
	graph_test_wake(g, 79, 1, 8, 7, 0);
	graph_test_switch_named(g, 80, 0, 0, 0, 7, "srv");
	io(81, WS_SOCK_RECV, 100); /* ends A at 33, begins B */
	cr_assert_eq(ngot, 1);
	io(82, WS_SOCK_SEND, 10);
	ws_requests_end(rq);
	cr_assert_eq(ngot, 2);

	const struct ws_request *a = &got[0], *b = &got[1];

	cr_expect_eq(a->start, 10 * MS);
	cr_expect_eq(a->end, 33 * MS);
	cr_expect_eq(parts_sum(a), 23 * MS, "the parts add up to the latency: %lu",
		     (unsigned long)parts_sum(a));
	cr_expect_eq(a->own_cpu_ns, 4 * MS);
	cr_assert_not_null(part(a, "CPU work in srv"));
	cr_expect_eq(part(a, "CPU work in srv")->ns, 4 * MS);
	cr_assert_not_null(part(a, "holder"), "the wait walked to its waker: %s", a->parts[0].what);
	cr_expect_eq(part(a, "holder")->ns, 18 * MS);
	cr_assert_not_null(a->cause);
	cr_expect(strstr(a->cause, "holder") != NULL, "%s", a->cause);
	cr_expect_eq(a->recvs, 1);
	cr_expect_eq(a->sends, 1);
	cr_expect_eq(a->bytes_in, 100);
	cr_expect_eq(a->bytes_out, 10);

	/* B: its own work alone; the 46 ms idle wait before it belongs to no request */
	cr_expect_eq(b->start, 81 * MS);
	cr_expect_eq(b->end, 82 * MS);
	cr_expect_eq(parts_sum(b), 1 * MS);
	cr_expect_null(b->cause);
	cr_expect_eq(b->conn, a->conn);

	struct ws_requests_summary s;

	cr_assert_eq(ws_requests_summary(rq, &s), 0);
	cr_expect_eq(s.count, 2);
	cr_expect_eq(s.connections, 1);
	cr_expect_eq(s.processes, 1);
	cr_expect_eq(s.max, 23 * MS);
	cr_expect_eq(s.p50, 1 * MS);
	cr_assert_geq(s.nreasons, 2);
	cr_expect(strstr(s.reasons[0].what, "holder") != NULL, "ranked first: %s",
		  s.reasons[0].what);
	cr_expect_eq(s.reasons[0].slowest_ns, 18 * MS, "the slowest tenth is request A");
	cr_expect_eq(s.nslowest, 2);
	cr_expect_eq(s.slowest[0].end - s.slowest[0].start, 23 * MS);
}

Test(requests, the_rule_over_calls)
{
	graph_test_switch_named(g, 1, 0, 0, 0, 7, "srv");
	io(2, WS_SOCK_SEND, 5);	 /* a greeting: no request asked for it */
	io(3, WS_SOCK_RECV, 10); /* a request in two reads */
	io(4, WS_SOCK_RECV, 10);
	io(5, WS_SOCK_SEND, 5); /* answered in two writes */
	io(6, WS_SOCK_SEND, 5);
	io_at(7, SOCK + 64, WS_SOCK_RECV, 9, WS_SOCK_CLIENT); /* the client's end: not ours */
	io_at(7, SOCK + 128, WS_SOCK_RECV, 9, WS_SOCK_ROLE_UNKNOWN); /* a socketpair */
	io(8, WS_SOCK_RECV, 0); /* the peer's end: the request ends at its last send */
	cr_assert_eq(ngot, 1);
	cr_expect_eq(got[0].start, 3 * MS);
	cr_expect_eq(got[0].end, 6 * MS);
	cr_expect_eq(got[0].recvs, 2);
	cr_expect_eq(got[0].sends, 2);
	cr_expect_eq(parts_sum(&got[0]), 3 * MS);
	io(9, WS_SOCK_RECV, 10); /* the socket again, after its end: a new connection */
	ws_requests_end(rq);	 /* unanswered: not a request */
	cr_expect_eq(ngot, 1);

	struct ws_requests_summary s;

	cr_assert_eq(ws_requests_summary(rq, &s), 0);
	cr_expect_eq(s.count, 1);
	cr_expect_eq(s.connections, 2);
	cr_expect_eq(s.unanswered, 1);
	cr_expect_eq(s.client_calls, 1);
	cr_expect_eq(s.unknown_role, 1);
}

Test(requests, records_lost_inside_a_request_mark_it)
{
	graph_test_switch_named(g, 1, 0, 0, 0, 7, "srv");
	io(3, WS_SOCK_RECV, 10);
	ws_graph_loss(g, 4 * MS, 5 * MS);
	io(6, WS_SOCK_SEND, 5);
	io(20, WS_SOCK_RECV, 10);
	io(21, WS_SOCK_SEND, 5);
	ws_requests_end(rq);
	cr_assert_eq(ngot, 2);
	cr_expect(got[0].incomplete);
	cr_expect(!got[1].incomplete);
}

Test(requests, an_event_loop_serving_two_connections_says_its_cpu_is_shared)
{
	graph_test_switch_named(g, 1, 0, 0, 0, 7, "srv");
	io_at(2, SOCK, WS_SOCK_RECV, 10, WS_SOCK_SERVER);      /* A begins */
	io_at(3, SOCK + 64, WS_SOCK_RECV, 10, WS_SOCK_SERVER); /* B begins, same thread */
	io_at(4, SOCK + 64, WS_SOCK_SEND, 5, WS_SOCK_SERVER);
	io_at(5, SOCK, WS_SOCK_SEND, 5, WS_SOCK_SERVER);  /* A answered after B */
	io_at(9, SOCK, WS_SOCK_RECV, 10, WS_SOCK_SERVER); /* ends A */
	io_at(10, SOCK, WS_SOCK_SEND, 5, WS_SOCK_SERVER);
	ws_requests_end(rq);
	cr_assert_eq(ngot, 3);
	/* A (2..5) saw B's two calls; B (3..4) saw none of A's; the last one alone */
	for (int i = 0; i < ngot; i++) {
		if (got[i].start == 2 * MS) {
			cr_expect_eq(got[i].other_calls, 2);
			cr_expect_not_null(part(&got[i], "also serving other connections"));
		} else {
			cr_expect_eq(got[i].other_calls, 0, "request at %lu",
				     (unsigned long)got[i].start);
			cr_expect_null(part(&got[i], "also serving"));
		}
	}
}

Test(requests, a_socket_reused_by_another_process_is_another_connection)
{
	struct ws_sock_io io = { .sz = sizeof(io),
				 .sock = SOCK,
				 .tid = 7,
				 .pid = PID,
				 .bytes = 10,
				 .dir = WS_SOCK_RECV,
				 .proto = WS_SOCK_UNIX,
				 .role = WS_SOCK_SERVER,
				 .local = "/run/db.sock",
				 .peer = "" };

	graph_test_switch_named(g, 1, 0, 0, 0, 7, "srv");
	io.ts = 2 * MS; /* a goodbye read, never answered: its process exits */
	ws_requests_io(rq, &io);
	io.ts = 5 * MS; /* the same socket memory, the same names, another server process */
	io.pid = PID + 1;
	io.tid = 9;
	ws_requests_io(rq, &io);
	io.ts = 6 * MS;
	io.dir = WS_SOCK_SEND;
	ws_requests_io(rq, &io);
	ws_requests_end(rq);
	cr_assert_eq(ngot, 1);
	cr_expect_eq(got[0].start, 5 * MS, "not merged with the other process's read");
	cr_expect_eq(got[0].pid, PID + 1);

	struct ws_requests_summary s;

	cr_assert_eq(ws_requests_summary(rq, &s), 0);
	cr_expect_eq(s.connections, 2);
}

Test(requests, a_request_that_woke_its_thread_in_the_receive_begins_at_that_wakeup)
{
	struct ws_wake w = { .sz = sizeof(w),
			     .ts = 10 * MS,
			     .cpu = 1,
			     .waker_tid = 8,
			     .waker_pid = PID,
			     .waker_comm = "client",
			     .wakee_tid = 7,
			     .wakee_pid = PID,
			     /* blocked in read(): the data it returns is what woke it */
			     .wakee_sys = { .nr = 0, .arch = WS_ARCH_X86_64, .args = { 5 } } };

	graph_test_switch_named(g, 1, 0, 0, 0, 7, "srv");
	graph_test_switch_named(g, 1, 1, 0, 0, 8, "client");
	graph_test_switch(g, 5, 0, 7, 1, 0); /* srv blocks in read */
	ws_graph_wake(g, &w);
	graph_test_switch_named(g, 12, 0, 0, 0, 7, "srv"); /* 2 ms before it gets a CPU */
	io(12, WS_SOCK_RECV, 10);
	io(13, WS_SOCK_SEND, 5);
	io(20, WS_SOCK_RECV, 10);
	cr_assert_eq(ngot, 1);
	cr_expect_eq(got[0].start, 10 * MS, "from the data's arrival, not the receive's return");
	cr_expect_eq(got[0].queued_ns, 2 * MS);
	cr_expect_eq(parts_sum(&got[0]), 3 * MS);
	cr_expect_eq(got[0].own_cpu_ns, 1 * MS);
}

/*
 * A connection quiet past idle_after_ns: answered, its request ends then (before the history
 * it needs is dropped); unanswered, it is a slow request still going, and it must stay (this
 * one lost its 7.9 s disk-bound request on a loaded machine and the send that ended it read
 * as a greeting).
 */
Test(requests, a_quiet_connection_ends_its_answered_request_and_keeps_a_slow_one)
{
	graph_test_switch_named(g, 1, 0, 0, 0, 7, "srv");
	io_at(10, SOCK, WS_SOCK_RECV, 10, WS_SOCK_SERVER);	/* A: slow, answered at 5000 ms */
	io_at(20, SOCK + 64, WS_SOCK_RECV, 10, WS_SOCK_SERVER); /* B: answered at once */
	io_at(30, SOCK + 64, WS_SOCK_SEND, 5, WS_SOCK_SERVER);
	/* another connection's call past the idle time: B ends now, A is still going */
	io_at(3000, SOCK + 128, WS_SOCK_RECV, 10, WS_SOCK_SERVER);
	cr_assert_eq(ngot, 1);
	cr_expect_eq(got[0].start, 20 * MS);
	cr_expect_eq(got[0].end, 30 * MS);
	io_at(5000, SOCK, WS_SOCK_SEND, 5, WS_SOCK_SERVER);
	ws_requests_end(rq);
	cr_assert_eq(ngot, 2);
	cr_expect_eq(got[1].start, 10 * MS, "the slow request from its receive");
	cr_expect_eq(got[1].end, 5000 * MS, "to its answer");
	cr_expect_eq(parts_sum(&got[1]), 4990 * MS);

	struct ws_requests_summary s;

	cr_assert_eq(ws_requests_summary(rq, &s), 0);
	cr_expect_eq(s.unanswered, 1, "the third connection's receive only");
}

/*
 * A request's JSON line is built by hand (no printf): it must be the line printf and
 * ws_json_str write, for plain names and hostile ones (quotes, controls, UTF-8, bad bytes), and
 * for a line longer than the writer's buffer.
 */
Test(requests, json_line_is_the_formatted_one)
{
	static char long_what[6000];
	struct ws_request_part parts[3] = {
		{ .what = "block I/O on vda", .ns = 68000000 },
		{ .what = "a \"quoted\"\tname \xc3\xa9 \x01 \xff end", .ns = 7 },
		{ .what = long_what, .ns = UINT64_MAX },
	};
	struct ws_request q = { .start = 5000000123ULL,
				.end = 5068000124ULL,
				.queued_ns = 3,
				.tid = 7,
				.pid = 4294967295u,
				.comm = "srv\"x",
				.proto = WS_SOCK_UNIX,
				.local = "/run/s.sock",
				.peer = "",
				.conn = 12,
				.recvs = 1,
				.sends = 2,
				.bytes_in = 100,
				.bytes_out = 0,
				.other_sender = true,
				.own_cpu_ns = 1,
				.other_calls = 0,
				.cause = NULL,
				.parts = parts,
				.nparts = 3 };
	struct ws_clock clock = { .mono_ns = 0, .wall_ns = 1796049127000000000ULL };
	char *got_text = NULL, *want_text = NULL, ts[40];
	size_t got_len = 0, want_len = 0;
	FILE *gf = open_memstream(&got_text, &got_len), *wf = open_memstream(&want_text, &want_len);
	/* the writer reads only the report's options: no analysis behind it */
	struct ws_report rep = { .o = { .format = WS_FORMAT_JSON, .out = gf, .clock = &clock } };
	struct ws_report *r = &rep;

	memset(long_what, 'w', sizeof(long_what) - 1);
	for (int pass = 0; pass < 2; pass++) {
		report_request_json(r, &q);
		/* the same line the printf way */
		ws_clock_iso(ws_clock_wall(&clock, q.start), ts, sizeof(ts));
		fprintf(wf,
			"{\"type\":\"request\",\"ts\":\"%s\",\"tid\":%u,\"pid\":%u,\"comm\":", ts,
			q.tid, q.pid);
		ws_json_str(wf, q.comm);
		fprintf(wf, ",\"proto\":\"unix\",\"local\":");
		ws_json_str(wf, q.local);
		fprintf(wf, ",\"peer\":");
		ws_json_str(wf, q.peer);
		fprintf(wf,
			",\"conn\":%" PRIu64 ",\"start_ns\":%" PRIu64 ",\"duration_ns\":%" PRIu64
			",\"recvs\":%u,\"sends\":%u,\"bytes_in\":%" PRIu64 ",\"bytes_out\":%" PRIu64
			",\"other_sender\":%s,\"incomplete\":%s,\"own_cpu_ns\":%" PRIu64
			",\"other_calls\":%" PRIu64 ",\"queued_ns\":%" PRIu64 ",\"parts\":[",
			q.conn, q.start, q.end - q.start, q.recvs, q.sends, q.bytes_in, q.bytes_out,
			q.other_sender ? "true" : "false", q.incomplete ? "true" : "false",
			q.own_cpu_ns, q.other_calls, q.queued_ns);
		for (int i = 0; i < q.nparts; i++) {
			fprintf(wf, "%s{\"what\":", i ? "," : "");
			ws_json_str(wf, q.parts[i].what);
			fprintf(wf, ",\"ns\":%" PRIu64 "}", q.parts[i].ns);
		}
		fprintf(wf, "],\"cause\":");
		if (q.cause)
			ws_json_str(wf, q.cause);
		else
			fputs("null", wf);
		fputs("}\n", wf);
		/* then with a cause, and the other flags */
		q.cause = parts[1].what;
		q.other_sender = false;
		q.incomplete = true;
	}
	fclose(gf);
	fclose(wf);
	cr_assert_eq(got_len, want_len);
	cr_assert_str_eq(got_text, want_text);
	free(got_text);
	free(want_text);
}

/*
 * Past REQUESTS_EXACT requests the totals stop growing (a histogram): the count, total and max
 * stay exact, the percentiles within 1/64 of the exact nearest rank, the slowest tenth within
 * its edge bucket. 100,000 requests of i * 1000 + 7 ns (i = 1..100,000), one connection.
 */
Test(requests, past_the_exact_ones_the_totals_are_a_histogram)
{
	const uint64_t n = 100000;
	uint64_t t = 1000 * MS, total = 0, top = 0, t50 = 50000 * 1000ULL + 7,
		 t90 = 90000 * 1000ULL + 7, t99 = 99000 * 1000ULL + 7;
	struct ws_requests_summary s;

	totals_only = true;
	for (uint64_t i = 1; i <= n; i++) {
		uint64_t dur = i * 1000 + 7;

		io_ns(t, SOCK, WS_SOCK_RECV, 10, WS_SOCK_SERVER);
		io_ns(t + dur, SOCK, WS_SOCK_SEND, 10, WS_SOCK_SERVER);
		t += dur + 1000;
		total += dur;
		if (i > n - n / 10)
			top += dur;
	}
	ws_requests_end(rq);
	cr_expect(rq->hist && rq->nreqs == 0 && !rq->reqs,
		  "the requests are no longer kept one by one");
	cr_assert_eq(ws_requests_summary(rq, &s), 0);
	cr_expect_eq(s.count, n);
	cr_expect_eq(s.total_ns, total);
	cr_expect_eq(s.max, n * 1000 + 7);
	cr_expect_leq(s.p50 > t50 ? s.p50 - t50 : t50 - s.p50, t50 / 64, "p50 %lu",
		      (unsigned long)s.p50);
	cr_expect_leq(s.p90 > t90 ? s.p90 - t90 : t90 - s.p90, t90 / 64, "p90 %lu",
		      (unsigned long)s.p90);
	cr_expect_leq(s.p99 > t99 ? s.p99 - t99 : t99 - s.p99, t99 / 64, "p99 %lu",
		      (unsigned long)s.p99);
	/* the edge bucket's share of its requests: within its width */
	cr_expect_leq(s.slowest_total_ns > top ? s.slowest_total_ns - top
					       : top - s.slowest_total_ns,
		      top / 64, "slowest %lu, true %lu", (unsigned long)s.slowest_total_ns,
		      (unsigned long)top);
	/* no timeline: each request one part, its whole latency, so the shares are whole */
	cr_assert_eq(s.nreasons, 1);
	cr_expect_eq(s.reasons[0].ns, total);
	cr_expect_leq(s.reasons[0].slowest_ns > s.slowest_total_ns
			      ? s.reasons[0].slowest_ns - s.slowest_total_ns
			      : s.slowest_total_ns - s.reasons[0].slowest_ns,
		      1, "the reason's slowest %lu", (unsigned long)s.reasons[0].slowest_ns);
	cr_expect_eq(s.reasons[0].requests, n);
}
