/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sched source, kernel side: the per-thread state the programs of sched.bpf.c share, which
 * tasks they follow (traced threads and their helpers), and the count of traced threads
 * waiting for a CPU. Included by sched.bpf.c only (after vmlinux.h and the BPF headers): it
 * defines the maps and globals, so the skeleton names them as before.
 */
#ifndef WS_SCHED_STATE_BPF_H
#define WS_SCHED_STATE_BPF_H

/*
 * Per-thread state, in task-local storage so the hot path never updates or
 * deletes a hash entry. Every traced thread has an entry before its first
 * event (see seed_state), so a task without one is untraced: it costs one
 * lookup that finds nothing, ~3x cheaper than one that finds an entry when the
 * memory is cold (bench/bpf_floor.sh). Kernel threads that work for the traced
 * processes get one too (helpers). The answer stays right because the traced
 * set only changes before the programs attach, or when a task is made (the
 * new task gets its entry from ws_sched_newtask before it can run), or when
 * the last thread of a process exits; see ws_sched_seed for the tasks that
 * exist at attach.
 *
 * Summarising at the resolution: a traced thread's switch-out is not written
 * when it happens (how long the thread stays off CPU is not known yet). If its
 * wait reaches the resolution, the wakeup carries the switch-out (@off_ts); if
 * only its queueing does, the switch-in does. An off-CPU period shorter than
 * the resolution is never written: it is added to @sh, which rides on the
 * thread's next written switch-in (or its exit), so its time is still counted, and to the
 * bucket of its cause (@causes: what it blocked in, who woke it), written just before.
 * Once a switch-out was written (@off_emitted), the wakeup and the switch-in
 * that end that period are written too, so the analysis sees it whole.
 */
struct task_state {
	__u8 traced;
	/*
	 * A kernel thread that a traced thread woke, or that woke a traced thread: a kworker
	 * flushing its writes, jbd2 committing its fsync, kswapd reclaiming for its allocation. Its
	 * switches and wakeups are written from then on, to the end, so a chain can go on through
	 * the work it did (its timeline is whole from that moment); it is never a victim.
	 */
	__u8 helper;
	__u8 rq_waiting;  /* traced, runnable, not running */
	__u8 off_emitted; /* its current off-CPU period's switch-out was written */
	/*
	 * A wakeup came since its last switch: it may have cancelled a sleep, or raced the
	 * dequeue of the sleep now beginning (see woken_leaving). Cleared by its next switch.
	 */
	__u8 maybe_woken;
	__u8 off_throttled; /* it left the CPU throttled by a CPU quota (quota_throttled) */
	/* between the kernel's direct reclaim begin and end tracepoints (sched_reclaim.bpf.h) */
	__u8 in_reclaim;
	__u8 reserved0;
	__u32 off_state; /* task state it left the CPU in */
	/*
	 * Who woke it, at a wakeup of its current period summarised in task context (current):
	 * written from the waker's CPU, so among the few bytes a wakeup touches already
	 * (maybe_woken, off_ts, wake_ts), not in a cache line of its own: what another CPU has
	 * just written is most of what a cross-CPU ping-pong pays here (BENCHMARKS 6j).
	 */
	__u32 cause_waker;
	__u64 off_ts; /* when it left the CPU (0: on CPU) */
	/*
	 * When it was woken in its current off-CPU period, or while leaving the CPU (0: not
	 * yet). Cleared by the switch-in that ends the period; the switch-out only reads it
	 * (a wakeup on another CPU can race the switch-out's program, see ws_sched_waking),
	 * or sets it when it leaves runnable.
	 */
	__u64 wake_ts;
	__u32 off_cpu;
	/*
	 * What its current period blocked in, should it be summarised: the syscall and its first
	 * argument, read at its switch-out from its own registers (hot there: written at the
	 * syscall's entry; cold at a wakeup on another CPU).
	 */
	__s32 cause_nr;
	__u64 cause_res;
	struct ws_sched_short sh;
	/* only while off_throttled, read at its switch-out (quota_throttled) */
	__u64 thr_cg;	  /* the cgroup whose quota ran out: its id (kernfs inode), ~0: not found */
	__u64 thr_cfs_rq; /* the thread's own cfs_rq then (compared only, never followed) */
	__u64 thr_start;  /* that cfs_rq's throttled_clock_self (rq clock) */
	__u64 thr_self_sum; /* and its throttled_clock_self_time */
	/* its summarised periods by cause (sched_rec.h), flushed with its next written record */
	struct ws_sched_cause causes[WS_SCHED_CAUSES];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_state);
} task_state SEC(".maps");

/*
 * Off-CPU periods shorter than this are summarised, not written (see above).
 * 0: every switch and wakeup of a traced thread is written.
 */
const volatile __u64 resolution_ns = 0;

/*
 * Traced threads that are runnable but not running, and since when there has
 * been at least one. Once there has been one for the resolution, every switch
 * on every CPU is written, so a runqueue wait can name the threads that held
 * the CPU; otherwise switches between untraced threads are skipped (a wait
 * that reaches the resolution is covered from its start: it is in the set all
 * along, and the holder at its start is named by its switch-out's
 * prev_run_start). Any drift from racing updates only makes more switches
 * written, never fewer. The first waiter sets the start from a clock read
 * after its increment, so the start is later than any switch that saw none.
 */
__u64 nr_rq_waiting;
__u64 rq_nonempty_since;

/*
 * SEED_DONE alone: every traced thread has a task_state entry, so a task without one is
 * untraced. ws_sched_seed's first walk gives each thread of the traced processes an entry and
 * ends in SEED_WALKED; the core's second walk, an RCU grace period later, turns that into
 * SEED_DONE (see the core's run_iterator: a program that reads SEED_DONE then sees every
 * entry of the first walk). Until then, and for good once an entry could not be made
 * (SEED_FAILED), a task without one is asked about in ws_tgids and gets an entry that caches
 * the answer. One word, changed only by atomics, so that a failure and the end of a walk
 * cannot both win whatever the CPU's memory order. In a section of its own: most programs read
 * it and it is written a few times, so it must not share a cache line with the runqueue
 * counters that every CPU writes.
 */
#define SEED_WALKED 1
#define SEED_DONE 2
#define SEED_FAILED 4
__u64 seed_state SEC(".data.seed");

static __always_inline bool seeded(void)
{
	return seed_state == SEED_DONE;
}

/* A traced thread's entry could not be made: from now on a task without one may be traced. */
static __always_inline void entry_missing(void)
{
	__sync_fetch_and_or(&seed_state, SEED_FAILED);
}

/*
 * @t's entry, made if missing. A traced thread's can be missing when made concurrently
 * elsewhere (a creation that loses the race gets none): look again.
 */
static __always_inline struct task_state *entry_made(struct task_struct *t)
{
	struct task_state *s =
		bpf_task_storage_get(&task_state, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);

	return s ? s : bpf_task_storage_get(&task_state, t, 0, 0);
}

/*
 * @t's entry, made if missing while a task without one is not @known untraced. A program reads
 * @known (seeded()) once, before its first lookup: read set, the walk made its entries before;
 * read after a lookup that found nothing, the walk may have made the entry in between.
 */
static __always_inline struct task_state *state_of(struct task_struct *t, bool known)
{
	struct task_state *s = bpf_task_storage_get(&task_state, t, 0, 0);

	if (s || known)
		return s;
	s = bpf_task_storage_get(&task_state, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (s)
		s->traced = ws_traced_tgid(t->tgid);
	return s;
}

/*
 * Traced? With no entry: untraced once seeded (@known, see state_of); before that, or when no
 * entry could be made (allocation failed, storage busy), the filter says. (A lookup finds an
 * existing entry even while the storage is busy from 6.2 on; ws_sched_seed does not seed older
 * kernels.)
 */
static __always_inline bool traced(struct task_struct *t, struct task_state *s, bool known)
{
	return s ? s->traced : !known && ws_traced_tgid(t->tgid);
}

/* Its switches and wakeups written: traced, or a helper (see task_state). */
static __always_inline bool followed(struct task_struct *t, struct task_state *s, bool known)
{
	return s ? s->traced || s->helper : !known && ws_traced_tgid(t->tgid);
}

#define PF_KTHREAD_ 0x00200000

static __always_inline struct task_state *make_helper(struct task_struct *k)
{
	struct task_state *s = state_of(k, seeded()); /* a kernel thread can be traced (attach) */

	/* an untraced task has no entry once seeded: this one needs one from now on */
	if (!s)
		s = entry_made(k);
	if (s && !s->traced && !s->helper) {
		s->helper = 1;
		/*
		 * Its current off-CPU period, if it is in one, began before it was followed:
		 * no switch-out to summarise against, so the wakeup and the switch-in that end
		 * it are written (not taken for a wakeup racing ahead of a switch-out).
		 */
		s->off_emitted = 1;
	}
	return s;
}

/*
 * @p, an untraced kernel thread, is woken by current: is it set to work for the traced
 * processes? Only a wakeup done in task context says who asked (in an interrupt current is
 * whoever was hit).
 */
static __always_inline struct task_state *helper_of(struct task_struct *p, struct ws_cpu_state *cs)
{
	struct task_struct *cur;
	struct task_state *c;

	if (!cs || cs->depth)
		return NULL;
	cur = bpf_get_current_task_btf();
	/* only a traced waker: from helper to helper, the set would spread to every busy
	 * kernel thread of the machine */
	c = bpf_task_storage_get(&task_state, cur, 0, 0);
	if (!c || !c->traced)
		return NULL;
	return make_helper(p);
}

/* Count @s among the waiting. True if it is the first (its fetch-and-add saw none). */
static __always_inline bool rq_wait_begin(struct task_state *s)
{
	if (!s || s->rq_waiting)
		return false;
	s->rq_waiting = 1;
	return __sync_fetch_and_add(&nr_rq_waiting, 1) == 0;
}

/*
 * The program's clock reading, taken after counting @s among the waiting when @waits: the
 * first waiter's reading is rq_nonempty_since, so that start is later than any switch that
 * saw no waiter. One reading for both: on a VM a clock read is a good part of a program's cost.
 */
static __always_inline __u64 now_after_wait_begin(struct task_state *s, bool waits)
{
	bool first = waits && rq_wait_begin(s);
	__u64 now = bpf_ktime_get_ns();

	if (first)
		rq_nonempty_since = now;
	return now;
}

static __always_inline void rq_wait_end(struct task_state *s)
{
	if (s && s->rq_waiting) {
		s->rq_waiting = 0;
		__sync_fetch_and_add(&nr_rq_waiting, -1);
	}
}

/*
 * When @s's current off-CPU period stopped being a sleep: its wakeup; or its switch-out when
 * it left runnable, was woken while leaving the CPU (a racing wakeup can be stamped before
 * the switch-out), or no wakeup came yet.
 */
static __always_inline __u64 woken_at(const struct task_state *s)
{
	return s->wake_ts > s->off_ts ? s->wake_ts : s->off_ts;
}

/* Its period ends (the switch-in): the next one starts clean. */
static __always_inline void period_end(struct task_state *s)
{
	s->off_ts = 0;
	s->wake_ts = 0;
	s->off_emitted = 0;
	s->maybe_woken = 0;
	s->off_throttled = 0;
	s->cause_waker = 0;
}

#endif
