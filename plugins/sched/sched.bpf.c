// SPDX-License-Identifier: GPL-2.0
/*
 * sched source, kernel side: context switches, wakeups and thread life of the
 * traced processes. BTF tracepoints only: they cost no perf glue per event and
 * the kernel guards them per program, so one running program does not make
 * another one miss its event.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <whyslow/whyslow.bpf.h>
#include "sched_rec.h"

char LICENSE[] SEC("license") = "GPL";

/*
 * Traced threads that are runnable but not running. While there is any, every
 * switch on every CPU is written, so a runqueue wait can name the threads that
 * held the CPU; otherwise switches between untraced threads are skipped.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 65536);
} rq_waiting SEC(".maps");

__u64 nr_rq_waiting;

static __always_inline void rq_wait_begin(__u32 tid)
{
	__u8 one = 1;

	if (bpf_map_update_elem(&rq_waiting, &tid, &one, BPF_NOEXIST) == 0)
		__sync_fetch_and_add(&nr_rq_waiting, 1);
}

static __always_inline void rq_wait_end(__u32 tid)
{
	if (bpf_map_delete_elem(&rq_waiting, &tid) == 0)
		__sync_fetch_and_add(&nr_rq_waiting, -1);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(ws_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	/* BTF tracepoint arguments are typed: plain loads, no probe-read helper calls */
	__u32 prev_pid = prev->tgid, next_pid = next->tgid;
	__u32 next_tid = next->pid, prev_tid = prev->pid;
	int prev_traced = ws_traced_tgid(prev_pid), next_traced = ws_traced_tgid(next_pid);
	__u32 state = preempt ? 0 : prev_state;
	struct ws_sched_switch *r;

	if (prev_traced && state == 0 && prev_tid)
		rq_wait_begin(prev_tid);
	if (next_traced)
		rq_wait_end(next_tid);
	if (!prev_traced && !next_traced && !nr_rq_waiting)
		return 0;
	r = ws_reserve(sizeof(*r), WS_SCHED_SWITCH);
	if (!r)
		return 0;
	r->prev_state = state;
	r->next_tid = next_tid;
	r->next_pid = next_pid;
	r->reserved = 0;
	__builtin_memcpy(r->next_comm, next->comm, sizeof(r->next_comm));
	ws_submit(r);
	return 0;
}

/*
 * sched_entity.sched_delayed exists from 6.12 on: a vmlinux.h of an older kernel
 * (Debian 12's arm64 6.1) lacks it, so name it through a CO-RE flavor of our own.
 */
struct sched_entity___delayed {
	unsigned char sched_delayed;
} __attribute__((preserve_access_index));

SEC("tp_btf/sched_waking")
int BPF_PROG(ws_sched_waking, struct task_struct *p)
{
	__u32 pid = p->tgid, tid = p->pid;
	struct ws_sched_waking *r;

	if (!ws_traced_tgid(pid))
		return 0;
	/*
	 * A task still queued is being woken before it managed to sleep; the
	 * wakeup only cancels the sleep and ends no wait. Except one whose
	 * dequeue the scheduler merely delayed (EEVDF, 6.12+): it did sleep.
	 */
	if (p->on_rq == 1) {
		struct sched_entity___delayed *se = (void *)&p->se;

		if (!bpf_core_field_exists(se->sched_delayed) || !se->sched_delayed)
			return 0;
	}
	rq_wait_begin(tid);
	r = ws_reserve(sizeof(*r), WS_SCHED_WAKING);
	if (!r)
		return 0;
	r->wakee_tid = tid;
	r->wakee_pid = pid;
	bpf_get_current_comm(&r->waker_comm, sizeof(r->waker_comm));
	ws_submit(r);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(ws_sched_fork, struct task_struct *parent, struct task_struct *child)
{
	struct ws_sched_fork *r;

	if (!ws_traced_tgid(BPF_CORE_READ(parent, tgid)))
		return 0;
	r = ws_reserve(sizeof(*r), WS_SCHED_FORK);
	if (!r)
		return 0;
	r->child_tid = BPF_CORE_READ(child, pid);
	r->child_pid = BPF_CORE_READ(child, tgid);
	BPF_CORE_READ_STR_INTO(&r->child_comm, child, comm);
	ws_submit(r);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(ws_sched_exit, struct task_struct *p)
{
	struct ws_sched_exit *r;

	if (!ws_traced_tgid(BPF_CORE_READ(p, tgid)))
		return 0;
	rq_wait_end(BPF_CORE_READ(p, pid));
	r = ws_reserve(sizeof(*r), WS_SCHED_EXIT);
	if (!r)
		return 0;
	BPF_CORE_READ_STR_INTO(&r->comm, p, comm);
	ws_submit(r);
	return 0;
}

SEC("tp_btf/task_rename")
int BPF_PROG(ws_sched_comm, struct task_struct *task, const char *comm)
{
	struct ws_sched_comm *r;

	if (!ws_traced_tgid(BPF_CORE_READ(task, tgid)))
		return 0;
	r = ws_reserve(sizeof(*r), WS_SCHED_COMM);
	if (!r)
		return 0;
	r->tid = BPF_CORE_READ(task, pid);
	r->pid = BPF_CORE_READ(task, tgid);
	bpf_probe_read_kernel_str(&r->comm, sizeof(r->comm), comm);
	ws_submit(r);
	return 0;
}
