/* SPDX-License-Identifier: MIT */
/*
 * BPF side of stack capture (see core/stacks/capture.h): nothing is done for a wait shorter than
 * ws_stack_min_ns; the caller compares with timestamps it already has, so a short wait costs
 * one comparison. Include after vmlinux.h, <bpf/bpf_helpers.h>, <whyslow/whyslow.bpf.h> and
 * <whyslow/arch.bpf.h>, and put
 *
 *	#define bpf_task_work ws_vmlinux_bpf_task_work
 *
 * before vmlinux.h: a vmlinux.h of a kernel with BPF task work (6.18+) defines the struct, an
 * older one does not, and this header defines it the same way for both.
 */
#ifndef WS_SCHED_STACK_BPF_H
#define WS_SCHED_STACK_BPF_H

#include "stacks/capture.h"
#include "pystack.bpf.h"

#if defined(__TARGET_ARCH_x86)
#define WS_REGS_PC(regs) ((regs)->ip)
#define WS_REGS_SP(regs) ((regs)->sp)
#elif defined(__TARGET_ARCH_arm64)
#define WS_REGS_PC(regs) ((regs)->pc)
#define WS_REGS_SP(regs) ((regs)->sp)
#endif

#undef bpf_task_work
struct bpf_task_work {
	__u64 __opaque;
} __attribute__((aligned(8)));

/*
 * Set by the core before load: the report's threshold (0: no stacks), bytes of user stack, and
 * where a waiter's user stack is copied in its own context (WS_STACK_DEFER_*). The branch not
 * taken is dead code to the verifier, so a kernel that refuses task work from a tracepoint
 * never sees the call.
 */
const volatile __u64 ws_stack_min_ns = 0;
const volatile __u32 ws_stack_user_bytes = WS_STACK_USER_DEFAULT;
const volatile __u8 ws_stack_defer = WS_STACK_DEFER_TASK_WORK;

extern int bpf_task_work_schedule_resume_impl(struct task_struct *task, struct bpf_task_work *tw,
					      void *map__map,
					      int (*callback)(struct bpf_map *map, void *key,
							      void *value),
					      void *aux__prog) __ksym __weak;

/* One pending user-stack copy per thread (its own context, as it returns to user space). */
struct ws_stack_work {
	struct bpf_task_work tw;
	__u64 wait_start, wait_end;
	__u64 pc, sp;  /* its user registers at switch-in: where it must still be */
	__u64 pending; /* WS_STACK_DEFER_SYSCALL_EXIT: a copy waits for its syscall's return */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct ws_stack_work);
} ws_stack_works SEC(".maps");

/*
 * WS_STACK_DEFER_SYSCALL_EXIT: how many copies are pending among the threads whose tid has
 * these low bits. Every syscall exit of the machine looks here first: an array lookup the
 * verifier inlines, where a hash lookup that finds nothing cost ~100 ns per syscall.
 */
#define WS_STACK_PENDING_SLOTS 65536
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, WS_STACK_PENDING_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
} ws_stack_pending SEC(".maps");

/* @tid's copy became pending (@on) or was taken or dropped (!@on). */
static __always_inline void ws_stack_pending_count(__u32 tid, bool on)
{
	__u32 slot = tid % WS_STACK_PENDING_SLOTS;
	__u32 *n = bpf_map_lookup_elem(&ws_stack_pending, &slot);

	if (n)
		__sync_fetch_and_add(n, on ? 1 : -1);
}

/*
 * A capture is resolved by the reader while its process lives: wake the reader now rather than
 * at its next poll (a program that exits right after a long wait would be gone by then). Only
 * long waits write these, so the wakeups are few.
 */
static __always_inline void ws_stack_submit(void *rec)
{
	bpf_ringbuf_submit(rec, BPF_RB_FORCE_WAKEUP);
}

#define WS_STACK_RAW_MAX (sizeof(struct ws_rec_stack_raw) + WS_STACK_USER_MAX)

/*
 * Stacks are extra: they may fill at most a quarter of the ring, so a burst of long waits
 * (2000 threads waking at once) never makes the ring drop the records chains are made of.
 * A stack skipped here leaves its link without frames; nothing else changes.
 */
static __always_inline bool ws_stack_room(__u64 need)
{
	__u64 avail = bpf_ringbuf_query(&ws_ring, BPF_RB_AVAIL_DATA);
	__u64 size = bpf_ringbuf_query(&ws_ring, BPF_RB_RING_SIZE);

	return avail + need <= size / 4;
}

static __always_inline void ws_stack_ident(struct ws_rec_stack_raw *r, struct task_struct *t,
					   __u32 wait_tid, __u8 role, __u64 start, __u64 end)
{
	r->tid = t->pid;
	r->pid = t->tgid;
	r->wait_tid = wait_tid;
	r->role = role;
	r->nkframes = 0;
	r->ulen = 0;
	r->wait_start = start;
	r->wait_end = end;
	ws_read_syscall_none(&r->sys);
	r->uregs.valid = 0;
	r->uregs.arch = WS_ARCH;
	r->uregs.nouser = 0;
	r->py.state = WS_PY_NONE;
	r->py.n = 0;
	r->py.gil = WS_GIL_NOT_READ;
	r->py.gil_holder = 0;
	r->holder_py.state = WS_PY_NONE;
	r->holder_py.n = 0;
	/* the record stands for the moment the stack was as captured: just before @end's event */
	r->hdr.ts = end - 1;
}

static __always_inline void ws_stack_kernel(struct ws_rec_stack_raw *r, struct task_struct *t)
{
	long n = bpf_get_task_stack(t, r->kframes, sizeof(r->kframes), 0);

	r->nkframes = n > 0 ? n / sizeof(__u64) : 0;
}

static long ws_stack_vma_end(struct task_struct *t, struct vm_area_struct *vma, void *data)
{
	*(__u64 *)data = vma->vm_end;
	return 0;
}

/* The user registers and stack top of current (in its own context: its memory is readable). */
static __always_inline void ws_stack_user(struct ws_rec_stack_raw *r, struct task_struct *cur)
{
	struct pt_regs *regs;
	__u64 sp, end = 0, n;

	if (ws_task_no_user(cur)) {
		r->uregs.nouser = WS_NOUSER_KTHREAD;
		return;
	}
	/* the Python frames it is in now: the ones it waited in (or woke from); a waiter's also
	 * those of the thread holding the GIL */
	ws_py_walk(&r->py, cur, &r->holder_py, r->role == WS_STACK_WAITER);
	ws_py_publish(&r->py, cur->tgid);
	ws_py_publish(&r->holder_py, cur->tgid);
	regs = (struct pt_regs *)bpf_task_pt_regs(cur);
	if (!regs) {
		r->uregs.nouser = WS_NOUSER_UNREADABLE;
		return;
	}
#if defined(__TARGET_ARCH_x86)
	r->uregs.pc = regs->ip;
	r->uregs.sp = regs->sp;
	r->uregs.fp = regs->bp;
	r->uregs.lr = 0;
	r->uregs.callee[0] = regs->bx;
	r->uregs.callee[1] = regs->r12;
	r->uregs.callee[2] = regs->r13;
	r->uregs.callee[3] = regs->r14;
	r->uregs.callee[4] = regs->r15;
	r->uregs.valid = WS_SREG_PC | WS_SREG_SP | WS_SREG_FP | (0x1fu << 4);
#elif defined(__TARGET_ARCH_arm64)
	r->uregs.pc = regs->pc;
	r->uregs.sp = regs->sp;
	r->uregs.fp = regs->regs[29];
	r->uregs.lr = regs->regs[30];
	for (int i = 0; i < 10; i++)
		r->uregs.callee[i] = regs->regs[19 + i];
	r->uregs.valid = WS_SREG_PC | WS_SREG_SP | WS_SREG_FP | WS_SREG_LR | WS_SREG_CALLEE_ALL;
#endif
	sp = r->uregs.sp;
	/* never past the end of the stack's mapping (a read across it would fail whole) */
	bpf_find_vma(cur, sp, ws_stack_vma_end, &end, 0);
	n = ws_stack_user_bytes;
	if (end > sp && end - sp < n)
		n = end - sp;
	if (n > WS_STACK_USER_MAX)
		n = WS_STACK_USER_MAX;
	/* a page not resident fails the read: try shorter copies before giving up */
	for (int i = 0; i < 3 && n; i++) {
		if (n <= WS_STACK_USER_MAX && !bpf_probe_read_user(r->ustack, n, (void *)sp)) {
			r->ulen = n;
			return;
		}
		n /= 4;
	}
	r->uregs.nouser = WS_NOUSER_UNREADABLE;
}

/*
 * No user half for the wait: say why in a note of the thread's own (kernel frames and user
 * registers none), so its link names the reason instead of being silently without one.
 */
static __always_inline void ws_stack_note(struct task_struct *t, __u32 wait_tid, __u8 role,
					  __u64 start, __u64 end, __u16 why)
{
	struct ws_rec_stack_raw *r;

	if (!ws_stack_room(sizeof(*r)))
		return;
	r = ws_reserve(sizeof(*r), WS_KIND_STACK_RAW);
	if (!r)
		return;
	ws_stack_ident(r, t, wait_tid, role, start, end);
	r->uregs.nouser = why;
	r->hdr.size = sizeof(*r);
	ws_stack_submit(r);
}

/* Copy the user half of the wait @w describes, in the waiter's own context (current). */
static __always_inline void ws_stack_copy_own(struct ws_stack_work *w)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct ws_rec_stack_raw *r;
	struct pt_regs *regs;

	/*
	 * The copy may run later than the first return to user space (a task work is queued
	 * through an irq_work): only a thread still at the pc and sp it slept with has the stack
	 * of that wait. Anywhere else it has moved on, and its stack would be another one's.
	 */
	regs = (struct pt_regs *)bpf_task_pt_regs(cur);
	if (!regs || WS_REGS_PC(regs) != w->pc || WS_REGS_SP(regs) != w->sp) {
		ws_stack_note(cur, cur->pid, WS_STACK_WAITER, w->wait_start, w->wait_end,
			      WS_NOUSER_MOVED_ON);
		return;
	}
	if (!ws_stack_room(WS_STACK_RAW_MAX)) {
		ws_stack_note(cur, cur->pid, WS_STACK_WAITER, w->wait_start, w->wait_end,
			      WS_NOUSER_RING_BUSY);
		return;
	}
	r = ws_reserve(WS_STACK_RAW_MAX, WS_KIND_STACK_RAW);
	if (!r)
		return;
	ws_stack_ident(r, cur, cur->pid, WS_STACK_WAITER, w->wait_start, w->wait_end);
	ws_stack_user(r, cur);
	r->hdr.size = sizeof(*r) + r->ulen;
	ws_stack_submit(r);
}

static int ws_stack_work_cb(struct bpf_map *map, void *key, void *value)
{
	ws_stack_copy_own(value);
	return 0;
}

/*
 * WS_STACK_DEFER_SYSCALL_EXIT (sched.bpf.c attaches it only then): a waiter whose copy is
 * pending returns from the syscall it slept in. Every syscall exit of the machine runs this,
 * so the common case is one lookup that finds nothing.
 */
static __always_inline void ws_stack_syscall_exit(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), slot = tid % WS_STACK_PENDING_SLOTS;
	__u32 *pending = bpf_map_lookup_elem(&ws_stack_pending, &slot);
	struct ws_stack_work *w;

	if (!pending || !*pending)
		return;
	w = bpf_map_lookup_elem(&ws_stack_works, &tid);
	if (!w || !w->pending)
		return;
	w->pending = 0;
	ws_stack_pending_count(tid, false);
	ws_stack_copy_own(w);
}

/*
 * @next is being switched in after a wait [@off_ts, @now] of at least ws_stack_min_ns: write
 * its kernel stack now (it has not run yet) and schedule the copy of its user stack for when
 * it returns to user space.
 */
/* Schedule the copy of @next's user stack for [@off_ts, @now]: 0, or WS_NOUSER_* why not. */
static __always_inline __u16 ws_stack_work_queue(struct task_struct *next, __u64 off_ts, __u64 now)
{
	struct ws_stack_work *w, init = {};
	__u32 tid = next->pid;
	struct pt_regs *regs;
	long err;

	if (ws_task_no_user(next))
		return WS_NOUSER_KTHREAD;
	if (ws_stack_defer == WS_STACK_DEFER_TASK_WORK && !bpf_task_work_schedule_resume_impl)
		return WS_NOUSER_NO_TASK_WORK;
	w = bpf_map_lookup_elem(&ws_stack_works, &tid);
	if (!w) {
		bpf_map_update_elem(&ws_stack_works, &tid, &init, BPF_NOEXIST);
		w = bpf_map_lookup_elem(&ws_stack_works, &tid);
		if (!w)
			return WS_NOUSER_NOT_QUEUED;
	}
	regs = (struct pt_regs *)bpf_task_pt_regs(next);
	if (!regs)
		return WS_NOUSER_UNREADABLE;
	w->wait_start = off_ts;
	w->wait_end = now;
	w->pc = WS_REGS_PC(regs);
	w->sp = WS_REGS_SP(regs);
	if (ws_stack_defer == WS_STACK_DEFER_SYSCALL_EXIT) {
		/* a wait outside a syscall (a page fault) never passes a syscall's exit */
		bool in_syscall = (long)WS_SYS_NR(regs) >= 0;

		if (in_syscall != !!w->pending)
			ws_stack_pending_count(tid, in_syscall);
		w->pending = in_syscall;
		return in_syscall ? 0 : WS_NOUSER_NO_TASK_WORK;
	}
	err = bpf_task_work_schedule_resume_impl(next, &w->tw, &ws_stack_works, ws_stack_work_cb,
						 NULL);
	/* -EBUSY (16): a copy is still pending; it reads this wait's pc, sp and times when it
	 * runs */
	return err && err != -16 ? WS_NOUSER_NOT_QUEUED : 0;
}

static __always_inline void ws_stack_waiter(struct task_struct *next, __u64 off_ts, __u64 now)
{
	struct ws_rec_stack_raw *r;
	__u16 why;

	/* no room for both halves: the kernel half alone, saying why no user half follows */
	if (!ws_stack_room(sizeof(*r) + WS_STACK_RAW_MAX)) {
		ws_stack_note(next, next->pid, WS_STACK_WAITER, off_ts, now, WS_NOUSER_RING_BUSY);
		return;
	}
	why = ws_stack_work_queue(next, off_ts, now);
	r = ws_reserve(sizeof(*r), WS_KIND_STACK_RAW);
	if (!r)
		return;
	ws_stack_ident(r, next, next->pid, WS_STACK_WAITER, off_ts, now);
	ws_stack_kernel(r, next);
	/* asleep in its syscall still: which file it waited on is named in user space */
	ws_read_syscall(next, &r->sys);
	r->uregs.nouser = why;
	ws_stack_submit(r);
}

/* current is waking a thread @wakee_tid whose wait [@off_ts, @now] is already long: who, from
 * where. Task context only (in an interrupt, current is whoever was hit). */
static __always_inline void ws_stack_waker(__u32 wakee_tid, __u64 off_ts, __u64 now)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct ws_rec_stack_raw *r;

	if (!ws_stack_room(WS_STACK_RAW_MAX)) {
		ws_stack_note(cur, wakee_tid, WS_STACK_WAKER, off_ts, now, WS_NOUSER_RING_BUSY);
		return;
	}
	r = ws_reserve(WS_STACK_RAW_MAX, WS_KIND_STACK_RAW);
	if (!r)
		return;
	ws_stack_ident(r, cur, wakee_tid, WS_STACK_WAKER, off_ts, now);
	ws_stack_kernel(r, cur);
	ws_stack_user(r, cur);
	r->hdr.size = sizeof(*r) + r->ulen;
	ws_stack_submit(r);
}

/* Thread @tid exits: drop its pending-work slot. */
static __always_inline void ws_stack_forget(__u32 tid)
{
	struct ws_stack_work *w;

	if (!ws_stack_min_ns)
		return;
	w = bpf_map_lookup_elem(&ws_stack_works, &tid);
	if (w && w->pending)
		ws_stack_pending_count(tid, false);
	bpf_map_delete_elem(&ws_stack_works, &tid);
}

#endif /* WS_SCHED_STACK_BPF_H */
