/* SPDX-License-Identifier: MIT */
/*
 * Who holds the lock a futex waiter waits for, read from the lock itself:
 * a PI futex word carries its owner's tid; a glibc pthread_mutex_t keeps the
 * owner's tid next to its lock word. Only reads the target's memory.
 */
#ifndef FUTEX_OWNER_H
#define FUTEX_OWNER_H

#include <stdbool.h>
#include <stdint.h>

#include <whyslow/plugin.h>

/* Which evidence named the owner. */
enum futex_owner_evidence {
	OWNER_EV_NONE,
	OWNER_EV_PI_WORD,    /* the PI futex word's FUTEX_TID_MASK bits */
	OWNER_EV_MUTEX_WORD, /* glibc pthread_mutex_t.__owner, lock word and kind consistent */
	OWNER_EV_TID_WORD,   /* a join's word: the joined thread's tid, live, of the process */
};

/*
 * The head of glibc's pthread_mutex_t, the same on x86_64 and aarch64
 * (sysdeps/nptl/bits/struct_mutex.h and the generic layout): the futex word
 * the waiters sleep on comes first, so the waiter's uaddr is the mutex.
 */
struct futex_mutex_words {
	int32_t lock;	 /* __lock: 0 free, 1 locked, 2 locked with waiters (robust: tid) */
	uint32_t count;	 /* __count: recursion depth */
	int32_t owner;	 /* __owner: tid of the holder */
	uint32_t nusers; /* __nusers */
	int32_t kind;	 /* __kind: type and flags */
};

struct futex_owner {
	enum futex_owner_evidence evidence;
	uint32_t tid;	 /* the holder (0 when evidence is NONE) */
	bool pshared;	 /* the waiter's futex call was process-shared */
	const char *why; /* NONE: why no owner was named (static text) */
	/* NONE: the tid the lock word names all the same, when it is not evidence (a process-shared
	 * lock naming a thread outside the waiter's user's processes: the word is theirs to write) */
	uint32_t claimed_tid;
};

/* Decoding a futex op (the syscall's second argument). */
bool futex_op_waits(uint32_t op); /* WAIT, WAIT_BITSET, LOCK_PI, LOCK_PI2, WAIT_REQUEUE_PI */
bool futex_op_pi(uint32_t op);
bool futex_op_private(uint32_t op);
/* "FUTEX_WAIT" for the command @cmd (op & FUTEX_CMD_MASK), or NULL when unknown. */
const char *futex_cmd_name(uint32_t cmd);
/* "FUTEX_WAIT_PRIVATE", "FUTEX_LOCK_PI", ...; "FUTEX_op_N" for others, in @buf. */
const char *futex_op_name(uint32_t op, char *buf, unsigned len);

/*
 * Pure checks, no I/O (unit-tested). @is_live(ctx, tid) says whether @tid is a
 * live thread that may hold the lock (same process unless @pshared).
 * Return true and fill @out when the words name a holder.
 */
bool futex_owner_from_pi_word(uint32_t word, ws_tid_live_fn is_live, void *ctx,
			      struct futex_owner *out);
bool futex_owner_from_mutex(const struct futex_mutex_words *m, bool pshared, ws_tid_live_fn is_live,
			    void *ctx, struct futex_owner *out);

/*
 * The glibc condition-variable wait (pthread_cond_wait, _timedwait, _clockwait) a futex waiter
 * sleeps in, from its user stack's function names, innermost first (NULL: unnamed): the name
 * of that frame as the stack has it, or NULL. Only the innermost frames count, and a mutex lock
 * met first means a mutex wait (after a signal the waiter re-takes its mutex, on the mutex's
 * word, with the condvar frame still below). Pure, unit-tested.
 */
const char *futex_cond_wait_frame(const char *const *names, int n);
/*
 * The same for glibc's thread join (pthread_join, pthread_timedjoin_np, pthread_clockjoin_np:
 * all __pthread_clockjoin_ex), which sleeps on the joined thread's tid word until the kernel
 * clears it as the thread exits. Pure, unit-tested.
 */
const char *futex_join_wait_frame(const char *const *names, int n);
/*
 * The thread a join waits for: the tid word @word read at the futex address, when it names a
 * live thread (@is_live: of the waiter's process). Into @out as its "holder" (evidence
 * OWNER_EV_TID_WORD), so a chain follows it and a join cycle is a deadlock.
 */
void futex_owner_from_tid_word(uint32_t word, ws_tid_live_fn is_live, void *ctx,
			       struct futex_owner *out);

/*
 * Read the lock at @uaddr in process @pid (process_vm_readv) for a waiter
 * whose futex call used @op. 0 with @out filled (evidence may be NONE, with
 * why), or -errno when the memory cannot be read.
 */
/* The same from @len bytes of the lock's memory read before (@mem: at the futex address). */
void futex_owner_from_bytes(const uint8_t *mem, size_t len, uint32_t op, ws_tid_live_fn is_live,
			    void *ctx, struct futex_owner *out);
int futex_owner_read(uint32_t pid, uint64_t uaddr, uint32_t op, ws_tid_live_fn is_live, void *ctx,
		     struct futex_owner *out);

#endif
