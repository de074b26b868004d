// SPDX-License-Identifier: MIT
/*
 * The claims of direct memory reclaim (WS_CLAIM_RECLAIM): what a thread's stretches inside a
 * reclaim bracket are named by. The bracket is the kernel's own (its reclaim begin/end
 * tracepoints, in the thread's context), so the label comes from what the thread was doing,
 * never from overlap in time with anything else. graph.c marks the stretches.
 */
#include <stdio.h>
#include <string.h>

#include "graph_impl.h"
#include "base/util.h"

uint32_t graph_reclaim_claim(struct ws_graph *g, const struct ws_thread *t,
			     const struct ws_thread_event *ev)
{
	struct ws_claim c;

	ws_zero(&c, sizeof(c));
	c.sz = sizeof(c);
	c.strength = WS_CLAIM_SPECIFIC;
	c.root = true;
	c.owner = UINT16_MAX;
	if (ev->type == WS_THREAD_MEMORY_HIGH) {
		snprintf(c.kind, sizeof(c.kind), "%s", WS_CLAIM_MEMORY_HIGH);
		snprintf(
			c.evidence, sizeof(c.evidence),
			"blocked in a memory stall outside reclaim, its memory cgroup past memory.high");
		ws_claim_put_str(&c, "reclaim", "high_throttle");
		ws_claim_put_str(&c, "limit", "high");
		ws_claim_put_u64(&c, "limit_bytes", ev->reclaim_limit);
		ws_claim_put_u64(&c, "reclaim_cgroup_id", ev->reclaim_cg);
		if (g->ops.reclaim_name)
			g->ops.reclaim_name(g->ops.ctx, t->tid, t->pid, ev->reclaim_cg, &c);
		return graph_claim_intern(g, &c);
	}
	snprintf(c.kind, sizeof(c.kind), "%s",
		 ev->reclaim_compaction ? WS_CLAIM_COMPACTION : WS_CLAIM_RECLAIM);
	snprintf(
		c.evidence, sizeof(c.evidence), "%s",
		ev->reclaim_compaction
			? "on CPU inside direct compaction (mm_compaction_begin to its end)"
		: ev->reclaim_memcg
			? "on CPU inside memory cgroup reclaim (mm_vmscan_memcg_reclaim_begin to its end)"
			: "on CPU inside direct reclaim (mm_vmscan_direct_reclaim_begin to its end)");
	ws_claim_put_str(&c, "reclaim",
			 ev->reclaim_compaction ? "compaction"
			 : ev->reclaim_memcg	? "memcg"
						: "global");
	if (ev->reclaim_compaction)
		ws_claim_put_u64(&c, "order", ev->reclaim_order);
	if (ev->reclaim_memcg && ev->reclaim_limit_kind) {
		ws_claim_put_str(&c, "limit",
				 ev->reclaim_limit_kind == WS_RECLAIM_LIMIT_HIGH ? "high" : "max");
		ws_claim_put_u64(&c, "limit_bytes", ev->reclaim_limit);
		ws_claim_put_u64(&c, "reclaim_cgroup_id", ev->reclaim_cg);
		if (g->ops.reclaim_name)
			g->ops.reclaim_name(g->ops.ctx, t->tid, t->pid, ev->reclaim_cg, &c);
	}
	return graph_claim_intern(g, &c);
}

uint32_t graph_reclaim_wait(struct ws_graph *g, uint32_t reclaim, uint32_t wait)
{
	const struct ws_claim *r = ws_graph_claim(g, reclaim), *w = ws_graph_claim(g, wait);
	struct ws_claim c;
	uint32_t id;

	if (!r)
		return wait;
	graph_claim_unpack(r, &c);
	snprintf(
		c.evidence, sizeof(c.evidence), "%s",
		strcmp(ws_claim_str(r, "reclaim", ""), "high_throttle") == 0
			? "blocked in a memory stall outside reclaim, its memory cgroup past memory.high"
		: strcmp(ws_claim_str(r, "reclaim", ""), "compaction") == 0
			? "blocked inside direct compaction (mm_compaction_begin to its end)"
		: strcmp(ws_claim_str(r, "reclaim", ""), "memcg") == 0
			? "blocked inside memory cgroup reclaim (mm_vmscan_memcg_reclaim_begin to its end)"
			: "blocked inside direct reclaim (mm_vmscan_direct_reclaim_begin to its end)");
	/* what ended the wait stays said: the reclaim waited on it (a writeback, a lock) */
	if (w) {
		char kind[sizeof(w->kind) + 1];

		snprintf(kind, sizeof(kind), "%.*s", (int)sizeof(w->kind), w->kind);
		ws_claim_put_str(&c, "waited_on", kind);
		c.woken_by = w->woken_by;
		c.syscall = w->syscall;
	}
	id = graph_claim_intern(g, &c);
	if (!id)
		return wait;
	graph_claim_put(g, wait);
	return id;
}

uint32_t graph_swapin_limit(struct ws_graph *g, uint32_t reclaim, uint32_t wait)
{
	const struct ws_claim *r = ws_graph_claim(g, reclaim), *w = ws_graph_claim(g, wait);
	const char *path;
	struct ws_claim c;
	uint32_t id;

	if (!r || !w || strncmp(w->kind, "block_io", sizeof(w->kind)) ||
	    strcmp(ws_claim_str(w, "fault", ""), "swap_in") || !ws_claim_field(r, "limit_bytes"))
		return wait;
	graph_claim_unpack(w, &c);
	path = ws_claim_str(r, "reclaim_cgroup", NULL);
	if (path)
		ws_claim_put_str(&c, "memory_cgroup", path);
	else
		ws_claim_put_u64(&c, "memory_cgroup_id", ws_claim_u64(r, "reclaim_cgroup_id", 0));
	ws_claim_put_u64(&c, "limit_bytes", ws_claim_u64(r, "limit_bytes", 0));
	id = graph_claim_intern(g, &c);
	if (!id)
		return wait;
	graph_claim_put(g, wait);
	return id;
}
