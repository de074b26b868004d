// SPDX-License-Identifier: MIT
/*
 * Tracing ends with a thread still blocked (issue 34, item 3): its timeline ends in that wait,
 * flagged open, and the critical path names it, its share counted. The switch-out into the wait
 * may never have been written (a source that summarises short periods writes it only with the
 * record that ends the wait): /proc's bound puts it in, never over the run the records show.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_infer.h"
#include "engine/graph.h"
#include "report/critpath.h"

#define MS GRAPH_TEST_MS

static struct ws_graph *g;
static struct ws_critpath *cp;
static struct ws_ival ivs[16];
static char claims[16][16]; /* each interval's claim kind ("" : none) */
static int nivs;

static void on_ival(void *ctx, const struct ws_thread *t, const struct ws_ival *iv,
		    const struct ws_claim *claim)
{
	(void)ctx;
	if (t->tid != 7)
		return;
	cr_assert_lt(nivs, 16);
	snprintf(claims[nivs], sizeof(claims[0]), "%s", claim ? claim->kind : "");
	ivs[nivs++] = *iv;
	ws_critpath_ival(cp, t, iv, claim);
}

static void begin(void)
{
	struct ws_graph_ops ops = { .infer = graph_infer_waker,
				    .pid_traced = graph_test_pid_traced,
				    .on_ival = on_ival };

	nivs = 0;
	g = ws_graph_new(&ops, 10 * MS, 10000 * MS, 0);
	cp = ws_critpath_new(7);
	cr_assert(g && cp);
	graph_test_switch(g, 1, 0, 0, 0, 7); /* 7 runs from 1 ms */
}

static void end(void)
{
	ws_critpath_free(cp);
	ws_graph_free(g);
}

static struct ws_claim futex_claim(void)
{
	struct ws_claim c;

	memset(&c, 0, sizeof(c));
	c.sz = sizeof(c);
	c.strength = WS_CLAIM_SPECIFIC;
	snprintf(c.kind, sizeof(c.kind), "futex");
	return c;
}

static int by_start(const void *a, const void *b)
{
	const struct ws_ival *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The critical path in JSON, into @buf. */
static void path_json(char *buf, size_t len)
{
	FILE *f = fmemopen(buf, len, "w");

	cr_assert_not_null(f);
	ws_critpath_json(cp, f);
	fclose(f);
}

Test(open_end, a_switch_out_never_written_is_put_in_from_the_proc_bound)
{
	struct ws_claim c = futex_claim();
	char json[2048];

	begin();
	cr_assert(ws_graph_open_at_end(g, 7, 30 * MS, 100 * MS, 1, &c));
	ws_critpath_open(cp, "futex 0x1000 (FUTEX_WAIT_BITSET)");
	ws_graph_flush(g);
	cr_assert_eq(nivs, 2);
	qsort(ivs, nivs, sizeof(ivs[0]), by_start);
	cr_expect_eq(ivs[0].state, WS_STATE_RUNNING);
	cr_expect_eq(ivs[0].end, 30 * MS);
	cr_expect_eq(ivs[1].state, WS_STATE_BLOCKED);
	cr_expect_eq(ivs[1].start, 30 * MS);
	cr_expect_eq(ivs[1].end, 100 * MS, "the stream's end moved to the snapshot");
	cr_expect(ivs[1].flags & WS_IVAL_OPEN);
	cr_expect(!(ivs[0].flags & WS_IVAL_OPEN), "only the stretch still going on is open");
	path_json(json, sizeof(json));
	cr_expect(strstr(json, "\"wall_ns\":99000000,\"accounted_ns\":99000000"), "%s", json);
	cr_expect(strstr(json, "{\"what\":\"still blocked when tracing ended, on futex 0x1000 "
			       "(FUTEX_WAIT_BITSET)\",\"ns\":70000000,\"share\":0.7071,"
			       "\"open\":true}"),
		  "%s", json);
	cr_expect(strstr(json, "{\"what\":\"CPU work in t\",\"ns\":29000000,\"share\":0.2929,"
			       "\"open\":false}"),
		  "%s", json);
	end();
}

Test(open_end, never_over_the_run_the_records_show)
{
	begin();
	graph_test_switch(g, 40, 0, 7, 1, 0); /* out at 40 ms ... */
	graph_test_wake(g, 45, 1, 8, 7, 0);
	graph_test_switch(g, 50, 0, 0, 0, 7); /* ... and back at 50 */
	/* /proc's bound is older than that run: the wait began with the run's end, not earlier */
	cr_assert(ws_graph_open_at_end(g, 7, 30 * MS, 100 * MS, 1, NULL));
	ws_graph_flush(g);
	qsort(ivs, nivs, sizeof(ivs[0]), by_start);
	cr_expect_eq(ivs[nivs - 1].state, WS_STATE_BLOCKED);
	cr_expect_eq(ivs[nivs - 1].start, 50 * MS);
	cr_expect(ivs[nivs - 1].flags & WS_IVAL_OPEN);
	end();
}

Test(open_end, a_written_switch_out_is_kept_and_the_wait_named)
{
	struct ws_claim c = futex_claim();
	char json[2048];

	begin();
	graph_test_switch(g, 20, 0, 7, 1, 0);
	cr_assert(ws_graph_open_at_end(g, 7, 60 * MS, 100 * MS, 1, &c));
	ws_graph_flush(g);
	qsort(ivs, nivs, sizeof(ivs[0]), by_start);
	cr_assert_eq(nivs, 2);
	cr_expect_eq(ivs[1].start, 20 * MS, "the records' switch-out, not /proc's bound");
	cr_expect_eq(ivs[1].end, 100 * MS);
	cr_expect(ivs[1].flags & WS_IVAL_OPEN);
	cr_expect_str_eq(claims[1], "futex");
	/* nothing said on what it waits: said so, never guessed */
	path_json(json, sizeof(json));
	cr_expect(strstr(json, "\"what\":\"still blocked when tracing ended: an open wait of "
			       "unknown cause\",\"ns\":80000000"),
		  "%s", json);
	end();
}

Test(open_end, without_a_bound_or_once_woken_the_records_stand)
{
	begin();
	/* no evidence of when it left the CPU: its run stays as the records show it */
	cr_expect(!ws_graph_open_at_end(g, 7, 0, 100 * MS, 1, NULL));
	graph_test_switch(g, 20, 0, 7, 1, 0);
	graph_test_wake(g, 30, 1, 8, 7, 0);
	/* woken: whatever /proc said, the records know better */
	cr_expect(!ws_graph_open_at_end(g, 7, 25 * MS, 100 * MS, 1, NULL));
	cr_expect(!ws_graph_open_at_end(g, 99, 25 * MS, 100 * MS, 1, NULL), "never seen");
	ws_graph_flush(g);
	qsort(ivs, nivs, sizeof(ivs[0]), by_start);
	cr_expect_eq(ivs[nivs - 1].state, WS_STATE_RUNNABLE);
	cr_expect_eq(ivs[nivs - 1].end, 30 * MS, "the stream still ends at its last record");
	end();
}
