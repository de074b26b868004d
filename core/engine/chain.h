/* SPDX-License-Identifier: MIT */
/*
 * The chain walk: from a wait that just ended back to its root cause, along
 * wake edges only. A thread enters a chain because it was proven to wake the
 * thread before it; overlap in time is used only inside that thread's own
 * timeline, never to pick a thread.
 */
#ifndef WS_CHAIN_H
#define WS_CHAIN_H

#include "graph.h"

#define WS_CHAIN_MAX_LINKS 16
#define WS_CHAIN_MAX_RAN 4

/* Link kinds the core itself produces (sources name theirs in claims). */
#define WS_KIND_RUNNING "running"
#define WS_KIND_RUNQUEUE "runqueue"
#define WS_KIND_UNKNOWN "unknown"
/* Runnable on a CPU that was idle: the CPU waking up (IPI, C-state exit), not contention. */
#define WS_KIND_WAKEUP_LATENCY "wakeup_latency"

struct ws_link {
	const struct ws_thread *thread;
	const char *kind;
	uint32_t tid, pid;
	const char *comm;
	uint64_t start, dur;
	uint32_t woken_by; /* 0: none */
	bool has_woken_by;
	/*
	 * The holder of the lock the victim's wait, ended by a signal, waited for (link 0 only,
	 * ws_wait_done.held_by); 0: none. What it named is in @held_evidence ("mutex_word").
	 */
	uint32_t held_by;
	const char *held_evidence;
	const struct ws_claim *claim; /* NULL for core kinds */
	const char *evidence;
	uint16_t cpu; /* running/runqueue */
	int nran;     /* runqueue: who held the CPU (never the idle task) */
	struct ws_cpu_user ran[WS_CHAIN_MAX_RAN];
	/* holders beyond ran[] (who held the CPU least), how many and their time: a list that is
	 * cut says so */
	uint32_t ran_more;
	uint64_t ran_more_ns;
	uint64_t idle_ns; /* runqueue/wakeup_latency: of dur, the CPU ran its idle task */
	/*
	 * The link stands for @waits separate intervals of the thread (waits when
	 * blocked, stretches when running or runnable), @dur in all; the longest
	 * was @longest. One wait: dur == longest.
	 */
	uint32_t waits;
	uint64_t longest;
	/* WS_IVAL_* of the stretch it stands for (running: WS_IVAL_SHORT_INSIDE) */
	uint8_t flags;
	/* running, WS_IVAL_SHORT_INSIDE: what the summarised periods in it waited for (n 0: not
	 * said, a recording before sched 1.6) */
	struct ws_short_summary shorts;
};

/*
 * A waker that switched thousands of times during a wait would give as many
 * segments; pieces shorter than 1/WS_CHAIN_SEG_PARTS of the wait are merged
 * with their neighbours instead, the merged piece named after the kind that
 * filled most of it, with every kind's share in @mix.
 */
#define WS_CHAIN_SEG_PARTS 64
#define WS_SEG_MIX 8

struct ws_seg_mix {
	const char *kind;
	const struct ws_claim *claim;
	uint64_t ns;
};

struct ws_segment {
	const struct ws_thread *thread; /* whose timeline this piece is (tids get reused) */
	const char *kind;
	uint32_t tid;
	uint64_t start, dur;
	const struct ws_claim *claim;
	int nmix; /* 0: one kind throughout */
	struct ws_seg_mix mix[WS_SEG_MIX];
};

/* A segment's root cause, as ws_chain_root_of() gives it. */
struct ws_seg_root {
	char key[96];
	/* the kind of the link the root is ("block_io", "runqueue"; the segment's own when no
	 * walk explains it): what class of cause @key is, for the metrics */
	char kind[16];
	bool named; /* its answer: the root names a cause */
	bool known; /* found already */
};

struct ws_chain {
	struct ws_thread *victim;
	uint64_t start, wake, end;
	bool incomplete;
	const char *why_incomplete;
	int nlinks;
	struct ws_link links[WS_CHAIN_MAX_LINKS];
	size_t nsegs, segs_cap;
	struct ws_segment *segs;
	char root[96];	     /* the root cause, as the summary groups it (ws_chain_settle_root()) */
	uint64_t root_ns;    /* of the wait, the segments whose root is @root */
	char links_root[96]; /* where the links end, when that is not @root; "" when it is */
	/*
	 * Each segment's root, found on first use (ws_chain_seg_root()): the report's totals,
	 * the critical path and the folded output all ask for it, and each answer is a walk over
	 * the segment's stretch of a waker's timeline. Made ready by ws_chain_build(); NULL (a
	 * chain put together by hand, or without memory): found again each time.
	 */
	struct ws_seg_root *roots;
	size_t nroots, roots_cap; /* roots[0, nroots) stand for the segments now */
};

/* The claim of the blocked interval the wait @d began with, or NULL. */
const struct ws_claim *ws_chain_wait_claim(struct ws_graph *g, const struct ws_wait_done *d);

/*
 * The root of time a CPU quota kept a thread off the CPU, from its claim (WS_CLAIM_QUOTA):
 * "CPU quota of /batch (10ms per 100ms)".
 */
void ws_quota_label(const struct ws_claim *c, char *buf, size_t len);

/*
 * The root of time inside direct memory reclaim, from its claim (WS_CLAIM_RECLAIM): "memory
 * reclaim for the memory limit of /batch (64 MB)", "direct memory reclaim (...)".
 */
void ws_reclaim_label(const struct ws_claim *c, char *buf, size_t len);

/* Build the chain of @d into @c (whose segs buffer is reused). 0 or -ENOMEM. */
int ws_chain_build(struct ws_graph *g, const struct ws_wait_done *d, struct ws_chain *c);
void ws_chain_release(struct ws_chain *c);

/*
 * The root of chain @c read off its segments, as the summary's root causes are (@root,
 * @root_ns, @links_root), and @c marked incomplete when most of it has no recorded cause: the
 * rule is at the definition. Once per reported chain, after ws_chain_build(); until then @root
 * is where the links end.
 */
void ws_chain_settle_root(struct ws_graph *g, struct ws_chain *c);

/*
 * The links that explain segment @s (its thread's timeline over its window), walked the way a
 * chain is, into @out (no segments). Returns the number of links.
 */
int ws_chain_walk_segment(struct ws_graph *g, const struct ws_segment *s, struct ws_chain *out);
/*
 * Root-cause key of the explanation of segment @s (a stretch of one thread's timeline). False
 * when that root names no cause: no wakeup or cause was recorded, or it lies before the kept
 * history.
 */
bool ws_chain_root_of(struct ws_graph *g, const struct ws_segment *s, char *buf, size_t len);
/* ws_chain_root_of(), and the kind of the link it names into @kind (NUL-terminated, cut). */
bool ws_chain_root_kind_of(struct ws_graph *g, const struct ws_segment *s, char *buf, size_t len,
			   char *kind, size_t kind_len);
/*
 * ws_chain_root_of() of segment @i of chain @c, from its cache (found now if not yet): the
 * key is valid while the chain is. @c is const as its readers hold it; only its cache fills.
 */
const struct ws_seg_root *ws_chain_seg_root(struct ws_graph *g, const struct ws_chain *c, size_t i,
					    struct ws_seg_root *scratch);

#endif
