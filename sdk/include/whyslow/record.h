/* SPDX-License-Identifier: MIT */
/*
 * The record every whyslow BPF program writes into the shared ring buffer.
 *
 * Shared by BPF and user space, so only fixed-width __u types appear here.
 * Compatibility: members are only ever appended; a record's kind number is
 * never reused once released, even when the record it named is retired.
 */
#ifndef WHYSLOW_RECORD_H
#define WHYSLOW_RECORD_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/*
 * The registry of record kinds: every range of 256 kinds whyslow has given out, the only place
 * they are defined. A source owns the range starting at its base, so sources never collide and
 * a reader can tell the owner from the number; the loader refuses a second owner of a range.
 * A range, like a kind in it, is never reused once released. Third parties take a base at or
 * above WS_KIND_THIRD_PARTY that no other plugin they load with uses, and name it in their
 * descriptor (struct ws_plugin.kind_base).
 */
#define WS_KIND_RANGE 0x100
#define WS_KIND_CORE 0x0000  /* the core itself: the kinds below, and stack captures */
#define WS_KIND_SCHED 0x0100 /* the scheduler model (core/sched), the source "sched" */
#define WS_KIND_FUTEX 0x0200 /* plugins/futex */
#define WS_KIND_BLKIO 0x0300 /* plugins/blkio */
#define WS_KIND_KLOCK 0x0400 /* plugins/klock (built from the installed SDK alone) */
#define WS_KIND_KILL 0x0500  /* plugins/kill */
#define WS_KIND_NET 0x0600   /* plugins/net */
/* 0x0700 to 0x0f00: free for in-tree sources, in order */
#define WS_KIND_THIRD_PARTY 0x1000

#define WS_KIND_LOST (WS_KIND_CORE + 1) /* struct ws_rec_lost */
/*
 * The last thread of a traced thread group (hdr.pid) is exiting: the core
 * stops tracing that pid. A bare ws_rec_hdr, written by the core itself.
 */
#define WS_KIND_PROC_EXIT (WS_KIND_CORE + 2)
/*
 * WS_KIND_PROC_EXIT's hdr.flags: not an exit, an exec into a name attach --comm does not follow:
 * the process lives on, untraced from hdr.ts (no grace for records still coming from it).
 */
#define WS_PROC_EXIT_EXEC 0x1
/*
 * Thread hdr.tid (of hdr.pid) was already off CPU when tracing began: /proc
 * showed it blocked at hdr.ts, off CPU since at least @since_ns. Written by
 * the core itself (struct ws_rec_open_wait), so the wait is reported when it
 * ends, and recordings replay it.
 */
#define WS_KIND_OPEN_WAIT (WS_KIND_CORE + 3)
/*
 * Never written as a record: the kind under which the core counts, in
 * ws_lost, new processes of traced ones that could not be traced because
 * the filter (ws_tgids, [core] max_processes) was full. The sched source
 * still follows them (its task storage, not the filter); sources that ask the
 * filter do not. Chains over that moment are marked incomplete like those
 * over lost records. CORE + 7, not + 4: it once shared + 4 with WS_KIND_STACK_RAW
 * (stack.h), so a lost stack capture was counted as a process not traced (a recording made then
 * cannot tell the two apart: its "0x4" losses now read as lost records).
 */
#define WS_KIND_UNTRACED_PROC (WS_KIND_CORE + 7)
/*
 * Stack captures, laid out in the core's own core/stacks/capture.h: the raw capture (BPF to the
 * core, never recorded; the same number as WS_KIND_UNTRACED_PROC's count, above) and the
 * resolved frames a recording keeps.
 */
#define WS_KIND_STACK_RAW (WS_KIND_CORE + 4)
#define WS_KIND_STACK (WS_KIND_CORE + 5)
/*
 * A traced process made a new one (hdr.tid, hdr.pid: the child's). Written by the core itself,
 * waking the reader at once: the child's maps are read while it lives, for the stacks of a
 * program that may be gone before the next poll. A wakeup only: never analysed or recorded.
 */
#define WS_KIND_PROC_NEW (WS_KIND_CORE + 6)
/*
 * WS_KIND_PROC_NEW's hdr.flags: the process is traced from its exec (attach --comm: it took one
 * of the names), not from a fork; no fork record will say so, this one does: an event, analysed
 * and recorded (trace format 1.14), unlike the others.
 */
#define WS_PROC_NEW_EXEC 0x1

/*
 * Execution context a record was written in (ws_rec_hdr.ctx), maintained by
 * the core's own BPF program from the interrupt entry/exit tracepoints. A
 * wakeup written in WS_CTX_HARDIRQ or WS_CTX_SOFTIRQ was not done by
 * "current": current is whatever task the interrupt happened to hit.
 */
#define WS_CTX_TASK 0x0
#define WS_CTX_HARDIRQ 0x1 /* inside a hardware interrupt or IPI handler */
#define WS_CTX_SOFTIRQ 0x2 /* inside a softirq (also when run by ksoftirqd) */
#define WS_CTX_TIMER 0x4   /* inside a timer or hrtimer expiry callback */

/*
 * Header of every record. @ctx_id names the interrupt bracket (one entry of
 * one handler on one CPU) or, in task context, the stretch since the CPU last
 * switched tasks. Two records with the same (cpu, ctx_id) were written inside
 * the same bracket: that is the evidence that a wakeup was done by the
 * completion that preceded it there.
 */
struct ws_rec_hdr {
	__u16 size;   /* bytes of the whole record, header included */
	__u16 kind;   /* WS_KIND_* */
	__u16 cpu;    /* CPU the record was written on */
	__u8 ctx;     /* WS_CTX_* flags */
	__u8 flags;   /* kind-specific */
	__u32 ctx_id; /* see above */
	__u32 tid;    /* current task's thread id (kernel pid) */
	__u32 pid;    /* current task's thread group id */
	__u32 reserved;
	__u64 ts; /* CLOCK_MONOTONIC, ns (bpf_ktime_get_ns) */
};

/*
 * Written before the next record on a CPU that failed to reserve space for
 * @count records between @first_ts and the header's ts. Chains whose window
 * touches [first_ts, hdr.ts] are incomplete.
 */
/* ws_rec_lost.hdr.flags */
#define WS_LOST_RECURSION 0x1 /* skipped by the kernel (a BPF program was running), not ring-full \
			       */

struct ws_rec_lost {
	struct ws_rec_hdr hdr;
	__u64 count;
	__u64 first_ts;
	__u32 first_kind; /* kind of the first record lost */
	__u32 reserved;
};

struct ws_rec_open_wait {
	struct ws_rec_hdr hdr;
	__u64 since_ns;	 /* CLOCK_MONOTONIC: off CPU at least since then (it may have begun earlier) */
	__u32 off_state; /* 1 sleeping (S), 2 uninterruptible (D), as sched_switch's prev_state */
	__u32 reserved;
	char comm[16];
};

/*
 * The system call a task was inside, read from the user registers it saved on
 * entering the kernel (so no syscall hook is needed): a sleeping task's stay
 * put until it returns. @nr is the architecture's own number (@arch says
 * which table: WS_ARCH_*); WS_SYSCALL_NONE when the task was in no syscall
 * (a page fault, kernel work) or its registers were not read.
 */
#define WS_SYSCALL_NONE (-1)
#define WS_ARCH_UNKNOWN 0
#define WS_ARCH_X86_64 1
#define WS_ARCH_ARM64 2

struct ws_syscall {
	__s32 nr;
	__u16 arch;
	__u16 reserved;
	__u64 args[6];
};

/* Per-CPU state in the shared map ws_cpu, written by BPF only. */
#define WS_CTX_STACK 8
struct ws_cpu_state {
	__u32 depth;		 /* nesting of interrupt brackets */
	__u32 next_id;		 /* source of ctx_id values */
	__u32 task_id;		 /* ctx_id outside any bracket */
	__u32 timer;		 /* nesting of timer expiry callbacks */
	__u32 id[WS_CTX_STACK];	 /* ctx_id of each open bracket */
	__u8 kind[WS_CTX_STACK]; /* WS_CTX_HARDIRQ or WS_CTX_SOFTIRQ */
	__u64 lost_pending;	 /* records lost and not yet reported */
	__u64 lost_first_ts;	 /* when the first of them was lost */
	__u32 lost_first_kind;
	__u32 last_wakeup; /* when a record last woke the reader (ts >> 20, ~1 ms units) */
};

#endif /* WHYSLOW_RECORD_H */
