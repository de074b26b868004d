// SPDX-License-Identifier: GPL-2.0
/*
 * The least a tracer that keeps per-thread state in task storage must do on each scheduler
 * event (issue 19's design, without anything whyslow adds to it): a switch looks both tasks up
 * and reads the clock once, stamping prev's switch-out and summing next's time off the CPU; a
 * wakeup looks the woken task up and stamps it. Only the threads of one process (floor_tgid, set
 * by the loader: bench/bpf_floor.c's TGID argument) and the tasks it makes have an entry. No
 * record is written. bench/overhead.sh's "minimal_bpf" configuration: against "empty_bpf" and
 * "whyslow" it tells how much of whyslow's cost any design of this shape pays on this machine.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

/* the first word of .bss: bench/bpf_floor.c writes it before the load */
__u32 floor_tgid;

struct thread {
	__u64 off_ts;
	__u64 wake_ts;
	__u64 off_cpu_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread);
} threads SEC(".maps");

static __always_inline struct thread *thread_of(struct task_struct *t)
{
	struct thread *th = bpf_task_storage_get(&threads, t, 0, 0);

	if (th || t->tgid != floor_tgid)
		return th;
	return bpf_task_storage_get(&threads, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
}

SEC("tp_btf/task_newtask")
int BPF_PROG(minimal_newtask, struct task_struct *task)
{
	if (bpf_task_storage_get(&threads, bpf_get_current_task_btf(), 0, 0))
		bpf_task_storage_get(&threads, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(minimal_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct thread *p = prev->pid ? thread_of(prev) : NULL;
	struct thread *n = next->pid ? thread_of(next) : NULL;
	__u64 now = 0;

	/* (no "!p && !n": the verifier refuses the OR of two pointers it compiles to) */
	if (p) {
		now = bpf_ktime_get_ns();
		p->off_ts = now;
	}
	if (n && n->off_ts) {
		if (!now)
			now = bpf_ktime_get_ns();
		n->off_cpu_ns += now - n->off_ts;
		n->off_ts = 0;
		n->wake_ts = 0;
	}
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(minimal_waking, struct task_struct *p)
{
	struct thread *th = thread_of(p);

	if (th)
		th->wake_ts = bpf_ktime_get_ns();
	return 0;
}
