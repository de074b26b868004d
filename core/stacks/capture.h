/* SPDX-License-Identifier: MIT */
/*
 * Stack records: where in the code a long wait was, captured only for the waits that matter.
 *
 * A thread's stacks do not change while it sleeps, so nothing is captured when it blocks. When
 * a wait turns out to be at least the report's threshold (min_block), BPF writes:
 *   - at switch-in, the waiter's kernel stack (it is not running yet: the stack it slept on);
 *   - from a task work that runs in the waiter's own context as it returns to user space, its
 *     user registers and the top of its user stack (unwound with DWARF CFI in user space);
 *   - at the wakeup (task context only), the waker's kernel stack, user registers and stack top.
 * These raw records (WS_KIND_STACK_RAW) never leave the tracing process: the core unwinds and
 * symbolises them as they arrive, while the process lives, and carries resolved frames
 * (WS_KIND_STACK) instead, so a recording never needs the traced binaries.
 *
 * Shared by BPF and user space: fixed-width types only. Members are only appended.
 */
#ifndef WS_STACKS_CAPTURE_H
#define WS_STACKS_CAPTURE_H

#include <whyslow/record.h>

#include "pycapture.h"

/* WS_KIND_STACK_RAW: struct ws_rec_stack_raw; WS_KIND_STACK: struct ws_rec_stack + frames */

/* Whose stack, relative to the wait it explains. */
#define WS_STACK_WAITER 1 /* the thread that waited, as it slept */
#define WS_STACK_WAKER 2  /* the thread that woke it, at the wakeup */

#define WS_STACK_KFRAMES 32	    /* kernel return addresses kept */
#define WS_STACK_USER_MAX 16384	    /* most bytes of user stack a record carries */
#define WS_STACK_USER_DEFAULT 16384 /* stack_user_bytes default */

/* ws_stack_uregs.valid: which registers were read (by role, see core/stacks/unwind.h) */
#define WS_SREG_PC (1u << 0)
#define WS_SREG_SP (1u << 1)
#define WS_SREG_FP (1u << 2)
#define WS_SREG_LR (1u << 3)
#define WS_SREG_CALLEE_ALL (0x3ffu << 4)

/* User registers by role: x86_64 rip rsp rbp - rbx r12..r15; arm64 pc sp x29 x30 x19..x28. */
struct ws_stack_uregs {
	__u64 pc, sp, fp, lr;
	__u64 callee[10];
	__u32 valid;
	__u16 arch;   /* WS_ARCH_* */
	__u16 nouser; /* WS_NOUSER_*: why no user part comes (0: one comes, or unknown) */
};

/*
 * Why a stack has no user part, so that a link without one says why (never silently empty).
 * In a raw capture: the waiter's kernel half says whether its user half will follow (0) or not;
 * a user half that cannot be copied comes as a note (no registers, no frames) with the reason.
 * In a resolved record: the same codes, and the core's own (16 and up). 0 in records written
 * before these codes existed: unknown.
 */
/*
 * Where a waiter's user stack is copied, in its own context (sched/stack.bpf.h): a BPF task work
 * run as it returns to user space, or, on a kernel whose verifier refuses task work from a
 * tracepoint program (6.18.44 says "sleepable callback in a program that is not sleepable"),
 * the exit of the syscall it slept in.
 */
#define WS_STACK_DEFER_TASK_WORK 0
#define WS_STACK_DEFER_SYSCALL_EXIT 1

#define WS_NOUSER_KTHREAD 1	 /* the task runs no user code (kernel thread, io_uring worker) */
#define WS_NOUSER_NO_TASK_WORK 2 /* the kernel cannot copy a waiter's user stack (no task work) */
#define WS_NOUSER_RING_BUSY 3	 /* the ring was too full for a user stack copy */
#define WS_NOUSER_NOT_QUEUED 4	 /* the copy could not be scheduled (its map was full) */
#define WS_NOUSER_MOVED_ON 5	 /* when the copy ran, the thread was no longer where it slept */
#define WS_NOUSER_UNREADABLE 6	 /* its registers or stack memory could not be read */
#define WS_NOUSER_EXITED 16	 /* the process exited before its maps were read */
#define WS_NOUSER_UNWIND 17	 /* not unwound: none of the process's files could be opened */

/*
 * Raw capture, BPF -> core. hdr.tid/pid are whoever wrote it (not necessarily the stack's
 * owner). @tid/@pid: whose stack. @wait_tid: the thread whose wait this explains (the waiter
 * itself, or the wakee of a waker). [@wait_start, @wait_end]: that wait, off CPU to switch-in
 * (WS_STACK_WAITER) or off CPU to the wakeup (WS_STACK_WAKER). @nkframes kernel addresses;
 * @ulen bytes of user stack from @uregs.sp (@uregs.valid 0: no user part). The waiter's user
 * part comes in a record of its own, later, with @nkframes 0.
 */
struct ws_rec_stack_raw {
	struct ws_rec_hdr hdr;
	__u32 tid, pid;
	__u32 wait_tid;
	__u8 role;
	__u8 nkframes;
	__u16 ulen;
	__u64 wait_start, wait_end;
	struct ws_syscall sys; /* the waiter's, read at switch-in (nr WS_SYSCALL_NONE otherwise) */
	__u64 kframes[WS_STACK_KFRAMES];
	struct ws_stack_uregs uregs;
	struct ws_py_raw py; /* its CPython frames, walked with its user stack (pycapture.h) */
	/* a waiter whose read of the GIL found it held (py.gil WS_GIL_HELD): the holder's CPython
	 * frames, walked from its thread state while it ran (state WS_PY_NONE: none) */
	struct ws_py_raw holder_py;
	__u8 ustack[]; /* @ulen bytes; hdr.size covers them */
};

/*
 * Resolved frames, the form recordings keep. The same identity as the raw record, then
 * @nframes frames (user frames first, innermost first, then kernel frames innermost first),
 * each a struct ws_stack_frame followed by its strings (sym, module, file, NUL-terminated,
 * each present when its length is not 0), padded to 8 bytes.
 */
#define WS_STACK_FRAME_KERNEL 0x1 /* ws_stack_frame.flags: a kernel address */
/* a CPython frame: sym its qualified name, file and line its source's, ip its code object,
 * off the byte offset of its instruction, module the interpreter that ran it */
#define WS_STACK_FRAME_PYTHON 0x2

/* ws_rec_stack.ustop: why the user walk ended (enum ws_unwind_stop + 1), 0: no user part */
struct ws_rec_stack {
	struct ws_rec_hdr hdr;
	__u32 tid, pid;
	__u32 wait_tid;
	__u8 role;
	__u8 ustop;
	__u16 nframes;
	__u64 wait_start, wait_end;
	/* the file the wait's fd named (/proc/PID/fd/@fd, read on arrival): @path_len bytes and a
	 * NUL after the frames; @fd -1, @path_len 0: none */
	__s32 fd;
	__u16 path_len;
	__u16 nouser; /* WS_NOUSER_*: why the record has no user frames (0: it has, or unknown) */
};

/*
 * ws_rec_stack.hdr.flags (format 1.8): WS_STACK_REC_GIL says the record ends in a struct
 * ws_stack_gil (its last 8 bytes), preceded by @holder_bytes of the holder's frames (@nholder
 * struct ws_stack_frame with their strings, as the record's own), all after the frames and the
 * path: a 1.7 reader never looks there. Only a waiter's stack in a CPython process has one:
 * the GIL as the waiter read it in its own context as its wait ended.
 */
#define WS_STACK_REC_GIL 0x1

struct ws_stack_gil {
	__u32 holder_tid;   /* WS_GIL_HELD: the holder's native thread id (not validated) */
	__u8 state;	    /* WS_GIL_* (pycapture.h) */
	__u8 nholder;	    /* the holder's frames before this block */
	__u16 holder_bytes; /* and their bytes (a multiple of 8) */
};

struct ws_stack_frame {
	__u64 ip;
	__u64 off;
	__u32 line;
	__u8 flags;
	__u8 sym_len, module_len, file_len; /* without the NUL; 0: absent */
};

#endif /* WS_STACKS_CAPTURE_H */
