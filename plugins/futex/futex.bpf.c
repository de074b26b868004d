// SPDX-License-Identifier: GPL-2.0
/*
 * futex source, kernel side: entry and exit of the futex calls of traced
 * processes that may block or may wake another thread. The wakeup itself is
 * seen by the sched source; these records say which futex the waker and the
 * woken thread were inside at that moment.
 *
 * sys_enter/sys_exit fire for every syscall of every task, so each program
 * first compares the syscall number (a register read) and only then looks up
 * the target filter.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <whyslow/whyslow.bpf.h>
#include <whyslow/arch.bpf.h>
#include "futex_rec.h"

char LICENSE[] SEC("license") = "GPL";

/* syscall numbers and registers: <whyslow/arch.bpf.h>, the one place that knows the CPU */
#define NR_futex WS_NR_futex
#define NR_futex_waitv WS_NR_futex_waitv
#define NR_futex_wake WS_NR_futex_wake
#define NR_futex_wait WS_NR_futex_wait
#define NR_futex_requeue WS_NR_futex_requeue
#define SYS_NR WS_SYS_NR
#define SYS_ARG0 WS_SYS_ARG0
#define SYS_ARG1 WS_SYS_ARG1
#define SYS_ARG2 WS_SYS_ARG2
#define SYS_ARG3 WS_SYS_ARG3
#define SYS_ARG4 WS_SYS_ARG4
#define SYS_ARG5 WS_SYS_ARG5

/* Syscall and command of each thread's emitted, unfinished call: its exit is written too. */
struct inflight {
	__u32 syscall;
	__u32 cmd;
};

/* LRU: a thread that dies inside a futex call never reaches sys_exit. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, struct inflight);
	__uint(max_entries, 16384);
} futex_inflight SEC(".maps");

struct ws_futex_waitv {
	__u64 val;
	__u64 uaddr;
	__u32 flags;
	__u32 reserved;
};

static __always_inline int sys_of(long id)
{
	switch (id) {
	case NR_futex:
		return WS_FUTEX_SYS_FUTEX;
	case NR_futex_waitv:
		return WS_FUTEX_SYS_WAITV;
	case NR_futex_wake:
		return WS_FUTEX_SYS_WAKE;
	case NR_futex_wait:
		return WS_FUTEX_SYS_WAIT;
	case NR_futex_requeue:
		return WS_FUTEX_SYS_REQUEUE;
	}
	return 0;
}

/* The futex(2) commands that may block the caller, or wake / hand over to another thread. */
static __always_inline bool cmd_wanted(__u32 cmd)
{
	switch (cmd) {
	case WS_FUTEX_WAIT:
	case WS_FUTEX_WAIT_BITSET:
	case WS_FUTEX_LOCK_PI:
	case WS_FUTEX_LOCK_PI2:
	case WS_FUTEX_WAIT_REQUEUE_PI:
	case WS_FUTEX_WAKE:
	case WS_FUTEX_WAKE_BITSET:
	case WS_FUTEX_WAKE_OP:
	case WS_FUTEX_UNLOCK_PI:
	case WS_FUTEX_REQUEUE:
	case WS_FUTEX_CMP_REQUEUE:
	case WS_FUTEX_CMP_REQUEUE_PI:
		return true;
	}
	return false;
}

/* Copy the futex addresses of a user struct futex_waitv array of @nr entries. */
static __always_inline void read_waitv(struct ws_futex_enter *r, __u64 arr, __u32 nr)
{
	struct ws_futex_waitv v;
	__u32 i;

	for (i = 0; i < WS_FUTEX_MAX_ADDRS; i++) {
		if (i >= nr)
			break;
		if (bpf_probe_read_user(&v, sizeof(v), (void *)(arr + i * sizeof(v))))
			break;
		r->addrs[i] = v.uaddr;
		r->naddrs = i + 1;
	}
}

SEC("tp_btf/sys_enter")
int BPF_PROG(ws_futex_enter, struct pt_regs *regs, long id)
{
	int sys = sys_of(id);
	__u64 pid_tgid;
	struct ws_futex_enter *r;
	struct inflight in;
	__u32 op = 0, cmd = 0, tid, i;

	if (!sys)
		return 0;
	pid_tgid = bpf_get_current_pid_tgid();
	if (!ws_traced_tgid(pid_tgid >> 32))
		return 0;
	if (sys == WS_FUTEX_SYS_FUTEX) {
		op = SYS_ARG1(regs);
		cmd = op & WS_FUTEX_CMD_MASK;
		if (!cmd_wanted(cmd))
			return 0;
	}
	r = ws_reserve(sizeof(*r), WS_FUTEX_ENTER);
	if (!r)
		return 0;
	r->syscall = sys;
	r->op = op;
	r->cmd = cmd;
	r->val = 0;
	r->val3 = 0;
	r->naddrs = 0;
	r->uaddr = 0;
	r->uaddr2 = 0;
	for (i = 0; i < WS_FUTEX_MAX_ADDRS; i++)
		r->addrs[i] = 0;
	switch (sys) {
	case WS_FUTEX_SYS_FUTEX:
		r->uaddr = SYS_ARG0(regs);
		r->val = SYS_ARG2(regs);
		r->uaddr2 = SYS_ARG4(regs);
		r->val3 = SYS_ARG5(regs);
		break;
	case WS_FUTEX_SYS_WAITV:
		r->op = SYS_ARG2(regs);
		r->val = SYS_ARG1(regs);
		read_waitv(r, SYS_ARG0(regs), r->val);
		break;
	case WS_FUTEX_SYS_WAKE:
		r->uaddr = SYS_ARG0(regs);
		r->val3 = SYS_ARG1(regs);
		r->val = SYS_ARG2(regs);
		r->op = SYS_ARG3(regs);
		break;
	case WS_FUTEX_SYS_WAIT:
		r->uaddr = SYS_ARG0(regs);
		r->val = SYS_ARG1(regs);
		r->val3 = SYS_ARG2(regs);
		r->op = SYS_ARG3(regs);
		break;
	case WS_FUTEX_SYS_REQUEUE:
		/* waiters[0] is the source futex, waiters[1] the target. */
		r->op = SYS_ARG1(regs);
		r->val = SYS_ARG2(regs);
		r->val3 = SYS_ARG3(regs);
		read_waitv(r, SYS_ARG0(regs), 2);
		r->uaddr = r->addrs[0];
		r->uaddr2 = r->addrs[1];
		break;
	}
	ws_submit(r);
	/* Only a call whose enter was written gets an exit record. */
	tid = (__u32)pid_tgid;
	in.syscall = sys;
	in.cmd = cmd;
	bpf_map_update_elem(&futex_inflight, &tid, &in, BPF_ANY);
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(ws_futex_exit, struct pt_regs *regs, long ret)
{
	struct ws_futex_exit *r;
	struct inflight *in;
	__u32 tid;

	if (!sys_of(SYS_NR(regs)))
		return 0;
	tid = (__u32)bpf_get_current_pid_tgid();
	in = bpf_map_lookup_elem(&futex_inflight, &tid);
	if (!in)
		return 0;
	r = ws_reserve(sizeof(*r), WS_FUTEX_EXIT);
	if (r) {
		r->ret = ret;
		r->syscall = in->syscall;
		r->cmd = in->cmd;
		ws_submit(r);
	}
	bpf_map_delete_elem(&futex_inflight, &tid);
	return 0;
}
