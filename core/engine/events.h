/* SPDX-License-Identifier: MIT */
/*
 * What the core's scheduler model (sched/) feeds the graph: context switches and thread life.
 * Not part of the plugin ABI since 3.0 (the model is the core's own); wakeups are, as
 * struct ws_wake in <whyslow/plugin.h>, because every source's infer reads the one that ended
 * a wait.
 */
#ifndef WS_ENGINE_EVENTS_H
#define WS_ENGINE_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include <whyslow/plugin.h>

/*
 * Off-CPU periods of one thread shorter than the resolution, summed instead of
 * reported one by one: how many, and their time blocked and runnable.
 */
struct ws_short_waits {
	uint64_t n, blocked_ns, runnable_ns;
};

/*
 * What some of those periods waited for, summed per cause in the kernel (sched 1.6): the
 * syscall the thread blocked in, @nr of table @arch (WS_SYSCALL_NONE: in none), and its first
 * argument @res (the futex word, the fd), or WS_SHORT_RUNQUEUE (it was preempted); with the last
 * thread that woke it (@waker, 0: none seen). 32 bytes: the graph keeps some per stretch.
 */
#define WS_SHORT_CAUSES 4
#define WS_SHORT_RUNQUEUE (-2)
struct ws_short_cause {
	uint64_t res;
	int32_t nr;
	uint32_t waker;
	uint32_t n;
	uint16_t arch;
	uint8_t state; /* the task state it blocked in (its low byte) */
	uint8_t reserved;
	uint64_t ns; /* off CPU in all: blocked and then runnable */
};

/*
 * A context switch, as the scheduler model decoded it. @prev_state is the kernel's task state at
 * switch-out: 0 means preempted (still runnable); anything else means it blocked (1 interruptible,
 * 2 uninterruptible, ...).
 */
struct ws_switch {
	size_t sz;
	uint64_t ts;
	uint32_t cpu;
	uint32_t prev_tid, prev_pid;
	uint32_t prev_state;
	uint32_t next_tid, next_pid;
	const char *next_comm; /* may be NULL */
	/* what a model that summarises short periods adds (all 0: nothing) */
	uint64_t prev_run_start; /* prev got this CPU then (its switch-in may not be reported) */
	/* next left a CPU at @next_off_ts (not reported then), woken at @next_wake_ts (0: not) */
	uint64_t next_off_ts, next_wake_ts;
	uint32_t next_off_state, next_off_cpu;
	struct ws_short_waits next_short; /* next's periods not reported one by one */
	bool prev_out_later; /* prev's switch-out is reported later (late switch-out), not here */
	/*
	 * prev's last off-CPU period ended unreported: what it did since is not known; it began
	 * @prev_unseen_ns before this switch (0 or UINT32_MAX: not known, or 4.29 s or more)
	 */
	bool prev_unseen;
	uint32_t prev_unseen_ns;
	/*
	 * prev / next is a helper, a kernel thread working for the traced processes
	 * (not traced itself): its timeline is kept so chains go on through it, never reported
	 * as a victim. WS_SWITCH_*_HELPER.
	 */
	uint8_t helpers;
	/*
	 * next's period off CPU began with it throttled by a CPU quota (a cgroup's CFS bandwidth
	 * control): the cgroup whose quota ran out, by its id (the inode number of its directory;
	 * UINT64_MAX: throttled, the cgroup not found), 0 when it was not throttled; and when the
	 * throttle ended (0: not known, the whole period is the throttle's).
	 */
	uint64_t next_throttle_cg;
	uint64_t next_unthrottled_ts;
};

#define WS_SWITCH_PREV_HELPER 0x1
#define WS_SWITCH_NEXT_HELPER 0x2

/* Thread life-cycle events, as the scheduler model decoded them. */
enum ws_thread_event_type {
	WS_THREAD_NEW = 1,  /* created (fork/clone): @tid is the child */
	WS_THREAD_EXIT = 2, /* exited: @tid will not run again */
	WS_THREAD_COMM = 3, /* took the name @comm (exec, prctl, pthread_setname_np) */
	/*
	 * @causes: what its periods summarised since its last written record waited for; the
	 * record that carries their totals (a switch-in's next_short, its exit) comes next
	 */
	WS_THREAD_SHORT_CAUSES = 4,
	/*
	 * @tid begins direct memory reclaim (the kernel's reclaim tracepoints): for a memory
	 * cgroup's limit (@reclaim_memcg) or the machine's free memory; it lasts to its
	 * WS_THREAD_RECLAIM_END
	 */
	WS_THREAD_RECLAIM_BEGIN = 5,
	WS_THREAD_RECLAIM_END = 6,
	/*
	 * @tid blocks at @ts in the kernel's memory.high throttle (a memory stall outside reclaim,
	 * with @reclaim_cg past its memory.high, @reclaim_limit): the wait that begins is it
	 */
	WS_THREAD_MEMORY_HIGH = 7,
};

/* WS_THREAD_RECLAIM_BEGIN: the limit the group had reached (ws_thread_event.reclaim_limit_kind) */
#define WS_RECLAIM_LIMIT_MAX 1	/* memory.limit_in_bytes (v1), memory.max (v2) */
#define WS_RECLAIM_LIMIT_HIGH 2 /* memory.high (v2) */

struct ws_thread_event {
	size_t sz;
	uint64_t ts;
	enum ws_thread_event_type type;
	uint32_t tid, pid;
	const char *comm; /* may be NULL */
	uint32_t parent_tid;
	/*
	 * WS_THREAD_NEW: the child's cgroups as it was made, by id (the kernel's kn->id: the
	 * inode of the directory), in the cpu controller's hierarchy and the unified one; 0: not
	 * said (a recording before format 1.9)
	 */
	uint64_t cg_cpu, cg_dfl;
	/*
	 * WS_THREAD_COMM: the thread's own rename (exec, prctl; its name may stay the same), not
	 * a name another record carries for it
	 */
	bool renamed;
	/* WS_THREAD_EXIT: the thread's periods not reported one by one */
	struct ws_short_waits short_waits;
	/*
	 * WS_THREAD_EXIT: the signal that killed it (0: it exited), and then the syscall
	 * it was in as it died (nr WS_SYSCALL_NONE: none) and @mem_len bytes of the memory at
	 * that syscall's first argument, read in its own context (a futex wait's lock; 0: none)
	 */
	uint32_t exit_signal;
	struct ws_syscall sys;
	const uint8_t *mem;
	uint32_t mem_len;
	/* WS_THREAD_SHORT_CAUSES: @ncauses causes, and the totals they are part of */
	const struct ws_short_cause *causes;
	uint32_t ncauses;
	struct ws_short_waits causes_total;
	/*
	 * WS_THREAD_RECLAIM_BEGIN: for a memory cgroup's limit (else global direct reclaim); the
	 * group at its limit as it began, by id (0: none found) with that limit in bytes and which
	 * one it was (WS_RECLAIM_LIMIT_*, 0: none found)
	 */
	bool reclaim_memcg;
	/* or direct compaction for an allocation of 2^@reclaim_order pages (not reclaim) */
	bool reclaim_compaction;
	uint32_t reclaim_order;
	uint32_t reclaim_limit_kind;
	uint64_t reclaim_cg, reclaim_limit;
};

#endif
