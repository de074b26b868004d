// SPDX-License-Identifier: MIT
#include <errno.h>
#include <linux/futex.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>

#include "futex_owner.h"

/* glibc's mutex kinds (nptl/pthreadP.h); anything else is not a mutex we understand */
#define KIND_TYPE_MASK 0x3 /* NORMAL, RECURSIVE, ERRORCHECK, ADAPTIVE */
#define KIND_ROBUST 0x10
#define KIND_PI 0x20
#define KIND_PP 0x40
#define KIND_PSHARED 0x80
#define KIND_ELISION 0x100
#define KIND_NO_ELISION 0x200
#define KIND_KNOWN                                                                        \
	(KIND_TYPE_MASK | KIND_ROBUST | KIND_PI | KIND_PP | KIND_PSHARED | KIND_ELISION | \
	 KIND_NO_ELISION)

static uint32_t futex_cmd(uint32_t op)
{
	return op & FUTEX_CMD_MASK;
}

bool futex_op_waits(uint32_t op)
{
	switch (futex_cmd(op)) {
	case FUTEX_WAIT:
	case FUTEX_WAIT_BITSET:
	case FUTEX_LOCK_PI:
	case FUTEX_LOCK_PI2:
	case FUTEX_WAIT_REQUEUE_PI:
		return true;
	}
	return false;
}

bool futex_op_pi(uint32_t op)
{
	return futex_cmd(op) == FUTEX_LOCK_PI || futex_cmd(op) == FUTEX_LOCK_PI2;
}

bool futex_op_private(uint32_t op)
{
	return op & FUTEX_PRIVATE_FLAG;
}

const char *futex_cmd_name(uint32_t cmd)
{
	static const char *const names[] = {
		[FUTEX_WAIT] = "FUTEX_WAIT",
		[FUTEX_WAKE] = "FUTEX_WAKE",
		[FUTEX_FD] = "FUTEX_FD",
		[FUTEX_REQUEUE] = "FUTEX_REQUEUE",
		[FUTEX_CMP_REQUEUE] = "FUTEX_CMP_REQUEUE",
		[FUTEX_WAKE_OP] = "FUTEX_WAKE_OP",
		[FUTEX_LOCK_PI] = "FUTEX_LOCK_PI",
		[FUTEX_UNLOCK_PI] = "FUTEX_UNLOCK_PI",
		[FUTEX_TRYLOCK_PI] = "FUTEX_TRYLOCK_PI",
		[FUTEX_WAIT_BITSET] = "FUTEX_WAIT_BITSET",
		[FUTEX_WAKE_BITSET] = "FUTEX_WAKE_BITSET",
		[FUTEX_WAIT_REQUEUE_PI] = "FUTEX_WAIT_REQUEUE_PI",
		[FUTEX_CMP_REQUEUE_PI] = "FUTEX_CMP_REQUEUE_PI",
		[FUTEX_LOCK_PI2] = "FUTEX_LOCK_PI2",
	};

	return cmd < sizeof(names) / sizeof(names[0]) ? names[cmd] : NULL;
}

const char *futex_op_name(uint32_t op, char *buf, unsigned len)
{
	const char *name = futex_cmd_name(futex_cmd(op));

	if (name)
		snprintf(buf, len, "%s%s", name, futex_op_private(op) ? "_PRIVATE" : "");
	else
		snprintf(buf, len, "FUTEX_op_%u", op);
	return buf;
}

static bool none(struct futex_owner *out, const char *why)
{
	out->evidence = OWNER_EV_NONE;
	out->tid = 0;
	out->why = why;
	return false;
}

/*
 * May @tid, named by a lock word, be taken as the holder? A private lock's holder is a thread of
 * the waiter's process. A process-shared lock lives in memory other processes write: the core
 * answers for another process only when it runs as the waiter's user, and any other tid is the
 * word's claim, kept as such.
 */
static bool holder_ok(uint32_t tid, bool pshared, ws_tid_live_fn is_live, void *ctx,
		      struct futex_owner *out, const char *dead)
{
	if (is_live(ctx, tid, false) || (pshared && is_live(ctx, tid, true)))
		return true;
	if (pshared) {
		none(out,
		     "the lock word names a thread outside this user's processes (not verified)");
		out->claimed_tid = tid;
		return false;
	}
	return none(out, dead);
}

bool futex_owner_from_pi_word(uint32_t word, ws_tid_live_fn is_live, void *ctx,
			      struct futex_owner *out)
{
	uint32_t tid = word & FUTEX_TID_MASK;

	if (!tid)
		return none(out, "the PI futex word names no owner");
	if (word & FUTEX_OWNER_DIED)
		return none(out, "the PI futex's owner died");
	if (!holder_ok(tid, out->pshared, is_live, ctx, out,
		       "the PI futex word names no live thread"))
		return false;
	out->evidence = OWNER_EV_PI_WORD;
	out->tid = tid;
	out->why = NULL;
	return true;
}

bool futex_owner_from_mutex(const struct futex_mutex_words *m, bool pshared, ws_tid_live_fn is_live,
			    void *ctx, struct futex_owner *out)
{
	uint32_t kind = (uint32_t)m->kind;

	out->pshared = pshared;
	/* a destroyed mutex has kind -1; a condvar or a tid word has no valid kind there */
	if (m->kind < 0 || (kind & ~KIND_KNOWN))
		return none(out, "not a glibc mutex (kind)");
	if (kind & (KIND_PI | KIND_PP))
		return none(
			out,
			"not a glibc mutex (its kind says PI/PP, waited on with a plain futex call)");
	if (!!(kind & KIND_PSHARED) != pshared)
		return none(out, "not a glibc mutex (pshared flag and futex call disagree)");
	if (m->lock == 0)
		return none(out, "not a locked glibc mutex (its lock word is 0)");
	if (m->owner <= 0)
		return none(out, "the mutex names no owner");
	if (kind & KIND_ROBUST) {
		/* robust mutexes keep the owner's tid in the lock word itself */
		if (((uint32_t)m->lock & FUTEX_TID_MASK) != (uint32_t)m->owner)
			return none(out, "not a glibc mutex (robust lock word and owner differ)");
	} else if (m->lock != 1 && m->lock != 2) {
		return none(out, "not a glibc mutex (lock word)");
	}
	if ((kind & KIND_TYPE_MASK) != 1 && m->count != 0)
		return none(out, "not a glibc mutex (count on a non-recursive mutex)");
	if (m->nusers == 0)
		return none(out, "not a glibc mutex (no users on a locked mutex)");
	if (!holder_ok((uint32_t)m->owner, pshared, is_live, ctx, out,
		       "the mutex owner is not a live thread"))
		return false;
	out->evidence = OWNER_EV_MUTEX_WORD;
	out->tid = (uint32_t)m->owner;
	out->why = NULL;
	return true;
}

/* Frames between the futex call and its pthread function: glibc's futex helpers, and room for
 * a sanitizer's or a tracer's interposed wrapper. */
#define COND_FRAMES 8

/* @name without its leading underscores: "___pthread_cond_wait" is pthread_cond_wait */
static bool named(const char *name, const char *prefix)
{
	while (*name == '_')
		name++;
	return !strncmp(name, prefix, strlen(prefix));
}

/* A condition-variable wait's own frame (pthread_cond_wait, _timedwait, _clockwait) */
static bool cond_wait(const char *f)
{
	return named(f, "pthread_cond_") && strstr(f, "wait");
}

/* A join's (pthread_join, pthread_timedjoin_np, pthread_clockjoin_np: __pthread_clockjoin_ex) */
static bool join_wait(const char *f)
{
	return named(f, "pthread_join") || named(f, "pthread_clockjoin") ||
	       named(f, "pthread_timedjoin");
}

/* The first of the innermost @names that @is, unless a mutex lock comes first: NULL. */
static const char *wait_frame(const char *const *names, int n, bool (*is)(const char *))
{
	for (int i = 0; i < n && i < COND_FRAMES; i++) {
		const char *f = names[i];

		if (!f)
			continue;
		/* the re-take of the mutex after a wakeup: __pthread_mutex_cond_lock, __lll_lock */
		if (named(f, "pthread_mutex_") || named(f, "lll_lock") || named(f, "mutex_lock"))
			return NULL;
		if (is(f))
			return f;
	}
	return NULL;
}

const char *futex_cond_wait_frame(const char *const *names, int n)
{
	return wait_frame(names, n, cond_wait);
}

const char *futex_join_wait_frame(const char *const *names, int n)
{
	return wait_frame(names, n, join_wait);
}

void futex_owner_from_tid_word(uint32_t word, ws_tid_live_fn is_live, void *ctx,
			       struct futex_owner *out)
{
	memset(out, 0, sizeof(*out));
	/* a thread joins only threads of its own process: never another process's tid */
	if (!word || !is_live(ctx, word, false)) {
		none(out, "the joined thread's tid word names no live thread of this process");
		return;
	}
	out->evidence = OWNER_EV_TID_WORD;
	out->tid = word;
}

/* The bytes of the lock a futex call with @op names: the PI word alone, or a mutex's head. */
static size_t lock_bytes(uint32_t op)
{
	return futex_op_pi(op) ? sizeof(int32_t) : sizeof(struct futex_mutex_words);
}

static void owner_from_words(const struct futex_mutex_words *m, uint32_t op, ws_tid_live_fn is_live,
			     void *ctx, struct futex_owner *out)
{
	if (futex_op_pi(op))
		futex_owner_from_pi_word((uint32_t)m->lock, is_live, ctx, out);
	else if (futex_cmd(op) == FUTEX_WAIT_REQUEUE_PI)
		none(out, "a condition variable (requeue to a PI mutex)");
	else
		futex_owner_from_mutex(m, out->pshared, is_live, ctx, out);
}

static bool owner_start(uint32_t op, struct futex_owner *out)
{
	memset(out, 0, sizeof(*out));
	out->pshared = !futex_op_private(op);
	if (!futex_op_waits(op))
		return none(out, "not a futex wait");
	return true;
}

void futex_owner_from_bytes(const uint8_t *mem, size_t len, uint32_t op, ws_tid_live_fn is_live,
			    void *ctx, struct futex_owner *out)
{
	struct futex_mutex_words m = { 0 };

	if (!owner_start(op, out))
		return;
	if (len < lock_bytes(op)) {
		none(out, "the lock's memory was not read");
		return;
	}
	memcpy(&m, mem, lock_bytes(op));
	owner_from_words(&m, op, is_live, ctx, out);
}

int futex_owner_read(uint32_t pid, uint64_t uaddr, uint32_t op, ws_tid_live_fn is_live, void *ctx,
		     struct futex_owner *out)
{
	struct futex_mutex_words m;
	struct iovec local = { &m, sizeof(m) }, remote = { (void *)(uintptr_t)uaddr, sizeof(m) };
	size_t want = lock_bytes(op);
	ssize_t n;

	if (!owner_start(op, out))
		return 0;
	remote.iov_len = want;
	local.iov_len = want;
	n = process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return -errno;
	if ((size_t)n != want) {
		none(out, "the lock's memory is not fully readable");
		return 0;
	}
	owner_from_words(&m, op, is_live, ctx, out);
	return 0;
}
