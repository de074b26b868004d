/* SPDX-License-Identifier: MIT */
/*
 * What /proc says about each thread of a process right now, without waiting
 * for any event: its state, the syscall it sleeps in and that syscall's
 * arguments, the top of its kernel stack (root only), and how long it has
 * been off CPU at least.
 */
#ifndef WS_PROCSNAP_H
#define WS_PROCSNAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <whyslow/record.h>

/* The syscall numbers /proc shows here (WS_ARCH_*, <whyslow/record.h>). */
#if defined(__x86_64__)
#define WS_ARCH_NATIVE WS_ARCH_X86_64
#elif defined(__aarch64__)
#define WS_ARCH_NATIVE WS_ARCH_ARM64
#else
#define WS_ARCH_NATIVE WS_ARCH_UNKNOWN
#endif

#define WS_SNAP_COMM 16
#define WS_SNAP_KSTACK 4
#define WS_SNAP_CGROUP 256

struct ws_task_snap {
	uint32_t tid, pid;
	char comm[WS_SNAP_COMM];
	char state;	     /* /proc stat state: R, S, D, T, t, Z, I ... */
	bool in_syscall;     /* /proc/.../syscall named one (blocked in it) */
	bool syscall_denied; /* /proc/.../syscall was not readable (no ptrace access) */
	long nr;	     /* the syscall number */
	uint16_t arch;	     /* whose numbers: WS_ARCH_* (this machine's, when read from /proc) */
	uint64_t args[6];    /* its arguments */
	/* its user stack pointer and program counter, as /proc/.../syscall shows them for a
	 * thread off CPU (in a syscall or not): where an unwinder starts */
	bool have_user_regs;
	uint64_t user_sp, user_pc;
	/* innermost kernel frames, function names only ("" when unreadable) */
	char kstack[WS_SNAP_KSTACK][48];
	int nkstack;
	uint64_t exec_start_ns; /* sched clock of its last run (0: unknown) */
	uint64_t timeslices;	/* times it got a CPU (schedstat), for "did it run since" */
	bool have_timeslices;
	uint64_t off_cpu_ns;   /* off CPU for at least this long (0: no evidence) */
	uint64_t read_mono_ns; /* CLOCK_MONOTONIC just before its state was read */
	/* its cgroup when read (base/proc_cgroup.h: the cpu controller's on v1, else the
	 * unified one), its end when longer; "": not read */
	char cgroup[WS_SNAP_CGROUP];
};

/* The sched clock now, as the kernel shows it for this thread (0: unknown). */
uint64_t ws_procsnap_sched_now(void);

/*
 * One snapshot of every thread of process @pid, in tid order, into *@out
 * (malloc'd, *@n entries). 0, or -errno (-ESRCH: no such process).
 */
int ws_procsnap_take(uint32_t pid, struct ws_task_snap **out, size_t *n);

/* One thread. 0 or -errno. */
int ws_procsnap_task(uint32_t pid, uint32_t tid, uint64_t sched_now, struct ws_task_snap *t);

/* Is the task off CPU (sleeping, in disk wait, stopped)? */
bool ws_task_blocked(const struct ws_task_snap *t);

/* The thread group of @tid (its Tgid), or 0 if there is no such thread. */
uint32_t ws_procsnap_tgid(uint32_t tid);
/*
 * /proc/@pid/comm (@tid 0) or /proc/@pid/task/@tid/comm into @buf, without its newline.
 * 0, or a negative errno with @buf unchanged.
 */
int ws_procsnap_comm(uint32_t pid, uint32_t tid, char *buf, size_t len);

#endif
