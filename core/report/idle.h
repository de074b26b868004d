/* SPDX-License-Identifier: MIT */
/*
 * Idle waits: a wait nobody on the machine was working to end (a thread parked in epoll_wait,
 * accept or sigwaitinfo; a pool worker waiting for a job while the only thread that could give
 * it one was itself parked). They cost no one time, so the ranking leaves them out by default
 * (--include-idle brings them back). The rule is written down in docs/DESIGN.md ("Idle waits").
 */
#ifndef WS_IDLE_H
#define WS_IDLE_H

#include <stdbool.h>

#include "engine/chain.h"

/* What the rule makes of one blocked interval, from the syscall it waited in. */
enum ws_idle_class {
	WS_IDLE_OTHER = 0, /* anything else: I/O, a child, a page fault, an unknown call */
	WS_IDLE_EVENT,	   /* waiting for something to happen: poll/epoll/select/accept/sigwait */
	WS_IDLE_FUTEX,	   /* a futex wait: a lock, or a condition variable (a job, a result) */
	WS_IDLE_SLEEP,	   /* a sleep the thread chose: nanosleep, clock_nanosleep */
};

enum ws_idle_class ws_idle_class_of(const struct ws_claim *c);

/* Is chain @c an idle wait (see docs/DESIGN.md)? */
bool ws_idle_chain(const struct ws_chain *c);

#endif
