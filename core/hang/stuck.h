/* SPDX-License-Identifier: MIT */
/*
 * "Why is it stuck?": the waits still open in a set of processes, from /proc,
 * put in words by the sources (ws_plugin.describe_open), with the holder of
 * each lock when the lock itself says so (open_owner), the chain of holders,
 * and deadlocks (cycles in it). Used by `whyslow stuck PID` and, at the end
 * of run/attach, for the waits that never ended. Needs ptrace-level access to
 * the targets, not BPF.
 */
#ifndef WS_STUCK_H
#define WS_STUCK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <whyslow/plugin.h>

#include "gil_wait.h"
#include "filelocks.h"
#include "procsnap.h"
#include "stacks/stackrec.h"

/* A documented exit status: a deadlock was reported. */
#define WS_EXIT_DEADLOCK 3

/* What the core itself sees of a thread; what a blocked one waits on is the sources' to say. */
enum ws_open_kind {
	WS_OPEN_NONE,	 /* not blocked */
	WS_OPEN_BLOCKED, /* see the sources' description (claim, what) */
	WS_OPEN_STOPPED, /* stopped by a signal or a debugger */
};

/*
 * The sources that describe open waits (ws_plugin.describe_open / open_owner): a session's
 * plugins (ws_session_open_sources). NULL where taken: every blocked thread is "unknown".
 */
struct ws_open_sources {
	/* Describe @w into @c and @what: the describing source's index, or -1 when none did. */
	int (*describe)(void *ctx, const struct ws_open_wait *w, struct ws_claim *c, char *what,
			size_t len);
	/* Source @source's owner of the lock @c is about: 1 filled, 0 not a lock, -errno. */
	int (*owner)(void *ctx, int source, const struct ws_open_wait *w, const struct ws_claim *c,
		     ws_tid_live_fn is_live, void *live_ctx, struct ws_open_owner *out);
	void *ctx;
};

struct ws_stuck_thread {
	struct ws_task_snap s;
	enum ws_open_kind kind;
	int source;	       /* BLOCKED: the source that described it (-1: none) */
	struct ws_claim claim; /* its description (source >= 0): kind, fields */
	char what[160];	       /* ... in words, after "blocked on" */
	bool lock;	       /* the source said it waits for a lock: @owner says who holds it */
	struct ws_open_owner owner; /* owner.tid 0: no holder named (owner.why) */
	uint64_t at_least_ns;	    /* blocked at least this long (0: no evidence) */
	const char *since_why;	    /* which evidence bounds it */
	bool steady;		    /* the same wait in both samples, and it did not run between */
	bool in_cycle;
	/* the wait did not end: this signal killed the thread in it (killed.h; 0: still open) */
	uint32_t killed_by;
	/* WS_STUCK_STACKS: its user stack when sampled, innermost first (ustack_now.h); NULL
	 * with @ustack_why saying why not (static text; NULL too: not read) */
	struct ws_stack *ustack;
	const char *ustack_why;
	/* asleep (nanosleep): locks other processes held on files its process has open, from
	 * /proc/locks (filelocks.h), malloc'd; evidence that it may poll for one, no more */
	struct ws_file_lock *flocks;
	uint32_t nflocks;
	/* with @flocks: a frame of its user stack that retries a lock (sqlite3InvokeBusyHandler),
	 * pointing into @ustack; NULL: none seen */
	const char *polls_in;
	/* asleep where take_gil waits: the GIL's state as this sample read it (gil_wait.h) */
	struct ws_gil_wait gil;
};

struct ws_stuck {
	struct ws_stuck_thread *t;
	size_t n;
	size_t *cycles, *cycle_len; /* see ws_waitfor_cycles */
	int ncycles;
	uint64_t mono_ns, wall_ns; /* when the (second) sample was taken */
	bool no_syscall_access;	   /* /proc/.../syscall could not be read for some thread */
	size_t n_total;		   /* threads looked at, when more than @n (0: @n) */
	void *texts;		   /* from a recording: what its strings point into */
	/* the waits a fatal signal ended, as they were at the kill (killed.h), not still open */
	bool at_kill;
};

/*
 * Sample every thread of @pids twice, @gap_ns apart, and analyse. @earlier
 * (may be NULL): a snapshot from the start of tracing, so that a thread that
 * never ran since is known blocked at least since then. 0 or -errno (-ESRCH:
 * none of the processes exists).
 */
int ws_stuck_take(struct ws_stuck *st, const uint32_t *pids, int npids, uint64_t gap_ns,
		  const struct ws_stuck *earlier, const struct ws_open_sources *src);
/*
 * The same, with WS_STUCK_* @flags. WS_STUCK_STACKS: read the user stack of every thread off
 * CPU in the (second) sample, from its memory (ustack_now.h), before the sources describe its
 * wait (they see it as ws_open_wait.ustack). A recording does not keep them.
 */
#define WS_STUCK_STACKS 1u
int ws_stuck_take_flags(struct ws_stuck *st, const uint32_t *pids, int npids, uint64_t gap_ns,
			const struct ws_stuck *earlier, const struct ws_open_sources *src,
			unsigned int flags);
/*
 * Describe @st's blocked threads again with @src (may be NULL): a recording keeps what /proc
 * said and who held each lock, and the sources of the report put it in words.
 */
void ws_stuck_describe(struct ws_stuck *st, const struct ws_open_sources *src);
/*
 * The holder of the lock @t waits for, as @t's source reads it from @w (@is_live vouches for
 * the tid it names), into t->owner; a lock whose memory was not read says @unreadable. Both
 * snapshots, /proc's (stuck.c) and the waits at a kill (killed.c), name holders this way.
 */
void ws_stuck_owner_of(struct ws_stuck_thread *t, const struct ws_open_sources *src,
		       const struct ws_open_wait *w, ws_tid_live_fn is_live, void *live_ctx,
		       const char *unreadable);
/*
 * The deadlock cycles among @st's threads, through the owners their locks named (@steady_only:
 * only of waits seen the same in both samples), into st->cycles and each thread's in_cycle.
 * 0, or -ENOMEM having freed @st.
 */
int ws_stuck_cycles(struct ws_stuck *st, bool steady_only);
void ws_stuck_free(struct ws_stuck *st);
/* @n threads of @t and their stacks (the sampler and the recording's decoder allocate them) */
void ws_stuck_free_threads(struct ws_stuck_thread *t, size_t n);

/*
 * @t's user stack (WS_STUCK_STACKS) as a WS_KIND_STACK record of its wait, from when it had begun
 * by (ws_stuck_since) to the sample: the stack a link of that wait finds once it ends (a wait
 * in progress at attach, whose start no BPF program saw). 0 with *@out malloc'd, -ENOENT when
 * it has none, -ENOMEM.
 */
int ws_stuck_stack_record(const struct ws_stuck_thread *t, struct ws_rec_hdr **out);

/* The thread @tid among @n threads of @t, or NULL. */
static inline const struct ws_stuck_thread *ws_stuck_find(const struct ws_stuck_thread *t, size_t n,
							  uint32_t tid)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].s.tid == tid)
			return &t[i];
	return NULL;
}

/* When @t's wait began at the latest (CLOCK_MONOTONIC); 0 without evidence. */
static inline uint64_t ws_stuck_since(const struct ws_stuck_thread *t)
{
	return t->at_least_ns && t->at_least_ns < t->s.read_mono_ns
		       ? t->s.read_mono_ns - t->at_least_ns
		       : 0;
}

/*
 * Write the open waits of at least @min_block_ns (and every thread of a
 * deadlock or an owner chain), then the deadlocks. @json: JSON Lines
 * objects "open_wait" and "deadlock". Returns the number of deadlocks.
 */
int ws_stuck_print(FILE *f, const struct ws_stuck *st, uint64_t min_block_ns, bool json,
		   const char *heading);

/* The text heading of @st's waits at the end of a run or a report: still open, or at a kill. */
static inline const char *ws_stuck_heading(const struct ws_stuck *st)
{
	return st->at_kill ? "Blocked when a signal killed them (waits at the kill)"
			   : "Still blocked when tracing ended (open waits)";
}

#endif
