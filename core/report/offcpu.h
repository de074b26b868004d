/* SPDX-License-Identifier: MIT */
/*
 * Where every traced thread's time off CPU went, conserved: the waits reported as chains (at
 * least min_block), the shorter waits the analysis saw one by one (counted per thread and
 * resource, not chained), and the periods the kernel summarised below the resolution (counted,
 * by cause from sched 1.6). Fed with every final interval of every timeline and every chain.
 */
#ifndef WS_OFFCPU_H
#define WS_OFFCPU_H

#include <stdint.h>
#include <stdio.h>

#include "engine/chain.h"
#include "engine/graph.h"

struct ws_offcpu;

/* Totals over every thread. */
struct ws_offcpu_totals {
	uint64_t off_ns;		      /* every off-CPU interval of every timeline */
	uint64_t reported_ns, reported_n;     /* in off-CPU periods of at least min_block */
	uint64_t short_ns, short_n;	      /* in shorter periods, seen one by one */
	uint64_t open_ns;		      /* in a period still going on at the end */
	uint64_t summarised_ns, summarised_n; /* summarised in the kernel (not in any interval) */
	bool summarised_causes;		      /* and the kernel said what some waited for */
	/*
	 * The reported waits (reported_ns) by what the report did with them: ranked in the
	 * reasons, their root naming a cause or not; idle and not ranked (--include-idle ranks
	 * them); not reported (filtered out, or the chain could not be built).
	 */
	uint64_t explained_ns, unexplained_ns;
	uint64_t idle_ns, idle_n;
	uint64_t not_reported_ns;
	uint64_t chains_ns; /* the ranked chains' own total: explained + unexplained */
};

struct ws_offcpu *ws_offcpu_new(uint64_t min_block_ns);
void ws_offcpu_free(struct ws_offcpu *oc);
/* A final interval of @t's timeline (in time order per thread). 0 or -ENOMEM. */
int ws_offcpu_ival(struct ws_offcpu *oc, struct ws_graph *g, const struct ws_thread *t,
		   const struct ws_ival *iv, const struct ws_claim *claim);
/*
 * Thread @t left the graph (ws_graph_ops.on_gone): no interval of it comes again. Past a
 * bound, the gone threads with the least time in short waits are no longer kept one by one
 * (their time stays in the totals). 0 or -ENOMEM.
 */
int ws_offcpu_gone(struct ws_offcpu *oc, const struct ws_thread *t);
/*
 * Thread @t's time in short waits (seen one by one, and summarised in the kernel) counted since
 * the last call for it (0: none, or @t not kept): what a counter of them adds (the metrics).
 */
uint64_t ws_offcpu_short_since(struct ws_offcpu *oc, const struct ws_thread *t);
/* Gone threads no longer kept one by one: their short_waits lines are not written. */
uint64_t ws_offcpu_dropped(const struct ws_offcpu *oc);
/*
 * A reported chain (its off-CPU period, counted independently of the intervals): @ranked in
 * the reasons, with @unexplained_ns of it whose root names no cause; or idle and not ranked.
 */
int ws_offcpu_chain(struct ws_offcpu *oc, const struct ws_chain *c, bool ranked,
		    uint64_t unexplained_ns);
void ws_offcpu_totals(const struct ws_offcpu *oc, struct ws_offcpu_totals *out);
/* Text: the conservation line and the threads with the most time in short waits. */
void ws_offcpu_text(const struct ws_offcpu *oc, FILE *out, int top);
/* JSON: one {"type":"short_waits",...} line per thread that had any. */
void ws_offcpu_json_threads(const struct ws_offcpu *oc, FILE *out);
/* JSON: the totals as members of the summary object (",\"off_cpu_ns\":..."). */
void ws_offcpu_json_totals(const struct ws_offcpu *oc, FILE *out);

#endif
