// SPDX-License-Identifier: MIT
/*
 * Off-CPU time is conserved: reported + shorter waits + still open = every off-CPU interval, and
 * the reported waits = explained + unexplained + idle + not reported.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "report/offcpu.h"

static void feed(struct ws_offcpu *oc, struct ws_thread *t, uint64_t s, uint64_t e, int state)
{
	struct ws_ival iv = { .start = s, .end = e, .state = state };

	cr_assert_eq(ws_offcpu_ival(oc, NULL, t, &iv, NULL), 0);
}

/* What the report prints of @oc: the text lines, then the JSON ones. Free it. */
static char *printed(struct ws_offcpu *oc)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	cr_assert_not_null(f);
	ws_offcpu_text(oc, f, 5);
	ws_offcpu_json_threads(oc, f);
	fclose(f);
	return text;
}

Test(offcpu, every_wait_counted_once)
{
	struct ws_offcpu *oc = ws_offcpu_new(50);
	struct ws_thread t = { .tid = 7, .pid = 7, .comm = "worker" };
	struct ws_offcpu_totals tot;
	char *text;

	cr_assert_not_null(oc);
	t.short_waits = (struct ws_short_waits){ .n = 3, .blocked_ns = 30, .runnable_ns = 12 };
	feed(oc, &t, 0, 100, WS_STATE_RUNNING);
	feed(oc, &t, 100, 105, WS_STATE_BLOCKED); /* a 6 ns wait: short */
	feed(oc, &t, 105, 106, WS_STATE_RUNNABLE);
	feed(oc, &t, 106, 200, WS_STATE_RUNNING);
	feed(oc, &t, 200, 300, WS_STATE_BLOCKED); /* 100 ns: reported */
	feed(oc, &t, 300, 400, WS_STATE_RUNNING);
	feed(oc, &t, 400, 410, WS_STATE_RUNNABLE); /* preempted 10 ns: short, runqueue */
	feed(oc, &t, 410, 500, WS_STATE_RUNNING);
	feed(oc, &t, 500, 600, WS_STATE_BLOCKED); /* never back on CPU: open at the end */
	ws_offcpu_totals(oc, &tot);
	cr_expect_eq(tot.off_ns, 216);
	cr_expect_eq(tot.reported_ns, 100);
	cr_expect_eq(tot.reported_n, 1);
	cr_expect_eq(tot.short_ns, 16);
	cr_expect_eq(tot.short_n, 2);
	cr_expect_eq(tot.open_ns, 100);
	cr_expect_eq(tot.summarised_n, 3);
	cr_expect_eq(tot.summarised_ns, 42);
	cr_expect_eq(tot.reported_ns + tot.short_ns + tot.open_ns, tot.off_ns,
		     "every off-CPU interval lands in exactly one bucket");

	text = printed(oc);
	cr_expect_not_null(strstr(text, "in 2 waits shorter than 50ns"), "%s", text);
	cr_expect_not_null(strstr(text, "in 3 waits summarised in the kernel (cause not recorded)"),
			   "%s", text);
	cr_expect_not_null(strstr(text, "worker (tid 7): 5 waits shorter than"), "%s", text);
	cr_expect_not_null(strstr(text, "1 of 10ns on runqueue = 10ns"), "%s", text);
	cr_expect_not_null(strstr(text, "\"type\":\"short_waits\",\"tid\":7"), "%s", text);
	cr_expect_not_null(strstr(text, "\"summarised_waits\":3"), "%s", text);
	/* nothing was ranked: no "0ns explained" or "+ 0ns unexplained" term in the sum */
	cr_expect_null(strstr(text, " 0ns "), "%s", text);
	cr_expect_not_null(strstr(text, "Off CPU 258ns in all = 100ns in waits of at least 50ns"),
			   "%s", text);
	free(text);
	ws_offcpu_free(oc);
}

/*
 * sched 1.6: the thread's summarised periods by cause (the graph's whole-life sums) are listed
 * by resource, in text and in JSON by_resource (marked "summarised"), costliest first; the rest
 * is "other"; the sum no longer says their cause was not recorded.
 */
Test(offcpu, summarised_waits_are_listed_by_cause)
{
	struct ws_offcpu *oc = ws_offcpu_new(50);
	struct ws_thread t = { .tid = 7, .pid = 7, .comm = "worker" };
	struct ws_short_sum sum = { .nkept = 2 };
	char *text;

	cr_assert_not_null(oc);
	sum.kept[0] = (struct ws_short_cause){ .nr = WS_SHORT_RUNQUEUE, .n = 1, .ns = 10 };
	sum.kept[1] = (struct ws_short_cause){
		.nr = 202, .arch = WS_ARCH_X86_64, .res = 0x1000, .waker = 9, .n = 2, .ns = 20
	};
	t.shs = &sum;
	t.short_waits = (struct ws_short_waits){ .n = 4, .blocked_ns = 30, .runnable_ns = 12 };
	feed(oc, &t, 0, 100, WS_STATE_RUNNING);
	text = printed(oc);
	cr_expect_not_null(strstr(text, "in 4 waits summarised in the kernel (by cause below)"),
			   "%s", text);
	cr_expect_not_null(strstr(text,
				  "worker (tid 7): 4 waits shorter than 50ns = 42ns: 4 of 10ns "
				  "summarised in the kernel = 42ns: 2 on futex 0x1000 (woken by "
				  "tid 9 (?)) = 20ns, 1 on the runqueue (preempted) = 10ns, 1 on "
				  "other things = 12ns"),
			   "%s", text);
	cr_expect_not_null(
		strstr(text, "\"by_resource\":[{\"resource\":\"futex 0x1000\",\"waits\":2,"
			     "\"ns\":20,\"summarised\":true,\"woken_by\":9},{\"resource\":"
			     "\"the runqueue (preempted)\",\"waits\":1,\"ns\":10,\"summarised\":"
			     "true,\"woken_by\":null},{\"resource\":null,\"waits\":1,\"ns\":12,"
			     "\"summarised\":true,\"woken_by\":null}],\"summarised_waits\":4"),
		"%s", text);
	free(text);
	ws_offcpu_free(oc);
}

/*
 * A wait whose switch-in was never traced: the graph ends it where the stretch not observed
 * begins (and hands it out so), and the off-CPU totals end it there too.
 */
Test(offcpu, a_stretch_not_observed_ends_the_wait_before_it)
{
	struct ws_offcpu *oc = ws_offcpu_new(50);
	struct ws_thread t = { .tid = 7, .pid = 7, .comm = "worker" };
	struct ws_offcpu_totals tot;

	cr_assert_not_null(oc);
	feed(oc, &t, 0, 100, WS_STATE_RUNNING);
	feed(oc, &t, 100, 300, WS_STATE_BLOCKED);
	feed(oc, &t, 300, 320, WS_STATE_RUNNABLE);
	feed(oc, &t, 320, 400, WS_STATE_UNKNOWN); /* it got the CPU somewhere in here */
	feed(oc, &t, 400, 410, WS_STATE_BLOCKED); /* and left it again: a short wait, open */
	ws_offcpu_totals(oc, &tot);
	cr_expect_eq(tot.reported_ns, 220);
	cr_expect_eq(tot.reported_n, 1);
	cr_expect_eq(tot.open_ns, 10);
	ws_offcpu_free(oc);
}

Test(offcpu, chains_total_kept_apart)
{
	struct ws_offcpu *oc = ws_offcpu_new(50);
	struct ws_thread v = { .tid = 1 };
	struct ws_chain c = { .victim = &v, .start = 1000, .end = 1250 };
	struct ws_offcpu_totals tot;

	cr_assert_eq(ws_offcpu_chain(oc, &c, true, 50), 0);
	ws_offcpu_totals(oc, &tot);
	cr_expect_eq(tot.chains_ns, 250);
	cr_expect_eq(tot.explained_ns, 200);
	cr_expect_eq(tot.unexplained_ns, 50);
	ws_offcpu_free(oc);
}

/* One of a thing is said in the singular, and a sum leaves out the terms that are 0. */
Test(offcpu, one_wait_is_one_wait)
{
	struct ws_offcpu *oc = ws_offcpu_new(50);
	struct ws_thread t = { .tid = 7, .pid = 7, .comm = "worker" };
	char *text;

	t.short_waits = (struct ws_short_waits){ .n = 1, .blocked_ns = 4 };
	feed(oc, &t, 0, 100, WS_STATE_RUNNING);
	feed(oc, &t, 100, 106, WS_STATE_BLOCKED); /* the one short wait */
	feed(oc, &t, 106, 200, WS_STATE_RUNNING);
	text = printed(oc);
	cr_expect_not_null(strstr(text, "Off CPU 10ns in all = 6ns in 1 wait shorter than 50ns + "),
			   "%s", text);
	cr_expect_not_null(strstr(text, "+ 4ns in 1 wait summarised in the kernel (cause not"),
			   "%s", text);
	cr_expect_not_null(strstr(text, "worker (tid 7): 2 waits shorter than"), "%s", text);
	cr_expect_null(strstr(text, " 0ns "), "%s", text);
	free(text);
	ws_offcpu_free(oc);

	oc = ws_offcpu_new(50);
	t.short_waits = (struct ws_short_waits){ 0 };
	feed(oc, &t, 0, 100, WS_STATE_RUNNING);
	feed(oc, &t, 100, 106, WS_STATE_BLOCKED);
	feed(oc, &t, 106, 200, WS_STATE_RUNNING);
	text = printed(oc);
	cr_expect_not_null(strstr(text, "worker (tid 7): 1 wait shorter than 50ns = 6ns:"), "%s",
			   text);
	free(text);
	ws_offcpu_free(oc);
}

/* The reported waits split by what the report did with them, and the parts add up. */
Test(offcpu, reported_waits_split)
{
	struct ws_offcpu *oc = ws_offcpu_new(50);
	struct ws_thread t = { .tid = 7, .pid = 7, .comm = "worker" };
	struct ws_chain ranked = { .victim = &t, .start = 100, .end = 200 };
	struct ws_chain idle = { .victim = &t, .start = 300, .end = 500 };
	struct ws_offcpu_totals tot;
	char *text;

	feed(oc, &t, 0, 100, WS_STATE_RUNNING);
	feed(oc, &t, 100, 200, WS_STATE_BLOCKED); /* ranked: 30 ns of it unexplained */
	feed(oc, &t, 200, 300, WS_STATE_RUNNING);
	feed(oc, &t, 300, 500, WS_STATE_BLOCKED); /* idle */
	feed(oc, &t, 500, 600, WS_STATE_RUNNING);
	feed(oc, &t, 600, 1000, WS_STATE_BLOCKED); /* no chain: filtered out */
	feed(oc, &t, 1000, 1100, WS_STATE_RUNNING);
	cr_assert_eq(ws_offcpu_chain(oc, &ranked, true, 30), 0);
	cr_assert_eq(ws_offcpu_chain(oc, &idle, false, 0), 0);
	ws_offcpu_totals(oc, &tot);
	cr_expect_eq(tot.reported_ns, 700);
	cr_expect_eq(tot.explained_ns, 70);
	cr_expect_eq(tot.unexplained_ns, 30);
	cr_expect_eq(tot.idle_ns, 200);
	cr_expect_eq(tot.idle_n, 1);
	cr_expect_eq(tot.not_reported_ns, 400);
	cr_expect_eq(tot.explained_ns + tot.unexplained_ns + tot.idle_ns + tot.not_reported_ns,
		     tot.reported_ns);

	text = printed(oc);
	cr_expect_not_null(strstr(text, "= 70ns explained by the reasons above + 30ns unexplained"),
			   "%s", text);
	cr_expect_not_null(strstr(text, "+ 200ns in 1 idle wait (not ranked)"), "%s", text);
	/* no short wait at all: the term is left out, not "+ 0ns in 0 waits shorter than" */
	cr_expect_null(strstr(text, "shorter than"), "%s", text);
	cr_expect_not_null(strstr(text, "+ 400ns in waits of at least 50ns not reported"), "%s",
			   text);
	free(text);
	ws_offcpu_free(oc);
}

/* What a counter of short waits adds at each interval: the totals' short and summarised parts. */
Test(offcpu, short_since_hands_each_short_wait_out_once)
{
	struct ws_offcpu *oc = ws_offcpu_new(50);
	struct ws_thread t = { .tid = 7, .pid = 7, .comm = "worker" }, u = { .tid = 8, .pid = 7 };
	struct ws_offcpu_totals tot;
	uint64_t sum = 0;

	cr_assert_not_null(oc);
	cr_expect_eq(ws_offcpu_short_since(oc, &u), 0, "a thread never fed has none");
	feed(oc, &t, 0, 100, WS_STATE_RUNNING);
	sum += ws_offcpu_short_since(oc, &t);
	cr_expect_eq(sum, 0);
	feed(oc, &t, 100, 105, WS_STATE_BLOCKED);
	/* the wait is not over yet (it may still reach min_block): not counted */
	cr_expect_eq(ws_offcpu_short_since(oc, &t), 0);
	feed(oc, &t, 105, 200, WS_STATE_RUNNING);
	cr_expect_eq(ws_offcpu_short_since(oc, &t), 5);
	cr_expect_eq(ws_offcpu_short_since(oc, &t), 0, "asked again: nothing new");
	t.short_waits = (struct ws_short_waits){ .n = 2, .blocked_ns = 30, .runnable_ns = 12 };
	feed(oc, &t, 200, 300, WS_STATE_BLOCKED); /* reported: not a short wait */
	cr_expect_eq(ws_offcpu_short_since(oc, &t), 42, "the kernel's summarised waits");
	feed(oc, &t, 300, 400, WS_STATE_RUNNING);
	feed(oc, &t, 400, 410, WS_STATE_RUNNABLE);
	feed(oc, &t, 410, 500, WS_STATE_RUNNING);
	cr_expect_eq(ws_offcpu_short_since(oc, &t), 10);
	ws_offcpu_totals(oc, &tot);
	cr_expect_eq(5 + 42 + 10, tot.short_ns + tot.summarised_ns);
	ws_offcpu_free(oc);
}
