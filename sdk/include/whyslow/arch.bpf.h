/* SPDX-License-Identifier: MIT */
/*
 * Everything architecture-specific that BPF programs read: syscall numbers and
 * where a task's user registers keep the syscall number and its arguments.
 * Include it after vmlinux.h and <bpf/bpf_helpers.h>; build with -D__TARGET_ARCH_x86 or _arm64.
 *
 * The register pointer is BTF-typed (struct pt_regs * from a tp_btf argument
 * or bpf_task_pt_regs()), so these are plain loads, not probe-read calls.
 */
#ifndef WHYSLOW_ARCH_BPF_H
#define WHYSLOW_ARCH_BPF_H

#include <bpf/bpf_core_read.h>

#include <whyslow/record.h>

#if defined(__TARGET_ARCH_x86)
#define WS_ARCH WS_ARCH_X86_64
#define WS_NR_futex 202
#define WS_SYS_NR(regs) ((regs)->orig_ax)
#define WS_SYS_ARG0(regs) ((regs)->di)
#define WS_SYS_ARG1(regs) ((regs)->si)
#define WS_SYS_ARG2(regs) ((regs)->dx)
#define WS_SYS_ARG3(regs) ((regs)->r10)
#define WS_SYS_ARG4(regs) ((regs)->r8)
#define WS_SYS_ARG5(regs) ((regs)->r9)
#elif defined(__TARGET_ARCH_arm64)
#define WS_ARCH WS_ARCH_ARM64
#define WS_NR_futex 98
#define WS_SYS_NR(regs) ((regs)->syscallno)
/* x0 is overwritten by the return value; orig_x0 keeps the first argument. */
#define WS_SYS_ARG0(regs) ((regs)->orig_x0)
#define WS_SYS_ARG1(regs) ((regs)->regs[1])
#define WS_SYS_ARG2(regs) ((regs)->regs[2])
#define WS_SYS_ARG3(regs) ((regs)->regs[3])
#define WS_SYS_ARG4(regs) ((regs)->regs[4])
#define WS_SYS_ARG5(regs) ((regs)->regs[5])
#else
#error "whyslow: unsupported architecture (build with -D__TARGET_ARCH_x86 or -D__TARGET_ARCH_arm64)"
#endif

/* Numbers shared by every architecture that has the generic syscall table entries. */
#define WS_NR_futex_waitv 449
#define WS_NR_futex_wake 454
#define WS_NR_futex_wait 455
#define WS_NR_futex_requeue 456

/* Task flags (include/linux/sched.h; #defines, so not in vmlinux.h). */
#define WS_PF_IO_WORKER 0x00000010
#define WS_PF_USER_WORKER 0x00004000 /* 6.4+; see ws_task_no_user() */
#define WS_PF_KTHREAD 0x00200000
/* Tasks that never run user code, on every kernel (prefer ws_task_no_user(), which adds
 * vhost's workers where the kernel has them). */
#define WS_PF_NO_USER (WS_PF_IO_WORKER | WS_PF_KTHREAD)

/* vhost_task came with PF_USER_WORKER (6.4): its presence says what bit 0x4000 means */
struct vhost_task___ws {
	int unused;
} __attribute__((preserve_access_index));

/*
 * Does @task never run user code? Kernel threads, and the kernel's workers made as threads of
 * a user process: io_uring's (PF_IO_WORKER) and, from 6.4 on, vhost's (PF_USER_WORKER).
 * Neither kind's saved user registers are its own — x86 keeps its maker's but for the pc and
 * sp, arm64 zeroes them — so they would name the maker's syscall (or syscall 0) and no stack.
 * Bit 0x4000 is tested only on a kernel that has vhost tasks: on older ones (5.10 and 5.15
 * among them) it was PF_USED_ASYNC, which init sets at boot and every process then inherits.
 */
static __always_inline bool ws_task_no_user(const struct task_struct *task)
{
	__u32 mask = WS_PF_NO_USER;

	if (bpf_core_type_exists(struct vhost_task___ws))
		mask |= WS_PF_USER_WORKER;
	return task->flags & mask;
}

/*
 * Fill @out with the syscall @task is inside, from its saved user registers.
 * Only meaningful while @task is inside the kernel on its own behalf: asleep,
 * or current in task context (in an interrupt, current's registers belong to
 * whatever the interrupt hit). Kernel threads have no user registers.
 */
static __always_inline void ws_read_syscall_none(struct ws_syscall *out)
{
	out->nr = WS_SYSCALL_NONE;
	out->arch = WS_ARCH;
	out->reserved = 0;
	for (int i = 0; i < 6; i++)
		out->args[i] = 0;
}

static __always_inline void ws_read_syscall(struct task_struct *task, struct ws_syscall *out)
{
	struct pt_regs *regs;

	if (ws_task_no_user(task)) {
		ws_read_syscall_none(out);
		return;
	}
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!regs) {
		ws_read_syscall_none(out);
		return;
	}
	out->arch = WS_ARCH;
	out->reserved = 0;
	out->nr = WS_SYS_NR(regs);
	out->args[0] = WS_SYS_ARG0(regs);
	out->args[1] = WS_SYS_ARG1(regs);
	out->args[2] = WS_SYS_ARG2(regs);
	out->args[3] = WS_SYS_ARG3(regs);
	out->args[4] = WS_SYS_ARG4(regs);
	out->args[5] = WS_SYS_ARG5(regs);
}

#endif /* WHYSLOW_ARCH_BPF_H */
