/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sched source, kernel side: a thread throttled by its cgroup's CPU quota, seen at its
 * switch-out (quota_throttled) and at its switch-in (unthrottled_at). Included by sched.bpf.c
 * only, after sched_state.bpf.h.
 */
#ifndef WS_SCHED_QUOTA_BPF_H
#define WS_SCHED_QUOTA_BPF_H

#include "sched_state.bpf.h"

/*
 * CPU bandwidth control (a cgroup's cpu.cfs_quota_us / cpu.max). From 6.18 a task whose group
 * ran out of quota is throttled on its own: a task work at its return to user space dequeues it
 * and sets task_struct.throttled, then it switches out runnable (state 0) and comes back with
 * no wakeup once the period timer unthrottles the group. Seen from switches alone that is a
 * runqueue wait on an idle CPU (issue 32). Own CO-RE flavors: these fields are missing from
 * older kernels' BTF (bpf_core_field_exists then says no, and nothing is claimed).
 */
struct task_struct___quota {
	bool throttled;
} __attribute__((preserve_access_index));

struct cfs_rq___quota {
	struct rq *rq;
	struct task_group *tg;
	__u64 throttled_clock_self;
	__u64 throttled_clock_self_time;
	bool throttled : 1;
} __attribute__((preserve_access_index));

/* How far up the task groups the throttled one is looked for. */
#define QUOTA_LEVELS 8

/*
 * @p switches out runnable: throttled by a quota? Then keep in @s which group's quota (the
 * nearest throttled cfs_rq up its hierarchy) and its own cfs_rq's throttle clock, from which
 * its switch-in reads when the throttle ended (unthrottled_at). A plain preemption costs the
 * one load of @p->throttled.
 */
static __always_inline bool quota_throttled(struct task_struct *p, struct task_state *s)
{
	struct task_struct___quota *q = (void *)p;
	struct sched_entity *se = &p->se;
	struct cfs_rq___quota *own;

	/* constants: on a kernel without these fields the verifier drops the rest (else refused) */
	if (!bpf_core_field_exists(q->throttled) ||
	    !bpf_core_field_exists(struct cfs_rq___quota, throttled_clock_self) ||
	    !bpf_core_field_exists(struct cfs_rq___quota, throttled_clock_self_time) ||
	    !q->throttled)
		return false;
	own = (void *)se->cfs_rq;
	if (!own)
		return false;
	s->thr_cg = ~0ULL;
	s->thr_cfs_rq = (__u64)own;
	s->thr_start = own->throttled_clock_self;
	s->thr_self_sum = own->throttled_clock_self_time;
#pragma unroll
	for (int i = 0; i < QUOTA_LEVELS && se; i++) {
		struct cfs_rq___quota *cr = (void *)se->cfs_rq;

		if (!cr)
			break;
		if (BPF_CORE_READ_BITFIELD(cr, throttled)) {
			s->thr_cg = BPF_CORE_READ(cr, tg, css.cgroup, kn, id);
			break;
		}
		se = se->parent;
	}
	return true;
}

/*
 * When @p's throttle ended, on the clock of the records, as its switch-in at @now sees it; 0
 * when that is not known. Its own cfs_rq sums the time it spent throttled
 * (throttled_clock_self_time, from throttled_clock_self to the unthrottle, rq clock): if it is
 * still the one it left on (not migrated), no throttle is running on it now and its sum grew,
 * the throttle ended at start + growth, rq->clock ago of that much. The rq clock was updated
 * by this very schedule().
 */
static __always_inline __u64 unthrottled_at(struct task_struct *p, const struct task_state *s,
					    __u64 now)
{
	struct cfs_rq___quota *cr = (void *)p->se.cfs_rq;
	__u64 grew, end, clock, ago;

	/* a constant: on a kernel without these fields the verifier drops the rest (else refused)
	 */
	if (!bpf_core_field_exists(cr->throttled_clock_self) ||
	    !bpf_core_field_exists(cr->throttled_clock_self_time))
		return 0;
	if (!cr || (__u64)cr != s->thr_cfs_rq || !s->thr_start || cr->throttled_clock_self)
		return 0;
	grew = cr->throttled_clock_self_time - s->thr_self_sum;
	end = s->thr_start + grew;
	clock = BPF_CORE_READ(cr, rq, clock);
	if (!grew || clock < end)
		return 0;
	ago = clock - end;
	return ago < now - s->off_ts ? now - ago : 0;
}

#endif
