// SPDX-License-Identifier: MIT
/*
 * Out of memory in the graph is never silent: the history it could not keep marks the chains
 * that overlap it incomplete, and the summary counts it. realloc fails on demand here: this
 * test links with -Wl,--wrap=realloc (tests/meson.build).
 */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_infer.h"
#include "engine/chain.h"
#include "engine/graph.h"

static bool fail_realloc;

void *__real_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n);

void *__wrap_realloc(void *p, size_t n)
{
	return fail_realloc ? NULL : __real_realloc(p, n);
}

static struct ws_graph *g;
static struct ws_chain chain;
static int waits;
static bool incomplete;
static const char *why;

static void on_wait(void *ctx, const struct ws_wait_done *d)
{
	(void)ctx;
	cr_assert_eq(ws_chain_build(g, d, &chain), 0);
	waits++;
	incomplete = chain.incomplete;
	why = chain.why_incomplete;
}

static bool traced(void *ctx, uint32_t pid)
{
	(void)ctx;
	return pid == 100;
}

static void sw(uint64_t ms, uint32_t cpu, uint32_t prev, uint32_t state, uint32_t next)
{
	struct ws_switch s = { .sz = sizeof(s),
			       .ts = ms * 1000000,
			       .cpu = cpu,
			       .prev_tid = prev,
			       .prev_pid = prev ? 100 : 0,
			       .prev_state = state,
			       .next_tid = next,
			       .next_pid = next ? 100 : 0,
			       .next_comm = "t" };

	ws_graph_switch(g, &s);
}

static void wake(uint64_t ms, uint32_t cpu, uint32_t waker, uint32_t wakee)
{
	struct ws_wake w = { .sz = sizeof(w),
			     .ts = ms * 1000000,
			     .cpu = cpu,
			     .waker_tid = waker,
			     .waker_pid = 100,
			     .waker_comm = "waker",
			     .wakee_tid = wakee,
			     .wakee_pid = 100 };

	ws_graph_wake(g, &w);
}

static void run(bool starve)
{
	struct ws_graph_ops ops = { .infer = graph_infer_waker,
				    .on_wait = on_wait,
				    .pid_traced = traced };
	struct ws_graph_stats st;

	g = ws_graph_new(&ops, 10000000, 10000000000ULL, 0);
	cr_assert_not_null(g);
	waits = 0;
	sw(1, 0, 0, 0, 10); /* victim runs on CPU 0 */
	sw(1, 1, 0, 0, 20); /* waker on CPU 1 */
	sw(2, 0, 10, 1, 0); /* victim blocks */
	fail_realloc = starve;
	sw(20, 0, 0, 0, 30); /* a thread first seen now: its timeline needs memory */
	sw(21, 0, 30, 1, 0);
	fail_realloc = false;
	wake(40, 1, 20, 10);
	sw(41, 0, 0, 0, 10); /* victim back after 39 ms */
	cr_assert_eq(waits, 1);
	ws_graph_stats(g, &st);
	if (starve) {
		cr_assert_gt(st.oom, 0, "the failed allocation was not counted");
		cr_assert(incomplete, "a chain over the failed allocation must be incomplete");
		cr_assert_str_eq(why, "whyslow ran out of memory during this wait");
	} else {
		cr_assert_eq(st.oom, 0);
		cr_assert_not(incomplete, "why: %s", why ? why : "");
	}
	ws_chain_release(&chain);
	ws_graph_free(g);
}

Test(graph_oom, memory_running_out_marks_the_chains_over_it)
{
	run(true);
}

Test(graph_oom, the_same_run_with_memory_is_complete)
{
	run(false);
}

static struct ws_ival seen[64];
static int nseen;

static void on_ival(void *ctx, const struct ws_thread *t, const struct ws_ival *iv,
		    const struct ws_claim *claim)
{
	(void)ctx;
	(void)claim;
	if (t->tid == 20 && nseen < 64)
		seen[nseen++] = *iv;
}

/*
 * Memory runs out as a timeline grows: the stretch it was in ends there, and the time until its
 * next change is known is not observed (a stretch of unknown state), not more of the last one.
 */
Test(graph_oom, a_stretch_memory_could_not_hold_is_not_observed)
{
	struct ws_graph_ops ops = { .infer = graph_infer_waker,
				    .on_wait = on_wait,
				    .pid_traced = traced,
				    .on_ival = on_ival };
	int i;

	g = ws_graph_new(&ops, 10000000, 10000000000ULL, 0);
	cr_assert_not_null(g);
	nseen = 0;
	/* stretch k from k ms: running (odd k) or blocked (even k); the 17th needs a bigger array
	 */
	for (uint64_t k = 1; k <= 16; k++)
		sw(k, 1, k % 2 ? 0 : 20, 1, k % 2 ? 20 : 0);
	fail_realloc = true;
	sw(17, 1, 0, 0, 20); /* back on CPU: no room to say so */
	fail_realloc = false;
	sw(18, 1, 20, 1, 0);
	ws_graph_flush(g);
	for (i = 0; i < nseen && seen[i].start != 16 * 1000000ULL; i++)
		;
	cr_assert_lt(i + 2, nseen, "stretches from 16 ms on: %d of %d", nseen - i, nseen);
	cr_expect_eq(seen[i].state, WS_STATE_BLOCKED);
	cr_expect_eq(seen[i].end, 17 * 1000000ULL, "the blocked stretch ends where memory ran out");
	cr_expect_eq(seen[i + 1].state, WS_STATE_UNKNOWN);
	cr_expect_eq(seen[i + 1].start, 17 * 1000000ULL);
	cr_expect_eq(seen[i + 1].end, 18 * 1000000ULL);
	cr_expect_eq(seen[i + 2].state, WS_STATE_BLOCKED);
	cr_expect_eq(seen[i + 2].start, 18 * 1000000ULL);
	ws_chain_release(&chain);
	ws_graph_free(g);
}
