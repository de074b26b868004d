/* SPDX-License-Identifier: MIT */
/*
 * Everything architecture-specific that BPF programs read: syscall numbers and
 * where a task's user registers keep the syscall number and its arguments.
 * Include it after vmlinux.h; build with -D__TARGET_ARCH_x86 or _arm64.
 *
 * The register pointer is BTF-typed (struct pt_regs * from a tp_btf argument
 * or bpf_task_pt_regs()), so these are plain loads, not probe-read calls.
 */
#ifndef WHYSLOW_ARCH_BPF_H
#define WHYSLOW_ARCH_BPF_H

#if defined(__TARGET_ARCH_x86)
#define WS_NR_futex 202
#define WS_SYS_NR(regs) ((regs)->orig_ax)
#define WS_SYS_ARG0(regs) ((regs)->di)
#define WS_SYS_ARG1(regs) ((regs)->si)
#define WS_SYS_ARG2(regs) ((regs)->dx)
#define WS_SYS_ARG3(regs) ((regs)->r10)
#define WS_SYS_ARG4(regs) ((regs)->r8)
#define WS_SYS_ARG5(regs) ((regs)->r9)
#elif defined(__TARGET_ARCH_arm64)
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

#endif /* WHYSLOW_ARCH_BPF_H */
