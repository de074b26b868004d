// SPDX-License-Identifier: MIT
/* A link's stacks, found in a recording's captures, and why user frames are missing: see
 * link_stacks.h. */
#include <string.h>

#include "link_stacks.h"
#include "base/syscall_fmt.h"

const char *ws_stack_missing_str(enum ws_stack_missing why)
{
	switch (why) {
	case WS_SM_NONE:
		return "";
	case WS_SM_OFF:
		return "stacks were off ([core] stacks = false)";
	case WS_SM_SHORT:
		return "wait shorter than the capture threshold (min_block when traced)";
	case WS_SM_KTHREAD:
		return "kernel thread: no user stack";
	case WS_SM_NOT_CAPTURED:
		return "no stack was captured for this wait";
	case WS_SM_NOT_YET:
		return "user stack not copied before the chain was made (the thread had not returned to user space)";
	case WS_SM_NO_TASK_WORK:
		return "waited outside a syscall, and this kernel has no BPF task work to copy its user stack then";
	case WS_SM_RING_BUSY:
		return "ring buffer too full to copy the user stack";
	case WS_SM_NOT_QUEUED:
		return "user stack copy could not be scheduled";
	case WS_SM_MOVED_ON:
		return "thread had moved on before its user stack was copied";
	case WS_SM_UNREADABLE:
		return "user stack could not be read";
	case WS_SM_EXITED:
		return "process exited before its maps were read";
	case WS_SM_UNWIND:
		return "user stack could not be unwound (the process's files could not be opened)";
	case WS_SM_UNRESOLVED:
		return "user addresses in no mapping known (not resolved)";
	case WS_SM_UNKNOWN:
	case WS_SM_COUNT:
		break;
	}
	return "reason unknown to this version";
}

static enum ws_stack_missing of_code(uint16_t code)
{
	switch (code) {
	case 0:
		return WS_SM_NOT_YET; /* a kernel half whose user half was still to come */
	case WS_NOUSER_KTHREAD:
		return WS_SM_KTHREAD;
	case WS_NOUSER_NO_TASK_WORK:
		return WS_SM_NO_TASK_WORK;
	case WS_NOUSER_RING_BUSY:
		return WS_SM_RING_BUSY;
	case WS_NOUSER_NOT_QUEUED:
		return WS_SM_NOT_QUEUED;
	case WS_NOUSER_MOVED_ON:
		return WS_SM_MOVED_ON;
	case WS_NOUSER_UNREADABLE:
		return WS_SM_UNREADABLE;
	case WS_NOUSER_EXITED:
		return WS_SM_EXITED;
	case WS_NOUSER_UNWIND:
		return WS_SM_UNWIND;
	}
	return WS_SM_UNKNOWN;
}

/* Why @parts (@n of them, found) give no user frame worth showing, or WS_SM_NONE. */
static enum ws_stack_missing missing_in(const struct ws_stack *const parts[], int n)
{
	bool user = false, mapped = false;
	uint16_t code = 0;

	for (int p = 0; p < n; p++) {
		for (uint32_t i = 0; i < parts[p]->n; i++) {
			if (parts[p]->frames[i].kernel)
				continue;
			user = true;
			mapped = mapped || parts[p]->frames[i].f.module;
		}
		/* a note or a failed user half says more than the kernel half's "one follows" */
		if (parts[p]->nouser)
			code = parts[p]->nouser;
	}
	if (user)
		return mapped ? WS_SM_NONE : WS_SM_UNRESOLVED;
	return of_code(code);
}

void ws_link_stacks(const struct ws_stacks *s, const struct ws_link *l, struct ws_link_stacks *out)
{
	uint64_t capture = s ? ws_stacks_capture(s) : 0;

	memset(out, 0, sizeof(*out));
	/*
	 * one wait's stack cannot stand for several; core kinds (running, runqueue) have none, nor
	 * has a CPU quota's throttle (its switch-out is no wait in the program's code: the
	 * kernel side takes stacks only for sleeps), nor the work of a memory reclaim on CPU (a
	 * wait inside one says what ended it, waited_on)
	 */
	if (!s || !l->claim || l->waits > 1 || strcmp(l->kind, WS_CLAIM_QUOTA) == 0 ||
	    (ws_kind_memory(l->kind) && !ws_claim_field(l->claim, "waited_on")))
		return;
	out->nown =
		ws_stacks_find(s, WS_STACK_WAITER, l->tid, l->start, l->start + l->dur, out->own);
	if (out->nown)
		out->own_missing = missing_in(out->own, out->nown);
	else if (!capture)
		out->own_missing = WS_SM_OFF;
	else if (l->thread && l->thread->helper)
		out->own_missing = WS_SM_KTHREAD;
	else if (capture != UINT64_MAX && l->dur < capture)
		out->own_missing = WS_SM_SHORT;
	else
		out->own_missing = WS_SM_NOT_CAPTURED;
	if (l->has_woken_by) {
		out->nwaker = ws_stacks_find(s, WS_STACK_WAKER, l->tid, l->start, l->start + l->dur,
					     out->waker);
		/* whoever woke the thread in that window must be the waker the link names */
		if (out->nwaker && out->waker[0]->tid != l->woken_by)
			out->nwaker = 0;
		if (out->nwaker)
			out->waker_missing = missing_in(out->waker, out->nwaker);
	}
}

const char *ws_link_fd_path(const struct ws_link *l, const struct ws_link_stacks *st)
{
	/* the same fd as the call the claim records: the file it waited on then */
	for (int i = 0; l->claim && i < st->nown; i++)
		if (st->own[i]->path && st->own[i]->fd >= 0 &&
		    st->own[i]->fd == ws_syscall_fd(&l->claim->syscall))
			return st->own[i]->path;
	return NULL;
}
