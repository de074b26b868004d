/* SPDX-License-Identifier: MIT */
/* Records of the sched source; shared by sched.bpf.c and sched.c only. */
#ifndef WHYSLOW_SCHED_REC_H
#define WHYSLOW_SCHED_REC_H

#include <whyslow/record.h>

/* Numbers are never reused. */
#define WS_SCHED_SWITCH (WS_KIND_SCHED + 1)
#define WS_SCHED_WAKING (WS_KIND_SCHED + 2)
#define WS_SCHED_FORK (WS_KIND_SCHED + 3)
#define WS_SCHED_EXIT (WS_KIND_SCHED + 4)
#define WS_SCHED_COMM (WS_KIND_SCHED + 5)
#define WS_SCHED_SHORT_CAUSES (WS_KIND_SCHED + 6)
#define WS_SCHED_RECLAIM (WS_KIND_SCHED + 7)

#define WS_COMM_LEN 16

/*
 * Waits and queueings shorter than the resolution that were not written one by
 * one (the kernel summarises them): how many off-CPU periods, and their time
 * blocked and runnable. They ride on the thread's next written record.
 */
struct ws_sched_short {
	__u32 n;
	__u32 reserved;
	__u64 blocked_ns;
	__u64 runnable_ns;
};

/*
 * sched 1.6: what a thread's summarised periods waited for, kept per thread in the kernel in
 * WS_SCHED_CAUSES buckets, each one class and resource: the syscall it blocked in and that
 * call's first argument (a futex word, an fd), or WS_SCHED_CAUSE_RUNQUEUE for a period it was
 * preempted (runnable throughout). Periods that found no bucket free are only in the totals
 * (struct ws_sched_short): the rest, "other".
 */
#define WS_SCHED_CAUSES 4
#define WS_SCHED_CAUSE_RUNQUEUE (-2)
struct ws_sched_cause {
	__u64 res;   /* the syscall's first argument (0 for the runqueue) */
	__s32 nr;    /* syscall number (of WS_ARCH_*: @arch of the record), WS_SYSCALL_NONE, or
		      * WS_SCHED_CAUSE_RUNQUEUE */
	__u32 waker; /* tid of the last task that woke it in task context (0: none seen) */
	__u32 n;
	__u32 state; /* the task state it last blocked in (0 for the runqueue) */
	__u64 blocked_ns;
	__u64 runnable_ns;
};

/*
 * sched 1.6: thread @tid's buckets (WS_SCHED_CAUSES, n 0: unused) of the periods summarised
 * since the last such record, written only when a bucket is used (no switch record grows): just
 * before the record that carries their totals (its switch-in's next_short, or its exit's
 * short_waits), or before a written wakeup it does (a chain through its stretch is built before
 * its next switch-in). The buckets start over; @total, the totals so far since its last written
 * switch-in (they run on until then), tells what no bucket holds.
 */
struct ws_sched_short_causes {
	struct ws_rec_hdr hdr;
	__u32 tid;  /* whose periods (hdr.tid is current: in a switch, prev) */
	__u16 arch; /* WS_ARCH_* of the syscall numbers */
	__u16 reserved;
	struct ws_sched_short total;
	struct ws_sched_cause c[WS_SCHED_CAUSES];
};

/*
 * A context switch on hdr.cpu; current (hdr.tid) is prev.
 *
 * Appended in 1.1 (with a resolution, not every switch is written):
 * @prev_run_start: when prev got this CPU (0: not known), so the CPU's run
 * history is right even when that switch-in was not written; for a prev that
 * got it while no traced thread waited for a CPU, the start of the runqueue
 * wait going on now (it has held the CPU at least since then). @next_off_ts:
 * when next left a CPU, if that switch-out was not written (0: it was, or it
 * is new); @next_wake_ts when it was woken since (0: preempted, or no wakeup
 * seen); @next_off_state/@next_off_cpu as prev_state/hdr.cpu of that switch.
 * @next_short: next's summarised periods since its last written record.
 *
 * Appended in 1.3: @prev_comm, prev's name when it is not followed ("" when
 * it is: a traced thread or helper is named by its own records). A thread
 * that held a traced thread's CPU is often written only as prev, never as
 * next, and was reported as "?".
 */
/*
 * ws_sched_switch.hdr.flags: prev's switch-out is not reported by this record
 * (it is written for next's sake); a later record of prev carries it, or its
 * period is summarised.
 */
#define WS_SCHED_PREV_LATER 0x1
/*
 * hdr.flags (no size change; older readers ignore them): prev / next (switch) or the wakee (waking)
 * is a kernel thread that works for the traced processes, a helper: not traced itself, its timeline
 * is followed from the first time a traced thread woke it or it woke one (sched.bpf.c).
 */
#define WS_SCHED_PREV_HELPER 0x2
#define WS_SCHED_NEXT_HELPER 0x4
/*
 * ws_sched_switch.hdr.flags (sched 1.7, no size change; older readers ignore it): prev was off
 * its CPU by what the programs saw, and this switch-out finds it running: the wakeup and the
 * switch-in that ended its last off-CPU period were never reported (6.18 sometimes does not:
 * a thread it hands the CPU to leaves it with no sched_switch). That period's switch-out may
 * itself have been left for later (WS_SCHED_PREV_LATER) and is lost with them: since it
 * (prev_unseen_ns before this switch), prev's timeline is not known.
 */
#define WS_SCHED_PREV_UNSEEN 0x8
#define WS_SCHED_WAKEE_HELPER 0x2

struct ws_sched_switch {
	struct ws_rec_hdr hdr;
	__u32 prev_state; /* 0: preempted; else the task state it blocked in */
	__u32 next_tid;
	__u32 next_pid;
	/*
	 * sched 1.7, with WS_SCHED_PREV_UNSEEN: how long before this switch prev left its CPU for
	 * the period that ended unseen, in ns (~0: 4.29 s or more); 0 otherwise
	 */
	__u32 prev_unseen_ns;
	char next_comm[WS_COMM_LEN];
	__u64 prev_run_start;
	__u64 next_off_ts;
	__u64 next_wake_ts;
	__u32 next_off_state;
	__u32 next_off_cpu;
	struct ws_sched_short next_short;
	char prev_comm[WS_COMM_LEN];
	/*
	 * 1.5: next's off-CPU period began with it throttled by a CPU quota (CFS bandwidth
	 * control): the cgroup whose quota ran out (its id, the inode of its directory; ~0: not
	 * found), 0 when it was not; and when that throttle ended (0: not known).
	 */
	__u64 next_throttle_cg;
	__u64 next_unthrottled_ts;
};
#define WS_SCHED_SWITCH_V2_SIZE (__builtin_offsetof(struct ws_sched_switch, next_throttle_cg))
#define WS_SCHED_SWITCH_V0_SIZE (sizeof(struct ws_rec_hdr) + 16 + WS_COMM_LEN)
#define WS_SCHED_SWITCH_V1_SIZE (__builtin_offsetof(struct ws_sched_switch, prev_comm))

/*
 * current (hdr.tid) began waking @wakee_tid; only real wakeups (not yet queued).
 * @wakee_sys: the syscall the wakee slept in. @waker_sys: the one current was
 * in, read only in task context (nr WS_SYSCALL_NONE otherwise). Recordings
 * made before these were appended end after @waker_comm.
 */
struct ws_sched_waking {
	struct ws_rec_hdr hdr;
	__u32 wakee_tid;
	__u32 wakee_pid;
	char waker_comm[WS_COMM_LEN];
	struct ws_syscall wakee_sys;
	struct ws_syscall waker_sys;
	/* 1.1: when the wakee left the CPU, if that switch-out was not written (0: it was) */
	__u64 off_ts;
	__u32 off_state;
	__u32 off_cpu;
	/*
	 * 2.1: in task context, how many off-CPU periods of the waker since its last written
	 * switch-in were shorter than the resolution (summarised, not written): its stretch
	 * "running" up to this wakeup had waits in it whose causes were not recorded.
	 */
	__u32 waker_short;
	__u32 reserved2;
	/*
	 * 2.3: the signals pending for the wakee that it does not block (bit n-1: signal n, the
	 * first word of the kernel's sigset) and its task state at the wakeup: a wakeup with a
	 * signal pending is the signal's (the kill source). Read here, not by a program of its own
	 * on every wakeup of the machine.
	 */
	__u64 wakee_sigpending;
	__u32 wakee_state;
	__u32 reserved3;
};
#define WS_SCHED_WAKING_V3_SIZE (__builtin_offsetof(struct ws_sched_waking, wakee_sigpending))
#define WS_SCHED_WAKING_V2_SIZE (__builtin_offsetof(struct ws_sched_waking, waker_short))
#define WS_SCHED_WAKING_V1_SIZE (WS_SCHED_WAKING_V0_SIZE + 2 * sizeof(struct ws_syscall))
#define WS_SCHED_WAKING_V0_SIZE (sizeof(struct ws_rec_hdr) + 8 + WS_COMM_LEN)

/* hdr.tid created @child_tid. */
struct ws_sched_fork {
	struct ws_rec_hdr hdr;
	__u32 child_tid;
	__u32 child_pid;
	char child_comm[WS_COMM_LEN];
	/*
	 * Appended with trace format 1.9: the child's cgroups as it was made, by id (the inode
	 * number of the directory, kernfs's id): in the cpu controller's hierarchy (cgroup v1; on
	 * v2 the nearest ancestor with cpu enabled) and in the unified one (0: not read). User
	 * space names them from its /proc reads of other threads: a child gone before its own /proc
	 * is read is named with the path whose directory has that id, if a read found it.
	 */
	__u64 child_cg_cpu;
	__u64 child_cg_dfl;
};
#define WS_SCHED_FORK_V0_SIZE (__builtin_offsetof(struct ws_sched_fork, child_cg_cpu))

/*
 * hdr.tid exits; 1.1: with its summarised periods not yet written; 1.4: with its exit code, and
 * when a signal killed it, the syscall it was in and for a futex wait the lock's first bytes,
 * read in its own context (the tracepoint comes before its memory is released): a program
 * killed while it waited is gone before anyone could read /proc (issue 34).
 */
#define WS_SCHED_EXIT_MEM 24
struct ws_sched_exit {
	struct ws_rec_hdr hdr;
	char comm[WS_COMM_LEN];
	struct ws_sched_short short_waits;
	__u32 exit_code;       /* task_struct.exit_code: low 7 bits the killing signal, 0 none */
	__u32 mem_len;	       /* bytes of @mem read (0: none) */
	struct ws_syscall sys; /* killed: the syscall it was in (nr WS_SYSCALL_NONE: none) */
	__u8 mem[WS_SCHED_EXIT_MEM]; /* killed in a futex wait: the memory at sys.args[0] */
};
#define WS_SCHED_EXIT_V0_SIZE (sizeof(struct ws_rec_hdr) + WS_COMM_LEN)
#define WS_SCHED_EXIT_V1_SIZE (__builtin_offsetof(struct ws_sched_exit, exit_code))

/*
 * Trace format 1.10: current (hdr.tid, a traced thread) begins or ends direct memory reclaim,
 * as the kernel's tracepoints bracket it (mm_vmscan_memcg_reclaim_begin/end: a memory cgroup's
 * limit was hit; mm_vmscan_direct_reclaim_begin/end: the machine's free memory ran low). Written
 * only for a traced thread, only while the kernel reclaims: nothing when there is no pressure.
 */
#define WS_SCHED_RECLAIM_MEMCG 1  /* begins reclaim for a memory cgroup's limit */
#define WS_SCHED_RECLAIM_GLOBAL 2 /* begins global direct reclaim */
#define WS_SCHED_RECLAIM_END 3	  /* the reclaim (or compaction) it began ends */
/* begins direct compaction (mm_compaction_begin with cc->direct_compaction): @order's allocation */
#define WS_SCHED_RECLAIM_COMPACT 4
/*
 * (1.13) blocks, at this switch-out, in a memory stall (task_struct.in_memstall) outside any
 * reclaim or compaction bracket, with @cg the nearest memory cgroup past its memory.high (v2;
 * @limit_kind HIGH, @limit): the sleep the kernel adds for memory.high on the return to user
 * space (mem_cgroup_handle_over_high). Not followed by an END: it is the wait that begins.
 */
#define WS_SCHED_RECLAIM_HIGH_SLEEP 5
/* @limit_kind: which of the group's limits its usage had reached as the reclaim began */
#define WS_SCHED_RECLAIM_LIMIT_MAX 1  /* memory.limit_in_bytes (v1), memory.max (v2) */
#define WS_SCHED_RECLAIM_LIMIT_HIGH 2 /* memory.high (v2) */
struct ws_sched_reclaim {
	struct ws_rec_hdr hdr;
	__u32 what;  /* WS_SCHED_RECLAIM_* */
	__u32 order; /* the allocation's order (begin) */
	/*
	 * MEMCG: the nearest memory cgroup, from the thread's own up, whose usage had reached its
	 * limit as the reclaim began (its id, the inode of its directory; 0: none found, the
	 * kernel does not say which group it reclaims for); @limit its limit in bytes then
	 */
	__u64 cg;
	__u64 limit;
	__u64 nr_reclaimed; /* END: pages the reclaim freed */
	__u32 limit_kind;   /* WS_SCHED_RECLAIM_LIMIT_* (0: none found) */
	__u32 reserved;
};

/* Thread @tid took the name @comm (exec, prctl, pthread_setname_np). */
struct ws_sched_comm {
	struct ws_rec_hdr hdr;
	__u32 tid;
	__u32 pid;
	char comm[WS_COMM_LEN];
};

#endif
