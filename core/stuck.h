/* SPDX-License-Identifier: MIT */
/*
 * "Why is it stuck?": the waits still open in a set of processes, from /proc
 * and the locks' own memory, with the owner of each lock when the lock says
 * so, the chain of owners, and deadlocks (cycles in it). Used by `whyslow
 * stuck PID` and, at the end of run/attach, for the waits that never ended.
 * Needs ptrace-level access to the targets, not BPF.
 */
#ifndef WS_STUCK_H
#define WS_STUCK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "owner.h"
#include "procsnap.h"

/* A documented exit status: a deadlock was reported. */
#define WS_EXIT_DEADLOCK 3

enum ws_open_kind {
	WS_OPEN_NONE, /* not blocked */
	WS_OPEN_FUTEX,
	WS_OPEN_BLOCK_IO, /* uninterruptible, in the block layer's io_schedule */
	WS_OPEN_DISK,	  /* uninterruptible, elsewhere */
	WS_OPEN_SLEEP,	  /* nanosleep / clock_nanosleep */
	WS_OPEN_SYSCALL,  /* another blocking syscall */
	WS_OPEN_STOPPED,
	WS_OPEN_OTHER, /* blocked outside any syscall we can read */
};

struct ws_stuck_thread {
	struct ws_task_snap s;
	enum ws_open_kind kind;
	uint64_t addr; /* futex: the uaddr */
	uint32_t op;   /* futex: the op */
	struct ws_owner owner;
	uint64_t at_least_ns;  /* blocked at least this long (0: no evidence) */
	const char *since_why; /* which evidence bounds it */
	bool steady;	       /* the same wait in both samples, and it did not run between */
	bool in_cycle;
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
};

/*
 * Sample every thread of @pids twice, @gap_ns apart, and analyse. @earlier
 * (may be NULL): a snapshot from the start of tracing, so that a thread that
 * never ran since is known blocked at least since then. 0 or -errno (-ESRCH:
 * none of the processes exists).
 */
int ws_stuck_take(struct ws_stuck *st, const uint32_t *pids, int npids, uint64_t gap_ns,
		  const struct ws_stuck *earlier);
void ws_stuck_free(struct ws_stuck *st);

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

#endif
