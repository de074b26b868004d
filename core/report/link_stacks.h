/* SPDX-License-Identifier: MIT */
/*
 * The stacks of one link (a wait in a chain): the thread's own as it waited and its waker's at
 * the wakeup, looked up in a recording's captures, and why user frames are missing when they
 * are (never silently empty).
 */
#ifndef WS_LINK_STACKS_H
#define WS_LINK_STACKS_H

#include "engine/chain.h"
#include "stacks/stacks.h"

/*
 * Why a link has no user frames where they are looked for (never silently empty): its own stack
 * is looked for on a link of one wait, its waker's when one was captured. The first few are by
 * design (nothing failed); the rest say what failed.
 */
enum ws_stack_missing {
	WS_SM_NONE,	/* it has user frames, or none are looked for */
	WS_SM_OFF,	/* stacks were off */
	WS_SM_SHORT,	/* the wait was shorter than the capture threshold */
	WS_SM_KTHREAD,	/* a kernel thread: it has no user stack */
	WS_SM_FAILURES, /* the reasons below are failures */
	WS_SM_NOT_CAPTURED = WS_SM_FAILURES,
	WS_SM_NOT_YET, /* the kernel half came, the user half had not when the chain was made */
	WS_SM_NO_TASK_WORK,
	WS_SM_RING_BUSY,
	WS_SM_NOT_QUEUED,
	WS_SM_MOVED_ON,
	WS_SM_UNREADABLE,
	WS_SM_EXITED,
	WS_SM_UNWIND,
	WS_SM_UNRESOLVED, /* user frames, none in a mapping known */
	WS_SM_UNKNOWN,	  /* a code this version does not know */
	WS_SM_COUNT
};

/* The reason as the JSON and the text say it. */
const char *ws_stack_missing_str(enum ws_stack_missing why);

/* The stacks of one link: the thread's own (as it waited) and its waker's (at the wakeup). */
struct ws_link_stacks {
	const struct ws_stack *own[WS_STACK_PARTS];
	const struct ws_stack *waker[WS_STACK_PARTS];
	int nown, nwaker;
	enum ws_stack_missing own_missing, waker_missing;
};

/* The file @l's wait named through its fd ("/var/lib/..."), or NULL. */
const char *ws_link_fd_path(const struct ws_link *l, const struct ws_link_stacks *st);

/*
 * Find @l's stacks in @s (NULL: none), and why user frames are missing. A link standing for
 * several waits gets none (and no reason: one wait's stack cannot speak for all).
 */
void ws_link_stacks(const struct ws_stacks *s, const struct ws_link *l, struct ws_link_stacks *out);

#endif
