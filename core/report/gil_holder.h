/* SPDX-License-Identifier: MIT */
/*
 * Who held CPython's GIL when a wait for it ended. A GIL wait is a futex wait on the GIL's own
 * words (the futex source's claim says "lock": "gil"); its holder comes from the interpreter's
 * state (locked, last_holder) as the waiter itself read it in BPF when its wait ended, with its
 * user stack (stacks/pycapture.h, WS_GIL_*). A wait that timed out (take_gil's interval) has no
 * waker: this names the thread it waited for. Nothing read, or nothing consistent: said so.
 */
#ifndef WS_GIL_HOLDER_H
#define WS_GIL_HOLDER_H

#include <stdint.h>

#include "link_stacks.h"
#include "engine/graph.h"

enum ws_gil_holder_kind {
	WS_GH_NONE,    /* not a wait for the GIL */
	WS_GH_HELD,    /* held by @tid, a thread of the waiter's process */
	WS_GH_FREE,    /* nobody held it as the wait ended */
	WS_GH_UNKNOWN, /* a wait for the GIL whose holder was not read: @why */
};

struct ws_gil_holder {
	enum ws_gil_holder_kind kind;
	uint32_t tid;
	const char *why; /* WS_GH_UNKNOWN: why, as the text and JSON say it */
	/* WS_GH_HELD: the holder's Python frames as the waiter read them while it ran on (its
	 * switch_number unchanged: still the holder), as a stack of their own (n 0: none read) */
	struct ws_stack frames;
};

/* The GIL's holder for link @l, from its own stacks @st (ws_link_stacks()). */
void ws_link_gil_holder(struct ws_graph *g, const struct ws_link *l,
			const struct ws_link_stacks *st, struct ws_gil_holder *out);

#endif
