// SPDX-License-Identifier: MIT
/*
 * A thread's timeline, as the graph hands it out (ops.on_ival: what the Perfetto export
 * draws), is one unbroken stretch from its first switch to its death, whatever it does
 * on its way out. An exiting thread can still sleep: exit_mm() waits for the mm lock
 * (6.16+ fires sched_process_exit before that), a robust futex list can fault. Only
 * its last switch-out ends it.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "graph_infer.h"
#include "engine/graph.h"

#define PID GRAPH_TEST_PID
#define MS 1000000ULL

static struct ws_graph *g;
static struct ws_ival ivs[64];
static int nivs;
static struct ws_wait_done waits[8]; /* thread 7's, as handed out */
static int nwaits;

static void on_wait(void *ctx, const struct ws_wait_done *d)
{
	(void)ctx;
	if (d->t->tid == 7 && !d->below_min_block && nwaits < 8)
		waits[nwaits++] = *d;
}

static void on_ival(void *ctx, const struct ws_thread *t, const struct ws_ival *iv,
		    const struct ws_claim *claim)
{
	(void)ctx;
	(void)claim;
	if (t->tid == 7) {
		cr_assert_lt(nivs, 64);
		ivs[nivs++] = *iv;
	}
}

static void sw(uint64_t ms, uint16_t cpu, uint32_t prev, uint32_t state, uint32_t next)
{
	graph_test_switch(g, ms, cpu, prev, state, next);
}

static void wake(uint64_t ms, uint16_t cpu, uint32_t waker, uint32_t wakee)
{
	graph_test_wake(g, ms, cpu, waker, wakee, 0);
}

static void thread_exit(uint64_t ms, uint32_t tid)
{
	struct ws_thread_event ev = {
		.sz = sizeof(ev), .ts = ms * MS, .type = WS_THREAD_EXIT, .tid = tid, .pid = PID
	};

	ws_graph_thread_event(g, &ev);
}

static int by_start(const void *a, const void *b)
{
	const struct ws_ival *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Thread 7's timeline is one stretch from @from to @to; returns how many blocked intervals. */
static int check_unbroken(uint64_t from, uint64_t to)
{
	int blocked = 0;

	cr_assert_gt(nivs, 0, "thread 7 handed out no interval");
	qsort(ivs, nivs, sizeof(ivs[0]), by_start);
	cr_expect_eq(ivs[0].start, from * MS, "timeline starts at %llu",
		     (unsigned long long)ivs[0].start);
	for (int i = 0; i < nivs; i++) {
		if (i + 1 < nivs)
			cr_expect_eq(ivs[i].end, ivs[i + 1].start,
				     "interval %d ends at %llu, the next starts at %llu", i,
				     (unsigned long long)ivs[i].end,
				     (unsigned long long)ivs[i + 1].start);
		blocked += ivs[i].state == WS_STATE_BLOCKED;
	}
	cr_expect_eq(ivs[nivs - 1].end, to * MS, "timeline ends at %llu",
		     (unsigned long long)ivs[nivs - 1].end);
	return blocked;
}

static void begin(void)
{
	struct ws_graph_ops ops = { .infer = graph_infer_waker,
				    .on_wait = on_wait,
				    .pid_traced = graph_test_pid_traced,
				    .on_ival = on_ival };

	nivs = 0;
	nwaits = 0;
	g = ws_graph_new(&ops, 1 * MS, 10000 * MS, 0);
	cr_assert_not_null(g);
	sw(1, 0, 0, 0, 7);
	sw(1, 1, 0, 0, 8);
}

Test(graph_life, an_exiting_thread_that_sleeps_in_its_exit_path_stays_one_thread)
{
	begin();
	thread_exit(10, 7);
	sw(11, 0, 7, 2 /* TASK_UNINTERRUPTIBLE: exit_mm waits for the mm lock */, 0);
	wake(15, 1, 8, 7);
	sw(16, 0, 0, 0, 7);
	sw(17, 0, 7, 0x80 /* TASK_DEAD */, 0);
	ws_graph_flush(g);
	cr_expect_eq(check_unbroken(1, 17), 1, "one wait in the exit path");
	ws_graph_free(g);
}

Test(graph_life, an_exiting_thread_that_is_preempted_comes_back_to_die)
{
	begin();
	thread_exit(10, 7);
	sw(11, 0, 7, 0, 0);
	sw(12, 1, 8, 0, 7);
	sw(13, 1, 7, 0x80, 0);
	ws_graph_flush(g);
	cr_expect_eq(check_unbroken(1, 13), 0);
	ws_graph_free(g);
}

Test(graph_life, a_dead_thread_is_retired_at_its_last_switch)
{
	struct ws_thread *t;

	begin();
	thread_exit(10, 7);
	sw(11, 0, 7, 0x80, 0);
	t = ws_graph_thread(g, 7);
	cr_expect_null(t, "thread 7 is still live after its last switch-out");
	ws_graph_flush(g);
	check_unbroken(1, 11);
	ws_graph_free(g);
}

/*
 * Thread 7 leaves the CPU at 5 ms (in @first_state), and again at 20 ms (blocked) without its
 * switch-in having arrived in between; woken at 30 ms, back at 31. The graph counts one switch-in
 * unseen; its intervals are flushed.
 */
static void leaves_twice(uint32_t first_state)
{
	struct ws_graph_stats st;

	begin();
	sw(5, 0, 7, first_state, 0);
	sw(20, 0, 7, 1, 0);
	wake(30, 1, 8, 7);
	sw(31, 0, 0, 0, 7);
	ws_graph_stats(g, &st);
	cr_expect_eq(st.switch_ins_unseen, 1);
	ws_graph_flush(g);
}

/*
 * Thread 7 blocks at 5 ms and leaves the CPU again at 20 ms: its wakeup and switch-in between
 * never arrived (6.18 sometimes does not report them). That stretch is not observed; it is
 * not one 15 ms wait, and the next wait is its own.
 */
Test(graph_life, a_return_to_the_cpu_that_never_arrived_is_not_observed)
{
	int unknown = 0;

	leaves_twice(1);
	cr_expect_eq(check_unbroken(1, 31), 1, "only the wait from 20 ms is a wait");
	for (int i = 0; i < nivs; i++)
		if (ivs[i].state == WS_STATE_UNKNOWN) {
			unknown++;
			cr_expect(ivs[i].start == 5 * MS && ivs[i].end == 20 * MS,
				  "not observed [%llu, %llu]", (unsigned long long)ivs[i].start,
				  (unsigned long long)ivs[i].end);
		}
	cr_expect_eq(unknown, 1);
	ws_graph_free(g);
}

/*
 * The same with a preemption: thread 7 is preempted at 5 ms and leaves the CPU again at 20 ms
 * without its switch-in having arrived. It ran somewhere in between; [5, 20] is not one 15 ms
 * runqueue wait (the summary would count it off CPU while no chain does).
 */
Test(graph_life, a_switch_in_after_a_preemption_that_never_arrived_is_not_observed)
{
	int runnable_5_20 = 0, unknown = 0;

	leaves_twice(0 /* preempted */);
	check_unbroken(1, 31);
	for (int i = 0; i < nivs; i++) {
		unknown += ivs[i].state == WS_STATE_UNKNOWN && ivs[i].start == 5 * MS;
		runnable_5_20 += ivs[i].state == WS_STATE_RUNNABLE && ivs[i].start == 5 * MS;
	}
	cr_expect_eq(unknown, 1, "[5, 20] not observed");
	cr_expect_eq(runnable_5_20, 0, "[5, 20] called a runqueue wait");
	ws_graph_free(g);
}

/*
 * Thread 7 leaves CPU 0 at @ms (prev), as a source that summarises writes it: its switch-out
 * @later (left for the record that ends its period) or not, and @unseen_ms > 0 (the source
 * found its last period, begun that long before, ended unreported).
 */
static void sw_flags(uint64_t ms, uint32_t state, uint32_t next, bool later, uint32_t unseen_ms)
{
	struct ws_switch s = { .sz = sizeof(s),
			       .ts = ms * MS,
			       .cpu = 0,
			       .prev_tid = 7,
			       .prev_pid = PID,
			       .prev_state = state,
			       .next_tid = next,
			       .next_pid = next ? PID : 0,
			       .next_comm = "t",
			       .prev_out_later = later,
			       .prev_unseen = unseen_ms > 0,
			       .prev_unseen_ns = unseen_ms == UINT32_MAX
							 ? UINT32_MAX
							 : unseen_ms * (uint32_t)MS };

	ws_graph_switch(g, &s);
}

/* Thread 7's stretches in @state over exactly [@from, @to] ms. */
static int stretches(int state, uint64_t from, uint64_t to)
{
	int n = 0;

	for (int i = 0; i < nivs; i++)
		n += ivs[i].state == state && ivs[i].start == from * MS && ivs[i].end == to * MS;
	return n;
}

/* The graph counted @unseen returns it did not see; thread 7's timeline, [1, @end_ms], is whole. */
static void counted_and_whole(uint64_t unseen, uint64_t end_ms)
{
	struct ws_graph_stats st;

	ws_graph_stats(g, &st);
	cr_expect_eq(st.switch_ins_unseen, unseen);
	ws_graph_flush(g);
	check_unbroken(1, end_ms);
}

/* Thread 7 runs from 1 ms and sleeps at 5, its switch-out left for later; 8 runs 5 to 6. */
static void runs_then_sleeps_unwritten(void)
{
	begin();
	sw(1, 0, 0, 0, 7);
	sw_flags(5, 1, 8, true, 0);
	sw(6, 0, 8, 1, 0);
}

/*
 * Thread 7 runs from 1 ms and sleeps at 5: the switch record says so for thread 8's sake, its
 * switch-out left for the record that ends its sleep. Neither that wakeup nor the switch-in
 * after it ever arrives (6.18 sometimes does not report them): at 170 ms the source finds it
 * running, its period ended unseen, and says so. [5, 170] is not observed: not a 165 ms run on
 * CPU, which a chain through 7 (a thread it woke meanwhile) would call its CPU work.
 */
Test(graph_life, a_period_whose_end_the_kernel_did_not_report_is_not_observed)
{
	runs_then_sleeps_unwritten();
	sw_flags(170, 0, 0, false, 165);
	sw(171, 0, 0, 0, 7);
	sw(172, 0, 7, 1, 0);
	counted_and_whole(1, 172);
	cr_expect_eq(stretches(WS_STATE_RUNNING, 1, 5), 1, "its run before it left");
	cr_expect_eq(stretches(WS_STATE_UNKNOWN, 5, 170), 1, "[5, 170] not observed");
	cr_expect_eq(stretches(WS_STATE_RUNNABLE, 170, 171), 1, "preempted at 170");
	ws_graph_free(g);
}

/*
 * Thread 7 runs from 1 ms, unseen leaving the CPU (no switch record needed writing); at 170 ms
 * the source says its period ended unreported, begun @unseen_ms before; back at 171.
 */
static void runs_then_unseen(uint32_t unseen_ms)
{
	begin();
	sw(1, 0, 0, 0, 7);
	sw_flags(170, 0, 0, false, unseen_ms);
	sw(171, 0, 0, 0, 7);
	sw(172, 0, 7, 1, 0);
	counted_and_whole(1, 172);
}

/*
 * At 150 it is preempted, a switch nobody needed written (its next untraced, no traced thread
 * waiting); the thread it handed the CPU to left it with no sched_switch, so its return went
 * unreported too. It ran until 150, and [150, 170] is not observed.
 */
Test(graph_life, a_period_never_written_that_ended_unreported_is_not_observed_from_its_start)
{
	runs_then_unseen(20);
	cr_expect_eq(stretches(WS_STATE_RUNNING, 1, 150), 1, "it ran until 150");
	cr_expect_eq(stretches(WS_STATE_UNKNOWN, 150, 170), 1, "[150, 170] not observed");
	ws_graph_free(g);
}

/*
 * The same when the source could not say when its period began (4.29 s or more before): from
 * its last switch-in, what it did is not known.
 */
Test(graph_life, a_period_never_written_that_ended_unreported_is_not_observed)
{
	runs_then_unseen(UINT32_MAX);
	cr_expect_eq(stretches(WS_STATE_UNKNOWN, 1, 170), 1, "[1, 170] not observed");
	ws_graph_free(g);
}

/* A switch-out left for later whose record came (its wakeup) is no such thing. */
Test(graph_life, a_switch_out_carried_by_its_wakeup_leaves_the_timeline_whole)
{
	runs_then_sleeps_unwritten();
	graph_test_wake_off(g, 150, 1, 8, 7, 5, 0);
	sw(151, 0, 0, 0, 7);
	sw(170, 0, 7, 1, 0);
	counted_and_whole(0, 170);
	cr_expect_eq(stretches(WS_STATE_BLOCKED, 5, 150), 1, "its sleep");
	cr_expect_eq(stretches(WS_STATE_RUNNING, 151, 170), 1, "its run after it");
	ws_graph_free(g);
}

/* A switch on @cpu to a thread of another process (one whose own switch-outs go untraced). */
static void sw_to_other(uint64_t ms, uint16_t cpu, uint32_t prev, uint32_t state, uint32_t next)
{
	graph_test_switch_to(g, ms, cpu, prev, state, next, 1, "agent");
}

static int state_at(uint64_t ms)
{
	for (int i = 0; i < nivs; i++)
		if (ivs[i].start <= ms * MS && ms * MS < ivs[i].end)
			return ivs[i].state;
	return -1;
}

/*
 * Thread 7 blocks at 5 ms, thread 8 wakes it at 30 ms; at 40 ms CPU 0 goes to a thread whose
 * switch-outs are never traced (a VM agent's, seen on 6.18), which hands the CPU to 7 unseen;
 * 7 leaves at 60 ms. Its wait is still reported: blocked from 5 ms, woken by 8 at 30, over at
 * 40 at the earliest; [40, 60] is not observed.
 */
Test(graph_life, a_wait_ended_by_an_unseen_switch_in_is_still_a_wait)
{
	struct ws_graph_stats st;

	begin();
	sw(5, 0, 7, 1, 0);
	wake(30, 1, 8, 7);
	sw_to_other(40, 0, 0, 0, 50);
	sw(60, 0, 7, 1, 0);
	ws_graph_stats(g, &st);
	cr_expect_eq(st.switch_ins_unseen, 1);
	cr_assert_eq(nwaits, 1, "the wait from 5 ms was not handed out");
	cr_expect_eq(waits[0].start, 5 * MS);
	cr_expect_eq(waits[0].wake, 30 * MS);
	cr_expect_eq(waits[0].end, 40 * MS);
	wake(70, 1, 8, 7);
	sw(71, 0, 0, 0, 7);
	ws_graph_flush(g);
	check_unbroken(1, 71);
	cr_expect_eq(state_at(20), WS_STATE_BLOCKED);
	cr_expect_eq(state_at(35), WS_STATE_RUNNABLE);
	cr_expect_eq(state_at(50), WS_STATE_UNKNOWN);
	cr_expect_eq(state_at(65), WS_STATE_BLOCKED);
	ws_graph_free(g);
}

/*
 * The same when the run seen last on CPU 0 began before the wakeup (its switch was not
 * written): the wait ends at the wakeup, as far as is known.
 */
Test(graph_life, an_unseen_switch_in_ends_the_wait_no_earlier_than_its_wakeup)
{
	begin();
	sw(5, 0, 7, 1, 0);
	wake(30, 1, 8, 7);
	sw(60, 0, 7, 1, 0);
	cr_assert_eq(nwaits, 1, "the wait from 5 ms was not handed out");
	cr_expect_eq(waits[0].start, 5 * MS);
	cr_expect_eq(waits[0].end, 30 * MS);
	ws_graph_flush(g);
	cr_expect_eq(state_at(45), WS_STATE_UNKNOWN);
	ws_graph_free(g);
}

/*
 * A source that summarises reports 7's second switch-out (60 ms) only with the wakeup that ends
 * it (80 ms): the unseen switch-in between is found then, and the two waits stay two.
 */
Test(graph_life, a_late_switch_out_after_an_unseen_switch_in_splits_the_waits)
{
	begin();
	sw(5, 0, 7, 1, 0);
	wake(30, 1, 8, 7);
	sw_to_other(40, 0, 0, 0, 50);
	graph_test_wake_off(g, 80, 1, 8, 7, 60, 0);
	sw(81, 0, 0, 0, 7);
	cr_assert_eq(nwaits, 2, "%d waits handed out", nwaits);
	cr_expect_eq(waits[0].start, 5 * MS);
	cr_expect_eq(waits[0].end, 40 * MS);
	cr_expect_eq(waits[1].start, 60 * MS);
	cr_expect_eq(waits[1].end, 81 * MS);
	ws_graph_free(g);
}

/* A switch-out that arrives out of order (after the reorder window) ends no wait backwards. */
Test(graph_life, a_switch_out_out_of_order_ends_no_wait_before_it_began)
{
	begin();
	sw(5, 0, 7, 1, 0);
	wake(30, 1, 8, 7);
	sw(3, 0, 7, 1, 0);
	for (int i = 0; i < nwaits; i++)
		cr_expect(waits[i].end >= waits[i].start && waits[i].end >= waits[i].wake,
			  "wait %d: start %llu, wake %llu, end %llu", i,
			  (unsigned long long)waits[i].start, (unsigned long long)waits[i].wake,
			  (unsigned long long)waits[i].end);
	ws_graph_free(g);
}

/*
 * Woken again and again by the same thread for the same reason, a thread's waits share one
 * claim; a waker between them has its own, and a claim that was given back is never handed
 * out again for another.
 */
Test(graph_life, repeated_wakeups_share_one_claim_and_give_it_back)
{
	struct ws_graph_stats st;
	uint64_t ms = 2;

	begin();
	for (int i = 0; i < 15; i++, ms += 3) {
		sw(ms, 0, 7, 1, 0);
		wake(ms + 1, 1, i % 5 == 4 ? 9 : 8, 7);
		sw(ms + 2, 0, 0, 0, 7);
	}
	ws_graph_stats(g, &st);
	cr_expect_eq(st.claims, 2, "one claim per waker, not %llu", (unsigned long long)st.claims);
	/* everything before 1000 s goes: every claim is given back */
	sw(1000000, 0, 7, 1, 0);
	ws_graph_evict(g, 1000000 * MS);
	ws_graph_stats(g, &st);
	cr_expect_eq(st.claims, 0, "%llu claims left", (unsigned long long)st.claims);
	/* a new waker takes a freed slot: the hint of thread 7 must not call it its old claim */
	wake(1000001, 1, 9, 7);
	sw(1000002, 0, 0, 0, 7);
	sw(1000003, 0, 7, 1, 0);
	wake(1000004, 1, 8, 7);
	ws_graph_stats(g, &st);
	cr_expect_eq(st.claims, 2);
	ws_graph_flush(g);
	for (int i = 0; i < nivs; i++)
		if (ivs[i].state == WS_STATE_BLOCKED && ivs[i].start >= 1000000 * MS)
			cr_expect_neq(ivs[i].claim, 0);
	ws_graph_free(g);
}

static int infer_calls;

/* What the sources' chooser relies on (session_infer_all): a claim to fill arrives blank. */
static int infer_blank(void *ctx, const struct ws_wait *w, struct ws_claim *out)
{
	static const struct ws_claim zero;
	struct ws_claim want = zero;

	want.sz = sizeof(want);
	cr_assert_eq(out->sz, sizeof(*out));
	cr_assert_eq(memcmp(out, &want, sizeof(want)), 0, "the claim to fill is not blank");
	infer_calls++;
	/* leave it dirty: the next wakeup's claim must be blank again */
	memset(out, 0x5a, sizeof(*out));
	return graph_infer_waker(ctx, w, out);
}

Test(graph_life, a_claim_to_fill_arrives_blank)
{
	struct ws_graph_ops ops = { .infer = infer_blank,
				    .on_wait = on_wait,
				    .pid_traced = graph_test_pid_traced };

	g = ws_graph_new(&ops, 1 * MS, 10000 * MS, 0);
	cr_assert_not_null(g);
	infer_calls = 0;
	sw(1, 0, 0, 0, 7);
	sw(1, 1, 0, 0, 8);
	for (uint64_t t = 2; t < 20; t += 4) {
		sw(t, 0, 7, 1, 0);
		wake(t + 1, 1, 8, 7);
		sw(t + 2, 0, 0, 0, 7);
	}
	cr_expect_eq(infer_calls, 5);
	ws_graph_free(g);
}
