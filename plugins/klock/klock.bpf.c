// SPDX-License-Identifier: GPL-2.0
/*
 * klock source, kernel side: waits of traced threads on sleeping kernel locks
 * (mutex, rwsem, semaphore, rt_mutex, percpu-rwsem), from the lock
 * tracepoints contention_begin/contention_end, and the wakeups that end them.
 *
 * There is no "release" tracepoint. What is recorded instead, at the wakeup
 * of a thread that waits for lock L, is whether the waker's kernel stack runs
 * through a function that releases a sleeping lock and wakes its waiters
 * (up_write, mutex_unlock, ...): a thread waits for one lock at a time, and
 * those functions wake only waiters of the lock they release, so such a
 * wakeup is L's release by the waker. The ranges of those functions come
 * from user space (/proc/kallsyms) through rodata.
 *
 * Spinning contention (LCB_F_SPIN) is left out: a spinner does not sleep, so
 * it never ends a wait the core asks about.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <whyslow/whyslow.bpf.h>
#include "klock_rec.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by klock.c before load: [lo, hi) of each release function, and its enum klock_fn. */
const volatile __u64 klock_fn_lo[KLOCK_MAX_FN] = {};
const volatile __u64 klock_fn_hi[KLOCK_MAX_FN] = {};
const volatile __u32 klock_fn_id[KLOCK_MAX_FN] = {};
const volatile __u32 klock_nfn = 0;

struct waiting {
	__u64 lock;
	__u32 flags;
	__u32 pid;
};

/* Traced threads inside a blocking contention. LRU: a thread may die waiting. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, struct waiting);
	__uint(max_entries, 16384);
} klock_waiting SEC(".maps");

struct frames {
	__u64 ip[KLOCK_MAX_FRAMES];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct frames);
	__uint(max_entries, 1);
} klock_stack SEC(".maps");

/* Low bits of the owner words that are flags, not pointer (kernel/locking/{mutex,rwsem}.c). */
#define MUTEX_FLAGS 0x07UL
#define RWSEM_READER_OWNED (1UL << 0)
#define RWSEM_OWNER_FLAGS_MASK 0x03UL

/*
 * The lock's holder as the lock itself records it. Read through
 * bpf_probe_read_kernel (BPF_CORE_READ): a holder that exits meanwhile
 * makes the read fail or stale, never unsafe. Fields that this kernel's
 * structs lack (PREEMPT_RT's mutex) are not read.
 */
static __always_inline void read_owner(struct ws_klock_begin *r, void *lock, unsigned int flags)
{
	struct task_struct *t = NULL;
	long v = 0;

	r->owner_tid = r->owner_pid = 0;
	r->owner_src = KLOCK_OWNER_NONE;
	r->reserved2 = 0;
	__builtin_memset(r->owner_comm, 0, sizeof(r->owner_comm));
	if (flags & (KLOCK_F_RT | KLOCK_F_PERCPU))
		return;
	if (flags & KLOCK_F_MUTEX) {
		if (!bpf_core_field_exists(struct mutex, owner))
			return;
		v = BPF_CORE_READ((struct mutex *)lock, owner.counter);
		t = (void *)(v & ~MUTEX_FLAGS);
		r->owner_src = t ? KLOCK_OWNER_MUTEX : KLOCK_OWNER_RELEASED;
	} else if (flags & (KLOCK_F_READ | KLOCK_F_WRITE)) {
		if (!bpf_core_field_exists(struct rw_semaphore, owner))
			return;
		v = BPF_CORE_READ((struct rw_semaphore *)lock, owner.counter);
		if (v & RWSEM_READER_OWNED) {
			/* the field keeps the last reader in, but every reader may hold it */
			r->owner_src = KLOCK_OWNER_RWSEM_READERS;
			return;
		}
		t = (void *)(v & ~RWSEM_OWNER_FLAGS_MASK);
		r->owner_src = t ? KLOCK_OWNER_RWSEM_WRITER : KLOCK_OWNER_RELEASED;
	}
	if (!t)
		return;
	r->owner_tid = BPF_CORE_READ(t, pid);
	r->owner_pid = BPF_CORE_READ(t, tgid);
	BPF_CORE_READ_STR_INTO(&r->owner_comm, t, comm);
	if (!r->owner_tid)
		r->owner_src = KLOCK_OWNER_NONE; /* the read failed */
}

SEC("tp_btf/contention_begin")
int BPF_PROG(ws_klock_begin, void *lock, unsigned int flags)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct ws_klock_begin *r;
	struct waiting w;
	__u32 tid = (__u32)id;

	if (flags & KLOCK_F_SPIN)
		return 0;
	if (!ws_traced_tgid(id >> 32))
		return 0;
	r = ws_reserve(sizeof(*r), WS_KLOCK_BEGIN);
	if (!r)
		return 0;
	r->lock = (__u64)lock;
	r->flags = flags;
	r->reserved = 0;
	read_owner(r, lock, flags);
	ws_submit(r);
	/* only a wait whose begin was written gets an end and wake records */
	w.lock = (__u64)lock;
	w.flags = flags;
	w.pid = id >> 32;
	bpf_map_update_elem(&klock_waiting, &tid, &w, BPF_ANY);
	return 0;
}

SEC("tp_btf/contention_end")
int BPF_PROG(ws_klock_end, void *lock, int ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct ws_klock_end *r;
	struct waiting *w;

	w = bpf_map_lookup_elem(&klock_waiting, &tid);
	/* a spinlock taken inside the sleeping lock's slow path ends too: not ours */
	if (!w || w->lock != (__u64)lock)
		return 0;
	r = ws_reserve(sizeof(*r), WS_KLOCK_END);
	if (r) {
		r->lock = (__u64)lock;
		r->ret = ret;
		r->reserved = 0;
		ws_submit(r);
	}
	bpf_map_delete_elem(&klock_waiting, &tid);
	return 0;
}

/*
 * The outermost release function on the current kernel stack (up_write rather
 * than the rwsem_wake it calls), or KLOCK_FN_NONE.
 */
static __always_inline __u32 release_fn(void *ctx, __u16 *nframes)
{
	__u32 zero = 0, nfn = klock_nfn, found = KLOCK_FN_NONE, i, j;
	struct frames *f = bpf_map_lookup_elem(&klock_stack, &zero);
	long n;

	*nframes = 0;
	if (!f || !nfn)
		return KLOCK_FN_NONE;
	n = bpf_get_stack(ctx, f->ip, sizeof(f->ip), 0);
	if (n <= 0)
		return KLOCK_FN_NONE;
	n /= sizeof(__u64);
	*nframes = n;
	for (i = 0; i < KLOCK_MAX_FRAMES; i++) {
		__u64 ip;

		if (i >= n)
			break;
		ip = f->ip[i];
		for (j = 0; j < KLOCK_MAX_FN; j++) {
			if (j >= nfn)
				break;
			if (ip >= klock_fn_lo[j] && ip < klock_fn_hi[j])
				found = klock_fn_id[j];
		}
	}
	return found;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(ws_klock_waking, struct task_struct *p)
{
	__u32 wakee = BPF_CORE_READ(p, pid), me = (__u32)bpf_get_current_pid_tgid();
	struct waiting *w = bpf_map_lookup_elem(&klock_waiting, &wakee), *mine;
	struct ws_klock_wake *r;
	__u16 nframes;
	__u32 fn;

	if (!w)
		return 0;
	fn = release_fn(ctx, &nframes);
	r = ws_reserve(sizeof(*r), WS_KLOCK_WAKE);
	if (!r)
		return 0;
	r->lock = w->lock;
	r->flags = w->flags;
	r->wakee_tid = wakee;
	r->wakee_pid = w->pid;
	r->fn = fn;
	r->nframes = nframes;
	r->nfn = klock_nfn;
	mine = bpf_map_lookup_elem(&klock_waiting, &me);
	r->waker_lock = mine ? mine->lock : 0;
	r->waker_flags = mine ? mine->flags : 0;
	ws_submit(r);
	return 0;
}
