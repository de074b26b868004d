// SPDX-License-Identifier: MIT
/*
 * The idle rule, from evidence the chain already holds: the syscall each blocked interval waited
 * in (the kernel reads it from the saved user registers) and the timeline of the thread that
 * ended the wait. No source's kind name is compared here.
 *
 * A wait is idle when
 *   1. the victim waited for an event or a futex (ws_idle_class_of: EVENT or FUTEX); never a
 *      read, a disk, a child, its own sleep or the runqueue: those are work or chosen delays;
 *   2. and over the blocked part of the wait, at least half of the time that explains it was
 *      spent *waiting for work* rather than working: the segments (the waker's timeline, or the
 *      victim's own wait when no thread woke it) that were blocked in an EVENT call, or, when the
 *      victim waited for an event, in a waker's sleep (a client pausing between requests).
 *      Running, runnable, block I/O, a lock, an unknown gap: work. A lock held across a sleep
 *      is a cost, not idleness: a futex victim's waker asleep is work (gt_trap).
 *
 * So a server in accept woken by a client that was asleep, or by the network, is idle; a pool
 * worker woken by a thread that was in epoll_wait for the job is idle; a futex wait woken by a
 * thread that was running (producing the job) or holding a lock over a disk write is not. A
 * timed futex wait that timed out is not idle: a condvar timeout with nothing queued and a
 * GIL-style handover timeout look the same in the evidence (tests/programs/gt_timedwait.c).
 */
#include <string.h>

#include <whyslow/syscall_names.h>

#include "idle.h"

static const char *const event_calls[] = {
	"epoll_wait", "epoll_pwait", "epoll_pwait2",  "epoll_wait_old", "poll",
	"ppoll",      "select",	     "pselect6",      "_newselect",	"accept",
	"accept4",    "pause",	     "rt_sigsuspend", "sigsuspend",	"rt_sigtimedwait",
};
static const char *const futex_calls[] = { "futex", "futex_wait", "futex_waitv" };
static const char *const sleep_calls[] = { "nanosleep", "clock_nanosleep" };

static bool in(const char *name, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(name, list[i]))
			return true;
	return false;
}

#define IN(name, list) in(name, list, sizeof(list) / sizeof(list[0]))

enum ws_idle_class ws_idle_class_of(const struct ws_claim *c)
{
	const char *name;

	if (!c || !ws_syscall_known(&c->syscall))
		return WS_IDLE_OTHER;
	name = ws_syscall_name(c->syscall.arch, c->syscall.nr);
	if (!name)
		return WS_IDLE_OTHER;
	if (IN(name, event_calls))
		return WS_IDLE_EVENT;
	if (IN(name, futex_calls))
		return WS_IDLE_FUTEX;
	if (IN(name, sleep_calls))
		return WS_IDLE_SLEEP;
	return WS_IDLE_OTHER;
}

/* Was this stretch of @tid's timeline waiting for work rather than working? */
static bool waiting(const struct ws_claim *cl, uint32_t tid, uint32_t victim,
		    enum ws_idle_class victim_class)
{
	enum ws_idle_class k = ws_idle_class_of(cl);

	return k == WS_IDLE_EVENT ||
	       (k == WS_IDLE_SLEEP && tid != victim && victim_class == WS_IDLE_EVENT);
}

static uint64_t clip(uint64_t s, uint64_t d, uint64_t to)
{
	return s >= to ? 0 : s + d > to ? to - s : d;
}

bool ws_idle_chain(const struct ws_chain *c)
{
	const struct ws_link *first = c->nlinks ? &c->links[0] : NULL;
	uint32_t victim = c->victim ? c->victim->tid : 0;
	uint64_t blocked = c->wake - c->start, idle = 0;
	enum ws_idle_class k;

	if (!first || !first->claim || c->wake <= c->start)
		return false;
	k = ws_idle_class_of(first->claim);
	if (k != WS_IDLE_EVENT && k != WS_IDLE_FUTEX)
		return false;
	for (size_t i = 0; i < c->nsegs; i++) {
		const struct ws_segment *s = &c->segs[i];
		uint64_t in_wait = clip(s->start, s->dur, c->wake);

		if (!in_wait)
			continue;
		if (!s->nmix) {
			if (waiting(s->claim, s->tid, victim, k))
				idle += in_wait;
			continue;
		}
		/* a merged piece: its kinds' shares, scaled to the part inside the wait */
		for (int m = 0; m < s->nmix && s->dur; m++)
			if (waiting(s->mix[m].claim, s->tid, victim, k))
				idle += (uint64_t)((double)s->mix[m].ns * in_wait / s->dur);
	}
	return 2 * idle >= blocked;
}
