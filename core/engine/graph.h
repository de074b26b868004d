/* SPDX-License-Identifier: MIT */
/*
 * The happens-before graph: one timeline per traced thread (running,
 * runnable, blocked intervals), wake edges with the claim that explains each
 * blocked interval, and per-CPU run history. Fed in timestamp order by the
 * core's scheduler model (sched/); queried by the chain walk.
 */
#ifndef WS_GRAPH_H
#define WS_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <whyslow/plugin.h>

#include "events.h"

#define WS_COMM 16
#define WS_NO_END UINT64_MAX

/*
 * One stretch of a thread's timeline, whole, as the chain walk and the reports read it (a
 * timeline keeps struct ws_span). Blocked intervals carry a claim.
 */
struct ws_ival {
	uint64_t start, end; /* end is WS_NO_END while open */
	uint32_t claim;	     /* interned claim id (blocked), 0 = none */
	uint16_t cpu;	     /* CPU it ran on (running) or ran on next (runnable) */
	uint8_t state;	     /* enum ws_thread_state */
	uint8_t flags;	     /* WS_IVAL_* */
};

/*
 * Running, yet off CPU in between for periods shorter than the resolution that the kernel
 * summed instead of reporting ([core] resolution): their causes were not recorded.
 */
#define WS_IVAL_SHORT_INSIDE 0x1
/*
 * Still going on when the records ended (set by ws_graph_flush(), which ends it there): a wait
 * still open when tracing ended, not one that ended then.
 */
#define WS_IVAL_OPEN 0x2
/*
 * Runnable, yet kept off the CPU by a cgroup's CPU quota (CFS bandwidth control throttled it):
 * not a wait for a CPU. Its claim (kind WS_CLAIM_QUOTA) names the cgroup.
 */
#define WS_IVAL_THROTTLED 0x4
#define WS_CLAIM_QUOTA "cpu_quota"
/*
 * Inside direct memory reclaim (the kernel's reclaim begin/end tracepoints bracket it): on CPU,
 * the reclaim's work, not the program's; blocked, a wait of the reclaim (a page's writeback, a
 * lock of the reclaimer). Its claim (kind WS_CLAIM_RECLAIM) names the cgroup and its limit.
 */
#define WS_IVAL_RECLAIM 0x8
#define WS_CLAIM_RECLAIM "memory_reclaim"
/* The same for direct compaction (an allocation's, mm_compaction_begin/end): its own kind. */
#define WS_CLAIM_COMPACTION "compaction"
/* A wait that is the kernel's memory.high throttle (WS_THREAD_MEMORY_HIGH): its own kind. */
#define WS_CLAIM_MEMORY_HIGH "memory_high"

/* Is @kind a claim of memory pressure: inside reclaim or compaction (WS_IVAL_RECLAIM), or the
 * memory.high throttle? */
static inline bool ws_kind_memory(const char *kind)
{
	return !__builtin_strcmp(kind, WS_CLAIM_RECLAIM) ||
	       !__builtin_strcmp(kind, WS_CLAIM_COMPACTION) ||
	       !__builtin_strcmp(kind, WS_CLAIM_MEMORY_HIGH);
}

/* What a running stretch with WS_IVAL_* @flags was, for root and critical-path labels. */
static inline const char *ws_ival_work(uint8_t flags)
{
	return flags & WS_IVAL_SHORT_INSIDE ? "CPU work and short waits (causes not recorded)"
					    : "CPU work";
}

/*
 * One stretch as a timeline keeps it: without its end, which is where the next one begins (a
 * thread's stretches are contiguous: every change of state closes one and opens the next at
 * the same time), the last one's at the thread's last_end. 16 bytes instead of a struct
 * ws_ival's 24: a history is millions of them, each byte memory the kernel zeroes as it is
 * first touched and the chain walks read; max_history counts this size.
 */
struct ws_span {
	uint64_t start;
	uint32_t claim; /* interned claim id (blocked), 0 = none */
	uint16_t cpu;	/* CPU it ran on (running) or ran on next (runnable) */
	uint8_t state;	/* enum ws_thread_state */
	uint8_t flags;	/* WS_IVAL_* */
};

/*
 * The causes of a thread's summarised periods (events.h, graph_short.c): summed over its life,
 * the first WS_SHORT_KEPT causes (the rest only in its short_waits totals); and per running
 * stretch they were in (the stretch's start), in time order, evicted with the stretch.
 */
#define WS_SHORT_KEPT 8
struct ws_short_batch {
	uint64_t start;
	struct ws_short_waits total; /* every summarised period of the stretch, named or not */
	uint32_t nc;
	struct ws_short_cause c[WS_SHORT_CAUSES];
};

struct ws_short_sum {
	uint32_t nkept;
	struct ws_short_cause kept[WS_SHORT_KEPT];
	struct ws_short_batch *b;
	size_t n, cap;
};

struct ws_thread {
	uint32_t tid, pid;
	char comm[WS_COMM];
	bool exited;
	/* a kernel thread working for the traced processes (ws_switch.helpers): its timeline is
	 * followed through, never reported as a victim, nor counted as the program's time */
	bool helper;
	uint64_t born, died; /* first event seen; exit (WS_NO_END while alive) */

	struct ws_span *iv; /* timeline, in time order, [head, n) live */
	size_t head, n, cap;
	uint64_t last_end;   /* where iv[n - 1] ends: WS_NO_END while it is open */
	uint64_t evicted_to; /* its timeline before this was dropped (0: nothing was) */

	/* current off-CPU period */
	uint64_t off_start; /* 0: none known */
	uint32_t off_state; /* task state it switched out in */
	uint64_t wake_ts;
	/* a wakeup that raced ahead of this thread's own switch-out */
	bool pending;
	uint64_t pending_ts;
	uint32_t pending_claim;
	/* the claim its last wakeup was explained by: the next is most often the same one */
	uint32_t last_claim;
	/* inside direct memory reclaim: the claim naming it (WS_CLAIM_RECLAIM, held); 0: not */
	uint32_t reclaim_claim;
	/*
	 * a reclaim at a memory cgroup's limit that ended in its current run on CPU (held; 0:
	 * none since its last switch-in): a swap-in it then waits for is named with that group
	 */
	uint32_t limit_claim;
	/* blocked, since its last switch-in, in the memory.high throttle: its claim (held) */
	uint32_t high_claim;

	/* off-CPU periods the source summarised instead of reporting (shorter than the resolution)
	 */
	struct ws_short_waits short_waits;
	struct ws_short_sum *shs; /* what they waited for (NULL: nothing said) */

	struct ws_thread *next_dead;
	/* the previous incarnation of this tid that exited and is still kept (graph_evict.c) */
	struct ws_thread *older_dead;
};

/* Where stretch @i of @t's timeline ends (WS_NO_END: it has not). */
static inline uint64_t ws_thread_end(const struct ws_thread *t, size_t i)
{
	return i + 1 < t->n ? t->iv[i + 1].start : t->last_end;
}

/* Stretch @i of @t's timeline, whole. */
static inline struct ws_ival ws_thread_ival(const struct ws_thread *t, size_t i)
{
	const struct ws_span *p = &t->iv[i];

	return (struct ws_ival){ .start = p->start,
				 .end = ws_thread_end(t, i),
				 .claim = p->claim,
				 .cpu = p->cpu,
				 .state = p->state,
				 .flags = p->flags };
}

/*
 * A walk over @t's timeline is at stretch @i: start fetching the one it reads a little later.
 * The walks read millions of stretches in order (the chain over a busy waker, the flush at the
 * end), and the processor's own prefetch stops at each 4 KiB page: without this, most of their
 * time was waiting for memory.
 */
static inline void ws_thread_prefetch(const struct ws_thread *t, size_t i)
{
	if (i + 64 < t->n)
		__builtin_prefetch(&t->iv[i + 64]);
}

/* A wait long enough to report, handed to the on_wait callback at switch-in. */
struct ws_wait_done {
	struct ws_thread *t;
	uint64_t start, wake, end; /* off CPU at start, woken at wake, on CPU at end */
	uint16_t cpu;		   /* CPU it got back on */
	bool below_min_block;	   /* only the followed thread's (ws_graph_follow) */
	/*
	 * Set by the session, not the graph: a signal ended the wait, it killed the thread, and
	 * the lock it waited for, read in its own context as it died, names this holder, a thread
	 * of its process alive throughout the wait (session_host.c); 0: none. @held_evidence
	 * says what named it ("mutex_word").
	 */
	uint32_t held_by;
	const char *held_evidence;
};

struct ws_graph_ops {
	/*
	 * Ask the sources to explain a wait; returns 1 and fills @out, or 0. @out arrives zeroed
	 * but for its sz (claims are compared as bytes).
	 */
	int (*infer)(void *ctx, const struct ws_wait *w, struct ws_claim *out);
	/* A thread came back on CPU after an off-CPU period >= min_block. */
	void (*on_wait)(void *ctx, const struct ws_wait_done *d);
	/* Is thread group @pid traced? */
	bool (*pid_traced)(void *ctx, uint32_t pid);
	/*
	 * Optional: an interval of @t's timeline is final and leaves the history (@claim its
	 * explanation, or NULL). Every interval reaches it once, in no particular order across
	 * threads, by the time ws_graph_flush() returns; what a full timeline export needs.
	 */
	void (*on_ival)(void *ctx, const struct ws_thread *t, const struct ws_ival *iv,
			const struct ws_claim *claim);
	/*
	 * Optional: thread @t, exited, leaves the history, every interval of it handed to
	 * on_ival: whoever keeps something per thread can let it go (not called at the end).
	 */
	void (*on_gone)(void *ctx, const struct ws_thread *t);
	/* The resource @c is about ("block I/O on vda"): length written, 0 if it names none. */
	int (*resource)(void *ctx, const struct ws_claim *c, char *buf, size_t len);
	/* The root cause a chain ending in @c has ("timer sleep in app"): length, 0 if none. */
	int (*root_label)(void *ctx, const struct ws_claim *c, const char *comm, char *buf,
			  size_t len);
	/*
	 * Optional: add to @c what names cgroup @cg (ws_switch.next_throttle_cg), whose CPU quota
	 * throttled thread @tid of @pid: "quota_cgroup" (its path; not "cgroup", the key of the
	 * link's own thread's), "quota_us", "period_us". Called at each throttled period's end;
	 * whoever reads files for it reads them once per cgroup.
	 */
	void (*quota_name)(void *ctx, uint32_t tid, uint32_t pid, uint64_t cg, struct ws_claim *c);
	/*
	 * Optional: add to @c the path of memory cgroup @cg (ws_thread_event.reclaim_cg), at whose
	 * limit thread @tid of @pid reclaims: "reclaim_cgroup". Called at each reclaim's start;
	 * whoever reads files for it reads them once per cgroup.
	 */
	void (*reclaim_name)(void *ctx, uint32_t tid, uint32_t pid, uint64_t cg,
			     struct ws_claim *c);
	void *ctx;
};

struct ws_graph;

/*
 * History older than @max_window_ns, or beyond @max_history_bytes of intervals and CPU runs
 * (0: no limit), is dropped; waits reaching back past what is kept are marked incomplete.
 */
struct ws_graph *ws_graph_new(const struct ws_graph_ops *ops, uint64_t min_block_ns,
			      uint64_t max_window_ns, uint64_t max_history_bytes);
void ws_graph_free(struct ws_graph *g);
/* Hand on_wait every wait of thread @tid of at least @min_ns, however short (critical path). */
void ws_graph_follow(struct ws_graph *g, uint32_t tid, uint64_t min_ns);

void ws_graph_switch(struct ws_graph *g, const struct ws_switch *sw);
void ws_graph_wake(struct ws_graph *g, const struct ws_wake *wk);
void ws_graph_thread_event(struct ws_graph *g, const struct ws_thread_event *ev);
/*
 * Thread @tid was already off CPU (in @off_state) since @since when tracing
 * began, and nothing has been seen of it yet: its wait is open from @since.
 */
void ws_graph_open_wait(struct ws_graph *g, uint32_t tid, uint32_t pid, const char *comm,
			uint64_t since, uint32_t off_state);
/*
 * Tracing ends with thread @tid still blocked (in @off_state), at the latest since @since
 * (CLOCK_MONOTONIC; 0: no evidence), as /proc showed at @at: its timeline ends in that wait,
 * still open, explained by @c (NULL: nothing said what it waits for). A switch-out the source
 * had not written yet (it summarises short periods) is put in at @since, never before the run
 * the records show; a wait they already show is kept from its start. The stream's end moves
 * to @at if that is later. Call once every record is in; true when the timeline now ends in
 * this wait.
 */
bool ws_graph_open_at_end(struct ws_graph *g, uint32_t tid, uint64_t since, uint64_t at,
			  uint32_t off_state, const struct ws_claim *c);
/* Records were lost on some CPU between @from and @to. */
void ws_graph_loss(struct ws_graph *g, uint64_t from, uint64_t to);
/* Drop history no future chain can need; call now and then with the stream's time. */
void ws_graph_evict(struct ws_graph *g, uint64_t now);
/*
 * The stream has ended: hand every interval still kept to ops.on_ival (an open one ends at the
 * last record's time, flagged WS_IVAL_OPEN); after this on_ival is no longer called.
 */
void ws_graph_flush(struct ws_graph *g);
/*
 * Which pass of handing intervals to ops.on_ival (an eviction, the flush) the graph is in.
 * Within one, no record is taken in: a claim, and the name of any thread, stays as it is, and
 * a claim's address names one claim (one dropped meanwhile is not replaced).
 */
uint64_t ws_graph_ival_pass(const struct ws_graph *g);
/* Thread group @pid is gone: retire any thread of it still open (its end was not seen). */
void ws_graph_retire_pid(struct ws_graph *g, uint32_t pid, uint64_t ts);

/* Lookups for the chain walk. */
struct ws_thread *ws_graph_thread_at(struct ws_graph *g, uint32_t tid, uint64_t ts);
struct ws_thread *ws_graph_thread(struct ws_graph *g, uint32_t tid);
const struct ws_claim *ws_graph_claim(struct ws_graph *g, uint32_t id);
/*
 * Claim fields as every writer adds them (the sources through ws_host.claim_*, the core its
 * own): at most WS_CLAIM_FIELDS, the first ones kept; each zeroed first, as interning compares
 * bytes. ws_claim_field_add() returns NULL when the claim is full.
 */
struct ws_field *ws_claim_field_add(struct ws_claim *c, const char *key, enum ws_field_type t);
void ws_claim_put_u64(struct ws_claim *c, const char *key, uint64_t v);
void ws_claim_put_hex(struct ws_claim *c, const char *key, uint64_t v);
void ws_claim_put_str(struct ws_claim *c, const char *key, const char *v);
/*
 * Claims about one resource (same source, kind and resource, e.g. every request on vda) share
 * a group key; a claim that names no resource is a group of its own.
 */
uint64_t ws_graph_claim_group(struct ws_graph *g, uint32_t id);
/* The resource claim @c is about, from its source; 0 (buf empty) when it names none. */
int ws_graph_resource(struct ws_graph *g, const struct ws_claim *c, char *buf, size_t len);
/* The root cause a chain ending in @c has, from its source; 0 (buf empty) when it names none. */
int ws_graph_root_label(struct ws_graph *g, const struct ws_claim *c, const char *comm, char *buf,
			size_t len);
/*
 * The summarised periods of @t's running stretches from the one @a falls in to those that
 * began before @b, and the WS_SHORT_SHOWN costliest of their causes (other_*: the rest). False
 * when none of them had causes said (a recording before sched 1.6, or none summarised).
 */
#define WS_SHORT_SHOWN 4
struct ws_short_summary {
	uint64_t n, ns;
	uint32_t nc;
	struct ws_short_cause c[WS_SHORT_SHOWN];
	uint64_t other_n, other_ns;
};
bool ws_graph_short_in(const struct ws_thread *t, uint64_t a, uint64_t b,
		       struct ws_short_summary *out);
/* What @c waited for: "futex 0x7f…", "read fd 5", "the runqueue (preempted)". As snprintf. */
int ws_short_cause_label(const struct ws_short_cause *c, char *buf, size_t len);
/* @out->n and ns set: the costliest WS_SHORT_SHOWN of the @n causes @v, the rest in other_*. */
void ws_short_top(struct ws_short_summary *out, const struct ws_short_cause *v, uint32_t n);

/* Index of the first interval of @t that ends after @ts (may be t->n). */
size_t ws_thread_find(const struct ws_thread *t, uint64_t ts);
/*
 * Might an exited thread alive at @ts have been dropped early (too many exited threads were
 * kept)? Then a waker not found is not known to be untraced.
 */
bool ws_graph_dead_dropped(const struct ws_graph *g, uint64_t ts);
/* Did memory run out (history not kept) during [from, to]? */
bool ws_graph_window_oom(struct ws_graph *g, uint64_t from, uint64_t to);
/* Did records get lost during [from, to]? */
bool ws_graph_window_lost(struct ws_graph *g, uint64_t from, uint64_t to);
/* @cpu's run history before this was dropped (0: nothing was). */
uint64_t ws_graph_cpu_evicted_to(struct ws_graph *g, uint16_t cpu);
/*
 * The machine has @ncpus CPUs (at most WS_MAX_CPUS), ids 0 to @ncpus - 1: their state is
 * made now, and a switch on another CPU is refused (counted in ws_graph_stats.cpu_refused).
 * Without it, CPUs are added as seen, up to WS_MAX_CPUS. 0, -EINVAL or -ENOMEM.
 */
int ws_graph_set_ncpus(struct ws_graph *g, uint32_t ncpus);
/* Name of the thread (any, traced or not) last seen with @tid; "?" if none. */
const char *ws_graph_comm(struct ws_graph *g, uint32_t tid);
uint32_t ws_graph_pid_of(struct ws_graph *g, uint32_t tid);

/* Threads that ran on @cpu during [from, to], longest first. Returns count written. */
struct ws_cpu_user {
	uint32_t tid, pid;
	uint64_t ns;
};
int ws_graph_cpu_users(struct ws_graph *g, uint16_t cpu, uint64_t from, uint64_t to,
		       struct ws_cpu_user *out, int max);
/*
 * ws_cpu_user.tid of a stretch whose holder was not recorded: after a switch-out the kernel
 * summarised (reported late), what ran next on that CPU went unrecorded (untraced tasks).
 */
#define WS_CPU_UNRECORDED UINT32_MAX
/* How many holders of a CPU the chain counts over a stretch; more are not named. */
#define WS_CPU_HOLDERS 64
/* Of ws_graph_cpu_users(.., WS_CPU_HOLDERS), the idle task's (tid 0) time; 0 if not among them. */
uint64_t ws_graph_cpu_idle(struct ws_graph *g, uint16_t cpu, uint64_t from, uint64_t to);

struct ws_graph_stats {
	uint64_t threads, switches, wakes, waits_unexplained, races, live_intervals, claims;
	/* a thread left the CPU while its last return to it never arrived */
	uint64_t switch_ins_unseen;
	uint64_t history_bytes;	      /* intervals and CPU runs kept now */
	uint64_t history_trims;	      /* times max_history moved the horizon forward */
	uint64_t shortest_history_ns; /* least history kept when it did */
	uint64_t oom;		      /* times memory ran out and history was not kept */
	uint64_t dead_dropped;	      /* exited threads dropped early: too many were kept */
	uint64_t cpu_refused;	      /* switches on a CPU past the machine's (refused) */
};
void ws_graph_stats(struct ws_graph *g, struct ws_graph_stats *st);

#endif
