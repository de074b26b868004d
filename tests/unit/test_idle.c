// SPDX-License-Identifier: MIT
/* The idle rule (core/report/idle.c): the victim's syscall class and what its waker did meanwhile.
 */
#include <criterion/criterion.h>
#include <string.h>

#include <whyslow/syscall_names.h>

#include "report/idle.h"

#define MS 1000000ULL

static struct ws_thread victim;
static struct ws_chain c;
static struct ws_segment segs[8];
static struct ws_claim claims[32];
static int nclaims;

/* A claim waiting in the x86-64 syscall called @name (NULL: not in a syscall). */
static const struct ws_claim *in_call(const char *name)
{
	struct ws_claim *cl;

	cr_assert_lt(nclaims, 32, "more claims than the test keeps");
	cl = &claims[nclaims++];
	memset(cl, 0, sizeof(*cl));
	cl->syscall.nr = WS_SYSCALL_NONE;
	for (int nr = 0; name && nr < (int)(sizeof(ws_syscalls_x86_64) / sizeof(char *)); nr++) {
		if (ws_syscalls_x86_64[nr] && !strcmp(ws_syscalls_x86_64[nr], name)) {
			cl->syscall.arch = WS_ARCH_X86_64;
			cl->syscall.nr = nr;
		}
	}
	cr_assert(!name || cl->syscall.nr >= 0, "no syscall %s", name);
	return cl;
}

/* The victim (tid 10) blocked 100ms in @call, then 1ms runnable. */
static void wait_in(const char *call)
{
	memset(&c, 0, sizeof(c));
	memset(segs, 0, sizeof(segs));
	nclaims = 0;
	victim.tid = 10;
	c.victim = &victim;
	c.start = 1000 * MS;
	c.wake = c.start + 100 * MS;
	c.end = c.wake + 1 * MS;
	c.segs = segs;
	c.links[0] = (struct ws_link){ .kind = "k", .tid = 10, .claim = in_call(call) };
	c.nlinks = 1;
}

/* A piece of @tid's timeline, @ms long from @at ms into the wait, blocked in @call (NULL: on CPU).
 */
static struct ws_segment *seg(uint32_t tid, uint64_t at, uint64_t ms, const char *call)
{
	struct ws_segment *s = &segs[c.nsegs++];

	*s = (struct ws_segment){ .kind = call ? "k" : "running",
				  .tid = tid,
				  .start = c.start + at * MS,
				  .dur = ms * MS,
				  .claim = call ? in_call(call) : NULL };
	return s;
}

static void runnable_after(void)
{
	seg(10, 100, 1, NULL)->kind = "runqueue";
}

Test(idle, classes_by_syscall)
{
	nclaims = 0;
	cr_assert_eq(ws_idle_class_of(in_call("epoll_wait")), WS_IDLE_EVENT);
	cr_assert_eq(ws_idle_class_of(in_call("accept4")), WS_IDLE_EVENT);
	cr_assert_eq(ws_idle_class_of(in_call("rt_sigtimedwait")), WS_IDLE_EVENT);
	cr_assert_eq(ws_idle_class_of(in_call("pause")), WS_IDLE_EVENT);
	cr_assert_eq(ws_idle_class_of(in_call("futex")), WS_IDLE_FUTEX);
	cr_assert_eq(ws_idle_class_of(in_call("clock_nanosleep")), WS_IDLE_SLEEP);
	cr_assert_eq(ws_idle_class_of(in_call("read")), WS_IDLE_OTHER);
	cr_assert_eq(ws_idle_class_of(in_call("wait4")), WS_IDLE_OTHER);
	cr_assert_eq(ws_idle_class_of(in_call(NULL)), WS_IDLE_OTHER);
	cr_assert_eq(ws_idle_class_of(NULL), WS_IDLE_OTHER);
}

Test(idle, event_wait_nobody_woke_is_idle)
{
	wait_in("epoll_wait");
	seg(10, 0, 100, "epoll_wait"); /* no waker: the victim's own wait explains it */
	runnable_after();
	cr_assert(ws_idle_chain(&c));
}

Test(idle, event_wait_woken_by_a_thread_at_work_is_not_idle)
{
	wait_in("accept");
	seg(20, 0, 100, NULL); /* the client computed the request all along */
	runnable_after();
	cr_assert_not(ws_idle_chain(&c));
}

Test(idle, event_wait_woken_by_a_sleeper_is_idle)
{
	wait_in("epoll_wait");
	seg(20, 0, 95, "clock_nanosleep");
	seg(20, 95, 5, NULL);
	runnable_after();
	cr_assert(ws_idle_chain(&c));
}

Test(idle, condvar_waiting_for_a_parked_producer_is_idle)
{
	wait_in("futex");
	seg(20, 0, 90, "accept4"); /* the job-giver was itself waiting for a client */
	seg(20, 90, 10, NULL);
	runnable_after();
	cr_assert(ws_idle_chain(&c));
}

Test(idle, condvar_woken_by_the_producer_at_work_is_not_idle)
{
	wait_in("futex");
	seg(20, 0, 30, "accept4");
	seg(20, 30, 70, NULL); /* producing the job */
	runnable_after();
	cr_assert_not(ws_idle_chain(&c));
}

Test(idle, lock_held_over_block_io_is_not_idle)
{
	wait_in("futex");
	seg(20, 0, 100, "fdatasync");
	runnable_after();
	cr_assert_not(ws_idle_chain(&c));
}

Test(idle, timed_futex_wait_that_timed_out_is_not_idle)
{
	/* a GIL-style handover timeout looks the same as an idle condvar timeout: not hidden */
	wait_in("futex");
	seg(10, 0, 100, "futex");
	runnable_after();
	cr_assert_not(ws_idle_chain(&c));
}

Test(idle, own_sleep_read_or_unknown_call_is_never_idle)
{
	const char *calls[] = { "clock_nanosleep", "nanosleep", "read", "wait4", NULL };

	for (int i = 0; i < 5; i++) {
		wait_in(calls[i]);
		seg(10, 0, 100, "epoll_wait"); /* even if the explanation were all waiting */
		runnable_after();
		cr_assert_not(ws_idle_chain(&c), "victim in %s", calls[i] ? calls[i] : "no call");
	}
}

Test(idle, at_least_half_waiting)
{
	wait_in("poll");
	seg(20, 0, 50, "poll");
	seg(20, 50, 50, NULL);
	runnable_after();
	cr_assert(ws_idle_chain(&c), "exactly half waiting is idle");
	wait_in("poll");
	seg(20, 0, 49, "poll");
	seg(20, 49, 51, NULL);
	runnable_after();
	cr_assert_not(ws_idle_chain(&c), "less than half waiting is not");
}

Test(idle, merged_piece_counts_its_mix)
{
	struct ws_segment *s;

	wait_in("epoll_wait");
	s = seg(20, 0, 100, NULL);
	s->nmix = 2;
	s->mix[0] = (struct ws_seg_mix){ "k", in_call("epoll_pwait"), 60 * MS };
	s->mix[1] = (struct ws_seg_mix){ "running", NULL, 40 * MS };
	runnable_after();
	cr_assert(ws_idle_chain(&c));
	s->mix[0].ns = 40 * MS;
	s->mix[1].ns = 60 * MS;
	cr_assert_not(ws_idle_chain(&c));
}

Test(idle, runqueue_after_the_wake_does_not_count)
{
	/* a chain that is mostly queueing (links[0] runqueue, no claim) is not idle */
	wait_in("epoll_wait");
	c.links[0].claim = NULL;
	seg(10, 0, 100, "epoll_wait");
	cr_assert_not(ws_idle_chain(&c));
}

Test(idle, lock_held_across_a_sleep_is_not_idle)
{
	/* gt_trap: the holder sleeps with the lock held; the victim's wait is that sleep's cost */
	wait_in("futex");
	seg(20, 0, 100, "clock_nanosleep");
	runnable_after();
	cr_assert_not(ws_idle_chain(&c));
}
