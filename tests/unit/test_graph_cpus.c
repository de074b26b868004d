// SPDX-License-Identifier: MIT
/*
 * Who held a CPU over a window (ws_graph_cpu_users): a chain's walk asks about later and later
 * windows, and the answer must not depend on the order of the questions.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "graph_infer.h"
#include "engine/graph.h"

#define MS 1000000ULL
#define RUNS 1000
#define RUN_MS 10

static struct ws_graph *g;

/* Run i holds CPU 0 over [i, i + 1) * RUN_MS, by thread 1 + i % 3 (untraced). */
static void fill(void)
{
	struct ws_graph_ops ops = { .infer = graph_infer_waker,
				    .pid_traced = graph_test_pid_traced };

	g = ws_graph_new(&ops, 1 * MS, 3600000 * MS, 0);
	cr_assert_not_null(g);
	for (uint32_t i = 0; i < RUNS; i++) {
		struct ws_switch s = { .sz = sizeof(s),
				       .ts = i * RUN_MS * MS,
				       .cpu = 0,
				       .prev_tid = i ? 1 + (i - 1) % 3 : 0,
				       .prev_pid = 1,
				       .next_tid = 1 + i % 3,
				       .next_pid = 1,
				       .next_comm = "t" };

		ws_graph_switch(g, &s);
	}
}

/* What each of threads 1..3 held of [from, to), worked out from fill()'s pattern. */
static void expect(uint64_t from, uint64_t to, uint64_t ns[4])
{
	memset(ns, 0, 4 * sizeof(ns[0]));
	for (uint64_t i = 0; i < RUNS; i++) {
		uint64_t s = i * RUN_MS * MS, e = i + 1 < RUNS ? s + RUN_MS * MS : to;

		s = s < from ? from : s;
		e = e > to ? to : e;
		if (e > s)
			ns[1 + i % 3] += e - s;
	}
}

static void check(uint64_t from, uint64_t to)
{
	struct ws_cpu_user u[8];
	uint64_t want[4], got[4] = { 0 };
	int n = ws_graph_cpu_users(g, 0, from, to, u, 8);

	expect(from, to, want);
	for (int i = 0; i < n; i++) {
		cr_assert(u[i].tid >= 1 && u[i].tid <= 3);
		got[u[i].tid] = u[i].ns;
	}
	for (int t = 1; t <= 3; t++)
		cr_assert_eq(got[t], want[t], "[%lu, %lu) tid %d: %lu, not %lu",
			     (unsigned long)from, (unsigned long)to, t, (unsigned long)got[t],
			     (unsigned long)want[t]);
}

Test(graph_cpus, users_whatever_the_order_of_the_windows)
{
	fill();
	/* forward a little at a time, as a chain's walk asks */
	for (uint64_t t = 0; t < RUNS * RUN_MS * MS; t += 3 * MS + 7)
		check(t, t + 4 * MS);
	/* far forward, back to the start, to a run's very edge, past the last run */
	check(900 * RUN_MS * MS, 950 * RUN_MS * MS);
	check(0, 25 * MS);
	check(500 * RUN_MS * MS, 500 * RUN_MS * MS + 1);
	check(499 * RUN_MS * MS + 1, 500 * RUN_MS * MS);
	check(20 * RUN_MS * MS, 21 * RUN_MS * MS);
	check(RUNS * RUN_MS * MS + 5 * MS, RUNS * RUN_MS * MS + 9 * MS);
	ws_graph_free(g);
}

/*
 * CPU 1: runs 0..99 by 100 different threads, then the idle task every other run. Which
 * holders ws_graph_cpu_users() counts (the first WS_CPU_HOLDERS) decides whether the idle time
 * is counted at all; ws_graph_cpu_idle() must give its answer however many runs a window holds.
 */
static void fill_idle(void)
{
	struct ws_graph_ops ops = { .infer = graph_infer_waker,
				    .pid_traced = graph_test_pid_traced };

	g = ws_graph_new(&ops, 1 * MS, 3600000 * MS, 0);
	cr_assert_not_null(g);
	for (uint32_t i = 0, prev = 0; i < 200; i++) {
		uint32_t tid = i < 100 ? 1000 + i : i % 2 ? 0 : 2000 + i;
		struct ws_switch s = { .sz = sizeof(s),
				       .ts = (uint64_t)i * RUN_MS * MS,
				       .cpu = 1,
				       .prev_tid = prev,
				       .prev_pid = 1,
				       .next_tid = tid,
				       .next_pid = 1,
				       .next_comm = "t" };

		ws_graph_switch(g, &s);
		prev = tid;
	}
}

static void check_idle(uint64_t from, uint64_t to)
{
	struct ws_cpu_user u[WS_CPU_HOLDERS];
	int n = ws_graph_cpu_users(g, 1, from, to, u, WS_CPU_HOLDERS);
	uint64_t want = 0;

	for (int i = 0; i < n; i++)
		if (u[i].tid == 0)
			want += u[i].ns;
	cr_assert_eq(ws_graph_cpu_idle(g, 1, from, to), want, "[%lu, %lu)", (unsigned long)from,
		     (unsigned long)to);
}

Test(graph_cpus, idle_time_as_the_holders_count_it)
{
	uint64_t widths[] = { 1,
			      3 * MS,
			      15 * MS,
			      40 * RUN_MS * MS,
			      63 * RUN_MS * MS,
			      64 * RUN_MS * MS,
			      65 * RUN_MS * MS,
			      90 * RUN_MS * MS,
			      150 * RUN_MS * MS };

	fill_idle();
	for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); w++)
		for (uint64_t t = 0; t < 200 * RUN_MS * MS; t += 7 * MS + 3)
			check_idle(t, t + widths[w]);
	/* some idle time counted, and some windows whose idle time is not (past 64 holders) */
	cr_assert_gt(ws_graph_cpu_idle(g, 1, 100 * RUN_MS * MS, 110 * RUN_MS * MS), 0);
	cr_assert_eq(ws_graph_cpu_idle(g, 1, 30 * RUN_MS * MS, 110 * RUN_MS * MS), 0);
	cr_assert_eq(ws_graph_cpu_idle(g, 5, 0, 10 * MS), 0, "a CPU never seen");
	ws_graph_free(g);
}
