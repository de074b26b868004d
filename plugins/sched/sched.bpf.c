// SPDX-License-Identifier: GPL-2.0
/*
 * sched source, kernel side: context switches, wakeups and thread life of the
 * traced processes. BTF tracepoints only: they cost no perf glue per event and
 * the kernel guards them per program, so one running program does not make
 * another one miss its event.
 */
/* see <whyslow/stack.bpf.h> */
#define bpf_task_work ws_vmlinux_bpf_task_work
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <whyslow/whyslow.bpf.h>
#include <whyslow/arch.bpf.h>
#include <whyslow/stack.bpf.h>
#include "sched_rec.h"

char LICENSE[] SEC("license") = "GPL";

/*
 * Per-thread state, in task-local storage so the hot path never updates or
 * deletes a hash entry. Every task the programs meet gets an entry the first
 * time (traced or not), which caches the ws_tgids answer: an untraced task
 * then costs one storage lookup. The cache is exact because the traced set
 * only changes before the programs attach, or at a fork (the child is new and
 * has no entry yet), or when the last thread of a process exits.
 */
struct task_state {
	__u8 traced;
	__u8 rq_waiting; /* traced, runnable, not running */
	__u16 reserved;
	__u32 reserved2;
	__u64 off_ts; /* blocked (not preempted) since; 0: on CPU or runnable */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_state);
} task_state SEC(".maps");

/*
 * Traced threads that are runnable but not running. While there is any, every
 * switch on every CPU is written, so a runqueue wait can name the threads that
 * held the CPU; otherwise switches between untraced threads are skipped. Any
 * drift from racing updates only makes more switches written, never fewer.
 */
__u64 nr_rq_waiting;

static __always_inline struct task_state *state_of(struct task_struct *t)
{
	struct task_state *s = bpf_task_storage_get(&task_state, t, 0, 0);

	if (s)
		return s;
	s = bpf_task_storage_get(&task_state, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (s)
		s->traced = ws_traced_tgid(t->tgid);
	return s;
}

/* Traced? The storage may be unavailable (allocation failed, storage busy): ask the filter. */
static __always_inline bool traced(struct task_struct *t, struct task_state *s)
{
	return s ? s->traced : ws_traced_tgid(t->tgid);
}

static __always_inline void rq_wait_begin(struct task_state *s)
{
	if (s && !s->rq_waiting) {
		s->rq_waiting = 1;
		__sync_fetch_and_add(&nr_rq_waiting, 1);
	}
}

static __always_inline void rq_wait_end(struct task_state *s)
{
	if (s && s->rq_waiting) {
		s->rq_waiting = 0;
		__sync_fetch_and_add(&nr_rq_waiting, -1);
	}
}

SEC("tp_btf/sched_switch")
int BPF_PROG(ws_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	/* BTF tracepoint arguments are typed: plain loads, no probe-read helper calls */
	struct task_state *ps = state_of(prev), *ns = state_of(next);
	bool prev_traced = traced(prev, ps), next_traced = traced(next, ns);
	__u32 state = preempt ? 0 : prev_state;
	struct ws_sched_switch *r;
	__u64 now;

	if (prev_traced && state == 0 && prev->pid)
		rq_wait_begin(ps);
	if (next_traced)
		rq_wait_end(ns);
	if (!prev_traced && !next_traced && !nr_rq_waiting)
		return 0;
	r = ws_reserve(sizeof(*r), WS_SCHED_SWITCH);
	if (!r)
		return 0;
	r->prev_state = state;
	r->next_tid = next->pid;
	r->next_pid = next->tgid;
	r->reserved = 0;
	__builtin_memcpy(r->next_comm, next->comm, sizeof(r->next_comm));
	now = r->hdr.ts;
	ws_submit(r);
	/* the record's own timestamp: stack capture adds no clock read to a short wait */
	if (prev_traced && ps)
		ps->off_ts = state ? now : 0;
	if (next_traced && ns && ns->off_ts) {
		if (ws_stack_min_ns && now - ns->off_ts >= ws_stack_min_ns)
			ws_stack_waiter(next, ns->off_ts, now);
		ns->off_ts = 0;
	}
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
	struct task_state *s = bpf_task_storage_get(&task_state, p, 0, 0);
	struct task_struct *cur;
	struct ws_cpu_state *cs;
	struct ws_sched_waking *r;
	__u64 now;

	if (s ? !s->traced : !ws_traced_tgid(p->tgid))
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
	rq_wait_begin(s);
	r = ws_reserve(sizeof(*r), WS_SCHED_WAKING);
	if (!r)
		return 0;
	r->wakee_tid = p->pid;
	r->wakee_pid = p->tgid;
	bpf_get_current_comm(&r->waker_comm, sizeof(r->waker_comm));
	/* the wakee is asleep inside its syscall: its saved registers say which */
	ws_read_syscall(p, &r->wakee_sys);
	/* current did the wakeup only in task context: in an interrupt it is whoever was hit */
	cs = ws_cpu_state();
	cur = bpf_get_current_task_btf();
	if (cs && cs->depth == 0 && cur->pid)
		ws_read_syscall(cur, &r->waker_sys);
	else
		ws_read_syscall_none(&r->waker_sys);
	now = r->hdr.ts;
	ws_submit(r);
	/* a long wait: who woke it, from where (current is the waker only in task context) */
	if (ws_stack_min_ns && s && s->off_ts && now - s->off_ts >= ws_stack_min_ns && cs &&
	    cs->depth == 0 && cur->pid)
		ws_stack_waker(p->pid, s->off_ts, now);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(ws_sched_fork, struct task_struct *parent, struct task_struct *child)
{
	struct task_state *ps = state_of(parent), *cs;
	struct ws_sched_fork *r;

	/* a traced process's children are traced (the core follows them into ws_tgids) */
	if (!traced(parent, ps))
		return 0;
	cs = bpf_task_storage_get(&task_state, child, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (cs)
		cs->traced = 1;
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

	struct task_state *s = bpf_task_storage_get(&task_state, p, 0, 0);

	if (!traced(p, s))
		return 0;
	rq_wait_end(s);
	ws_stack_forget(p->pid);
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
