/* SPDX-License-Identifier: MIT */
/*
 * Perfetto / chrome://tracing export: Chrome trace-event JSON with one track
 * per traced thread (grouped by process) holding its whole timeline as it was
 * observed — running, runnable and blocked slices, each wait named by its kind
 * — so a track's slices never overlap; and, for every reported chain,
 * flow arrows from each waker's slice at the wakeup to the thread it woke. A
 * thread with no exported slice at an arrow's end (untraced, not yet seen, or a
 * kernel helper whose timeline is followed but is not the program's) gets a
 * short marker slice there for the arrow to bind to.
 * Slice names are a short fixed set ("running", "blocked: futex", "wakes"), so
 * Perfetto can group and aggregate by name; each event's values (address,
 * device, sector, the other thread of an arrow) are in its args.
 * otherData carries the anchor that maps ts (CLOCK_MONOTONIC) to wall time.
 *
 * Events are spooled to a temporary file as they arrive, so memory holds only
 * the thread table (with its markers) and the set of wakeups already drawn.
 */
#ifndef WS_PERFETTO_H
#define WS_PERFETTO_H

#include <stdint.h>
#include <stdio.h>

#include "base/clock.h"
#include "engine/chain.h"

struct ws_perfetto;

/* NULL on failure (errno set). */
struct ws_perfetto *ws_perfetto_new(void);
void ws_perfetto_free(struct ws_perfetto *p);
struct ws_stacks;
/* Blocked slices get the stacks of their waits from @stacks (as "stack"/"waker_stack" args). */
void ws_perfetto_set_stacks(struct ws_perfetto *p, const struct ws_stacks *stacks);
/*
 * Thread tracks carry their thread's cgroup as the "cgroup" arg of their thread_name metadata
 * (a process's, its leader's): @fn(@ctx, tid, pid, UINT64_MAX), the last path read for it
 * (ws_session_cgroup()), NULL when not known. A track is the thread's whole timeline: one
 * that moved shows where it was last seen. Processes are then labelled with their cgroup
 * (process_labels) and sorted by it (process_sort_index), so one cgroup's sit together.
 */
void ws_perfetto_set_cgroups(struct ws_perfetto *p,
			     const char *(*fn)(void *ctx, uint32_t tid, uint32_t pid, uint64_t ts),
			     void *ctx);
/* Add one interval of a thread's timeline (@claim: its explanation, or NULL). 0 or -errno. */
int ws_perfetto_ival(struct ws_perfetto *p, const struct ws_thread *t, const struct ws_ival *iv,
		     const struct ws_claim *claim);
/* Add the wakeup arrows of one chain. 0 or -errno. */
int ws_perfetto_chain(struct ws_perfetto *p, const struct ws_chain *c);
struct ws_request;
/* Add a request (requests.h) as an async slice of its process. 0 or -errno. */
int ws_perfetto_request(struct ws_perfetto *p, const struct ws_request *q);
/* Name a thread (the recording's thread-name records); chains name their own. 0 or -errno. */
int ws_perfetto_thread(struct ws_perfetto *p, uint32_t tid, uint32_t pid, const char *comm);
/* Write the whole trace to @out, with @clock's anchor. 0 or -errno. */
int ws_perfetto_write(struct ws_perfetto *p, FILE *out, const struct ws_clock *clock);

#endif
