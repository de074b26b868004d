// SPDX-License-Identifier: MIT
/*
 * Helpers (ws_switch.helpers, ws_wake.wakee_helper): a kernel thread working for the traced
 * processes is followed, so a wait it ends is explained through its timeline (its waker
 * counts as traced), but it is never a victim and its intervals are not the program's time.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "graph_infer.h"
#include "engine/graph.h"

#define PID GRAPH_TEST_PID
#define KWORKER 900 /* a kernel thread: its own process, never traced */
#define CRON 950    /* an untraced user thread */
#define MS 1000000ULL

static struct ws_graph *g;
static uint32_t victims[16], ival_tids[64];
static int nvictims, nivals;
static bool waker_traced_of[1000];

static int infer(void *ctx, const struct ws_wait *w, struct ws_claim *out)
{
	(void)ctx;
	waker_traced_of[w->wake->waker_tid % 1000] = w->waker_traced;
	out->strength = WS_CLAIM_FALLBACK;
	strcpy(out->kind, "wakeup");
	out->woken_by = w->wake->waker_tid;
	strcpy(out->evidence, "test");
	return 1;
}

static void on_wait(void *ctx, const struct ws_wait_done *d)
{
	(void)ctx;
	cr_assert_lt(nvictims, 16);
	victims[nvictims++] = d->t->tid;
}

static void on_ival(void *ctx, const struct ws_thread *t, const struct ws_ival *iv,
		    const struct ws_claim *claim)
{
	(void)ctx;
	(void)iv;
	(void)claim;
	if (nivals < 64)
		ival_tids[nivals++] = t->tid;
}

static uint32_t pid_of(uint32_t tid)
{
	return tid < KWORKER ? PID : tid;
}

static void sw(uint64_t ms, uint32_t prev, uint32_t state, uint32_t next, uint8_t helpers)
{
	struct ws_switch s = { .sz = sizeof(s),
			       .ts = ms * MS,
			       .prev_tid = prev,
			       .prev_pid = prev ? pid_of(prev) : 0,
			       .prev_state = state,
			       .next_tid = next,
			       .next_pid = next ? pid_of(next) : 0,
			       .next_comm = next == KWORKER ? "kworker/u8:4" : "t",
			       .helpers = helpers };

	ws_graph_switch(g, &s);
}

static void wake(uint64_t ms, uint32_t waker, uint32_t wakee, bool helper, uint8_t ctx)
{
	struct ws_wake w = { .sz = sizeof(w),
			     .ts = ms * MS,
			     .ctx = ctx,
			     .waker_tid = waker,
			     .waker_pid = pid_of(waker),
			     .waker_comm = "w",
			     .wakee_tid = wakee,
			     .wakee_pid = pid_of(wakee),
			     .wakee_helper = helper };

	ws_graph_wake(g, &w);
}

Test(graph_helper, followed_through_never_a_victim)
{
	struct ws_graph_ops ops = { .infer = infer,
				    .on_wait = on_wait,
				    .pid_traced = graph_test_pid_traced,
				    .on_ival = on_ival };
	struct ws_graph_stats st;
	struct ws_thread *k;

	g = ws_graph_new(&ops, 1 * MS, 10000 * MS, 0);
	cr_assert_not_null(g);
	sw(1, 0, 0, 7, 0);
	wake(2, 7, KWORKER, true, WS_CTX_TASK); /* the victim hands the kworker work */
	sw(3, 7, 1, KWORKER, WS_SWITCH_NEXT_HELPER);
	sw(5, KWORKER, 1, 0, WS_SWITCH_PREV_HELPER); /* it waits for the disk */
	wake(20, 0, KWORKER, true, WS_CTX_HARDIRQ);
	sw(21, 0, 0, KWORKER, WS_SWITCH_NEXT_HELPER);
	wake(30, KWORKER, 7, false, WS_CTX_TASK);
	sw(31, KWORKER, 1, 7, WS_SWITCH_PREV_HELPER);
	/* an untraced user thread is no helper: its wakeup ends the chain */
	sw(40, 7, 1, 0, 0);
	wake(50, CRON, 7, false, WS_CTX_TASK);
	sw(51, 0, 0, 7, 0);

	k = ws_graph_thread(g, KWORKER);
	cr_assert_not_null(k, "the helper has a timeline");
	cr_expect(k->helper);
	cr_expect(waker_traced_of[KWORKER % 1000], "a helper waker is followed");
	cr_expect_not(waker_traced_of[CRON % 1000], "an untraced waker is not");
	cr_expect_eq(nvictims, 2, "the victim's two waits, not the kworker's 16ms one");
	for (int i = 0; i < nvictims; i++)
		cr_expect_eq(victims[i], 7, "a wait of tid %u reported", victims[i]);
	ws_graph_stats(g, &st);
	cr_expect_eq(st.threads, 1, "the helper counted among the program's threads");
	ws_graph_flush(g);
	cr_expect_gt(nivals, 0);
	for (int i = 0; i < nivals; i++)
		cr_expect_neq(ival_tids[i], KWORKER, "the helper's time counted as the program's");
	ws_graph_free(g);
}
