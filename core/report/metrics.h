/* SPDX-License-Identifier: MIT */
/*
 * The reported waits as Prometheus metrics (text exposition format 0.0.4): off-CPU time by
 * root-cause class per process, a histogram of the waits' durations, what the tracer lost and
 * what it costs. Fed by the tracing thread with every reported wait (the same waits, segments and
 * roots as the report's root causes); written by another thread (the HTTP server), hence the
 * lock inside.
 */
#ifndef WS_METRICS_H
#define WS_METRICS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/chain.h"

/*
 * Processes with series of their own at a time (an exited one's place is taken by the next); the
 * rest are summed under pid="other", comm="other".
 */
#define WS_METRICS_MAX_PROCS 64
/* Block devices named in a label; the rest are device="other". */
#define WS_METRICS_MAX_DEVICES 16

/* The classes of root causes the metrics count time under (label cause="..."). */
enum ws_cause {
	WS_CAUSE_BLOCK_IO,
	WS_CAUSE_LOCK,
	WS_CAUSE_RUNQUEUE,
	WS_CAUSE_CPU_QUOTA,
	WS_CAUSE_IO_THROTTLE,
	WS_CAUSE_MEMORY, /* memory reclaim, direct compaction */
	WS_CAUSE_SLEEP,
	WS_CAUSE_NETWORK,
	WS_CAUSE_CPU_WORK,
	WS_CAUSE_OTHER,
	WS_CAUSE_UNKNOWN,
	WS_CAUSE_COUNT
};

/* "block_io", "lock", ...: the label value. */
const char *ws_cause_name(enum ws_cause c);
/*
 * The class of a root whose link kind is @kind ("block_io", "futex", "runqueue"...); @named false
 * (the root names no cause, ws_chain_root_of()) is unknown whatever the kind.
 */
enum ws_cause ws_cause_of(const char *kind, bool named);
/*
 * The class of a root named @key ("block I/O on vda", ws_chain_seg_root()) whose link kind is
 * @kind: ws_cause_of(), but a block request an I/O limit held back for most of its wait (the
 * blkio source names its root "I/O limit of ...") is io_throttle, not block_io.
 */
enum ws_cause ws_cause_of_root(const char *kind, bool named, const char *key);

struct ws_metrics;

/* What the tracer itself costs, read by the caller (getrusage, /proc/self/statm). */
struct ws_metrics_self {
	uint64_t user_ns, system_ns;
	uint64_t rss_bytes;
};

/* NULL on failure (errno set). */
struct ws_metrics *ws_metrics_new(void);
void ws_metrics_free(struct ws_metrics *m);

/* A reported wait (report.h: ws_wait_sink.wait, @ctx the metrics). */
void ws_metrics_wait_sink(void *ctx, struct ws_graph *g, const struct ws_chain *c, bool ranked);
/* Thread @t's short waits (ws_wait_sink.short_waits). */
void ws_metrics_short_sink(void *ctx, struct ws_graph *g, const struct ws_thread *t, uint64_t ns);
/*
 * Thread @t left the history (ws_wait_sink.gone): when it is a process's main thread, that
 * process's series end and its place goes to the next process.
 */
void ws_metrics_gone(void *ctx, const struct ws_thread *t);

/*
 * The parts the sinks add, for the tests: @ns of process @pid (@comm) off CPU for @cause, on
 * @device (block I/O; NULL otherwise); a ranked wait of @ns whose root is @cause (histogram);
 * an idle wait of @ns (not ranked); short waits.
 */
void ws_metrics_add(struct ws_metrics *m, uint32_t pid, const char *comm, enum ws_cause cause,
		    const char *device, uint64_t ns);
void ws_metrics_observe(struct ws_metrics *m, enum ws_cause cause, uint64_t ns);
void ws_metrics_idle(struct ws_metrics *m, uint32_t pid, const char *comm, uint64_t ns);
/* @ns more of waits shorter than min_block; of a thread that @exited: no process made for it. */
void ws_metrics_short(struct ws_metrics *m, uint32_t pid, const char *comm, uint64_t ns,
		      bool exited);

/* The session's counts now (ws_session_progress): records read and lost, threads followed. */
void ws_metrics_progress(struct ws_metrics *m, uint64_t records, uint64_t lost, uint64_t threads);

/* Every metric, in the exposition format, to @out. 0 or -EIO (a write failed). */
int ws_metrics_write(struct ws_metrics *m, const struct ws_metrics_self *self, FILE *out);

#endif
