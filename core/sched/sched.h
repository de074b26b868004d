/* SPDX-License-Identifier: MIT */
/*
 * The scheduler model, the core's own source: context switches, wakeups and thread life from its
 * BPF object (sched.bpf.c), with the stack captures of long waits. Nothing works without it (no
 * wait is seen), so it is part of the core, not a plugin. The session lists it among the sources
 * (its name, [sched] section and --sources entry are kept) through ws_sched_source, whose
 * callbacks are the fallback explanations of a wait (a waker, a timer, unknown); its records
 * are decoded here and fed to the graph by the session (ws_sched_decode), not through the
 * plugin ABI.
 */
#ifndef WS_SCHED_H
#define WS_SCHED_H

#include <whyslow/plugin.h>

#include "engine/events.h"

/* The model's descriptor: name, BPF object, configure, infer, describe, describe_open. */
extern const struct ws_plugin ws_sched_source;

/* Where decoded sched records go (the session: graph, traced set, killed waits). */
struct ws_sched_feed {
	void *ctx;
	void (*on_switch)(void *ctx, const struct ws_switch *sw);
	void (*on_wake)(void *ctx, const struct ws_wake *wk);
	void (*on_thread)(void *ctx, const struct ws_thread_event *ev);
};

/*
 * Decode one record of the model's kind range into @feed's calls, in order. Returns 0, or
 * -EINVAL for a record too short for its kind or of a kind it does not know.
 */
int ws_sched_decode(const struct ws_rec_hdr *rec, const struct ws_sched_feed *feed);

/*
 * Is @rec the model's record of a new thread? Then its ts, tid, pid and cgroup ids in @ev
 * (nothing else set): read as the record arrives, before the reorder window lets it be
 * decoded (a short-lived child may be gone by then).
 */
bool ws_sched_new_thread(const struct ws_rec_hdr *rec, struct ws_thread_event *ev);

/*
 * The threads record @rec of the model names (a switch's prev and next, a wakeup's waker and
 * wakee, a rename's thread), at most 2, into @tid[] and @pid[]: how many. For what is read once
 * per thread as its first record arrives (its cgroup), before the reorder window.
 */
int ws_sched_threads_named(const struct ws_rec_hdr *rec, uint32_t tid[2], uint32_t pid[2]);

/*
 * Is @rec the model's record of a reclaim beginning at a memory cgroup's limit, that group
 * found? Then its id in *@cg: read as the record arrives, as the thread's cgroup is.
 */
bool ws_sched_reclaim_cg(const struct ws_rec_hdr *rec, uint64_t *cg);

#endif
