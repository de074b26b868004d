// SPDX-License-Identifier: GPL-2.0
/*
 * kill source, kernel side: a wakeup of a traced thread that has signals
 * pending is the signal's wakeup. The signal tracepoint (signal_generate)
 * fires only after the wakeup it causes, too late for the wakeup to be
 * explained as it is processed; the pending set is already there at
 * sched_waking. This program must run before the sched source's on the same
 * tracepoint, so its record comes first: programs of one tracepoint run in
 * attach order, and plugins attach in name order ("kill" < "sched").
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <whyslow/whyslow.bpf.h>
#include "kill_rec.h"

char LICENSE[] SEC("license") = "GPL";

SEC("tp_btf/sched_waking")
int BPF_PROG(ws_kill_waking, struct task_struct *p)
{
	__u32 pid = p->tgid;
	__u64 pending, blocked;
	struct ws_kill_wake *r;

	/*
	 * Almost no wakeup delivers a signal: look at the pending set first (plain BTF loads),
	 * and ask the traced filter (a hash lookup) only for the few that do.
	 */
	pending = p->pending.signal.sig[0] | p->signal->shared_pending.signal.sig[0];
	blocked = p->blocked.sig[0];
	pending &= ~blocked;
	if (!pending || !ws_traced_tgid(pid))
		return 0;
	r = ws_reserve(sizeof(*r), WS_KILL_WAKE);
	if (!r)
		return 0;
	r->pending = pending;
	r->wakee_tid = p->pid;
	r->wakee_pid = pid;
	r->state = BPF_CORE_READ(p, __state);
	r->reserved = 0;
	bpf_get_current_comm(&r->sender_comm, sizeof(r->sender_comm));
	ws_submit(r);
	return 0;
}
