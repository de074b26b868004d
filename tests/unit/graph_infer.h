/* SPDX-License-Identifier: MIT */
/*
 * For tests that drive the graph directly (no plugins): an edge-inference callback that
 * explains every wakeup by its waker, as the weakest claim, and the traced-process filter.
 */
#ifndef WS_TEST_GRAPH_INFER_H
#define WS_TEST_GRAPH_INFER_H

#include <stdio.h>

#include "engine/graph.h"

static inline int graph_infer_waker(void *ctx, const struct ws_wait *w, struct ws_claim *out)
{
	(void)ctx;
	out->strength = WS_CLAIM_FALLBACK;
	snprintf(out->kind, sizeof(out->kind), "wakeup");
	out->woken_by = w->wake->waker_tid;
	snprintf(out->evidence, sizeof(out->evidence), "test");
	return 1;
}

/* The one traced process of such tests. */
#define GRAPH_TEST_PID 100

static inline bool graph_test_pid_traced(void *ctx, uint32_t pid)
{
	(void)ctx;
	return pid == GRAPH_TEST_PID;
}

#define GRAPH_TEST_MS 1000000ULL

/*
 * A switch at @ms milliseconds on @cpu, prev in the test process (tid 0: idle); @next of
 * process @next_pid, named @comm.
 */
static inline void graph_test_switch_to(struct ws_graph *g, uint64_t ms, uint16_t cpu,
					uint32_t prev, uint32_t state, uint32_t next,
					uint32_t next_pid, const char *comm)
{
	struct ws_switch s = { .sz = sizeof(s),
			       .ts = ms * GRAPH_TEST_MS,
			       .cpu = cpu,
			       .prev_tid = prev,
			       .prev_pid = prev ? GRAPH_TEST_PID : 0,
			       .prev_state = state,
			       .next_tid = next,
			       .next_pid = next_pid,
			       .next_comm = comm };

	ws_graph_switch(g, &s);
}

/* The same, both threads in the test process. */
static inline void graph_test_switch_named(struct ws_graph *g, uint64_t ms, uint16_t cpu,
					   uint32_t prev, uint32_t state, uint32_t next,
					   const char *comm)
{
	graph_test_switch_to(g, ms, cpu, prev, state, next, next ? GRAPH_TEST_PID : 0, comm);
}

/* The same, every thread named "t". */
static inline void graph_test_switch(struct ws_graph *g, uint64_t ms, uint16_t cpu, uint32_t prev,
				     uint32_t state, uint32_t next)
{
	graph_test_switch_named(g, ms, cpu, prev, state, next, "t");
}

/*
 * @wakee woken at @ms on @cpu by @waker; @off_ms: its switch-out, on @off_cpu, reported only
 * now by a source that summarises (0: it was reported at the time).
 */
static inline void graph_test_wake_off(struct ws_graph *g, uint64_t ms, uint16_t cpu,
				       uint32_t waker, uint32_t wakee, uint64_t off_ms,
				       uint16_t off_cpu)
{
	struct ws_wake w = { .sz = sizeof(w),
			     .ts = ms * GRAPH_TEST_MS,
			     .cpu = cpu,
			     .waker_tid = waker,
			     .waker_pid = GRAPH_TEST_PID,
			     .waker_comm = "waker",
			     .wakee_tid = wakee,
			     .wakee_pid = GRAPH_TEST_PID,
			     .off_ts = off_ms * GRAPH_TEST_MS,
			     .off_state = off_ms ? 1 : 0,
			     .off_cpu = off_cpu };

	ws_graph_wake(g, &w);
}

/* The same, the switch-out (if any) on the waking's CPU. */
static inline void graph_test_wake(struct ws_graph *g, uint64_t ms, uint16_t cpu, uint32_t waker,
				   uint32_t wakee, uint64_t off_ms)
{
	graph_test_wake_off(g, ms, cpu, waker, wakee, off_ms, cpu);
}

#endif
