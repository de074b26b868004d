// SPDX-License-Identifier: MIT
/*
 * Who held the GIL when a wait for it ended (core/report/gil_holder.c): named only for a wait
 * the futex source called the GIL's, only from the waiter's own read, and only when it names
 * another thread of the same process; anything else says why not.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "graph_infer.h"
#include "report/gil_holder.h"

#define PID GRAPH_TEST_PID
#define VICTIM 101
#define HOG 102
#define STRANGER 201 /* a thread of another process */

static struct ws_graph *g;
static struct ws_claim gil_claim, plain_claim;
static struct ws_stack kernel_half, user_half;
static struct ws_link link;
static struct ws_link_stacks st;

static void field(struct ws_claim *c, const char *key, const char *v)
{
	struct ws_field *f = &c->fields[c->nfields++];

	snprintf(f->key, sizeof(f->key), "%s", key);
	f->type = WS_FIELD_STR;
	snprintf(f->s, sizeof(f->s), "%s", v);
}

static void setup(void)
{
	struct ws_graph_ops ops = { .infer = graph_infer_waker,
				    .pid_traced = graph_test_pid_traced };
	uint32_t tids[] = { VICTIM, HOG, STRANGER }, pids[] = { PID, PID, 200 };

	g = ws_graph_new(&ops, GRAPH_TEST_MS, 10000 * GRAPH_TEST_MS, 0);
	cr_assert_not_null(g);
	/* each thread seen once, so the graph knows its process */
	for (int i = 0; i < 3; i++) {
		struct ws_switch s = { .sz = sizeof(s),
				       .ts = (i + 1) * GRAPH_TEST_MS,
				       .cpu = 0,
				       .prev_tid = i ? tids[i - 1] : 0,
				       .prev_pid = i ? pids[i - 1] : 0,
				       .next_tid = tids[i],
				       .next_pid = pids[i],
				       .next_comm = "python3.11" };

		ws_graph_switch(g, &s);
	}
	memset(&gil_claim, 0, sizeof(gil_claim));
	snprintf(gil_claim.kind, sizeof(gil_claim.kind), "timeout");
	field(&gil_claim, "addr_symbol", "_PyRuntime+0x1b0");
	field(&gil_claim, "lock", "gil");
	field(&gil_claim, "lock_name", "the GIL (python3.11 pid 100)");
	memset(&plain_claim, 0, sizeof(plain_claim));
	snprintf(plain_claim.kind, sizeof(plain_claim.kind), "timeout");
	memset(&link, 0, sizeof(link));
	link.tid = VICTIM;
	link.pid = PID;
	link.waits = 1;
	link.claim = &gil_claim;
	kernel_half = (struct ws_stack){ .tid = VICTIM, .pid = PID, .role = WS_STACK_WAITER };
	user_half = kernel_half;
	user_half.gil = WS_GIL_HELD;
	user_half.gil_holder = HOG;
	memset(&st, 0, sizeof(st));
	st.own[0] = &kernel_half;
	st.own[1] = &user_half;
	st.nown = 2;
}

static void teardown(void)
{
	ws_graph_free(g);
}

TestSuite(gil_holder, .init = setup, .fini = teardown);

static struct ws_gil_holder ask(void)
{
	struct ws_gil_holder h;

	ws_link_gil_holder(g, &link, &st, &h);
	return h;
}

Test(gil_holder, names_the_thread_the_waiter_read)
{
	struct ws_gil_holder h = ask();

	cr_assert_eq(h.kind, WS_GH_HELD);
	cr_assert_eq(h.tid, HOG);
	cr_assert_eq(h.frames.n, 0, "no frames read: none shown");
}

Test(gil_holder, with_the_frames_the_waiter_read)
{
	static struct ws_sframe py[] = {
		{ { 0x7f0000100000, "compress", 38, "/usr/bin/python3.11", "/app/gil.py", 38 },
		  false,
		  true },
	};
	struct ws_gil_holder h;

	user_half.holder = py;
	user_half.nholder = 1;
	h = ask();
	cr_assert_eq(h.kind, WS_GH_HELD);
	cr_assert_eq(h.frames.n, 1);
	cr_assert_eq(h.frames.frames, py);
	cr_assert_eq(h.frames.tid, HOG);
	/* a holder not believed shows no frames either */
	user_half.gil_holder = VICTIM;
	h = ask();
	cr_assert_eq(h.kind, WS_GH_UNKNOWN);
	cr_assert_eq(h.frames.n, 0);
}

Test(gil_holder, only_for_a_wait_for_the_gil)
{
	link.claim = &plain_claim;
	cr_assert_eq(ask().kind, WS_GH_NONE);
	link.claim = NULL;
	cr_assert_eq(ask().kind, WS_GH_NONE);
	/* a link of several waits: one read cannot speak for all */
	link.claim = &gil_claim;
	link.waits = 3;
	cr_assert_eq(ask().kind, WS_GH_NONE);
}

Test(gil_holder, a_holder_from_memory_is_checked)
{
	struct ws_gil_holder h;

	/* the waiter itself, a thread of another process, nobody known: not believed */
	uint32_t bad[] = { VICTIM, STRANGER, 999, 0 };

	for (int i = 0; i < 4; i++) {
		user_half.gil_holder = bad[i];
		h = ask();
		cr_assert_eq(h.kind, WS_GH_UNKNOWN, "holder %u", bad[i]);
		cr_assert_not_null(h.why);
	}
}

Test(gil_holder, says_why_not)
{
	uint8_t states[] = { WS_GIL_UNREADABLE, WS_GIL_CHANGING, WS_GIL_ELSEWHERE };
	struct ws_gil_holder h;

	for (int i = 0; i < 3; i++) {
		user_half.gil = states[i];
		h = ask();
		cr_assert_eq(h.kind, WS_GH_UNKNOWN);
		cr_assert(h.why && *h.why);
	}
	user_half.gil = WS_GIL_FREE;
	cr_assert_eq(ask().kind, WS_GH_FREE);
	/* the kernel half alone: nothing was read */
	st.nown = 1;
	h = ask();
	cr_assert_eq(h.kind, WS_GH_UNKNOWN);
	cr_assert(strstr(h.why, "not read"));
	/* nothing captured because stacks were off: said so */
	st.nown = 0;
	st.own_missing = WS_SM_OFF;
	h = ask();
	cr_assert_eq(h.kind, WS_GH_UNKNOWN);
	cr_assert(strstr(h.why, "stacks, which were off"), "%s", h.why);
}
