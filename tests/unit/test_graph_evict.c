// SPDX-License-Identifier: MIT
/*
 * What the history keeps when a source writes switch-outs late (it summarises short periods,
 * [core] resolution): a thread the graph still sees running may already be in a wait whose
 * switch-out arrives only with the wakeup that ends it. The history that wait needs (its
 * waker's timeline) must still be there then.
 */
#include <criterion/criterion.h>

#include "graph_infer.h"
#include "engine/graph.h"

#define PID GRAPH_TEST_PID
#define MS 1000000ULL

static struct ws_graph *g;

static void on_wait(void *ctx, const struct ws_wait_done *d)
{
	(void)ctx;
	(void)d;
}

static void sw(uint64_t ms, uint16_t cpu, uint32_t prev, uint32_t state, uint32_t next)
{
	graph_test_switch(g, ms, cpu, prev, state, next);
}

static void wake(uint64_t ms, uint16_t cpu, uint32_t waker, uint32_t wakee, uint64_t off_ms)
{
	graph_test_wake(g, ms, cpu, waker, wakee, off_ms);
}

static void begin(void)
{
	struct ws_graph_ops ops = { .infer = graph_infer_waker,
				    .on_wait = on_wait,
				    .pid_traced = graph_test_pid_traced };

	g = ws_graph_new(&ops, 1 * MS, 10000 * MS, 0);
	cr_assert_not_null(g);
	sw(1, 0, 0, 0, 7); /* 7 runs from 1 ms, then leaves the CPU at 2 ms: not written yet */
	sw(1, 1, 0, 0, 8);
}

/* Thread 8 works for a while: waits of its own, each written (@late: switch-outs written late). */
static void thread8_works(bool late)
{
	for (uint64_t ms = 10; ms < 5000; ms += 100) {
		if (!late)
			sw(ms, 1, 8, 1, 0);
		wake(ms + 50, 1, 9, 8, late ? ms : 0);
		sw(ms + 50, 1, 0, 0, 8);
	}
}

Test(graph_evict, a_wait_not_yet_written_keeps_its_history)
{
	struct ws_thread *t8;

	begin();
	thread8_works(true);
	ws_graph_evict(g, 5000 * MS);
	t8 = ws_graph_thread(g, 8);
	cr_assert_not_null(t8);
	cr_expect_leq(t8->evicted_to, 2 * MS,
		      "7 may have been waiting since 2 ms: 8's timeline was dropped to %llu ns",
		      (unsigned long long)t8->evicted_to);
	ws_graph_free(g);
}

Test(graph_evict, with_every_switch_written_a_running_thread_holds_nothing)
{
	struct ws_thread *t8;

	begin();
	thread8_works(false);
	ws_graph_evict(g, 5000 * MS);
	t8 = ws_graph_thread(g, 8);
	cr_assert_not_null(t8);
	cr_expect_gt(t8->evicted_to, 4000 * MS, "nothing is waiting: history up to now can go");
	ws_graph_free(g);
}
