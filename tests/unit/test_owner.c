// SPDX-License-Identifier: MIT
/* Lock owners read from the lock itself (plugins/futex/futex_owner.c): the checks, and this glibc's layout. */
#include <criterion/criterion.h>
#include <linux/futex.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "futex_owner.h"
#include "hang/procsnap.h"

/* Only tid 4242 is alive (and in the waiter's process unless pshared asks for 7777). */
static bool fake_live(void *ctx, uint32_t tid, bool pshared)
{
	(void)ctx;
	return tid == 4242 || (pshared && tid == 7777);
}

static struct futex_mutex_words locked(int32_t lock, int32_t owner, int32_t kind)
{
	struct futex_mutex_words m = {
		.lock = lock, .count = 0, .owner = owner, .nusers = 1, .kind = kind
	};
	return m;
}

Test(owner, names_the_holder_of_a_locked_mutex)
{
	struct futex_owner o = { 0 };
	struct futex_mutex_words m = locked(2, 4242, 0);

	cr_assert(futex_owner_from_mutex(&m, false, fake_live, NULL, &o));
	cr_assert_eq(o.evidence, OWNER_EV_MUTEX_WORD);
	cr_assert_eq(o.tid, 4242);
	m = locked(1, 4242, 1 /* recursive */);
	m.count = 3;
	cr_assert(futex_owner_from_mutex(&m, false, fake_live, NULL, &o),
		  "recursive, held 3 times");
	m = locked(2, 7777, 0x80 /* pshared */);
	cr_assert(futex_owner_from_mutex(&m, true, fake_live, NULL, &o),
		  "a pshared mutex's holder may live in another process");
	cr_assert_eq(o.tid, 7777);
	m = locked(4242 | FUTEX_WAITERS, 4242, 0x10 /* robust */);
	cr_assert(futex_owner_from_mutex(&m, false, fake_live, NULL, &o),
		  "robust: tid in the word");
}

/* Only 4242 is in the waiter's process; no other process is the waiter's user's. */
static bool only_own_process(void *ctx, uint32_t tid, bool pshared)
{
	(void)ctx;
	(void)pshared;
	return tid == 4242;
}

Test(owner, a_shared_lock_naming_another_users_thread_is_a_claim)
{
	struct futex_owner o = { 0 };
	struct futex_mutex_words m = locked(2, 7777, 0x80 /* pshared */);

	cr_assert_not(futex_owner_from_mutex(&m, true, only_own_process, NULL, &o),
		      "a pshared word naming a thread of another user is not evidence");
	cr_assert_eq(o.evidence, OWNER_EV_NONE);
	cr_assert_eq(o.tid, 0);
	cr_assert_eq(o.claimed_tid, 7777, "the claim is kept, to be said as such");
	cr_assert(strstr(o.why, "not verified"));
	m = locked(2, 4242, 0x80);
	cr_assert(futex_owner_from_mutex(&m, true, only_own_process, NULL, &o),
		  "the waiter's own process");
	cr_assert_eq(o.tid, 4242);
	o = (struct futex_owner){ .pshared = true };
	cr_assert_not(futex_owner_from_pi_word(7777, only_own_process, NULL, &o));
	cr_assert_eq(o.claimed_tid, 7777);
	m = locked(2, 7777, 0);
	o = (struct futex_owner){ 0 };
	cr_assert_not(futex_owner_from_mutex(&m, false, only_own_process, NULL, &o));
	cr_assert_eq(o.claimed_tid, 0, "a private lock's dead owner is not a claim of another user");
}

/* A killed thread's lock, as its exit record kept it (killed.c): the same checks on the bytes. */
Test(owner, reads_the_lock_from_bytes_kept_at_a_kill)
{
	struct futex_owner o = { 0 };
	struct futex_mutex_words m = locked(2, 4242, 0);
	uint8_t mem[24] = { 0 };
	uint32_t pi = 4242 | FUTEX_WAITERS;

	memcpy(mem, &m, sizeof(m));
	futex_owner_from_bytes(mem, sizeof(mem), FUTEX_WAIT | FUTEX_PRIVATE_FLAG, fake_live, NULL,
			       &o);
	cr_assert_eq(o.evidence, OWNER_EV_MUTEX_WORD);
	cr_assert_eq(o.tid, 4242);
	futex_owner_from_bytes(mem, sizeof(m) - 1, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, fake_live,
			       NULL, &o);
	cr_assert_eq(o.evidence, OWNER_EV_NONE, "fewer bytes than a mutex's head: no owner");
	cr_assert(strstr(o.why, "not read"), "%s", o.why);
	memcpy(mem, &pi, sizeof(pi));
	futex_owner_from_bytes(mem, sizeof(pi), FUTEX_LOCK_PI, fake_live, NULL, &o);
	cr_assert_eq(o.evidence, OWNER_EV_PI_WORD, "a PI word needs its 4 bytes only");
	cr_assert_eq(o.tid, 4242);
	futex_owner_from_bytes(mem, sizeof(mem), FUTEX_WAKE, fake_live, NULL, &o);
	cr_assert_eq(o.evidence, OWNER_EV_NONE, "not a wait");
}

Test(owner, refuses_words_that_are_not_a_held_mutex)
{
	struct futex_owner o = { 0 };
	struct futex_mutex_words m;

	m = locked(0, 4242, 0);
	cr_assert_not(futex_owner_from_mutex(&m, false, fake_live, NULL, &o), "unlocked");
	cr_assert_eq(o.evidence, OWNER_EV_NONE);
	cr_assert_eq(o.tid, 0);
	cr_assert_not_null(o.why);
	m = locked(2, 4243, 0);
	cr_assert_not(futex_owner_from_mutex(&m, false, fake_live, NULL, &o), "owner not alive");
	m = locked(2, 0, 0);
	cr_assert_not(futex_owner_from_mutex(&m, false, fake_live, NULL, &o), "no owner");
	m = locked(2, 4242, -1);
	cr_assert_not(futex_owner_from_mutex(&m, false, fake_live, NULL, &o),
		      "destroyed (kind -1)");
	m = locked(2, 4242, 0x1000);
	cr_assert_not(futex_owner_from_mutex(&m, false, fake_live, NULL, &o), "unknown kind bits");
	m = locked(4242, 4242, 0);
	cr_assert_not(futex_owner_from_mutex(&m, false, fake_live, NULL, &o),
		      "a tid in the lock word of a plain mutex (a join's tid word)");
	m = locked(2, 4242, 0);
	m.count = 1;
	cr_assert_not(futex_owner_from_mutex(&m, false, fake_live, NULL, &o),
		      "count, not recursive");
	m = locked(2, 4242, 0);
	m.nusers = 0;
	cr_assert_not(futex_owner_from_mutex(&m, false, fake_live, NULL, &o), "locked, no users");
	m = locked(2, 4242, 0x80);
	cr_assert_not(futex_owner_from_mutex(&m, false, fake_live, NULL, &o),
		      "pshared kind waited on with a private futex call");
	m = locked(2, 4242, 0);
	cr_assert_not(futex_owner_from_mutex(&m, true, fake_live, NULL, &o),
		      "private kind waited on with a shared futex call");
	m = locked(2, 7777, 0);
	cr_assert_not(futex_owner_from_mutex(&m, false, fake_live, NULL, &o),
		      "a private mutex's holder must be in the waiter's process");
	m = locked(4243 | FUTEX_WAITERS, 4242, 0x10);
	cr_assert_not(futex_owner_from_mutex(&m, false, fake_live, NULL, &o),
		      "robust: word and owner disagree");
	m = locked(2, 4242, 0x20);
	cr_assert_not(futex_owner_from_mutex(&m, false, fake_live, NULL, &o),
		      "a PI mutex is read through its PI word, not this way");
}

Test(owner, reads_the_pi_futex_word)
{
	struct futex_owner o = { 0 };

	cr_assert(futex_owner_from_pi_word(4242 | FUTEX_WAITERS, fake_live, NULL, &o));
	cr_assert_eq(o.evidence, OWNER_EV_PI_WORD);
	cr_assert_eq(o.tid, 4242);
	cr_assert_not(futex_owner_from_pi_word(0, fake_live, NULL, &o), "free");
	cr_assert_not(futex_owner_from_pi_word(4242 | FUTEX_OWNER_DIED, fake_live, NULL, &o));
	cr_assert_not(futex_owner_from_pi_word(4243, fake_live, NULL, &o), "not alive");
}

Test(owner, decodes_futex_ops)
{
	char b[40];

	cr_assert(futex_op_waits(FUTEX_WAIT_PRIVATE));
	cr_assert(futex_op_waits(393), "WAIT_BITSET|PRIVATE|CLOCK_REALTIME");
	cr_assert(futex_op_waits(FUTEX_LOCK_PI));
	cr_assert_not(futex_op_waits(FUTEX_WAKE_PRIVATE));
	cr_assert(futex_op_pi(FUTEX_LOCK_PI_PRIVATE));
	cr_assert_not(futex_op_private(FUTEX_WAIT));
	cr_assert_str_eq(futex_op_name(128, b, sizeof(b)), "FUTEX_WAIT_PRIVATE");
	cr_assert_str_eq(futex_op_name(265, b, sizeof(b)), "FUTEX_WAIT_BITSET");
	cr_assert_str_eq(futex_op_name(99, b, sizeof(b)), "FUTEX_op_99");
}

/* ---- this glibc, for real: a mutex held by another thread of this process -------------------- */

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t go = PTHREAD_MUTEX_INITIALIZER;
static volatile pid_t holder_tid;

static void *hold(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&held);
	holder_tid = (pid_t)syscall(SYS_gettid);
	pthread_mutex_lock(&go); /* until the test is done */
	pthread_mutex_unlock(&go);
	pthread_mutex_unlock(&held);
	return NULL;
}

static bool same_process_live(void *ctx, uint32_t tid, bool pshared)
{
	(void)ctx;
	return ws_procsnap_tgid(tid) == (uint32_t)getpid() || (pshared && ws_procsnap_tgid(tid));
}

/*
 * qemu-user (the arm64 unit run, tools/arm64-test) does not pass process_vm_readv through to
 * guest addresses: the kernel call itself is unavailable there, not this glibc's layout, so the
 * layout test is skipped only when reading one's own memory fails (on x86_64 it always runs).
 */
static bool can_read_own_memory(void)
{
	static const uint32_t probe = 0x5eed1e55;
	uint32_t got = 0;
	struct iovec local = { &got, sizeof(got) }, remote = { (void *)&probe, sizeof(probe) };

	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == sizeof(got) && got == probe;
}

Test(owner, reads_this_glibcs_mutex_layout)
{
	struct futex_owner o;
	pthread_t t;

	if (!can_read_own_memory())
		cr_skip_test(
			"process_vm_readv cannot read this process (an emulator such as qemu-user)");

	pthread_mutex_lock(&go);
	cr_assert_eq(pthread_create(&t, NULL, hold, NULL), 0);
	while (!holder_tid)
		usleep(1000);
	cr_assert_eq(futex_owner_read(getpid(), (uintptr_t)&held, FUTEX_WAIT_PRIVATE,
				      same_process_live, NULL, &o),
		     0);
	cr_assert_eq(o.evidence, OWNER_EV_MUTEX_WORD, "why: %s", o.why ? o.why : "");
	cr_assert_eq(o.tid, (uint32_t)holder_tid);
	/* go is held by this very thread */
	cr_assert_eq(futex_owner_read(getpid(), (uintptr_t)&go, FUTEX_WAIT_PRIVATE,
				      same_process_live, NULL, &o),
		     0);
	cr_assert_eq(o.evidence, OWNER_EV_MUTEX_WORD);
	cr_assert_eq(o.tid, (uint32_t)syscall(SYS_gettid));
	pthread_mutex_unlock(&go);
	pthread_join(t, NULL);
	cr_assert_eq(futex_owner_read(getpid(), (uintptr_t)&held, FUTEX_WAIT_PRIVATE,
				      same_process_live, NULL, &o),
		     0);
	cr_assert_eq(o.evidence, OWNER_EV_NONE, "an unlocked mutex names no owner");
}

/* A condition-variable wait is told from a mutex wait by the waiter's user stack (its names). */
/*
 * pthread_join sleeps on the joined thread's tid word (cleared by the kernel at its exit): the
 * stack tells it apart, and the word names the thread it waits for only when that is a live
 * thread of the waiter's own process (a process-shared one never: a thread joins its own).
 */
Test(owner, a_join_is_told_by_its_stack_and_names_its_thread)
{
	const char *dyn[] = { "__futex_abstimed_wait_common", "__pthread_clockjoin_ex", "main" };
	const char *pub[] = { "__futex_abstimed_wait_common64", "pthread_join@@GLIBC_2.34",
			      "main" };
	const char *mutex[] = { "__lll_lock_wait", "pthread_mutex_lock", "pthread_join", "main" };
	struct futex_owner o;

	cr_assert_str_eq(futex_join_wait_frame(dyn, 3), "__pthread_clockjoin_ex");
	cr_assert_str_eq(futex_join_wait_frame(pub, 3), "pthread_join@@GLIBC_2.34");
	cr_assert_null(futex_join_wait_frame(mutex, 4), "a mutex met first is a mutex wait");
	cr_assert_null(futex_cond_wait_frame(dyn, 3), "a join is no condvar wait");

	futex_owner_from_tid_word(4242, fake_live, NULL, &o);
	cr_assert_eq(o.evidence, OWNER_EV_TID_WORD);
	cr_assert_eq(o.tid, 4242);
	futex_owner_from_tid_word(7777, fake_live, NULL, &o); /* live, but only process-shared */
	cr_assert_eq(o.evidence, OWNER_EV_NONE);
	cr_assert_eq(o.tid, 0);
	futex_owner_from_tid_word(0, fake_live, NULL, &o); /* the thread has exited */
	cr_assert_eq(o.evidence, OWNER_EV_NONE);
	cr_assert_not_null(o.why);
}

Test(owner, a_condvar_wait_is_told_by_its_stack)
{
	/* Debian's libc.so.6 without debug symbols: its dynamic names, versioned */
	const char *dyn[] = { "__futex_abstimed_wait_common", "pthread_cond_wait@@GLIBC_2.3.2",
			      "worker", "start_thread" };
	/* with libc6-dbg: glibc's internal names */
	const char *dbg[] = { "__futex_abstimed_wait_common64", NULL, "__pthread_cond_wait_common",
			      "___pthread_cond_timedwait64", "worker" };
	/* woken, it re-takes the mutex: a mutex wait on the mutex's word, the condvar below */
	const char *retake[] = { "__lll_lock_wait", "__pthread_mutex_cond_lock",
				 "__pthread_cond_wait_common", "___pthread_cond_wait" };
	const char *mutex[] = { "__GI___lll_lock_wait", "__pthread_mutex_lock@GLIBC_2.2.5",
				"main" };
	const char *signal[] = { "pthread_cond_signal@@GLIBC_2.3.2", "main" };
	const char *deep[] = { "a", "b", "c", "d", "e", "f", "g", "h", "pthread_cond_wait" };

	cr_assert_str_eq(futex_cond_wait_frame(dyn, 4), "pthread_cond_wait@@GLIBC_2.3.2");
	cr_assert_str_eq(futex_cond_wait_frame(dbg, 5), "__pthread_cond_wait_common");
	cr_assert_null(futex_cond_wait_frame(retake, 4), "the re-take of the mutex is a mutex wait");
	cr_assert_null(futex_cond_wait_frame(mutex, 3));
	cr_assert_null(futex_cond_wait_frame(signal, 2), "a signal is no wait");
	cr_assert_null(futex_cond_wait_frame(deep, 9), "only the innermost frames count");
	cr_assert_null(futex_cond_wait_frame(dyn, 0));
}
