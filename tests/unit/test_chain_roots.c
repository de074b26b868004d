// SPDX-License-Identifier: MIT
/*
 * What a chain's builder finds in one pass is what the separate walks found: the first link
 * over a waker (dominant() counted on segments_of()'s walk) and each segment's root (kept
 * per chain by ws_chain_seg_root()) against ws_chain_walk_segment() and ws_chain_root_of()
 * asked afresh, on a waker with hundreds of slices and over two chains in turn.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "graph_infer.h"
#include "engine/chain.h"
#include "engine/graph.h"

enum {
	VICTIM = 1,
	WAKER = 2,
	OTHER = 3
};

static struct ws_graph *g;
static struct ws_chain chain;
static int waits;
static char roots_seen[2][96]; /* the first segment's root of each chain */

static const char *comm_of(uint32_t tid)
{
	return tid == VICTIM ? "victim" : tid == WAKER ? "waker" : "other";
}

static void sw(uint64_t ms, uint16_t cpu, uint32_t prev, uint32_t state, uint32_t next)
{
	graph_test_switch_named(g, ms, cpu, prev, state, next, next ? comm_of(next) : NULL);
}

static void wake(uint64_t ms, uint16_t cpu, uint32_t waker, uint32_t wakee)
{
	struct ws_wake w = { .sz = sizeof(w),
			     .ts = ms * GRAPH_TEST_MS,
			     .cpu = cpu,
			     .waker_tid = waker,
			     .waker_pid = GRAPH_TEST_PID,
			     .waker_comm = comm_of(waker),
			     .wakee_tid = wakee,
			     .wakee_pid = GRAPH_TEST_PID };

	ws_graph_wake(g, &w);
}

/* The chain's first link over its waker is what walking the blocked part afresh gives. */
static void check_first_link(const struct ws_wait_done *d)
{
	struct ws_segment whole = { .thread = chain.links[1].thread,
				    .kind = WS_KIND_RUNNING,
				    .tid = chain.links[1].tid,
				    .start = d->start,
				    .dur = d->wake - d->start };
	struct ws_chain fresh;

	cr_assert_gt(chain.nlinks, 1, "the victim's wait names its waker");
	cr_assert_gt(ws_chain_walk_segment(g, &whole, &fresh), 0);
	cr_expect_str_eq(fresh.links[0].kind, chain.links[1].kind);
	cr_expect_eq(fresh.links[0].start, chain.links[1].start);
	cr_expect_eq(fresh.links[0].dur, chain.links[1].dur);
	cr_expect_eq(fresh.links[0].waits, chain.links[1].waits);
	cr_expect_eq(fresh.links[0].longest, chain.links[1].longest);
	cr_expect_eq(fresh.nlinks, chain.nlinks - 1);
}

/* Every segment's kept root is ws_chain_root_of()'s, asked before and after it is kept. */
static void check_roots(void)
{
	for (size_t i = 0; i < chain.nsegs; i++) {
		struct ws_seg_root scratch;
		const struct ws_seg_root *kept = ws_chain_seg_root(g, &chain, i, &scratch);
		char fresh[96];
		bool named = ws_chain_root_of(g, &chain.segs[i], fresh, sizeof(fresh));

		cr_expect_str_eq(kept->key, fresh, "segment %zu", i);
		cr_expect_eq(kept->named, named, "segment %zu", i);
		cr_expect_eq(ws_chain_seg_root(g, &chain, i, &scratch), kept,
			     "segment %zu: asked again, the kept answer is given", i);
	}
}

static void on_wait(void *ctx, const struct ws_wait_done *d)
{
	struct ws_seg_root scratch;

	(void)ctx;
	cr_assert_eq(ws_chain_build(g, d, &chain), 0);
	cr_assert_gt(chain.nsegs, 0);
	if (waits < 2)
		snprintf(roots_seen[waits], sizeof(roots_seen[0]), "%s",
			 ws_chain_seg_root(g, &chain, 0, &scratch)->key);
	check_first_link(d);
	check_roots();
	waits++;
}

Test(chain_roots, one_pass_answers_as_the_separate_walks)
{
	struct ws_graph_ops ops = { .infer = graph_infer_waker,
				    .on_wait = on_wait,
				    .pid_traced = graph_test_pid_traced };

	g = ws_graph_new(&ops, 10 * GRAPH_TEST_MS, 10000000000ULL, 0);
	cr_assert_not_null(g);
	sw(0, 0, 0, 0, VICTIM);
	sw(0, 1, 0, 0, WAKER);
	sw(1, 0, VICTIM, 1, 0); /* the victim blocks */
	/* the waker: 2 ms running, 1 ms blocked (woken by OTHER), 1 ms runnable, 100 times */
	for (uint64_t k = 0, at = 2; k < 100; k++, at += 4) {
		sw(at + 1, 1, WAKER, 1, OTHER);
		wake(at + 2, 1, OTHER, WAKER);
		sw(at + 3, 1, OTHER, 0, WAKER);
	}
	wake(402, 1, WAKER, VICTIM);
	sw(403, 0, 0, 0, VICTIM); /* chain 1: over the waker's 400 slices */
	sw(410, 0, VICTIM, 1, 0);
	wake(500, 1, OTHER, VICTIM); /* OTHER, runnable since 401, "wakes" it: chain 2 */
	sw(501, 0, 0, 0, VICTIM);
	cr_assert_eq(waits, 2);
	cr_expect_gt(strlen(roots_seen[0]), 0);
	cr_expect_str_neq(roots_seen[0], roots_seen[1],
			  "the second chain's roots are its own, not the first's kept ones");
	ws_chain_release(&chain);
	ws_graph_free(g);
}
