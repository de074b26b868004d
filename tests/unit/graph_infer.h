/* SPDX-License-Identifier: MIT */
/*
 * For tests that drive the graph directly (no plugins): an edge-inference callback that
 * explains every wakeup by its waker, as the weakest claim, and the traced-process filter.
 */
#ifndef WS_TEST_GRAPH_INFER_H
#define WS_TEST_GRAPH_INFER_H

#include <stdio.h>

#include "graph.h"

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

#endif
