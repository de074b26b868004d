// SPDX-License-Identifier: GPL-2.0
/*
 * sched source, kernel side: context switches, wakeups and thread life of the
 * traced processes. BTF tracepoints only: they cost no perf glue per event and
 * the kernel guards them per program, so one running program does not make
 * another one miss its event.
 */
/* see stack.bpf.h */
#define bpf_task_work ws_vmlinux_bpf_task_work
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <whyslow/whyslow.bpf.h>
#include <whyslow/arch.bpf.h>
#include "stack.bpf.h"
#include "sched_rec.h"
#include "sched_state.bpf.h"
#include "sched_quota.bpf.h"
#include "sched_reclaim.bpf.h"

char LICENSE[] SEC("license") = "GPL";

extern int LINUX_KERNEL_VERSION __kconfig;

/*
 * What this CPU runs, as the switch that gave it the CPU saw it. A switch-out of a task known
 * untraced here needs no storage lookup, and a switch between untraced tasks while no traced
 * thread waits for a CPU needs no clock read: on a VM each costs 60-200 ns when its memory is
 * cold, as it mostly is (bench/bpf_floor.sh), and these are most switches of the machine.
 */
struct cpu_current {
	__u32 tid;  /* the task this CPU switched to last */
	__u8 known; /* tid is right: this CPU's switch programs ran since attach */
	/*
	 * Its switch-out must look its state up: it was followed when it got the CPU, or its
	 * state was unknown, or it is a kernel thread (one can be made a helper at any time,
	 * running or not, from any CPU).
	 */
	__u8 look_up;
	__u8 reserved[2];
	/*
	 * When it got the CPU; 0: while no traced thread waited for a CPU (the clock was not
	 * read). Then it has held the CPU since any later rq_nonempty_since: a value other
	 * than @since_seen, the one it read then.
	 */
	__u64 run_start;
	__u64 since_seen;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct cpu_current);
	__uint(max_entries, 1);
} cpu_current SEC(".maps");

#define TASK_WAKING_ 0x0200

struct qspinlock___val {
	atomic_t val;
} __attribute__((preserve_access_index));

/*
 * @p leaves its CPU to sleep: was it woken as it left? Yes if a wakeup found it already
 * dequeued before this program ran (wake_ts), or one that did so is under way (it set
 * TASK_WAKING). A wakeup that found it still queued only cancels the sleep if it came before
 * the scheduler read its state; if it came after, it waits on this CPU's runqueue lock, finds
 * the task dequeued and wakes it fully, and no second sched_waking says so: such a wakeup
 * (maybe_woken) still holds @p's pi_lock now. One that only cancelled an earlier sleep of this
 * stint released the lock long ago; a stranger holding it at this instant (a change of
 * affinity) is the remaining doubt, undone if a wakeup later finds it asleep (ws_sched_waking).
 */
static __always_inline bool woken_leaving(struct task_struct *p, const struct task_state *s)
{
	struct qspinlock___val *lock = (void *)&p->pi_lock.raw_lock;

	if (s->wake_ts || p->__state == TASK_WAKING_)
		return true;
	if (!s->maybe_woken)
		return false;
	return bpf_core_field_exists(lock->val) && lock->val.counter != 0;
}

/* Did @s sleep in its current period (not woken as it left, before its switch-out)? */
static __always_inline bool slept(const struct task_state *s)
{
	return s->off_state && (!s->wake_ts || s->wake_ts > s->off_ts);
}

/*
 * Add a summarised period, @blocked then @runnable ns, to @s's bucket of its cause: the syscall
 * and argument it blocked in (cause_nr, cause_res), or the runqueue when it was preempted. Four
 * buckets, compared in place: a period whose cause finds none free is only in @s->sh ("other").
 */
static __always_inline void cause_add(struct task_state *s, __u64 blocked, __u64 runnable)
{
	bool asleep = s->off_state != 0;
	__s32 nr = asleep ? s->cause_nr : WS_SCHED_CAUSE_RUNQUEUE;
	__u64 res = asleep ? s->cause_res : 0;

	for (int i = 0; i < WS_SCHED_CAUSES; i++) {
		struct ws_sched_cause *c = &s->causes[i];

		if (c->n && (c->nr != nr || c->res != res))
			continue;
		c->nr = nr;
		c->res = res;
		c->n++;
		c->blocked_ns += blocked;
		c->runnable_ns += runnable;
		if (asleep) {
			c->state = s->off_state;
			c->waker = s->cause_waker;
		}
		return;
	}
}

/*
 * Must the switch-in of traced @s at @now be written? Yes if the analysis saw
 * it leave, if there is no state to summarise into, or if its period off CPU
 * reached the resolution. Otherwise the period goes into its counters.
 */
static __always_inline bool switch_in_written(struct task_state *s, __u64 now)
{
	__u64 woke;

	if (!s || s->off_emitted || !s->off_ts || !resolution_ns)
		return true;
	if (now - s->off_ts >= resolution_ns)
		return true;
	woke = woken_at(s);
	s->sh.n++;
	s->sh.blocked_ns += woke - s->off_ts;
	s->sh.runnable_ns += now - woke;
	cause_add(s, woke - s->off_ts, now - woke);
	return false;
}

static __always_inline void cpu_current_set(struct cpu_current *cc, struct task_struct *next,
					    bool look_up, __u64 run_start, __u64 since_seen)
{
	if (!cc)
		return;
	cc->tid = next->pid;
	cc->known = 1;
	cc->look_up = look_up || ((next->flags & PF_KTHREAD_) && next->pid);
	cc->run_start = run_start;
	cc->since_seen = since_seen;
}

/* What this CPU's last switch saw of prev, if prev is the task it switched to (cpu_current). */
struct prev_seen {
	bool known;	  /* cpu_current is about prev */
	bool untraced;	  /* and says prev needs no lookup */
	__u64 run_start;  /* when prev got the CPU (0: not read) */
	__u64 since_seen; /* rq_nonempty_since then */
};

static __always_inline struct prev_seen prev_seen_here(const struct cpu_current *cc,
						       struct task_struct *prev)
{
	struct prev_seen seen = {};

	/* BTF tracepoint arguments are typed: plain loads, no probe-read helper calls */
	if (cc && cc->known && cc->tid == prev->pid) {
		seen.known = true;
		seen.untraced = !cc->look_up;
		seen.run_start = cc->run_start;
		seen.since_seen = cc->since_seen;
	}
	return seen;
}

/* How long before @now @then was, in ns, in 32 bits: ~0 for 4.29 s or more. */
static __always_inline __u32 ns_before(__u64 then, __u64 now)
{
	if (then > now)
		return 0;
	return now - then >= 0xffffffffULL ? 0xffffffff : (__u32)(now - then);
}

/*
 * Still off CPU by its state: traced prev got this CPU from a task whose switch-out was not
 * traced (some VM agents' threads leave their CPU without a sched_switch). That period is over
 * (what it holds is stale), it waits for a CPU no more, and this switch-out is written now, so
 * the analysis knows it ran (the core puts its switch-in where the CPU's last run seen began).
 * A period of it that was never written is lost: the record says so (WS_SCHED_PREV_UNSEEN) and
 * when it began (*@off_ts). True if so, the period ended.
 */
static __always_inline bool prev_ran_unseen(struct task_state *ps, bool prev_traced, __u64 *off_ts)
{
	if (!prev_traced || !ps || !ps->off_ts)
		return false;
	*off_ts = ps->off_ts;
	/* period_end() but maybe_woken: a wakeup that came during this run counts */
	rq_wait_end(ps);
	ps->off_ts = 0;
	ps->wake_ts = 0;
	ps->off_emitted = 0;
	return true;
}

/* The state prev leaves the CPU in, as the analysis must see it. */
static __always_inline __u32 prev_state_seen(struct task_struct *prev, struct task_state *ps,
					     __u32 state, bool prev_traced)
{
	/* a wakeup that came as it left: runnable from now on, as if preempted (not its death) */
	if (state && !(state & 0x80 /* TASK_DEAD */) && prev_traced && ps &&
	    woken_leaving(prev, ps))
		return 0;
	return state;
}

/*
 * When prev got the CPU, as its switch-out record says. It got it while no traced thread
 * waited for one (no clock read then): a runqueue wait that began since (its start is not the
 * one prev saw) began later, and that is what the wait needs to know.
 */
static __always_inline __u64 prev_run_start(const struct prev_seen *seen, __u64 waiting,
					    __u64 since, __u64 now)
{
	if (!seen->run_start && seen->known && waiting && since != seen->since_seen && since < now)
		return since;
	return seen->run_start;
}

/* A long wait (blocked, not preempted) of next ends: its stacks, taken in its own context. */
static __always_inline void stack_if_slept_long(struct task_struct *next, struct task_state *ns,
						bool next_traced, __u64 now)
{
	if (next_traced && ns && !ns->helper && ns->off_ts && slept(ns) && ws_stack_min_ns &&
	    now - ns->off_ts >= ws_stack_min_ns)
		ws_stack_waiter(next, ns->off_ts, now);
}

/*
 * What traced @prev blocks in, should its period be summarised: its syscall and first argument,
 * from its own saved registers (it is current: they were written at its syscall's entry, still
 * in its CPU's cache). A kernel thread, or a worker with no user registers, has none.
 */
static __always_inline void cause_begin(struct task_struct *prev, struct task_state *ps)
{
	struct pt_regs *regs;

	ps->cause_nr = WS_SYSCALL_NONE;
	ps->cause_res = 0;
	if (ws_task_no_user(prev))
		return;
	regs = (struct pt_regs *)bpf_task_pt_regs(prev);
	if (!regs)
		return;
	ps->cause_nr = WS_SYS_NR(regs);
	ps->cause_res = WS_SYS_ARG0(regs);
}

/*
 * Traced prev leaves the CPU at @now: its period begins. @emitted: this switch-out is written
 * now, not later with the record that ends the period.
 */
static __always_inline void period_begin(struct task_struct *prev, struct task_state *ps,
					 __u32 state, __u64 now, bool emitted)
{
	/*
	 * A wakeup that races this program on another CPU may set wake_ts only after
	 * woken_leaving read it: the period then reads as blocked until that wakeup
	 * (woken_at), as it was.
	 */
	ps->maybe_woken = 0;
	ps->off_ts = now;
	ps->off_state = state;
	ps->off_cpu = bpf_get_smp_processor_id();
	ps->off_emitted = emitted;
	ps->off_throttled = state == 0 && quota_throttled(prev, ps);
	if (state == 0) {
		ps->wake_ts = now;
		/* one a wakeup later finds asleep after all (slept_after_all): cause not read */
		ps->cause_nr = WS_SYSCALL_NONE;
		ps->cause_res = 0;
	} else if (resolution_ns) {
		cause_begin(prev, ps);
	}
}

/* The switch record's fields but next's period (switch_record_next). */
static __always_inline void switch_record_fill(struct ws_sched_switch *r, struct task_struct *prev,
					       struct task_struct *next,
					       const struct task_state *ps,
					       const struct task_state *ns, __u32 state,
					       __u64 run_start, bool prev_traced, bool prev_later)
{
	if (prev_later)
		r->hdr.flags |= WS_SCHED_PREV_LATER;
	if (ps && ps->helper)
		r->hdr.flags |= WS_SCHED_PREV_HELPER;
	if (ns && ns->helper)
		r->hdr.flags |= WS_SCHED_NEXT_HELPER;
	r->prev_state = state;
	r->next_tid = next->pid;
	r->next_pid = next->tgid;
	r->prev_unseen_ns = 0;
	__builtin_memcpy(r->next_comm, next->comm, sizeof(r->next_comm));
	if (prev_traced)
		__builtin_memset(r->prev_comm, 0, sizeof(r->prev_comm));
	else
		__builtin_memcpy(r->prev_comm, prev->comm, sizeof(r->prev_comm));
	r->prev_run_start = run_start;
	r->next_off_ts = 0;
	r->next_wake_ts = 0;
	r->next_off_state = 0;
	r->next_off_cpu = 0;
	__builtin_memset(&r->next_short, 0, sizeof(r->next_short));
	r->next_throttle_cg = 0;
	r->next_unthrottled_ts = 0;
}

/*
 * @s's buckets of summarised periods (cause_add), if any is used, as a record of its thread
 * @tid written just before the one that carries their totals (@s->sh); the buckets start
 * over. Not written (ring full): the totals still say how many and how long.
 */
static __always_inline void causes_flush(struct task_state *s, __u32 tid)
{
	struct ws_sched_short_causes *r;

	if (!s->causes[0].n)
		return;
	r = ws_reserve(sizeof(*r), WS_SCHED_SHORT_CAUSES);
	if (r) {
		r->tid = tid;
		r->arch = WS_ARCH;
		r->reserved = 0;
		r->total = s->sh;
		__builtin_memcpy(r->c, s->causes, sizeof(r->c));
		ws_submit(r);
	}
	__builtin_memset(s->causes, 0, sizeof(s->causes));
}

/* Traced next's period, which its switch-in at @now ends, rides on the record: it is over. */
static __always_inline void switch_record_next(struct ws_sched_switch *r, struct task_struct *next,
					       struct task_state *ns, __u64 now)
{
	if (ns->off_throttled) {
		r->next_throttle_cg = ns->thr_cg;
		r->next_unthrottled_ts = unthrottled_at(next, ns, now);
	}
	if (!ns->off_emitted && ns->off_ts) {
		/* woken as it left, stamped before its switch-out: runnable throughout */
		bool asleep = slept(ns);

		r->next_off_ts = ns->off_ts;
		r->next_wake_ts = asleep ? ns->wake_ts : 0;
		r->next_off_state = asleep ? ns->off_state : 0;
		r->next_off_cpu = ns->off_cpu;
	}
	r->next_short = ns->sh;
	__builtin_memset(&ns->sh, 0, sizeof(ns->sh));
	period_end(ns);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(ws_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 waiting = nr_rq_waiting, since = rq_nonempty_since, run_start;
	__u32 zero = 0, state = preempt ? 0 : prev_state;
	struct cpu_current *cc = bpf_map_lookup_elem(&cpu_current, &zero);
	bool known = seeded();
	struct prev_seen seen = prev_seen_here(cc, prev);
	struct task_state *ps = NULL, *ns;
	bool prev_traced = false, next_traced, look_up, write, rq_long, dying, prev_later,
	     in_unseen;
	struct ws_sched_switch *r;
	__u64 now, unseen_off = 0;

	/* the idle task (pid 0) is neither traced nor a helper: never looked up */
	if (!seen.untraced && prev->pid) {
		ps = state_of(prev, known);
		prev_traced = followed(prev, ps, known);
	}
	ns = next->pid ? state_of(next, known) : NULL;
	next_traced = next->pid && followed(next, ns, known);
	/* without an entry it is untraced once seeded; before that, unknown */
	look_up = next_traced || (!ns && next->pid && !known);
	/* the core's own switch program is left out for this one (whyslow.bpf.h) */
	ws_cpu_switch(ws_cpu_state());
	if (!prev_traced && !next_traced && !waiting) {
		/* nothing to write, and no runqueue wait that next's run could delay */
		cpu_current_set(cc, next, look_up, 0, since);
		return 0;
	}
	in_unseen = prev_ran_unseen(ps, prev_traced, &unseen_off);
	state = prev_state_seen(prev, ps, state, prev_traced);
	/* runqueue waits that make every switch written: the traced threads' only */
	now = now_after_wait_begin(ps, state == 0 && prev->pid && prev_traced &&
					       traced(prev, ps, known));
	if (next_traced)
		rq_wait_end(ns);
	cpu_current_set(cc, next, look_up, now, 0);
	run_start = prev_run_start(&seen, waiting, since, now);
	stack_if_slept_long(next, ns, next_traced, now);
	rq_long = nr_rq_waiting && (!resolution_ns || now - rq_nonempty_since >= resolution_ns);
	if (!prev_traced && !next_traced && !rq_long)
		return 0;
	/*
	 * Written: while a traced thread waits for a CPU (to name who held it), a
	 * traced thread's last switch, and a switch-in that ends a period at
	 * least the resolution long or whose switch-out was written.
	 */
	dying = prev_traced &&
		((state & 0x80 /* TASK_DEAD */) || (prev->flags & 0x4 /* PF_EXITING */));
	/* switch_in_written() last: when it says no, it has summed next's period already */
	write = !resolution_ns || rq_long || dying || in_unseen ||
		(next_traced && switch_in_written(ns, now));
	/*
	 * prev's switch-out waits for the record that ends its period (its
	 * wakeup or switch-in, when the period reaches the resolution), even when
	 * this record is written for next's sake: writing it here would make its
	 * wakeup and switch-in due whatever their length, and in a ping-pong that
	 * would write every switch from then on.
	 */
	prev_later = resolution_ns && prev_traced && ps && !dying && !in_unseen;
	if (prev_traced && ps)
		period_begin(prev, ps, state, now, write && !prev_later);
	/* before prev's switch-out record (written here or later): the wait it begins */
	if (prev_traced && ps)
		high_sleep(prev, ps, state);
	/* what next's summarised periods waited for: just before the record that counts them */
	if (write && next_traced && ns)
		causes_flush(ns, next->pid);
	/* not written, or lost (counted): next's short waits ride on a later record, its period is
	 * over */
	r = write ? ws_reserve(sizeof(*r), WS_SCHED_SWITCH) : NULL;
	if (!r) {
		if (next_traced && ns)
			period_end(ns);
		return 0;
	}
	switch_record_fill(r, prev, next, ps, ns, state, run_start, prev_traced, prev_later);
	if (in_unseen) {
		r->hdr.flags |= WS_SCHED_PREV_UNSEEN;
		r->prev_unseen_ns = ns_before(unseen_off, r->hdr.ts);
	}
	if (next_traced && ns)
		switch_record_next(r, next, ns, now);
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

/*
 * A task still queued is being woken before it managed to sleep: the
 * wakeup cancels the sleep and ends no wait, unless the scheduler dequeues
 * it first, and then this wakeup ends the sleep and traces nothing more:
 * its switch-out decides. Not one whose dequeue the scheduler merely
 * delayed (EEVDF, 6.12+): it did sleep.
 */
static __always_inline bool wakeup_cancels_sleep(struct task_struct *p)
{
	struct sched_entity___delayed *se = (void *)&p->se;

	if (p->on_rq != 1)
		return false;
	return !bpf_core_field_exists(se->sched_delayed) || !se->sched_delayed;
}

/*
 * Its switch-out took it for woken as it left (woken_leaving's doubt), yet a wakeup
 * finds it asleep (dequeued, not migrating): it slept, and this wakeup ends that.
 */
static __always_inline void slept_after_all(struct task_struct *p, struct task_state *s)
{
	if (s && s->off_ts && !s->off_emitted && !s->off_state && p->on_rq != 2) {
		s->off_state = p->__state ? p->__state : 1;
		s->wake_ts = 0;
	}
}

/* Signals pending that @p does not block: the wakeup is the signal's (signal_wake_up). */
static __always_inline __u64 signals_pending(struct task_struct *p)
{
	return (p->pending.signal.sig[0] | p->signal->shared_pending.signal.sig[0]) &
	       ~p->blocked.sig[0];
}

/*
 * Is the wakeup at @now of @s, whose switch-out was not written, left unwritten (summarised
 * into its period)? *@cs: this CPU's state, read here if not yet.
 */
static __always_inline bool wakeup_summarised(struct task_state *s, __u64 now, __u64 sigpending,
					      struct ws_cpu_state **cs)
{
	if (!s->off_ts) {
		/*
		 * Leaving its CPU (dequeued, its switch-out not traced yet, or being
		 * traced there right now): the sleep about to begin ends at once. The
		 * switch-out reads this; if it read before this store, the period's
		 * end reads it (woken_at).
		 */
		s->wake_ts = now;
		return true;
	}
	if (!*cs)
		*cs = ws_cpu_state();
	/*
	 * A short wait is summed only when another task woke it (or nothing did: it was
	 * preempted). One an interrupt or a signal ended is written whole: what the
	 * interrupt completed (a block request, a packet, a timer) or the signal is a cause
	 * another source can prove, and such waits come at the rate of devices, timers and
	 * signals, not of the scheduler.
	 */
	if (now - s->off_ts < resolution_ns && *cs && !(*cs)->depth && !sigpending) {
		if (!s->wake_ts)
			s->wake_ts = now;
		/* in task context current is the waker: its cause's bucket names it */
		s->cause_waker = (__u32)bpf_get_current_pid_tgid();
		return true;
	}
	return false;
}

/* The wakee's side of the record: its wait, and its switch-out if that was not written. */
static __always_inline void waking_record_wakee(struct ws_sched_waking *r, struct task_struct *p,
						struct task_state *s, __u64 sigpending)
{
	r->off_ts = 0;
	r->off_state = 0;
	r->off_cpu = 0;
	if (s && s->off_ts && !s->off_emitted) {
		/* the switch-out that began this wait was not written: it rides here */
		r->off_ts = s->off_ts;
		r->off_state = s->off_state;
		r->off_cpu = s->off_cpu;
		s->off_emitted = 1;
	}
	/* (leaving its CPU, off_ts 0: the analysis pairs this record with the switch-out) */
	if (s && !s->wake_ts && s->off_ts)
		s->wake_ts = r->hdr.ts;
	if (s && s->helper)
		r->hdr.flags |= WS_SCHED_WAKEE_HELPER;
	r->wakee_tid = p->pid;
	r->wakee_pid = p->tgid;
	bpf_get_current_comm(&r->waker_comm, sizeof(r->waker_comm));
	/* the wakee is asleep inside its syscall: its saved registers say which */
	ws_read_syscall(p, &r->wakee_sys);
	/* one that runs no user code has no registers of its own: not read, not "in no syscall"
	 * (which names a user thread's page fault; format 1.13) */
	if (ws_task_no_user(p))
		r->wakee_sys.arch = WS_ARCH_UNKNOWN;
	r->waker_short = 0;
	r->reserved2 = 0;
	r->wakee_sigpending = sigpending;
	r->wakee_state = p->__state;
	r->reserved3 = 0;
}

/*
 * Current wakes a thread and the wakeup is written: current is the waker (@task_ctx), and its
 * stretch "running" up to now may hold summarised periods. A chain through that stretch is
 * built when the wakee's wait ends, before the waker's next written record: their causes go
 * now, before the wakeup. Its state (NULL: none, or not summarising).
 */
static __always_inline struct task_state *waker_flush(struct task_struct *cur, bool task_ctx)
{
	/* only summarising leaves periods unwritten: no lookup otherwise */
	struct task_state *ws =
		resolution_ns && task_ctx ? bpf_task_storage_get(&task_state, cur, 0, 0) : NULL;

	if (ws)
		causes_flush(ws, cur->pid);
	return ws;
}

/* The waker's side of the record, when current is the waker (@task_ctx: see the caller). */
static __always_inline void waking_record_waker(struct ws_sched_waking *r, struct task_state *s,
						struct task_struct *cur, bool task_ctx,
						const struct task_state *ws)
{
	if (task_ctx) {
		ws_read_syscall(cur, &r->waker_sys);
		if (ws)
			r->waker_short = ws->sh.n;
		/* a kernel thread that wakes a traced one works for it: follow it from now on
		 * (this wait's cause stays its untraced waker: no history of it yet) */
		if (s && s->traced && (cur->flags & PF_KTHREAD_))
			make_helper(cur);
	} else {
		ws_read_syscall_none(&r->waker_sys);
	}
}

SEC("tp_btf/sched_waking")
int BPF_PROG(ws_sched_waking, struct task_struct *p)
{
	bool known = seeded(); /* before the lookup: see state_of */
	struct task_state *s = bpf_task_storage_get(&task_state, p, 0, 0), *ws;
	struct ws_cpu_state *cs = NULL;
	struct task_struct *cur;
	struct ws_sched_waking *r;
	__u64 now, sigpending;
	bool task_ctx;

	if (!followed(p, s, known)) {
		/* most wakeups of the machine end here (no entry): one flag test, no other lookup
		 */
		if (!(p->flags & PF_KTHREAD_))
			return 0;
		cs = ws_cpu_state();
		s = helper_of(p, cs);
		if (!s)
			return 0;
	}
	/* before on_rq is read: its switch-out, if it is leaving now, decides (woken_leaving) */
	if (s)
		s->maybe_woken = 1;
	if (wakeup_cancels_sleep(p))
		return 0;
	slept_after_all(p, s);
	now = now_after_wait_begin(s, !s || s->traced);
	sigpending = signals_pending(p);
	if (s && resolution_ns && !s->off_emitted && wakeup_summarised(s, now, sigpending, &cs))
		return 0;
	/* current did the wakeup only in task context: in an interrupt it is whoever was hit */
	if (!cs)
		cs = ws_cpu_state();
	cur = bpf_get_current_task_btf();
	task_ctx = cs && cs->depth == 0 && cur->pid;
	ws = waker_flush(cur, task_ctx);
	r = ws_reserve(sizeof(*r), WS_SCHED_WAKING);
	if (!r)
		return 0;
	waking_record_wakee(r, p, s, sigpending);
	waking_record_waker(r, s, cur, task_ctx, ws);
	now = r->hdr.ts;
	ws_submit(r);
	/* a long wait: who woke it, from where (current is the waker only in task context) */
	if (ws_stack_min_ns && s && !s->helper && s->off_ts && s->off_state &&
	    now - s->off_ts >= ws_stack_min_ns && task_ctx)
		ws_stack_waker(p->pid, s->off_ts, now);
	return 0;
}

/* Is @t traced, whatever its entry says or lacks? For rare events: may ask the filter. */
static __always_inline bool traced_surely(struct task_struct *t)
{
	return traced(t, bpf_task_storage_get(&task_state, t, 0, 0), false);
}

static __always_inline void make_traced(struct task_struct *t)
{
	struct task_state *s = entry_made(t);

	if (s)
		s->traced = 1;
	else
		entry_missing();
}

/*
 * Every new task: a traced task's threads and children are traced (the core follows new
 * processes into ws_tgids). Not sched_process_fork: io_uring's workers and vhost's tasks are
 * made without it, as threads of the process that asks for them. Runs in the maker's context,
 * after the task has its pid and before it can run.
 */
SEC("tp_btf/task_newtask")
int BPF_PROG(ws_sched_newtask, struct task_struct *task)
{
	if (traced_surely(bpf_get_current_task_btf()))
		make_traced(task);
	return 0;
}

/*
 * @t's cgroups as it is made (its css_set is in place by then), by id: a few loads per new
 * thread, none per event. A child that exits before user space reads its /proc is still named
 * (sched_rec.h). A kernel without the cpu controller leaves its id 0.
 */
#define CPU_SUBSYS_MAX 32 /* past any kernel's CGROUP_SUBSYS_COUNT (12 on this 6.18 build) */
static __always_inline void new_thread_cgroups(struct task_struct *t, struct ws_sched_fork *r)
{
	struct css_set *cgs = BPF_CORE_READ(t, cgroups);

	r->child_cg_dfl = r->child_cg_cpu = 0; /* a reserved record is not zeroed */
	if (!cgs)
		return;
	r->child_cg_dfl = BPF_CORE_READ(cgs, dfl_cgrp, kn, id);
	if (bpf_core_enum_value_exists(enum cgroup_subsys_id, cpu_cgrp_id)) {
		int cpu = bpf_core_enum_value(enum cgroup_subsys_id, cpu_cgrp_id);

		/* the kernel's own index (its BTF's enum), within css_set.subsys[] */
		if (cpu >= 0 && cpu < CPU_SUBSYS_MAX)
			r->child_cg_cpu = BPF_CORE_READ(cgs, subsys[cpu], cgroup, kn, id);
	}
}

/* @t is a traced thread from now on: the analysis learns it (and its process) here. */
static __always_inline void new_thread_record(struct task_struct *t)
{
	struct ws_sched_fork *r = ws_reserve(sizeof(*r), WS_SCHED_FORK);

	if (!r)
		return;
	r->child_tid = BPF_CORE_READ(t, pid);
	r->child_pid = BPF_CORE_READ(t, tgid);
	BPF_CORE_READ_STR_INTO(&r->child_comm, t, comm);
	new_thread_cgroups(t, r);
	ws_submit(r);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(ws_sched_fork, struct task_struct *parent, struct task_struct *child)
{
	/* or started in attach --cgroup's cgroup: the core's program (attached first) put it in the
	 * filter */
	if (!traced_surely(parent) && !ws_traced_tgid(BPF_CORE_READ(child, tgid)))
		return 0;
	/*
	 * Again: a child whose task_newtask came before ws_sched_newtask was attached, and whose
	 * process the walk then passed (not yet in ws_tgids: the core adds it on this event).
	 * Still before the child can run.
	 */
	make_traced(child);
	new_thread_record(child);
	return 0;
}

/*
 * Moved into attach --cgroup's cgroup: the core's ws_follow_cgroup, attached first, put its
 * process in the filter; its threads made from now on follow it (ws_sched_newtask). Those it
 * already has are not looked for: runtimes and systemd move a process before it makes any.
 */
SEC("tp_btf/cgroup_attach_task")
int BPF_PROG(ws_sched_cgroup_join, struct cgroup *dst, const char *path, struct task_struct *task,
	     bool threadgroup)
{
	struct task_state *s = bpf_task_storage_get(&task_state, task, 0, 0);

	if ((s && s->traced) || !ws_traced_tgid(BPF_CORE_READ(task, tgid)))
		return 0;
	make_traced(task);
	/* as a fork would: the analysis follows its process from here (hdr.tid is the mover) */
	new_thread_record(task);
	return 0;
}

/*
 * A thread that execs takes its leader's pid, which may be lower than the one the walk had
 * reached: one with no event since attaching would be passed over. Exec is rare: make sure.
 */
/*
 * attach --comm (set by the loader): the core's exec program, attached before this one, took a
 * process that execs into a name not followed out of the filter: its threads, and the children
 * they make, are no longer traced here either.
 */
const volatile bool ws_exec_untraces = false;

SEC("tp_btf/sched_process_exec")
int BPF_PROG(ws_sched_exec, struct task_struct *p)
{
	struct task_state *s;

	if (ws_exec_untraces && !ws_traced_tgid(BPF_CORE_READ(p, tgid))) {
		s = bpf_task_storage_get(&task_state, p, 0, 0);
		if (s)
			s->traced = 0;
		return 0;
	}
	if (traced_surely(p))
		make_traced(p);
	return 0;
}

/*
 * Run twice over every task of the machine by the core, after it attached the programs (ABI
 * 2.4): each thread of a traced process gets its entry, after which a task without one is
 * untraced (seed_state). A task made meanwhile gets its entry from ws_sched_newtask (or
 * ws_sched_fork), attached before this runs; one that met a program first got it from
 * state_of; one that execs from ws_sched_exec. Not on kernels before 6.2, where
 * a lookup while the storage is busy on its CPU (an interrupt's program nested in another's
 * storage call) finds nothing even when there is an entry: there, no entry must keep meaning
 * "ask the filter".
 */
SEC("iter/task")
int ws_sched_seed(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	struct task_state *s;

	if (LINUX_KERNEL_VERSION < KERNEL_VERSION(6, 2, 0))
		return 0;
	if (!t) {
		/* a walk is over (one cut short never gets here: nothing is assumed) */
		if (__sync_val_compare_and_swap(&seed_state, 0, SEED_WALKED) == SEED_WALKED)
			__sync_val_compare_and_swap(&seed_state, SEED_WALKED, SEED_DONE);
		return 0;
	}
	if (!ws_traced_tgid(t->tgid))
		return 0;
	s = entry_made(t);
	if (!s) {
		entry_missing();
		return 0;
	}
	if (!s->traced) {
		/*
		 * As for a new helper: an off-CPU period it may be in began unseen, so the wakeup
		 * and the switch-in that end it are written (not taken for a wakeup racing ahead
		 * of a switch-out, as a period with no switch-out would be).
		 */
		s->off_emitted = 1;
		s->traced = 1;
	}
	return 0;
}

/*
 * A waiter's user stack on a kernel that refuses BPF task work here (stack.bpf.h,
 * WS_STACK_DEFER_SYSCALL_EXIT): the core loads this only then, with stacks on.
 */
SEC("tp_btf/sys_exit")
int BPF_PROG(ws_stack_sys_exit, struct pt_regs *regs, long ret)
{
	ws_stack_syscall_exit();
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(ws_sched_exit, struct task_struct *p)
{
	struct task_state *s = bpf_task_storage_get(&task_state, p, 0, 0);
	struct ws_sched_exit *r;

	/* exits are rare: the filter rather than any doubt */
	if (!traced(p, s, false))
		return 0;
	rq_wait_end(s);
	ws_stack_forget(p->pid);
	if (s)
		causes_flush(s, p->pid);
	r = ws_reserve(sizeof(*r), WS_SCHED_EXIT);
	if (!r)
		return 0;
	BPF_CORE_READ_STR_INTO(&r->comm, p, comm);
	if (s) {
		r->short_waits = s->sh;
		__builtin_memset(&s->sh, 0, sizeof(s->sh));
	} else {
		__builtin_memset(&r->short_waits, 0, sizeof(r->short_waits));
	}
	r->exit_code = BPF_CORE_READ(p, exit_code);
	r->mem_len = 0;
	ws_read_syscall_none(&r->sys);
	/* killed: what it was blocked in, read while its registers and memory are still its own */
	if (r->exit_code & 0x7f) {
		ws_read_syscall(p, &r->sys);
		if (r->sys.nr == WS_NR_futex &&
		    !bpf_probe_read_user(r->mem, sizeof(r->mem), (void *)r->sys.args[0]))
			r->mem_len = sizeof(r->mem);
	}
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
