/* SPDX-License-Identifier: MIT */
/* Records of the klock source; shared by klock.bpf.c and klock.c only. */
#ifndef WHYSLOW_KLOCK_REC_H
#define WHYSLOW_KLOCK_REC_H

#include <whyslow/record.h>

/* Numbers are never reused. */
#define WS_KLOCK_BEGIN (WS_KIND_KLOCK + 1)
#define WS_KLOCK_END (WS_KIND_KLOCK + 2)
#define WS_KLOCK_WAKE (WS_KIND_KLOCK + 3)

/*
 * contention_begin's flags (include/trace/events/lock.h; #defines, so not in
 * vmlinux.h). Stable since they appeared in 5.19.
 */
#define KLOCK_F_SPIN (1U << 0)
#define KLOCK_F_READ (1U << 1)
#define KLOCK_F_WRITE (1U << 2)
#define KLOCK_F_RT (1U << 3)
#define KLOCK_F_PERCPU (1U << 4)
#define KLOCK_F_MUTEX (1U << 5)

/*
 * Kernel functions that release a sleeping lock and wake its waiters
 * (ws_klock_wake.fn). User space finds their address ranges in /proc/kallsyms
 * and hands them to BPF before load; a wakeup whose kernel stack passes
 * through one of them was done by the lock's releaser. 0: none seen.
 */
enum klock_fn {
	KLOCK_FN_NONE = 0,
	KLOCK_FN_UP_WRITE = 1,
	KLOCK_FN_UP_READ = 2,
	KLOCK_FN_DOWNGRADE_WRITE = 3,
	KLOCK_FN_RWSEM_WAKE = 4,
	KLOCK_FN_MUTEX_UNLOCK = 5,
	KLOCK_FN_MUTEX_UNLOCK_SLOWPATH = 6,
	KLOCK_FN_WW_MUTEX_UNLOCK = 7,
	KLOCK_FN_RT_MUTEX_UNLOCK = 8,
	KLOCK_FN_UP = 9,
	KLOCK_FN_PERCPU_UP_WRITE = 10,
	KLOCK_FN_RT_MUTEX_SLOWUNLOCK = 11,
	KLOCK_FN_COUNT
};

/* Address ranges BPF matches stack frames against (rodata klock_fn_*). */
#define KLOCK_MAX_FN 16
/* Kernel stack frames of the waker looked at. */
#define KLOCK_MAX_FRAMES 32

/*
 * Where ws_klock_begin's owner came from: the lock's own owner field, read
 * at contention_begin (the kernel keeps it for optimistic spinning). Only
 * a mutex and a write-held rwsem name one task; a read-held rwsem records
 * only that readers hold it; semaphores, percpu-rwsems and rt_mutexes
 * (PREEMPT_RT) are not read.
 */
enum klock_owner_src {
	KLOCK_OWNER_NONE = 0,	       /* not readable for this lock type */
	KLOCK_OWNER_MUTEX = 1,	       /* struct mutex.owner, flag bits masked */
	KLOCK_OWNER_RWSEM_WRITER = 2,  /* struct rw_semaphore.owner, not reader-owned */
	KLOCK_OWNER_RWSEM_READERS = 3, /* reader-owned: no single owner */
	KLOCK_OWNER_RELEASED = 4,      /* the field was empty: released in between */
};

/*
 * hdr.tid began to wait for the sleeping lock @lock (a contention_begin
 * without LCB_F_SPIN). A mutex reports a spinning phase first and then this
 * one; both are followed by one ws_klock_end. The owner fields were added
 * later (records only grow): a shorter record has none.
 */
struct ws_klock_begin {
	struct ws_rec_hdr hdr;
	__u64 lock;  /* the lock's kernel address */
	__u32 flags; /* KLOCK_F_* */
	__u32 reserved;
	__u32 owner_tid; /* the holder at contention begin (0: none named, see owner_src) */
	__u32 owner_pid;
	__u32 owner_src; /* enum klock_owner_src */
	__u32 reserved2;
	char owner_comm[16];
};

/* Size of a ws_klock_begin written before the owner fields existed. */
#define WS_KLOCK_BEGIN_V1_SIZE (sizeof(struct ws_rec_hdr) + 16)

/* hdr.tid stopped waiting for @lock: took it (@ret 0) or gave up (-EINTR, ...). */
struct ws_klock_end {
	struct ws_rec_hdr hdr;
	__u64 lock;
	__s32 ret;
	__u32 reserved;
};

/*
 * hdr.tid (current, in hdr.ctx) woke @wakee_tid while @wakee_tid waited for
 * @lock (it had a ws_klock_begin and no ws_klock_end yet). @fn: the outermost
 * release function found on current's kernel stack, KLOCK_FN_NONE if none
 * (or if the ranges were unknown, see @nfn). @waker_lock/@waker_flags: the
 * lock current itself was waiting for at that moment, or 0.
 */
struct ws_klock_wake {
	struct ws_rec_hdr hdr;
	__u64 lock;
	__u32 flags;
	__u32 wakee_tid;
	__u32 wakee_pid;
	__u32 fn; /* enum klock_fn */
	__u64 waker_lock;
	__u32 waker_flags;
	__u16 nframes; /* kernel stack frames looked at */
	__u16 nfn;     /* release functions BPF knew of (0: no evidence possible) */
};

#endif
