// SPDX-License-Identifier: MIT
/* Who held the GIL when a wait for it ended: see gil_holder.h. */
#include <string.h>

#include "gil_holder.h"

static bool waits_for_gil(const struct ws_link *l)
{
	const char *lock = l->claim ? ws_claim_str(l->claim, "lock", NULL) : NULL;

	return lock && !strcmp(lock, "gil");
}

void ws_link_gil_holder(struct ws_graph *g, const struct ws_link *l,
			const struct ws_link_stacks *st, struct ws_gil_holder *out)
{
	const struct ws_stack *read = NULL;

	memset(out, 0, sizeof(*out));
	if (!waits_for_gil(l) || l->waits > 1)
		return;
	/* the user half of the waiter's stack carries the read (its kernel half never does) */
	for (int i = 0; i < st->nown && !read; i++)
		if (st->own[i]->gil != WS_GIL_NOT_READ)
			read = st->own[i];
	out->kind = WS_GH_UNKNOWN;
	if (!read) {
		/* it is read where the waiter's user stack is copied */
		out->why =
			st->own_missing == WS_SM_OFF
				? "the GIL was not read: it is read with the stacks, which were off"
				: "the GIL was not read: no user stack of this wait was copied";
		return;
	}
	switch (read->gil) {
	case WS_GIL_HELD:
		/* a word of the traced program's memory: believed only if it names another thread
		 * of the same process */
		if (read->gil_holder && read->gil_holder != l->tid &&
		    ws_graph_pid_of(g, read->gil_holder) == l->pid) {
			out->kind = WS_GH_HELD;
			out->tid = read->gil_holder;
			out->frames.tid = read->gil_holder;
			out->frames.pid = read->pid;
			out->frames.n = read->nholder;
			out->frames.frames = read->holder;
			out->frames.fd = -1;
		} else {
			out->why = "the GIL's last holder read is no other thread of this process";
		}
		return;
	case WS_GIL_FREE:
		out->kind = WS_GH_FREE;
		return;
	case WS_GIL_CHANGING:
		out->why = "the GIL changed hands while it was read";
		return;
	case WS_GIL_ELSEWHERE:
		out->why = "the interpreter's GIL is not the main one in _PyRuntime";
		return;
	default:
		out->why = "the GIL's state could not be read";
		return;
	}
}
