// SPDX-License-Identifier: GPL-2.0
/*
 * The core's own BPF program: it keeps, per CPU, which interrupt bracket is
 * running (so every record says whether "current" really did what it records)
 * and keeps the target filter in step with forks and exits. Plugins only read
 * what it maintains, through the shared maps of whyslow.bpf.h.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <whyslow/whyslow.bpf.h>

char LICENSE[] SEC("license") = "GPL";

static __always_inline void bracket_enter(__u8 kind)
{
	struct ws_cpu_state *cs = ws_cpu_state();
	__u32 d;

	if (!cs)
		return;
	d = cs->depth;
	if (d < WS_CTX_STACK) {
		cs->id[d & (WS_CTX_STACK - 1)] = ++cs->next_id;
		cs->kind[d & (WS_CTX_STACK - 1)] = kind;
	}
	cs->depth = d + 1;
}

static __always_inline void bracket_exit(void)
{
	struct ws_cpu_state *cs = ws_cpu_state();

	if (cs && cs->depth > 0)
		cs->depth--;
}

static __always_inline void timer_enter(int delta)
{
	struct ws_cpu_state *cs = ws_cpu_state();

	if (!cs)
		return;
	if (delta > 0)
		cs->timer++;
	else if (cs->timer > 0)
		cs->timer--;
}

/* Hardware interrupts and the x86 system vectors that can wake tasks. */
SEC("tp_btf/irq_handler_entry")
int BPF_PROG(ws_irq_entry)
{
	bracket_enter(WS_CTX_HARDIRQ);
	return 0;
}
SEC("tp_btf/irq_handler_exit")
int BPF_PROG(ws_irq_exit)
{
	bracket_exit();
	return 0;
}
SEC("tp_btf/local_timer_entry")
int BPF_PROG(ws_ltimer_entry)
{
	bracket_enter(WS_CTX_HARDIRQ);
	return 0;
}
SEC("tp_btf/local_timer_exit")
int BPF_PROG(ws_ltimer_exit)
{
	bracket_exit();
	return 0;
}
SEC("tp_btf/call_function_entry")
int BPF_PROG(ws_cf_entry)
{
	bracket_enter(WS_CTX_HARDIRQ);
	return 0;
}
SEC("tp_btf/call_function_exit")
int BPF_PROG(ws_cf_exit)
{
	bracket_exit();
	return 0;
}
SEC("tp_btf/call_function_single_entry")
int BPF_PROG(ws_cfs_entry)
{
	bracket_enter(WS_CTX_HARDIRQ);
	return 0;
}
SEC("tp_btf/call_function_single_exit")
int BPF_PROG(ws_cfs_exit)
{
	bracket_exit();
	return 0;
}
SEC("tp_btf/irq_work_entry")
int BPF_PROG(ws_iw_entry)
{
	bracket_enter(WS_CTX_HARDIRQ);
	return 0;
}
SEC("tp_btf/irq_work_exit")
int BPF_PROG(ws_iw_exit)
{
	bracket_exit();
	return 0;
}
SEC("tp_btf/reschedule_entry")
int BPF_PROG(ws_resched_entry)
{
	bracket_enter(WS_CTX_HARDIRQ);
	return 0;
}
SEC("tp_btf/reschedule_exit")
int BPF_PROG(ws_resched_exit)
{
	bracket_exit();
	return 0;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(ws_softirq_entry)
{
	bracket_enter(WS_CTX_SOFTIRQ);
	return 0;
}
SEC("tp_btf/softirq_exit")
int BPF_PROG(ws_softirq_exit)
{
	bracket_exit();
	return 0;
}

/* Timer callbacks: a wakeup inside one is a timeout or a sleep ending. */
SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(ws_hrtimer_entry)
{
	timer_enter(1);
	return 0;
}
SEC("tp_btf/hrtimer_expire_exit")
int BPF_PROG(ws_hrtimer_exit)
{
	timer_enter(-1);
	return 0;
}
SEC("tp_btf/timer_expire_entry")
int BPF_PROG(ws_timer_entry)
{
	timer_enter(1);
	return 0;
}
SEC("tp_btf/timer_expire_exit")
int BPF_PROG(ws_timer_exit)
{
	timer_enter(-1);
	return 0;
}

/*
 * A switch closes every bracket (ws_cpu_switch). Not loaded when the sched source runs: its
 * own sched_switch program does the same first (session_bpf.c).
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(ws_ctx_switch)
{
	ws_cpu_switch(ws_cpu_state());
	return 0;
}

/* Process @tgid (thread @tid) traced from now on: into the filter, the reader woken. */
static __always_inline void follow(__u32 tgid, __u32 tid, __u8 flags)
{
	struct ws_rec_hdr *r;
	__u8 one = 1;

	/* a full filter must not hide the child silently: it is counted like a lost record */
	if (bpf_map_update_elem(&ws_tgids, &tgid, &one, BPF_ANY)) {
		ws_count_lost(WS_KIND_UNTRACED_PROC, ws_cpu_state());
		return;
	}
	/* wake the reader: the child's maps must be read before a short program exits (a
	 * wakeup, not an event: a full ring loses nothing the analysis needs) */
	r = bpf_ringbuf_reserve(&ws_ring, sizeof(*r), 0);
	if (!r)
		return;
	ws_fill_hdr(r, sizeof(*r), WS_KIND_PROC_NEW, ws_cpu_state());
	r->tid = tid;
	r->pid = tgid;
	r->flags = flags;
	bpf_ringbuf_submit(r, BPF_RB_FORCE_WAKEUP);
}

/*
 * attach --cgroup: the id (kernfs inode) of the cgroup whose processes are traced, with those
 * of its sub-cgroups and every process that joins one later (0: none). Set before load.
 */
const volatile __u64 follow_cgroup_id = 0;

/* Is @cg the followed cgroup or below it? (cgroup.self is its first member: a parent css is
 * its cgroup.) The depth is bounded; a deeper cgroup is not followed by its joiners. */
static __always_inline bool cgroup_followed(struct cgroup *cg)
{
	for (int i = 0; i < 32 && cg; i++) {
		if (BPF_CORE_READ(cg, kn, id) == follow_cgroup_id)
			return true;
		cg = (struct cgroup *)BPF_CORE_READ(cg, self.parent);
	}
	return false;
}

/* Follow new processes of traced ones; threads share their tgid already. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(ws_follow_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);

	if (ptgid == ctgid)
		return 0;
	/*
	 * An untraced parent's child is followed when it starts in the followed cgroup (cgroup
	 * v2's clone3 CLONE_INTO_CGROUP: no cgroup_attach_task for it; v1 has no such clone)
	 */
	if (ws_traced_tgid(ptgid) ||
	    (follow_cgroup_id && cgroup_followed(BPF_CORE_READ(child, cgroups, dfl_cgrp))))
		follow(ctgid, BPF_CORE_READ(child, pid), 0);
	return 0;
}

/*
 * A process moved into a cgroup (a write to cgroup.procs: how systemd and container runtimes
 * start a service in one): one event for the leader, for the whole process when threadgroup.
 * The sched source's program on the same event, attached after this one, gives it its entry.
 */
SEC("tp_btf/cgroup_attach_task")
int BPF_PROG(ws_follow_cgroup, struct cgroup *dst, const char *path, struct task_struct *task,
	     bool threadgroup)
{
	__u32 tgid;

	if (!follow_cgroup_id || !cgroup_followed(dst))
		return 0;
	tgid = BPF_CORE_READ(task, tgid);
	if (!ws_traced_tgid(tgid))
		follow(tgid, BPF_CORE_READ(task, pid), 0);
	return 0;
}

/*
 * attach/watch --comm: the command names whose processes are traced (at most WS_FOLLOW_COMMS, each
 * NUL-padded to 16 bytes as task->comm is), 0 names: none. Set before load; the program below is
 * loaded only with names. Decided at exec, the only moment a process takes a new name of its own
 * (a fork keeps its parent's, and so its parent's answer): no switch or wakeup compares a string.
 */
#define WS_FOLLOW_COMMS 8
const volatile char follow_comm[WS_FOLLOW_COMMS][16] = {};
const volatile __u32 follow_ncomm = 0;

static __always_inline bool comm_followed(const char *comm)
{
	for (int i = 0; i < WS_FOLLOW_COMMS; i++) {
		bool same = true;

		if (i >= follow_ncomm)
			break;
		for (int k = 0; k < 16; k++) {
			if (comm[k] != follow_comm[i][k]) {
				same = false;
				break;
			}
			if (!comm[k])
				break;
		}
		if (same)
			return true;
	}
	return false;
}

/*
 * A process took a new name by exec: traced from now on when it is one of --comm's names, no
 * longer when it is not (the scheduler model's exec program, attached after this one, follows
 * the filter: sched.bpf.c ws_sched_exec). Exec has left it one thread, the one here.
 */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(ws_follow_exec, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	char comm[16] = {};
	struct ws_rec_hdr *r;

	BPF_CORE_READ_STR_INTO(&comm, p, comm);
	if (comm_followed(comm)) {
		if (!ws_traced_tgid(tgid))
			follow(tgid, BPF_CORE_READ(p, pid), WS_PROC_NEW_EXEC);
		return 0;
	}
	if (!ws_traced_tgid(tgid))
		return 0;
	/* as if it had exited, but living on: user space stops following it at once */
	r = ws_reserve(sizeof(*r), WS_KIND_PROC_EXIT);
	if (r) {
		r->flags = WS_PROC_EXIT_EXEC;
		ws_submit(r);
	}
	bpf_map_delete_elem(&ws_tgids, &tgid);
	return 0;
}

/* Forget a process when its last thread exits, so a reused pid is not traced. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(ws_follow_exit, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	int live = BPF_CORE_READ(p, signal, live.counter);
	struct ws_rec_hdr *r;

	if (live != 0 || !ws_traced_tgid(tgid))
		return 0;
	/* tell user space too, so its copy of the filter forgets the pid as well */
	r = ws_reserve(sizeof(*r), WS_KIND_PROC_EXIT);
	if (r)
		ws_submit(r);
	bpf_map_delete_elem(&ws_tgids, &tgid);
	return 0;
}
